"""Double-blind review queues (docs/review.md#double-blind-review): each run goes to two
reviewers who do not see each other's decision, neither on the queue page, the run page, the
runs table nor the API, until it is resolved; agreements become the run's review, disagreements
go to a resolve step; Cohen's κ is shown once both have finished."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from cases.models import Membership, ReviewLabel, Role, User
from scoring.models import BlindDecision, Review, ReviewEvent, ReviewQueue, ReviewStatus, Run
from scoring.results.filtersets import RunFilterSet
from scoring.review import blind, decisions, queues
from scoring.review.agreement import cohen_kappa, fleiss_kappa
from tests.support.pages import text
from tests.support.runs import TRIALS

FAILED = 5  # of TRIALS


@pytest.fixture
def third(make_user, team):
    """An editor who reviews none of the queue's runs: the one who resolves."""
    user = make_user("theo-third")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return user


@pytest.fixture
def submission(submit, suite):
    return submit(suite, TRIALS, label="model-a")


@pytest.fixture
def wrong_tool(team):
    return ReviewLabel.objects.create(team=team, name="wrong tool", key="w", colour="red")


@pytest.fixture
def queue(submission, admin, editor):
    """The failures, each to both the admin (who made the queue) and the editor."""
    return queues.build_queue(
        submission,
        "blind failures",
        admin,
        filters=RunFilterSet({"verdict": "fail"}),
        reviewers=[admin, editor],
        double_blind=True,
    )


@pytest.fixture
def three_way(submission, admin, editor, third):
    """The failures, each to two of the admin (who made the queue), the editor and third."""
    return queues.build_queue(
        submission,
        "three",
        admin,
        filters=RunFilterSet({"verdict": "fail"}),
        reviewers=[admin, editor, third],
        double_blind=True,
    )


def shown_decision(html: str) -> str | None:
    """The decision of the first run a page shows as made (a status shown or pressed, a
    label ticked or pressed), or None."""
    for status in ReviewStatus.values:
        if status == ReviewStatus.UNTRIAGED:
            continue
        if f'review-status {status}"' in html or f'review {status}"' in html:
            return status
        if f'value="{status}" data-triage-key="2" class="current"' in html:
            return status
        if re.search(rf'value="{status}"[^>]*aria-pressed="true"', html):
            return status
    if " checked data-label-key" in html or re.search(
        r'data-label-key="\w" aria-pressed="true"', html
    ):
        return "a label"
    return None


def items(queue):
    return list(queue.items.order_by("position"))


def decide_all(queue, user, status, labels=()):
    for item in items(queue):
        blind.decide(item, user, status, labels)


# --- building -------------------------------------------------------------------------------


def test_each_item_goes_to_two_different_reviewers(queue, admin, editor):
    assert queue.double_blind
    assert queue.items.count() == FAILED
    for item in items(queue):
        reviewers = set(item.decisions.values_list("reviewer", flat=True))
        assert reviewers == {admin.pk, editor.pk}
        assert item.assignee is None
    assert not BlindDecision.objects.exclude(status="").exists()


def test_three_reviewers_share_the_items_two_by_two(three_way, admin, editor, third):
    per_reviewer = {user.pk: 0 for user in (admin, editor, third)}
    for item in items(three_way):
        pair = list(item.decisions.values_list("reviewer", flat=True))
        assert len(set(pair)) == 2
        for pk in pair:
            per_reviewer[pk] += 1
    assert sorted(per_reviewer.values()) == [3, 3, 4]  # 10 decisions, dealt in turn


def test_a_double_blind_queue_needs_two_reviewers(submission, admin, as_user):
    with pytest.raises(ValueError, match="two reviewers"):
        queues.build_queue(submission, "one", admin, reviewers=[admin], double_blind=True)
    response = as_user(admin).post(
        f"/submissions/{submission.pk}/queues/new/?verdict=fail",
        {"name": "blind", "reviewers": [admin.pk], "double_blind": "on"},
    )
    assert response.status_code == 422
    assert "needs at least two reviewers" in text(response)


