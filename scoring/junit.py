"""JUnit XML for scored runs: one test case per run, failures listing failed predicates.

Totals belong in the ``<testsuite>`` header but are known only at the end, so test cases
are spooled to a temporary file while runs stream through.
"""

from __future__ import annotations

import re
import tempfile
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
    lines = []
    for predicate in report.failures:
        mark = "!" if predicate.error else "✗"
        lines.append(f"{mark} {predicate.label}")
        if predicate.detail:
            lines.append(f"    {predicate.detail}")
    return "\n".join(lines)


class JUnitWriter:
    def __init__(self, suite_name: str):
        self.suite_name = suite_name or "casebook"
        self.counts = {"tests": 0, "failures": 0, "errors": 0}
        self.seconds = 0.0
        # Closed by write(), once the totals are known.
        self._cases = tempfile.SpooledTemporaryFile(  # noqa: SIM115
            max_size=4 << 20, mode="w+", encoding="utf-8"
        )

    def add_report(self, report: Report, seconds: float = 0.0) -> None:
        self.counts["tests"] += 1
        self.seconds += seconds
        name = f"{report.case} trial {report.trial}" if report.trial is not None else report.case
        self._cases.write(
            f"    <testcase classname={_xml_attr(f'{self.suite_name}.{report.case}')} "
            f'name={_xml_attr(name)} time="{seconds:.6f}"'
        )
        if report.verdict == PASS:
            self._cases.write("/>\n")
            return
        tag = "failure" if report.verdict == FAIL else "error"
        self.counts["failures" if report.verdict == FAIL else "errors"] += 1
        failed = len(report.failures)
        message = f"{failed} predicate{'s' if failed != 1 else ''} failed"
        if report.error:
            message = report.error
        self._cases.write(
            f">\n      <{tag} message={_xml_attr(message)} type={_xml_attr(report.verdict)}>"
            f"{_xml_text(failure_text(report))}</{tag}>\n    </testcase>\n"
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
        counts = " ".join(f'{key}="{value}"' for key, value in self.counts.items())
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        out.write(f'<testsuites name="casebook" {counts} time="{self.seconds:.6f}">\n')
        out.write(
            f"  <testsuite name={_xml_attr(self.suite_name)} {counts} "
            f'skipped="0" time="{self.seconds:.6f}">\n'
        )
        self._cases.seek(0)
        for chunk in iter(lambda: self._cases.read(1 << 16), ""):
            out.write(chunk)
        out.write("  </testsuite>\n</testsuites>\n")
        self._cases.close()
