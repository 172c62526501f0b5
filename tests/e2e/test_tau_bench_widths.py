"""τ-bench's airline runs at 1400 and 800 px: what the pages say is shown whole
(docs/review.md#on-every-page). The runs table's reason keeps the value the run got, the
side-by-side page gives each call room, the compare pickers show whole submission names, and
every timeline sets the expected call left of (or above) the recorded one."""

from __future__ import annotations

import io
import re

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import Run
from tests.support import tau_bench

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TASK = "4"  # trial 0 fails: payment_id "credit_card_7407366" where "gift_card_8190333" was expected
GOT = 'got "credit_card_7407366"'
# As long as labels get: the pickers must still show it whole.
LABEL = "gpt-4o-2024-08-06 temperature 0.7 seed 42"


@pytest.fixture
def submissions(user):
    """Two submissions of τ-bench's results file, uploaded as it is (case keys: task ids)."""
    team = Team.objects.create(name="Airline", slug="airline")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    suite = services.create_suite(team, tau_bench.suite_document(prefix=""), user)
    content = tau_bench.RESULTS_FILE.read_bytes()
    # Outside any transaction: the tasks run (eagerly) as each upload commits.
    return [
        create_submission(suite, user, io.BytesIO(content), filename="tau.json", label=label)
        for label in (LABEL, "second")
    ]


def open_at(page, live_server, user, password, width: int, path: str) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{path}")


# The box of the text inside the element, and the boxes it must lie in: the element's own and
# every ancestor's up to the table cell (any of which could cut it).
TEXT_AND_CLIPS = """(element, text) => {
    const node = [...element.childNodes].find((n) => n.nodeValue?.includes(text));
    const range = document.createRange();
    const start = node.nodeValue.indexOf(text);
    range.setStart(node, start);
    range.setEnd(node, start + text.length);
    const clips = [];
    for (let up = element; up && up.tagName !== "TR"; up = up.parentElement) {
        clips.push(up.getBoundingClientRect().toJSON());
    }
    return [[...range.getClientRects()].map((r) => r.toJSON()), clips];
}"""


@pytest.mark.parametrize("width", [1400, 800])
def test_the_runs_tables_reason_shows_what_the_run_got(
    page, live_server, user, password, submissions, width
):
    submission = submissions[1]
    open_at(page, live_server, user, password, width, submission.get_absolute_url())
    key = page.locator("code.case-key", has_text=re.compile(f"^{TASK}$"))
    row = page.locator("#runs tbody tr", has=key).first
    reason = row.locator("td.failing .reason")
    expect(reason).to_contain_text(GOT)
    lines, clips = reason.evaluate(TEXT_AND_CLIPS, GOT)
    for line in lines:
        for clip in clips:
            assert clip["left"] - 1 <= line["left"]
            assert line["right"] <= clip["right"] + 1
    assert page.evaluate("document.documentElement.scrollWidth") == width


def test_side_by_side_at_1400_px_gives_each_call_the_width_of_its_column(
    page, live_server, user, password, submissions
):
    baseline, candidate = (
        Run.objects.get(submission=s, case_key=TASK, trial=0) for s in submissions
    )
    open_at(page, live_server, user, password, 1400, f"/compare/runs/{baseline.pk}/{candidate.pk}/")
    side = page.locator(".compare-side").first
    column = side.bounding_box()["width"]
    calls = side.locator(".tl-call")
    assert calls.count() > 4
    for box in (calls.nth(i).bounding_box() for i in range(calls.count())):
        assert box["width"] > 0.8 * column
    # Stacked in the one order: the expected call above what stands for the recorded one.
    missed = side.locator(".tl-row.near").first
    expected = missed.locator(".tl-call.expected").bounding_box()
    beside = missed.locator(".tl-side").bounding_box()
    assert expected["y"] + expected["height"] <= beside["y"] + 1


@pytest.mark.parametrize("width", [1400, 800])
def test_compare_from_a_submission_offers_a_pair_and_shows_whole_names(
    page, live_server, user, password, submissions, width
):
    first, second = submissions
    open_at(page, live_server, user, password, width, first.get_absolute_url())
    page.get_by_role("link", name="Compare with…").click()
    # The first submission: it is the baseline, the one uploaded after it the candidate.
    expect(page.get_by_label("Baseline")).to_have_value(str(first.pk))
    expect(page.get_by_label("Candidate")).to_have_value(str(second.pk))
    for picker in (page.get_by_label("Baseline"), page.get_by_label("Candidate")):
        text, room = picker.evaluate(
            """select => {
                const style = getComputedStyle(select);
                const context = document.createElement("canvas").getContext("2d");
                context.font = `${style.fontSize} ${style.fontFamily}`;
                const text = context.measureText(select.selectedOptions[0].text).width;
                const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
                return [text, select.clientWidth - padding - 16];  // 16: the arrow
            }"""
        )
        assert text <= room
    assert page.evaluate("document.documentElement.scrollWidth") == width


@pytest.mark.parametrize("conversation", [True, False])
def test_every_timeline_sets_the_expected_call_left_of_the_recorded_one(
    page, live_server, user, password, submissions, conversation
):
    run = Run.objects.get(submission=submissions[1], case_key=TASK, trial=0)
    if not conversation:  # the same run without its transcript: the plain timeline
        document = {**run.document}
        del document["transcript"]
        Run.objects.filter(pk=run.pk).update(document=document)
    open_at(page, live_server, user, password, 1400, run.get_absolute_url())
    expect(page.locator(".tl.conversation")).to_have_count(1 if conversation else 0)
    expect(page.locator(".tl-head > div")).to_have_text(["Expected", "", "Recorded"])
    # The miss: the expected call, and in the recorded calls' column its nearest call.
    missed = page.locator(".tl-row.near").first
    expected = missed.locator(".tl-expected").bounding_box()
    recorded = missed.locator(".tl-side").bounding_box()
    assert expected["x"] + expected["width"] < recorded["x"]
