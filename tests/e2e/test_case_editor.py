"""The case editor in a real browser: rows without reloads, inline validation, problems
beside their fields, trying a run, and a stale edit refused."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team

from .browsing import round_trip, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DEMO_SUITE = Path(__file__).resolve().parents[2] / "cases" / "demo" / "assistant.suite.json"


@pytest.fixture
def suite(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return services.create_suite(team, json.loads(DEMO_SUITE.read_text()), user)


def open_case(page, live_server, suite, key):
    case = suite.cases.get(key=key)
    page.goto(f"{live_server.url}/suites/{suite.pk}/cases/{case.pk}/")
    return case


def test_rows_are_added_moved_and_removed_without_a_page_reload(
    page, live_server, user, password, suite
):
    sign_in(page, live_server, user.username, password)
    open_case(page, live_server, suite, "weather-two-cities")
    page.evaluate("window.marker = 'same page'")
    page.get_by_role("button", name="+ Expected call").click()
    page.locator("input[name='call-2-name']").fill("get_forecast")
    page.get_by_role("button", name="Move expected call 2 up").click()
    names = page.locator("input[name^='call-'][name$='-name']")
    expect(page.locator("input[name='call-1-name']")).to_have_value("get_forecast")
    assert [names.nth(i).input_value() for i in range(3)] == [
        "get_weather",
        "get_forecast",
        "get_weather",
    ]
    page.get_by_role("button", name="Remove expected call 0").click()
    expect(page.locator('[id^="call-"].rowcard')).to_have_count(2)
    assert page.evaluate("window.marker") == "same page"
    assert page.locator("input[name='call-0-name']").input_value() == "get_forecast"


def test_arguments_and_regexes_are_validated_as_you_type(page, live_server, user, password, suite):
    sign_in(page, live_server, user.username, password)
    open_case(page, live_server, suite, "weather-two-cities")
    page.locator("textarea[name='call-0-required_args']").fill('{"unit": {"$one_of": "C"}}')
    live = page.locator("#call-0-required_args-live")
    live.get_by_text("unit.$one_of: must be a non-empty list of alternatives").wait_for()
    page.locator("textarea[name='call-0-required_args']").fill('{"unit": {"$one_of": ["C"]}}')
    expect(page.locator("#call-0-required_args-live")).to_have_text("")
    round_trip(
        page, lambda: page.locator("select[name='exp-1-type']").select_option("final_text_matches")
    )
    regex = page.locator("input[name='exp-1-regex']")
    regex.fill("(?<=x)y")
    page.locator("#exp-1-regex-live").get_by_text("RE2 supports no lookaround").wait_for()


def test_saving_shows_every_problem_beside_its_field_and_saves_nothing(
    page, live_server, user, password, suite
):
    sign_in(page, live_server, user.username, password)
    case = open_case(page, live_server, suite, "delete-if-exists")
    page.locator("input[name='call-0-name']").fill("")
    page.get_by_label("after the result of #0").uncheck()
    page.locator("textarea[name='call-1-required_args']").fill('{"path": {"$regex": "("}}')
    page.get_by_role("button", name="Save as a new version").click()
    card = page.locator("#call-1")
    card.get_by_text("path.$regex: RE2 cannot compile this pattern").wait_for()
    page.locator("#call-0").get_by_text("This field is required.").wait_for()
    assert suite.versions.count() == 1
    case.refresh_from_db()
    assert case.revision == 1


def test_a_saved_change_is_a_new_version_and_trying_a_run_scores_the_unsaved_case(
    page, live_server, user, password, suite
):
    sign_in(page, live_server, user.username, password)
    open_case(page, live_server, suite, "weather-two-cities")
    page.locator("textarea[name='call-1-required_args']").fill(
        '{"city": {"$text": {"value": "TOKYO", "ignore": ["case"]}}}'
    )
    run = {
        "batches": [
            [
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "get_weather", "arguments": {"city": "tokyo"}},
            ]
        ],
        "final_text": "Tokyo is sunny",
    }
    page.get_by_label("Run to try").fill(json.dumps(run))
    page.get_by_role("button", name="Score it").click()
    result = page.locator("#try-result")
    result.locator(".verdict.pass").wait_for()
    assert suite.versions.count() == 1  # trying saves nothing
    page.get_by_role("button", name="Save as a new version").click()
    page.get_by_text("Saved case weather-two-cities as version 2.").wait_for()
    assert suite.versions.count() == 2
    saved = suite.versions.get(number=2).document["cases"][1]["expected_calls"][1]["required_args"]
    assert saved == {"city": {"$text": {"value": "TOKYO", "ignore": ["case"]}}}


def test_trying_an_openai_transcript_shows_each_failed_predicate_with_its_reason(
    page, live_server, user, password, suite
):
    sign_in(page, live_server, user.username, password)
    open_case(page, live_server, suite, "delete-if-exists")

    def tool_call(call_id, name):
        arguments = '{"path": "notes.txt"}'
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }

    messages = [
        {"role": "user", "content": "Delete notes.txt if it is there."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("a", "file_exists"), tool_call("b", "delete_file")],
        },
        {"role": "assistant", "content": "<img src=x onerror=alert(1)> Deleted."},
    ]
    page.get_by_label("Run to try").fill(json.dumps(messages))
    page.get_by_role("button", name="Score it").click()
    result = page.locator("#try-result")
    result.locator(".verdict.fail").wait_for()
    assert "the same batch as file_exists (#0)" in result.inner_text()
    page.get_by_text("The run: 2 calls in 1 batch").click()
    assert "<img src=x onerror=alert(1)>" in result.inner_text()  # shown as text, not markup
    assert result.locator("img").count() == 0


def test_a_stale_edit_is_refused_with_a_way_to_reload(browser, live_server, user, password, suite):
    first, second = browser.new_page(), browser.new_page()
    for page in (first, second):
        sign_in(page, live_server, user.username, password)
        open_case(page, live_server, suite, "greeting")
    first.get_by_label("Title").fill("Greeting, first edit")
    first.get_by_role("button", name="Save as a new version").click()
    first.get_by_text("Saved case greeting").wait_for()
    second.get_by_label("Title").fill("Greeting, second edit")
    second.get_by_role("button", name="Save as a new version").click()
    second.get_by_text("Someone saved this case since you opened it").wait_for()
    assert suite.cases.get(key="greeting").title == "Greeting, first edit"
    second.get_by_role("link", name="Reload their version").click()
    second.wait_for_load_state()
    assert second.get_by_label("Title").input_value() == "Greeting, first edit"
    first.close()
    second.close()
