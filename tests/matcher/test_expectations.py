"""Expectations (docs/matcher.md#expectations): all eleven types, holding and failing."""

import pytest

from scoring.matcher import InvalidInput, load_suite, parse_suite_document, score

from .builders import (
    call,
    case_doc,
    expectation_passes,
    expected,
    make_run,
    null_call,
    only_expectation,
    score_case,
    suite_doc,
)

IGNORE_NAMES = {"tool_names": "ignore_case"}
IGNORE_ARGS = {"arg_names": "ignore_case"}


def holds(expectation, batches=None, **kwargs):
    return expectation_passes(expectation, batches, **kwargs)


def text_holds(expectation, final_text):
    return expectation_passes(expectation, [], final_text=final_text)


# --- called_tool / did_not_call_tool ---------------------------------------------------------


def test_called_tool_holds_when_the_tool_was_called_anywhere():
    e = {"type": "called_tool", "tool": "search"}
    assert holds(e, [[call("open")], [call("x"), call("search")]])


def test_called_tool_fails_when_the_tool_was_not_called():
    e = {"type": "called_tool", "tool": "search"}
    assert not holds(e, [[call("open")]])
    assert not holds(e, [])


def test_called_tool_is_exact_by_default_and_follows_ignore_case():
    e = {"type": "called_tool", "tool": "Search"}
    assert not holds(e, [[call("search")]])
    assert holds(e, [[call("search")]], match=IGNORE_NAMES)
    assert holds({"type": "called_tool", "tool": "STRASSE"}, [[call("straße")]], match=IGNORE_NAMES)


def test_called_tool_counts_a_call_with_unparsable_arguments():
    assert holds({"type": "called_tool", "tool": "f"}, [[null_call("f")]])


def test_did_not_call_tool_holds_when_the_tool_was_never_called():
    e = {"type": "did_not_call_tool", "tool": "format_disk"}
    assert holds(e, [[call("delete_file")]])
    assert holds(e, [])


def test_did_not_call_tool_fails_when_the_tool_was_called():
    e = {"type": "did_not_call_tool", "tool": "format_disk"}
    assert not holds(e, [[call("a")], [call("b"), call("format_disk")]])


def test_did_not_call_tool_follows_the_tool_names_rule():
    e = {"type": "did_not_call_tool", "tool": "format_disk"}
    assert holds(e, [[call("Format_Disk")]])
    assert not holds(e, [[call("Format_Disk")]], match=IGNORE_NAMES)


# --- called_tool_with ------------------------------------------------------------------------


def with_args(args, tool="f"):
    return {"type": "called_tool_with", "tool": tool, "args": args}


def test_called_tool_with_holds_on_a_top_level_subset():
    assert holds(with_args({"path": "a"}), [[call("f", {"path": "a", "force": True})]])


def test_called_tool_with_fails_on_a_different_value_or_a_missing_argument():
    assert not holds(with_args({"path": "a"}), [[call("f", {"path": "b"})]])
    assert not holds(with_args({"path": "a"}), [[call("f", {"file": "a"})]])


def test_called_tool_with_recurses_into_objects_allowing_extra_keys_at_every_level():
    recorded = {"a": {"b": {"c": 1, "d": 2}, "e": 3}, "f": 4}
    assert holds(with_args({"a": {"b": {"c": 1}}}), [[call("f", recorded)]])
    assert holds(with_args({"a": {"b": {}}}), [[call("f", recorded)]])
    assert holds(with_args({"a": {}}), [[call("f", recorded)]])


def test_called_tool_with_recursive_subset_still_compares_leaf_values():
    recorded = {"a": {"b": {"c": 1, "d": 2}}}
    assert not holds(with_args({"a": {"b": {"c": 2}}}), [[call("f", recorded)]])
    assert not holds(with_args({"a": {"b": {"x": 1}}}), [[call("f", recorded)]])
    assert not holds(with_args({"a": {"b": 1}}), [[call("f", recorded)]])


