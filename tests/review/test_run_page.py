"""The run review page (docs/review.md#run-page): the side-by-side timeline with its argument
diffs, the final text, error and meta, moving to the previous and next failure of the runs
table's filter, the review panel and who may use it, turning a recorded call into an
expectation and re-scoring, and a bounded number of queries."""

from __future__ import annotations

import io
import json
import re
from decimal import Decimal
from urllib.parse import urlencode

import pytest

from cases import services
from scoring.ingest.pipeline import create_submission
from scoring.matcher import load_run
from scoring.models import Result, Review, ReviewEvent, ReviewStatus, Submission
from scoring.results.filtersets import RunFilterSet
from scoring.results.timeline import MISSED, build_timeline
from scoring.review import queues
from scoring.runfiles.reader import read_run_lines
from scoring.templatetags.runview import TREE_DEPTH, seconds
from tests.support import tau_bench
from tests.support.environments import VEHICLE_CASE
from tests.support.otlp_fixtures import collector_lines
from tests.support.pages import HX, escaped, text

# The states of an argument row, as the page names them (its CSS classes).
EQUAL, DIFFERENT, MISSING_ARG = "equal", "different", "missing"
UNEXPECTED, NOT_CHECKED = "unexpected", "not checked"

PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
TOKYO = {"name": "get_weather", "arguments": {"city": "Tokyo"}}
WEATHER_PASS = {"case": "weather-two-cities", "batches": [[PARIS, TOKYO]], "final_text": "Tokyo"}
WEATHER_FAIL = {"case": "weather-two-cities", "batches": [[PARIS]], "final_text": "Paris only"}
GREETING_PASS = {"case": "greeting", "batches": [], "final_text": "Hello!"}
GREETING_FAIL = {"case": "greeting", "batches": [], "final_text": "Bye"}
# Fails #1 (Tokyo): the agent asked for "Tokio", then called a tool nobody expected.
MISSPELT = {
    "case": "weather-two-cities",
    "batches": [
        [PARIS, {"id": "t1", "name": "get_weather", "arguments": {"city": "Tokio"}}],
        [{"call": "1-0", "name": "translate", "arguments": {"text": "Tokio"}, "result": "Tokyo"}],
    ],
    "final_text": "Paris is mild; Tokio unknown.",
    "error": "max turns reached",
    "meta": {"model": "gpt-test", "temperature": 0.5},
}

CONVERT_CASE = {
    "key": "convert",
    "expected_calls": [
        {
            "name": "convert",
            "required_args": {
                "unit": {"$one_of": ["C", "celsius"]},
                "place": {"city": "Paris", "country": "FR"},
                "when": {"$absent": True},
            },
        }
    ],
}
CONVERT_RUN = {
    "case": "convert",
    "batches": [
        [
            {
                "name": "convert",
                "arguments": {
                    "unit": "F",
                    "place": {"city": "Paris", "country": "DE", "zip": "75001"},
                    "when": "now",
                    "verbose": True,
                },
            }
        ]
    ],
    "final_text": "68F",
}


def jsonl(lines) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@pytest.fixture
def submit(django_capture_on_commit_callbacks, admin):
    """``submit(suite, runs)``: a submission of the runs, read and scored."""

    def make(suite, runs, label="model-a") -> Submission:
        with django_capture_on_commit_callbacks(execute=True):
            made = create_submission(suite, admin, io.BytesIO(jsonl(runs)), label=label)
        made.refresh_from_db()
        return made

    return make


@pytest.fixture
def convert_suite(suite, admin):
    """The demo suite with a case whose arguments use matchers and a nested object."""
    services.save_case(suite, CONVERT_CASE, admin)
    return suite


def run_url(submission, run, suffix="", **query) -> str:
    url = f"/submissions/{submission.pk}/runs/{run.pk}/{suffix}"
    return f"{url}?{urlencode(query)}" if query else url


def page(client, submission, run, **query) -> str:
    response = client.get(run_url(submission, run, **query))
    assert response.status_code == 200
    return text(response)


def rows(html: str) -> list[str]:
    """The timeline's rows, in order, each as its HTML."""
    return re.split(r'(?=<div class="tl-row )', html)[1:]


def timeline_of(submission, line: int):
    run = submission.runs.get(line=line)
    case = submission.version.matcher_suite().case(run.case_key)
    return build_timeline(case, load_run(run.document), Result.objects.get(run=run).report)


# --- the timeline -------------------------------------------------------------------------


def test_a_matched_expected_call_shares_a_row_with_its_recorded_call(suite, submit):
    timeline = timeline_of(submit(suite, [WEATHER_PASS]), line=1)
    (batch,) = timeline.batches
    assert [row.kind for row in batch.rows] == ["pair", "pair"]
    assert [(row.expected.index, row.recorded.call.at) for row in batch.rows] == [
        (0, (0, 0)),
        (1, (0, 1)),
    ]
    assert (timeline.expected, timeline.credited, timeline.unmatched) == (2, 2, 0)


