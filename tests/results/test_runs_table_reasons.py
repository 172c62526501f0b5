"""The runs table for hundreds of failures: each run's failure as its short reason on one line,
every failed predicate with its reason when opened; meta values as columns chosen in the
address; the tool filter's choices; the CSV's full predicates, reasons, causes and comments;
and query counts that stay the same as the runs grow."""

from __future__ import annotations

import csv
import importlib
import io
import re

import pytest
from django.apps import apps

from cases import services
from scoring.models import PredicateResult, Run
from scoring.results.filtersets import RunFilterSet
from scoring.results.tables import short_reason
from scoring.review import decisions
from scoring.runfiles.runmeta import (
    META_TEXT_LIMIT,
    META_VALUES_KEPT,
    SEEN_LIMIT,
    meta_values,
    note_seen,
)
from tests.support.pages import HX, small_document, text
from tests.support.runs import TRIALS, many_runs, reads_documents, url

TABLE = HX | {"HX-Target": "runs"}


@pytest.fixture
def scored(suite, submit):
    return submit(suite, TRIALS, label="model-a")


def rows(html: str) -> list[str]:
    return re.findall(r"<tr data-run-row>(.*?)</tr>", html, re.S)


def summary(row: str) -> str:
    """The one line a failing run shows: its first failure's reason, and how many more."""
    return re.sub(r"\s+", " ", re.search(r"<summary>(.*?)</summary>", row, re.S)[1]).strip()


# --- reasons --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("detail", "reason"),
    [
        (
            'update_reservation_flights was called in batch 4: payment_id: expected "g", got "c"',
            'payment_id: expected "g", got "c"',
        ),
        (
            "2 calls of book_reservation, none with these arguments; the nearest, in batch 4: "
            "nonfree_baggages: expected 0, got 1",
            "nonfree_baggages: expected 0, got 1",
        ),
        (
            "3 calls of search_direct_flight, none with these arguments; 1 is credited to "
            "another expected call (#1); the nearest of the other 2, in batch 2: "
            'date: expected "a", got "b"',
            'date: expected "a", got "b"',
        ),
        (
            "2 calls of f, none with these arguments; 1 is credited to another expected call (#0); "
            "the other one, in batch 3: x: expected 1, got 2",
            "x: expected 1, got 2",
        ),
        (
            "2 calls of f, each credited to another expected call (#0, #1); none left for this one",
            None,
        ),
        # Where the nearest call was is all the reason says: kept whole.
        (
            "no call of f; F was called in batch 3, but tool names must match exactly",
            "no call of f; F was called in batch 3, but tool names must match exactly",
        ),
        ("no call of cancel_reservation; the run made no tool calls", None),
    ],
)
def test_a_reason_loses_where_the_nearest_call_was(detail, reason):
    assert short_reason(detail) == (reason or detail)


def test_a_failing_run_shows_its_first_reason_and_lists_every_failure_when_opened(
    as_user, viewer, scored
):
    html = text(as_user(viewer).get(url(scored), {"case": "weather-two-cities"}))
    passed, failed, _ = rows(html)
    assert "<details>" not in passed
    # Paris's call is credited to #0: none is left for Tokyo, which is missing.
    missing = (
        "1 call of get_weather, credited to another expected call (#0); none left for this one"
    )
    assert summary(failed) == (
        f'<span class="reason" title="get_weather: {missing}">{missing}</span> '
        '<span class="small muted">+1 more</span>'
    )
    opened = failed[failed.index("</summary>") :]
    labels = re.findall(r'<code class="call">([^<]*)</code>', opened)
    assert labels == [
        "get_weather(city=&quot;Tokyo&quot;)",
        "final text contains &quot;Tokyo&quot;",
    ]
    assert f"missing call:</span> {missing}" in opened
    assert "final text:</span> the final text does not contain it: &quot;Paris only&quot;" in opened
    # Each predicate still leads to the runs failing it.
    assert "?case=weather-two-cities&amp;predicate=get_weather%28city%3D%22Tokyo%22%29" in opened


def test_a_reason_is_shown_escaped(as_user, viewer, suite, submit):
    bad = '<img src=x onerror="alert(1)">'
    run = {
        "case": "weather-two-cities",
        "batches": [[{"name": "get_weather", "arguments": {"city": bad}}]],
    }
    submission = submit(suite, [run])
    html = text(as_user(viewer).get(url(submission)))
    [row] = rows(html)
    assert "<img" not in html
    assert "got &quot;&lt;img src=x onerror=" in summary(row)


