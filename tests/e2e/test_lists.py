"""Earlier results and the list pages in a real browser: re-scoring against another version
keeps the earlier result (switcher, its page, the chart's two points) and the run page
offers the newer version after a reload; case keys in natural order; compare's unchanged
cases and trials on one side only; the "My work" page from the navigation; no horizontal
overflow at 800 px on the list pages (the runs table's review chips in view) and breadcrumbs
from the library."""

from __future__ import annotations

import io
import json
import re

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import PredicateResult
from scoring.results.filtersets import RunFilterSet
from scoring.review import decisions, queues
from tests.support.pages import demo_document
from tests.support.runs import DELETE_FAIL, GREETING_FAIL, GREETING_PASS, TRIALS, WEATHER_FAIL

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def jsonl(runs) -> io.BytesIO:
    return io.BytesIO("".join(json.dumps(r) + "\n" for r in runs).encode())


def numbered(word: str) -> dict:
    """task-1, task-2 and task-10, passing when the final text holds ``word``."""
    cases = [
        {"key": f"task-{n}", "expectations": [{"type": "final_text_contains", "text": word}]}
        for n in (10, 2, 1)
    ]
    return {"schema": "casebook.suite/1", "name": "numbered", "cases": cases}


@pytest.fixture
def team(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return team


@pytest.fixture
def numbered_submission(team, user):
    """Scored against v1 (task-1 and task-2 pass); v2 passes task-10 alone."""
    suite = services.create_suite(team, numbered("ok"), user)
    runs = [
        {"case": "task-10", "batches": [], "final_text": "fine"},
        {"case": "task-2", "batches": [], "final_text": "ok"},
        {"case": "task-1", "batches": [], "final_text": "ok"},
    ]
    submission = create_submission(suite, user, jsonl(runs), label="agent")  # scored here
    services.replace_contents(suite, numbered("fine"), user, "another word")
    submission.refresh_from_db()
    return submission


def test_re_scoring_keeps_the_earlier_result_and_the_offer_survives_a_reload(
    page, live_server, user, password, numbered_submission
):
    submission = numbered_submission
    sign_in(page, live_server, user.username, password)
    run = submission.runs.get(case_key="task-10")
    run_url = f"{live_server.url}/submissions/{submission.pk}/runs/{run.pk}/"
    page.goto(run_url)
    offer = page.get_by_role("button", name="Re-score against version 2")
    expect(offer).to_be_visible()
    page.reload()  # offered on every visit, not only right after a promotion
    expect(offer).to_be_visible()
    offer.click()
    expect(page.get_by_text("Re-scored against version 2.")).to_be_visible()
    expect(page.get_by_role("button", name="Re-score against version 2")).to_have_count(0)

    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    switcher = page.get_by_role("navigation", name="Results per version scored")
    expect(switcher).to_contain_text("v1 66.7%")
    expect(switcher.locator("[aria-current=page]")).to_contain_text("v2 33.3%")
    switcher.get_by_role("link", name=re.compile(r"^v1")).click()
    expect(page.get_by_role("heading", name="Against version 1")).to_be_visible()
    expect(page.locator(".counts")).to_contain_text("Pass rate66.7%")
    rows = page.locator("table.earlier-runs tbody tr")
    # In file order, as the runs table lists them first.
    assert rows.locator("code.case-key").all_inner_texts() == ["task-10", "task-2", "task-1"]
    assert rows.locator(".verdict").all_inner_texts() == ["fail", "pass", "pass"]
    page.get_by_role("link", name="Fail", exact=True).click()
    expect(rows.locator("code.case-key")).to_have_text(["task-10"])

    page.goto(f"{live_server.url}{submission.suite.get_absolute_url()}")
    points = page.locator("svg.chart a.point")
    expect(points).to_have_count(2)
    assert points.nth(0).get_attribute("href") == f"/submissions/{submission.pk}/versions/1/"
    assert points.nth(1).get_attribute("href") == f"/submissions/{submission.pk}/"


def test_case_keys_sort_naturally_in_the_runs_table(
    page, live_server, user, password, numbered_submission
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{numbered_submission.get_absolute_url()}")
    keys = page.locator("#runs tbody code.case-key")
    page.locator("#runs th", has_text="Case").get_by_role("link").click()
    expect(page.locator("#runs th[aria-sort=ascending]")).to_have_text(re.compile("Case"))
    assert keys.all_inner_texts() == ["task-1", "task-2", "task-10"]
    page.locator("#runs th", has_text="Case").get_by_role("link").click()
    expect(page.locator("#runs th[aria-sort=descending]")).to_have_text(re.compile("Case"))
    assert keys.all_inner_texts() == ["task-10", "task-2", "task-1"]


def test_compare_shows_unchanged_cases_and_flags_one_sided_trials(
    page, live_server, user, password, team
):
    suite = services.create_suite(team, numbered("ok"), user)
    ok = {"case": "task-1", "batches": [], "final_text": "ok"}
    bad = {"case": "task-1", "batches": [], "final_text": "no"}
    two = {"case": "task-2", "batches": [], "final_text": "ok"}
    baseline = create_submission(suite, user, jsonl([ok, ok, ok, bad, two]), label="before")
    candidate = create_submission(suite, user, jsonl([bad, ok, ok, ok, two, two]), label="after")
    sign_in(page, live_server, user.username, password)
    page.goto(
        f"{live_server.url}/suites/{suite.pk}/compare/"
        f"?baseline={baseline.pk}&candidate={candidate.pk}"
    )
    tabs = page.get_by_role("navigation", name="Filter by change")
    expect(tabs.get_by_role("link", name="Regressed 0")).to_be_visible()
    expect(tabs.get_by_role("link", name="Unchanged 1")).to_be_visible()
    task_1 = page.locator("tr.change-row", has_text="task-1")
    expect(task_1.locator("span.change")).to_have_text("unchanged")
    expect(task_1).to_contain_text("3/4")
    task_2 = page.locator("tr.change-row", has_text="task-2")
    expect(task_2.locator("span.change")).to_have_text("still passing")
    expect(task_2.locator(".one-side")).to_have_text("1 trial on one side only")


def test_my_work_from_the_navigation_to_my_next_run(page, live_server, user, password, team):
    suite = services.create_suite(team, demo_document(), user)
    submission = create_submission(suite, user, jsonl(TRIALS), label="agent")
    queue = queues.build_queue(
        submission, "Failures", user, filters=RunFilterSet({"verdict": "fail"}), reviewers=[user]
    )
    decisions.assign(submission.runs.filter(case_key="greeting"), user, user)
    sign_in(page, live_server, user.username, password)
    page.get_by_role("navigation").get_by_role("link", name="My work").click()
    expect(page.get_by_role("heading", name="My work")).to_be_visible()
    mine = page.locator("table.my-queues tr", has_text="Failures")
    expect(mine).to_contain_text("5 of 5")
    expect(page.locator("table.my-runs tbody tr")).to_have_count(
        submission.runs.filter(case_key="greeting").count()
    )
    mine.get_by_role("button", name="Next run").click()
    page.wait_for_url(re.compile(rf"/runs/\d+/\?queue={queue.pk}$"))


@pytest.fixture
def busy_submission(team, user):
    """The demo suite (tagged cases) with failing runs whose reasons are long, and a queue."""
    suite = services.create_suite(team, demo_document(), user)
    runs = [*TRIALS, WEATHER_FAIL, GREETING_FAIL, DELETE_FAIL, GREETING_PASS] * 3
    submission = create_submission(suite, user, jsonl(runs), label="a model with a long name")
    decisions.assign(submission.runs.all(), user, user)
    queue = queues.build_queue(
        submission, "Everything failing", user, filters=RunFilterSet({"verdict": "fail"})
    )
    # Made from a failure group by cause, named by someone fond of long words.
    failed = PredicateResult.objects.filter(submission=submission)
    cause = failed.exclude(cause_tool="").first()
    queues.build_queue(
        submission,
        f"airline/{cause.cause_tool}/{cause.cause_kind}/" * 3,
        user,
        filters=RunFilterSet({"cause": f"{cause.cause_kind}:{cause.cause_tool}", "sort": "-case"}),
    )
    return submission, queue


NARROW = {"width": 800, "height": 900}


def test_list_pages_do_not_overflow_at_800_px_and_have_breadcrumbs(
    browser, live_server, user, password, busy_submission
):
    submission, queue = busy_submission
    suite = submission.suite
    context = browser.new_context(viewport=NARROW)
    page = context.new_page()
    sign_in(page, live_server, user.username, password)
    pages = [
        "/",
        "/my-work/",
        f"/suites/{suite.pk}/",
        submission.get_absolute_url(),
        f"/submissions/{submission.pk}/failures/",
        f"/submissions/{submission.pk}/queues/",
        f"/queues/{queue.pk}/",
        f"/suites/{suite.pk}/compare/?baseline={submission.pk}&candidate={submission.pk}",
        f"/suites/{suite.pk}/versions/1/",
    ]
    for path in pages:
        page.goto(f"{live_server.url}{path}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 800, f"{path} is {width} px wide"
        if path != "/":
            crumbs = page.locator(".crumbs a")
            assert crumbs.first.inner_text() == "Library", path
    # The runs table fits its box: every review chip is in view, none scrolled out.
    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    box = page.locator("#runs .table-scroll")
    assert box.evaluate("e => e.scrollWidth <= e.clientWidth")
    right = box.bounding_box()["x"] + box.bounding_box()["width"]
    chips = page.locator("#runs tbody .review")
    assert chips.count() == submission.runs.count()
    for i in range(chips.count()):
        chip = chips.nth(i).bounding_box()
        assert chip["x"] + chip["width"] <= right
    # Pages under a submission name every step up to it.
    page.goto(f"{live_server.url}/queues/{queue.pk}/")
    assert page.locator(".crumbs a").all_inner_texts() == [
        "Library",
        "Agents",
        suite.name,
        f"a model with a long name #{submission.pk}",
        "Review queues",
    ]
    context.close()