def test_an_unmatched_expected_call_sits_beside_its_nearest_call_expected_first(suite, submit):
    timeline = timeline_of(submit(suite, [MISSPELT]), line=1)
    first, second = timeline.batches
    assert [row.kind for row in first.rows] == ["pair", "near"]
    missed = first.rows[1]
    assert missed.expected.state == MISSED
    assert missed.recorded.call.at == (0, 1)  # the "Tokio" call, not the credited Paris one
    assert missed.recorded.nearest_of == missed.expected.index
    assert not missed.recorded.allowed_extra  # it is the miss's nearest, not an extra call
    assert 'city: expected "Tokyo", got "Tokio"' in missed.expected.detail
    assert [(r.path, r.state, r.expected, r.got) for r in missed.expected.diff] == [
        ("city", DIFFERENT, '"Tokyo"', '"Tokio"')
    ]
    # Recorded calls that no expected call took are marked; the credited one is not.
    assert [row.recorded.unmatched for row in first.rows] == [False, True]
    assert second.rows[0].recorded.unmatched
    assert timeline.unmatched == 2


def test_a_case_without_expected_calls_marks_no_call_extra_nor_counts_0_of_0(
    as_user, viewer, team, admin, submit
):
    document = {
        "schema": "casebook.suite/1",
        "name": "end state",
        "cases": [{"key": "c", "expectations": [{"type": "final_text_contains", "text": "ok"}]}],
    }
    suite = services.create_suite(team, document, admin)
    calls = [[{"name": "lookup", "arguments": {}}], [{"name": "book", "arguments": {}}]]
    submission = submit(suite, [{"case": "c", "batches": calls, "final_text": "ok"}])
    html = page(as_user(viewer), submission, submission.runs.get())
    assert "extra call" not in html
    assert "0 of 0" not in html
    assert "The case expects no particular call · 2 recorded calls" in html


def test_an_expected_call_of_a_tool_never_called_comes_after_the_batches(suite, submit):
    run = {"case": "delete-if-exists", "batches": [[{"name": "ls", "arguments": {}}]]}
    timeline = timeline_of(submit(suite, [run]), line=1)
    assert [row.expected.name for row in timeline.unplaced] == ["file_exists", "delete_file"]
    assert "no call of file_exists; the run called ls" in timeline.unplaced[0].expected.detail
    assert all(row.nearest is None for row in timeline.unplaced)


def test_tau_bench_task_2_trial_0_shows_the_three_updates_it_never_made_as_not_called(
    as_user, viewer, team, admin, submit
):
    # The agent updated 2 of 5 reservations; each update is credited to the expected call it
    # satisfies, so the other three are missing: not compared with a call #0 already has.
    suite = services.create_suite(team, tau_bench.suite_document(prefix=""), admin)
    (record,) = [r for r in tau_bench.RECORDS if r["task_id"] == 2 and r["trial"] == 0]
    submission = submit(suite, [tau_bench.run_line(record, case="2")])
    run = submission.runs.get()
    html = page(as_user(viewer), submission, run)
    assert "2 of 5 expected calls matched" in html
    placed, unplaced = html.split('<section class="tl-batch unplaced">')
    assert "tl-row missed" not in placed
    assert '<h3 class="tl-batch-head">not called</h3>' in unplaced
    missed = rows(unplaced)
    assert [re.search(r'expected-(\d+)"', row)[1] for row in missed] == ["2", "3", "4"]
    for row in missed:
        assert (
            '<p class="tl-detail">2 calls of update_reservation_flights, each credited to another '
            "expected call (#0, #1); none left for this one</p>"
        ) in row
        assert "nearest recorded call" not in row
        assert "argdiff" not in row
    assert Result.objects.get(run=run).report["predicates"][3]["cause"] == {
        "kind": "missing_call",
        "tool": "update_reservation_flights",
        "argument": None,
    }


def test_an_unscored_run_shows_its_expected_calls_unjudged(suite):
    case = suite.latest_version.matcher_suite().case("weather-two-cities")
    timeline = build_timeline(case, load_run(WEATHER_FAIL), None)
    assert not timeline.scored
    assert [row.expected.state for row in timeline.unplaced] == ["unscored", "unscored"]
    assert not timeline.batches[0].rows[0].recorded.unmatched  # nobody said so yet


def test_page_joins_pairs_and_marks_calls_that_matched_nothing(as_user, viewer, suite, submit):
    submission = submit(suite, [MISSPELT])
    run = submission.runs.get()
    html = page(as_user(viewer), submission, run)
    pair, near, translate = rows(html)
    anchor = f"run-{run.pk}-"
    assert 'class="tl-row pair"' in pair
    assert f'id="{anchor}expected-0"' in pair
    assert f'id="{anchor}call-0-0"' in pair
    assert "matches #0" in pair
    # The miss and its nearest call share a row, expected first, the call not "extra".
    assert 'class="tl-row near"' in near
    assert near.index(f'id="{anchor}expected-1"') < near.index(f'id="{anchor}call-0-1"')
    assert "nearest to #1, not matched" in near
    assert "extra call, allowed" not in near
    # The case allows extra calls: those credited to nothing are shown quietly.
    assert 'class="tl-call recorded extra"' in translate
    assert "extra call, allowed" in translate
    assert "2 extra calls, allowed" in html
    # The tool's result is shown with its call.
    assert '<pre class="code">Tokyo</pre>' in translate
    # The report's call references lead to the timeline's cards.
    assert f'href="#{anchor}call-0-0">batch 0, call 0</a>' in html


