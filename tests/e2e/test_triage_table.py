"""The runs table in a real browser: an editor opens a scored submission, goes to a failure
group, narrows it with the filter form (the address follows, and the back button brings back
both the table and the form as they were), and sets a status on the whole group at once."""

from __future__ import annotations

import io
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import Review

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DEMO = "cases/demo/assistant.suite.json"
PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
TOKYO = {"name": "get_weather", "arguments": {"city": "Tokyo"}}
GROUP = 'get_weather(city="Tokyo")'


def runs() -> list[dict]:
    """Three trials of each: weather passing once and failing twice (the group), greeting
    passing twice and failing once."""
    weather_pass = {
        "case": "weather-two-cities",
        "batches": [[PARIS, TOKYO]],
        "final_text": "Tokyo",
    }
    weather_fail = {"case": "weather-two-cities", "batches": [[PARIS]], "final_text": "Paris only"}
    hello = {"case": "greeting", "batches": [], "final_text": "Hello!"}
    bye = {"case": "greeting", "batches": [], "final_text": "Bye"}
    return [weather_pass, weather_fail, weather_fail, hello, hello, bye]


@pytest.fixture
def submission(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    with open(DEMO) as demo:
        suite = services.create_suite(team, json.load(demo), user)
    lines = "".join(json.dumps(run) + "\n" for run in runs()).encode()
    made = create_submission(suite, user, io.BytesIO(lines), label="model-a")  # scored here
    made.refresh_from_db()
    return made


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def table_cases(page) -> list[str]:
    return page.locator("#runs tbody code.case-key").all_inner_texts()


def test_an_editor_filters_to_a_failure_group_and_sets_its_status(
    page, live_server, user, password, submission
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    page.get_by_text("6 runs", exact=True).wait_for()

    # The most common failures lead to their runs, in the table, one click away.
    failures = page.locator("section.card", has_text="Most common failures")
    failures.get_by_role("link", name=GROUP).click()
    page.wait_for_url(re.compile(r"predicate="))
    assert query(page) == {"predicate": [GROUP]}
    page.get_by_text("2 runs match").wait_for()
    assert table_cases(page) == ["weather-two-cities"] * 2
    assert page.locator("#run-filters .chip").inner_text().startswith("failing")

    # Narrowing it further swaps the table in place and puts the filter in the address.
    page.get_by_label("Text in the final answer").fill("nothing like this")
    page.wait_for_url(re.compile(r"text=nothing"))
    page.get_by_text("No runs match.").wait_for()
    assert query(page) == {"predicate": [GROUP], "text": ["nothing like this"]}

    # Back: the table and the form are again those of the group alone.
    page.go_back()
    page.wait_for_url(re.compile(r"\?predicate=[^&]+$"))
    page.get_by_text("2 runs match").wait_for()
    assert page.get_by_label("Text in the final answer").input_value() == ""
    assert table_cases(page) == ["weather-two-cities"] * 2
    # ... and forward again: the filter typed is back in the form.
    page.go_forward()
    page.wait_for_url(re.compile(r"text=nothing"))
    page.get_by_text("No runs match.").wait_for()
    assert page.get_by_label("Text in the final answer").input_value() == "nothing like this"
    page.go_back()
    page.get_by_text("2 runs match").wait_for()

    # The whole group at once: the form says how many runs, asks, and says what changed.
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_label("Review the 2 runs of this filter").select_option("regression")
    page.get_by_label("Assign to").select_option(label=user.username)
    page.get_by_role("button", name="Apply to 2 runs").click()
    page.get_by_text("Status “regression”: 2 of 2 runs changed.").wait_for()
    assert page.locator("#runs tbody .review").all_inner_texts() == ["regression"] * 2
    reviewed = Review.objects.filter(run__submission=submission)
    assert (
        sorted(reviewed.values_list("run__case_key", "status", "assignee__username"))
        == [("weather-two-cities", "regression", user.username)] * 2
    )

    # The review filter finds them; a verdict change keeps the group in the address.
    page.get_by_label("Review status").select_option("regression")
    page.wait_for_url(re.compile(r"review=regression"))
    page.get_by_text("2 runs match").wait_for()
    page.get_by_label("Verdict").select_option("pass")
    page.wait_for_url(re.compile(r"verdict=pass"))
    page.get_by_text("No runs match.").wait_for()
    assert query(page) == {"predicate": [GROUP], "review": ["regression"], "verdict": ["pass"]}


# The fastest reviewer there can be: a filter chosen in the form the bulk review's answer
# brings, the moment it is on the page (a mutation observer's callback runs right after the
# script that swapped it in, before any timer). htmx binds a swapped element's triggers when
# the swap settles; were that a timer later, this change would go nowhere.
CHOOSE_REVIEW_FILTER_ON_SWAP = """
new MutationObserver((changes, observer) => {
  const select = document.getElementById("filter-review");
  if (!document.querySelector("#runs-section .message.success") || !select) return;
  observer.disconnect();
  select.value = "regression";
  select.dispatchEvent(new Event("change", {bubbles: true}));
}).observe(document.getElementById("runs-section"), {childList: true, subtree: true});
"""


def test_a_filter_chosen_as_soon_as_the_table_is_swapped_in_is_applied(
    page, live_server, user, password, submission
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}?predicate={GROUP}")
    page.get_by_text("2 runs match").wait_for()
    page.evaluate(CHOOSE_REVIEW_FILTER_ON_SWAP)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_label("Review the 2 runs of this filter").select_option("regression")
    page.get_by_role("button", name="Apply to 2 runs").click()
    page.wait_for_url(re.compile(r"review=regression"))
    expect(page.locator("#runs tbody .review")).to_have_text(["regression"] * 2)
    assert query(page) == {"predicate": [GROUP], "review": ["regression"]}


def test_sorting_and_the_run_link_keep_the_filters(page, live_server, user, password, submission):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}?verdict=fail")
    page.get_by_text("3 runs match").wait_for()
    assert table_cases(page) == ["weather-two-cities", "weather-two-cities", "greeting"]
    page.get_by_role("link", name="Case", exact=True).click()
    page.wait_for_url(re.compile(r"sort=case"))
    expect(page.locator("#runs tbody code.case-key").first).to_have_text("greeting")
    assert table_cases(page) == ["greeting", "weather-two-cities", "weather-two-cities"]
    assert query(page) == {"verdict": ["fail"], "sort": ["case"]}
    assert page.get_by_label("Verdict").input_value() == "fail"
    page.locator("#runs tbody code.case-key").first.click()
    page.wait_for_url(re.compile(r"/runs/\d+/\?verdict=fail&sort=case$"))