# --- meta columns and the tool filter ----------------------------------------------------------

META_RUNS = [
    {**TRIALS[0], "meta": {"reward": 1.0, "model": "m-<1>", "nested": {"a": 1}}},
    {**TRIALS[2], "meta": {"reward": 0.0, "user_cost": 0.0035475000000000003}},
    {**TRIALS[3], "meta": {"reward": 1, "flag": True, "none": None}},
]


def test_runs_keep_their_scalar_meta_values_and_the_submission_its_keys_and_tools(suite, submit):
    submission = submit(suite, META_RUNS)
    stored = [run.meta_values for run in Run.objects.filter(submission=submission).order_by("seq")]
    assert stored == [
        {"reward": 1.0, "model": "m-<1>"},
        {"reward": 0.0, "user_cost": 0.0035475000000000003},  # the float that reads as written
        {"reward": 1, "flag": True, "none": None},
    ]
    assert submission.meta_keys == ["flag", "model", "none", "reward", "user_cost"]
    assert submission.tools_seen == ["get_weather"]


def test_meta_values_and_the_names_seen_are_bounded():
    meta = {"long": "x" * 1000, "k" * 65: 1, "list": [1], **{f"n{i}": i for i in range(50)}}
    kept = meta_values(meta)
    assert len(kept) == META_VALUES_KEPT
    assert kept["long"] == "x" * META_TEXT_LIMIT
    assert "k" * 65 not in kept
    assert "list" not in kept
    seen: set[str] = set()
    note_seen(seen, (f"tool{i}" for i in range(1000)))
    note_seen(seen, ["t" * 201])
    assert len(seen) == SEEN_LIMIT


def test_columns_chosen_in_the_address_show_each_runs_meta_values(as_user, viewer, suite, submit):
    submission = submit(suite, META_RUNS)
    client = as_user(viewer)
    html = text(client.get(url(submission), {"columns": "reward,model,missing"}))
    headers = re.findall(r'<th class="meta-column">([^<]*)</th>', html)
    assert headers == ["reward", "model", "missing"]
    cells = [re.findall(r'<td class="meta-column">(.*?)</td>', row) for row in rows(html)]
    dash = '<span class="muted">—</span>'
    assert cells == [
        ["1.0", "m-&lt;1&gt;", dash],
        ["0.0", dash, dash],
        ["1", dash, dash],
    ]
    # The choices: every meta key the runs have, and the one asked for that none has.
    boxes = re.findall(
        r'<input type="checkbox" name="columns" value="([^"]*)"[^>]*?( checked)?>', html
    )
    assert boxes == [
        ("flag", ""),
        ("model", " checked"),
        ("none", ""),
        ("reward", " checked"),
        ("user_cost", ""),
        ("missing", " checked"),
    ]
    # Ticked in the form, they come one parameter each; the address joins them.
    response = client.get(url(submission), {"columns": ["user_cost", "flag"]}, headers=TABLE)
    assert response["HX-Push-Url"] == f"{url(submission)}?columns=user_cost%2Cflag"
    cells = [re.findall(r'<td class="meta-column">(.*?)</td>', row) for row in rows(text(response))]
    assert cells == [[dash, dash], ["0.0035475", dash], [dash, "true"]]


def test_columns_are_not_a_filter_and_are_bounded():
    filters = RunFilterSet({"columns": " reward , ,reward," + "x" * 65 + ",a,b,c,d,e,f"})
    assert filters.column_names == ("reward", "a", "b", "c", "d")
    assert not filters.active
    assert filters.as_query() == {"columns": "reward,a,b,c,d"}


def test_the_tool_filter_offers_the_tools_the_runs_called(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored)))
    assert 'list="tools-seen"' in html
    datalist = re.search(r'<datalist id="tools-seen">(.*?)</datalist>', html)[1]
    assert re.findall(r'<option value="([^"]*)">', datalist) == ["get_weather"]


def test_the_table_swaps_keep_the_section_in_view(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored)))
    assert 'hx-swap="innerHTML show:#runs-section:top"' in html
    assert f'action="/submissions/{scored.pk}/#runs-section"' in html


