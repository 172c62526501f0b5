"""What runs cost, in a real browser (docs/api.md#usage, docs/formats.md#usage): the
submission page's panel of totals, per-run median and 95th percentile, cost per passing
run and the two histograms with their tables; the run page's header figures, naming a model
without a price; at 1400 and 800 px, without a console error."""

from __future__ import annotations

import io
import json
import re

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import Run
from tests.support.otlp_fixtures import PRODUCER_SUITE, collector_lines

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def completion(model: str) -> dict:
    return {
        "object": "chat.completion",
        "model": model,
        "choices": [{"message": {"role": "assistant", "content": "The answer is 10."}}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 34},
    }


@pytest.fixture
def submission(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    suite = services.create_suite(team, PRODUCER_SUITE, user)
    lines = [*collector_lines("openllmetry-openai"), *collector_lines("vercel-ai")]
    unpriced = {"case": "add", "messages": [{"role": "user", "content": "?"},
                                            completion("house-model-7")]}  # fmt: skip
    body = b"".join(json.dumps(line).encode() + b"\n" for line in [*lines, unpriced])
    return create_submission(suite, user, io.BytesIO(body), filename="traces.jsonl")


@pytest.mark.parametrize("width", [1400, 800])
def test_the_submission_page_shows_what_its_runs_cost(page, live_server, user, password,
                                                       submission, width):  # fmt: skip
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    panel = page.get_by_role("region", name="What the runs cost")
    expect(panel).to_contain_text("3 runs recorded usage")
    row = panel.get_by_role("row", name="Input tokens")
    expect(row).to_contain_text("1,400")  # two calls of 50 in each trace, and 1,200
    expect(panel.get_by_text("No price is known for")).to_contain_text("house-model-7")
    charts = panel.get_by_role("img")
    expect(charts).to_have_count(2)
    panel.get_by_text("As a table").first.click()
    expect(panel.get_by_role("table").nth(1)).to_be_visible()
    assert errors == []


def test_the_run_page_header_gives_tokens_calls_time_and_cost(page, live_server, user,
                                                              password, submission):  # fmt: skip
    sign_in(page, live_server, user.username, password)
    run = Run.objects.get(submission=submission, model_names="\ngpt-4o-2024-08-06\n",
                          line=1)  # fmt: skip
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    figures = page.get_by_label("What the run cost")
    expect(figures).to_contain_text("100 tokens in, 40 out")
    expect(figures).to_contain_text("2 model calls")
    expect(figures).to_contain_text("$")
    unpriced = Run.objects.get(submission=submission, model_names="\nhouse-model-7\n")
    page.goto(f"{live_server.url}{unpriced.get_absolute_url()}")
    expect(page.get_by_label("What the run cost")).to_contain_text(
        "cost unknown: no price for house-model-7"
    )


@pytest.mark.parametrize("width", [1400, 800])
def test_the_timeline_says_what_each_model_turn_and_tool_call_took(page, live_server, user,
                                                                   password, submission,
                                                                   width):  # fmt: skip
    """docs/review.md#run-page: a real trace's turns ("50 in · 20 out · 55 ms") and calls
    (their tools' times), and the time in tools beside the wall time."""
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, user.username, password)
    traced = Run.objects.filter(submission=submission, model_names="\ngpt-4o-2024-08-06\n")
    run = traced.order_by("seq").last()  # the Vercel AI SDK's trace
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    turns = page.locator(".turn-figures")
    expect(turns).to_have_count(2)
    for k in range(2):
        expect(turns.nth(k)).to_have_text(re.compile(r"^50 in · 20 out · [0-9.]+ m?s$"))
    took = page.locator(".tl-call.recorded .tl-took")
    expect(took).to_have_count(2)
    expect(took.first).to_have_text(re.compile(r"^[0-9.]+ m?s$"))
    expect(page.get_by_label("What the run cost")).to_contain_text(" in tools)")
    box = took.first.bounding_box()
    assert box is not None
    assert box["x"] + box["width"] <= width  # not pushed off the page
    assert errors == []


@pytest.mark.parametrize("width", [1400, 800])
def test_a_team_admin_sets_a_model_price_and_a_bad_one_is_named(page, live_server, user,
                                                                password, width):  # fmt: skip
    """docs/formats.md#cost: the team's Model prices page, from the team's page."""
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.set_viewport_size({"width": width, "height": 900})
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{team.get_absolute_url()}")
    page.get_by_role("link", name="the team's model prices").click()
    adding = page.get_by_role("region", name="Add a price")
    adding.get_by_label("Model").fill("<b>house-llama</b>")
    adding.get_by_label("Input, $ per million tokens", exact=True).fill("0.2")
    adding.get_by_label("Output, $ per million tokens").fill("0.6")
    adding.get_by_label("Cached input, $ per million tokens (empty: as input)").fill("-1")
    page.evaluate("document.querySelectorAll('form').forEach(f => f.noValidate = true)")
    adding.get_by_role("button", name="Add price").click()
    refused = page.get_by_role("region", name="Add a price")
    expect(refused.get_by_role("alert")).to_contain_text("greater than or equal to 0")
    cached = refused.get_by_label("Cached input, $ per million tokens (empty: as input)")
    expect(cached).to_have_attribute("aria-invalid", "true")
    cached.fill("")
    refused.get_by_role("button", name="Add price").click()
    listed = page.get_by_role("region", name="The team's prices")
    expect(listed.get_by_role("rowheader")).to_have_text("<b>house-llama</b>")  # as text
    expect(listed).to_contain_text("as input")
    assert errors == []