def test_called_tool_with_arrays_must_be_equal_as_a_whole():
    assert holds(with_args({"tags": ["a", "b"]}), [[call("f", {"tags": ["a", "b"]})]])
    assert not holds(with_args({"tags": ["a"]}), [[call("f", {"tags": ["a", "b"]})]])
    assert not holds(with_args({"tags": ["b", "a"]}), [[call("f", {"tags": ["a", "b"]})]])


def test_called_tool_with_does_not_recurse_into_objects_inside_arrays():
    recorded = {"rows": [{"a": 1, "b": 2}]}
    assert not holds(with_args({"rows": [{"a": 1}]}), [[call("f", recorded)]])
    assert holds(with_args({"rows": [{"b": 2, "a": 1}]}), [[call("f", recorded)]])


def test_called_tool_with_values_compare_by_json_meaning():
    assert holds(with_args({"n": 2, "o": {"x": 1e0}}), [[call("f", {"n": 2.0, "o": {"x": 1}})]])
    assert not holds(with_args({"flag": True}), [[call("f", {"flag": 1})]])
    assert not holds(with_args({"o": {"flag": False}}), [[call("f", {"o": {"flag": 0}})]])


def test_called_tool_with_needs_one_call_that_has_all_the_args():
    batches = [[call("f", {"a": 1})], [call("f", {"b": 2})]]
    assert not holds(with_args({"a": 1, "b": 2}), batches)
    assert holds(with_args({"b": 2}), batches)


def test_called_tool_with_ignores_calls_of_other_tools():
    assert not holds(with_args({"a": 1}, tool="f"), [[call("g", {"a": 1})]])


def test_called_tool_with_empty_args_is_satisfied_by_a_call_with_unparsable_arguments():
    assert holds(with_args({}), [[null_call("f")]])
    assert not holds(with_args({}), [[null_call("g")]])


def test_called_tool_with_named_args_is_not_satisfied_by_unparsable_arguments():
    assert not holds(with_args({"a": 1}), [[null_call("f", raw='{"a": 1')]])


def test_called_tool_with_arg_names_ignore_case_at_top_level_only():
    assert not holds(with_args({"City": "Oslo"}), [[call("f", {"city": "Oslo"})]])
    assert holds(with_args({"City": "Oslo"}), [[call("f", {"city": "Oslo"})]], match=IGNORE_ARGS)
    assert not holds(
        with_args({"loc": {"City": "Oslo"}}),
        [[call("f", {"loc": {"city": "Oslo"}})]],
        match=IGNORE_ARGS,
    )


def test_called_tool_with_arg_names_ignore_case_any_of_several_equal_names():
    recorded = {"city": "Paris", "City": "Oslo"}
    assert holds(with_args({"CITY": "Oslo"}), [[call("f", recorded)]], match=IGNORE_ARGS)
    assert holds(with_args({"CITY": "Paris"}), [[call("f", recorded)]], match=IGNORE_ARGS)
    assert not holds(with_args({"CITY": "Rome"}), [[call("f", recorded)]], match=IGNORE_ARGS)


# --- tool_call_count -------------------------------------------------------------------------


def count(**fields):
    return {"type": "tool_call_count", **fields}


THREE_CALLS = [[call("a"), call("b")], [call("a")]]


@pytest.mark.parametrize("tool_field", [{}, {"tool": None}])
def test_tool_call_count_without_tool_counts_every_call(tool_field):
    assert holds(count(min=3, max=3, **tool_field), THREE_CALLS)
    assert not holds(count(max=2, **tool_field), THREE_CALLS)
    assert not holds(count(min=4, **tool_field), THREE_CALLS)


