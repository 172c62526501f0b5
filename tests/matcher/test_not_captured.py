"""Runs whose recording left content out (docs/matcher.md#content-not-captured): what the
tool names decide still stands, the rest is ``error``, never the agent's ``fail``."""

import pytest

from scoring.matcher import ERROR, FAIL, PASS, InvalidInput, load_run, load_suite, score

ARGUMENTS = "tool arguments were not captured: set CAPTURE=on"
TEXT = "the final text was not captured: set CAPTURE=on"


def case(**fields):
    suite = load_suite(
        {
            "schema": "casebook.suite/1",
            "name": "s",
            "cases": [
                {
                    "key": "weather",
                    "prompt": "Weather in Paris?",
                    "expected_calls": [{"name": "get_weather", "required_args": {"city": "Paris"}}],
                    **fields,
                }
            ],
        }
    )
    return suite.cases[0]


def run(calls, final_text=None, not_captured=None, error=None):
    data = {
        "case": "weather",
        "batches": [
            [{"name": name, "arguments": None, "arguments_captured": False} for name in calls]
        ]
        if calls
        else [],
        "final_text": final_text,
        "error": error,
    }
    if not_captured is not None:
        data["not_captured"] = not_captured
    return load_run(data)


def test_arguments_not_captured_is_an_error_naming_the_setting():
    report = score(case(), run(["get_weather"], not_captured={"arguments": ARGUMENTS}))
    assert report.verdict == ERROR
    assert report.error == ARGUMENTS
    [call] = [p for p in report.predicates if p.kind == "expected_call"]
    assert (call.passed, call.error, call.cause.kind) == (False, ARGUMENTS, "not_captured")


def test_the_same_run_recorded_without_saying_so_fails():
    assert score(case(), run(["get_weather"])).verdict == FAIL


def test_recorded_arguments_are_judged_beside_unrecorded_ones():
    """Only the call whose arguments were not recorded is given the benefit of the doubt:
    it may be either expected call, but the recorded Lyon is neither, and that is the
    agent's failure."""
    two = load_suite(
        {
            "schema": "casebook.suite/1",
            "name": "s",
            "cases": [
                {
                    "key": "weather",
                    "prompt": "p",
                    "expected_calls": [
                        {"name": "get_weather", "required_args": {"city": "Paris"}},
                        {"name": "get_weather", "required_args": {"city": "Tokyo"}},
                    ],
                }
            ],
        }
    ).cases[0]
    data = {
        "case": "weather",
        "batches": [
            [
                {"name": "get_weather", "arguments": {"city": "Lyon"}},
                {"name": "get_weather", "arguments": None, "arguments_captured": False},
            ]
        ],
        "not_captured": {"arguments": ARGUMENTS},
    }
    report = score(two, load_run(data))
    assert report.verdict == FAIL
    causes = sorted(p.cause.kind for p in report.predicates if not p.passed)
    assert causes == ["argument_value", "not_captured"]


def test_a_tool_never_called_still_fails():
    report = score(case(), run(["get_time"], not_captured={"arguments": ARGUMENTS}))
    assert report.verdict == FAIL
    [call] = [p for p in report.predicates if p.kind == "expected_call"]
    assert call.error is None
    assert call.cause.kind == "no_call"


def test_names_decide_one_predicate_the_other_is_marked_not_captured():
    checks = [{"type": "called_tool", "tool": "book"}]
    report = score(
        case(expectations=checks), run(["get_weather"], not_captured={"arguments": ARGUMENTS})
    )
    assert report.verdict == FAIL
    causes = {p.kind: p.cause.kind for p in report.predicates if not p.passed}
    assert causes == {"expected_call": "not_captured", "expectation": "no_call"}


@pytest.mark.parametrize(
    "check",
    [
        {"type": "final_text_contains", "text": "18"},
        {"type": "final_number_equals", "value": 18},
        {"type": "final_text_matches", "regex": "[0-9]+"},
    ],
)
def test_final_text_not_captured(check):
    captured = {"arguments": ARGUMENTS, "final_text": TEXT}
    report = score(case(expectations=[check]), run(["get_weather"], not_captured=captured))
    assert report.verdict == ERROR
    assert report.error == f"{ARGUMENTS}; {TEXT}"


def test_a_run_error_still_fails():
    report = score(
        case(), run(["get_weather"], not_captured={"arguments": ARGUMENTS}, error="cut off")
    )
    assert report.verdict == FAIL


def test_a_passing_run_passes():
    data = {
        "case": "weather",
        "batches": [[{"name": "get_weather", "arguments": {"city": "Paris"}}]],
        "not_captured": {"final_text": TEXT},
    }
    assert score(case(), load_run(data)).verdict == PASS


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ([], "not_captured"),
        ({"result": "x"}, "not_captured.result"),
        ({"arguments": ""}, "not_captured.arguments"),
    ],
)
def test_not_captured_is_checked(value, path):
    with pytest.raises(InvalidInput) as caught:
        load_run({"case": "c", "batches": [], "not_captured": value})
    assert caught.value.problems[0].path == path


def test_each_predicate_names_what_it_lacked():
    captured = {"arguments": ARGUMENTS, "final_text": TEXT}
    checks = [{"type": "final_text_contains", "text": "18"}]
    report = score(case(expectations=checks), run(["get_weather"], not_captured=captured))
    details = {p.kind: p.detail for p in report.predicates if not p.passed}
    assert details == {
        "expected_call": f"not judged: {ARGUMENTS}",
        "expectation": f"not judged: {TEXT}",
    }


def test_calls_not_captured_leave_nothing_about_calls_to_judge():
    calls = "1 model turn asked for tool calls that were not captured: set CAPTURE=on"
    checks = [{"type": "tool_call_count", "tool": "get_weather", "min": 1}]
    report = score(
        case(expectations=checks, extra_calls="forbid"), run([], not_captured={"calls": calls})
    )
    assert report.verdict == ERROR
    assert {p.cause.kind for p in report.predicates if not p.passed} == {"not_captured"}
    assert report.error == calls


BATCHES = "no model call was recorded, so which tool calls were made together is not known"


def ordered_case():
    return case(
        expected_calls=[
            {"name": "add", "required_args": {"a": 2}, "ordered": True},
            {"name": "add", "required_args": {"a": 5}, "ordered": True, "depends_on_result": True},
        ]
    )


def one_batch(*arguments, not_captured=None):
    data = {"case": "weather", "batches": [[{"name": "add", "arguments": a} for a in arguments]]}
    if not_captured is not None:
        data["not_captured"] = not_captured
    return load_run(data)


def test_batches_not_captured_leave_order_and_dependency_unjudged():
    """Both calls in one batch because no model turn said which came after which result:
    the dependency is not judged; the same batch recorded as such fails it."""
    report = score(ordered_case(), one_batch({"a": 2}, {"a": 5}, not_captured={"batches": BATCHES}))
    assert report.verdict == ERROR
    (dependent,) = [p for p in report.predicates if not p.passed]
    assert (dependent.index, dependent.detail) == (1, f"not judged: {BATCHES}")
    assert score(ordered_case(), one_batch({"a": 2}, {"a": 5})).verdict == FAIL


def test_batches_not_captured_still_fail_on_the_arguments_recorded():
    report = score(ordered_case(), one_batch({"a": 2}, {"a": 6}, not_captured={"batches": BATCHES}))
    assert report.verdict == FAIL
