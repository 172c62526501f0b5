"""Known failures across submissions (docs/review.md#known-failures): a failure's signature
finds it again in a later upload, where the earlier triage decision is offered ("decided in #N
by …: expectation wrong") and can be set on every such run at once; a failure marked fixed
that fails in a later submission is "fixed, failing again", on the submission page, the run
page, the suite page and in the API, and is never confused with the review status
"regression"."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from cases import services
from scoring.models import KnownFailure, Result, ReviewStatus, Run
from scoring.review import decisions
from tests.support import tau_bench
from tests.support.pages import text

WRITES = ("book_", "cancel_", "send_", "update_")
LINES = [tau_bench.run_line(record) for record in tau_bench.RECORDS[:40]]


@pytest.fixture
def suite(team, admin):
    document = tau_bench.suite_document()
    for case in document["cases"]:
        case["expected_calls"] = [
            call for call in case["expected_calls"] if call["name"].startswith(WRITES)
        ]
    return services.create_suite(team, document, admin)


@pytest.fixture
def first(suite, submit):
    return submit(suite, LINES, label="monday")


def failing_runs(submission):
    return Run.objects.filter(submission=submission, result__verdict="fail").order_by("seq")


def signature_of(run) -> str:
    return Result.objects.get(run=run).signature


def test_every_failure_has_a_signature_and_a_reupload_has_the_same_ones(first, submit):
    again = submit(first.suite, LINES, label="tuesday")
    before = dict(Result.objects.filter(submission=first).values_list("run__seq", "signature"))
    after = dict(Result.objects.filter(submission=again).values_list("run__seq", "signature"))
    assert before == after
    verdicts = dict(Result.objects.filter(submission=first).values_list("run__seq", "verdict"))
    assert all((verdicts[seq] == "pass") == (not signature) for seq, signature in before.items())
    assert len({s for s in before.values() if s}) > 1


def test_a_decision_is_offered_again_on_the_same_failure_later(as_user, editor, first, submit):
    run = failing_runs(first)[0]
    decisions.set_status(Run.objects.filter(pk=run.pk), ReviewStatus.EXPECTATION_WRONG, editor)
    problem = KnownFailure.objects.get()
    assert (problem.signature, problem.decided_in, problem.decided_by) == (
        signature_of(run),
        first,
        editor,
    )
    again = submit(first.suite, LINES, label="tuesday")
    same = Run.objects.get(submission=again, seq=run.seq)
    client = as_user(editor)
    html = text(client.get(f"/submissions/{again.pk}/runs/{same.pk}/"))
    assert "<h2>Known failure</h2>" in html
    assert (
        "Decided in another submission: marked "
        '<span class="review-status expectation_wrong">expectation wrong</span> '
        f'in <a href="/submissions/{first.pk}/">#{first.pk}</a>'
    ) in html
    assert "by eddie-editor" in html
    assert f'First seen in <a href="/submissions/{first.pk}/">#{first.pk}</a>' in html
    # Every run failing that way here, one click.
    same_way = Run.objects.filter(submission=again, result__signature=signature_of(run))
    response = client.post(
        f"/submissions/{again.pk}/problems/apply/",
        {"signature": signature_of(run), "next": f"/submissions/{again.pk}/runs/{same.pk}/"},
    )
    assert response.status_code == 302
    assert response["Location"] == f"/submissions/{again.pk}/runs/{same.pk}/"
    statuses = set(same_way.values_list("review__status", flat=True))
    assert statuses == {ReviewStatus.EXPECTATION_WRONG}


def test_the_submission_page_offers_every_earlier_decision_at_once(as_user, editor, first, submit):
    runs = list(failing_runs(first)[:3])
    statuses = [ReviewStatus.FLAKY, ReviewStatus.WONT_FIX, ReviewStatus.EXPECTATION_WRONG]
    for run, status in zip(runs, statuses, strict=True):
        decisions.set_status(Run.objects.filter(pk=run.pk), status, editor)
    decided = {signature_of(run): status for run, status in zip(runs, statuses, strict=True)}
    again = submit(first.suite, LINES, label="tuesday")
    client = as_user(editor)
    html = text(client.get(f"/submissions/{again.pk}/"))
    assert "Decided in other submissions" in html
    assert html.count(' by eddie-editor: <span class="review-status') == len(decided)
    client.post(f"/submissions/{again.pk}/problems/apply/", {})
    for signature, status in decided.items():
        here = Run.objects.filter(submission=again, result__signature=signature)
        assert set(here.values_list("review__status", flat=True)) == {status}
    untouched = Run.objects.filter(submission=again).exclude(result__signature__in=decided)
    assert not untouched.filter(review__isnull=False).exists()


def test_one_run_marked_regression_is_told_apart_from_the_runs_failing_so_here(
    as_user, editor, first, submit
):
    """The review status "regression" is a decision like the others: listed with them, the
    runs failing that way here counted apart from the one run it was made on."""
    run = failing_runs(first)[0]
    signature = signature_of(run)
    decisions.set_status(Run.objects.filter(pk=run.pk), ReviewStatus.REGRESSION, editor)
    # Every run twice over, as more trials: two runs here fail as the one marked did.
    more = [{**line, "trial": line["trial"] + 4} for line in LINES]
    again = submit(first.suite, [*LINES, *more], label="tuesday")
    here = Result.objects.filter(submission=again, signature=signature).count()
    assert here == 2
    html = text(as_user(editor).get(f"/submissions/{again.pk}/"))
    assert "Fixed, failing again" not in html
    key = run.case_key
    assert (
        f'<a href="?problem={signature}#runs-section"><code class="case-key">{key}</code> · '
        f'{here} runs here</a> <span class="muted small">· decided in '
        f'<a href="/submissions/{first.pk}/">#{first.pk}</a> by eddie-editor: '
        '<span class="review-status regression">regression</span></span>'
    ) in html


def test_a_failure_marked_fixed_that_fails_again_is_fixed_failing_again(
    as_user, viewer, editor, first, submit
):
    run = failing_runs(first)[0]
    decisions.set_status(Run.objects.filter(pk=run.pk), ReviewStatus.FIXED, editor)
    again = submit(first.suite, LINES, label="tuesday")
    html = text(as_user(viewer).get(f"/submissions/{again.pk}/"))
    assert '<h2 class="regressed">Fixed, failing again <span class="muted">1</span></h2>' in html
    assert "Decided in other submissions" not in html
    assert f"?problem={signature_of(run)}#runs-section" in html
    same = Run.objects.get(submission=again, seq=run.seq)
    run_page = text(as_user(viewer).get(f"/submissions/{again.pk}/runs/{same.pk}/"))
    assert "<h2>Known failure: fixed, failing again</h2>" in run_page
    assert "and failing again here" in run_page
    assert "Set these decisions" not in html  # viewers decide nothing
    # Fixed is not copied onto the runs that fail again.
    as_user(editor).post(f"/submissions/{again.pk}/problems/apply/", {})
    assert not Run.objects.filter(submission=again, review__status=ReviewStatus.FIXED).exists()
    api = APIClient()
    api.force_authenticate(viewer)
    regressions = api.get(f"/api/submissions/{again.pk}/").json()["regressions"]
    assert regressions == [
        {
            "case": run.case_key,
            "signature": signature_of(run),
            "marked_fixed_in": first.pk,
            "marked_fixed_by": "eddie-editor",
        }
    ]
    # In the submission it was marked fixed in, it is not failing again.
    assert api.get(f"/api/submissions/{first.pk}/").json()["regressions"] == []


def test_a_failure_marked_fixed_later_is_not_failing_again_before(as_user, editor, first, submit):
    """Fixed in a later submission says nothing of an earlier one: no "failing again" there,
    and nothing to set on its runs."""
    again = submit(first.suite, LINES, label="tuesday")
    run = failing_runs(again)[0]
    decisions.set_status(Run.objects.filter(pk=run.pk), ReviewStatus.FIXED, editor)
    client = as_user(editor)
    html = text(client.get(f"/submissions/{first.pk}/"))
    assert "Fixed, failing again" not in html
    assert "Decided in other submissions" not in html
    same = Run.objects.get(submission=first, seq=run.seq)
    run_page = text(client.get(f"/submissions/{first.pk}/runs/{same.pk}/"))
    assert "<h2>Known failure</h2>" in run_page
    assert '<span class="review-status fixed">fixed</span>' in run_page
    assert "failing again" not in run_page
    assert "Mark the " not in run_page


def test_the_runs_table_filters_by_problem(as_user, viewer, first):
    run = failing_runs(first)[0]
    signature = signature_of(run)
    html = text(as_user(viewer).get(f"/submissions/{first.pk}/", {"problem": signature}))
    count = Result.objects.filter(submission=first, signature=signature).count()
    assert f"{count} run{'s' if count != 1 else ''} match" in html
    assert "one known failure" in html


def test_taking_a_decision_back_leaves_the_problem_as_it_was(editor, first):
    run = Run.objects.filter(pk=failing_runs(first)[0].pk)
    decisions.set_status(run, ReviewStatus.FLAKY, editor)
    decisions.set_status(run, ReviewStatus.UNTRIAGED, editor)
    assert KnownFailure.objects.get().status == ReviewStatus.FLAKY


def test_the_suite_lists_its_open_problems_across_submissions(
    as_user, viewer, editor, first, submit
):
    settled, regressed = failing_runs(first)[0], failing_runs(first)[1]
    decisions.set_status(Run.objects.filter(pk=settled.pk), ReviewStatus.WONT_FIX, editor)
    decisions.set_status(Run.objects.filter(pk=regressed.pk), ReviewStatus.FIXED, editor)
    again = submit(first.suite, LINES[:20], label="tuesday")
    html = text(as_user(viewer).get(f"/suites/{first.suite.pk}/problems/"))
    rows = html.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    signatures = [row.split("?problem=")[1].split("#")[0] for row in rows]
    open_here = set(
        Result.objects.filter(submission__in=[first, again])
        .exclude(signature="")
        .values_list("signature", flat=True)
    ) - {signature_of(settled)}
    assert set(signatures) <= open_here
    assert signature_of(settled) not in signatures
    assert len(signatures) == min(20, len(open_here))
    # Seen in both: first in the Monday upload, last in Tuesday's, in two submissions.
    both = next(
        row
        for row in rows
        if f'>#{first.pk}</a></td>\n      <td><a href="/submissions/{again.pk}/">' in row
    )
    assert '<td class="num">2</td>' in both
    if signature_of(regressed) in signatures and regressed.seq <= 20:
        row = rows[signatures.index(signature_of(regressed))]
        assert f"fixed in #{first.pk}, failing again" in row


def test_the_suite_says_when_no_submission_has_scored_a_run_yet(
    as_user, viewer, editor, suite, submit
):
    """Not "no open known failure in the last 0 submissions"."""
    url = f"/suites/{suite.pk}/problems/"
    html = text(as_user(viewer).get(url))
    assert "No submission has finished scoring a run yet" in html
    assert "0 submissions" not in html
    first = submit(suite, LINES, label="monday")
    decisions.set_status(failing_runs(first), ReviewStatus.WONT_FIX, editor)
    html = text(as_user(viewer).get(url))
    assert "No open known failure in the last 1 submission." in html