def test_the_new_queue_page_makes_a_double_blind_queue(submission, admin, editor, as_user):
    response = as_user(admin).post(
        f"/submissions/{submission.pk}/queues/new/?verdict=fail",
        {"name": "blind", "reviewers": [admin.pk, editor.pk], "double_blind": "on"},
    )
    made = submission.queues.get()
    assert response.status_code == 302
    assert made.double_blind
    assert BlindDecision.objects.filter(item__queue=made).count() == 2 * FAILED


# --- deciding, blind --------------------------------------------------------------------------


def test_a_decision_stays_hidden_from_the_other_reviewer_until_resolved(
    queue, submission, admin, editor, wrong_tool, as_user, client
):
    first = items(queue)[0]
    blind.decide(first, admin, ReviewStatus.EXPECTATION_WRONG, [wrong_tool])
    # Nothing reaches the run's review, which every page and the API show.
    assert not Review.objects.filter(run_id=first.run_id).exists()

    as_user(editor)
    run_page = f"/submissions/{submission.pk}/runs/{first.run_id}/"
    for page in (
        f"{run_page}?queue={queue.pk}",
        run_page,
        queue.get_absolute_url(),
        f"/submissions/{submission.pk}/",
    ):
        assert shown_decision(text(client.get(page))) is None, page
    blind_panel = text(client.get(f"{run_page}?queue={queue.pk}"))
    assert "Blind review" in blind_panel
    assert "Choosing a status records your decision" in blind_panel
    for query in ("review=expectation_wrong", "label=wrong+tool"):
        table = text(client.get(f"/submissions/{submission.pk}/?{query}"))
        assert f"/runs/{first.run_id}/" not in table
    results = client.get(f"/api/submissions/{submission.pk}/results/").json()["results"]
    assert {r["review"]["status"] for r in results} == {"untriaged"}
    assert client.get(f"/api/queues/{queue.pk}/").json()["agreement"] is None
    # The maker sees their own decision on their run page, and on the queue page.
    as_user(admin)
    own = text(client.get(f"{run_page}?queue={queue.pk}"))
    assert "Your decision so far: expectation wrong" in own
    assert shown_decision(own) == "expectation_wrong"
    assert shown_decision(text(client.get(queue.get_absolute_url()))) == "expectation_wrong"


def test_a_blind_reviewer_without_the_queue_in_the_address_gets_the_blind_panel(
    queue, submission, admin, editor, as_user, client
):
    """Opening the run from the runs table (no ``?queue=``) is still reviewing it blind: the
    blind panel, and neither the review made before the queue nor the known failure's card."""
    first = items(queue)[0]
    decisions.set_status(Run.objects.filter(pk=first.run_id), ReviewStatus.WONT_FIX, admin)
    as_user(editor)
    page = text(client.get(f"/submissions/{submission.pk}/runs/{first.run_id}/"))
    assert "Blind review" in page
    assert shown_decision(page) is None
    assert "set the status to" not in page  # the run's thread
    assert "<h2>Known failure" not in page


def test_a_blind_reviewer_cannot_set_the_runs_review_by_hand(
    queue, submission, admin, editor, wrong_tool, as_user, client
):
    first = items(queue)[0]
    run_page = f"/submissions/{submission.pk}/runs/{first.run_id}/"
    as_user(editor)
    for data in (
        {"status": "flaky"},
        {"label": wrong_tool.pk},
        {"assignee": editor.pk},
        {"comment": "I think it is flaky"},
    ):
        answer = client.post(f"{run_page}review/", data, HTTP_HX_REQUEST="true")
        assert answer.status_code == 409, data
        assert "You are reviewing this run blind" in text(answer)
        assert "Blind review" in text(answer)
    page = text(client.post(f"{run_page}review/", {"status": "flaky"}, follow=True))
    assert "You are reviewing this run blind in the double-blind queue “blind failures”" in page
    assert not Review.objects.filter(run_id=first.run_id).exists()
    assert not ReviewEvent.objects.filter(run_id=first.run_id).exists()
    # Their own decision is still theirs to make, and then the run is theirs to review by
    # hand again once both have decided (and agreed).
    blind.decide(first, editor, ReviewStatus.FLAKY, [])
    assert client.post(f"{run_page}review/", {"status": "wont_fix"}).status_code == 302
    assert not Review.objects.filter(run_id=first.run_id).exists()
    blind.decide(first, admin, ReviewStatus.FLAKY, [])
    client.post(f"{run_page}review/", {"status": "wont_fix"})
    assert Review.objects.get(run_id=first.run_id).status == ReviewStatus.WONT_FIX