def test_tool_call_count_with_tool_counts_only_that_tool():
    assert holds(count(tool="a", min=2, max=2), THREE_CALLS)
    assert not holds(count(tool="a", max=1), THREE_CALLS)
    assert holds(count(tool="b", min=1, max=1), THREE_CALLS)
    assert holds(count(tool="zzz", max=0), THREE_CALLS)
    assert not holds(count(tool="zzz", min=1), THREE_CALLS)


def test_tool_call_count_min_only_is_an_inclusive_lower_bound():
    e = count(tool="a", min=2)
    assert not holds(e, [[call("a")]])
    assert holds(e, [[call("a")], [call("a")]])
    assert holds(e, [[call("a")] for _ in range(7)])


def test_tool_call_count_max_only_is_an_inclusive_upper_bound():
    e = count(tool="a", max=2)
    assert holds(e, [])
    assert holds(e, [[call("a"), call("a")]])
    assert not holds(e, [[call("a"), call("a")], [call("a")]])


def test_tool_call_count_max_zero_without_tool_means_no_calls():
    assert holds(count(max=0), [])
    assert not holds(count(max=0), [[call("a")]])


# --- no_calls_beyond_expected ------------------------------------------------------------------

BEYOND = {"type": "no_calls_beyond_expected", "tools": ["book", "cancel"]}


def beyond_report(batches, expected_calls=(), **suite_fields):
    """The report of a case expecting ``expected_calls``, whose suite carries ``BEYOND``."""
    document = suite_doc(
        case_doc(expected_calls=list(expected_calls)), expectations=[BEYOND], **suite_fields
    )
    return score(load_suite(document).cases[0], make_run(batches))


def test_no_calls_beyond_expected_allows_as_many_calls_as_the_case_expects():
    booked_once = [[call("lookup")], [call("book", {"id": 1})]]
    assert beyond_report(booked_once, [expected("book")]).verdict == "pass"
    assert beyond_report([[call("lookup")]]).verdict == "pass"  # reads are not named


def test_no_calls_beyond_expected_fails_a_call_the_case_never_expects_as_forbidden():
    result = only_expectation(beyond_report([[call("cancel", {"id": 7})]], [expected("book")]))
    assert not result.passed
    assert result.detail.startswith("cancel was called once, never expected")
    assert (result.cause.kind, result.cause.tool) == ("forbidden_call", "cancel")


def test_no_calls_beyond_expected_fails_a_second_call_where_one_is_expected_as_count():
    twice = [[call("book", {"id": 1})], [call("book", {"id": 2})]]
    result = only_expectation(beyond_report(twice, [expected("book")]))
    assert not result.passed
    assert "book was called 2 times, expected once" in result.detail
    assert "batch 1" in result.detail  # the first call beyond the expected one
    assert result.nearest == (1, 0)
    assert (result.cause.kind, result.cause.tool) == ("count", "book")


def test_no_calls_beyond_expected_follows_the_cases_tool_names_rule():
    report = beyond_report(
        [[call("BOOK")]], [expected("book")], match={"tool_names": "ignore_case"}
    )
    assert report.verdict == "pass"
    assert beyond_report([[call("BOOK")]]).verdict == "pass"  # exact: BOOK is another tool


def test_no_calls_beyond_expected_needs_tools():
    for tools in ([], None, "book"):
        with pytest.raises(InvalidInput, match="tools"):
            load_suite(suite_doc(case_doc(expectations=[{**BEYOND, "tools": tools}])))


def test_no_calls_beyond_expected_succeeded_only_leaves_out_calls_the_tool_refused():
    refused = call("book", {"id": 1}, result="Error: payment does not add up", is_error=True)
    twice = [[refused], [call("book", {"id": 2}, result="booked")]]
    assert beyond_report(twice, [expected("book")]).verdict == "fail"  # every call counts
    counted = {**BEYOND, "succeeded_only": True}
    document = suite_doc(case_doc(expected_calls=[expected("book")]), expectations=[counted])
    case = load_suite(document).cases[0]
    assert score(case, make_run(twice)).verdict == "pass"
    assert case.expectations[0].label.endswith(", counting calls that succeeded")
    three = [*twice, [call("book", {"id": 3}, result="booked")]]
    result = only_expectation(score(case, make_run(three)))
    assert not result.passed
    assert result.detail.startswith("book was called successfully 2 times, expected once")
    assert result.nearest == (2, 0)  # the first succeeded call beyond the expected one


