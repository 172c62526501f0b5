"""The Content Security Policy in Chromium: the pages a user works in, with their htmx requests
(a row added in the case editor, an upload, a filter change, a review status change), run with
no violation reported, as a ``securitypolicyviolation`` event or a console error; and an inline
script injected into a page is refused, which shows the watch works."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission

from .browsing import round_trip, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DEMO = json.loads((Path(__file__).parents[2] / "cases/demo/assistant.suite.json").read_text())
RUNS = [
    {"case": "greeting", "batches": [], "final_text": "Hello!"},
    {"case": "greeting", "batches": [], "final_text": "Bye"},
    {
        "case": "weather-two-cities",
        "batches": [[{"name": "get_weather", "arguments": {"city": "Paris"}}]],
        "final_text": "Paris only",
    },
]
RUN_FILE = "".join(json.dumps(run) + "\n" for run in RUNS)


@pytest.fixture
def suite(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return services.create_suite(team, DEMO, user)


@pytest.fixture
def submission(suite, user):
    made = create_submission(suite, user, io.BytesIO(RUN_FILE.encode()), label="baseline")
    made.refresh_from_db()
    return made


def test_the_pages_and_their_htmx_requests_run_under_the_policy(
    page, live_server, user, password, suite, submission, violations, tmp_path
):
    sign_in(page, live_server, user.username, password)
    assert page.evaluate("htmx.config.allowEval") is False
    assert page.evaluate("htmx.config.includeIndicatorStyles") is False

    page.get_by_role("link", name="Teams").click()
    page.get_by_role("link", name="Agents").click()
    page.goto(f"{live_server.url}{suite.get_absolute_url()}")
    page.locator("h1").wait_for()
    page.wait_for_load_state("networkidle")  # the parts loaded after the page

    # The case editor: a row added (an htmx round trip that re-renders the editor).
    case = suite.cases.get(key="weather-two-cities")
    page.goto(f"{live_server.url}{case.get_absolute_url()}")
    round_trip(page, lambda: page.get_by_role("button", name="+ Expected call").click())
    page.locator("input[name='call-2-name']").fill("get_forecast")

    # An upload through the form (htmx, with its progress bar), landing on the results.
    run_file = tmp_path / "runs.jsonl"
    run_file.write_text(RUN_FILE)
    page.goto(f"{live_server.url}/suites/{suite.pk}/upload/")
    page.get_by_label("Drop a run file here").set_input_files(run_file)
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url("**/submissions/*/")
    page.locator("#runs tbody tr").first.wait_for()

    # The submission page: a filter changed (htmx swaps the table).
    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    with page.expect_response(lambda response: "verdict=fail" in response.url):
        page.get_by_label("Verdict").select_option("fail")
    expect(page.locator("#runs tbody tr")).to_have_count(2)

    # The run page: a review status changed (htmx swaps the review panel).
    run = submission.runs.get(line=2)
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    page.locator("#review button[name=status][value=regression]").click()
    page.locator("#review .review-status.regression").first.wait_for()

    page.goto(f"{live_server.url}/")
    page.locator("h1").wait_for()
    assert violations == []


def test_an_inline_script_is_refused(page, live_server, user, password, violations):
    """The control: the watch above does see a violation when there is one."""
    sign_in(page, live_server, user.username, password)
    page.evaluate(
        """() => {
            const script = document.createElement("script");
            script.textContent = "window.__ran = true";
            document.body.append(script);
            document.body.insertAdjacentHTML("beforeend", '<p style="color: red">styled</p>');
        }"""
    )
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve))")  # violations reported
    assert page.evaluate("window.__ran") is None
    assert any("script-src" in violation for violation in violations), violations
    assert any("style-src" in violation for violation in violations), violations