def test_a_bulk_review_leaves_the_runs_the_user_reviews_blind_alone(
    queue, submission, admin, third, as_user, client
):
    failing = {item.run_id for item in items(queue)}
    answer = as_user(admin).post(
        f"/submissions/{submission.pk}/review/", {"status": "flaky"}, follow=True
    )
    assert f"{FAILED} runs left alone: you review them blind" in text(answer)
    assert not Review.objects.filter(run_id__in=failing).exists()
    # Someone who reviews none of them changes them all.
    as_user(third).post(f"/submissions/{submission.pk}/review/", {"status": "wont_fix"})
    assert Review.objects.filter(run_id__in=failing, status="wont_fix").count() == FAILED


def test_the_review_service_itself_refuses_a_blind_reviewer_whatever_calls_it(
    queue, admin, third, wrong_tool
):
    """No caller can get around the rule: it is the review service's, not a view's."""
    run = Run.objects.get(pk=items(queue)[0].run_id)
    one = Run.objects.filter(pk=run.pk)
    for change in (
        lambda: decisions.review_run(run, admin, status=ReviewStatus.FLAKY),
        lambda: decisions.comment(run, "looks flaky", admin),
        lambda: decisions.toggle_label(run, wrong_tool, admin),
    ):
        with pytest.raises(decisions.ReviewingBlind):
            change()
    assert decisions.set_status(one, ReviewStatus.FLAKY, admin) == 0
    assert decisions.assign(one, admin, admin) == 0
    assert decisions.add_label(one, wrong_tool, admin) == 0
    assert not Review.objects.filter(run=run).exists()
    assert not ReviewEvent.objects.filter(run=run).exists()
    # Someone who does not review it blind changes it.
    assert decisions.set_status(one, ReviewStatus.FLAKY, third) == 1


def test_agreeing_decisions_become_the_runs_review(queue, admin, editor, wrong_tool):
    first = items(queue)[0]
    blind.decide(first, admin, ReviewStatus.FLAKY, [wrong_tool])
    blind.decide(first, editor, ReviewStatus.FLAKY, [wrong_tool])
    first.refresh_from_db()
    assert first.resolved_at is not None
    assert first.resolved_by is None
    review = Review.objects.get(run_id=first.run_id)
    assert review.status == ReviewStatus.FLAKY
    assert list(review.labels.values_list("name", flat=True)) == ["wrong tool"]


def test_a_decision_may_change_until_the_other_reviewer_decides(queue, admin, editor):
    first = items(queue)[0]
    blind.decide(first, admin, ReviewStatus.FLAKY, [])
    blind.decide(first, admin, ReviewStatus.REGRESSION, [])
    assert blind.own_decision(first, admin).status == ReviewStatus.REGRESSION
    blind.decide(first, editor, ReviewStatus.FLAKY, [])
    with pytest.raises(blind.Settled):
        blind.decide(first, admin, ReviewStatus.FLAKY, [])
    assert blind.disputed(first)


def test_only_the_items_reviewers_decide_it(queue, third, submission, as_user):
    first = items(queue)[0]
    with pytest.raises(blind.NotYours):
        blind.decide(first, third, ReviewStatus.FLAKY, [])
    response = as_user(third).post(
        f"/queues/{queue.pk}/items/{first.pk}/decide/", {"status": "flaky"}, follow=True
    )
    assert "Not recorded: this run is not yours" in text(response)


def test_deciding_from_the_page_opens_the_reviewers_next_run(queue, editor, as_user):
    first, second = items(queue)[:2]
    response = as_user(editor).post(
        f"/queues/{queue.pk}/items/{first.pk}/decide/", {"status": "flaky"}
    )
    assert response.status_code == 302
    assert response["Location"].endswith(f"/runs/{second.run_id}/?queue={queue.pk}")
    assert blind.own_decision(first, editor).status == ReviewStatus.FLAKY


