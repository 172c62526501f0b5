"""Argument matchers (docs/matcher.md#argument-matchers): each matcher, combinations,
authoring errors, reports."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.matcher import InvalidInput, load_suite

from .builders import (
    call,
    expected,
    expected_call_results,
    make_case,
    make_run,
    only_expectation,
    score_case,
    suite_problem_paths,
)
from .builders import (
    case_doc as case,
)


def credited(required_args, arguments, **fields):
    """Whether one expected call f(required_args) is credited to a call f(arguments)."""
    report = score_case(
        {"expected_calls": [expected("f", required_args, **fields)]}, [[call("f", arguments)]]
    )
    return expected_call_results(report)[0].passed


def seen_by_called_tool_with(args, arguments):
    report = score_case(
        {"expectations": [{"type": "called_tool_with", "tool": "f", "args": args}]},
        [[call("f", arguments)]],
    )
    return only_expectation(report).passed


# --- each matcher ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "holds"),
    [("C", True), ("celsius", True), ("F", False), ("c", False), (None, False)],
)
def test_one_of_accepts_any_alternative(value, holds):
    assert credited({"unit": {"$one_of": ["C", "celsius"]}}, {"unit": value}) is holds


def test_one_of_alternatives_are_compared_by_json_meaning_and_may_be_matchers():
    args = {"n": {"$one_of": [2, {"$regex": "two|deux"}, {"k": {"$type": "string"}}]}}
    assert credited(args, {"n": 2.0})
    assert credited(args, {"n": "deux"})
    assert credited(args, {"n": {"k": "x"}})
    assert not credited(args, {"n": True})
    assert not credited(args, {"n": {"k": "x", "extra": 1}})  # nested values equal as a whole


@pytest.mark.parametrize(
    ("value", "holds"),
    [("2024-05-20", True), ("2024-05-20T10:00", False), ("x2024-05-20", False), (20240520, False)],
)
def test_regex_must_match_the_whole_string(value, holds):
    assert credited({"date": {"$regex": r"\d{4}-\d{2}-\d{2}"}}, {"date": value}) is holds


def test_regex_uses_re2_semantics():
    assert not credited({"d": {"$regex": r"\d+"}}, {"d": "\u0663"})  # \d is ASCII in RE2
    assert credited({"d": {"$regex": "(?i)paris"}}, {"d": "PARIS"})


@pytest.mark.parametrize(
    ("value", "holds"),
    [
        (1.1, True),
        (0.9, True),
        (1.0, True),
        (1.1000001, False),
        (1, True),
        ("1.0", False),
        (True, False),
    ],
)
def test_approx_is_inclusive_in_exact_decimals(value, holds):
    assert credited({"x": {"$approx": {"value": 1.0, "tolerance": 0.1}}}, {"x": value}) is holds


@pytest.mark.parametrize(
    ("ignore", "value", "holds"),
    [
        ([], "New York", True),
        ([], "new york", False),
        (["case"], "NEW YORK", True),
        (["case"], "NewYork", False),
        (["space"], "New\u00a0 York", True),
        (["case", "space"], "newyork", True),
        (["punctuation"], "New York.", True),
        (["punctuation"], "New-York", False),
        (["punctuation"], "New York!", False),
        (["case", "space", "punctuation"], "new_york", True),
    ],
)
def test_text_ignores_what_it_names(ignore, value, holds):
    matcher = {"$text": {"value": "New York", "ignore": ignore}}
    assert credited({"city": matcher}, {"city": value}) is holds


def test_text_punctuation_reads_single_quotes_as_double_and_folds_case_fully():
    assert credited(
        {"q": {"$text": {"value": 'say "hi"', "ignore": ["punctuation"]}}}, {"q": "say 'hi'"}
    )
    assert credited({"q": {"$text": {"value": "Straße", "ignore": ["case"]}}}, {"q": "STRASSE"})
    assert not credited({"q": {"$text": {"value": "5", "ignore": ["case"]}}}, {"q": 5})


@pytest.mark.parametrize(
    ("type_name", "good", "bad"),
    [
        ("string", "x", 1),
        ("number", 1.5, "1.5"),
        ("number", 3, True),
        ("integer", 5.0, 5.5),
        ("integer", 7, False),
        ("boolean", False, 0),
        ("array", [], {}),
        ("object", {}, []),
        ("null", None, "null"),
    ],
)
def test_type_checks_the_json_type(type_name, good, bad):
    assert credited({"v": {"$type": type_name}}, {"v": good})
    assert not credited({"v": {"$type": type_name}}, {"v": bad})
    assert not credited({"v": {"$type": type_name}}, {})


def test_optional_is_absent_or_matching():
    args = {"unit": {"$optional": {"$one_of": ["C", "F"]}}}
    assert credited(args, {})
    assert credited(args, {"unit": "F"})
    assert not credited(args, {"unit": "K"})
    assert not credited(args, {"unit": None})


def test_absent_means_not_sent():
    assert credited({"debug": {"$absent": True}}, {"other": 1})
    assert not credited({"debug": {"$absent": True}}, {"debug": False})
    assert not credited({"debug": {"$absent": True}}, {"debug": None})


def test_subset_recurses_into_objects_and_arrays_of_the_same_length():
    flights = {"$subset": [{"flight_number": "HAT136"}, {"flight_number": "HAT039"}]}
    recorded = [
        {"flight_number": "HAT136", "date": "2024-05-20", "origin": "JFK"},
        {"flight_number": "HAT039", "date": "2024-05-20"},
    ]
    assert credited({"flights": flights}, {"flights": recorded})
    assert not credited({"flights": flights}, {"flights": recorded[:1]})
    assert not credited({"flights": flights}, {"flights": list(reversed(recorded))})
    assert credited({"o": {"$subset": {"a": {"b": 1}}}}, {"o": {"a": {"b": 1.0, "c": 2}, "d": 3}})
    assert not credited({"o": {"$subset": {"a": {"b": 1}}}}, {"o": {"a": {"c": 2}}})


def test_literal_means_the_value_itself_even_with_dollar_keys():
    args = {"q": {"$literal": {"$one_of": [1, 2]}}}
    assert credited(args, {"q": {"$one_of": [1, 2]}})
    assert not credited(args, {"q": 1})


# --- where matchers apply ----------------------------------------------------------------------


def test_a_nested_object_equal_as_a_whole_may_leave_out_optional_and_absent_keys():
    args = {
        "p": {
            "name": "Mia",
            "dob": {"$optional": {"$regex": r"\d{4}-\d\d-\d\d"}},
            "x": {"$absent": True},
        }
    }
    assert credited(args, {"p": {"name": "Mia"}})
    assert credited(args, {"p": {"name": "Mia", "dob": "1990-04-05"}})
    assert not credited(args, {"p": {"name": "Mia", "dob": "April"}})
    assert not credited(args, {"p": {"name": "Mia", "x": 1}})
    assert not credited(args, {"p": {"name": "Mia", "other": 1}})


def test_array_elements_are_compared_position_by_position():
    args = {"xs": [{"$type": "integer"}, {"$one_of": ["a", "b"]}]}
    assert credited(args, {"xs": [3, "b"]})
    assert not credited(args, {"xs": ["b", 3]})
    assert not credited(args, {"xs": [3, "b", "c"]})


def test_matchers_apply_at_any_depth_of_called_tool_with():
    args = {
        "booking": {"flights": [{"date": {"$regex": "2024-.*"}, "number": {"$type": "string"}}]}
    }
    recorded = {"booking": {"flights": [{"date": "2024-05-20", "number": "HAT1"}], "extra": True}}
    assert seen_by_called_tool_with(args, recorded)
    assert not seen_by_called_tool_with(
        args, {"booking": {"flights": [{"date": "2025-01-01", "number": "X"}]}}
    )


def test_optional_of_one_of_and_one_of_of_optional():
    assert credited({"u": {"$optional": {"$one_of": ["C", "F"]}}}, {})
    assert credited({"u": {"$one_of": [{"$optional": "C"}, "F"]}}, {})
    assert not credited({"u": {"$one_of": ["C", "F"]}}, {})


def test_a_top_level_null_alternative_follows_the_null_rule():
    lenient = {"tool_names": "exact", "arg_names": "exact", "null_args": "absent_or_null"}
    case_fields = {
        "match": lenient,
        "expected_calls": [expected("f", {"u": {"$one_of": [None, "x"]}})],
    }
    report = score_case(case_fields, [[call("f", {})]])
    assert expected_call_results(report)[0].passed


def test_exact_args_refuses_arguments_not_named_but_allows_optional_ones_left_out():
    args = {"a": 1, "b": {"$optional": 2}}
    assert credited(args, {"a": 1}, exact_args=True)
    assert credited(args, {"a": 1, "b": 2}, exact_args=True)
    assert not credited(args, {"a": 1, "c": 3}, exact_args=True)
    assert credited(args, {"a": 1, "c": 3})


def test_an_object_mixing_dollar_and_plain_keys_is_a_literal_object():
    assert credited({"o": {"$ref": "#/x", "name": "y"}}, {"o": {"$ref": "#/x", "name": "y"}})


# --- reports -----------------------------------------------------------------------------------


def test_a_failed_matcher_says_which_matcher_and_why():
    report = score_case(
        {"expected_calls": [expected("get_weather", {"unit": {"$one_of": ["C", "celsius"]}})]},
        [[call("get_weather", {"unit": "F"})]],
    )
    result = expected_call_results(report)[0]
    assert result.label == 'get_weather(unit=one of ["C", "celsius"])'
    assert (
        result.detail
        == 'get_weather was called in batch 0: unit: expected one of ["C", "celsius"], got "F"'
    )


@pytest.mark.parametrize(
    ("matcher", "label"),
    [
        ({"$regex": "a+"}, "v=/a+/"),
        ({"$approx": {"value": 2.5, "tolerance": 0.1}}, "v=2.5 ± 0.1"),
        (
            {"$text": {"value": "Oslo", "ignore": ["space", "case"]}},
            'v="Oslo" (ignoring case, space)',
        ),
        ({"$type": "number"}, "v=any number"),
        ({"$optional": 3}, "v=optional 3"),
        ({"$absent": True}, "v=absent"),
        ({"$subset": {"a": 1}}, 'v=containing {"a": 1}'),
        ({"$literal": {"$x": 1}}, 'v={"$x": 1}'),
    ],
)
def test_labels_describe_matchers(matcher, label):
    case_obj = make_case(expected_calls=[expected("f", {"v": matcher})])
    assert case_obj.expected_calls[0].label == f"f({label})"


def test_a_nested_matcher_failure_names_the_nested_path():
    report = score_case(
        {"expected_calls": [expected("book", {"p": [{"dob": {"$regex": r"\d{4}"}}]})]},
        [[call("book", {"p": [{"dob": "n/a"}]})]],
    )
    assert (
        'p[0].dob: expected a string matching /\\d{4}/ (whole), got "n/a"'
        in expected_call_results(report)[0].detail
    )


# --- authoring errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"$nope": 1}, "u.$nope"),
        ({"$one_of": []}, "u.$one_of"),
        ({"$one_of": "C"}, "u.$one_of"),
        ({"$one_of": [1], "$regex": "a"}, "u"),
        ({"$regex": "(a"}, "u.$regex"),
        ({"$regex": "(?=a)"}, "u.$regex"),
        ({"$regex": 5}, "u.$regex"),
        ({"$approx": 1}, "u.$approx"),
        ({"$approx": {"tolerance": 1}}, "u.$approx.value"),
        ({"$approx": {"value": 1, "tolerance": -0.5}}, "u.$approx.tolerance"),
        ({"$text": "x"}, "u.$text"),
        ({"$text": {"value": "x", "ignore": ["accents"]}}, "u.$text.ignore"),
        ({"$type": "str"}, "u.$type"),
        ({"$absent": False}, "u.$absent"),
        ({"$optional": {"$nope": 1}}, "u.$optional.$nope"),
        ([{"k": {"$one_of": [{"$bad": 1}]}}], "u[0].k.$one_of[0].$bad"),
    ],
)
def test_a_malformed_matcher_is_an_authoring_error_by_json_path(value, path):
    paths = suite_problem_paths(case(expected_calls=[expected("f", {"u": value})]))
    assert paths == [f"cases[0].expected_calls[0].required_args.{path}"]


def test_matchers_in_called_tool_with_are_checked_too():
    paths = suite_problem_paths(
        case(
            expectations=[
                {"type": "called_tool_with", "tool": "f", "args": {"a": {"b": {"$bad": 1}}}}
            ]
        )
    )
    assert paths == ["cases[0].expectations[0].args.a.b.$bad"]


def test_a_regex_refused_in_a_lenient_load_makes_the_verdict_error():
    suite = load_suite(
        {"cases": [case(expected_calls=[expected("f", {"d": {"$regex": "(a"}})])]}, strict=False
    )
    report = score_case_from(suite, [[call("f", {"d": "a"})]])
    assert report.verdict == "error"
    assert "RE2 cannot compile" in report.error
    assert expected_call_results(report)[0].error is not None


def score_case_from(suite, batches):
    from scoring.matcher import score

    return score(suite.cases[0], make_run(batches))


# --- properties --------------------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_a_literal_of_any_value_matches_exactly_that_value(value):
    assert credited({"v": {"$literal": value}}, {"v": value})
    assert not credited({"v": {"$literal": value}}, {"v": [value]})


def outcome(required_args, arguments):
    """Whether the call is credited, or ``"invalid"`` when the suite is refused."""
    try:
        return credited(required_args, arguments)
    except InvalidInput:
        return "invalid"


@settings(max_examples=300, deadline=None)
@given(JSON, JSON)
def test_one_of_a_single_value_behaves_as_that_value(value, recorded):
    # Also when the value is a matcher, or holds a malformed one (both are refused then).
    assert outcome({"v": {"$one_of": [value]}}, {"v": recorded}) == outcome(
        {"v": value}, {"v": recorded}
    )