def test_argument_diff_names_each_argument_and_the_matcher_that_failed(
    as_user, viewer, convert_suite, submit
):
    submission = submit(convert_suite, [CONVERT_RUN])
    run = submission.runs.get()
    (timeline_row,) = [r for r in timeline_of(submission, 1).batches[0].rows if r.expected]
    assert [(r.path, r.state, r.matcher) for r in timeline_row.expected.diff] == [
        ("unit", DIFFERENT, "$one_of"),
        ("place.city", EQUAL, None),
        ("place.country", DIFFERENT, None),
        ("place.zip", UNEXPECTED, None),
        ("when", UNEXPECTED, "$absent"),
        ("verbose", NOT_CHECKED, None),
    ]
    html = page(as_user(viewer), submission, run)
    table = html[html.index('<table class="argdiff">') : html.index("</table>")]
    diff_rows = table.split('<tr class="arg ')[1:]
    unit = diff_rows[0]
    assert unit.startswith('different">')
    assert "<code>$one_of</code>" in unit
    assert escaped('expected one of ["C", "celsius"], got "F"') in unit
    assert escaped('"FR"') in diff_rows[2]
    assert escaped('"DE"') in diff_rows[2]
    assert "not expected (the object must be equal as a whole)" in diff_rows[3]
    assert escaped('must not be sent, got "now"') in diff_rows[4]
    assert diff_rows[5].startswith('not-checked">')


def test_argument_diff_of_arguments_that_could_not_be_parsed(suite, submit):
    garbled = {"name": "get_weather", "arguments": None, "arguments_raw": '{"city": "Tok'}
    run = {"case": "weather-two-cities", "batches": [[PARIS, garbled]]}
    timeline = timeline_of(submit(suite, [run]), line=1)
    missed = timeline.batches[0].rows[-1]
    assert (missed.kind, missed.recorded.call.at) == ("near", (0, 1))
    assert [(r.path, r.state) for r in missed.expected.diff] == [("city", MISSING_ARG)]


# --- final text, error, meta, trials ------------------------------------------------------------


def test_run_page_shows_final_text_error_meta_and_the_model(as_user, viewer, suite, submit):
    submission = submit(suite, [MISSPELT])
    html = page(as_user(viewer), submission, submission.runs.get())
    assert '<div class="prompt">Paris is mild; Tokio unknown.</div>' in html
    assert '<h2>Error</h2><div class="problems">max turns reached</div>' in html
    assert "&quot;temperature&quot;: 0.5" in html
    assert "model <code>gpt-test</code>" in html
    assert "the run ended with an error: max turns reached" in html


def test_run_page_counts_the_tool_errors_and_links_the_first(as_user, viewer, suite, submit):
    failed = {**TOKYO, "result": "<b>timeout</b>", "is_error": True}
    submission = submit(suite, [{**WEATHER_PASS, "batches": [[PARIS], [failed, failed]]}])
    run = submission.runs.get()
    html = page(as_user(viewer), submission, run)
    assert f'2 tool errors: <a href="#run-{run.pk}-call-1-0">get_weather in batch 1</a>, …' in html
    assert "result (tool error)" in html
    assert "&lt;b&gt;timeout&lt;/b&gt;" in html


def test_run_page_shows_the_runs_notes_at_the_top_escaped_and_keeps_its_transcript(
    as_user, viewer, suite, submit
):
    transcript = [{"role": "user", "text": "Weather?"}, {"role": "assistant", "text": "Tokyo"}]
    noted = {
        **WEATHER_PASS,
        "notes": ["tool arguments were not captured <b>here</b>"],
        "transcript": transcript,
    }
    submission = submit(suite, [noted, GREETING_PASS])
    run = submission.runs.get(line=1)
    assert (run.document["transcript"], run.document["notes"]) == (transcript, noted["notes"])
    assert Result.objects.get(run=run).report["notes"] == noted["notes"]
    html = page(as_user(viewer), submission, run)
    notice = html.index('<ul class="run-notes"')
    assert notice < html.index('<div class="run-layout">')
    assert f'<li class="message">{escaped(noted["notes"][0])}</li>' in html
    assert "<b>here</b>" not in html
    plain = page(as_user(viewer), submission, submission.runs.get(line=2))
    assert "run-notes" not in plain


def test_the_timeline_says_what_each_model_turn_and_tool_call_took_where_recorded(
    as_user, viewer, suite, submit
):
    """docs/review.md#run-page: an assistant turn's tokens and time, a call's time, and the
    run's time in tools beside its wall time; nothing where nothing was recorded."""
    timed = {**PARIS, "duration_ms": 1.25}
    untimed = {**TOKYO}
    recorded = {
        **WEATHER_PASS,
        "batches": [[timed, untimed]],
        "transcript": [
            {"role": "user", "text": "Weather?"},
            {"role": "assistant", "text": None, "batch": 0, "duration_ms": 1234.0,
             "usage": {"input_tokens": 1234, "output_tokens": 56}},
            {"role": "assistant", "text": "Tokyo", "usage": {"input_tokens": None}},
        ],
        "usage": {"duration_ms": 5100.0, "tool_duration_ms": 1.25},
    }  # fmt: skip
    submission = submit(suite, [recorded, GREETING_PASS])
    html = page(as_user(viewer), submission, submission.runs.get(line=1))
    said = re.findall(r'<div class="turn-figures small muted">([^<]*)</div>', html)
    assert said == ["1,234 in · 56 out · 1.2 s"]  # the second turn recorded no figure
    took = re.findall(r'<span class="tl-took muted small"[^>]*>([^<]*)</span>', html)
    assert took == ["1.2 ms"]  # Paris's call; Tokyo's recorded no time
    assert '5.1 s <span class="tool-time">(1.2 ms in tools)</span>' in html
    plain = page(as_user(viewer), submission, submission.runs.get(line=2))
    assert "turn-figures" not in plain
    assert "in tools" not in plain


