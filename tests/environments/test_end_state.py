"""Judging runs by end state (docs/matcher.md#end-state): replays in the sandbox, its
limits, and agreement with BFCL's multi-turn checker."""

import subprocess
import sys
import time

import pytest

from bench.bfcl_multi_turn_agreement import agreement
from scoring.environments import EnvironmentLimits, SandboxReplayer
from scoring.environments import replayer as replayer_module
from scoring.matcher import (
    ERROR,
    FAIL,
    PASS,
    CaseEnvironment,
    InvalidInput,
    load_run,
    load_suite,
    score,
)
from tests.support.environments import ENVIRONMENTS

LIMITS = EnvironmentLimits(cpu_seconds=5, memory_mb=256, wall_seconds=30)


@pytest.fixture(scope="module")
def replayer():
    replayer = SandboxReplayer(LIMITS, ENVIRONMENTS)
    yield replayer
    replayer.close()


def store_case(*expectations, environment="Store"):
    suite = load_suite(
        {
            "cases": [
                {
                    "key": "c",
                    "environment": {"name": environment, "initial_state": {"a": 1}},
                    "expectations": list(expectations),
                }
            ]
        }
    )
    return suite.cases[0]


REFERENCE = {
    "type": "end_state_matches",
    "reference_calls": [
        {"name": "put", "arguments": {"key": "b", "value": 2}},
        {"name": "put", "arguments": {"key": "c", "value": [1, 2]}},
    ],
}


def run_of(*calls):
    batches = [[{"name": name, "arguments": arguments}] for name, arguments in calls]
    return load_run({"case": "c", "batches": batches})


def test_another_order_of_independent_calls_and_an_extra_lookup_reach_the_same_end_state(
    replayer,
):
    run = run_of(
        ("get", {"key": "a"}),
        ("put", {"key": "c", "value": [1, 2.0]}),
        ("put", {"key": "b", "value": 2}),
    )
    assert score(store_case(REFERENCE), run, replayer=replayer).verdict == PASS


def test_a_different_end_state_fails_with_a_diff_by_path_and_the_refused_calls(replayer):
    run = run_of(
        ("put", {"key": "b", "value": 3}),
        ("put", {"key": "c", "value": [1]}),
        ("delete", {"key": "zz"}),
    )
    report = score(store_case(REFERENCE), run, replayer=replayer)
    assert report.verdict == FAIL
    failed = report.failures[-1]
    assert failed.detail == (
        "the end state differs from the reference's: b: run 3, reference 2; "
        "c[1]: run has none, reference 2; "
        "refused: delete (batch 2, call 0): \"no key 'zz'\""
    )
    assert failed.cause.to_dict() == {"kind": "end_state", "tool": None, "argument": "b"}


def test_a_state_path_equals_a_value_or_satisfies_a_matcher(replayer):
    run = run_of(("put", {"key": "b", "value": "Paris, France"}))
    case = store_case(
        {"type": "state_path_equals", "path": "a", "value": 1},
        {"type": "state_path_equals", "path": "b", "value": {"$regex": "Paris.*"}},
        {"type": "state_path_equals", "path": "c", "value": 1},
    )
    report = score(case, run, replayer=replayer)
    assert [p.passed for p in report.predicates[1:]] == [True, True, False]
    assert report.predicates[-1].detail == "c: the end state has no such value"


def test_without_an_environment_runner_the_verdict_is_error_saying_so():
    report = score(store_case(REFERENCE), run_of(("put", {"key": "b", "value": 2})))
    assert report.verdict == ERROR
    assert "no environment runner is configured" in report.error


def test_an_end_state_expectation_needs_an_environment():
    with pytest.raises(InvalidInput) as raised:
        load_suite({"cases": [{"key": "c", "expectations": [REFERENCE]}]})
    assert str(raised.value.problems[0]).startswith("cases[0].expectations[0]: the case has no")


