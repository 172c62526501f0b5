"""What a suite's pattern or a run may cost: patterns past the length and compiled-size
limits are authoring problems by path (docs/formats.md#what-is-refused), a stored suite
holding one still scores (its verdict ``error``, at once), and scoring one run stops at its
time budget with the verdict ``error`` (docs/matcher.md#verdict)."""

from __future__ import annotations

import time

import pytest

from scoring.matcher import ERROR, InvalidInput, limit_patterns, load_run, score
from scoring.matcher.regex import DEFAULT_MAX_LENGTH

from .builders import make_case

LONG_LITERAL = "(?i)" + "a" * 50_000  # took 63 s against a 1 MB text of "a"s
TEXT = "a" * (1 << 20)


def final_text_run(text: str = TEXT):
    return load_run({"case": "c", "batches": [], "final_text": text})


def regex_expectation(regex: str) -> dict:
    return {"type": "final_text_matches", "regex": regex}


@pytest.fixture
def pattern_limit():
    """Set the pattern length limit for one test, as the app does from its settings."""
    yield limit_patterns
    limit_patterns(DEFAULT_MAX_LENGTH)


@pytest.mark.parametrize(
    ("expectations", "expected_calls", "path"),
    [
        ([regex_expectation(LONG_LITERAL)], [], "cases[0].expectations[0].regex"),
        (
            [],
            [{"name": "f", "required_args": {"q": {"$regex": LONG_LITERAL}}}],
            "cases[0].expected_calls[0].required_args.q.$regex",
        ),
    ],
)
def test_a_pattern_past_the_length_limit_is_refused_by_path(expectations, expected_calls, path):
    with pytest.raises(InvalidInput) as refused:
        make_case(expectations=expectations, expected_calls=expected_calls)
    assert [(p.path, p.message) for p in refused.value.problems] == [
        (path, "the pattern is 50,004 characters; the limit is 1,000")
    ]


def test_the_length_limit_is_the_apps_to_set(pattern_limit):
    pattern_limit(10)
    with pytest.raises(InvalidInput, match="the pattern is 11 characters; the limit is 10"):
        make_case(expectations=[regex_expectation("hello world")])
    pattern_limit(20)
    assert make_case(expectations=[regex_expectation("hello world")]) is not None


def test_a_short_pattern_that_compiles_to_a_costly_program_is_refused():
    # 41 characters, 15,005 RE2 instructions: 95 s against 256 KB of "a"s.
    with pytest.raises(InvalidInput, match="RE2 compiles it to 15,005 instructions"):
        make_case(expectations=[regex_expectation(r"\w{1000}" * 5 + "b")])


def test_a_stored_suite_with_a_long_pattern_still_scores_to_an_error_at_once():
    case = make_case(strict=False, expectations=[regex_expectation(LONG_LITERAL)])
    started = time.monotonic()
    report = score(case, final_text_run(), time_budget=5)
    assert time.monotonic() - started < 1
    assert report.verdict == ERROR
    assert "the pattern is 50,004 characters; the limit is 1,000" in report.error


def test_scoring_past_the_time_budget_is_an_error_saying_so():
    # 200 patterns, each within the limits and 10-30 ms on a 1 MB text: seconds in all.
    costly = [regex_expectation(rf"\w{{600}}x{n}") for n in range(200)]
    case = make_case(expectations=costly)
    started = time.monotonic()
    report = score(case, final_text_run(), time_budget=0.2)
    assert time.monotonic() - started < 1.5
    assert report.verdict == ERROR
    assert report.error.startswith("scoring took longer than 0.2 s, the limit for one run")
    assert report.predicates == []


def test_within_the_budget_the_report_is_the_same_as_without_one():
    case = make_case(expectations=[regex_expectation(r"\w{600}x")])
    run = final_text_run()
    assert score(case, run, time_budget=60).to_dict() == score(case, run).to_dict()