def test_next_in_queue_on_an_undecided_run_opens_the_reviewers_next_one(queue, editor, as_user):
    listed = items(queue)
    client = as_user(editor)
    response = client.post(f"/queues/{queue.pk}/next/", {"after": listed[0].run_id})
    assert response["Location"].endswith(f"/runs/{listed[1].run_id}/?queue={queue.pk}")
    # From the last, round to the first, still undecided; with it the only one left, next
    # stays on it and says so.
    response = client.post(f"/queues/{queue.pk}/next/", {"after": listed[-1].run_id})
    assert response["Location"].endswith(f"/runs/{listed[0].run_id}/?queue={queue.pk}")
    for item in listed[1:]:
        blind.decide(item, editor, ReviewStatus.FLAKY, [])
    response = client.post(f"/queues/{queue.pk}/next/", {"after": listed[0].run_id}, follow=True)
    assert response.redirect_chain[-1][0].endswith(f"/runs/{listed[0].run_id}/?queue={queue.pk}")
    assert "Nothing else left to you in this queue: only this run is still to decide." in text(
        response
    )


# --- resolving and agreement ---------------------------------------------------------------


def test_disagreements_go_to_a_third_person_who_picks_the_final_decision(
    queue, submission, admin, editor, third, wrong_tool, as_user
):
    first = items(queue)[0]
    blind.decide(first, admin, ReviewStatus.FLAKY, [])
    blind.decide(first, editor, ReviewStatus.REGRESSION, [wrong_tool])
    assert list(blind.to_resolve(queue)) == [first]

    # The editor reviewed it: not theirs to resolve, and the page does not offer it.
    page = text(as_user(editor).get(queue.get_absolute_url()))
    assert 'id="resolve"' not in page
    refused = as_user(editor).post(
        f"/queues/{queue.pk}/items/{first.pk}/resolve/", {f"item{first.pk}-status": "flaky"}
    )
    assert refused.status_code == 403

    page = text(as_user(third).get(queue.get_absolute_url()))
    assert 'id="resolve"' in page
    assert "regression" in page
    assert "flaky" in page
    response = as_user(third).post(
        f"/queues/{queue.pk}/items/{first.pk}/resolve/",
        {f"item{first.pk}-status": "regression", f"item{first.pk}-labels": [wrong_tool.pk]},
    )
    assert response.status_code == 302
    first.refresh_from_db()
    assert first.resolved_by == third
    review = Review.objects.get(run_id=first.run_id)
    assert review.status == ReviewStatus.REGRESSION
    assert list(review.labels.all()) == [wrong_tool]
    assert not blind.to_resolve(queue).exists()


def test_the_queue_maker_resolves_once_their_own_share_is_decided(queue, admin, editor, as_user):
    first = items(queue)[0]
    blind.decide(first, admin, ReviewStatus.FLAKY, [])
    blind.decide(first, editor, ReviewStatus.REGRESSION, [])
    # The admin made the queue but has runs left to decide: the disagreement is not shown.
    assert 'id="resolve"' not in text(as_user(admin).get(queue.get_absolute_url()))
    for item in items(queue)[1:]:
        blind.decide(item, admin, ReviewStatus.FLAKY, [])
    assert 'id="resolve"' in text(as_user(admin).get(queue.get_absolute_url()))


