"""The run page in a real browser (docs/review.md#run-page): the page a reviewer judges from.
τ-bench's results file uploaded as it is to a suite keyed by task shows each run as its
conversation (the case's prompt at the top, the user's messages, every batch of calls at the
turn that made it, what the case expected beside them), holds at 1400 and 800 px, keeps allowed
extra calls quiet, finds text anywhere in the run, and words argument matchers the same way on
the run page, the promote form and the case editor."""

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
from tests.support import tau_bench

from .browsing import PAYLOAD, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TASK = 4  # fails: payment_id "credit_card_7407366" where "gift_card_8190333" was expected


@pytest.fixture
def team(user):
    made = Team.objects.create(name="Airline", slug="airline")
    Membership.objects.create(team=made, user=user, role=Role.EDITOR)
    return made


def uploaded(team, user, document: dict, content: bytes, filename: str) -> Run:
    """Task 4's first trial, from ``content`` uploaded to a suite made of ``document``."""
    suite = services.create_suite(team, document, user)
    # Outside any transaction: the tasks run (eagerly) as the upload commits.
    submission = create_submission(suite, user, io.BytesIO(content), filename=filename)
    return Run.objects.get(submission=submission, case_key=str(TASK), trial=0)


@pytest.fixture
def run(team, user):
    """Task 4, trial 0, of τ-bench's results file uploaded as it is (case keys: task ids)."""
    document = tau_bench.suite_document(prefix="")
    return uploaded(team, user, document, tau_bench.RESULTS_FILE.read_bytes(), "tau.json")


def open_run(page, live_server, user, password, run: Run, width: int = 1400) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{run.get_absolute_url()}")


def test_the_breadcrumb_names_the_team_between_the_library_and_the_suite(
    page, live_server, user, password, run
):
    open_run(page, live_server, user, password, run)
    crumbs = page.locator(".pagehead .crumbs a")
    expect(crumbs).to_have_text(["Library", "Airline", "tau-bench airline", re.compile("#")])
    crumbs.nth(1).click()
    page.wait_for_url(re.compile(r"/teams/"))


def test_the_run_reads_as_its_conversation_with_every_batch_at_its_turn(
    page, live_server, user, password, run
):
    open_run(page, live_server, user, password, run)
    transcript = run.document["transcript"]
    record = next(r for r in tau_bench.RECORDS if r["task_id"] == TASK and r["trial"] == 0)

    # The case's prompt, linked to the case at the version that scored the run.
    prompt = page.locator(".case-prompt")
    expect(prompt.locator(".prompt")).to_have_text(record["info"]["task"]["instruction"])
    prompt.get_by_role("link").click()
    page.wait_for_url(re.compile(rf"/versions/1/#case-{TASK}$"))
    expect(page.locator(f"#case-{TASK}")).to_be_in_viewport()
    page.go_back()

    # The system prompt is folded; every user message is there, in order.
    expect(page.locator("details.turn.system")).not_to_have_attribute("open", "")
    users = [t["text"] for t in transcript if t["role"] == "user"]
    assert page.locator(".turn.user .turn-text").all_inner_texts() == users

    # Each batch once, in order, in the assistant turn of the transcript that emitted it.
    batches = page.locator(".turn.assistant [data-batch]")
    assert batches.evaluate_all("els => els.map(e => +e.dataset.batch)") == list(
        range(len(run.document["batches"]))
    )
    for turn in transcript:
        if turn["role"] == "assistant" and turn.get("batch") is not None:
            holder = page.locator(
                ".turn.assistant", has=page.locator(f"[data-batch='{turn['batch']}']")
            )
            if turn["text"]:
                expect(holder.locator(".turn-text")).to_have_text(turn["text"])
            names = [call["name"] for call in run.document["batches"][turn["batch"]]]
            assert holder.locator(".tl-call.recorded code.name").all_inner_texts() == names

    # The miss sits beside its nearest call, at its turn, with its argument diff.
    at_batch_4 = page.locator(".turn.assistant", has=page.locator("[data-batch='4']"))
    missed = at_batch_4.locator(".tl-row.near")
    expect(missed.locator(".tl-call.expected code.name")).to_have_text("update_reservation_flights")
    expect(missed.locator("tr.arg.different")).to_contain_text("credit_card_7407366")

    # A result is indented JSON that folds, not one string.
    first_result = page.locator(".tl-result").first
    first_result.locator("summary").first.click()
    tree = first_result.locator(".jtree")
    expect(tree.locator(".jk", has_text='"email"')).to_be_visible()
    payments = tree.locator("summary", has=page.locator(".jk", has_text='"payment_methods"'))
    payments.click()  # folds it to one line
    expect(payments.locator(".jfold")).to_have_text(re.compile(r"\d+ keys }"))
    expect(tree.locator(".jk", has_text='"credit_card_7407366"')).to_be_hidden()