def test_tool_call_count_succeeded_only_counts_calls_without_a_tool_error():
    batches = [[call("a", is_error=True)], [call("a")]]
    assert not holds(count(tool="a", max=1), batches)
    assert holds(count(tool="a", max=1, succeeded_only=True), batches)
    assert not holds(count(tool="a", min=2, succeeded_only=True), batches)
    with pytest.raises(InvalidInput, match="succeeded_only"):
        load_suite(suite_doc(case_doc(expectations=[count(succeeded_only="yes")])))


def test_suite_expectations_come_after_each_cases_own_and_are_labelled_as_its_own():
    document = suite_doc(
        case_doc("a", expectations=[{"type": "no_tool_calls"}]),
        case_doc("b", expected_calls=[expected("book")]),
        expectations=[BEYOND],
    )
    suite = load_suite(document)
    first, second = suite.cases
    assert [e.type for e in first.expectations] == ["no_tool_calls", "no_calls_beyond_expected"]
    assert first.expectations[1].index == 1
    assert first.expectations[1].label == "no calls of book, cancel beyond the expected ones"
    assert second.expectations[0].allowed == (1, 0)  # each case its own expected calls
    assert [e.type for e in suite.expectations] == ["no_calls_beyond_expected"]


def test_a_suite_expectation_with_problems_is_refused_once_at_the_suites_path():
    document = suite_doc(case_doc("a"), case_doc("b"), expectations=[{"type": "nope"}])
    with pytest.raises(InvalidInput) as raised:
        load_suite(document)
    assert [p.path for p in raised.value.problems] == ["expectations[0].type"]


# --- called_tools_in_order -------------------------------------------------------------------


def in_order(*tools):
    return {"type": "called_tools_in_order", "tools": list(tools)}


def test_called_tools_in_order_holds_with_other_calls_interleaved():
    batches = [[call("x"), call("a")], [call("y")], [call("b"), call("z")], [call("c")]]
    assert holds(in_order("a", "b", "c"), batches)
    assert holds(in_order("a", "c"), batches)


def test_called_tools_in_order_fails_when_out_of_order():
    assert not holds(in_order("a", "b"), [[call("b")], [call("a")]])


def test_called_tools_in_order_uses_flat_order_within_a_batch():
    assert holds(in_order("a", "b"), [[call("a"), call("b")]])
    assert not holds(in_order("a", "b"), [[call("b"), call("a")]])


def test_called_tools_in_order_needs_a_call_per_listed_occurrence():
    assert not holds(in_order("a", "a"), [[call("a")]])
    assert holds(in_order("a", "a"), [[call("a")], [call("b")], [call("a")]])
    assert not holds(in_order("a", "b", "a"), [[call("a"), call("a"), call("b")]])


def test_called_tools_in_order_fails_when_a_tool_is_missing():
    assert not holds(in_order("a", "b"), [[call("a")]])


def test_called_tools_in_order_empty_list_holds_even_without_calls():
    assert holds(in_order(), [])
    assert holds(in_order(), [[call("a")]])


# --- no_tool_calls ---------------------------------------------------------------------------


def test_no_tool_calls_holds_when_there_were_none():
    assert holds({"type": "no_tool_calls"}, [])


def test_no_tool_calls_fails_on_any_call():
    assert not holds({"type": "no_tool_calls"}, [[call("a")]])
    assert not holds({"type": "no_tool_calls"}, [[null_call("a")]])


# --- final_text_contains ---------------------------------------------------------------------


def contains(text, **fields):
    return {"type": "final_text_contains", "text": text, **fields}


