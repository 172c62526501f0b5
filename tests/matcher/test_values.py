"""Value equality by JSON meaning (docs/matcher.md#value-equality), directly and through the
matcher."""

import pytest

from scoring.matcher import (
    InvalidInput,
    json_equal,
    load_run,
    load_suite,
    parse_json,
    parse_suite_document,
    score,
)

from .builders import call, expected, score_case


def j(text: str):
    return parse_json(text)


# --- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [("2", "2.0"), ("2", "2e0"), ("2.0", "2e0"), ("2", "2E+0"), ("20", "2e1"), ("0.5", "5e-1")],
)
def test_numerically_equal_numbers_are_equal_whatever_their_spelling(a, b):
    assert json_equal(j(a), j(b))
    assert json_equal(j(b), j(a))


def test_python_int_and_float_with_the_same_value_are_equal():
    assert json_equal(2, 2.0)
    assert json_equal({"n": 2}, {"n": 2.0})


def test_negative_zero_equals_zero():
    assert json_equal(j("-0"), j("0"))
    assert json_equal(j("-0.0"), j("0"))


@pytest.mark.parametrize(("a", "b"), [("2", "3"), ("2", "2.5"), ("1", "-1"), ("0.1", "0.2")])
def test_numerically_different_numbers_differ(a, b):
    assert not json_equal(j(a), j(b))


@pytest.mark.parametrize(
    ("a", "b"), [("true", "1"), ("false", "0"), ("true", "1.0"), ("false", "0.0")]
)
def test_a_boolean_never_equals_a_number(a, b):
    assert not json_equal(j(a), j(b))
    assert not json_equal(j(b), j(a))


def test_a_boolean_never_equals_a_number_even_as_python_values():
    assert not json_equal(True, 1)
    assert not json_equal(1, True)
    assert not json_equal(False, 0)
    assert not json_equal(0, False)
    assert not json_equal([True], [1])
    assert not json_equal({"x": False}, {"x": 0})


def test_booleans_equal_themselves_only():
    assert json_equal(True, True)
    assert json_equal(False, False)
    assert not json_equal(True, False)


def test_big_integers_beyond_two_to_the_53_compare_exactly():
    a = j("9007199254740993")
    b = j("9007199254740992")
    assert a == 9007199254740993  # parse_json kept it exact
    assert not json_equal(a, b)
    assert json_equal(a, j("9007199254740993"))


def test_big_integer_does_not_equal_the_float_it_rounds_to():
    # 2^53 + 1 is not representable; as a float it reads 2^53.
    assert not json_equal(j("9007199254740993"), 9007199254740992.0)


def test_huge_integers_compare_exactly_inside_structures():
    a = j('{"id": [123456789012345678901234567890]}')
    b = j('{"id": [123456789012345678901234567891]}')
    assert not json_equal(a, b)
    assert json_equal(a, j('{"id": [123456789012345678901234567890]}'))


# --- null ------------------------------------------------------------------------------------


@pytest.mark.parametrize("other", ["0", "false", '""', "[]", "{}", '"null"'])
def test_null_equals_only_null(other):
    assert json_equal(None, None)
    assert not json_equal(j("null"), j(other))
    assert not json_equal(j(other), j("null"))


def test_null_does_not_equal_an_absent_key():
    assert not json_equal({"a": None}, {})
    assert not json_equal({}, {"a": None})


def test_expected_null_argument_is_not_satisfied_by_an_absent_one_by_default():
    report = score_case({"expected_calls": [expected("f", {"x": None})]}, [[call("f", {"y": 1})]])
    assert report.verdict == "fail"


# --- strings ---------------------------------------------------------------------------------


def test_strings_compare_code_point_by_code_point_composed_and_decomposed_differ():
    composed = "caf\u00e9"
    decomposed = "cafe\u0301"
    assert not json_equal(composed, decomposed)
    assert json_equal(composed, "café")


@pytest.mark.parametrize(
    ("a", "b"), [("a", "A"), ("abc", "abc "), ("1", 1), ("", None), ("true", True)]
)
def test_strings_differ_from_anything_not_exactly_the_same_string(a, b):
    assert not json_equal(a, b)


# --- arrays and objects ----------------------------------------------------------------------


def test_arrays_are_equal_element_by_element_in_order():
    assert json_equal([1, "a", None], [1.0, "a", None])
    assert not json_equal([1, 2], [2, 1])
    assert not json_equal([1, 2], [1, 2, 3])
    assert not json_equal([], [None])


