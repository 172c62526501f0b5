"""Failures grouped by cause (docs/review.md#failures-by-cause): on the τ-bench runs scored
against the tasks' ground-truth writes, a handful of groups by tool and cause cover every
failing run, on the page and in the API; the groups follow the runs table's filters, lead to
their runs and to a review queue of them, and say which submission first failed that way."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from rest_framework.test import APIClient

from cases import services
from scoring.models import PredicateResult, Result, ReviewQueue, ReviewStatus
from scoring.results.filtersets import RunFilterSet
from scoring.review import decisions
from tests.support import tau_bench
from tests.support.pages import text

WRITES = ("book_", "cancel_", "send_", "update_")


def writes_suite_document() -> dict:
    """τ-bench's airline tasks as cases expecting only their ground-truth writes."""
    document = tau_bench.suite_document()
    for case in document["cases"]:
        case["expected_calls"] = [
            call for call in case["expected_calls"] if call["name"].startswith(WRITES)
        ]
    document["name"] = "tau-bench airline writes"
    return document


@pytest.fixture
def tau(team, admin, submit):
    suite = services.create_suite(team, writes_suite_document(), admin)
    lines = [tau_bench.run_line(record) for record in tau_bench.RECORDS]
    return submit(suite, lines, label="gpt-4o")


def failures_url(submission, **query) -> str:
    base = f"/submissions/{submission.pk}/failures/"
    return f"{base}?{urlencode(query)}" if query else base


def group_heads(html: str) -> list[tuple[str, int, int]]:
    """(cause filter, runs, cases) of each top-level group, in the page's order."""
    rows = re.findall(
        r'<tr class="group-head">\s*<td>\s*<a href="[^"]*\?(?:[^"]*&amp;)?cause=([^"&#]*)[^"]*"'
        r' class="group-title">.*?</td>\s*<td class="num">(\d+)</td>\s*<td class="num">(\d+)</td>',
        html,
        re.S,
    )
    return [(cause.replace("%3A", ":"), int(runs), int(cases)) for cause, runs, cases in rows]


def failing_results(submission):
    return Result.objects.filter(submission=submission).exclude(verdict="pass")


def test_the_tau_bench_failures_make_a_few_groups_that_cover_every_failing_run(
    as_user, viewer, tau
):
    html = text(as_user(viewer).get(failures_url(tau)))
    heads = group_heads(html)
    assert 1 < len(heads) <= 15
    assert [runs for _, runs, _ in heads] == sorted((runs for _, runs, _ in heads), reverse=True)
    covered = set()
    for cause, runs, _ in heads:
        in_group = set(RunFilterSet({"cause": cause}).matching(tau).values_list("pk", flat=True))
        assert len(in_group) == runs
        covered |= in_group
    assert covered == set(failing_results(tau).values_list("pk", flat=True))
    assert len(covered) == tau.failed + tau.errored
    # In words, tool first; the argument one level down.
    assert '<code class="call">update_reservation_flights</code>: wrong argument value' in html
    assert "<code>payment_id</code>" in html


def test_the_api_answers_the_same_groups_as_designed(tau, admin):
    client = APIClient()
    client.force_authenticate(admin)
    response = client.get(f"/api/submissions/{tau.pk}/failures/")
    assert response.status_code == 200
    groups = response.json()
    assert 1 < len(groups) <= 15
    assert set(groups[0]) == {"kind", "tool", "runs", "cases", "first_seen", "arguments"}
    for group in groups:
        cause = f"{group['kind']}:{group['tool']}" if group["tool"] else group["kind"]
        assert RunFilterSet({"cause": cause}).matching(tau).count() == group["runs"]
        assert group["first_seen"] == tau.pk
        for argument in group["arguments"]:
            filters = RunFilterSet({"cause": cause, "argument": argument["argument"]})
            assert filters.matching(tau).count() == argument["runs"]
    by_cause = {(g["kind"], g["tool"]): g for g in groups}
    flights = by_cause["argument_value", "update_reservation_flights"]
    assert "payment_id" in [a["argument"] for a in flights["arguments"]]