def test_times_read_as_milliseconds_to_a_tenth_then_seconds_whatever_their_number_type():
    assert [seconds(v) for v in (0.04, 1.25, 820, 5120.5)] == [
        "0.0 ms",
        "1.2 ms",
        "820 ms",
        "5.1 s",
    ]
    assert seconds(Decimal("1234.56789012345678901")) == "1.2 s"  # a document's exact decimal


def test_the_timeline_of_a_real_trace_gives_each_model_turn_its_figures(
    as_user, viewer, suite, submit
):
    lines = collector_lines("openai-v2-latest")
    runs = [line.canonical for line in read_run_lines(io.BytesIO(jsonl(lines)))]
    traced = {**runs[0], "case": "weather-two-cities"}
    submission = submit(suite, [traced])
    html = page(as_user(viewer), submission, submission.runs.get())
    said = re.findall(r'<div class="turn-figures small muted">([^<]*)</div>', html)
    assert [re.sub(r"· [0-9.]+ m?s$", "· TIME", s) for s in said] == ["50 in · 20 out · TIME"] * 2
    assert len(re.findall(r'<span class="tl-took muted small"', html)) == 2


def test_run_page_links_to_the_other_trials_keeping_the_filter(as_user, viewer, suite, submit):
    submission = submit(suite, [WEATHER_PASS, WEATHER_FAIL, MISSPELT])
    runs = {r.trial: r for r in submission.runs.all()}
    html = page(as_user(viewer), submission, runs[2], verdict="fail")
    assert '<strong aria-current="page">2</strong>' in html
    assert f'href="{run_url(submission, runs[0], verdict="fail")}" class="verdict pass"' in html
    assert f'href="{run_url(submission, runs[1], verdict="fail")}" class="verdict fail"' in html


def test_a_run_that_no_longer_reads_as_a_run_is_shown_as_stored(as_user, viewer, suite, submit):
    submission = submit(suite, [GREETING_PASS])
    run = submission.runs.get()
    run.document = {"case": "greeting", "batches": "oops"}
    run.save(update_fields=["document"])
    html = page(as_user(viewer), submission, run)
    assert "This run no longer reads as a valid run" in html
    assert "&quot;oops&quot;" in html


# --- next and previous failure -------------------------------------------------------------------


@pytest.fixture
def mixed(suite, submit):
    """Lines 1 to 8: pass, fail, pass, fail, fail, pass, fail, fail (greeting and weather)."""
    return submit(
        suite,
        [
            GREETING_PASS,  # 1
            GREETING_FAIL,  # 2
            WEATHER_PASS,  # 3
            WEATHER_FAIL,  # 4
            GREETING_FAIL,  # 5
            GREETING_PASS,  # 6
            WEATHER_FAIL,  # 7
            MISSPELT,  # 8
        ],
    )


def neighbours(client, submission, line: int, **query) -> tuple[int | None, int | None]:
    """The lines the page's previous and next failure links lead to."""
    html = page(client, submission, submission.runs.get(line=line), **query)
    found = []
    for kind in ("previous", "next"):
        match = re.search(rf'href="/submissions/\d+/runs/(\d+)/[^"]*" data-triage="{kind}"', html)
        found.append(submission.runs.get(pk=match.group(1)).line if match else None)
    return tuple(found)


def test_next_and_previous_failure_follow_the_table_order(as_user, viewer, mixed):
    client = as_user(viewer)
    assert neighbours(client, mixed, 2) == (None, 4)
    assert neighbours(client, mixed, 4) == (2, 5)
    assert neighbours(client, mixed, 5) == (4, 7)
    assert neighbours(client, mixed, 8) == (7, None)
    # From a passing run, its place in the order counts.
    assert neighbours(client, mixed, 6) == (5, 7)


def test_next_failure_stays_within_the_filter_and_its_sort(as_user, viewer, mixed):
    client = as_user(viewer)
    weather = {"case": "weather-two-cities"}
    assert neighbours(client, mixed, 4, **weather) == (None, 7)
    assert neighbours(client, mixed, 7, **weather) == (4, 8)
    # By case, then trial: the failures are greeting 2, 5, then weather 4, 7, 8.
    assert neighbours(client, mixed, 5, sort="case") == (2, 4)
    # By case descending (trials still ascending): weather 4, 7, 8, then greeting 2, 5.
    assert neighbours(client, mixed, 4, sort="-case") == (None, 7)
    assert neighbours(client, mixed, 2, sort="-case") == (8, 5)


