"""A new user's path: sign in, create a suite, write a case with two expected calls and three
kinds of expectation, meet inline validation, try a run, save, and find the new version in the
history; then share the suite with a teammate who can only view it."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from cases.models import Membership, Role, Team, User

from .browsing import round_trip, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def team(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    return team


def test_a_new_user_builds_a_suite_in_the_browser(page, live_server, user, password, team):
    sign_in(page, live_server, user.username, password)
    page.get_by_role("link", name="New suite").click()
    page.get_by_label("Name", exact=True).fill("Weather agent")
    page.get_by_label("Description").fill("Checks the weather tools.")
    page.get_by_role("button", name="Create suite").click()
    page.get_by_role("heading", name="Weather agent").wait_for()

    page.get_by_role("link", name="New case").click()
    page.get_by_label("Key", exact=True).fill("two-cities")
    page.get_by_label("Prompt", exact=True).fill("Weather in Paris and Tokyo?")
    for _ in range(2):
        round_trip(page, lambda: page.get_by_role("button", name="+ Expected call").click())
    page.locator("input[name='call-0-name']").fill("get_weather")
    page.locator("input[name='call-1-name']").fill("get_weather")
    page.locator("textarea[name='call-0-required_args']").fill('{"city": "Paris"')  # malformed
    page.locator("#call-0-required_args-live").get_by_text("invalid JSON").wait_for()
    page.locator("textarea[name='call-0-required_args']").fill('{"city": "Paris"}')
    page.locator("textarea[name='call-1-required_args']").fill(
        '{"city": {"$one_of": ["Tokyo", "東京"]}}'
    )

    for _ in range(3):
        round_trip(page, lambda: page.get_by_role("button", name="+ Expectation").click())
    round_trip(
        page, lambda: page.locator("select[name='exp-0-type']").select_option("tool_call_count")
    )
    page.locator("input[name='exp-0-tool']").fill("get_weather")
    page.locator("input[name='exp-0-max']").fill("2")
    round_trip(
        page, lambda: page.locator("select[name='exp-1-type']").select_option("final_text_matches")
    )
    page.locator("input[name='exp-1-regex']").fill("(?P<temp>\\d+")  # bad regex
    page.locator("#exp-1-regex-live").get_by_text("RE2 cannot compile").wait_for()
    page.locator("input[name='exp-1-regex']").fill("\\d+°C")
    expect(page.locator("#exp-1-regex-live")).to_have_text("")
    round_trip(
        page, lambda: page.locator("select[name='exp-2-type']").select_option("did_not_call_tool")
    )
    page.locator("input[name='exp-2-tool']").fill("book_flight")

    run = {
        "batches": [[
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_weather", "arguments": {"city": "東京"}},
        ]],
        "final_text": "Paris 18°C, Tokyo 22°C",
    }  # fmt: skip
    page.get_by_label("Run to try").fill(json.dumps(run))
    page.get_by_role("button", name="Score it").click()
    result = page.locator("#try-result")
    result.locator(".verdict.pass").wait_for()
    assert "called get_weather at most 2 times" in result.inner_text()

    page.get_by_role("button", name="Add case").click()
    page.get_by_text("Saved case two-cities as version 2.").wait_for()
    page.get_by_role("link", name="Weather agent").click()
    history = page.locator("section.card", has_text="History")
    history.get_by_role("link", name="v2").wait_for()
    assert "Added case two-cities" in history.inner_text()


def test_a_viewer_teammate_can_read_and_export_but_not_edit(
    browser, live_server, user, password, team
):
    from cases import services

    suite = services.create_suite(team, {"name": "Shared", "cases": [{"key": "a"}]}, user)
    User.objects.create_user("vic", password=password)
    admin = browser.new_page()
    sign_in(admin, live_server, user.username, password)
    admin.goto(f"{live_server.url}/teams/agents/")
    admin.get_by_label("Username").fill("vic")
    admin.get_by_role("button", name="Add member").click()
    admin.get_by_role("combobox", name="Role of vic").wait_for()

    viewer = browser.new_page()
    sign_in(viewer, live_server, "vic", password)
    viewer.get_by_role("link", name="Shared").click()
    assert viewer.get_by_role("link", name="New case").count() == 0
    with viewer.expect_download() as download:
        viewer.get_by_role("link", name="Export", exact=True).click()
    assert json.loads(Path(download.value.path()).read_text())["name"] == "Shared"
    viewer.goto(f"{live_server.url}/suites/{suite.pk}/cases/{suite.cases.get().pk}/")
    viewer.get_by_text("read-only").wait_for()
    response = viewer.request.post(f"{live_server.url}/suites/{suite.pk}/cases/new/")
    assert response.status == 403
    admin.close()
    viewer.close()