@pytest.mark.parametrize("width", [1366, 1024])
def test_a_miss_and_its_nearest_call_stand_side_by_side_expected_first(
    page, live_server, user, password, run, width
):
    """At 1366 px the expected call is on the left and its nearest recorded call on its
    right, in one row; at 1024 px (too narrow for two columns) the expected one on top."""
    open_run(page, live_server, user, password, run, width=width)
    row = page.locator(".tl-row.near")
    expect(row).to_have_count(1)
    expected = row.locator(".tl-call.expected").bounding_box()
    recorded = row.locator(".tl-call.recorded").bounding_box()
    if width == 1366:
        assert expected["x"] + expected["width"] < recorded["x"]
        assert abs(expected["y"] - recorded["y"]) < 2
    else:
        assert expected["y"] + expected["height"] <= recorded["y"]
    expect(row.locator(".tl-call.recorded .tl-state")).to_have_text("nearest to #0, not matched")
    expect(row.locator(".tl-state.extra")).to_have_count(0)


def test_the_argument_diff_spans_the_row_and_keeps_names_whole_at_1400_px(
    page, live_server, user, password, run
):
    open_run(page, live_server, user, password, run)
    diff = page.locator(".tl-row.near .tl-diff").first
    diff.scroll_into_view_if_needed()
    row = page.locator(".tl-row.near").first.bounding_box()
    assert diff.bounding_box()["width"] >= 0.95 * row["width"]
    names = diff.locator("code.argname")
    heights = {
        text: names.nth(i).bounding_box()["height"]
        for i, text in enumerate(names.all_inner_texts())
    }
    # "reservation_id" takes one line, as "cabin" does: no word broken inside the key.
    assert heights["reservation_id"] == pytest.approx(heights["cabin"], abs=1)
    verdicts = diff.locator("td.argverdict").all_inner_texts()
    assert [v.split()[0] for v in verdicts] == ["equal", "equal", "equal", "different"]
    cell = diff.locator("td.argverdict").last.bounding_box()
    assert cell["height"] < 2 * heights["cabin"]  # "different" on one line


def test_at_800_px_the_verdict_comes_first_and_nothing_overflows(
    page, live_server, user, password, run
):
    open_run(page, live_server, user, password, run, width=800)
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow == 0
    verdict = page.locator(".run-side").bounding_box()
    conversation = page.locator(".run-main").bounding_box()
    assert verdict["y"] < conversation["y"]
    expect(page.locator(".crumbs")).to_have_text(
        re.compile(r"^Library / Airline / tau-bench airline / ")
    )


def test_at_1400_px_the_verdict_and_review_stay_in_view_down_a_long_run(
    page, live_server, user, password, run
):
    open_run(page, live_server, user, password, run)
    page.locator(".tl-batch.unplaced").scroll_into_view_if_needed()
    assert page.evaluate("window.scrollY") > 1000
    expect(page.locator(".run-side h2", has_text="Verdict")).to_be_in_viewport()
    expect(page.locator("#review")).to_be_in_viewport()


def test_extra_calls_the_case_allows_are_quiet_and_forbidden_ones_fail(
    page, live_server, user, password, team, run
):
    open_run(page, live_server, user, password, run)
    recorded = page.locator(".tl-call.recorded")
    assert recorded.count() == 6
    # none is credited: the nearest of the miss stands beside it, the other five are extra
    expect(page.locator(".tl-call.recorded.extra")).to_have_count(5)
    expect(page.locator(".tl-call.recorded.unmatched")).to_have_count(0)
    expect(page.locator(".tl-summary")).to_contain_text("6 extra calls, allowed")
    quiet = page.locator(".tl-state.extra").first
    assert quiet.evaluate("e => getComputedStyle(e).backgroundColor") == "rgba(0, 0, 0, 0)"

    forbidding = tau_bench.suite_document(prefix="")
    forbidding["name"] = "tau-bench airline, no extra calls"
    for case in forbidding["cases"]:
        case["extra_calls"] = "forbid"
    record = next(r for r in tau_bench.RECORDS if r["task_id"] == TASK and r["trial"] == 0)
    strict_run = uploaded(team, user, forbidding, json.dumps([record]).encode(), "one.json")
    page.goto(f"{live_server.url}{strict_run.get_absolute_url()}")
    expect(page.locator(".tl-call.recorded.unmatched")).to_have_count(6)
    # five said so; the sixth is the nearest of the miss, and says that
    expect(
        page.locator(".tl-state.missed", has_text="extra call: the case forbids it")
    ).to_have_count(5)
    expect(page.locator(".tl-summary .tl-unmatched-count")).to_have_text(
        "6 extra calls: the case forbids them"
    )