def test_the_stored_runs_get_their_meta_values_from_the_migration(suite, submit):
    submission = submit(suite, META_RUNS)
    Run.objects.filter(submission=submission).update(meta_values={})
    submission.meta_keys, submission.tools_seen = [], []
    submission.save()
    migration = importlib.import_module("scoring.migrations.0010_run_meta_values_and_tools_seen")
    migration.fill(apps, None)
    submission.refresh_from_db()
    assert submission.meta_keys == ["flag", "model", "none", "reward", "user_cost"]
    assert submission.tools_seen == ["get_weather"]
    first = Run.objects.filter(submission=submission).order_by("seq").first()
    assert first.meta_values == {"reward": 1.0, "model": "m-<1>"}


def test_the_table_with_columns_reads_no_documents_and_the_same_queries_at_any_size(
    as_user, viewer, suite, submit, django_assert_max_num_queries
):
    client = as_user(viewer)
    counts = []
    for count in (20, 200):
        # Copies: the runs of ``many_runs`` are shared by other tests.
        lines = [
            {**line, "meta": {"reward": i % 2, "model": "m"}} if isinstance(line, dict) else line
            for i, line in enumerate(many_runs(count))
        ]
        submission = submit(suite, lines)
        query = {"columns": "reward,model", "verdict": "fail"}
        # With the results against earlier versions, the team's review labels and those on
        # the page's runs, the causes of the most common failures, and (the runs have a
        # reward) their agreement with it, counted once.
        with django_assert_max_num_queries(19) as page:
            assert client.get(url(submission), query).status_code == 200
        with django_assert_max_num_queries(11) as table:
            client.get(url(submission), query, headers=TABLE)
        for queries in (page, table):
            assert not reads_documents(queries.captured_queries)
        counts.append((len(page.captured_queries), len(table.captured_queries)))
    assert counts[0] == counts[1]


# --- the CSV --------------------------------------------------------------------------------


def csv_rows(response) -> list[dict]:
    assert response.streaming
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_the_csv_has_full_predicates_reasons_causes_and_comments(
    as_user, team, admin, editor, viewer, submit
):
    document = small_document("long values")
    long_city = "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch, Wales, UK"
    document["cases"][0]["expected_calls"][0]["required_args"] = {"city": long_city}
    suite = services.create_suite(team, document, admin)
    run = {
        "case": "only-case",
        "batches": [[{"name": "get_weather", "arguments": {"city": "Paris"}}]],
        "meta": {"reward": 0.0, "model": "=m"},
    }
    submission = submit(suite, [run])
    stored = submission.runs.get()
    decisions.set_status(submission.runs.all(), "regression", editor)
    decisions.comment(stored, "wrong city", editor)
    decisions.comment(stored, "=1+1 seen twice", viewer)
    response = as_user(viewer).get(url(submission, "runs.csv"), {"columns": "model,reward"})
    [row] = csv_rows(response)
    header = list(row)
    # reward is a column of its own, after the verdict: a chosen one is not repeated
    assert header[header.index("tags") + 1 : header.index("failing predicates")] == ["model"]
    assert header.count("reward") == 1
    assert row["model"] == "'=m"  # formula-guarded, as every cell
    assert row["reward"] == "0"
    assert row["failing predicates"] == f'get_weather(city="{long_city}")'
    assert "…" not in row["failing predicates"]
    # The matcher's reason, as stored (it shortens the values it quotes).
    assert row["reasons"] == PredicateResult.objects.get().detail
    assert row["reasons"].startswith("get_weather was called in batch 0: city: expected")
    assert (row["cause kinds"], row["cause tools"], row["cause arguments"]) == (
        "argument_value",
        "get_weather",
        "city",
    )
    assert row["review"] == "regression"
    assert row["comments"] == f"{editor.username}: wrong city\n{viewer.username}: =1+1 seen twice"


def test_the_csv_reads_comments_once_per_batch(
    as_user, viewer, editor, suite, submit, django_assert_max_num_queries
):
    small = submit(suite, many_runs(20))
    large = submit(suite, many_runs(200))
    client = as_user(viewer)
    counts = []
    for submission in (small, large):
        for run in submission.runs.all()[:30]:
            decisions.comment(run, "seen", editor)
        with django_assert_max_num_queries(12) as queries:
            rows_ = csv_rows(client.get(url(submission, "runs.csv")))
        assert sum(row["comments"] == f"{editor.username}: seen" for row in rows_) >= 20
        assert not reads_documents(queries.captured_queries)
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]
