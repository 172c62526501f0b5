"""The failing runs by signature stored once a submission is scored (``KnownFailureSummary``):
the suite's open known failures add them up, and say exactly what grouping the results says,
after a re-score too; a submission without its current summary is grouped from its results."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cases import services
from scoring.ingest.pipeline import rescore
from scoring.models import KnownFailureSummary, ReviewStatus, Run, Status
from scoring.results.known_failures import open_known_failures
from scoring.review import decisions
from tests.support import tau_bench
from tests.support.pages import text

WRITES = ("book_", "cancel_", "send_", "update_")
LINES = [tau_bench.run_line(record) for record in tau_bench.RECORDS[:40]]


def writes_only() -> dict:
    document = tau_bench.suite_document()
    for case in document["cases"]:
        case["expected_calls"] = [
            call for call in case["expected_calls"] if call["name"].startswith(WRITES)
        ]
    return document


@pytest.fixture
def submissions(team, admin, editor, submit):
    suite = services.create_suite(team, writes_only(), admin)
    first = submit(suite, LINES, label="monday")
    failing = Run.objects.filter(submission=first, result__verdict="fail").order_by("seq")
    decisions.set_status(Run.objects.filter(pk=failing[0].pk), ReviewStatus.WONT_FIX, editor)
    return [first, submit(suite, LINES[:20], label="tuesday")]


def open_of(submissions) -> list:
    return open_known_failures([s.pk for s in reversed(submissions)])


def grouped(submissions) -> list:
    """``open_of`` without the summaries (deleted), from the results."""
    KnownFailureSummary.objects.filter(submission__in=submissions).delete()
    return open_of(submissions)


def page(client, submissions) -> str:
    html = text(client.get(f"/suites/{submissions[0].suite_id}/problems/"))
    return re.sub(r'(csrfmiddlewaretoken" value=|X-CSRFToken": )"[^"]*"', "", html)


def test_the_summed_summaries_are_the_grouped_results(submissions, as_user, viewer):
    summed = open_of(submissions)
    assert len(summed) > 5
    assert {p.submissions for p in summed} == {1, 2}
    client = as_user(viewer)
    with CaptureQueriesContext(connection) as queries:
        stored_page = page(client, submissions)
    assert not [q["sql"] for q in queries if "scoring_result" in q["sql"]]
    assert summed == grouped(submissions)
    with CaptureQueriesContext(connection) as queries:
        assert page(client, submissions) == stored_page
    assert [q["sql"] for q in queries if "scoring_result" in q["sql"]]


def test_one_submission_without_its_summary_groups_them_all(submissions):
    summed = open_of(submissions)
    KnownFailureSummary.objects.filter(submission=submissions[1]).delete()
    assert open_of(submissions) == summed


def test_a_rescore_replaces_the_summary(
    submissions, admin, run_tasks, django_capture_on_commit_callbacks
):
    first = submissions[0]
    before = open_of(submissions)
    version = services.replace_contents(first.suite, tau_bench.suite_document(), admin)
    with django_capture_on_commit_callbacks(execute=False):
        rescore(first, version)  # enqueued, not yet scored: the old summary is not read
    assert not KnownFailureSummary.objects.filter(submission=first, generation=first.generation + 1)
    with run_tasks():
        rescore(first, version)
    first.refresh_from_db()
    assert first.status == Status.DONE
    assert set(
        KnownFailureSummary.objects.filter(submission=first).values_list("generation", flat=True)
    ) == {first.generation}
    after = open_of(submissions)
    assert after != before
    assert after == grouped(submissions)
