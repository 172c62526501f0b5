"""Every page runs without an error in the browser's console (docs/review.md#on-every-page):
each page the app serves to a browser, found from its URL patterns and opened with real data
(τ-bench's airline runs, a tool catalog, two submissions, known failures, queues), at 1400 and
800 px, logs no script error, no failed load and no Content Security Policy violation; and
neither do the run page's keys nor the case editor's matcher pickers."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from playwright.sync_api import expect

from .browsing import sign_in
from .every_page import PAGES, SIGNED_OUT, addresses

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NOT_PAGES = {
    # answers to forms and buttons (POST), each leading back to a page above
    "team_member_add", "team_member", "team_label_add", "team_label_edit", "team_label_delete",
    "team_price_edit", "team_price_delete",
    "suite_copy", "suite_replace_confirm", "suite_version_tag", "case_delete", "case_try",
    "editor_validate", "case_audit", "suite_import_confirm", "suite_import_bfcl_confirm",
    "suite_tools_confirm", "submission_rescore", "submission_retry", "submission_delete",
    "submission_review", "submission_apply_decisions", "run_review", "run_rescore",
    "queue_assign", "queue_hand_on", "queue_delete", "queue_decide", "queue_resolve", "logout",
    "otlp_traces", "otlp_logs", "suite_token_new", "suite_token_revoke",
    # files to download
    "suite_export", "submission_csv", "submission_junit", "schema",
    # fragments that the pages above load after themselves
    "submission_progress", "suite_flaky", "suite_known_failures", "suite_health",
    "run_end_state",
    # pages of a failed upload of τ-bench's results alone (tests/e2e/test_tau_bench_suite.py)
    "submission_tau_bench",
    # probes for the orchestrator
    "healthz", "readyz",
}  # fmt: skip
# The REST API (JSON for clients; its page is swagger-ui) and Django's admin.
NOT_PAGE_NAMESPACES = {"api", "admin"}


def url_names(resolver: URLResolver | None = None) -> set[str]:
    names = set()
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace not in NOT_PAGE_NAMESPACES:
                names |= url_names(pattern)
        elif isinstance(pattern, URLPattern) and pattern.name:
            names.add(pattern.name)
    return names


@pytest.fixture
def console(page) -> list[str]:
    """What the page logs as an error (a script error, a load that failed, a Content Security
    Policy violation) or throws, with the address it was at."""
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(f"{page.url}: {m.text}"))
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    return errors


def test_every_url_is_a_page_opened_here_or_said_not_to_be_one():
    unlisted = url_names() - set(PAGES) - set(SIGNED_OUT) - NOT_PAGES
    stale = (set(PAGES) | set(SIGNED_OUT) | NOT_PAGES) - url_names()
    assert (unlisted, stale) == (set(), set())


def test_every_page_logs_no_error_at_1400_and_800_px(
    page, live_server, user, password, world, console
):
    for width in (1400, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.context.clear_cookies()
        for url in addresses(world, SIGNED_OUT):
            assert page.goto(f"{live_server.url}{url}").ok, url
            page.wait_for_load_state("networkidle")
        sign_in(page, live_server, user.username, password)
        for url in addresses(world, PAGES):
            response = page.goto(f"{live_server.url}{url}")
            assert response.ok, (url, response.status)
            page.wait_for_load_state("networkidle")  # the parts loaded after the page
    assert console == []


def test_the_run_pages_keys_and_the_editors_matcher_pickers_log_no_error(
    page, live_server, user, password, world, console
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{world['run'].get_absolute_url()}")
    panel = page.locator("#review")
    # A comment box resized by the reviewer carries a style attribute into the swap.
    page.locator("#review-comment").evaluate("box => { box.style.height = '8rem'; }")
    page.keyboard.press("3")
    expect(panel.locator("dd .review-status")).to_have_text("expectation wrong")
    page.locator("#review-comment").evaluate("box => { box.style.height = '9rem'; }")
    page.keyboard.press("a")
    expect(panel.locator("dl.review-state")).to_contain_text(user.username)
    page.keyboard.press("?")
    expect(page.locator("#triage-keys")).to_be_visible()
    page.keyboard.press("Escape")

    page.goto(f"{live_server.url}{world['case'].get_absolute_url()}")
    args = page.locator("textarea[name='call-0-required_args']")
    field = page.locator("#call-0 .argfield[data-param='payment_id']")
    field.get_by_label("payment_id matcher").select_option("")
    expect(args).not_to_have_value(re.compile("payment_id"))
    field.get_by_label("payment_id matcher").select_option("text")
    field.get_by_label("payment_id value").fill("gift_card_8190333")
    expect(args).to_have_value(re.compile(r'"payment_id": \{ "\$text": \{ "value": "gift_card_'))
    field.get_by_label("payment_id matcher").select_option("regex")
    field.get_by_label("payment_id value").fill(r"gift_card_\d+")
    expect(args).to_have_value(re.compile(r'"payment_id": \{ "\$regex": "gift_card_'))
    flights = page.locator("#call-0").get_by_label("flights matcher")
    for kind in ("subset", "exact", ""):
        flights.select_option(kind)
    assert console == []
