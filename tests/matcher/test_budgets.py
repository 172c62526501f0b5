"""Budgets (docs/matcher.md#budgets): a run's recorded usage at most each limit, equal
passing; a figure not recorded leaves the budget undecided (error, "not recorded"); a
suite's budgets are its cases' defaults; failures have the cause ``budget``."""

import pytest

from scoring.matcher import ERROR, FAIL, PASS, InvalidInput, load_run, load_suite, score

USAGE = {
    "input_tokens": 1000,
    "output_tokens": 200,
    "cached_input_tokens": None,
    "reasoning_tokens": None,
    "model_calls": 3,
    "duration_ms": 4500.0,
    "cost_usd": 0.05,
    "models": ["gpt-4o"],
}


def suite(expectations, top=()):
    return load_suite({
        "name": "budgets",
        **({"expectations": list(top)} if top else {}),
        "cases": [{"key": "c", "expectations": list(expectations)}],
    })  # fmt: skip


def verdict(expectations, usage=USAGE, top=()):
    run = load_run({"case": "c", "batches": [], "usage": usage})
    report = score(suite(expectations, top).case("c"), run)
    return report.verdict, report


@pytest.mark.parametrize(
    "budget",
    [
        {"type": "max_model_calls", "max": 3},
        {"type": "max_tokens", "input": 1000},
        {"type": "max_tokens", "output": 200, "total": 1200},
        {"type": "max_duration_seconds", "max": 4.5},
        {"type": "max_cost_usd", "max": 0.05},
    ],
)
def test_a_figure_equal_to_its_limit_passes_and_one_over_fails_with_cause_budget(budget):
    assert verdict([budget])[0] == PASS
    tighter = {k: v - 1 if isinstance(v, int) else v / 2 for k, v in budget.items() if k != "type"}
    found, report = verdict([{**budget, **tighter}])
    assert found == FAIL
    (failed,) = report.failures
    assert failed.cause.kind == "budget"
    assert "over the" in failed.detail


@pytest.mark.parametrize(
    ("budget", "figure"),
    [
        ({"type": "max_model_calls", "max": 3}, "model_calls"),
        ({"type": "max_tokens", "total": 10**6}, "output_tokens"),
        ({"type": "max_duration_seconds", "max": 60}, "duration_ms"),
        ({"type": "max_cost_usd", "max": 1}, "cost_usd"),
    ],
)
def test_a_figure_not_recorded_leaves_the_budget_undecided(budget, figure):
    found, report = verdict([budget], {**USAGE, figure: None})
    assert found == ERROR
    (failed,) = report.failures
    assert "not recorded" in failed.error


def test_a_run_with_no_usage_at_all_is_undecided_too():
    run = load_run({"case": "c", "batches": []})
    report = score(suite([{"type": "max_cost_usd", "max": 1}]).case("c"), run)
    assert report.verdict == ERROR


def test_a_suites_budgets_are_defaults_a_case_replaces_by_type():
    top = [{"type": "max_cost_usd", "max": 0.01}, {"type": "max_model_calls", "max": 2}]
    found, report = verdict([], top=top)
    assert found == FAIL
    assert {p.label for p in report.failures} == {
        "cost (USD) at most 0.01",
        "model calls at most 2",
    }
    found, report = verdict([{"type": "max_cost_usd", "max": 1}], top=top)
    assert [p.label for p in report.failures] == ["model calls at most 2"]
    assert [p.index for p in report.predicates if p.kind == "expectation"] == [0, 1]


@pytest.mark.parametrize(
    ("budget", "path"),
    [
        ({"type": "max_model_calls"}, "cases[0].expectations[0].max"),
        ({"type": "max_model_calls", "max": 1.5}, "cases[0].expectations[0].max"),
        ({"type": "max_cost_usd", "max": -1}, "cases[0].expectations[0].max"),
        ({"type": "max_tokens"}, "cases[0].expectations[0]"),
        ({"type": "max_tokens", "input": "many"}, "cases[0].expectations[0].input"),
    ],
)
def test_a_budget_without_a_sound_limit_is_refused_by_path(budget, path):
    with pytest.raises(InvalidInput) as caught:
        suite([budget])
    assert [p.path for p in caught.value.problems] == [path]