def test_find_highlights_text_in_turns_arguments_and_folded_results(
    page, live_server, user, password, run
):
    open_run(page, live_server, user, password, run)
    find = page.get_by_label("Find in this run")
    count = page.locator("[data-find-count]")

    # In a user's message.
    find.fill("Omar Rossi, please")
    expect(count).to_have_text("1 of 1")
    expect(page.locator(".turn.user mark.find-hit.current")).to_be_in_viewport()

    # In arguments and in results folded away: each is opened to show its match.
    find.fill("gift_card_8190333")
    # The user's profile (twice), the expected call and its diff: at least 4.
    expect(count).to_have_text(re.compile(r"^1 of ([4-9]|\d\d+)$"))
    total = int(count.inner_text().split()[-1])
    find.press("Enter")
    expect(count).to_have_text(f"2 of {total}")
    find.press("Shift+Enter")
    expect(count).to_have_text(f"1 of {total}")
    find.fill("omar.rossi5980@example.com")  # only in get_user_details' result
    expect(count).to_have_text("1 of 1")
    hit = page.locator("mark.find-hit.current")
    expect(hit).to_be_visible()
    expect(page.locator(".tl-result", has=hit)).to_have_attribute("open", "")

    find.fill("no such text anywhere")
    expect(count).to_have_text("no match")
    find.press("Escape")
    expect(page.locator("mark.find-hit")).to_have_count(0)


def test_conversation_text_and_results_are_shown_as_text(page, live_server, user, password, team):
    document = {
        "schema": "casebook.suite/1",
        "name": "escaping",
        "cases": [{"key": "c", "prompt": PAYLOAD, "expected_calls": [{"name": "f"}]}],
    }
    line = {
        "case": "c",
        "batches": [[{"name": "f", "arguments": {"x": PAYLOAD}, "result": {PAYLOAD: [PAYLOAD]}}]],
        "transcript": [
            {"role": "system", "text": PAYLOAD},
            {"role": "user", "text": PAYLOAD},
            {"role": "assistant", "text": PAYLOAD, "batch": 0},
            {"role": "tool", "text": PAYLOAD, "batch": 0},
        ],
    }
    suite = services.create_suite(team, document, user)
    submission = create_submission(suite, user, io.BytesIO(json.dumps(line).encode()))
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.runs.get().get_absolute_url()}")
    page.locator(".tl-result summary").first.click()
    expect(page.locator(".jtree .jk")).to_have_text(json.dumps(PAYLOAD))
    expect(page.locator(".turn.user .turn-text")).to_have_text(PAYLOAD)
    page.get_by_label("Find in this run").fill("<script>")
    expect(page.locator("[data-find-count]")).to_have_text(re.compile(r"^1 of [4-9]$"))
    assert page.evaluate("window.__pwned") is None


def test_argument_matchers_read_as_words_on_the_run_page_promote_form_and_editor(
    page, live_server, user, password, team
):
    matchers = {
        "city": {"$text": {"value": "paris", "ignore": ["case"]}},
        "amount": {"$approx": {"value": 12.5, "tolerance": 0.1}},
        "date": {"$regex": r"2024-\d\d-\d\d"},
    }
    words = [
        'city ≈ "paris" (ignoring case)',
        "amount = 12.5 ± 0.1",
        r"date matches /2024-\d\d-\d\d/",
    ]
    document = {
        "schema": "casebook.suite/1",
        "name": "matchers",
        "cases": [{"key": "pay", "expected_calls": [{"name": "pay", "required_args": matchers}]}],
    }
    call = {"name": "pay", "arguments": {"city": "Lyon", "amount": 12.5, "date": "2024-01-01"}}
    suite = services.create_suite(team, document, user)
    line = json.dumps({"case": "pay", "batches": [[call]]}).encode()
    run = create_submission(suite, user, io.BytesIO(line)).runs.get()

    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    assert page.locator(".tl-call.expected ul.argwords li").all_inner_texts() == words
    expect(page.locator(".tl-call.expected")).not_to_contain_text("$text")

    page.get_by_role("link", name="Make this an expectation").click()
    option = page.locator(".promote select[name=replace] option[value='0']")
    described = f"pay({', '.join(words)})"
    expect(option).to_have_text(re.compile("^replace #0: " + re.escape(described[:60])))

    case = suite.cases.get(key="pay")
    page.goto(f"{live_server.url}/suites/{suite.pk}/cases/{case.pk}/")
    expect(page.locator("#call-0 ul.argwords li")).to_have_text(words)


