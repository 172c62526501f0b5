"""What keeps the pages fast at a million runs a submission (docs/review.md#scale): the
runs table and the results API take their totals from the submission's counts, the run
page and the submission page count a failure's runs once, and the drafts of "cases from
these runs" read the passing cases from the stored case summaries. Each is checked to give
what counting the rows gives."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from scoring.models import CaseSummary, KnownFailureSummary, Result, ReviewStatus, Submission
from scoring.results import case_drafts, known_failures, tables
from scoring.results.failures import Failures
from scoring.results.filtersets import RunFilterSet
from scoring.results.tables import common_failures, kept
from scoring.review import decisions
from tests.support.pages import text
from tests.support.runs import TRIALS, url

COUNT_OF_RESULTS = re.compile(r'SELECT COUNT\(\*\) AS "__count" FROM "scoring_result"')


@pytest.fixture
def scored(suite, submit):
    """TRIALS against the demo suite: 3 runs pass, 5 fail."""
    return submit(suite, TRIALS, label="model-a")


def results_counted(queries) -> int:
    return sum(bool(COUNT_OF_RESULTS.search(query["sql"])) for query in queries)


def shown_count(html: str) -> str:
    return re.search(r'class="small muted runs-count"[^>]*>([^<]*)</p>', html).group(1).strip()


def test_the_runs_table_counts_by_verdict_from_the_submissions_counts(scored, as_user, viewer):
    client = as_user(viewer)
    # A count the rows would not give shows which one the page read.
    Submission.objects.filter(pk=scored.pk).update(failed=4)
    with CaptureQueriesContext(connection) as queries:
        html = text(client.get(url(scored), {"verdict": "fail"}))
    assert shown_count(html) == "4 runs match"
    assert results_counted(queries) == 0


def test_a_pruned_submission_counts_its_remaining_results(scored, as_user, viewer):
    """Retention removes results and keeps the counts: these no longer describe the rows."""
    Submission.objects.filter(pk=scored.pk).update(failed=4, runs_pruned=timezone.now())
    html = text(as_user(viewer).get(url(scored), {"verdict": "fail"}))
    assert shown_count(html) == "5 runs match"


def test_another_filter_is_counted(scored, as_user, viewer):
    Submission.objects.filter(pk=scored.pk).update(failed=4)
    html = text(as_user(viewer).get(url(scored), {"verdict": "fail", "case": "greeting"}))
    assert shown_count(html) == "1 run matches"


def test_the_results_api_counts_from_the_submissions_counts(scored, as_user, viewer):
    client = as_user(viewer)
    Submission.objects.filter(pk=scored.pk).update(passed=2)
    with CaptureQueriesContext(connection) as queries:
        answer = client.get(f"/api/submissions/{scored.pk}/results/", {"verdict": "pass"}).json()
    assert answer["count"] == 2
    assert results_counted(queries) == 0
    counted = client.get(
        f"/api/submissions/{scored.pk}/results/", {"verdict": "pass", "case": "greeting"}
    ).json()
    assert counted["count"] == 2
    assert len(counted["results"]) == 2


@pytest.mark.parametrize("query", [{}, {"verdict": "fail"}, {"review": "flaky"}])
@pytest.mark.parametrize("sort", ["review", "-review"])
def test_sorted_by_review_every_cut_is_that_of_sorting_every_run(scored, editor, sort, query):
    """A page sorted by review is read one status at a time: each cut of it, across the
    statuses' edges too, holds the runs the sorted query of every run holds."""
    runs = scored.runs.order_by("seq")
    decisions.set_status(runs.filter(seq__in=[2, 6]), ReviewStatus.FLAKY, editor)
    decisions.set_status(runs.filter(seq=4), ReviewStatus.REGRESSION, editor)
    decisions.set_status(runs.filter(seq=5), ReviewStatus.UNTRIAGED, editor)  # a review row
    filters = RunFilterSet({**query, "sort": sort})
    expected = list(filters.results(scored).values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as queries:
        paged = filters.paged(scored).values("pk")
        assert paged.count() == len(expected)
        for start in range(len(expected) + 1):
            for stop in range(start, len(expected) + 2):
                assert [row["pk"] for row in paged[start:stop]] == expected[start:stop]
    assert not any("CASE WHEN" in query["sql"] for query in queries)  # nothing sorted by status


def test_the_results_api_and_the_table_page_by_review(scored, editor, as_user, viewer):
    decisions.set_status(scored.runs.filter(case_key="greeting"), ReviewStatus.FLAKY, editor)
    client = as_user(viewer)
    with CaptureQueriesContext(connection) as queries:
        answer = client.get(f"/api/submissions/{scored.pk}/results/", {"sort": "-review"}).json()
        html = text(client.get(url(scored), {"sort": "-review"}))
    cases = [report["case"] for report in answer["results"]]
    assert answer["count"] == 8
    assert cases[:3] == ["greeting"] * 3
    assert "greeting" not in cases[3:]
    assert shown_count(html) == "8 runs"
    assert not any("CASE WHEN" in query["sql"] for query in queries)


GROUP_READ = 'FROM "scoring_predicateresult" U0'  # the group filter's subquery


@pytest.mark.parametrize("sort", ["line", "-case"])
def test_a_failure_groups_pages_read_the_order_kept_of_it(scored, as_user, viewer, sort):
    label = common_failures(scored)[0]["label"]
    filters = RunFilterSet({"predicate": label, "sort": sort})
    expected = list(filters.results(scored).values_list("pk", flat=True))
    assert len(expected) >= 2
    client = as_user(viewer)
    client.get(url(scored), {"predicate": label, "sort": sort})  # keeps its order and count
    with CaptureQueriesContext(connection) as queries:
        paged = filters.paged(scored).values("pk")
        assert paged.count() == len(expected)
        for start in range(len(expected) + 1):
            assert [row["pk"] for row in paged[start : start + 2]] == expected[start : start + 2]
        html = text(client.get(url(scored), {"predicate": label, "sort": sort}))
    assert shown_count(html) == f"{len(expected)} runs match"
    assert not any(GROUP_READ in query["sql"] for query in queries)
    # Live, its runs still arriving, a submission's group is read by the filter each time.
    Submission.objects.filter(pk=scored.pk).update(status="scoring")
    scored.refresh_from_db()
    with CaptureQueriesContext(connection) as queries:
        assert [row["pk"] for row in filters.paged(scored).values("pk")[0:9]] == expected
    assert any(GROUP_READ in query["sql"] for query in queries)


STREAM_OF_PREDICATES = 'FROM "scoring_predicateresult" WHERE'  # ``failures.aggregate``'s


def test_failures_by_review_status_are_kept_until_a_status_changes(scored, editor):
    failing = list(scored.runs.filter(result__verdict="fail").order_by("seq"))

    def runs(*chosen):
        return scored.runs.filter(pk__in=[run.pk for run in chosen])

    decisions.set_status(runs(*failing[:2]), ReviewStatus.FLAKY, editor)
    flaky = RunFilterSet({"review": "flaky"})
    assert Failures(scored, flaky).failing_runs() == 2
    with CaptureQueriesContext(connection) as queries:
        assert Failures(scored, flaky).failing_runs() == 2
        assert flaky.count(scored) == 2
    assert not any(STREAM_OF_PREDICATES in query["sql"] for query in queries)
    assert results_counted(queries) == 1  # the count is not kept yet; the groups are
    decisions.set_status(runs(failing[2]), ReviewStatus.FLAKY, editor)
    assert Failures(scored, flaky).failing_runs() == flaky.count(scored) == 3
    decisions.set_status(runs(failing[0]), ReviewStatus.REGRESSION, editor)  # one leaves
    assert Failures(scored, flaky).failing_runs() == flaky.count(scored) == 2
    untriaged = RunFilterSet({"review": "untriaged"})
    assert untriaged.count(scored) == 8 - 3
    decisions.set_status(runs(failing[0]), ReviewStatus.UNTRIAGED, editor)
    assert untriaged.count(scored) == 8 - 2


def test_a_figure_made_while_what_it_reads_changed_is_not_kept(scored):
    made = []
    for _ in range(2):
        kept(scored, "changing", lambda: made.append(1) or len(made), unchanged=lambda: False)
    assert made == [1, 1]
    for _ in range(2):
        kept(scored, "steady", lambda: made.append(1) or len(made), unchanged=lambda: True)
    assert made == [1, 1, 1]


def test_runs_by_signature_are_those_the_results_hold(scored):
    failing = Result.objects.filter(submission=scored).exclude(signature="")
    signatures = sorted(set(failing.values_list("signature", flat=True)))
    expected = {s: failing.filter(signature=s).count() for s in signatures}
    assert sum(expected.values()) == 5
    assert known_failures.runs_here(scored, signatures) == expected  # kept: the submission is done
    Submission.objects.filter(pk=scored.pk).update(status="scoring")
    scored.refresh_from_db()
    assert known_failures.runs_here(scored, signatures[:1]) == {
        signatures[0]: expected[signatures[0]]
    }


def test_the_drafts_read_the_passing_cases_from_the_summaries_as_from_the_runs(scored):
    assert CaseSummary.objects.filter(submission=scored).exists()
    with CaptureQueriesContext(connection) as queries:
        summarized = case_drafts.draft_cases(scored, RunFilterSet(), into=None)
    assert not any("DISTINCT" in query["sql"] for query in queries)
    CaseSummary.objects.filter(submission=scored).delete()
    counted = case_drafts.draft_cases(scored, RunFilterSet(), into=None)
    assert [d.key for d in summarized.drafts] == [d.key for d in counted.drafts]
    assert [d.key for d in counted.drafts] == ["greeting", "weather-two-cities"]
    assert (summarized.keys, summarized.runs) == (counted.keys, counted.runs) == (2, 3)


def test_the_trials_the_drafts_offer_are_kept(scored):
    first = case_drafts.draft_cases(scored, RunFilterSet(), into=None)
    with CaptureQueriesContext(connection) as queries:
        again = case_drafts.draft_cases(scored, RunFilterSet(), into=None)
    assert [d.trials for d in again.drafts] == [d.trials for d in first.drafts]
    assert len(first.drafts[0].trials) == 2  # greeting: two passing trials offered
    ranked = ("UNION", "ROW_NUMBER")  # how each database reads the first trials of each key
    assert not any(word in query["sql"] for query in queries for word in ranked)


def test_the_submissions_list_takes_as_many_queries_for_ten_as_for_one(
    suite, submit, as_user, viewer, django_assert_max_num_queries
):
    client = as_user(viewer)
    path = f"/api/suites/{suite.pk}/submissions/"
    submit(suite, TRIALS, label="first")
    with CaptureQueriesContext(connection) as one:
        assert len(client.get(path).json()["results"]) == 1
    for n in range(9):
        submit(suite, TRIALS, label=f"more {n}")
    with django_assert_max_num_queries(len(one)):
        listed = client.get(path).json()["results"]
    assert len(listed) == 10
    assert "regressions" not in listed[0]
    with CaptureQueriesContext(connection) as queries:
        client.get(path)
    assert not any('"scoring_suiteversion"."document"' in query["sql"] for query in queries)


RESULTS_READ = re.compile(r'FROM "scoring_result"')


def test_each_cases_trials_are_read_from_the_summaries_as_from_the_results(scored):
    assert CaseSummary.objects.filter(submission=scored).exists()
    with CaptureQueriesContext(connection) as queries:
        summarized = tables._case_trials(scored)
    assert not any(RESULTS_READ.search(query["sql"]) for query in queries)
    CaseSummary.objects.filter(submission=scored).delete()
    counted = tables._case_trials(scored)
    assert summarized == counted
    shown = {c.case: (c.runs, c.passed) for c in counted.cases}
    assert sum(runs for runs, _ in shown.values()) == 8  # TRIALS: 3 runs pass, 5 fail
    assert sum(passed for _, passed in shown.values()) == 3


def test_runs_by_signature_are_read_from_the_summary_as_from_the_results(scored):
    with CaptureQueriesContext(connection) as queries:
        summarized = known_failures._every_signature(scored)
    assert not any(RESULTS_READ.search(query["sql"]) for query in queries)
    KnownFailureSummary.objects.filter(submission=scored).delete()
    assert known_failures._every_signature(scored) == summarized
    assert sum(summarized.values()) == 5
