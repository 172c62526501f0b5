"""Scoring against a baseline: an earlier ``manage.py score --json`` output
(docs/command-line.md#baseline).

For CI without a server: each run is marked against the run of the same case and trial in
the baseline (or, when the baseline has other trials of the case, against whether all of
them passed), and each case against whether all its runs passed then and now:

- ``regressed``: passed in the baseline, does not pass now;
- ``fixed``: did not pass in the baseline, passes now;
- ``still_failing`` and ``still_passing``: as before;
- ``new``: the baseline has no run of the case.

Only the case, trial and verdict of each baseline report are kept, so a baseline of
100,000 reports costs a few megabytes; the file is streamed, never loaded whole.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import BinaryIO

import ijson

from scoring.matcher import PASS, InvalidInput, Problem, Report

REGRESSED, FIXED, STILL_FAILING, STILL_PASSING, NEW = (
    "regressed",
    "fixed",
    "still_failing",
    "still_passing",
    "new",
)
MARKS = (REGRESSED, FIXED, STILL_FAILING, NEW, STILL_PASSING)  # the order a summary lists them
MARK_WORDS = {
    REGRESSED: "regressed",
    FIXED: "fixed",
    STILL_FAILING: "still failing",
    STILL_PASSING: "still passing",
    NEW: "new",
}


def _mark(before: bool, now: bool) -> str:
    if before:
        return STILL_PASSING if now else REGRESSED
    return FIXED if now else STILL_FAILING


@dataclass
class Baseline:
    """What an earlier scoring said: each run's verdict, and whether each case passed."""

    runs: dict[tuple[str, int | None], bool] = field(default_factory=dict)
    cases: dict[str, bool] = field(default_factory=dict)  # every run of the case passed

    @classmethod
    def read(cls, stream: BinaryIO, name: str) -> Baseline:
        """The baseline in ``stream`` (a ``--json`` output); ``InvalidInput`` naming the
        report and field when it is not one."""
        baseline = cls()
        try:
            for index, report in enumerate(ijson.items(stream, "item", use_float=True)):
                baseline._add(report, index, name)
        except ijson.JSONError as exc:
            raise InvalidInput.single(
                name, f"not a --json output of manage.py score (invalid JSON: {exc})"
            ) from None
        return baseline

    def _add(self, report: object, index: int, name: str) -> None:
        where = f"{name} [{index}]"
        if not isinstance(report, dict):
            raise InvalidInput([Problem(where, "a report must be a JSON object")])
        case, trial, verdict = report.get("case"), report.get("trial"), report.get("verdict")
        if not isinstance(case, str) or verdict not in ("pass", "fail", "error"):
            raise InvalidInput(
                [Problem(where, "not a report of manage.py score --json (case, verdict)")]
            )
        passed = verdict == PASS
        self.runs[case, trial] = passed
        self.cases[case] = self.cases.get(case, True) and passed

    def mark_run(self, report: Report) -> str:
        before = self.runs.get((report.case, report.trial))
        if before is None:
            before = self.cases.get(report.case)
        if before is None:
            return NEW
        return _mark(before, report.verdict == PASS)


@dataclass
class Comparison:
    """Runs and cases marked against a baseline as the reports stream past."""

    baseline: Baseline
    run_marks: Counter[str] = field(default_factory=Counter)
    cases_now: dict[str, bool] = field(default_factory=dict)

    def add(self, report: Report) -> str:
        """The run's mark; the report's case is tallied for ``case_marks``."""
        mark = self.baseline.mark_run(report)
        self.run_marks[mark] += 1
        self.cases_now[report.case] = self.cases_now.get(report.case, True) and (
            report.verdict == PASS
        )
        return mark

    @property
    def regressed(self) -> bool:
        return self.run_marks[REGRESSED] > 0

    def case_marks(self) -> dict[str, list[str]]:
        """Each mark's cases, in the order the runs came."""
        marks: dict[str, list[str]] = {mark: [] for mark in MARKS}
        for case, now in self.cases_now.items():
            before = self.baseline.cases.get(case)
            marks[NEW if before is None else _mark(before, now)].append(case)
        return marks

    def gone(self) -> list[str]:
        """Cases of the baseline with no run now."""
        return [case for case in self.baseline.cases if case not in self.cases_now]
