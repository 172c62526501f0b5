"""Property tests of the matcher (docs/formats.md#run-files, docs/matcher.md) with hypothesis."""

import copy
import json
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.matcher import CAUSE_KINDS, InvalidInput, json_equal, load_run, load_suite, score

from .builders import suite_doc

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- JSON values -----------------------------------------------------------------------------

KEYS = st.text(alphabet="abcxyzAB_", min_size=1, max_size=4)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)
JSON_OBJECTS = st.dictionaries(KEYS, JSON, max_size=4)


def respelled(value):
    """The same JSON meaning written differently: ints as floats where exact, keys reversed."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return float(value) if abs(value) <= 2**53 else value
    if isinstance(value, float):
        # A float means the decimal it was written as (its shortest repr); only below 2**53
        # is that the same integer as int(value).
        return int(value) if value.is_integer() and abs(value) <= 2**53 else value
    if isinstance(value, list):
        return [respelled(v) for v in value]
    return {k: respelled(value[k]) for k in reversed(list(value))}


@SETTINGS
@given(JSON)
def test_json_equal_is_reflexive(value):
    assert json_equal(value, value)
    assert json_equal(value, copy.deepcopy(value))


@SETTINGS
@given(JSON)
def test_json_equal_holds_between_a_value_and_its_respelling_both_ways(value):
    other = respelled(value)
    assert json_equal(value, other)
    assert json_equal(other, value)


@SETTINGS
@given(JSON, JSON)
def test_json_equal_is_symmetric(a, b):
    assert json_equal(a, b) == json_equal(b, a)


@SETTINGS
@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_an_integer_equals_the_float_of_the_same_value(n):
    assert json_equal(n, float(n))
    assert json_equal(float(n), n)
    assert json_equal([{"n": n}], [{"n": float(n)}])


@SETTINGS
@given(st.integers(min_value=2**53 + 1, max_value=2**80))
def test_an_integer_the_float_cannot_hold_differs_from_that_float(n):
    # A float means its shortest decimal (docs/matcher.md#value-equality): 1e23 is 10**23,
    # though the binary float holds 99999999999999991611392; only a float that reads back as
    # another number differs.
    if Decimal(repr(float(n))) != n:
        assert not json_equal(n, float(n))
    else:
        assert json_equal(n, float(n))


def test_a_float_means_the_decimal_it_is_written_as():
    assert json_equal(10**23, 1e23)
    assert not json_equal(2**53 + 1, float(2**53 + 1))


@SETTINGS
@given(st.integers())
def test_a_boolean_never_equals_any_integer(n):
    assert not json_equal(True, n)
    assert not json_equal(n, False)


# --- cases and runs --------------------------------------------------------------------------

NAMES = ["a", "b", "c", "A"]
ARG_VALUES = st.sampled_from([0, 1, 1.0, True, None, "s", [1], {"k": 1}])
SMALL_ARGS = st.dictionaries(st.sampled_from(["x", "y", "X"]), ARG_VALUES, max_size=2)
MATCH = st.one_of(
    st.none(),
    st.just("lenient"),
    st.fixed_dictionaries(
        {},
        optional={
            "tool_names": st.sampled_from(["exact", "ignore_case"]),
            "arg_names": st.sampled_from(["exact", "ignore_case"]),
            "null_args": st.sampled_from(["must_be_null", "absent_or_null"]),
        },
    ),
)


@st.composite
def expected_calls(draw, names=None, args=SMALL_ARGS, max_size=3):
    names = st.sampled_from(NAMES) if names is None else names
    n = draw(st.integers(0, max_size))
    return [
        {
            "name": draw(names),
            "required_args": draw(args),
            "ordered": draw(st.booleans()),
            "depends_on_result": i > 0 and draw(st.booleans()),
        }
        for i in range(n)
    ]


TEXTS = st.text(alphabet="ab 01,.-+\u2212eE\u00a0", max_size=10)
# Any code point but lone surrogates (test_verdicts.py pins those down separately).
ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12)
TOOL = st.sampled_from(NAMES)


def expectation_strategies(with_order=True, with_bounds=True):
    choices = [
        st.builds(lambda t: {"type": "called_tool", "tool": t}, TOOL),
        st.builds(lambda t: {"type": "did_not_call_tool", "tool": t}, TOOL),
        st.builds(
            lambda t, a: {"type": "called_tool_with", "tool": t, "args": a}, TOOL, SMALL_ARGS
        ),
        st.builds(
            lambda t, lo, hi: {"type": "tool_call_count", "tool": t, "min": lo, "max": lo + hi},
            TOOL,
            st.integers(0, 2),
            st.integers(0, 2),
        ),
        st.builds(lambda lo: {"type": "tool_call_count", "min": lo}, st.integers(0, 3)),
        st.builds(
            lambda t, ci: {"type": "final_text_contains", "text": t, "case_insensitive": ci},
            st.text(alphabet="ab ", max_size=2),
            st.booleans(),
        ),
        st.builds(
            lambda t: {"type": "final_text_equals", "text": t}, st.text(alphabet="ab", max_size=2)
        ),
        st.builds(
            lambda r: {"type": "final_text_matches", "regex": r},
            st.sampled_from(["a", r"\d$", "^b"]),
        ),
        st.builds(
            lambda v, tol: {"type": "final_number_equals", "value": v, "tolerance": tol},
            st.sampled_from([0, 1, -1, 0.5, 10]),
            st.sampled_from([0, 0.5, 1]),
        ),
        st.just({"type": "no_error"}),
    ]
    if with_order:
        choices.append(
            st.builds(
                lambda ts: {"type": "called_tools_in_order", "tools": ts},
                st.lists(TOOL, max_size=3),
            )
        )
    if with_bounds:
        choices.append(
            st.builds(lambda hi: {"type": "tool_call_count", "max": hi}, st.integers(0, 4))
        )
        choices.append(st.just({"type": "no_tool_calls"}))
    return st.one_of(choices)


@st.composite
def cases(draw, with_order=True, with_bounds=True, extra_calls=("allow", "forbid")):
    case = {
        "key": "c",
        "expected_calls": draw(expected_calls()),
        "expectations": draw(st.lists(expectation_strategies(with_order, with_bounds), max_size=3)),
        "extra_calls": draw(st.sampled_from(extra_calls)),
    }
    match = draw(MATCH)
    if match is not None:
        case["match"] = match
    return case


RECORDED_CALL = st.builds(
    lambda name, args: {"name": name, "arguments": args},
    st.sampled_from([*NAMES, "B"]),
    SMALL_ARGS,
)


@st.composite
def runs(draw):
    batches = draw(st.lists(st.lists(RECORDED_CALL, min_size=1, max_size=3), max_size=4))
    return {
        "case": "c",
        "batches": batches,
        "final_text": draw(st.one_of(st.none(), TEXTS)),
        "error": draw(st.sampled_from([None, None, None, "", "crash"])),
    }


@st.composite
def runs_near(draw, case):
    """Runs likely to satisfy ``case``: its expected calls, each in its own batch, plus noise."""
    batches = [
        [{"name": c["name"], "arguments": copy.deepcopy(c["required_args"])}]
        for c in case["expected_calls"]
    ]
    for _ in range(draw(st.integers(0, 3))):
        noise = draw(RECORDED_CALL)
        if batches and draw(st.booleans()):
            batch = batches[draw(st.integers(0, len(batches) - 1))]
            batch.insert(draw(st.integers(0, len(batch))), noise)
        else:
            batches.insert(draw(st.integers(0, len(batches))), [noise])
    return {
        "case": "c",
        "batches": batches,
        "final_text": draw(st.one_of(st.none(), TEXTS)),
        "error": draw(st.sampled_from([None, None, None, None, "crash"])),
    }


@st.composite
def cases_and_runs(draw, **case_options):
    case = draw(cases(**case_options))
    run = draw(st.one_of(runs(), runs_near(case), runs_near(case)))
    return case, run


def verdict(case_data, run_data):
    case = load_suite(suite_doc(case_data)).case("c")
    report = score(case, load_run(run_data))
    assert report.verdict in {"pass", "fail"}, report.to_dict()
    return report.verdict


@SETTINGS
@given(cases_and_runs(with_order=False), st.randoms(use_true_random=False))
def test_reordering_calls_inside_a_batch_never_changes_the_verdict(case_and_run, rnd):
    case, run = case_and_run
    before = verdict(case, run)
    shuffled = copy.deepcopy(run)
    for batch in shuffled["batches"]:
        rnd.shuffle(batch)
    assert verdict(case, shuffled) == before


UNNAMED = "zz_unnamed_tool"


@SETTINGS
@given(
    cases_and_runs(with_bounds=False, extra_calls=("allow",)),
    SMALL_ARGS,
    st.integers(0, 10),
    st.integers(0, 10),
    st.booleans(),
)
def test_adding_a_call_to_a_tool_the_case_never_names_never_turns_a_pass_into_a_fail(
    case_and_run, args, batch_pick, position_pick, new_batch
):
    case, run = case_and_run
    if verdict(case, run) != "pass":
        return
    extra = {"name": UNNAMED, "arguments": args}
    grown = copy.deepcopy(run)
    batches = grown["batches"]
    if new_batch or not batches:
        batches.insert(batch_pick % (len(batches) + 1), [extra])
    else:
        batch = batches[batch_pick % len(batches)]
        batch.insert(position_pick % (len(batch) + 1), extra)
    assert verdict(case, grown) == "pass", (case, grown)


# --- robustness on arbitrary JSON ------------------------------------------------------------


def maybe(strategy):
    """Mostly the well-typed value, sometimes arbitrary JSON."""
    return st.one_of(strategy, strategy, strategy, JSON)


CALLISH = st.one_of(
    st.fixed_dictionaries(
        {"name": maybe(st.one_of(st.sampled_from([*NAMES, "", "B"]), ANY_TEXT))},
        optional={
            "arguments": maybe(st.one_of(st.none(), JSON_OBJECTS)),
            "arguments_raw": maybe(st.text(max_size=8)),
            "id": JSON,
            "result": JSON,
            "is_error": maybe(st.booleans()),
        },
    ),
    JSON,
)
RUNISH = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "case": maybe(st.just("c")),
            "batches": maybe(st.lists(maybe(st.lists(CALLISH, max_size=3)), max_size=3)),
            "final_text": maybe(st.one_of(st.none(), TEXTS, ANY_TEXT)),
            "error": maybe(st.one_of(st.none(), ANY_TEXT)),
            "trial": maybe(st.integers(-3, 5)),
            "meta": JSON,
        },
    ),
    JSON,
)

ROBUSTNESS_CASES = [
    load_suite(
        suite_doc(
            {
                "key": "c",
                "expected_calls": [
                    {"name": "a", "required_args": {"x": 1}, "ordered": True},
                    {"name": "b", "required_args": {"x": None}, "depends_on_result": True},
                    {"name": "A", "required_args": {"y": {"k": [1, None]}}, "ordered": True},
                ],
                "extra_calls": extra,
                "match": match,
                "expectations": [
                    {"type": "called_tool", "tool": "a"},
                    {"type": "did_not_call_tool", "tool": "b"},
                    {"type": "called_tool_with", "tool": "a", "args": {"x": {"k": 1}}},
                    {"type": "tool_call_count", "min": 1, "max": 2},
                    {"type": "tool_call_count", "tool": "a", "max": 1},
                    {"type": "called_tools_in_order", "tools": ["a", "b"]},
                    {"type": "no_tool_calls"},
                    {"type": "final_text_contains", "text": "A", "case_insensitive": True},
                    {"type": "final_text_equals", "text": "a"},
                    {"type": "final_text_matches", "regex": r"\d+$"},
                    {"type": "final_number_equals", "value": 1.5, "tolerance": 0.5},
                    {"type": "no_error"},
                ],
            }
        )
    ).case("c")
    for extra, match in [("allow", {}), ("forbid", "lenient")]
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RUNISH)
def test_load_run_only_raises_invalid_input_and_score_never_raises_on_what_it_accepts(data):
    try:
        run = load_run(data)
    except InvalidInput as exc:
        problems = exc.problems
        run = None
    if run is None:
        assert problems
        return
    for case in ROBUSTNESS_CASES:
        report = score(case, run)
        assert report.verdict in {"pass", "fail"}
        json.dumps(report.to_dict())


# --- a run made of exactly the expected calls ------------------------------------------------

# Latin and Greek letters with tricky case folds: sharp s (small, capital) and sigma forms.
NAME_TEXT = st.text(alphabet="abcABC_1\u00df\u1e9e\u03a3\u03c3\u03c2", min_size=1, max_size=5)


@SETTINGS
@given(
    expected_calls(names=NAME_TEXT, args=JSON_OBJECTS, max_size=5),
    MATCH,
    st.sampled_from(["allow", "forbid"]),
)
def test_a_run_of_exactly_the_expected_calls_each_in_its_own_batch_passes(calls, match, extra):
    case = {"key": "c", "expected_calls": calls, "extra_calls": extra}
    if match is not None:
        case["match"] = match
    run = {
        "case": "c",
        "batches": [[{"name": c["name"], "arguments": c["required_args"]}] for c in calls],
        "final_text": None,
        "error": None,
    }
    report = score(load_suite(suite_doc(case)).case("c"), load_run(run))
    assert report.verdict == "pass", report.to_dict()


# --- causes -------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases_and_runs(with_order=True))
def test_every_failed_predicate_has_a_cause_of_a_known_kind(case_and_run):
    case_data, run_data = case_and_run
    report = score(load_suite(suite_doc(case_data)).case("c"), load_run(run_data))
    for predicate in report.predicates:
        data = predicate.to_dict()
        if predicate.passed:
            assert "cause" not in data
        else:
            assert data["cause"]["kind"] in CAUSE_KINDS, data
