"""Who may be assigned a run: one rule (``cases.permissions.reviewers``: those who may change
the suite), offered and accepted alike by the run page's review panel, the runs table's bulk
review form and a review queue's reviewers form."""

from __future__ import annotations

import re

import pytest

from cases.permissions import can_edit_suite, reviewers
from scoring.models import Review
from scoring.results.filtersets import RunFilterSet
from scoring.review import queues
from tests.support.pages import HX, text

RUNS = [
    {"case": "greeting", "batches": [], "final_text": "Bye"},
    {"case": "greeting", "batches": [], "final_text": "Bye again"},
]


@pytest.fixture
def submission(suite, submit):
    return submit(suite, RUNS)


@pytest.fixture
def queue(submission, admin):
    return queues.build_queue(submission, "greetings", admin, filters=RunFilterSet())


def run_page(submission):
    run = submission.runs.order_by("line").first()
    return f"/submissions/{submission.pk}/runs/{run.pk}/", run


class RunPage:
    """The run page's review panel: an assignee for one run."""

    def offered(self, client, submission, queue) -> set[int]:
        url, _ = run_page(submission)
        html = text(client.get(url))
        select = html[html.index('<select name="assignee" id="review-assignee">') :]
        return _option_values(select[: select.index("</select>")])

    def assign(self, client, submission, queue, user) -> set[int]:
        url, run = run_page(submission)
        client.post(f"{url}review/", {"assignee": str(user.pk)}, headers=HX)
        return set(Review.objects.filter(run=run).values_list("assignee", flat=True))


class BulkForm:
    """The runs table's bulk review form: an assignee for every run of a filter."""

    def offered(self, client, submission, queue) -> set[int]:
        html = text(client.get(f"/submissions/{submission.pk}/"))
        form = html[html.index('<form class="bulk-review') :]
        return _option_values(form[: form.index("</form>")])

    def assign(self, client, submission, queue, user) -> set[int]:
        client.post(f"/submissions/{submission.pk}/review/", {"assignee": str(user.pk)})
        return set(Review.objects.filter(submission=submission).values_list("assignee", flat=True))


class QueueForm:
    """A review queue's reviewers, among whom its runs are shared out."""

    def offered(self, client, submission, queue) -> set[int]:
        html = text(client.get(f"/queues/{queue.pk}/"))
        return {int(pk) for pk in re.findall(r'name="reviewers" value="(\d+)"', html)}

    def assign(self, client, submission, queue, user) -> set[int]:
        client.post(f"/queues/{queue.pk}/assign/", {"reviewers": [user.pk]})
        return set(queue.items.values_list("assignee", flat=True))


def _option_values(html: str) -> set[int]:
    return {int(pk) for pk in re.findall(r'<option value="(\d+)"', html)}


PLACES = [RunPage(), BulkForm(), QueueForm()]
IDS = ["run page", "bulk form", "queue form"]


def test_the_reviewers_are_exactly_those_who_may_change_the_suite(
    suite, admin, editor, viewer, outsider
):
    for user in (admin, editor, viewer, outsider):
        assert (user in reviewers(suite)) == can_edit_suite(user, suite), user
    assert [user.username for user in reviewers(suite)] == ["alice-admin", "eddie-editor"]


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_every_place_offers_the_same_reviewers(as_user, editor, submission, queue, place):
    offered = place.offered(as_user(editor), submission, queue)
    assert offered == {user.pk for user in reviewers(submission.suite)}


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_every_place_accepts_an_editor_as_assignee(
    as_user, admin, editor, submission, queue, place
):
    assert place.assign(as_user(admin), submission, queue, editor) == {editor.pk}


@pytest.mark.parametrize("place", PLACES, ids=IDS)
@pytest.mark.parametrize("who", ["viewer", "outsider"])
def test_every_place_refuses_someone_who_may_not_review(
    request, as_user, admin, submission, queue, place, who
):
    user = request.getfixturevalue(who)
    assert user.pk not in place.assign(as_user(admin), submission, queue, user)
