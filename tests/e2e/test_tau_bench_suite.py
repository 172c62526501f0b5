"""τ-bench's results file, uploaded as it is to a new, empty suite, fails; its page offers the
file's tasks as the suite's cases; the preview shows them and the read-only tools; saving
scores the same upload against them (docs/review.md#a-suite-from-τ-benchs-results). At 1400
and 800 px nothing runs past the page's width."""

from __future__ import annotations

import re

import pytest

from cases import services
from cases.models import Membership, Role, Team
from scoring.models import Status, Submission
from tests.support import tau_bench

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WIDTH = "document.documentElement.scrollWidth"


@pytest.fixture
def empty_suite(user):
    team = Team.objects.create(name="Airline", slug="airline")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return services.new_suite(team, user, name="tau-bench airline")


@pytest.mark.parametrize("width", [1400, 800])
def test_a_failed_upload_becomes_a_suite_in_one_step_and_is_scored(
    page, live_server, user, password, empty_suite, violations, width
):
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{empty_suite.get_absolute_url()}")
    page.get_by_role("link", name="Upload runs").click()
    page.get_by_label("Drop a run file here").set_input_files(tau_bench.RESULTS_FILE)
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"), timeout=60_000)
    page.get_by_text("None of the 200 runs is of a case in version 1").wait_for()
    assert page.evaluate(WIDTH) <= width

    page.get_by_role("link", name="make a suite of them").click()
    page.get_by_text("50 tasks").first.wait_for()
    assert page.get_by_label("get_user_details").is_checked()
    assert not page.get_by_label("book_reservation").is_checked()
    assert page.locator("li[data-case]").count() == 50
    assert page.evaluate(WIDTH) <= width

    page.get_by_role("button", name="Save the cases and score this upload").click()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    page.locator(".status.done").wait_for(timeout=60_000)
    submission = Submission.objects.get()
    assert (submission.status, submission.passed, submission.failed) == (Status.DONE, 82, 118)
    assert "scored against version 2" in page.locator(".pagehead").inner_text()
    assert page.evaluate(WIDTH) <= width
    assert violations == []