def test_failure_links_carry_the_filter_and_the_table_link_restores_it(as_user, viewer, mixed):
    html = page(as_user(viewer), mixed, mixed.runs.get(line=4), case="weather-two-cities")
    seven = mixed.runs.get(line=7)
    assert f'href="{run_url(mixed, seven, case="weather-two-cities")}" data-triage="next"' in html
    assert f'href="/submissions/{mixed.pk}/?case=weather-two-cities">Back to the runs' in html


def test_a_queue_decides_the_next_item(as_user, viewer, mixed):
    run = mixed.runs.get(line=4)
    html = page(as_user(viewer), mixed, run, queue="12")
    # A button posting to the queue (it reserves the next run), not a link, moving on from
    # this run.
    assert re.search(
        r'<form method="post" action="/queues/12/next/">.*?'
        rf'<input type="hidden" name="after" value="{run.pk}">'
        r'<button type="submit" data-triage="next"><kbd>j</kbd> Next in queue</button>',
        html,
    )
    assert 'href="/queues/12/next/"' not in html
    # The key list says what j does here: not the filter's next failure.
    assert "<dd>next run of the queue to review, after this one" in html
    assert "next / previous failure of the filter" not in html
    assert "next / previous failure of the filter" in page(as_user(viewer), mixed, run)


def test_setting_a_status_in_a_queue_reserves_and_opens_its_next_run(as_user, editor, mixed):
    queue = queues.build_queue(mixed, "q", editor, filters=RunFilterSet({"verdict": "fail"}))
    first, second = queue.items.order_by("position")[:2]
    response = review_post(
        as_user(editor), mixed, first.run, {"status": "flaky", "advance": "on"}, queue=queue.pk
    )
    assert response.headers["HX-Redirect"] == (
        f"/submissions/{mixed.pk}/runs/{second.run_id}/?queue={queue.pk}"
    )
    second.refresh_from_db()
    assert second.reserved_by == editor
    # The tick says where it goes, on the page and in the panel redrawn after a change.
    client = as_user(editor)
    assert "then open the next run of the queue" in page(client, mixed, second.run, queue=queue.pk)
    panel = text(review_post(client, mixed, second.run, {"comment": "hm"}, queue=queue.pk))
    assert "then open the next run of the queue" in panel
    assert "then open the next failure" in text(review_post(client, mixed, second.run, {}))


# --- the review panel -----------------------------------------------------------------------------


def review_post(client, submission, run, data, **query):
    return client.post(run_url(submission, run, "review/", **query), data, headers=HX)


def test_an_editor_sets_status_assignee_and_comments_with_history(as_user, editor, mixed):
    client = as_user(editor)
    run = mixed.runs.get(line=4)
    response = review_post(client, mixed, run, {"status": ReviewStatus.REGRESSION})
    assert response.status_code == 200
    panel = text(response)
    assert panel.lstrip().startswith('<section class="card review-panel" id="review"')
    assert '<span class="review-status regression">regression</span>' in panel
    review_post(client, mixed, run, {"assignee": str(editor.pk)})
    review_post(client, mixed, run, {"comment": "  Tokyo <b>missing</b>\nagain  "})
    review = Review.objects.get(run=run)
    assert (review.status, review.assignee) == (ReviewStatus.REGRESSION, editor)
    events = list(ReviewEvent.objects.filter(run=run).values_list("kind", flat=True))
    assert events == ["status", "assignee", "comment"]
    html = page(client, mixed, run)
    start = html.index('<ol class="review-history">')
    history = html[start : html.index("</ol>", start)]
    assert "set the status to" in history
    assert "assigned it to eddie-editor" in history
    assert "Tokyo &lt;b&gt;missing&lt;/b&gt;<br>again" in history


def test_assignee_must_be_a_member_of_the_team(as_user, editor, outsider, mixed):
    run = mixed.runs.get(line=4)
    response = review_post(as_user(editor), mixed, run, {"assignee": str(outsider.pk)})
    assert response.status_code == 422
    assert not Review.objects.filter(run=run).exists()


def test_setting_a_status_can_move_on_to_the_next_failure(as_user, editor, mixed):
    run = mixed.runs.get(line=4)
    query = {"case": "weather-two-cities"}
    response = review_post(
        as_user(editor), mixed, run, {"status": "flaky", "advance": "on"}, **query
    )
    assert response.headers["HX-Redirect"] == run_url(mixed, mixed.runs.get(line=7), **query)
    assert Review.objects.get(run=run).status == "flaky"


def test_viewers_read_the_review_without_controls_and_cannot_post(as_user, viewer, editor, mixed):
    run = mixed.runs.get(line=4)
    review_post(as_user(editor), mixed, run, {"status": "flaky"})
    client = as_user(viewer)
    html = page(client, mixed, run)
    assert '<span class="review-status flaky">flaky</span>' in html
    assert "data-triage-key" not in html
    assert "data-triage-comment" not in html
    assert "Make this an expectation" not in html
    assert review_post(client, mixed, run, {"status": "regression"}).status_code == 403
    assert client.get(run_url(mixed, run, "promote/", call="0-0")).status_code == 403
    assert Review.objects.get(run=run).status == "flaky"


def test_outsiders_get_not_found_everywhere(as_user, outsider, mixed):
    client = as_user(outsider)
    run = mixed.runs.get(line=4)
    assert client.get(run_url(mixed, run)).status_code == 404
    assert review_post(client, mixed, run, {"status": "flaky"}).status_code == 404
    assert client.post(run_url(mixed, run, "rescore/"), {"version": 1}).status_code == 404