def test_final_text_contains_is_exact_case_by_default():
    assert text_holds(contains("Deleted"), "I Deleted notes.txt.")
    assert not text_holds(contains("deleted"), "I Deleted notes.txt.")


def test_final_text_contains_case_insensitive_uses_casefold():
    assert text_holds(contains("deleted", case_insensitive=True), "I DELETED it")
    assert text_holds(contains("STRASSE", case_insensitive=True), "Die Straße ist lang")
    assert text_holds(contains("straße", case_insensitive=True), "DIE STRASSE")
    assert not text_holds(contains("STRASSE"), "Die Straße ist lang")


def test_final_text_contains_case_insensitive_folds_ligatures_where_lower_would_not():
    # casefold("\ufb01") is "fi"; lower() leaves the ligature alone.
    assert text_holds(contains("FILE", case_insensitive=True), "the \ufb01le is here")


def test_final_text_contains_does_not_normalize_unicode():
    assert not text_holds(contains("caf\u00e9"), "a cafe\u0301 here")


def test_final_text_contains_fails_when_the_text_is_absent():
    assert not text_holds(contains("deleted"), "Removed notes.txt.")


@pytest.mark.parametrize("text", ["deleted", ""])
def test_final_text_contains_fails_when_final_text_is_null(text):
    assert not text_holds(contains(text), None)
    assert not text_holds(contains(text, case_insensitive=True), None)


def test_final_text_contains_empty_text_holds_on_any_string():
    assert text_holds(contains(""), "")
    assert text_holds(contains(""), "x")


# --- final_text_equals -----------------------------------------------------------------------


def equals(text):
    return {"type": "final_text_equals", "text": text}


WHITE_SPACE = [
    "\t", "\n", "\x0b", "\x0c", "\r", " ", "\x85", "\xa0", "\u1680", "\u2000", "\u2005",
    "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
]  # fmt: skip

NOT_WHITE_SPACE = ["\x1c", "\x1d", "\x1e", "\x1f", "\u200b", "\ufeff", "\u180e"]


def test_final_text_equals_exact_text():
    assert text_holds(equals("Done."), "Done.")
    assert not text_holds(equals("Done."), "done.")
    assert not text_holds(equals("Done."), "Done")
    assert not text_holds(equals("a b"), "a  b")


@pytest.mark.parametrize("space", WHITE_SPACE)
def test_final_text_equals_trims_unicode_white_space_on_both_ends(space):
    assert text_holds(equals("Done."), f"{space}Done.{space}")
    assert text_holds(equals("Done."), f"{space}{space}Done.")
    assert text_holds(equals("Done."), f"Done.{space}")


def test_final_text_equals_trims_nbsp_and_ideographic_space():
    assert text_holds(equals("42"), "\u00a042\u3000")


@pytest.mark.parametrize("char", NOT_WHITE_SPACE)
def test_final_text_equals_does_not_trim_characters_without_white_space_property(char):
    assert not text_holds(equals("Done."), f"{char}Done.")
    assert not text_holds(equals("Done."), f"Done.{char}")


def test_final_text_equals_keeps_inner_white_space():
    assert not text_holds(equals("a b"), "a\u00a0b")


def test_final_text_equals_fails_when_final_text_is_null():
    assert not text_holds(equals(""), None)
    assert not text_holds(equals("x"), None)


def test_final_text_equals_empty_text_matches_only_white_space():
    assert text_holds(equals(""), " \u3000\n")
    assert not text_holds(equals(""), "\x1f")


# --- final_text_matches ----------------------------------------------------------------------


def matches(regex):
    return {"type": "final_text_matches", "regex": regex}


def test_final_text_matches_searches_anywhere():
    assert text_holds(matches("b+c"), "xxabbcyy")
    assert text_holds(matches(r"order #\d{3}"), "Your order #123 has shipped.")
    assert not text_holds(matches("^b"), "abc")


