"""The runs table's keys in a real browser: on the submission page j and k move through the
runs table and Enter opens the run; filtering keeps the table in view, not the panels above it;
a failing run's reason opens to list every failure."""

from __future__ import annotations

import io
import json
import re

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DEMO = "cases/demo/assistant.suite.json"
PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
TOKYO = {"name": "get_weather", "arguments": {"city": "Tokyo"}}


@pytest.fixture
def submission(user):
    """Forty runs of the weather case, every third failing, each with a reward."""
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    with open(DEMO) as demo:
        suite = services.create_suite(team, json.load(demo), user)
    runs = [
        {
            "case": "weather-two-cities",
            "batches": [[PARIS]] if i % 3 == 0 else [[PARIS, TOKYO]],
            "final_text": "Paris only" if i % 3 == 0 else "Tokyo",
            "meta": {"reward": 0.0 if i % 3 == 0 else 1.0},
        }
        for i in range(40)
    ]
    lines = "".join(json.dumps(run) + "\n" for run in runs).encode()
    made = create_submission(suite, user, io.BytesIO(lines), label="model-a")  # scored here
    made.refresh_from_db()
    return made


def test_j_and_k_move_through_the_rows_and_enter_opens_the_run(
    page, live_server, user, password, submission
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}?verdict=fail")
    page.get_by_text("14 runs match").wait_for()
    rows = page.locator("#runs tbody tr")
    page.keyboard.press("j")
    expect(rows.nth(0)).to_have_class("current")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(rows.nth(2)).to_have_class("current")
    expect(rows.nth(0)).not_to_have_class("current")
    page.keyboard.press("k")
    expect(rows.nth(1)).to_have_class("current")
    expect(rows.nth(1).locator("[data-run-link]")).to_be_focused()
    # Typing in a filter is text, not a move.
    page.get_by_label("Case", exact=True).press("j")
    expect(rows.nth(1)).to_have_class("current")
    page.get_by_label("Case", exact=True).press("Escape")
    page.locator("h1").click()  # the focus back on the page
    page.keyboard.press("j")
    expect(rows.nth(2)).to_have_class("current")
    run_id = rows.nth(2).locator("[data-run-link]").get_attribute("href").split("/")[4]
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/runs/{run_id}/\?verdict=fail$"))


def section_top(page) -> float:
    return page.locator("#runs-section").bounding_box()["y"]


def test_filtering_keeps_the_table_in_view(page, live_server, user, password, submission):
    page.set_viewport_size({"width": 1280, "height": 720})
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    page.get_by_text("40 runs", exact=True).wait_for()
    assert section_top(page) > 300  # below the panels: the table is out of view
    page.get_by_label("Verdict").select_option("fail")
    page.wait_for_url(re.compile(r"verdict=fail"))
    page.get_by_text("14 runs match").wait_for()
    # The section's top at the top of the view (as near as the page's end lets it come).
    for _ in range(50):  # the swap scrolls once it has settled
        if -2 < section_top(page) < 40:
            break
        page.wait_for_timeout(100)
    assert -2 < section_top(page) < 40
    expect(page.locator("#runs thead")).to_be_in_viewport()

    # The reward as a column, from the column choices; the address keeps it.
    page.get_by_text("Columns").click()
    page.get_by_label("reward", exact=True).check()
    page.wait_for_url(re.compile(r"columns=reward"))
    expect(page.locator("#runs th.meta-column")).to_have_text("reward")
    expect(page.locator("#runs td.meta-column").first).to_have_text("0.0")

    # A failing run's line opens to every failure with its reason.
    first = page.locator("#runs tbody tr").first
    expect(first.locator("summary")).to_contain_text(
        "1 call of get_weather, credited to another expected call (#0); none left for this one"
    )
    first.locator("summary").click()
    expect(first.locator("ul.reasons li")).to_have_count(2)
    expect(first.locator("ul.reasons li").nth(1)).to_contain_text("final text contains")