# --- make this an expectation ------------------------------------------------------------------


def test_promoting_a_recorded_call_makes_a_version_and_rescoring_turns_the_run_green(
    as_user, editor, suite, submit, django_capture_on_commit_callbacks
):
    submission = submit(suite, [{**MISSPELT, "error": None, "final_text": "Tokyo"}])
    run = submission.runs.get()
    assert Result.objects.get(run=run).verdict == "fail"
    client = as_user(editor)
    revision = suite.cases.get(key="weather-two-cities").revision
    form = text(client.get(run_url(submission, run, "promote/", call="0-1"), headers=HX))
    # Prefilled: the call's name and arguments, replacing the first expected call of its name.
    assert 'value="get_weather"' in form
    assert "&quot;city&quot;: &quot;Tokio&quot;" in form
    assert '<option value="0" selected>replace #0: get_weather(city = &quot;Paris&quot;)' in form
    response = client.post(
        run_url(submission, run, "promote/"),
        {
            "call": "0-1",
            "name": "get_weather",
            "required_args": '{"city": {"$one_of": ["Tokyo", "Tokio"]}}',
            "replace": "1",
            "revision": revision,
        },
        headers=HX,
    )
    assert response.status_code == 200, text(response)
    assert "Saved as version 2" in text(response)
    # Still offered after a reload, not only in the answer to the promote.
    assert "Re-score against version 2</button>" in page(client, submission, run)
    calls = suite.versions.get(number=2).document["cases"][1]["expected_calls"]
    assert calls[1]["required_args"] == {"city": {"$one_of": ["Tokyo", "Tokio"]}}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(run_url(submission, run, "rescore/"), {"version": "2"})
    assert response.status_code == 302
    assert response.headers["Location"] == run_url(submission, run)
    assert Result.objects.get(run=run).verdict == "pass"
    html = page(client, submission, run)
    assert '<span class="verdict pass">pass</span>' in html
    assert "Re-score against version" not in html


def test_promotion_refuses_what_the_case_editor_refuses(as_user, editor, suite, submit):
    submission = submit(suite, [MISSPELT])
    run = submission.runs.get()
    client = as_user(editor)
    revision = suite.cases.get(key="weather-two-cities").revision
    url = run_url(submission, run, "promote/")
    bad_json = client.post(
        url, {"call": "1-0", "name": "translate", "required_args": "{", "revision": revision}
    )
    assert bad_json.status_code == 422
    bad_matcher = client.post(
        url,
        {
            "call": "1-0",
            "name": "translate",
            "required_args": '{"text": {"$regex": "("}}',
            "revision": revision,
        },
    )
    assert bad_matcher.status_code == 422
    assert "expected_calls[2].required_args.text.$regex" in text(bad_matcher)
    stale = client.post(
        url, {"call": "1-0", "name": "translate", "required_args": "{}", "revision": revision + 1}
    )
    assert stale.status_code == 409
    assert suite.versions.count() == 1
    added = client.post(
        url, {"call": "1-0", "name": "translate", "required_args": "{}", "revision": revision}
    )
    assert added.status_code == 200
    document = suite.versions.get(number=2).document
    assert document["cases"][1]["expected_calls"][2] == {
        "name": "translate",
        "required_args": {},
        "ordered": False,
        "depends_on_result": False,
    }


def test_promoting_a_call_the_case_already_expects_makes_no_version(as_user, editor, suite, submit):
    submission = submit(suite, [MISSPELT])
    run = submission.runs.get()
    revision = suite.cases.get(key="weather-two-cities").revision
    response = as_user(editor).post(
        run_url(submission, run, "promote/"),
        {
            "call": "0-0",
            "name": "get_weather",
            "required_args": '{"city": "Paris"}',
            "replace": "0",
            "revision": revision,
        },
        headers=HX,
    )
    assert response.status_code == 200
    assert "nothing was saved, and no new version was made" in text(response)
    assert suite.versions.count() == 1


def test_promoting_a_call_whose_arguments_were_garbled_says_so(as_user, editor, suite, submit):
    garbled = {"name": "get_weather", "arguments": None, "arguments_raw": '{"city": "Par'}
    submission = submit(suite, [{**MISSPELT, "batches": [[garbled]]}])
    run = submission.runs.get()
    form = text(as_user(editor).get(run_url(submission, run, "promote/", call="0-0")))
    assert "were not a JSON object, so they start empty here" in form
    assert escaped('{"city": "Par') in form


def test_promoting_a_call_that_is_not_there_is_not_found(as_user, editor, suite, submit):
    submission = submit(suite, [MISSPELT])
    run = submission.runs.get()
    client = as_user(editor)
    for call in ("5-0", "0-9", "x", ""):
        assert client.get(run_url(submission, run, "promote/", call=call)).status_code == 404


