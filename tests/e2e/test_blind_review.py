"""A double-blind review queue in a real browser: a maker makes one of a submission's failures
for two reviewers; each works through it with the keyboard (a label's key ticks it, a status
key records the decision and opens their next run), never seeing the other's decisions; once
both have finished, the queue page shows Cohen's κ and the one disagreement to resolve. And a
label's key toggles it on the ordinary run page."""

from __future__ import annotations

import io
import re

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, ReviewLabel, Role, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import BlindDecision, Review, ReviewQueue
from tests.support.pages import demo_document, jsonl
from tests.support.runs import TRIALS

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

FAILING = 5  # of TRIALS
FLAKY_KEY, REGRESSION_KEY = "4", "2"  # the run page's status keys


@pytest.fixture
def team(user, make_user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    Membership.objects.create(team=team, user=make_user("bob"), role=Role.EDITOR)
    ReviewLabel.objects.create(team=team, name="wrong tool", key="w", colour="red")
    return team


@pytest.fixture
def submission(team, user):
    suite = services.create_suite(team, demo_document(), user)
    return create_submission(suite, user, io.BytesIO(jsonl(TRIALS)), label="model-a")


def work_through(page, live_server, queue, *, first_key: str) -> list[int]:
    """Decide every run of the reviewer's share by keyboard: the first with the label and
    ``first_key``, the others flaky. Returns the runs in the order decided."""
    page.goto(f"{live_server.url}{queue.get_absolute_url()}")
    page.get_by_role("button", name="Review my runs").click()
    decided = []
    for n in range(FAILING):
        page.wait_for_url(re.compile(rf"/runs/\d+/\?queue={queue.pk}$"))
        decided.append(int(re.search(r"/runs/(\d+)/", page.url).group(1)))
        panel = page.locator("#review")
        expect(panel.get_by_role("heading", name="Blind review")).to_be_visible()
        # Nothing shown as decided: neither the other reviewer's decision nor the run's.
        expect(panel.locator("[aria-pressed=true], input:checked")).to_have_count(0)
        if n == 0:
            page.keyboard.press("w")
            expect(panel.get_by_role("checkbox", name=re.compile("wrong tool"))).to_be_checked()
        current = page.url
        page.keyboard.press(first_key if n == 0 else FLAKY_KEY)
        page.wait_for_url(lambda url, current=current: url != current)
    page.wait_for_url(f"{live_server.url}{queue.get_absolute_url()}")
    return decided


def test_two_reviewers_finish_a_double_blind_queue_and_see_kappa(
    browser, page, live_server, user, password, submission
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}?verdict=fail")
    page.get_by_role("link", name="Make a review queue of these runs").click()
    page.get_by_label("Name").fill("Blind failures")
    page.get_by_label("bob").check()
    page.get_by_label("Double-blind").check()
    page.get_by_role("button", name="Make the queue").click()
    queue = ReviewQueue.objects.get()
    assert queue.double_blind
    page.wait_for_url(f"{live_server.url}{queue.get_absolute_url()}")

    first_runs = work_through(page, live_server, queue, first_key=FLAKY_KEY)
    assert len(set(first_runs)) == FAILING
    assert BlindDecision.objects.filter(reviewer=user).exclude(status="").count() == FAILING
    agreement = page.locator("#agreement")
    expect(agreement).to_contain_text("Shown when both reviewers have decided every run")
    assert not Review.objects.exists()  # nothing reaches the runs' reviews yet

    # Bob, in a browser of his own, decides the first run differently: regression.
    context = browser.new_context()
    bob = context.new_page()
    sign_in(bob, live_server, "bob", password)
    assert sorted(work_through(bob, live_server, queue, first_key=REGRESSION_KEY)) == sorted(
        first_runs
    )
    kappa = bob.locator("#agreement [data-kappa=status]")
    # 4 of 5 agree; ann always said flaky, so chance agreement is 0.8 too: κ = 0.
    expect(kappa).to_have_text("0.00")
    expect(bob.locator("#agreement")).to_contain_text("agreeing on 80%")
    # The label: both on the first run, nobody elsewhere: full agreement.
    expect(bob.locator('#agreement [data-kappa="wrong tool"]')).to_have_text("1.00")
    expect(bob.locator("#resolve")).to_have_count(0)  # not his to resolve
    context.close()

    # Four agreements are the runs' reviews; the maker resolves the fifth.
    assert Review.objects.filter(status="flaky").count() == FAILING - 1
    page.reload()
    dispute = page.locator("#resolve .dispute")
    expect(dispute).to_have_count(1)
    expect(dispute).to_contain_text("regression")
    dispute.get_by_role("button", name="Take bob's").click()
    expect(page.locator("#resolve")).to_have_count(0)
    expect(page.locator(".queue-finished")).to_contain_text("all 5 runs in it are resolved")
    assert Review.objects.get(run_id=first_runs[0]).status == "regression"


def test_a_labels_key_toggles_it_on_the_run_page(page, live_server, user, password, submission):
    run = submission.runs.filter(result__verdict="fail").first()
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    button = page.locator("#review [data-label-key=w]")
    expect(button).to_have_attribute("aria-pressed", "false")
    expect(button.locator("kbd")).to_have_text("w")
    page.keyboard.press("w")
    expect(page.locator("#review [data-label-key=w]")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#review .review-state .label-chip")).to_have_text("wrong tool")
    page.keyboard.press("w")
    expect(page.locator("#review [data-label-key=w]")).to_have_attribute("aria-pressed", "false")
    assert not Review.objects.get(run=run).labels.exists()
