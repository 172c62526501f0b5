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

from scoring.matcher import Case as MatcherCase
from scoring.matcher import render_value
from scoring.models import Result, ReviewEvent, Submission, Verdict
from scoring.results.filtersets import RunFilterSet
from scoring.results.tables import USAGE_FIGURES, Failing, case_tags, iter_run_row_batches
from scoring.runfiles import junit

CSV_HEADER = (
    "line",
    "case",
    "trial",
    "verdict",
    "reward",  # the file's own score of the run; empty when it gave none
    "tags",
    # the chosen meta columns go here
    "failing predicates",
    "reasons",
    "cause kinds",
    "cause tools",
    "cause arguments",
    "review",
    "labels",
    "assignee",
    "comments",
    *(figure.replace("_", " ") for figure in USAGE_FIGURES),
    "url",
)
META_AT = CSV_HEADER.index("failing predicates")
BATCH = 2000
# A run's review comments in its cell, "author: text" a line each, cut past this many
# characters (a thread is read in full on the run page).
COMMENTS_LIMIT = 10_000
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


def runs_csv(submission: Submission, filters: RunFilterSet, base_url: str) -> Iterator[str]:
    """The runs table under ``filters`` as CSV lines, all rows (not one page), with its
    chosen meta columns; ``base_url`` (scheme and host) makes the links to the runs
    absolute. A run's failed predicates are a line each in the predicate, reason and cause
    cells, in the same order; the predicates are the expected calls in full, not their
    labels (which shorten long values)."""
    writer = csv.writer(_Echo())
    # The file's reward has a column of its own (``CSV_HEADER``): a chosen one repeats it.
    columns = tuple(name for name in filters.column_names if name not in CSV_HEADER)
    # The meta columns are named by the runs (their meta keys): as untrusted as any cell.
    header = [*CSV_HEADER[:META_AT], *columns, *CSV_HEADER[META_AT:]]
    yield writer.writerow([inert(name) for name in header])
    suite = submission.version.matcher_suite()
    # Reversed once, the run's id put in per row: reversing each row's address took as long
    # as the rest of the export.
    head, tail = (base_url + reverse("run", args=[submission.pk, 0])).rsplit("/0/", 1)

    def run_url(run_id: int) -> str:
        return f"{head}/{run_id}/{tail}"

    batches = iter_run_row_batches(
        filters.results(submission), case_tags(submission), BATCH, columns
    )
    # Few runs have comments: their threads are read for the batches that hold them.
    commented = set(
        ReviewEvent.objects.filter(run__submission=submission, kind=ReviewEvent.Kind.COMMENT)
        .values_list("run_id", flat=True)
        .distinct()
    )
    for batch in batches:
        comments = review_comments([row.run_id for row in batch if row.run_id in commented])
        for row in batch:
            case = suite.case(row.case_key)
            failing = row.failing
            cells = (
                row.line,
                row.case_key,
                row.trial,
                row.verdict,
                "" if row.reward is None else f"{row.reward:g}",
                " ".join(row.tags),
                *row.columns,
                "\n".join(full_predicate(case, f) for f in failing),
                "\n".join(f.detail for f in failing),
                "\n".join(f.cause_kind for f in failing),
                "\n".join(f.cause_tool for f in failing),
                "\n".join(f.cause_argument for f in failing),
                row.review,
                "\n".join(label.name for label in row.labels),
                row.assignee,
                comments.get(row.run_id, ""),
                *("" if value is None else value for value in row.usage),
                run_url(row.run_id),
            )
            yield writer.writerow([inert(cell) for cell in cells])


def full_predicate(case: MatcherCase | None, failing: Failing) -> str:
    """A failed predicate as the suite states it: an expected call with its arguments in
    full (its label shortens long values with "…"); any other predicate by its label."""
    if failing.kind != "expected_call" or case is None or failing.index is None:
        return failing.label
    call = case.expected_calls[failing.index]
    arguments = ", ".join(f"{name}={render_value(v)}" for name, v in call.required_args.items())
    text = f"{call.name}({arguments})"
    return f"{text} [{', '.join(call.flags)}]" if call.flags else text


def review_comments(run_ids: list[int]) -> dict[int, str]:
    """Each run's review comments, "author: text" a line each, oldest first, cut at
    ``COMMENTS_LIMIT`` characters (the rest of a long thread is read, not kept)."""
    comments: dict[int, str] = {}
    if not run_ids:
        return comments
    events = (
        ReviewEvent.objects.filter(run_id__in=run_ids, kind=ReviewEvent.Kind.COMMENT)
        .order_by("run_id", "created", "pk")
        .values_list("run_id", "author__username", "text")
    )
    for run_id, author, text in events:
        thread = comments.get(run_id)
        if thread is not None and len(thread) >= COMMENTS_LIMIT:
            continue
        line = f"{author or 'someone'}: {text}"
        thread = f"{thread}\n{line}" if thread is not None else line
        if len(thread) > COMMENTS_LIMIT:
            thread = thread[: COMMENTS_LIMIT - 1] + "…"
        comments[run_id] = thread
    return comments


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
