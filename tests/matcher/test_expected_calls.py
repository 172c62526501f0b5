"""Expected calls (docs/matcher.md#expected-calls): matching, ordering, dependencies, extra
calls, reporting."""

import time

import pytest

from scoring.importers import to_canonical
from scoring.matcher import load_run, load_suite, parse_json, parse_suite_document, score
from tests.support import tau_bench

from .builders import (
    call,
    expected,
    expected_call_results,
    make_case,
    make_run,
    null_call,
    predicates_of,
    score_case,
)

IGNORE_NAMES = {"tool_names": "ignore_case"}
IGNORE_ARGS = {"arg_names": "ignore_case"}
ABSENT_OR_NULL = {"null_args": "absent_or_null"}


def passes(expected_calls, batches, match=None, **case_fields):
    """Whether the case's expected calls all hold on the run (no expectations involved)."""
    if match is not None:
        case_fields["match"] = match
    report = score_case({"expected_calls": expected_calls, **case_fields}, batches)
    assert report.verdict != "error", report.to_dict()
    calls_hold = all(p.passed for p in report.predicates if p.kind != "run")
    assert (report.verdict == "pass") == calls_hold
    return calls_hold


def single(required_args=None, recorded_args=None, match=None, name="f", recorded_name="f"):
    return passes([expected(name, required_args)], [[call(recorded_name, recorded_args)]], match)


# --- names -----------------------------------------------------------------------------------


def test_tool_name_matches_exactly_by_default():
    assert single(name="get_weather", recorded_name="get_weather")
    assert not single(name="get_weather", recorded_name="Get_Weather")
    assert not single(name="get_weather", recorded_name="get_weather ")


def test_tool_name_ignore_case_matches_names_differing_in_case():
    assert single(name="get_weather", recorded_name="GET_Weather", match=IGNORE_NAMES)
    assert not single(name="get_weather", recorded_name="get_forecast", match=IGNORE_NAMES)


def test_tool_name_ignore_case_uses_unicode_casefold_strasse_matches_strasse_with_eszett():
    assert single(name="STRASSE", recorded_name="straße", match=IGNORE_NAMES)
    assert single(name="straße", recorded_name="STRASSE", match=IGNORE_NAMES)


def test_tool_name_exact_does_not_fold_eszett():
    assert not single(name="STRASSE", recorded_name="straße")


def test_tool_name_ignore_case_folds_final_sigma():
    # "ΟΔΟΣ" against "οδος" written with a final sigma (U+03C2).
    assert single(
        name="\u039f\u0394\u039f\u03a3",
        recorded_name="\u03bf\u03b4\u03bf\u03c2",
        match=IGNORE_NAMES,
    )
    assert single(name="\u03c3", recorded_name="\u03c2", match=IGNORE_NAMES)


# --- required arguments ----------------------------------------------------------------------


def test_required_args_are_a_top_level_subset_extra_recorded_args_are_fine():
    assert single({"path": "a.txt"}, {"path": "a.txt", "force": True, "mode": 644})


def test_a_missing_required_arg_fails():
    assert not single({"path": "a.txt", "force": True}, {"path": "a.txt"})


def test_a_required_arg_with_a_different_value_fails():
    assert not single({"path": "a.txt"}, {"path": "b.txt"})
    assert not single({"n": 1}, {"n": "1"})
    assert not single({"flag": True}, {"flag": 1})


def test_required_arg_numbers_compare_by_json_meaning():
    assert single({"n": 2}, {"n": 2.0})


def test_nested_object_argument_must_be_equal_as_a_whole():
    assert single({"opts": {"a": 1, "b": [1, 2]}}, {"opts": {"b": [1, 2], "a": 1}})
    assert not single({"opts": {"a": 1}}, {"opts": {"a": 1, "b": 2}})
    assert not single({"opts": {"a": 1, "b": 2}}, {"opts": {"a": 1}})


def test_nested_array_argument_must_be_equal_as_a_whole():
    assert single({"tags": ["a", "b"]}, {"tags": ["a", "b"]})
    assert not single({"tags": ["a"]}, {"tags": ["a", "b"]})
    assert not single({"tags": ["a", "b"]}, {"tags": ["b", "a"]})
    assert not single({"rows": [{"a": 1}]}, {"rows": [{"a": 1, "b": 2}]})


def test_empty_required_args_match_any_call_of_that_name():
    assert single({}, {"anything": [1, 2, 3]})
    assert single(None, {})


