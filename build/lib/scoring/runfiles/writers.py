"""Output of ``manage.py score``: the text summary, or the JSON array of reports."""

from __future__ import annotations

from collections import Counter
from typing import TextIO

import orjson

from scoring.matcher import ERROR, FAIL, PASS, Report, Suite, pass_rate_text
from scoring.runfiles.baseline import MARK_WORDS, MARKS, Comparison
from scoring.runfiles.junit import failure_text


class SummaryWriter:
    """One line per run (verdict, case, trial) with its notes and failed predicates, then
    totals."""

    def __init__(self, out: TextIO, suite: Suite):
        self.out = out
        self.suite = suite
        self.verdicts: Counter[str] = Counter()
        self.cases_run: set[str] = set()

    def add_report(self, report: Report, baseline: str | None = None) -> None:
        self.verdicts[report.verdict] += 1
        self.cases_run.add(report.case)
        trial = f"  trial {report.trial}" if report.trial is not None else ""
        mark = f"  [{MARK_WORDS[baseline]}]" if baseline else ""
        self.out.write(f"{report.verdict.upper():<6} {report.case}{trial}{mark}\n")
        for note in report.notes:
            self.out.write(f"       note: {note}\n")
        if report.verdict != PASS:
            details = failure_text(report).replace("\n", "\n       ")
            self.out.write(f"       {details}\n")

    def finish(self, invalid_lines: int, comparison: Comparison | None = None) -> None:
        runs = sum(self.verdicts.values())
        passed = self.verdicts[PASS]
        rate = f", pass rate {pass_rate_text(passed, runs)}" if runs else ""
        self.out.write(
            f"\n{runs} run{'s' if runs != 1 else ''} of {len(self.cases_run)} "
            f"case{'s' if len(self.cases_run) != 1 else ''}: {passed} pass, "
            f"{self.verdicts[FAIL]} fail, {self.verdicts[ERROR]} error{rate}\n"
        )
        missing = [case.key for case in self.suite.cases if case.key not in self.cases_run]
        if missing:
            shown = ", ".join(missing[:10]) + (
                f", and {len(missing) - 10} more" if len(missing) > 10 else ""
            )
            self.out.write(f"Cases with no run: {shown}\n")
        if comparison is not None:
            self._compared(comparison)
        if invalid_lines:
            self.out.write(f"Invalid input: {invalid_lines} line(s), listed on stderr\n")

    def _compared(self, comparison: Comparison) -> None:
        """Cases by their mark against the baseline (the ones that changed named)."""
        marks = comparison.case_marks()
        counts = ", ".join(f"{len(marks[m])} {MARK_WORDS[m]}" for m in MARKS if marks[m])
        self.out.write(f"Against the baseline, cases: {counts or 'none'}\n")
        for mark in MARKS[:2]:  # regressed, fixed
            if marks[mark]:
                shown = ", ".join(marks[mark][:20]) + (", …" if len(marks[mark]) > 20 else "")
                self.out.write(f"  {MARK_WORDS[mark]}: {shown}\n")
        if gone := comparison.gone():
            self.out.write(f"  {len(gone)} case(s) of the baseline have no run now\n")


def report_json(report: Report, baseline: str | None = None) -> bytes:
    """A report as ``--json`` writes it, with its mark against the baseline if any."""
    data = report.to_dict()
    if baseline:
        data["baseline"] = baseline
    return orjson.dumps(data)


class JsonArrayWriter:
    """One JSON array of reports, written as they come (never held in memory).

    Writes bytes when the stream has a binary buffer (orjson makes bytes; skipping the text
    layer's decode and encode is a tenth of the command's time)."""

    def __init__(self, out: TextIO):
        self.out = out
        binary = getattr(out, "buffer", None)
        self._write = binary.write if binary is not None else lambda data: out.write(data.decode())
        self.count = 0

    def add_report(self, report: Report | bytes, baseline: str | None = None) -> None:
        """Write ``report``, or its ``report_json`` already made (by a worker process)."""
        self._write(b"[\n" if self.count == 0 else b",\n")
        self._write(report if isinstance(report, bytes) else report_json(report, baseline))
        self.count += 1

    def finish(self, invalid_lines: int, comparison: Comparison | None = None) -> None:
        self._write(b"\n]\n" if self.count else b"[]\n")