@pytest.mark.parametrize(
    ("regex", "final_text"),
    [("", "anything"), ("", ""), ("x*", "abc"), ("^", "abc"), ("$", "abc"), (r"\b", "a b")],
)
def test_final_text_matches_an_empty_match_is_a_match(regex, final_text):
    assert text_holds(matches(regex), final_text)


def test_final_text_matches_at_the_very_end_of_the_text():
    assert text_holds(matches("c$"), "abc")
    assert text_holds(matches(r"\d\z"), "abc 7")


def test_final_text_matches_is_case_sensitive_unless_flagged():
    assert not text_holds(matches("done"), "DONE")
    assert text_holds(matches("(?i)done"), "DONE")


def test_final_text_matches_digit_class_is_ascii_only():
    assert text_holds(matches(r"\d"), "3")
    assert not text_holds(matches(r"\d"), "\u0663")  # ARABIC-INDIC DIGIT THREE
    assert not text_holds(matches(r"\d"), "\uff13")  # FULLWIDTH DIGIT THREE


def test_final_text_matches_word_class_is_ascii_only():
    assert not text_holds(matches(r"^\w+$"), "café")
    assert text_holds(matches(r"^\w+$"), "cafe_1")


def test_final_text_matches_space_class_is_ascii_only():
    assert not text_holds(matches(r"a\sb"), "a\u00a0b")
    assert text_holds(matches(r"a\sb"), "a b")


def test_final_text_matches_word_boundary_is_ascii():
    # é is not an ASCII word character, so there is a boundary between f and é.
    assert text_holds(matches(r"\bcaf\b"), "café")


def test_final_text_matches_dollar_is_end_of_text_not_before_a_final_newline():
    assert text_holds(matches("a$"), "a")
    assert not text_holds(matches("a$"), "a\n")
    assert text_holds(matches("(?m)a$"), "a\n")
    assert text_holds(matches("(?m)^b$"), "a\nb\nc")
    assert not text_holds(matches("^b$"), "a\nb\nc")


def test_final_text_matches_accepts_re2_only_syntax():
    assert text_holds(matches(r"\pN+"), "x\u0663y")
    assert text_holds(matches(r"[[:digit:]]{2}"), "a12")
    assert text_holds(matches(r"(?P<num>\d+)\z"), "total 12")


def test_final_text_matches_dot_matches_one_code_point():
    assert text_holds(matches("^.{3}$"), "\u65e5\u672c\u8a9e")
    assert text_holds(matches("^caf.$"), "caf\u00e9")


def test_final_text_matches_dot_does_not_match_newline_unless_flagged():
    assert not text_holds(matches("a.b"), "a\nb")
    assert text_holds(matches("(?s)a.b"), "a\nb")


def test_final_text_matches_fails_when_final_text_is_null():
    assert not text_holds(matches(""), None)
    assert not text_holds(matches(".*"), None)


# --- final_number_equals ---------------------------------------------------------------------


def number(value, **fields):
    return {"type": "final_number_equals", "value": value, **fields}


def test_final_number_equals_uses_the_last_number():
    assert text_holds(number(7), "Between 3 and 5 there are 7")
    assert not text_holds(number(3), "Between 3 and 5 there are 7")


def test_final_number_equals_tolerance_defaults_to_zero():
    assert text_holds(number(3), "It is 3.0.")
    assert not text_holds(number(3), "It is 3.01.")


def test_final_number_equals_tolerance_is_exact_decimal_1_1_within_0_1_of_1_0():
    assert text_holds(number(1.0, tolerance=0.1), "1.1")
    assert text_holds(number(1.0, tolerance=0.1), "0.9")
    assert not text_holds(number(1.0, tolerance=0.1), "1.11")