# --- argument names --------------------------------------------------------------------------


def test_arg_names_exact_by_default():
    assert not single({"city": "Oslo"}, {"City": "Oslo"})


def test_arg_names_ignore_case_matches_top_level_names_ignoring_case():
    assert single({"City": "Oslo"}, {"city": "Oslo"}, match=IGNORE_ARGS)
    assert single({"STRASSE": 1}, {"straße": 1}, match=IGNORE_ARGS)


def test_arg_names_ignore_case_does_not_ignore_case_of_values():
    assert not single({"city": "Oslo"}, {"City": "oslo"}, match=IGNORE_ARGS)


def test_arg_names_ignore_case_leaves_nested_keys_exact():
    assert not single({"loc": {"City": "Oslo"}}, {"LOC": {"city": "Oslo"}}, match=IGNORE_ARGS)
    assert single({"loc": {"City": "Oslo"}}, {"LOC": {"City": "Oslo"}}, match=IGNORE_ARGS)


def test_arg_names_ignore_case_with_city_and_City_matches_when_any_has_the_value():
    recorded = {"city": "Paris", "City": "Oslo"}
    assert single({"city": "Oslo"}, recorded, match=IGNORE_ARGS)
    assert single({"CITY": "Paris"}, recorded, match=IGNORE_ARGS)
    assert single({"City": "Paris"}, recorded, match=IGNORE_ARGS)
    assert not single({"city": "Rome"}, recorded, match=IGNORE_ARGS)


def test_arg_names_exact_with_city_and_City_looks_only_at_the_exact_name():
    recorded = {"city": "Paris", "City": "Oslo"}
    assert not single({"city": "Oslo"}, recorded)
    assert single({"City": "Oslo"}, recorded)


# --- null arguments --------------------------------------------------------------------------


def test_must_be_null_requires_the_argument_present_and_null():
    assert single({"x": None}, {"x": None})
    assert not single({"x": None}, {})
    assert not single({"x": None}, {"y": None})


def test_absent_or_null_accepts_an_absent_or_a_null_argument():
    assert single({"x": None}, {}, match=ABSENT_OR_NULL)
    assert single({"x": None}, {"x": None}, match=ABSENT_OR_NULL)


@pytest.mark.parametrize("null_args", ["must_be_null", "absent_or_null"])
@pytest.mark.parametrize("value", [0, False, "", [], {}, "null"])
def test_expected_null_never_accepts_a_non_null_value(null_args, value):
    assert not single({"x": None}, {"x": value}, match={"null_args": null_args})


def test_absent_or_null_applies_to_top_level_arguments_not_nested_keys():
    assert not single({"opts": {"a": None}}, {"opts": {}}, match=ABSENT_OR_NULL)


def test_absent_or_null_with_ignore_case_names_sees_a_differently_cased_present_argument():
    match = {"null_args": "absent_or_null", "arg_names": "ignore_case"}
    assert not single({"X": None}, {"x": 1}, match=match)
    assert single({"X": None}, {"x": None}, match=match)


# --- arguments that could not be parsed ------------------------------------------------------


def test_call_with_null_arguments_satisfies_empty_required_args():
    assert passes([expected("f")], [[null_call("f")]])
    assert passes([expected("f", {})], [[null_call("f")]])


def test_call_with_null_arguments_satisfies_nothing_that_names_an_argument():
    assert not passes([expected("f", {"path": "a"})], [[null_call("f", raw='{"path": "a"')]])


def test_call_with_null_arguments_does_not_satisfy_an_expected_null_even_if_absent_is_ok():
    assert not passes([expected("f", {"x": None})], [[null_call("f")]], match=ABSENT_OR_NULL)


# --- ordered ---------------------------------------------------------------------------------


def ordered_pair():
    return [expected("a", ordered=True), expected("b", ordered=True)]


def test_ordered_calls_in_later_batches_in_order_pass():
    assert passes(ordered_pair(), [[call("a")], [call("b")]])


def test_ordered_calls_in_the_same_batch_never_violate_the_order():
    assert passes(ordered_pair(), [[call("b"), call("a")]])
    assert passes(ordered_pair(), [[call("a"), call("b")]])


def test_ordered_call_in_an_earlier_batch_than_its_predecessor_fails():
    assert not passes(ordered_pair(), [[call("b")], [call("a")]])