# --- queries ------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [10, 200])
def test_run_page_queries_are_bounded(
    as_user, editor, suite, submit, count, django_assert_max_num_queries
):
    runs = [[GREETING_PASS, WEATHER_FAIL, MISSPELT, GREETING_FAIL][i % 4] for i in range(count)]
    submission = submit(suite, runs)
    run = submission.runs.filter(case_key="weather-two-cities").order_by("seq")[1]
    client = as_user(editor)
    review_post(client, submission, run, {"comment": "look"})
    client.get(run_url(submission, run))  # the suite version is read once, then cached
    # 22: the suite's latest version (to offer a re-score against it), the failure as a
    # known failure (where it was first seen, the decision made on it elsewhere), the
    # team's review labels and the run's, and whether the user reviews the run blind.
    with django_assert_max_num_queries(22):
        html = page(client, submission, run, verdict="fail", sort="case")
    assert 'data-triage="next"' in html
    assert 'data-triage="previous"' in html


# --- the conversation ---------------------------------------------------------------------


def tau_bench_timelines():
    """The timeline of each of τ-bench's 200 runs against the suite keyed by task, with the
    run as the OpenAI Chat importer reads it (no report: placement needs none)."""
    from scoring.importers import to_canonical
    from scoring.matcher import load_suite

    tau_suite = load_suite(tau_bench.suite_document(prefix=""))
    for record in tau_bench.RECORDS:
        run = load_run(to_canonical(tau_bench.run_line(record, case=str(record["task_id"]))))
        yield run, build_timeline(tau_suite.case(run.case), run, None)


def test_every_batch_of_every_tau_bench_run_sits_once_at_the_turn_that_emitted_it():
    for run, timeline in tau_bench_timelines():
        turns = timeline.conversation
        placed = [turn.batch.index for turn in turns if turn.batch is not None]
        assert placed == list(range(len(run.batches))), run.case
        emitted = {
            t["batch"]: t for t in run.transcript if t["role"] == "assistant" and "batch" in t
        }
        for turn in turns:
            if turn.batch is not None:
                assert turn.role == "assistant"
                assert turn.text == emitted[turn.batch.index]["text"]
        # The user's messages all there, in order; tool turns left to the calls' results.
        users = [t["text"] for t in run.transcript if t["role"] == "user" and t["text"]]
        assert [turn.text for turn in turns if turn.role == "user"] == users
        assert not [turn for turn in turns if turn.role == "tool"]


def test_a_batch_no_turn_names_comes_before_the_next_named_one_and_tool_turns_without_results_stay(
    suite,
):
    case = suite.latest_version.matcher_suite().case("weather-two-cities")
    run = load_run(
        {
            "case": "weather-two-cities",
            "batches": [[PARIS], [TOKYO], [{**TOKYO, "result": "25°C"}]],
            "transcript": [
                {"role": "user", "text": "Weather?"},
                {"role": "tool", "text": "18°C", "batch": 0},
                {"role": "assistant", "text": "And Tokyo.", "batch": 2},
                {"role": "tool", "text": "25°C", "batch": 2},
                {"role": "assistant", "text": "Done."},
                {"role": "user", "text": ""},
            ],
        }
    )
    turns = build_timeline(case, run, None).conversation
    assert [(t.role, t.text, t.batch and t.batch.index, t.result_of) for t in turns] == [
        ("user", "Weather?", None, None),
        ("tool", "18°C", None, 0),  # batch 0 holds no result: the turn carries it
        ("assistant", None, 0, None),  # no turn names batches 0 and 1: placed before 2
        ("assistant", None, 1, None),
        ("assistant", "And Tokyo.", 2, None),
        ("assistant", "Done.", None, None),
    ]
    assert build_timeline(case, load_run(WEATHER_PASS), None).conversation == ()


def test_run_page_shows_the_conversation_and_the_case_prompt_escaped(
    as_user, viewer, team, admin, submit
):
    document = {
        "schema": "casebook.suite/1",
        "name": "prompted",
        "cases": [
            {
                "key": "k/1 <b>",
                "title": "<i>title</i>",
                "prompt": "Book <b>two</b> seats",
                "expected_calls": [{"name": "book", "required_args": {"n": {"$one_of": [2, 3]}}}],
            }
        ],
    }
    prompted = services.create_suite(team, document, admin)
    run = {
        "case": "k/1 <b>",
        "batches": [[{"name": "book", "arguments": {"n": 1}, "result": '{"<ok>": [1, "<x>"]}'}]],
        "transcript": [
            {"role": "system", "text": "Be <em>nice</em>"},
            {"role": "user", "text": "Two <b>seats</b>"},
            {"role": "assistant", "text": "On it <script>", "batch": 0},
        ],
    }
    submission = submit(prompted, [run])
    html = page(as_user(viewer), submission, submission.runs.get())
    assert '<h2 id="case-prompt-title">The case: &lt;i&gt;title&lt;/i&gt;</h2>' in html
    assert '<div class="prompt">Book &lt;b&gt;two&lt;/b&gt; seats</div>' in html
    version = f"/suites/{prompted.pk}/versions/1/#case-k%2F1%20%3Cb%3E"
    assert f'<a href="{version}">' in html
    system = '<summary class="turn-role">System prompt</summary><div class="turn-text">Be &lt;em'
    assert system in html
    assert '<div class="turn-text">Two &lt;b&gt;seats&lt;/b&gt;</div>' in html
    assert '<div class="turn-text">On it &lt;script&gt;</div>' in html
    assert '<span class="jk">&quot;&lt;ok&gt;&quot;</span>: ' in html
    assert "<code>n is one of [2, 3]</code>" in html
    for raw in ("<b>two", "<em>nice", "<script>", '"<ok>"', "<i>title"):
        assert raw not in html
    # The version page holds the case under that anchor.
    version_page = text(as_user(viewer).get(version.split("#")[0]))
    assert 'id="case-k%2F1%20%3Cb%3E"' in version_page


