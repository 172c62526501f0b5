"""Every page of ours passes axe-core and fits 400 px
(docs/review.md#keyboard-and-screen-readers): each page of every_page.py, opened with real
data (τ-bench's airline runs, two submissions, known failures, queues), has no critical or
serious axe-core violation, and at 400 px wide nothing scrolls sideways. Swagger UI's own page
is not ours: it is only checked for its language and its way back to Casebook."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from .browsing import sign_in
from .every_page import PAGES, SIGNED_OUT, addresses

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

BLOCKING = {"critical", "serious"}
NOT_OURS = {"swagger-ui"}


def blocking_violations(page) -> list[str]:
    """Each critical or serious violation on the page, with the elements it is found on."""
    results = Axe().run(page)
    return [
        f"{page.url}: {violation['id']} ({violation['impact']}) on "
        + ", ".join(" ".join(node["target"]) for node in violation["nodes"][:5])
        for violation in results.response["violations"]
        if violation["impact"] in BLOCKING
    ]


def sideways(page) -> list[str]:
    """The page, when it is wider than the window (so it scrolls sideways)."""
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    return [f"{page.url}: {width[0]} px wide in {width[1]}"] if width[0] > width[1] else []


def visit_every_page(page, live_server, user, password, world, check) -> list[str]:
    found = []
    ours = {name: make for name, make in PAGES.items() if name not in NOT_OURS}
    page.context.clear_cookies()
    for url in addresses(world, SIGNED_OUT):
        page.goto(f"{live_server.url}{url}")
        found += check(page)
    sign_in(page, live_server, user.username, password)
    for url in addresses(world, ours):
        response = page.goto(f"{live_server.url}{url}")
        assert response.ok, (url, response.status)
        page.wait_for_load_state("networkidle")  # the parts loaded after the page
        found += check(page)
    return found


def test_no_page_of_ours_has_a_critical_or_serious_axe_violation(
    page,
    live_server,
    user,
    password,
    world,
):
    page.set_viewport_size({"width": 1400, "height": 900})
    found = visit_every_page(page, live_server, user, password, world, blocking_violations)
    assert not found, "\n".join(found)


def test_no_page_scrolls_sideways_at_400_px(
    page,
    live_server,
    user,
    password,
    world,
):
    page.set_viewport_size({"width": 400, "height": 800})
    found = visit_every_page(page, live_server, user, password, world, sideways)
    assert not found, "\n".join(found)


def test_the_api_docs_name_their_language_and_lead_back(page, live_server, user, password):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.get_by_role("link", name="Back to Casebook").click()
    page.wait_for_url(f"{live_server.url}/")