@pytest.mark.parametrize(
    ("value", "text"), [(0.1, "0.1"), (0.3, "0.3"), (1.1, "1.1"), (2.675, "2.675")]
)
def test_final_number_equals_reads_a_float_value_as_its_shortest_decimal(value, text):
    # Decimal(0.3) is 0.29999999999999998889...; Decimal(repr(0.3)) is 0.3.
    assert text_holds(number(value), f"it is {text}")


def test_final_number_equals_reads_a_float_tolerance_as_its_shortest_decimal():
    # Decimal(0.3) < 0.3 exactly, so a binary reading would refuse 1.3.
    assert text_holds(number(1, tolerance=0.3), "1.3")
    assert text_holds(number(1, tolerance=0.3), "0.7")
    assert not text_holds(number(1, tolerance=0.3), "1.30001")


def test_final_number_equals_from_yaml_uses_exact_decimals():
    text = (
        "cases:\n  - key: c\n    expectations:\n"
        "      - {type: final_number_equals, value: 1.0, tolerance: 0.1}\n"
    )
    case = load_suite(parse_suite_document(text, "s.yaml")).case("c")
    assert only_expectation(score(case, make_run(final_text="1.1"))).passed
    assert not only_expectation(score(case, make_run(final_text="1.1000001"))).passed


def test_final_number_equals_tolerance_from_suite_text_is_exact_decimal():
    text = (
        '{"cases": [{"key": "c", "expectations": '
        '[{"type": "final_number_equals", "value": 1.0, "tolerance": 0.1}]}]}'
    )
    case = load_suite(parse_suite_document(text, "s.json")).case("c")
    assert only_expectation(score(case, make_run(final_text="x = 1.1"))).passed
    assert not only_expectation(score(case, make_run(final_text="x = 1.1000001"))).passed


def test_final_number_equals_tolerance_bounds_are_inclusive():
    e = number(10, tolerance=0.5)
    assert text_holds(e, "9.5")
    assert text_holds(e, "10.5")
    assert not text_holds(e, "10.51")
    assert not text_holds(e, "9.49")


def test_final_number_equals_compares_big_integers_exactly():
    assert not text_holds(number(9007199254740993), "id 9007199254740992")
    assert text_holds(number(9007199254740993), "id 9007199254740993")


def test_final_number_equals_reads_signs_groups_and_exponents():
    assert text_holds(number(-3), "it is -3")
    assert text_holds(number(-3), "it is \u22123")
    assert text_holds(number(1234567), "total: 1,234,567.")
    assert text_holds(number(1.2e-3), "about 1.2E-3")
    assert text_holds(number(15), "on 2024-01-15")


def test_final_number_equals_fails_without_a_number():
    assert not text_holds(number(0), "no numbers here")
    assert not text_holds(number(3), "three (\u0663)")


def test_final_number_equals_fails_when_final_text_is_null():
    assert not text_holds(number(0, tolerance=100), None)


# --- no_error --------------------------------------------------------------------------------


def test_no_error_holds_when_error_is_null():
    assert holds({"type": "no_error"}, [], error=None)


@pytest.mark.parametrize("error", ["", "timeout", " "])
def test_no_error_fails_on_any_error_string_including_the_empty_one(error):
    report = score_case({"expectations": [{"type": "no_error"}]}, [], error=error)
    assert not only_expectation(report).passed
    assert report.verdict == "fail"


def test_every_expectation_type_has_a_label():
    expectations = [
        {"type": "called_tool", "tool": "a"},
        {"type": "did_not_call_tool", "tool": "b"},
        with_args({"x": 1}),
        count(max=3),
        in_order("a"),
        {"type": "no_tool_calls"},
        contains("x"),
        equals("x"),
        matches("x"),
        number(1),
        {"type": "no_error"},
    ]
    report = score_case({"expectations": expectations}, [[call("a")]], final_text="x")
    results = [p for p in report.predicates if p.kind == "expectation"]
    assert [p.index for p in results] == list(range(11))
    assert all(p.label for p in results)
    assert len({p.label for p in results}) == 11
