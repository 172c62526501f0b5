"""The failures by cause stored once a submission is scored (``FailureSummary``): the page
and the API read it unfiltered, and it says exactly what aggregating the failed predicates
says, after a re-score and after reviews change too; a filter's groups are aggregated."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from cases import services
from scoring.ingest.pipeline import rescore
from scoring.models import CaseSummary, FailureSummary, KnownFailureSummary, ReviewStatus, Status
from scoring.results.failures import SHOWN, Failures, summarize_when_scored
from scoring.results.filtersets import RunFilterSet
from scoring.review import decisions
from tests.support.pages import text

CASES = 30  # more than SHOWN, so that a group has more exact predicates than are listed


def lookup_suite(city: str = "Paris") -> dict:
    """Cases expecting one lookup each, with its own id (so each failing one is an exact
    predicate of its own) and a city, and a final answer saying "done"."""
    return {
        "schema": "casebook.suite/1",
        "name": "lookups",
        "cases": [
            {
                "key": f"c{i:02d}",
                "tags": ["booking" if i % 2 else "support"],
                "expected_calls": [
                    {"name": "lookup", "required_args": {"id": f"R{i}", "city": city}}
                ],
                "expectations": [{"type": "final_text_contains", "text": "done"}],
            }
            for i in range(CASES)
        ],
    }


def lookup_runs() -> list[dict]:
    """Four trials a case: one passing, one with a wrong id, one with a wrong city and no
    "done", one that calls nothing and errs; a few cases fail the id twice."""

    def run(i, trial, args, final="done", error=None, calls=True):
        batches = [[{"name": "lookup", "arguments": args}]] if calls else []
        return {"case": f"c{i:02d}", "trial": trial, "batches": batches,
                "final_text": final, "error": error}  # fmt: skip

    runs = []
    for i in range(CASES):
        runs += [
            run(i, 0, {"id": f"R{i}", "city": "Paris"}),
            run(i, 1, {"id": "R999", "city": "Paris"}),
            run(i, 2, {"id": f"R{i}", "city": "Lima"}, final="sorry"),
            run(i, 3, {}, error="timeout", calls=False),
        ]
        if i % 7 == 0:
            runs.append(run(i, 4, {"id": "R998", "city": "Paris"}))
    return runs


@pytest.fixture
def lookups(team, admin, submit):
    suite = services.create_suite(team, lookup_suite(), admin)
    return submit(suite, lookup_runs(), label="lookups")


def answer(submission, filters: RunFilterSet | None = None):
    """Everything the failures page and API show: (failing runs, top level, groups)."""
    failures = Failures(submission, filters)
    return failures.failing_runs(), list(failures.top_level()), failures.groups()


def aggregated(submission, filters: RunFilterSet | None = None):
    """``answer`` without the summary (deleted), from the failed predicates."""
    FailureSummary.objects.filter(submission=submission).delete()
    assert not Failures(submission, filters).summarized
    return answer(submission, filters)


def test_the_stored_groups_are_the_aggregated_ones(lookups):
    assert Failures(lookups).summarized
    stored = answer(lookups)
    failing, top, groups = stored
    assert failing == lookups.failed + lookups.errored
    assert len(top) > 3
    # The exact predicates of the wrong ids are more than are kept: the same ones are kept.
    wrong_value = next(g for g in groups if g.kind == "argument_value")
    assert len(wrong_value.labels) == SHOWN
    assert wrong_value.runs > SHOWN
    assert stored == aggregated(lookups)
    # Counted as the runs table's filters count them.
    for group in groups:
        runs = RunFilterSet({"cause": group.cause}).matching(lookups)
        assert group.runs == runs.count()
        assert group.cases == runs.values("run__case_key").distinct().count()
        for argument in group.arguments:
            of_argument = RunFilterSet({"cause": group.cause, "argument": argument.argument})
            assert argument.runs == of_argument.count(lookups)
        for label, n in group.labels:
            assert n == RunFilterSet({"cause": group.cause, "predicate": label}).count(lookups)


def test_the_page_and_the_api_read_the_summary_not_the_predicates(as_user, viewer, lookups):
    def page():
        html = text(as_user(viewer).get(f"/submissions/{lookups.pk}/failures/"))
        return re.sub(r'(csrfmiddlewaretoken" value=|X-CSRFToken": )"[^"]*"', "", html)

    api = APIClient()
    api.force_authenticate(viewer)
    with CaptureQueriesContext(connection) as queries:
        stored_page = page()
        stored_api = api.get(f"/api/submissions/{lookups.pk}/failures/").json()
    assert not [q["sql"] for q in queries if "scoring_predicateresult" in q["sql"]]
    assert "cause=argument_value%3Alookup" in stored_page
    FailureSummary.objects.filter(submission=lookups).delete()
    with CaptureQueriesContext(connection) as queries:
        assert page() == stored_page
        assert api.get(f"/api/submissions/{lookups.pk}/failures/").json() == stored_api
    assert [q["sql"] for q in queries if "scoring_predicateresult" in q["sql"]]


def test_a_rescore_replaces_the_summary_with_the_new_results(
    lookups, admin, run_tasks, django_capture_on_commit_callbacks
):
    before = answer(lookups)
    suite = lookups.suite
    version = services.replace_contents(suite, lookup_suite(city="Lima"), admin)
    with django_capture_on_commit_callbacks(execute=False):
        rescore(lookups, version)  # the chunks are enqueued, not yet scored
    # Scoring again: the last summary is of the results before, so it is not read.
    assert not Failures(lookups).summarized
    assert answer(lookups)[1] == []
    with run_tasks():
        rescore(lookups, version)
    lookups.refresh_from_db()
    assert lookups.status == Status.DONE
    assert Failures(lookups).summarized
    after = answer(lookups)
    assert after != before
    cities = {a.argument for g in after[2] if g.kind == "argument_value" for a in g.arguments}
    assert cities == {"id", "city"}  # now the Paris runs have the wrong city
    assert set(FailureSummary.objects.filter(submission=lookups).values_list("generation")) == {
        (lookups.generation,)
    }
    assert after == aggregated(lookups)


def test_reviews_leave_the_summary_true_and_a_review_filter_is_aggregated(lookups, admin):
    before = answer(lookups)
    wrong_id = RunFilterSet({"cause": "argument_value:lookup", "argument": "id"})
    decisions.set_status(wrong_id.runs(lookups), ReviewStatus.FLAKY, admin)
    flaky = RunFilterSet({"review": ReviewStatus.FLAKY})
    failures = Failures(lookups, flaky)
    assert not failures.summarized
    groups = failures.groups()
    assert [(g.kind, g.tool) for g in groups] == [("argument_value", "lookup")]
    assert groups[0].runs == wrong_id.count(lookups)
    assert failures.failing_runs() == wrong_id.count(lookups)
    # Unfiltered, the groups do not depend on reviews: the summary still holds.
    assert Failures(lookups).summarized
    assert answer(lookups) == before == aggregated(lookups)


def test_the_first_submission_failing_a_way_is_read_from_the_summaries(lookups, submit):
    later = submit(lookups.suite, lookup_runs()[:20], label="again")
    groups = Failures(later).groups()
    assert groups
    assert {g.first_seen for g in groups} == {lookups.pk}
    assert {g.first_seen for g in Failures(lookups).groups()} == {lookups.pk}


def test_a_submission_still_scoring_is_not_summarized(lookups):
    FailureSummary.objects.filter(submission=lookups).delete()
    type(lookups).objects.filter(pk=lookups.pk).update(status=Status.SCORING)
    summarize_when_scored(lookups.pk)
    assert not FailureSummary.objects.filter(submission=lookups).exists()
    type(lookups).objects.filter(pk=lookups.pk).update(status=Status.DONE)
    summarize_when_scored(lookups.pk)
    summarize_when_scored(lookups.pk)  # made once
    assert FailureSummary.objects.filter(submission=lookups, level="failing").count() == 1


def test_the_summarize_command_stores_what_submissions_scored_before_the_summaries_lack(
    lookups, submit
):
    """An upgrade leaves submissions scored before the summaries without them: the pages
    then count their runs on every request, until ``manage.py summarize`` stores them."""
    other = submit(lookups.suite, lookup_runs()[:20], label="again")
    kept = answer(other)
    summaries = (FailureSummary, KnownFailureSummary, CaseSummary)
    for model in summaries:
        model.objects.filter(submission=lookups).delete()
    expected = aggregated(lookups)
    kept_rows = FailureSummary.objects.filter(submission=other).count()
    out = io.StringIO()
    call_command("summarize", stdout=out)
    assert "2 scored submission(s)" in out.getvalue()
    assert all(model.objects.filter(submission=lookups).exists() for model in summaries)
    assert Failures(lookups).summarized
    assert answer(lookups) == expected
    assert FailureSummary.objects.filter(submission=other).count() == kept_rows
    assert answer(other) == kept
