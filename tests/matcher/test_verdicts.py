"""The verdict (docs/matcher.md#verdict) and the report's shape (docs/formats.md#reports)."""

import json

import pytest

from scoring.matcher import (
    ERROR,
    FAIL,
    PASS,
    InvalidInput,
    TrialNumbering,
    load_run,
    load_suite,
    parse_json,
    score,
)

from .builders import (
    call,
    case_doc,
    expectation_results,
    expected,
    expected_call_results,
    make_case,
    make_run,
    run_doc,
    score_case,
    suite_doc,
)

FULL_CASE = {
    "expected_calls": [expected("a", {"x": 1}), expected("b", depends_on_result=True)],
    "expectations": [
        {"type": "called_tool", "tool": "a"},
        {"type": "final_text_contains", "text": "done"},
        {"type": "no_error"},
    ],
}
GOOD_BATCHES = [[call("a", {"x": 1})], [call("b")]]


def test_verdict_constants_are_the_three_words():
    assert (PASS, FAIL, ERROR) == ("pass", "fail", "error")


def test_pass_when_no_run_error_and_every_predicate_holds():
    report = score_case(FULL_CASE, GOOD_BATCHES, final_text="all done")
    assert report.verdict == "pass"
    assert report.error is None
    assert all(p.passed for p in report.predicates)


def test_an_empty_case_passes_a_clean_run():
    assert score_case({}, [], final_text=None).verdict == "pass"


def test_fail_when_only_an_expectation_fails():
    report = score_case(FULL_CASE, GOOD_BATCHES, final_text="finished")
    assert report.verdict == "fail"
    assert [p.label for p in report.predicates if not p.passed] == [
        expectation_results(report)[1].label
    ]


def test_fail_when_only_an_expected_call_fails():
    report = score_case(FULL_CASE, [[call("a", {"x": 1}), call("b")]], final_text="done")
    assert report.verdict == "fail"
    assert [p.kind for p in report.predicates if not p.passed] == ["expected_call"]


def test_fail_when_only_extra_calls_fails():
    report = score_case(
        {**FULL_CASE, "extra_calls": "forbid"}, [*GOOD_BATCHES, [call("c")]], final_text="done"
    )
    assert report.verdict == "fail"
    assert [p.kind for p in report.predicates if not p.passed] == ["extra_calls"]


@pytest.mark.parametrize("error", ["crash: segfault", "timeout", ""])
def test_run_error_fails_with_the_run_predicate_failing(error):
    report = score_case({}, [], final_text="done", error=error)
    assert report.verdict == "fail"
    run_predicate = report.predicates[0]
    assert run_predicate.kind == "run"
    assert run_predicate.label == "run completed without error"
    assert not run_predicate.passed


def test_run_error_still_evaluates_and_reports_every_other_predicate():
    report = score_case(FULL_CASE, GOOD_BATCHES, final_text="finished", error="timeout")
    assert report.verdict == "fail"
    kinds = [p.kind for p in report.predicates]
    assert kinds == [
        "run",
        "expected_call",
        "expected_call",
        "expectation",
        "expectation",
        "expectation",
    ]
    first, second = expected_call_results(report)
    assert first.passed
    assert first.matched == (0, 0)
    assert second.passed
    assert second.matched == (1, 0)
    called, contains, no_error = expectation_results(report)
    assert called.passed
    assert not contains.passed  # evaluated, not skipped: "finished" has no "done"
    assert not no_error.passed


def test_run_error_with_everything_else_holding_still_fails():
    case = dict(FULL_CASE)
    case["expectations"] = FULL_CASE["expectations"][:2]
    report = score_case(case, GOOD_BATCHES, final_text="done", error="late crash")
    assert report.verdict == "fail"
    assert [p.passed for p in report.predicates] == [False, True, True, True, True]


# --- verdict error -------------------------------------------------------------------------