def test_order_applies_only_between_expected_calls_that_are_both_ordered():
    assert passes([expected("a", ordered=True), expected("b")], [[call("b")], [call("a")]])
    assert passes([expected("a"), expected("b", ordered=True)], [[call("b")], [call("a")]])


def test_order_applies_between_non_adjacent_ordered_calls():
    calls = [expected("a", ordered=True), expected("c"), expected("b", ordered=True)]
    assert not passes(calls, [[call("b")], [call("c")], [call("a")]])
    assert passes(calls, [[call("c")], [call("a")], [call("b")]])


def test_ordered_finds_an_in_order_assignment_among_repeated_calls():
    # a appears twice; only its first occurrence comes before b.
    assert passes(ordered_pair(), [[call("a")], [call("b")], [call("a")]])


# --- depends_on_result -----------------------------------------------------------------------


def depends_pair():
    return [expected("a"), expected("b", depends_on_result=True)]


def test_depends_on_result_in_a_later_batch_passes():
    assert passes(depends_pair(), [[call("a")], [call("b")]])
    assert passes(depends_pair(), [[call("a")], [call("x")], [call("b")]])


def test_depends_on_result_in_the_same_batch_fails():
    assert not passes(depends_pair(), [[call("a"), call("b")]])


def test_depends_on_result_in_an_earlier_batch_fails():
    assert not passes(depends_pair(), [[call("b")], [call("a")]])


def test_depends_on_result_picks_the_occurrence_that_makes_it_hold():
    assert passes(depends_pair(), [[call("b")], [call("a")], [call("b")]])


def test_depends_on_result_refers_to_the_immediately_preceding_expected_call():
    calls = [expected("a"), expected("c"), expected("b", depends_on_result=True)]
    # b is later than a but in the same batch as c: it needs c's result.
    assert not passes(calls, [[call("a")], [call("c"), call("b")]])
    assert passes(calls, [[call("c")], [call("a"), call("b")]])


def test_depends_on_result_is_not_satisfied_through_a_chain_in_the_same_batch():
    calls = [
        expected("a"),
        expected("b", depends_on_result=True),
        expected("c", depends_on_result=True),
    ]
    assert passes(calls, [[call("a")], [call("b")], [call("c")]])
    assert not passes(calls, [[call("a")], [call("b"), call("c")]])


# --- extra_calls -----------------------------------------------------------------------------


def test_extra_calls_forbid_fails_when_a_recorded_call_is_not_credited():
    report = score_case(
        {"expected_calls": [expected("a")], "extra_calls": "forbid"}, [[call("a"), call("b")]]
    )
    assert report.verdict == "fail"
    (extra,) = predicates_of(report, "extra_calls")
    assert extra.label == "no calls beyond the expected ones"
    assert not extra.passed
    assert all(p.passed for p in expected_call_results(report))


def test_extra_calls_forbid_passes_when_every_call_is_credited():
    report = score_case(
        {"expected_calls": [expected("a"), expected("b")], "extra_calls": "forbid"},
        [[call("b")], [call("a")]],
    )
    assert report.verdict == "pass"
    (extra,) = predicates_of(report, "extra_calls")
    assert extra.passed


def test_extra_calls_forbid_counts_a_repeated_call_as_extra():
    report = score_case(
        {"expected_calls": [expected("a")], "extra_calls": "forbid"}, [[call("a")], [call("a")]]
    )
    assert report.verdict == "fail"


def test_extra_calls_forbid_with_no_expected_calls_and_no_calls_passes():
    report = score_case({"extra_calls": "forbid"}, [])
    assert report.verdict == "pass"


def test_extra_calls_forbid_with_no_expected_calls_fails_on_any_call():
    report = score_case({"extra_calls": "forbid"}, [[call("a")]])
    assert report.verdict == "fail"


def test_extra_calls_allow_has_no_extra_calls_predicate():
    report = score_case(
        {"expected_calls": [expected("a")], "extra_calls": "allow"}, [[call("a"), call("b")]]
    )
    assert report.verdict == "pass"
    assert predicates_of(report, "extra_calls") == []


def test_extra_calls_forbid_chooses_the_assignment_that_leaves_nothing_over():
    # a() could take either call; a(x=1) only the first. Both must be credited.
    calls = [expected("a"), expected("a", {"x": 1})]
    assert passes(calls, [[call("a", {"x": 1}), call("a", {"x": 2})]], extra_calls="forbid")


# --- assignment search -----------------------------------------------------------------------


