"""A review queue in a real browser: an editor opens a failure group of a submission, makes a
queue of it, and works through it, each status set bringing the next run of the queue, until
the queue says it is finished."""

from __future__ import annotations

import io
import re

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import ReviewQueue, ReviewStatus
from tests.support.pages import demo_document, jsonl
from tests.support.runs import GREETING_FAIL, TRIALS

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GREETINGS_FAILING = 3


@pytest.fixture
def submission(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    suite = services.create_suite(team, demo_document(), user)
    lines = [*TRIALS, GREETING_FAIL, GREETING_FAIL]  # greeting fails 3 times in all
    return create_submission(suite, user, io.BytesIO(jsonl(lines)), label="model-a")


def test_an_editor_makes_a_queue_of_a_failure_group_and_works_through_it(
    page, live_server, user, password, submission
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    # The most common failure: the greetings' (the first link to a failure group).
    group = page.locator("a[href*='predicate=']").filter(has_text="hello").first
    label = group.inner_text()
    group.click()
    page.wait_for_url(re.compile(r"predicate="))
    page.get_by_role("link", name="Make a review queue of these runs").click()

    assert "The runs of the failure group" in page.locator(".lead").inner_text()
    assert f"{GREETINGS_FAILING} runs" in page.locator(".lead").inner_text()
    page.get_by_label("Name").fill("Greetings that fail")
    assert page.get_by_label(user.username).is_checked()  # the maker reviews, unless unticked
    page.get_by_role("button", name="Make the queue").click()

    queue = ReviewQueue.objects.get()
    assert queue.group.startswith(label.rstrip("…"))
    page.wait_for_url(f"{live_server.url}/queues/{queue.pk}/")
    assert "0 of 3 runs reviewed" in page.get_by_role("region", name="Progress").inner_text()
    page.get_by_role("button", name="Start reviewing").click()

    seen = []
    for _ in range(GREETINGS_FAILING):
        page.wait_for_url(re.compile(rf"/runs/\d+/\?queue={queue.pk}$"))
        run_id = int(re.search(r"/runs/(\d+)/", page.url).group(1))
        assert run_id not in seen
        seen.append(run_id)
        # Reserved to this reviewer while they look at it.
        assert queue.items.get(run_id=run_id).reserved_by == user
        if len(seen) == 1:
            # Decide, then move on with the keyboard: "j" posts the "Next in queue" form.
            page.get_by_role("button", name=re.compile("flaky")).click()
            expect(page.locator("#review dd .review-status")).to_have_text("flaky")
            page.keyboard.press("j")
        else:
            page.locator("[data-triage-advance]").check()
            page.get_by_role("button", name=re.compile("flaky")).click()
        page.wait_for_url(lambda url, current=page.url: url != current)

    page.wait_for_url(f"{live_server.url}/queues/{queue.pk}/")
    assert "This queue is finished" in page.locator(".queue-finished").inner_text()
    assert sorted(seen) == sorted(queue.items.values_list("run_id", flat=True))
    statuses = set(queue.items.values_list("run__review__status", flat=True))
    assert statuses == {ReviewStatus.FLAKY}