def test_a_call_the_tool_refused_is_marked_on_the_call_itself(
    page, live_server, user, password, team
):
    """Run 11/0 (reward 1): the first book_reservation was refused (``Error: payment amount
    does not add up``); the run passes the suite the file's tasks make, and the refused call
    says so in its head and where the report names it, not only in its folded result."""
    from cases import tau_bench as tau_bench_suite

    records = [r for r in tau_bench.RECORDS if r["task_id"] == 11]
    content = json.dumps(records).encode()
    results = tau_bench_suite.read_results(io.BytesIO(content))
    reads = tau_bench_suite.read_only_names(tau_bench_suite.proposed_roles(results.tools, []))
    document = tau_bench_suite.suite_document(results, name="airline", read_only=reads)
    suite = services.create_suite(team, document, user)
    submission = create_submission(suite, user, io.BytesIO(content), filename="tau.json")
    run = Run.objects.get(submission=submission, case_key="11", trial=0)
    open_run(page, live_server, user, password, run)
    expect(page.locator("h1 .verdict")).to_have_text("pass")
    refused = page.locator(".tl-call.recorded.is-error")
    expect(refused).to_have_count(1)
    expect(refused.locator(".tl-call-head code.name")).to_have_text("book_reservation")
    expect(refused.locator(".tl-call-head .tl-state.error")).to_have_text("tool error")
    expect(refused.locator(".tl-call-head .tl-state.error")).to_be_visible()
    rule = page.locator(".predicate", has_text="counting calls that succeeded")
    expect(rule).to_have_class(re.compile(r"\bpass\b"))
    # the expected call is credited to the booking that succeeded, not the refused one
    credited = page.locator(".predicate", has_text="book_reservation(")
    expect(credited.locator(".tl-state.error")).to_have_count(0)


def test_the_files_reward_stands_beside_the_verdict_with_the_agreement_and_its_filter(
    page, live_server, user, password, team
):
    """τ-bench's results file scored against the suite its tasks make: 196 of its 200 runs'
    verdicts agree with the file's reward; the 4 that do not are one click away, each with
    its reward beside its verdict, and a run's page says it too."""
    from cases import tau_bench as tau_bench_suite

    content = tau_bench.RESULTS_FILE.read_bytes()
    results = tau_bench_suite.read_results(io.BytesIO(content))
    reads = tau_bench_suite.read_only_names(tau_bench_suite.proposed_roles(results.tools, []))
    document = tau_bench_suite.suite_document(results, name="airline", read_only=reads)
    suite = services.create_suite(team, document, user)
    submission = create_submission(suite, user, io.BytesIO(content), filename="tau.json")
    page.set_viewport_size({"width": 1400, "height": 900})
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    agreement = page.locator(".reward-agreement")
    expect(agreement).to_contain_text("196 of 200 agree with the file's reward")
    agreement.get_by_role("link", name="show the 4 that disagree").click()
    rows = page.locator("#runs tr[data-run-row]")
    expect(rows).to_have_count(4)
    expect(page.locator("#filter-reward")).to_have_value("disagrees")
    expect(rows.locator(".reward.disagrees")).to_have_count(4)
    expect(rows.first.locator("td").first).to_contain_text(re.compile(r"fail\s+reward 1"))
    run = Run.objects.get(submission=submission, case_key="11", trial=0)
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    expect(page.locator("h1 .reward")).to_have_text("the file's reward 1, agrees")


def test_the_assistants_markdown_is_rendered_safely_with_the_raw_text_a_click_away(
    page, live_server, user, password, team, run
):
    open_run(page, live_server, user, password, run)
    turn = page.locator(".turn.assistant", has=page.locator("strong", has_text="FQ8APE")).first
    expect(turn.locator(".markdown strong")).to_have_text("FQ8APE")
    raw = turn.locator(".turn-raw")
    expect(raw.locator(".turn-text")).to_be_hidden()
    raw.locator("summary").click()
    expect(raw.locator(".turn-text")).to_contain_text("**FQ8APE**")
    # Markup in the text stays text; a javascript: link is no link.
    record = next(r for r in tau_bench.RECORDS if r["task_id"] == TASK and r["trial"] == 0)
    hostile = json.loads(json.dumps(record))
    said = next(m for m in reversed(hostile["traj"]) if m["role"] == "assistant")
    said["content"] = f"**bold** {PAYLOAD} [click](javascript:window.__pwned=1)"
    other = uploaded(
        team, user, tau_bench.suite_document(prefix=""), json.dumps([hostile]).encode(), "x.json"
    )
    page.goto(f"{live_server.url}{other.get_absolute_url()}")
    expect(page.locator(".turn.assistant .markdown strong", has_text="bold")).to_have_count(1)
    expect(page.locator(".turn.assistant .markdown a[href^='javascript']")).to_have_count(0)
    expect(
        page.locator(".turn.assistant .markdown script, .turn.assistant .markdown img")
    ).to_have_count(0)
    assert page.evaluate("window.__pwned") is None