def test_greedy_trap_an_early_call_fitting_two_expected_calls_is_given_to_the_right_one():
    report = score_case(
        {"expected_calls": [expected("a"), expected("a", {"x": 1})]},
        [[call("a", {"x": 1}), call("a", {"x": 2})]],
    )
    assert report.verdict == "pass", report.to_dict()
    first, second = expected_call_results(report)
    assert first.matched == (0, 1)
    assert second.matched == (0, 0)


def test_greedy_trap_with_depends_on_result():
    calls = [expected("f"), expected("g", depends_on_result=True), expected("f", {"x": 1})]
    assert passes(calls, [[call("f", {"x": 1}), call("f", {"x": 2})], [call("g")]])


def test_greedy_trap_with_ordered_calls():
    # The first a() must take the batch-0 call so that b (ordered) can come after it.
    calls = [expected("a", ordered=True), expected("b", ordered=True), expected("a", {"x": 1})]
    assert passes(calls, [[call("a", {"x": 1})], [call("b")], [call("a", {"x": 1})]])
    assert passes(calls, [[call("a")], [call("b")], [call("a", {"x": 1})]])
    assert not passes(calls, [[call("b")], [call("a", {"x": 1})], [call("a")]])


def test_two_identical_expected_calls_need_two_recorded_calls():
    calls = [expected("f", {"x": 1}), expected("f", {"x": 1})]
    assert not passes(calls, [[call("f", {"x": 1})]])
    report = score_case({"expected_calls": calls}, [[call("f", {"x": 1})], [call("f", {"x": 1})]])
    assert report.verdict == "pass"
    first, second = expected_call_results(report)
    assert {first.matched, second.matched} == {(0, 0), (1, 0)}


def test_one_of_two_identical_expected_calls_is_credited_when_only_one_call_exists():
    calls = [expected("f", {"x": 1}), expected("f", {"x": 1})]
    report = score_case({"expected_calls": calls}, [[call("f", {"x": 1})]])
    results = expected_call_results(report)
    assert sorted(p.passed for p in results) == [False, True]


def test_each_recorded_call_is_credited_to_at_most_one_expected_call():
    calls = [expected("f"), expected("f"), expected("f")]
    report = score_case({"expected_calls": calls}, [[call("f"), call("f")], [call("f")]])
    assert report.verdict == "pass"
    matched = [p.matched for p in expected_call_results(report)]
    assert len(set(matched)) == 3


def test_matched_is_the_batch_and_position_of_the_credited_call():
    report = score_case({"expected_calls": [expected("b")]}, [[call("a")], [call("x"), call("b")]])
    (result,) = expected_call_results(report)
    assert result.matched == (1, 1)
    assert result.to_dict()["matched"] == [1, 1]


@pytest.mark.parametrize("n", [30, 40])
def test_dozens_of_identical_calls_are_answered_quickly(n):
    expected_calls = [expected("f", ordered=True) for _ in range(n)]
    ok = [[call("f")] for _ in range(n)]
    short = [[call("f")] for _ in range(n - 1)]
    start = time.perf_counter()
    assert passes(expected_calls, ok)
    assert not passes(expected_calls, short)
    assert time.perf_counter() - start < 5


def test_adversarial_near_miss_with_dependencies_is_answered_quickly():
    n = 30
    expected_calls = [expected("f")] + [expected("f", depends_on_result=True) for _ in range(n - 1)]
    # Every call in its own batch but the last two share one: the chain cannot be completed.
    batches = [[call("f")] for _ in range(n - 2)] + [[call("f"), call("f")]]
    start = time.perf_counter()
    assert not passes(expected_calls, batches)
    assert passes(expected_calls, [[call("f")] for _ in range(n)])
    assert time.perf_counter() - start < 5


# --- the report example of docs/formats.md#reports, exactly ----------------------------------


EXAMPLE_SUITE = """
{
  "schema": "casebook.suite/1",
  "name": "file-ops",
  "match": {"tool_names": "exact", "arg_names": "exact", "null_args": "must_be_null"},
  "cases": [
    {
      "key": "delete-if-exists",
      "expected_calls": [
        {"name": "file_exists", "required_args": {"path": "notes.txt"}, "ordered": true},
        {"name": "delete_file", "required_args": {"path": "notes.txt"}, "ordered": true,
         "depends_on_result": true}
      ],
      "extra_calls": "allow",
      "expectations": [
        {"type": "did_not_call_tool", "tool": "format_disk"}
      ]
    }
  ]
}
"""