def test_kappa_is_shown_once_both_reviewers_have_finished(
    queue, admin, editor, wrong_tool, as_user, client
):
    first, *rest = items(queue)
    # admin: flaky 5 times, labels on the first two; editor: flaky 4 times and one regression.
    for n, item in enumerate(items(queue)):
        blind.decide(item, admin, ReviewStatus.FLAKY, [wrong_tool] if n < 2 else [])
    for item in rest:
        blind.decide(item, editor, ReviewStatus.FLAKY, [])
    page = text(as_user(admin).get(queue.get_absolute_url()))
    assert "Shown when both reviewers have decided every run" in page
    assert client.get(f"/api/queues/{queue.pk}/").json()["agreement"] is None

    blind.decide(first, editor, ReviewStatus.REGRESSION, [wrong_tool])
    measured = blind.agreement(queue)
    assert measured.items == FAILED
    # Status: 4 of 5 agree; one reviewer always said flaky, so chance agreement is 0.8: κ 0.
    assert measured.status.agreement == pytest.approx(0.8)
    assert measured.status.kappa == pytest.approx(0.0)
    # "wrong tool": admin on items 1-2, editor on item 1: p_e = (2·1 + 3·4)/25 = 0.56.
    (label,) = measured.labels
    assert label.kappa == pytest.approx((0.8 - 0.56) / 0.44)
    page = text(as_user(admin).get(queue.get_absolute_url()))
    assert 'data-kappa="status">0.00<' in page
    assert f'data-kappa="wrong tool">{label.kappa:.2f}<' in page
    api = client.get(f"/api/queues/{queue.pk}/").json()
    assert api["double_blind"]
    assert api["agreement"]["items"] == FAILED
    assert api["agreement"]["labels"][0]["kappa"] == pytest.approx(label.kappa)


def test_with_three_reviewers_the_agreement_is_fleiss_kappa(
    three_way, admin, editor, third, as_user, client
):
    """Two of three to a run: the pairs differ, so there is no first reviewer's habit for
    Cohen's κ to count; Fleiss' κ pools everyone's decisions."""
    says = {admin.pk: ReviewStatus.FLAKY, editor.pk: ReviewStatus.REGRESSION}
    pairs = Counter()
    for item in items(three_way):
        reviewers = sorted(item.decisions.values_list("reviewer", flat=True))
        for pk in reviewers:
            blind.decide(item, User.objects.get(pk=pk), says.get(pk, ReviewStatus.FLAKY), [])
        pairs[tuple(says.get(pk, ReviewStatus.FLAKY).value for pk in reviewers)] += 1
    measured = blind.agreement(three_way)
    assert measured.statistic == "fleiss"
    assert measured.items == FAILED
    assert measured.status.kappa == pytest.approx(fleiss_kappa(pairs))
    assert measured.status.kappa != pytest.approx(cohen_kappa(pairs))
    page = text(as_user(admin).get(three_way.get_absolute_url()))
    assert "Fleiss' κ on the status" in page
    assert f'data-kappa="status">{measured.status.kappa:.2f}<' in page
    api = client.get(f"/api/queues/{three_way.pk}/").json()["agreement"]
    assert api["statistic"] == "fleiss"
    assert api["status"]["kappa"] == pytest.approx(measured.status.kappa)


def test_a_finished_queues_agreement_is_counted_once_and_kept(
    queue, admin, editor, wrong_tool, as_user, django_assert_max_num_queries
):
    """Once both have decided every run no decision can change: the tables are counted on
    the first look and read from the queue after (a label shown as it is called now)."""
    for n, item in enumerate(items(queue)):
        blind.decide(item, admin, ReviewStatus.FLAKY, [wrong_tool] if n < 2 else [])
        blind.decide(item, editor, ReviewStatus.FLAKY if n else ReviewStatus.REGRESSION, [])
    queue.refresh_from_db()
    assert queue.agreement_tables is None
    client = as_user(admin)
    counted = text(client.get(queue.get_absolute_url()))
    queue.refresh_from_db()
    assert queue.agreement_tables is not None
    recounted = ReviewQueue.objects.get(pk=queue.pk)
    recounted.agreement_tables = None
    assert blind.agreement(queue) == blind.agreement(recounted)
    wrong_tool.name = "wrong function"
    wrong_tool.save()
    with django_assert_max_num_queries(1):  # the labels' names
        kept = blind.agreement(queue)
    assert [k.name for k in kept.labels] == ["wrong function"]
    assert 'data-kappa="wrong tool">' in counted
    assert 'data-kappa="wrong function">' in text(client.get(queue.get_absolute_url()))


def test_the_queue_list_counts_resolved_items_as_done(queue, submission, admin, editor, as_user):
    decide_all(queue, admin, ReviewStatus.FLAKY)
    decide_all(queue, editor, ReviewStatus.FLAKY)
    page = text(as_user(admin).get(f"/submissions/{submission.pk}/queues/"))
    assert f"{FAILED} / {FAILED}" in page
    assert "double-blind" in page
    assert blind.progress(queue).finished