BAD_REGEXES = [r"(?=done)", r"(a)\1", "(unclosed", r"(?<!x)y"]


@pytest.mark.parametrize("regex", BAD_REGEXES)
def test_strict_loading_refuses_a_regex_re2_cannot_compile(regex):
    with pytest.raises(InvalidInput):
        load_suite(
            suite_doc(case_doc(expectations=[{"type": "final_text_matches", "regex": regex}]))
        )


@pytest.mark.parametrize("regex", BAD_REGEXES)
def test_scoring_a_regex_re2_cannot_compile_gives_verdict_error_with_a_reason(regex):
    case = make_case(strict=False, expectations=[{"type": "final_text_matches", "regex": regex}])
    report = score(case, make_run(final_text="done"))
    assert report.verdict == "error"
    assert report.error
    (result,) = expectation_results(report)
    assert result.error
    assert report.to_dict()["verdict"] == "error"
    assert report.to_dict()["error"] == report.error


def test_verdict_error_outranks_failing_predicates():
    case = make_case(
        strict=False,
        expected_calls=[expected("never_called")],
        expectations=[
            {"type": "no_tool_calls"},
            {"type": "final_text_matches", "regex": "(?=x)"},
        ],
    )
    report = score(case, make_run([[call("x")]], final_text="x", error="crash"))
    assert report.verdict == "error"
    assert report.error
    # The others are still evaluated and reported.
    assert [p.kind for p in report.predicates] == [
        "run",
        "expected_call",
        "expectation",
        "expectation",
    ]
    assert not report.predicates[0].passed
    assert not report.predicates[1].passed
    assert not report.predicates[2].passed


def test_unevaluable_regex_is_an_error_not_a_silent_fail_even_without_final_text():
    case = make_case(strict=False, expectations=[{"type": "final_text_matches", "regex": "(?=x)"}])
    report = score(case, make_run(final_text=None))
    assert report.verdict == "error"


def test_lenient_loading_still_refuses_other_problems():
    with pytest.raises(InvalidInput):
        load_suite(
            suite_doc(
                case_doc(
                    expectations=[
                        {"type": "final_text_matches", "regex": "(?=x)"},
                        {"type": "tool_call_count", "min": 3, "max": 1},
                    ]
                )
            ),
            strict=False,
        )


def test_a_valid_regex_in_a_lenient_suite_scores_normally():
    case = make_case(strict=False, expectations=[{"type": "final_text_matches", "regex": "do+ne"}])
    assert score(case, make_run(final_text="dooone")).verdict == "pass"
    assert score(case, make_run(final_text="dne")).verdict == "fail"


# --- a verdict, never an exception ------------------------------------------------------------

LONE_SURROGATE = "\ud800"

SURROGATE_RUNS = {
    "final_text": (
        {"expectations": [{"type": "final_text_equals", "text": "a"}]},
        {"final_text": LONE_SURROGATE},
    ),
    "error": ({"expectations": [{"type": "no_error"}]}, {"error": LONE_SURROGATE}),
    "argument value": (
        {"expected_calls": [expected("f", {"x": "a"})]},
        {"batches": [[call("f", {"x": LONE_SURROGATE})]]},
    ),
    "nested argument value": (
        {"expected_calls": [expected("f", {"x": {"k": "a"}})]},
        {"batches": [[call("f", {"x": {"k": LONE_SURROGATE}})]]},
    ),
}


@pytest.mark.parametrize("where", list(SURROGATE_RUNS))
def test_a_lone_surrogate_in_a_run_gives_a_verdict_or_invalid_input_never_an_exception(where):
    case_fields, run_fields = SURROGATE_RUNS[where]
    document = run_doc(**{"batches": [], **run_fields})
    run = load_run(document)  # a run built in Python is not checked for surrogates...
    assert score(make_case(**case_fields), run).verdict == "fail"  # ...and still scores