EXAMPLE_RUN = (
    '{"case": "delete-if-exists", "trial": 0, "batches": [['
    '{"id": "c1", "name": "file_exists", "arguments": {"path": "notes.txt"}}, '
    '{"id": "c2", "name": "delete_file", "arguments": {"path": "notes.txt"}}]], '
    '"final_text": "Deleted notes.txt.", "error": null}'
)

# The example of docs/formats.md#reports (its run as trial 0, without the final text
# expectation), with the ``cause`` every failed predicate carries.
EXAMPLE_REPORT = """
{"case": "delete-if-exists", "trial": 0, "verdict": "fail",
 "predicates": [
   {"kind": "run", "label": "run completed without error", "passed": true},
   {"kind": "expected_call", "index": 0, "label": "file_exists(path=\\"notes.txt\\") [ordered]",
    "passed": true, "matched": [0, 0]},
   {"kind": "expected_call", "index": 1,
    "label": "delete_file(path=\\"notes.txt\\") [ordered, after result of #0]", "passed": false,
    "matched": null, "nearest": [0, 1],
    "detail": "DETAIL",
    "cause": {"kind": "dependency", "tool": "delete_file", "argument": null}},
   {"kind": "expectation", "index": 0, "label": "did not call format_disk", "passed": true}
 ],
 "error": null, "notes": [],
 "usage": {"input_tokens": null, "output_tokens": null, "cached_input_tokens": null,
           "reasoning_tokens": null, "model_calls": null, "duration_ms": null,
           "tool_duration_ms": null, "cost_usd": null, "models": []}}
""".replace(
    "DETAIL",
    "delete_file was called in batch 0, the same batch as file_exists (#0); "
    "it depends on #0's result, so it must come in a later batch",
)


def example_report():
    suite = load_suite(parse_suite_document(EXAMPLE_SUITE, "file-ops.json"))
    return score(suite.case("delete-if-exists"), load_run(parse_json(EXAMPLE_RUN)))


def test_the_design_example_report_is_reproduced_exactly():
    # The example, with the run's notes, which every report carries (docs/formats.md#notes)
    assert example_report().to_dict() == parse_json(EXAMPLE_REPORT)


def test_the_design_example_passes_once_delete_comes_in_a_later_batch():
    suite = load_suite(parse_suite_document(EXAMPLE_SUITE, "file-ops.json"))
    run = make_run(
        [
            [call("file_exists", {"path": "notes.txt"})],
            [call("delete_file", {"path": "notes.txt"})],
        ],
        case="delete-if-exists",
    )
    report = score(suite.case("delete-if-exists"), run)
    assert report.verdict == "pass"
    assert [p.matched for p in expected_call_results(report)] == [(0, 0), (1, 0)]


# --- failure details and nearest calls -------------------------------------------------------


FAILURES = {
    "no call of that name": ([expected("f", {"x": 1})], [[call("g", {"x": 1})]]),
    "argument value differs": ([expected("f", {"x": 1})], [[call("g")], [call("f", {"x": 2})]]),
    "argument missing": ([expected("f", {"x": 1})], [[call("f", {"y": 1})]]),
    "nested argument differs": (
        [expected("f", {"o": {"a": 1}})],
        [[call("f", {"o": {"a": 1, "b": 2}})]],
    ),
    "name differs in case": ([expected("f")], [[call("F")]]),
    "out of order": (
        [expected("a", ordered=True), expected("b", ordered=True)],
        [[call("b")], [call("a")]],
    ),
    "same batch as dependency": (
        [expected("a"), expected("b", depends_on_result=True)],
        [[call("a"), call("b")]],
    ),
    "earlier than dependency": (
        [expected("a"), expected("b", depends_on_result=True)],
        [[call("b")], [call("a")]],
    ),
    "duplicates exhausted": ([expected("f"), expected("f")], [[call("f")]]),
    "null arguments": ([expected("f", {"x": 1})], [[null_call("f")]]),
    "no calls at all": ([expected("f"), expected("g", depends_on_result=True)], []),
    "its only call credited to another": (
        [expected("f", {"x": 1}), expected("f", {"x": 2})],
        [[call("f", {"x": 1})]],
    ),
}


