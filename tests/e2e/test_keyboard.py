"""The reviewer's pages by keyboard alone (docs/review.md#keyboard-and-screen-readers): after
each kind of swap the focus lands where it should, visibly, and the change is written to the
page's one live region; skip links reach the runs and the review; j / k / ? work on the
submission, queue and run pages; run links are named in full. τ-bench's airline runs."""

from __future__ import annotations

import io
import re

import pytest
from playwright.sync_api import expect

from cases import services
from scoring.ingest.pipeline import create_submission
from tests.support import tau_bench

from .browsing import round_trip, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_NAME = re.compile(r"^Case \d+, trial \d+: (pass|fail|error|not scored)$")


def open_page(page, live_server, user, password, path: str) -> None:
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{path}")


def focused(page):
    return page.locator(":focus")


def test_sorting_and_filtering_the_runs_table_focus_its_count_and_say_it(
    page, live_server, user, password, world
):
    open_page(page, live_server, user, password, world["second"].get_absolute_url())
    announcer = page.locator("#announcer")
    page.locator("#runs th").get_by_role("link", name="Case").focus()
    page.keyboard.press("Enter")
    expect(focused(page)).to_have_class(re.compile(r"\bruns-count\b"))
    expect(focused(page)).to_have_text("40 runs")
    expect(announcer).to_have_text("Runs table: all 40")
    # the focus shows: an outline drawn around it
    assert focused(page).evaluate("e => getComputedStyle(e).outlineStyle") == "solid"

    page.get_by_label("Verdict").select_option("pass")
    expect(announcer).to_have_text(re.compile(r"^Runs table: \d+ match(es)?$"))
    # the same count, in other words: the page never holds the same words twice
    shown = page.locator(".runs-count").text_content()
    assert re.findall(r"\d+", shown) == re.findall(r"\d+", announcer.text_content())


def test_a_review_change_focuses_the_pressed_status_and_says_what_changed(
    page, live_server, user, password, world
):
    open_page(page, live_server, user, password, world["run"].get_absolute_url())
    announcer = page.locator("#announcer")
    page.keyboard.press("2")
    expect(focused(page)).to_have_attribute("aria-pressed", "true")
    expect(focused(page)).to_contain_text("regression")
    expect(announcer).to_have_text("Status set to regression")
    assert focused(page).evaluate("e => getComputedStyle(e).outlineStyle") == "solid"

    page.keyboard.press("w")
    expect(announcer).to_have_text("Label wrong tool put on")
    page.keyboard.press("a")
    expect(announcer).to_have_text(f"Assigned to {user.username}")
    page.keyboard.press("c")
    page.keyboard.type("argument was right")
    page.keyboard.press("Enter")
    expect(announcer).to_have_text("Comment posted")
    expect(focused(page)).to_contain_text("regression")


def test_skip_links_reach_the_runs_and_the_review(page, live_server, user, password, world):
    open_page(page, live_server, user, password, world["second"].get_absolute_url())
    page.keyboard.press("Tab")
    expect(focused(page)).to_have_text("Skip to content")
    page.keyboard.press("Tab")
    expect(focused(page)).to_have_text("Skip to runs")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")  # the next stop is inside the runs section
    assert focused(page).evaluate("e => !!e.closest('#runs-section')")

    page.goto(f"{live_server.url}{world['run'].get_absolute_url()}")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(focused(page)).to_have_text("Skip to review")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert focused(page).evaluate("e => !!e.closest('#review')")


def test_j_k_and_question_mark_work_on_the_submission_and_queue_pages(
    page, live_server, user, password, world
):
    for path in (world["second"].get_absolute_url(), world["queue"].get_absolute_url()):
        open_page(page, live_server, user, password, path)
        page.keyboard.press("j")
        expect(focused(page)).to_have_attribute("aria-label", RUN_NAME)
        first = focused(page).get_attribute("aria-label")
        page.keyboard.press("j")
        assert focused(page).get_attribute("aria-label") != first
        page.keyboard.press("k")
        expect(focused(page)).to_have_attribute("aria-label", first)
        page.keyboard.press("?")
        keys = page.locator("#triage-keys")
        expect(keys).to_be_visible()
        expect(keys).to_contain_text("next / previous run")
        page.keyboard.press("Escape")
        expect(keys).to_be_hidden()
        page.get_by_role("button", name="? Keys").click()  # and shown by a button too
        expect(keys).to_be_visible()
        page.context.clear_cookies()


def test_run_links_are_named_in_full(page, live_server, user, password, world):
    open_page(page, live_server, user, password, world["run"].get_absolute_url())
    trials = page.get_by_role("navigation", name="Trials of this case").get_by_role("link")
    expect(trials.first).to_have_accessible_name(RUN_NAME)
    page.goto(f"{live_server.url}{world['second'].get_absolute_url()}")
    expect(page.get_by_role("link", name="Case 4, trial 0: fail")).to_be_visible()


def test_the_case_editor_focuses_the_added_row_and_the_first_invalid_field(
    page, live_server, user, password, world
):
    open_page(page, live_server, user, password, world["case"].get_absolute_url())
    calls = page.locator("#editor .rowcard[id^='call-']")
    before = calls.count()
    add = page.get_by_role("button", name="+ Expected call")
    add.focus()
    round_trip(page, lambda: page.keyboard.press("Enter"))
    expect(calls).to_have_count(before + 1)
    expect(focused(page)).to_have_accessible_name(f"Tool of expected call {before}")

    # the new call has no tool: saving fails, and the focus goes to the field that says why
    save = page.get_by_role("button", name=re.compile("^Save"))
    save.focus()
    round_trip(page, lambda: page.keyboard.press("Enter"))
    expect(focused(page)).to_have_attribute("aria-invalid", "true")
    error = page.locator(f"#{focused(page).get_attribute('aria-describedby').split()[-1]}")
    expect(error).to_have_attribute("role", "alert")
    expect(error).not_to_be_empty()


def test_parts_that_load_themselves_leave_the_focus_alone(page, live_server, user, password, world):
    # the suite page loads its health, flaky cases and known failures after itself
    open_page(page, live_server, user, password, world["suite"].get_absolute_url())
    page.wait_for_load_state("networkidle")
    expect(page.locator("#flaky-cases table, #flaky-cases p").first).to_be_visible()
    assert page.evaluate("document.activeElement === document.body")
    assert page.evaluate("window.scrollY") == 0


def test_paging_the_runs_table_focuses_its_count_and_says_the_page(
    page, live_server, user, password
):
    team = services.create_team("Airline", user)
    suite = services.create_suite(team, tau_bench.suite_document(prefix=""), user)
    content = tau_bench.RESULTS_FILE.read_bytes()  # 200 runs: four pages of 50
    submission = create_submission(suite, user, io.BytesIO(content), filename="tau.json")
    open_page(page, live_server, user, password, submission.get_absolute_url())
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Next →").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#announcer")).to_have_text("Runs table: all 200, page 2 of 4")
    expect(focused(page)).to_have_text("200 runs")
    page.keyboard.press("Tab")  # on from the count, into the page it heads
    assert focused(page).evaluate("e => !!e.closest('#runs')")