def test_groups_follow_the_tables_filters(as_user, editor, tau):
    client = as_user(editor)
    cancel = failing_results(tau).filter(
        pk__in=PredicateResult.objects.filter(
            submission=tau, cause_kind="no_call", cause_tool="cancel_reservation"
        ).values("result_id")
    )
    decisions.set_status(tau.runs.filter(pk__in=cancel.values("run_id")), "flaky", editor)
    heads = group_heads(text(client.get(failures_url(tau, review=ReviewStatus.FLAKY))))
    runs = {cause: n for cause, n, _ in heads}
    assert runs["no_call:cancel_reservation"] == cancel.count()
    # Only the flaky runs count, in every group.
    for cause, n in runs.items():
        assert (
            n == RunFilterSet({"cause": cause, "review": ReviewStatus.FLAKY}).matching(tau).count()
        )
        assert n <= RunFilterSet({"cause": cause}).matching(tau).count()
    assert sum(runs.values()) < tau.failed
    nothing = text(client.get(failures_url(tau, text="no final answer says this")))
    assert group_heads(nothing) == []
    assert "No run of this filter failed a predicate." in nothing


def test_each_group_leads_to_its_runs_and_to_a_queue_of_them(as_user, editor, tau):
    client = as_user(editor)
    html = text(client.get(failures_url(tau)))
    cause, runs, _ = group_heads(html)[0]
    query = urlencode({"cause": cause})
    assert f'href="/submissions/{tau.pk}/queues/new/?{query}">Make a queue of these</a>' in html
    table = text(client.get(f"/submissions/{tau.pk}/", {"cause": cause}))
    assert f"{runs} runs match" in table
    assert "failing: " in table  # the group's chip, to remove it
    response = client.post(
        f"/submissions/{tau.pk}/queues/new/?{query}", {"name": "flights", "reviewers": [editor.pk]}
    )
    assert response.status_code == 302
    assert ReviewQueue.objects.get(name="flights").items.count() == runs


def test_a_viewer_sees_no_queue_link_or_bulk_form(as_user, viewer, tau):
    html = text(as_user(viewer).get(failures_url(tau)))
    assert "Make a queue of these" not in html
    assert "bulk-review" not in html


def test_a_later_submission_says_which_one_first_failed_that_way(as_user, viewer, tau, submit):
    lines = [tau_bench.run_line(record) for record in tau_bench.RECORDS[:40]]
    later = submit(tau.suite, lines, label="again")
    html = text(as_user(viewer).get(failures_url(later)))
    assert f'<a href="/submissions/{tau.pk}/" class="small">#{tau.pk}</a>' in html
    assert "this submission" not in html


def test_a_group_of_runs_marked_from_the_page_goes_back_to_the_same_filter(as_user, editor, tau):
    client = as_user(editor)
    cause, runs, _ = group_heads(text(client.get(failures_url(tau)))[0:])[0]
    data = {"cause": cause, "tag": "", "status": "expectation_wrong", "back": "failures"}
    response = client.post(f"/submissions/{tau.pk}/review/", data)
    assert response.status_code == 302
    assert response["Location"] == failures_url(tau)
    marked = tau.runs.filter(review__status="expectation_wrong").count()
    assert marked == runs


def test_group_and_tool_names_are_shown_escaped(as_user, viewer, team, admin, submit):
    document = {
        "schema": "casebook.suite/1",
        "name": "escaping",
        "cases": [{"key": "c", "expected_calls": [{"name": "<b>tool</b>"}]}],
    }
    suite = services.create_suite(team, document, admin)
    run = {"case": "c", "batches": [[{"name": "<i>x</i>", "arguments": {}}]]}
    submission = submit(suite, [run])
    html = text(as_user(viewer).get(failures_url(submission)))
    assert "<b>tool</b>" not in html
    assert "&lt;b&gt;tool&lt;/b&gt;" in html
