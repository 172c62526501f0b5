"""Every failed predicate carries ``cause`` (docs/formats.md#cause): its kind, the tool
concerned and the argument's path, without the values, so that failures group by what went
wrong."""

from __future__ import annotations

import pytest

from scoring.matcher import failure_signature

from .builders import call, expected, null_call, score_case


def failed_causes(report) -> list[dict]:
    return [p.to_dict()["cause"] for p in report.predicates if not p.passed]


def cause(kind, tool=None, argument=None) -> dict:
    return {"kind": kind, "tool": tool, "argument": argument}


WEATHER = expected("get_weather", {"city": "Paris"})


@pytest.mark.parametrize(
    ("case_fields", "batches", "run_fields", "causes"),
    [
        pytest.param(
            {"expected_calls": [WEATHER]},
            [[call("search", {"q": "x"})]],
            {},
            [cause("no_call", "get_weather")],
            id="no call of the tool",
        ),
        pytest.param(
            {"expected_calls": [WEATHER]},
            [[call("get_weather", {"city": "Lyon"})]],
            {},
            [cause("argument_value", "get_weather", "city")],
            id="a wrong value",
        ),
        pytest.param(
            {"expected_calls": [WEATHER]},
            [[call("get_weather", {"town": "Paris"})]],
            {},
            [cause("argument_missing", "get_weather", "city")],
            id="a missing argument",
        ),
        pytest.param(
            {"expected_calls": [expected("get_weather", {"city": "Paris"}, exact_args=True)]},
            [[call("get_weather", {"city": "Paris", "units": "C"})]],
            {},
            [cause("argument_unexpected", "get_weather", "units")],
            id="an argument exact_args forbids",
        ),
        pytest.param(
            {"expected_calls": [expected("get_weather", {"city": {"$absent": True}})]},
            [[call("get_weather", {"city": "Paris"})]],
            {},
            [cause("argument_unexpected", "get_weather", "city")],
            id="an argument that must not be sent",
        ),
        pytest.param(
            {"expected_calls": [WEATHER]},
            [[null_call("get_weather")]],
            {},
            [cause("arguments_unparsed", "get_weather")],
            id="arguments that could not be parsed",
        ),
        pytest.param(
            {
                "expected_calls": [
                    expected("book", {"flights": [{"date": "2024-05-01", "to": "JFK"}]})
                ]
            },
            [[call("book", {"flights": [{"date": "2024-05-02", "to": "JFK"}]})]],
            {},
            [cause("argument_value", "book", "flights[0].date")],
            id="a nested value, by its path",
        ),
        pytest.param(
            {
                "expected_calls": [
                    expected("a", ordered=True),
                    expected("b", ordered=True),
                ]
            },
            [[call("b")], [call("a")]],
            {},
            [cause("order", "b")],
            id="out of order",
        ),
        pytest.param(
            {"expected_calls": [expected("a"), expected("b", depends_on_result=True)]},
            [[call("a"), call("b")]],
            {},
            [cause("dependency", "b")],
            id="in the batch of the call whose result it needs",
        ),
        pytest.param(
            {"expected_calls": [expected("a"), expected("a")]},
            [[call("a")]],
            {},
            [cause("count", "a")],
            id="one call for two expected calls",
        ),
        pytest.param(
            {"expected_calls": [expected("a", {"x": 1}), expected("a", {"x": 2})]},
            [[call("a", {"x": 1})]],
            {},
            [cause("missing_call", "a")],
            id="every call of the tool credited to another expected call",
        ),
        pytest.param(
            {"expected_calls": [expected("a")], "extra_calls": "forbid"},
            [[call("a"), call("rm")]],
            {},
            [cause("extra_call", "rm")],
            id="a call extra_calls forbids",
        ),
        pytest.param(
            {"expectations": [{"type": "did_not_call_tool", "tool": "rm"}]},
            [[call("rm")]],
            {},
            [cause("forbidden_call", "rm")],
            id="a tool it must not call",
        ),
        pytest.param(
            {"expectations": [{"type": "no_tool_calls"}]},
            [[call("ls")]],
            {},
            [cause("forbidden_call", "ls")],
            id="any call when none is allowed",
        ),
        pytest.param(
            {"expectations": [{"type": "called_tool", "tool": "ls"}]},
            [],
            {},
            [cause("no_call", "ls")],
            id="called_tool never called",
        ),
        pytest.param(
            {"expectations": [{"type": "called_tool_with", "tool": "ls", "args": {"p": "/"}}]},
            [[call("ls", {"p": "/tmp"})]],
            {},
            [cause("argument_value", "ls", "p")],
            id="called_tool_with a wrong value",
        ),
        pytest.param(
            {"expectations": [{"type": "tool_call_count", "tool": "ls", "max": 1}]},
            [[call("ls")], [call("ls")]],
            {},
            [cause("count", "ls")],
            id="too many calls of a tool",
        ),
        pytest.param(
            {"expectations": [{"type": "tool_call_count", "min": 1}]},
            [],
            {},
            [cause("count")],
            id="too few calls of any tool",
        ),
        pytest.param(
            {"expectations": [{"type": "called_tools_in_order", "tools": ["a", "b"]}]},
            [[call("b")], [call("a")]],
            {},
            [cause("order", "b")],
            id="tools out of order",
        ),
        pytest.param(
            {"expectations": [{"type": "called_tools_in_order", "tools": ["a", "b"]}]},
            [[call("a")]],
            {},
            [cause("no_call", "b")],
            id="a tool of the order never called",
        ),
        pytest.param(
            {"expectations": [{"type": "final_text_contains", "text": "done"}]},
            [],
            {"final_text": "failed"},
            [cause("final_text")],
            id="final text",
        ),
        pytest.param(
            {"expectations": [{"type": "final_number_equals", "value": 4}]},
            [],
            {"final_text": None},
            [cause("final_number")],
            id="final number without final text",
        ),
        pytest.param(
            {"expectations": [{"type": "no_error"}]},
            [],
            {"error": "timeout"},
            [cause("run_error"), cause("run_error")],
            id="a run error (the run predicate and no_error)",
        ),
    ],
)
def test_each_failure_has_its_cause(case_fields, batches, run_fields, causes):
    report = score_case(case_fields, batches, **run_fields)
    assert failed_causes(report) == causes


