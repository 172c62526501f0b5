"""What runs cost, stored and summed (docs/formats.md#usage, docs/api.md#usage): each run's
usage in its columns and its report, a submission's totals and percentiles, costs at the
catalogue's prices or the team's own, and the CSV's columns."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from cases import services
from scoring.importers.costs import catalogue_price
from scoring.models import ModelPrice, Run, Status

SUITE = {
    "schema": "casebook.suite/1",
    "name": "costed",
    "cases": [{"key": k, "expectations": [{"type": "final_text_contains", "text": "ok"}]}
              for k in ("a", "b", "c")],
}  # fmt: skip


def completion(model: str, prompt: int, completion_tokens: int, cached: int = 0) -> dict:
    return {
        "object": "chat.completion",
        "model": model,
        "choices": [{"message": {"role": "assistant", "content": "ok"}}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def line(case: str, *completions: dict) -> dict:
    return {"case": case, "messages": [{"role": "user", "content": "q"}, *completions]}


@pytest.fixture
def costed(team, admin):
    return services.create_suite(team, SUITE, admin)


@pytest.fixture
def scored(submit, costed):
    lines = [
        line("a", completion("gpt-4o-2024-08-06", 1000, 100, cached=400)),
        line(
            "b", completion("gpt-4o-2024-08-06", 3000, 300), completion("gpt-4o-2024-08-06", 10, 1)
        ),
        {"case": "c", "batches": [], "final_text": "nope"},  # records no usage
    ]
    made = submit(costed, lines)
    assert made.status == Status.DONE
    return made


def gpt_4o(input_tokens: int, output_tokens: int, cached: int = 0) -> float:
    price = catalogue_price("gpt-4o-2024-08-06")
    return price.cost(input_tokens, output_tokens, cached)


def test_each_runs_usage_is_stored_in_its_columns_and_costed(scored):
    runs = {run.case_key: run for run in Run.objects.filter(submission=scored)}
    a, b, c = runs["a"], runs["b"], runs["c"]
    assert (a.input_tokens, a.output_tokens, a.cached_input_tokens, a.model_calls) == (
        1000, 100, 400, 1
    )  # fmt: skip
    assert a.cost_usd == pytest.approx(gpt_4o(1000, 100, 400))
    assert a.cost_usd < gpt_4o(1000, 100)  # cached tokens are cheaper
    assert (b.input_tokens, b.output_tokens, b.model_calls) == (3010, 301, 2)
    assert a.model_names == "\ngpt-4o-2024-08-06\n"
    assert (c.input_tokens, c.model_calls, c.cost_usd, c.model_names) == (None, None, None, None)


def test_the_api_gives_each_reports_usage_and_the_submissions_summary(scored, viewer):
    client = APIClient()
    client.force_login(viewer)
    results = client.get(f"/api/submissions/{scored.pk}/results/").json()["results"]
    by_case = {r["case"]: r["usage"] for r in results}
    assert by_case["a"]["input_tokens"] == 1000
    assert by_case["a"]["models"] == ["gpt-4o-2024-08-06"]
    assert by_case["c"] == {
        "input_tokens": None, "output_tokens": None, "cached_input_tokens": None,
        "reasoning_tokens": None, "model_calls": None, "duration_ms": None,
        "tool_duration_ms": None, "cost_usd": None, "models": [],
    }  # fmt: skip
    usage = client.get(f"/api/submissions/{scored.pk}/").json()["usage"]
    assert usage["runs_with_usage"] == 2
    totals = usage["totals"]
    assert (totals["input_tokens"], totals["output_tokens"], totals["model_calls"]) == (
        4010,
        401,
        3,
    )
    assert totals["reasoning_tokens"] is None  # no run recorded it
    assert totals["models"] == ["gpt-4o-2024-08-06"]
    cost = gpt_4o(1000, 100, 400) + gpt_4o(3010, 301)
    assert totals["cost_usd"] == pytest.approx(cost)
    # Nearest rank of two: the median is the lower, the 95th the higher.
    assert (usage["p50"]["input_tokens"], usage["p95"]["input_tokens"]) == (1000, 3010)
    assert usage["cost_per_passing_run"] == pytest.approx(cost / 2)  # a and b pass
    assert usage["unpriced_models"] == []


def test_a_teams_own_price_comes_before_the_catalogues(submit, costed, team):
    ModelPrice.objects.create(team=team, model="my-llama", input_per_mtok=1.0, output_per_mtok=2.0)
    made = submit(costed, [line("a", completion("my-llama", 1_000_000, 500_000))])
    assert Run.objects.get(submission=made).cost_usd == pytest.approx(1.0 + 1.0)


def test_a_model_with_no_price_has_no_cost_and_is_named(submit, costed, viewer):
    made = submit(costed, [line("a", completion("mystery-model-9", 10, 10))])
    assert Run.objects.get(submission=made).cost_usd is None
    client = APIClient()
    client.force_login(viewer)
    usage = client.get(f"/api/submissions/{made.pk}/").json()["usage"]
    assert usage["unpriced_models"] == ["mystery-model-9"]
    assert usage["totals"]["cost_usd"] is None


def test_a_canonical_runs_own_usage_and_cost_are_kept(submit, costed):
    given = {"input_tokens": 5, "output_tokens": 6, "model_calls": 1, "cost_usd": 0.5,
             "duration_ms": 1200, "models": ["x"]}  # fmt: skip
    made = submit(costed, [{"case": "a", "batches": [], "final_text": "ok", "usage": given}])
    run = Run.objects.get(submission=made)
    assert (run.cost_usd, run.duration_ms, run.input_tokens) == (0.5, 1200.0, 5)


def test_the_time_in_tools_is_stored_summed_and_in_each_export(submit, costed, viewer, as_user):
    """docs/formats.md#usage: a run's ``tool_duration_ms``, the sum of its calls' times; a
    run that recorded none has none (not 0)."""
    timed = {"case": "a", "final_text": "ok", "batches": [[
        {"name": "t", "duration_ms": 12.5}, {"name": "t", "duration_ms": 30.0}, {"name": "t"},
    ]], "usage": {"duration_ms": 900.0, "tool_duration_ms": 42.5}}  # fmt: skip
    other = {**timed, "case": "b", "usage": {"duration_ms": 50.0, "tool_duration_ms": 7.5}}
    made = submit(costed, [timed, other, {"case": "c", "batches": [], "final_text": "ok"}])
    stored = dict(Run.objects.filter(submission=made).values_list("case_key", "tool_duration_ms"))
    assert stored == {"a": 42.5, "b": 7.5, "c": None}
    client = APIClient()
    client.force_login(viewer)
    usage = client.get(f"/api/submissions/{made.pk}/").json()["usage"]
    assert (usage["totals"]["tool_duration_ms"], usage["p95"]["tool_duration_ms"]) == (50.0, 42.5)
    reports = client.get(f"/api/submissions/{made.pk}/results/").json()["results"]
    assert {r["case"]: r["usage"]["tool_duration_ms"] for r in reports}["a"] == 42.5
    response = as_user(viewer).get(f"/submissions/{made.pk}/runs.csv")
    rows = csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode()))
    assert {row["case"]: row["tool duration ms"] for row in rows} == {
        "a": "42.5",
        "b": "7.5",
        "c": "",
    }


def test_a_canonical_runs_usage_that_is_not_figures_is_refused_by_field(submit, costed):
    made = submit(costed, [{"case": "a", "batches": [], "usage": {"input_tokens": "many"}}])
    reason = made.invalid_lines.get().reason
    assert "usage.input_tokens" in reason


def test_the_csv_has_a_column_per_figure(scored, as_user, viewer):
    response = as_user(viewer).get(f"/submissions/{scored.pk}/runs.csv")
    body = b"".join(response.streaming_content).decode()
    rows = {row["case"]: row for row in csv.DictReader(io.StringIO(body))}
    assert rows["a"]["input tokens"] == "1000"
    assert rows["a"]["model calls"] == "1"
    assert rows["c"]["cost usd"] == ""
    assert json.loads(rows["b"]["output tokens"]) == 301


def test_a_comparison_gives_the_deltas_and_the_cases_whose_cost_changed_most(submit, costed):
    from scoring.results.comparison import Comparison, scope_of
    from scoring.results.trends import suite_trend
    from scoring.results.usage import comparison_figures

    model = "gpt-4o-2024-08-06"
    baseline = submit(costed, [line("a", completion(model, 100, 10)),
                               line("b", completion(model, 100, 10))])  # fmt: skip
    candidate = submit(costed, [line("a", completion(model, 100, 10)),
                                line("b", completion(model, 9000, 900))])  # fmt: skip
    made = comparison_figures(Comparison(baseline, candidate, scope_of(baseline, candidate)))
    rows = dict(made["rows"])
    assert rows["Pass rate"]["change"] == 0
    assert rows["Tokens per run"]["baseline"] == 110
    assert rows["Tokens per run"]["candidate"] == (110 + 9900) / 2
    assert rows["Cost per run"]["change"] == pytest.approx(
        (gpt_4o(9000, 900) - gpt_4o(100, 10)) / 2
    )
    by_cost = dict(made["changed"])["Cost per run changed most"]
    assert [d["row"].case for d in by_cost] == ["b"]  # a's cost did not change
    points = suite_trend(costed).points
    assert [p.cost for p in points] == [
        pytest.approx(gpt_4o(100, 10)),
        pytest.approx(rows["Cost per run"]["candidate"]),
    ]


def test_a_run_with_model_calls_but_no_tokens_says_what_was_not_recorded(
    submit, costed, as_user, viewer
):
    """τ-bench's results keep the messages, not their tokens or times: the run page says
    so, rather than dashes and an unexplained "cost unknown"."""
    answer = {"role": "assistant", "content": "ok"}
    made = submit(costed, [{"case": "a", "messages": [{"role": "user", "content": "q"}, answer]}])
    run = Run.objects.get(submission=made)
    assert (run.model_calls, run.input_tokens) == (1, None)
    html = as_user(viewer).get(f"/submissions/{made.pk}/runs/{run.pk}/").content.decode()
    assert "tokens not recorded" in html
    assert "time not recorded" in html
    assert "cost unknown: no tokens recorded" in html
    summary = as_user(viewer).get(f"/submissions/{made.pk}/").content.decode()
    assert "this file records neither tokens nor times" in summary


def test_an_upload_still_being_scored_has_no_usage_yet_and_sums_none_of_its_runs(scored, viewer):
    """A client polls the status of an upload being scored: its runs are summed once, when
    its scoring ends, not at each ask."""
    client = APIClient()
    client.force_login(viewer)
    submissions = scored.__class__.objects.filter(pk=scored.pk)
    submissions.update(status=Status.SCORING, usage=None)
    url = f"/api/submissions/{scored.pk}/"

    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).json()["usage"] is None
    assert not [q["sql"] for q in queries if "scoring_run" in q["sql"]]

    submissions.update(status=Status.DONE)
    assert client.get(url).json()["usage"]["runs_with_usage"] == 2
