"""Reviewing runs in a real browser: a reviewer opens a failing run from a filtered runs table,
reads why it failed, decides, comments and moves to the next failure without touching the
mouse; then an editor turns a recorded call into an expectation, re-scores, and sees the run
pass."""

from __future__ import annotations

import io
import json
import re

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import Result, Review, ReviewEvent
from tests.support.pages import demo_document

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}, "result": {"temp_c": 18}}
TOKYO = {"name": "get_weather", "arguments": {"city": "Tokyo"}}
TOKIO = {"name": "get_weather", "arguments": {"city": "Tokio"}, "result": "unknown city"}
RUNS = [
    {"case": "weather-two-cities", "batches": [[PARIS, TOKYO]], "final_text": "Tokyo"},  # pass
    {"case": "weather-two-cities", "batches": [[PARIS, TOKIO]], "final_text": "Tokyo?"},  # fail
    {"case": "greeting", "batches": [], "final_text": "Hello!"},  # pass
    {"case": "weather-two-cities", "batches": [[PARIS]], "final_text": "Paris, Tokyo"},  # fail
]


@pytest.fixture
def submission(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    suite = services.create_suite(team, demo_document(), user)
    lines = "".join(json.dumps(run) + "\n" for run in RUNS).encode()
    # Outside any transaction: the tasks run (eagerly) as the upload commits.
    made = create_submission(suite, user, io.BytesIO(lines), label="model-a")
    made.refresh_from_db()
    return made


def test_a_reviewer_triages_failures_with_the_keyboard(
    page, live_server, user, password, submission
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}?verdict=fail")
    page.locator("#runs tbody tr").first.get_by_role("link").first.click()
    first = submission.runs.get(line=2)
    page.wait_for_url(re.compile(rf"/runs/{first.pk}/\?verdict=fail$"))

    # Why it failed: the expected Tokyo call beside the call it was nearest, with the diff.
    missed = page.locator(".tl-row.near")
    assert "nearest to #1, not matched" in missed.locator(".tl-call.recorded").inner_text()
    diff = missed.locator("table.argdiff tbody tr")
    assert diff.count() == 1
    assert diff.first.inner_text().split("\t")[:3] == ["city", '"Tokyo"', '"Tokio"']
    assert page.locator(".tl-row.pair").count() == 1  # Paris, joined to its call

    # Decide, assign, comment: keys only.
    page.locator("body").press("2")
    page.locator("#review .review-status.regression").first.wait_for()
    page.keyboard.press("a")
    page.locator("#review dd", has_text=user.username).wait_for()
    page.keyboard.press("c")
    assert page.evaluate("document.activeElement.id") == "review-comment"
    page.keyboard.type("Tokio is a typo the tool should reject")
    page.keyboard.press("Enter")
    page.locator("#review div.comment", has_text="Tokio is a typo").wait_for()
    # keys are commands again: the focus is on the status set (docs/review.md)
    expect(page.locator("#review .status-buttons [aria-pressed=true]")).to_be_focused()
    review = Review.objects.get(run=first)
    assert (review.status, review.assignee) == ("regression", user)
    kinds = list(ReviewEvent.objects.filter(run=first).values_list("kind", flat=True))
    assert kinds == ["status", "assignee", "comment"]

    # The key list, then on to the next failure of the filter.
    page.keyboard.press("?")
    assert page.locator("#triage-keys").is_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    following = submission.runs.get(line=4)
    page.wait_for_url(re.compile(rf"/runs/{following.pk}/\?verdict=fail$"))
    assert page.get_by_text("No next failure").is_visible()
    page.keyboard.press("k")
    page.wait_for_url(re.compile(rf"/runs/{first.pk}/\?verdict=fail$"))


def test_setting_a_status_can_open_the_next_failure_by_itself(
    page, live_server, user, password, submission
):
    sign_in(page, live_server, user.username, password)
    first = submission.runs.get(line=2)
    page.goto(f"{live_server.url}{first.get_absolute_url()}?verdict=fail")
    page.get_by_label("then open the next failure").check()
    page.locator("body").press("4")
    following = submission.runs.get(line=4)
    page.wait_for_url(re.compile(rf"/runs/{following.pk}/\?verdict=fail$"))
    assert Review.objects.get(run=first).status == "flaky"
    # The choice is remembered on the next run.
    assert page.get_by_label("then open the next failure").is_checked()


def test_an_editor_makes_a_recorded_call_an_expectation_and_the_run_turns_green(
    page, live_server, user, password, submission
):
    run = submission.runs.get(line=2)
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    assert page.locator("h1 .verdict").inner_text() == "fail"

    tokio = page.locator(f"#run-{run.pk}-call-0-1")
    tokio.get_by_role("link", name="Make this an expectation").click()
    form = tokio.locator(".promote form")
    form.wait_for()
    assert form.get_by_label("Expected call").input_value() == "0"  # the first get_weather
    form.get_by_label("Expected call").select_option("1")
    arguments = form.get_by_label("Required arguments")
    assert json.loads(arguments.input_value()) == {"city": "Tokio"}
    arguments.fill('{"city": {"$one_of": ["Tokyo", "Tokio"]')  # a typo first
    form.get_by_role("button", name="Save as a new version").click()
    tokio.locator(".promote .field-error").wait_for()
    arguments = tokio.get_by_label("Required arguments")
    arguments.fill('{"city": {"$one_of": ["Tokyo", "Tokio"]}}')
    tokio.get_by_role("button", name="Save as a new version").click()
    tokio.get_by_text("Saved as version 2").wait_for()

    tokio.get_by_role("button", name="Re-score this submission against version 2").click()
    page.get_by_text("Re-scored against version 2.").wait_for()
    assert page.locator("h1 .verdict").inner_text() == "pass"
    assert page.locator(".tl-row.pair").count() == 2
    assert Result.objects.get(run=run).verdict == "pass"
