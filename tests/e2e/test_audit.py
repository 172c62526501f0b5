"""The audit in a real browser (docs/audit.md#where-it-shows): the suite page's "Suite
health" panel with τ-bench's airline suite loaded, at 1400 and 800 px, each problem leading
to its case; and the case editor auditing the case as it is typed."""

import json

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from cases.tau_bench import proposed_roles, read_results, suite_document
from cases.tool_catalog import tools_from_any
from tests.support.builders import DEMO
from tests.support.tau_bench import RESULTS_FILE, TOOLS_FILE

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Whether the page is wider than the window: something would be cut or scroll sideways.
OVERFLOWS = "document.documentElement.scrollWidth > document.documentElement.clientWidth"


@pytest.fixture
def team(user):
    team = Team.objects.create(name="Airline", slug="airline")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return team


@pytest.fixture
def airline(team, user):
    """τ-bench's airline tasks as the import makes them, with τ-bench's tool catalog."""
    with RESULTS_FILE.open("rb") as file:
        results = read_results(file)
    read_only = [role.name for role in proposed_roles(results.tools, []) if role.read_only]
    document = suite_document(results, name="τ-bench airline", read_only=read_only)
    document["tools"] = tools_from_any(json.loads(TOOLS_FILE.read_text())).tools
    return services.create_suite(team, document, user)


@pytest.mark.parametrize("width", [1400, 800])
def test_the_panel_counts_the_idle_passes_and_opens_their_cases(
    page, live_server, user, password, airline, width, tmp_path
):
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/suites/{airline.pk}/")
    panel = page.locator("#health")
    expect(panel.get_by_role("heading", name="Suite health 19 cases flagged")).to_be_visible()
    expect(panel.locator(".audit-count.passes_idle strong")).to_have_text("19")
    expect(panel.locator(".audit-count.contradiction strong")).to_have_text("0")
    group = panel.locator("details.audit-group.passes_idle")
    group.locator("summary").click()
    expect(group.locator(".audit-problems li")).to_have_count(19)
    assert not page.evaluate(OVERFLOWS)
    panel.screenshot(path=tmp_path / f"health-{width}.png")
    group.get_by_role("link", name="12", exact=True).click()
    page.wait_for_url(f"**/suites/{airline.pk}/cases/*/")
    expect(page.locator("#case-audit .audit-problem.passes_idle")).to_contain_text(
        "a run with no calls and an empty final text passes it"
    )


def test_the_editor_audits_the_case_as_it_is_typed(page, live_server, user, password, team):
    suite = services.create_suite(team, DEMO, user)
    case = suite.cases.get(key="weather-two-cities")
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/suites/{suite.pk}/cases/{case.pk}/")
    audit = page.locator("#case-audit")
    expect(audit.locator(".audit-clean")).to_contain_text("Audit: no problems")
    page.locator("input[name='exp-0-max']").fill("1")
    expect(audit.locator(".audit-problem.contradiction")).to_contain_text(
        "get_weather was called 2 times; expected at most once"
    )
    page.locator("input[name='exp-0-max']").fill("2")
    expect(audit.locator(".audit-clean")).to_be_visible()
    page.get_by_role("button", name="+ Expected call").click()  # the editor is swapped
    expect(audit.locator(".audit-problem")).to_have_count(0)
    page.locator("input[name='call-2-name']").fill("get_weather")
    expect(page.locator("#case-audit .audit-problem.contradiction")).to_contain_text(
        "called 3 times"
    )