def test_a_double_blind_queues_reviewers_are_not_dealt_out_again(queue, admin, third, as_user):
    before = sorted(BlindDecision.objects.values_list("item", "reviewer"))
    response = as_user(admin).post(
        f"/queues/{queue.pk}/assign/", {"reviewers": [third.pk]}, follow=True
    )
    assert "stay with the reviewers it was made for" in text(response)
    assert sorted(BlindDecision.objects.values_list("item", "reviewer")) == before
    assert not queue.items.filter(assignee__isnull=False).exists()


# --- handing on an absent reviewer's runs ---------------------------------------------------


def test_an_absent_reviewers_undecided_runs_are_handed_on(queue, admin, editor, third, as_user):
    """The editor decided two runs and went away: the other three go to the third person,
    whose decisions then settle them; what the editor decided stays theirs."""
    first, second, *rest = items(queue)
    for item in (first, second):
        blind.decide(item, editor, ReviewStatus.FLAKY, [])
    client = as_user(admin)
    page = text(client.get(queue.get_absolute_url()))
    assert f'action="/queues/{queue.pk}/hand-on/"' in page
    response = client.post(
        f"/queues/{queue.pk}/hand-on/", {"reviewer": editor.pk, "to": third.pk}, follow=True
    )
    assert f"3 of {editor}&#x27;s undecided runs now go to {third}." in text(response)
    for item in (first, second):
        assert blind.own_decision(item, editor).status == ReviewStatus.FLAKY
        assert blind.own_decision(item, third) is None
    for item in rest:
        assert blind.own_decision(item, editor) is None
        assert blind.own_decision(item, third).status == ""
    assert blind.next_item(queue, editor) is None
    assert blind.next_item(queue, third) == rest[0]
    for item in items(queue):
        blind.decide(item, admin, ReviewStatus.FLAKY, [])
    for item in rest:
        blind.decide(item, third, ReviewStatus.FLAKY, [])
    assert blind.progress(queue).finished  # all agreed: each run's review is set
    measured = blind.agreement(queue)
    assert (measured.statistic, measured.items) == ("fleiss", FAILED)  # three people


def test_runs_whose_other_reviewer_is_the_new_one_stay(three_way, admin, editor, as_user):
    shared = BlindDecision.objects.filter(item__queue=three_way, reviewer=admin)
    admins, with_editor = shared.count(), shared.filter(item__decisions__reviewer=editor).count()
    assert 0 < with_editor < admins
    handed = blind.hand_on(three_way, admin, editor)
    assert (handed.moved, handed.kept) == (admins - with_editor, with_editor)
    for item in items(three_way):
        reviewers = list(item.decisions.values_list("reviewer", flat=True))
        assert len(reviewers) == len(set(reviewers)) == 2
    response = as_user(admin).post(
        f"/queues/{three_way.pk}/hand-on/", {"reviewer": admin.pk, "to": editor.pk}, follow=True
    )
    assert f"{with_editor} stay with {admin}: {editor} is already their other reviewer" in text(
        response
    )


def test_only_editors_hand_on_runs_and_only_of_a_double_blind_queue(
    queue, submission, admin, editor, third, viewer, as_user
):
    handing = {"reviewer": editor.pk, "to": third.pk}
    refused = as_user(viewer).post(f"/queues/{queue.pk}/hand-on/", handing)
    assert refused.status_code in (403, 404)
    page = text(as_user(viewer).get(queue.get_absolute_url()))
    assert "hand-on/" not in page
    plain = queues.build_queue(submission, "plain", admin, reviewers=[editor])
    assert as_user(admin).post(f"/queues/{plain.pk}/hand-on/", handing).status_code == 404
    same = as_user(admin).post(
        f"/queues/{queue.pk}/hand-on/", {"reviewer": editor.pk, "to": editor.pk}, follow=True
    )
    assert "Choose a reviewer with runs left" in text(same)
    assert BlindDecision.objects.filter(item__queue=queue, reviewer=third).count() == 0
