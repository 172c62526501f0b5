"""JUnit XML for scored runs: one test case per run, failures listing failed predicates.

Totals belong in the ``<testsuite>`` header. ``manage.py score`` knows them only at the end,
so its test cases are spooled to a temporary file while runs stream through
(``JUnitWriter``); a stored submission knows them first, and its document is streamed as it
is made (``document``).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Iterator
from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

from scoring.matcher import FAIL, PASS, Problem, Report

# Characters XML 1.0 cannot carry at all (model output may hold any of them).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    return escape(_NOT_XML.sub("\ufffd", text))


def _xml_attr(text: str) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", text))


def failure_text(report: Report) -> str:
    """The failed predicates of a report, one per line with its detail indented below."""
    return failure_lines((p.label, p.detail, p.error is not None) for p in report.failures)


def failure_lines(failures: Iterable[tuple[str, str | None, bool]]) -> str:
    """``failure_text`` of (label, detail, could not be evaluated) triples."""
    lines = []
    for label, detail, errored in failures:
        lines.append(f"{'!' if errored else '✗'} {label}")
        if detail:
            lines.append(f"    {detail}")
    return "\n".join(lines)


def case_element(
    suite_name: str,
    case: str,
    trial: int | None,
    verdict: str,
    failures: list[tuple[str, str | None, bool]],
    error: str | None = None,
    seconds: float = 0.0,
    notes: Iterable[str] = (),
    baseline: str | None = None,
) -> str:
    """One run's ``<testcase>`` element; ``failures`` as ``failure_lines`` takes them, the
    run's ``notes`` in its ``<system-out>``, and ``baseline``, the run's mark against a
    baseline, as the property ``casebook.baseline``."""
    name = f"{case} trial {trial}" if trial is not None else case
    element = (
        f"    <testcase classname={_xml_attr(f'{suite_name}.{case}')} "
        f'name={_xml_attr(name)} time="{seconds:.6f}"'
    )
    properties = (
        '      <properties><property name="casebook.baseline" '
        f"value={_xml_attr(baseline)}/></properties>\n"
        if baseline
        else ""
    )
    # The run's notes go where JUnit readers show a test's output.
    out = (
        f"      <system-out>{_xml_text(chr(10).join(f'note: {note}' for note in notes))}"
        "</system-out>\n"
        if notes
        else ""
    )
    if verdict == PASS:
        inside = properties + out
        return f"{element}>\n{inside}    </testcase>\n" if inside else f"{element}/>\n"
    tag = "failure" if verdict == FAIL else "error"
    failed = len(failures)
    message = error or f"{failed} predicate{'s' if failed != 1 else ''} failed"
    return (
        f"{element}>\n{properties}      <{tag} message={_xml_attr(message)} "
        f"type={_xml_attr(verdict)}>{_xml_text(failure_lines(failures))}</{tag}>\n"
        f"{out}    </testcase>\n"
    )


def document(
    suite_name: str, counts: dict[str, int], testcases: Iterable[str], seconds: float = 0.0
) -> Iterator[str]:
    """The whole JUnit document, piece by piece, around ``testcases`` (from ``case_element``):
    for when the totals (``tests``, ``failures``, ``errors``) are known before the runs."""
    totals = " ".join(f'{key}="{counts[key]}"' for key in ("tests", "failures", "errors"))
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield f'<testsuites name="casebook" {totals} time="{seconds:.6f}">\n'
    yield (
        f'  <testsuite name={_xml_attr(suite_name)} {totals} skipped="0" time="{seconds:.6f}">\n'
    )
    yield from testcases
    yield "  </testsuite>\n</testsuites>\n"


class JUnitWriter:
    """JUnit for reports as they stream through; the totals come at the end, so the test
    cases wait in a temporary file."""

    def __init__(self, suite_name: str):
        self.suite_name = suite_name or "casebook"
        self.counts = {"tests": 0, "failures": 0, "errors": 0}
        self.seconds = 0.0
        # Closed by write(), once the totals are known.
        self._cases = tempfile.SpooledTemporaryFile(  # noqa: SIM115
            max_size=4 << 20, mode="w+", encoding="utf-8"
        )

    def add_report(self, report: Report, seconds: float = 0.0, baseline: str | None = None) -> None:
        self.counts["tests"] += 1
        self.seconds += seconds
        if report.verdict != PASS:
            self.counts["failures" if report.verdict == FAIL else "errors"] += 1
        failures = [(p.label, p.detail, p.error is not None) for p in report.failures]
        self._cases.write(
            case_element(
                self.suite_name,
                report.case,
                report.trial,
                report.verdict,
                failures,
                report.error,
                seconds,
                report.notes,
                baseline,
            )
        )

    def add_invalid(self, line: int, problems: tuple[Problem, ...]) -> None:
        """An input line that could not be scored, as an errored test case."""
        self.counts["tests"] += 1
        self.counts["errors"] += 1
        text = "\n".join(str(problem) for problem in problems)
        self._cases.write(
            f"    <testcase classname={_xml_attr(f'{self.suite_name}.input')} "
            f'name="line {line}" time="0">\n'
            f'      <error message="invalid run line" type="invalid">{_xml_text(text)}</error>\n'
            "    </testcase>\n"
        )

    def write(self, out: TextIO) -> None:
        self._cases.seek(0)
        cases = iter(lambda: self._cases.read(1 << 16), "")
        for piece in document(self.suite_name, self.counts, cases, self.seconds):
            out.write(piece)
        self._cases.close()
