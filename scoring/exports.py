"""A submission's results as files: the runs table as CSV, the whole submission as JUnit XML.

Both are streamed as they are made, reading the runs a batch at a time, so that exporting
100,000 runs holds neither the runs nor the file in memory.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator

import orjson
from django.db.models import Case, Count, F, Q, TextField, When
from django.urls import reverse

from . import junit
from .models import Result, Submission, Verdict
from .results import RunFilters, case_tags, iter_run_rows

CSV_HEADER = (
    "line",
    "case",
    "trial",
    "verdict",
    "tags",
    "failing predicates",
    "review",
    "assignee",
    "url",
)
BATCH = 2000
# A cell starting with one of these is read as a formula by spreadsheet programs; run text
# is untrusted, so such cells are prefixed with a quote (OWASP's "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def inert(value) -> str:
    """The cell's text, unable to run as a spreadsheet formula."""
    text = str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


class _Echo:
    """A file-like object that hands back what is written: ``csv.writer`` formats each row,
    and the response streams it."""

    def write(self, value: str) -> str:
        return value


def runs_csv(submission: Submission, filters: RunFilters, base_url: str) -> Iterator[str]:
    """The runs table under ``filters`` as CSV lines, all rows (not one page);
    ``base_url`` (scheme and host) makes the links to the runs absolute."""
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_HEADER)
    results = filters.results(submission)
    for row in iter_run_rows(results, case_tags(submission), batch=BATCH):
        run_url = base_url + reverse("run", args=[submission.pk, row.run_id])
        cells = (
            row.line,
            row.case_key,
            row.trial,
            row.verdict,
            " ".join(row.tags),
            "\n".join(row.failing),
            row.review,
            row.assignee,
            run_url,
        )
        yield writer.writerow([inert(cell) for cell in cells])


def submission_junit(submission: Submission) -> Iterator[str]:
    """The submission as JUnit XML, as ``manage.py score --junit`` writes it: a test case per
    scored run in file order, its failed predicates in the failure's text."""
    results = Result.objects.filter(submission=submission)
    totals = results.aggregate(
        tests=Count("pk"),
        failures=Count("pk", filter=Q(verdict=Verdict.FAIL)),
        errors=Count("pk", filter=Q(verdict=Verdict.ERROR)),
    )
    # Only the reports of runs that did not pass or have notes are read: the other test
    # cases are a line each. (Reports are stored compact, so notes are '"notes":["'.)
    rows = (
        results.order_by("run__seq")
        .annotate(
            failed_report=Case(
                When(~Q(verdict=Verdict.PASS) | Q(report__contains='"notes":["'), then=F("report")),
                output_field=TextField(),
            )
        )
        .values_list("run__case_key", "run__trial", "verdict", "failed_report")
        .iterator(chunk_size=BATCH)
    )
    name = submission.suite.name
    cases = (_case_element(name, *row) for row in rows)
    return junit.document(name, totals, cases)


def _case_element(suite_name, case, trial, verdict, report_text) -> str:
    if report_text is None:
        return junit.case_element(suite_name, case, trial, verdict, [])
    report = orjson.loads(report_text)
    failures = [
        (p["label"], p.get("detail"), p.get("error") is not None)
        for p in report["predicates"]
        if not p["passed"]
    ]
    return junit.case_element(
        suite_name,
        case,
        trial,
        verdict,
        failures,
        report.get("error"),
        notes=report.get("notes", ()),
    )