def test_a_tool_result_is_a_tree_of_bounded_size():
    from scoring.templatetags.runview import TREE_NODES, json_tree

    assert json_tree("plain <text>") == '<pre class="code">plain &lt;text&gt;</pre>'
    assert json_tree('"a JSON string"') == '<pre class="code">&quot;a JSON string&quot;</pre>'
    tree = json_tree({"a": [1, {"b": None}], "<k>": "v"})
    assert tree.count('<details class="jnode" open>') == 3
    assert (
        '<span class="jk">&quot;&lt;k&gt;&quot;</span>: <span class="jv">&quot;v&quot;</span>'
        in tree
    )
    huge = json_tree(json.dumps({"items": [{"n": i} for i in range(10 * TREE_NODES)]}))
    assert huge.count("<details") <= TREE_NODES
    assert '"n": 19999' in huge.replace("&quot;", '"')  # the rest shown as text, not dropped


def test_a_tool_result_nested_deeper_than_the_tree_is_shown_as_text_past_it(
    as_user, viewer, suite, submit
):
    """A string result is read as JSON whatever its depth (the reader's depth limit is on
    the line): 300 levels once cost the page a RecursionError, a 500."""
    deep = "[" * 300 + '"bottom"' + "]" * 300
    call = {**PARIS, "result": deep}
    run = {**WEATHER_PASS, "batches": [[call, TOKYO]]}
    submission = submit(suite, [run])
    html = page(as_user(viewer), submission, submission.runs.get())
    assert html.count('<details class="jnode" open>') == TREE_DEPTH + 1
    assert escaped("[" * (300 - TREE_DEPTH - 1) + '"bottom"') in html


def test_run_page_shows_the_end_state_diff_after_the_page(
    as_user, viewer, suite, admin, submit, django_user_model
):
    """Replayed in BFCL's own vehicle backend: the run locked the wrong door and called a
    tool the backend lacks."""
    services.save_case(suite, VEHICLE_CASE, admin)
    lock = {"name": "lockDoors", "arguments": {"unlock": False, "door": ["passenger"]}}
    honk = {"name": "honk", "arguments": {}}
    submission = submit(suite, [{"case": "doors", "batches": [[lock], [honk]]}])
    run = submission.runs.get()
    diff = f"/submissions/{submission.pk}/runs/{run.pk}/end-state/"
    # A replay costs a sandbox process: the suite's viewers are told so, not shown it.
    assert "only the suite's editors and admins see it" in page(as_user(viewer), submission, run)
    assert as_user(viewer).get(diff).status_code == 403
    client = as_user(admin)
    whole = page(client, submission, run)
    assert f'hx-get="{diff}"' in whole
    # In the main column, under the conversation: its paths and values need the width.
    assert whole.index('id="end-state"') < whole.index('<aside class="run-side">')
    html = text(client.get(diff))
    cells = re.findall(r'<(?:td|th scope="row") class="mono[^"]*">(.*?)</t[dh]>', html)
    assert cells[:3] == [
        "VehicleControlAPI.doorStatus.driver",
        "&quot;unlocked&quot;",
        "&quot;locked&quot;",
    ]
    assert "honk (batch 1, call 0): " in html
    outsider = django_user_model.objects.create_user("outsider", password="pw")
    refused = as_user(outsider).get(f"/submissions/{submission.pk}/runs/{run.pk}/end-state/")
    assert refused.status_code == 404


def test_the_end_state_table_shows_values_whole_where_a_sentence_cuts_them():
    from scoring.matcher import StateDifference

    answer = "Yes, " + "the reservation was changed as asked; " * 4
    difference = StateDifference("reservations.ABC.note", answer, "No")
    assert difference.run_text.endswith("…")  # in a sentence (the verdict's reason)
    assert difference.run_value == json.dumps(answer)  # in the table: whole


def test_a_run_of_several_turns_reads_turn_by_turn_and_a_reply_is_no_parallel_batch(
    as_user, viewer, suite, submit
):
    """Each turn starts at its user message (said missing when the run lacks it); a reply's
    calls are "in one reply", which a harness may run one after another: not "parallel"."""
    run = {
        "case": "weather-two-cities",
        "batches": [[PARIS, TOKYO], [PARIS]],
        "transcript": [
            {"role": "user", "text": "Weather in Paris and Tokyo?"},
            {"role": "assistant", "text": None, "batch": 0},
            {"role": "user", "text": None},
            {"role": "assistant", "text": None, "batch": 1},
            {"role": "assistant", "text": "Done."},
        ],
        "final_text": "Done.",
    }
    submission = submit(suite, [run])
    html = page(as_user(viewer), submission, submission.runs.get())
    turns = html.split('<h3 class="turn-number">')[1:]
    assert [turn.split("<")[0] for turn in turns] == ["Turn 1", "Turn 2"]
    assert "Weather in Paris and Tokyo?" in turns[0]
    assert "The user's message is not in the run." in turns[1]
    assert "batch 0 · 2 calls in one reply" in html
    assert "parallel calls" not in html