@pytest.mark.parametrize("scenario", list(FAILURES))
def test_every_failed_expected_call_has_a_detail_and_a_nearest_call_of_that_name_if_free(
    scenario,
):
    expected_calls, batches = FAILURES[scenario]
    case = make_case(expected_calls=expected_calls)
    run = make_run(batches)
    report = score(case, run)
    assert report.verdict == "fail"
    failed = [p for p in expected_call_results(report) if not p.passed]
    assert failed
    for result in failed:
        assert result.matched is None
        assert result.detail, result
        name = case.expected_calls[result.index].name
        same_name = [c.at for c in run.calls if c.name == name]
        if result.cause.kind == "missing_call":  # every call of that name is another's
            assert result.nearest is None
        elif same_name:
            assert result.nearest in same_name, (result, same_name)
        data = result.to_dict()
        assert "nearest" in data
        assert data["detail"] == result.detail
    credited = [p for p in expected_call_results(report) if p.passed]
    assert len({p.matched for p in credited}) == len(credited)
    by_position = {c.at: c for c in run.calls}
    for result in credited:
        assert by_position[result.matched].name == case.expected_calls[result.index].name


def test_detail_for_a_missing_tool_names_the_tool():
    report = score_case({"expected_calls": [expected("lookup")]}, [[call("search")]])
    (result,) = expected_call_results(report)
    assert "lookup" in result.detail


def test_detail_for_a_differing_argument_names_the_argument():
    report = score_case(
        {"expected_calls": [expected("f", {"path": "a.txt", "mode": "r"})]},
        [[call("f", {"path": "b.txt", "mode": "r"})]],
    )
    (result,) = expected_call_results(report)
    assert result.nearest == (0, 0)
    assert "path" in result.detail
    assert "mode" not in result.detail


def test_detail_for_an_out_of_order_call_names_the_other_call():
    report = score_case(
        {"expected_calls": [expected("alpha", ordered=True), expected("beta", ordered=True)]},
        [[call("beta")], [call("alpha")]],
    )
    failed = [p for p in expected_call_results(report) if not p.passed]
    assert len(failed) == 1
    other = "beta" if failed[0].index == 0 else "alpha"
    assert other in failed[0].detail


def test_nearest_prefers_the_call_of_that_name_that_differs_least():
    report = score_case(
        {"expected_calls": [expected("f", {"a": 1, "b": 2, "c": 3})]},
        [[call("f", {"a": 0, "b": 0, "c": 0})], [call("f", {"a": 1, "b": 2, "c": 0})]],
    )
    (result,) = expected_call_results(report)
    assert result.nearest == (1, 0)
    assert "c" in result.detail


# --- missing calls: a call credited to another expected call is not a wrong attempt ---------


def test_an_expected_call_whose_tool_calls_are_all_credited_elsewhere_is_missing():
    report = score_case(
        {
            "expected_calls": [
                expected("update", {"id": "A"}),
                expected("update", {"id": "B"}),
                expected("update", {"id": "C"}),
            ]
        },
        [[call("update", {"id": "A"})], [call("update", {"id": "B"})]],
    )
    missing = expected_call_results(report)[2].to_dict()
    assert missing["nearest"] is None
    assert missing["detail"] == (
        "2 calls of update, each credited to another expected call (#0, #1); none left for this one"
    )
    assert missing["cause"] == {"kind": "missing_call", "tool": "update", "argument": None}


def test_a_single_call_credited_elsewhere_leaves_nothing_for_an_earlier_expected_call():
    # #0 is not satisfied by the call; #1 is, and is credited with it.
    report = score_case(
        {"expected_calls": [expected("f", {"x": 2}), expected("f", {"x": 1})]},
        [[call("f", {"x": 1})]],
    )
    missing = expected_call_results(report)[0]
    assert missing.detail == (
        "1 call of f, credited to another expected call (#1); none left for this one"
    )
    assert missing.cause.kind == "missing_call"


def test_the_nearest_call_is_drawn_only_from_calls_credited_to_nothing():
    # The call credited to #0 differs from #1 in one argument, the free one in two: the
    # free one is still the one compared, with an argument cause.
    report = score_case(
        {
            "expected_calls": [
                expected("f", {"a": 1, "b": 1}),
                expected("f", {"a": 1, "b": 2}),
            ]
        },
        [[call("f", {"a": 1, "b": 1})], [call("f", {"a": 9, "b": 9})]],
    )
    result = expected_call_results(report)[1]
    assert result.nearest == (1, 0)
    assert result.detail == (
        "2 calls of f, none with these arguments; 1 is credited to another expected call "
        "(#0); the other one, in batch 1: a: expected 1, got 9; b: expected 2, got 9"
    )
    assert result.cause.kind == "argument_value"
    assert result.cause.argument == "a"