def test_passed_predicates_carry_no_cause():
    report = score_case({"expected_calls": [WEATHER]}, [[call("get_weather", {"city": "Paris"})]])
    assert report.verdict == "pass"
    assert all("cause" not in p.to_dict() for p in report.predicates)


def test_the_same_mistake_with_other_values_has_the_same_cause():
    first = score_case({"expected_calls": [WEATHER]}, [[call("get_weather", {"city": "Lyon"})]])
    second = score_case({"expected_calls": [WEATHER]}, [[call("get_weather", {"city": "Nice"})]])
    assert failed_causes(first) == failed_causes(second)
    assert first.failures[0].detail != second.failures[0].detail


def test_an_argument_name_with_a_colon_is_its_own_path():
    report = score_case(
        {"expected_calls": [expected("f", {"a: b": 1})]}, [[call("f", {"a: b": 2})]]
    )
    assert failed_causes(report) == [cause("argument_value", "f", "a: b")]


# --- signatures (docs/pipeline.md#signatures): the same failure across trials and submissions ---


def signature(case_fields, batches, **run_fields):
    return failure_signature(score_case(case_fields, batches, **run_fields))


def test_a_passing_run_has_no_signature():
    assert (
        signature({"expected_calls": [WEATHER]}, [[call("get_weather", {"city": "Paris"})]]) is None
    )


def test_the_same_failure_with_other_values_has_the_same_signature():
    lyon = signature({"expected_calls": [WEATHER]}, [[call("get_weather", {"city": "Lyon"})]])
    nice = signature(
        {"expected_calls": [WEATHER]}, [[call("get_weather", {"city": "Nice"})], [call("ls")]]
    )
    assert lyon == nice
    assert len(lyon) == 32


@pytest.mark.parametrize(
    ("case_fields", "batches"),
    [
        ({"expected_calls": [WEATHER]}, [[call("get_weather", {"town": "Lyon"})]]),  # missing
        ({"expected_calls": [WEATHER]}, []),  # no call
        ({"key": "other", "expected_calls": [WEATHER]}, [[call("get_weather", {"city": "X"})]]),
        (
            {"expected_calls": [WEATHER], "expectations": [{"type": "no_error"}]},
            [[call("get_weather", {"city": "Lyon"})]],
        ),
    ],
)
def test_another_cause_or_case_is_another_signature(case_fields, batches):
    wrong_city = signature({"expected_calls": [WEATHER]}, [[call("get_weather", {"city": "X"})]])
    run_fields = {"error": "boom"} if "expectations" in case_fields else {}
    if "key" in case_fields:
        run_fields["case"] = case_fields["key"]
    assert signature(case_fields, batches, **run_fields) != wrong_city