@pytest.mark.parametrize(
    ("environment", "limits", "reason"),
    [
        (
            "Looping",
            EnvironmentLimits(cpu_seconds=1, memory_mb=256, wall_seconds=30),
            "more than 1 s of CPU time (CASEBOOK_ENVIRONMENT_CPU_SECONDS)",
        ),
        (
            "Hungry",
            EnvironmentLimits(cpu_seconds=10, memory_mb=256, wall_seconds=30),
            "ran out of memory: it may use 256 MB (CASEBOOK_ENVIRONMENT_MEMORY_MB)",
        ),
        (
            "Sleeping",
            EnvironmentLimits(cpu_seconds=1, memory_mb=256, wall_seconds=2),
            "longer than 2 s of wall-clock time (CASEBOOK_ENVIRONMENT_WALL_SECONDS)",
        ),
    ],
)
def test_an_environment_past_a_limit_is_stopped_and_the_verdict_is_error(
    environment, limits, reason
):
    replayer = SandboxReplayer(limits, ENVIRONMENTS)
    case = store_case(REFERENCE, environment=environment)
    try:
        started = time.monotonic()
        report = score(case, run_of(("put", {"key": "b", "value": 2})), replayer=replayer)
        assert time.monotonic() - started < limits.wall_seconds + 1
        assert report.verdict == ERROR
        assert reason in report.error
        # The next replay gets a fresh sandbox.
        assert score(store_case(REFERENCE), run_of(), replayer=replayer).verdict == FAIL
    finally:
        replayer.close()


def test_an_answer_past_its_limit_is_refused_by_the_sandbox_which_serves_the_next():
    limits = EnvironmentLimits(cpu_seconds=5, memory_mb=256, max_answer_bytes=10_000)
    replayer = SandboxReplayer(limits, ENVIRONMENTS)
    try:
        big = run_of(("put", {"key": "b", "value": "x" * 20_000}))
        report = score(store_case(REFERENCE), big, replayer=replayer)
        assert report.verdict == ERROR
        assert "over the limit, CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES = 10,000" in report.error
        process = replayer._process
        assert score(store_case(REFERENCE), run_of(), replayer=replayer).verdict == FAIL
        assert replayer._process is process  # the same sandbox: it was never past a limit
    finally:
        replayer.close()


def test_the_worker_reads_no_more_of_an_answer_than_its_limit():
    """Should a sandbox not keep its own bound, the worker stops reading at the limit."""
    process = subprocess.Popen(
        [sys.executable, "-c", "print('x' * 1_000_000)"], stdout=subprocess.PIPE
    )
    try:
        line = SandboxReplayer._read_line(process, time.monotonic() + 30, 100_000)
    finally:
        process.kill()
        process.wait()
    assert line is replayer_module._TOO_LONG


def test_reference_answers_are_kept_up_to_a_number_of_bytes():
    limits = EnvironmentLimits(memory_mb=256, reference_cache_bytes=3_000)
    replayer = SandboxReplayer(limits, ENVIRONMENTS)
    try:
        for n in range(20):
            state = CaseEnvironment("Store", {"n": "x" * 500 + str(n)})
            replayer.replay(state, [[("get", {"key": "n"})]], reference=True)
        kept = replayer._references
        assert 1 < len(kept) < 20
        assert sum(map(len, kept.values())) == replayer._referenced_bytes <= 3_000
        newest = CaseEnvironment("Store", {"n": "x" * 500 + "19"})
        (end,) = replayer.replay(newest, [[("get", {"key": "n"})]], reference=True)
        assert end.outcomes[0].value == "x" * 500 + "19"  # read back from the bytes kept
    finally:
        replayer.close()


def test_bfcl_multi_turn_verdicts_agree_with_bfcls_own_checker():
    replayer = SandboxReplayer(EnvironmentLimits(cpu_seconds=10, memory_mb=2048))
    try:
        counts, disagreements = agreement("multi_turn_base", 3, replayer)
    finally:
        replayer.close()
    assert disagreements == []
    verdicts = {bfcl_passed for (_, bfcl_passed, _) in counts}
    assert counts.total() >= 20
    assert verdicts == {True, False}