def test_objects_are_equal_in_any_key_order():
    assert json_equal(j('{"a": 1, "b": 2}'), j('{"b": 2, "a": 1}'))


def test_objects_with_different_keys_differ():
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal({"a": 1, "b": 2}, {"a": 1})
    assert not json_equal({"a": 1}, {"A": 1})


def test_an_array_never_equals_an_object():
    assert not json_equal([], {})
    assert not json_equal([["a", 1]], {"a": 1})


def test_nested_values_compare_by_json_meaning_at_every_level():
    a = j('{"a": [{"b": 2, "c": [1, {"d": null}]}], "e": {"f": 1e2}}')
    b = j('{"e": {"f": 100}, "a": [{"c": [1.0, {"d": null}], "b": 2.0}]}')
    assert json_equal(a, b)


def test_nested_boolean_versus_number_difference_is_found():
    assert not json_equal(j('{"a": [{"b": true}]}'), j('{"a": [{"b": 1}]}'))


def test_nested_array_order_difference_is_found():
    assert not json_equal(j('{"a": {"b": [1, 2]}}'), j('{"a": {"b": [2, 1]}}'))


# --- through the matcher, from text ----------------------------------------------------------


def _score_texts(suite_text: str, run_text: str, filename: str = "suite.json"):
    suite = load_suite(parse_suite_document(suite_text, filename))
    return score(suite.case("c"), load_run(parse_json(run_text)))


SUITE_WITH_ARG = (
    '{"schema": "casebook.suite/1", "name": "s", "cases": [{"key": "c", '
    '"expected_calls": [{"name": "f", "required_args": {"n": %s}}]}]}'
)
RUN_WITH_ARG = '{"case": "c", "batches": [[{"name": "f", "arguments": {"n": %s}}]]}'


@pytest.mark.parametrize(
    ("in_suite", "in_run"), [("2", "2.0"), ("2.0", "2"), ("2e0", "2"), ("2", "2e0")]
)
def test_expected_argument_matches_a_numerically_equal_recorded_one(in_suite, in_run):
    report = _score_texts(SUITE_WITH_ARG % in_suite, RUN_WITH_ARG % in_run)
    assert report.verdict == "pass", report.to_dict()


@pytest.mark.parametrize(("in_suite", "in_run"), [("true", "1"), ("1", "true"), ("false", "0")])
def test_expected_argument_boolean_does_not_match_a_recorded_number(in_suite, in_run):
    report = _score_texts(SUITE_WITH_ARG % in_suite, RUN_WITH_ARG % in_run)
    assert report.verdict == "fail"


def test_expected_big_integer_argument_is_compared_exactly_from_text():
    bad = _score_texts(SUITE_WITH_ARG % "9007199254740993", RUN_WITH_ARG % "9007199254740992")
    good = _score_texts(SUITE_WITH_ARG % "9007199254740993", RUN_WITH_ARG % "9007199254740993")
    assert bad.verdict == "fail"
    assert good.verdict == "pass"


def test_expected_big_integer_argument_from_yaml_is_compared_exactly():
    yaml_text = (
        "schema: casebook.suite/1\nname: s\ncases:\n  - key: c\n    expected_calls:\n"
        "      - name: f\n        required_args: {n: 9007199254740993}\n"
    )
    bad = _score_texts(yaml_text, RUN_WITH_ARG % "9007199254740992", "suite.yaml")
    good = _score_texts(yaml_text, RUN_WITH_ARG % "9007199254740993", "suite.yaml")
    assert bad.verdict == "fail"
    assert good.verdict == "pass"


def test_expected_composed_string_does_not_match_recorded_decomposed_string():
    report = score_case(
        {"expected_calls": [expected("f", {"s": "caf\u00e9"})]},
        [[call("f", {"s": "cafe\u0301"})]],
    )
    assert report.verdict == "fail"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON: `not` at column 1 is not a JSON value"),
        ("  hello", "not JSON: `hello` at column 3 is not a JSON value"),
        ('{"é": nope}', "invalid JSON: `nope` at column 7 is not a JSON value"),
        ('{"a": 1', "invalid JSON: unexpected end of data: at column 8"),
    ],
)
def test_text_that_is_no_json_value_is_said_to_be_not_json_and_where(text, message):
    """Not the parser's guess at the word meant ("invalid literal, expected 'null'")."""
    with pytest.raises(InvalidInput) as raised:
        parse_json(text)
    assert raised.value.problems[0].message.startswith(message)
    assert "expected 'null'" not in raised.value.problems[0].message