@pytest.mark.parametrize("big_number", ["", ', "meta": {"n": 123456789012345678901234567890}'])
def test_a_run_line_with_a_lone_surrogate_escape_is_invalid_json(big_number):
    # The exact-number parser (taken for the big integer) refuses it like orjson does.
    line = '{"case": "c", "batches": [], "final_text": "\\ud800"' + big_number + "}"
    with pytest.raises(InvalidInput, match="invalid JSON"):
        parse_json(line)


# --- report shape (docs/formats.md#report-fields) --------------------------------------------


def test_report_to_dict_has_the_design_keys_in_shape():
    report = score_case(FULL_CASE, GOOD_BATCHES, final_text="done")
    data = report.to_dict()
    assert set(data) == {"case", "trial", "verdict", "predicates", "error", "notes", "usage"}
    assert data["notes"] == []
    assert data["case"] == "c"
    assert data["verdict"] == "pass"
    assert data["error"] is None
    assert isinstance(data["predicates"], list)
    assert data["predicates"][0] == {
        "kind": "run",
        "label": "run completed without error",
        "passed": True,
    }


def test_report_trial_comes_from_the_run():
    run = TrialNumbering().number(load_run(run_doc(trial=4)))
    assert score(make_case(), run).to_dict()["trial"] == 4
    numbered = TrialNumbering().number(load_run(run_doc()))
    assert score(make_case(), numbered).to_dict()["trial"] == 0


def test_passed_expected_call_dict_has_index_label_matched_and_no_detail():
    report = score_case(FULL_CASE, GOOD_BATCHES, final_text="done")
    data = report.to_dict()["predicates"][1]
    assert data == {
        "kind": "expected_call",
        "index": 0,
        "label": data["label"],
        "passed": True,
        "matched": [0, 0],
    }
    assert data["label"]


def test_failed_expected_call_dict_has_matched_null_nearest_and_detail():
    report = score_case(FULL_CASE, [[call("a", {"x": 2})]], final_text="done")
    data = report.to_dict()["predicates"][1]
    assert data["kind"] == "expected_call"
    assert data["index"] == 0
    assert data["passed"] is False
    assert data["matched"] is None
    assert data["nearest"] == [0, 0]
    assert isinstance(data["detail"], str)
    assert data["detail"]


def test_failed_expectation_dict_has_a_detail():
    report = score_case(FULL_CASE, GOOD_BATCHES, final_text="nope")
    data = report.to_dict()["predicates"][4]
    assert data["kind"] == "expectation"
    assert data["index"] == 1
    assert data["passed"] is False
    assert "detail" in data
    assert "matched" not in data


def test_passed_expectation_dict_has_no_matched_nor_detail():
    report = score_case(FULL_CASE, GOOD_BATCHES, final_text="done")
    data = report.to_dict()["predicates"][3]
    assert set(data) == {"kind", "index", "label", "passed"}
    assert data["passed"] is True


@pytest.mark.parametrize("final_text", ["done", "nope", None])
@pytest.mark.parametrize("error", [None, "boom"])
def test_report_dict_is_plain_json(final_text, error):
    report = score_case(
        {**FULL_CASE, "extra_calls": "forbid"},
        [[call("a", {"x": 1}), call("b")]],
        final_text=final_text,
        error=error,
    )
    data = report.to_dict()
    assert json.loads(json.dumps(data)) == data


def test_report_labels_are_unique():
    report = score_case(
        {
            "expected_calls": [expected("a"), expected("a")],
            "expectations": [{"type": "no_error"}, {"type": "no_error"}],
            "extra_calls": "forbid",
        },
        [[call("a")]],
    )
    labels = [p.label for p in report.predicates]
    assert len(labels) == len(set(labels))


def test_report_case_is_the_case_key():
    suite = load_suite(suite_doc(case_doc("alpha"), case_doc("beta")))
    report = score(suite.case("beta"), make_run(case="beta"))
    assert report.case == "beta"
    assert report.to_dict()["case"] == "beta"
