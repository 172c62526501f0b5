"""Comparing submissions in a real browser: a viewer compares two submissions of a suite,
picking the baseline on the candidate's page; the regression is listed first, the class
filter narrows the table in place (and lands in the URL), and a row opens both runs side by
side, where the other trial of the candidate is one click away. The suite page charts the
pass rates."""

from __future__ import annotations

import io
import json
import re

import pytest

from cases import services
from cases.models import Membership, Role, Team, User
from scoring.ingest.pipeline import create_submission
from tests.support.pages import demo_document
from tests.support.runs import DELETE_FAIL, GREETING_PASS, WEATHER_FAIL, WEATHER_PASS

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def jsonl(runs) -> io.BytesIO:
    return io.BytesIO("".join(json.dumps(r) + "\n" for r in runs).encode())


@pytest.fixture
def submissions(user):
    team = Team.objects.create(name="Assistants", slug="assistants")
    Membership.objects.create(team=team, user=user, role=Role.VIEWER)
    owner = User.objects.create_user("owner")  # the uploader, an editor
    Membership.objects.create(team=team, user=owner, role=Role.EDITOR)
    suite = services.create_suite(team, demo_document(), owner)
    # Scored in this process: the tasks are eager and there is no transaction to wait for.
    baseline = create_submission(
        suite, owner, jsonl([WEATHER_PASS, GREETING_PASS, DELETE_FAIL]), label="model-a"
    )
    candidate = create_submission(
        suite,
        owner,
        jsonl([WEATHER_FAIL, WEATHER_PASS, GREETING_PASS, DELETE_FAIL]),
        label="model-b",
    )
    return suite, baseline, candidate


def test_a_viewer_compares_two_submissions_and_opens_a_regression_side_by_side(
    page, live_server, user, password, submissions
):
    _, baseline, candidate = submissions
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{candidate.get_absolute_url()}")
    page.get_by_role("link", name="Compare with…").click()

    # The candidate is this submission; the baseline offered is the one uploaded before.
    page.get_by_label("Baseline").select_option(str(baseline.pk))
    assert page.get_by_label("Candidate").input_value() == str(candidate.pk)
    page.get_by_role("button", name="Compare").click()
    page.wait_for_url(re.compile(rf"baseline={baseline.pk}&candidate={candidate.pk}"))

    rows = page.locator("table.comparison tbody tr")
    assert rows.count() == 3
    first = rows.first
    assert first.locator("code.case-key").inner_text() == "weather-two-cities"
    assert first.locator("span.change").inner_text() == "regressed"
    # Trial 0 passed and now fails; the candidate's trial 1 has no counterpart to compare.
    assert first.locator("td.delta").inner_text() == "\u2212100.0 pts"
    assert first.locator(".one-side").inner_text() == "1 trial on one side only"
    assert "1/2" in first.inner_text()

    # The class filter swaps the table in place and keeps the choice in the URL.
    page.locator(".change-tabs").get_by_role("link", name=re.compile("^Still passing")).click()
    page.wait_for_url(re.compile("change=still_passing"))
    assert page.locator("table.comparison code.case-key").all_inner_texts() == ["greeting"]
    page.go_back()
    page.wait_for_url(re.compile(r"candidate=\d+$"))
    page.locator("table.comparison tbody tr").nth(2).wait_for()

    page.locator("table.comparison tbody tr").first.get_by_role("link", name="side by side").click()
    page.wait_for_url(re.compile(r"/compare/runs/\d+/\d+/$"))
    baseline_side, candidate_side = page.locator(".compare-side").all()
    assert "model-a" in baseline_side.locator("h2").inner_text()
    assert "model-b" in candidate_side.locator("h2").inner_text()
    # The candidate's failing trial: Tokyo was never asked for.
    assert candidate_side.locator(".report .verdict").inner_text() == "fail"
    assert candidate_side.locator(".tl-call.expected.missed").count() == 1
    assert baseline_side.locator(".report .verdict").inner_text() == "pass"
    assert baseline_side.locator(".tl-call.expected.matched").count() == 2

    # Its other trial passed: the picker shows it beside the same baseline run.
    candidate_side.get_by_role("navigation", name="Trials of the candidate").get_by_role(
        "link", name="1"
    ).click()
    page.wait_for_load_state()
    candidate_side = page.locator(".compare-side").nth(1)
    assert candidate_side.locator(".report .verdict").inner_text() == "pass"
    assert "model-a" in page.locator(".compare-side").first.locator("h2").inner_text()


def test_the_suite_page_charts_the_pass_rates_and_links_each_point(
    page, live_server, user, password, submissions
):
    suite, baseline, candidate = submissions
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{suite.get_absolute_url()}")
    # The flaky cases arrive after the page: the weather case went from pass to split trials.
    flaky = page.locator("table.flaky code.case-key")
    flaky.first.wait_for()
    assert flaky.all_inner_texts() == ["weather-two-cities"]
    points = page.locator("svg.chart a.point")
    assert points.count() == 2
    assert points.first.locator("title").text_content().startswith(f"model-a #{baseline.pk}")
    points.nth(1).click()
    page.wait_for_url(f"{live_server.url}{candidate.get_absolute_url()}")