def test_with_several_free_calls_the_nearest_of_them_is_named():
    report = score_case(
        {"expected_calls": [expected("f", {"a": 1}), expected("f", {"a": 2, "b": 2})]},
        [[call("f", {"a": 1})], [call("f", {"a": 3, "b": 3})], [call("f", {"a": 3, "b": 2})]],
    )
    result = expected_call_results(report)[1]
    assert result.nearest == (2, 0)
    assert result.detail == (
        "3 calls of f, none with these arguments; 1 is credited to another expected call "
        "(#0); the nearest of the other 2, in batch 2: a: expected 2, got 3"
    )


def test_tau_bench_task_2_trial_0_misses_three_updates_rather_than_getting_their_ids_wrong():
    # The agent updated 2 of the 5 reservations; each update is credited to the expected
    # call it satisfies (#0, #1), and the other three were never made.
    suite = load_suite(tau_bench.suite_document(prefix=""))
    (record,) = [r for r in tau_bench.RECORDS if r["task_id"] == 2 and r["trial"] == 0]
    line = tau_bench.run_line(record, case="2")
    report = score(suite.case("2"), load_run(to_canonical(line)))
    results = expected_call_results(report)
    assert [r.matched for r in results] == [(4, 0), (5, 0), None, None, None]
    for result in results[2:]:
        assert result.to_dict()["nearest"] is None
        assert result.detail == (
            "2 calls of update_reservation_flights, each credited to another expected call "
            "(#0, #1); none left for this one"
        )
        assert result.cause.to_dict() == {
            "kind": "missing_call",
            "tool": "update_reservation_flights",
            "argument": None,
        }


# --- labels and predicate order --------------------------------------------------------------


def test_labels_are_unique_even_when_two_expected_calls_are_identical():
    report = score_case(
        {
            "expected_calls": [
                expected("f", {"x": 1}),
                expected("f", {"x": 1}),
                expected("f", {"x": 1}),
            ],
            "expectations": [
                {"type": "called_tool", "tool": "f"},
                {"type": "called_tool", "tool": "f"},
            ],
        },
        [[call("f", {"x": 1})]],
    )
    labels = [p.label for p in report.predicates]
    assert len(labels) == len(set(labels)), labels
    assert all(labels)


def test_predicates_come_run_first_then_expected_calls_in_order_then_expectations_in_order():
    report = score_case(
        {
            "expected_calls": [expected("a"), expected("b"), expected("c")],
            "expectations": [{"type": "no_error"}, {"type": "called_tool", "tool": "a"}],
        },
        [[call("c"), call("b"), call("a")]],
    )
    kinds = [p.kind for p in report.predicates]
    assert kinds == [
        "run",
        "expected_call",
        "expected_call",
        "expected_call",
        "expectation",
        "expectation",
    ]
    assert report.predicates[0].label == "run completed without error"
    assert [p.index for p in report.predicates[1:4]] == [0, 1, 2]
    assert [p.index for p in report.predicates[4:]] == [0, 1]


def test_labels_are_stable_they_do_not_depend_on_the_run():
    case = make_case(
        expected_calls=[expected("a", {"x": 1}, ordered=True), expected("a", {"x": 1})],
        expectations=[{"type": "called_tool", "tool": "a"}, {"type": "no_error"}],
        extra_calls="forbid",
    )
    runs = [
        make_run([[call("a", {"x": 1})], [call("a", {"x": 1})]]),
        make_run([[call("b")]], error="boom"),
        make_run([]),
    ]
    label_lists = [[p.label for p in score(case, run).predicates] for run in runs]
    assert label_lists[0] == label_lists[1] == label_lists[2]


def test_expected_call_labels_mark_ordered_and_dependency():
    case = make_case(
        expected_calls=[
            expected("a", {"p": "x"}, ordered=True),
            expected("b", {"p": "x"}, ordered=True, depends_on_result=True),
        ]
    )
    report = score(case, make_run([[call("a", {"p": "x"})], [call("b", {"p": "x"})]]))
    first, second = expected_call_results(report)
    assert first.label == 'a(p="x") [ordered]'
    assert second.label == 'b(p="x") [ordered, after result of #0]'
