"""Scoring one run against one case (docs/matcher.md#verdict)."""

from __future__ import annotations

import math
import time
from dataclasses import replace

import msgspec

from ..expectations.end_state import Replayer
from ..expectations.expectations import PASSED, OutOfTime, RunView
from ..jsonvalue import NOT_RECORDED
from ..report import (
    ERROR,
    FAIL,
    NOT_CAPTURED,
    PASS,
    RUN_ERROR,
    Cause,
    PredicateResult,
    Report,
)
from ..run import NOT_CAPTURED_KINDS, Run
from ..suites.suite import RUN_LABEL, Case
from .calls import assess_expected_calls


def score(
    case: Case, run: Run, *, time_budget: float | None = None, replayer: Replayer | None = None
) -> Report:
    """Score ``run`` against ``case`` and report every predicate.

    The verdict is ``pass`` when the run has no error and every predicate holds, ``error``
    when some predicate could not be evaluated, and ``fail`` otherwise. A run that ended in
    an error still has all its other predicates evaluated, so reviewers see everything.

    With ``time_budget`` (seconds), scoring that takes longer stops at the next predicate
    and the verdict is ``error``, saying so: a pathological run never holds its caller.
    ``replayer`` replays calls in the case's environment for the end-state expectations
    (docs/matcher.md#end-state); without one they are not evaluated.
    """
    deadline = math.inf if time_budget is None else time.monotonic() + time_budget
    try:
        view = RunView(run, case.match, deadline, case.catalog, case.environment, replayer)
        report = _score(case, run, view)
        if report.verdict == FAIL and run.not_captured:
            report = _judged_on_what_was_captured(case, run, view, report)
    except OutOfTime:
        reason = (
            f"scoring took longer than {time_budget:g} s, the limit for one run; the run is "
            "too long, or the case's patterns too costly, to score"
        )
        report = Report(case.key, run.trial, ERROR, [], reason)
    report.usage = run.usage
    return report


def _score(case: Case, run: Run, view: RunView) -> Report:
    predicates = [_RUN_OK if run.error is None else _run_failed(run.error)]
    predicates.extend(assess_expected_calls(case, view))
    all_passed = run.error is None and all(p.passed for p in predicates)
    for expectation in case.expectations:
        view.check_time()
        outcome = expectation.evaluate(view)
        if outcome is PASSED:
            predicates.append(expectation.passed)
            continue
        all_passed = False
        predicates.append(
            PredicateResult(
                "expectation",
                expectation.label,
                outcome.passed,
                index=expectation.index,
                nearest=outcome.nearest,
                detail=outcome.detail if outcome.error is None else outcome.error,
                error=outcome.error,
                cause=expectation.cause(outcome),
            )
        )
    # Only a pattern RE2 refused (a suite stored before its rules tightened) leaves a
    # predicate unevaluated, and the case knows whether it holds one.
    errors = [f"{p.label}: {p.error}" for p in predicates if p.error] if case.unevaluable else []
    verdict = ERROR if errors else PASS if all_passed else FAIL
    errors_text = "; ".join(errors) or None
    return Report(case.key, run.trial, verdict, predicates, errors_text, run.notes)


def _judged_on_what_was_captured(case: Case, run: Run, view: RunView, report: Report) -> Report:
    """A failed run whose recording left content out (docs/matcher.md#content-not-captured):
    a predicate that fails only because of what was not captured could not be evaluated,
    and says which of it. The verdict is ``fail`` when some predicate fails on what was
    recorded alone (the tool names), else ``error``, saying what was not captured."""
    contents = [kind for kind in NOT_CAPTURED_KINDS if kind in run.not_captured]
    recorded = _as_recorded(run)
    recorded_view = RunView(
        recorded, case.match, view.deadline, case.catalog, case.environment, view.replayer
    )
    judged = _score(case.without(contents), recorded, recorded_view)
    still_failing = {(p.kind, p.index) for p in judged.predicates if not p.passed}
    reads: dict[int | None, str | None] = {e.index: e.reads for e in case.expectations}
    predicates = []
    for p in report.predicates:
        if p.passed or (p.kind, p.index) in still_failing:
            predicates.append(p)
            continue
        read = reads.get(p.index) if p.kind == "expectation" else p.kind
        reason = _not_captured_for(run, read, contents)
        predicates.append(
            replace(p, detail=f"not judged: {reason}", error=reason, cause=_NOT_CAPTURED)
        )
    if still_failing:
        return Report(case.key, run.trial, FAIL, predicates, report.error, run.notes)
    reason = "; ".join(run.not_captured[kind] for kind in contents)
    return Report(case.key, run.trial, ERROR, predicates, reason, run.notes)


def _as_recorded(run: Run) -> Run:
    """The run, each call whose arguments were not recorded holding ``NOT_RECORDED``."""
    if all(call.arguments_captured for call in run.calls):
        return run
    batches = tuple(
        tuple(
            call
            if call.arguments_captured
            else msgspec.structs.replace(call, arguments=NOT_RECORDED)
            for call in batch
        )
        for batch in run.batches
    )
    return replace(run, batches=batches)


def _not_captured_for(run: Run, read: str | None, contents: list[str]) -> str:
    """What was not captured of what a predicate reads (``read``: an expectation's
    ``reads``; an expected call reads arguments), in words."""
    kinds = [kind for kind in _DEPENDS_ON.get(read, ()) if kind in run.not_captured]
    return "; ".join(run.not_captured[kind] for kind in kinds or contents)


# What a predicate reading each content needs recorded: a call's arguments need the call;
# an expected call needs its arguments and its batch.
_DEPENDS_ON: dict[str | None, tuple[str, ...]] = {
    "calls": ("calls",),
    "arguments": ("calls", "arguments"),
    "final_text": ("final_text",),
    "expected_call": ("calls", "arguments", "batches"),
    "extra_calls": ("calls", "arguments"),
}
_NOT_CAPTURED = Cause(NOT_CAPTURED)
_RUN_OK = PredicateResult("run", RUN_LABEL, True)


def _run_failed(error: str) -> PredicateResult:
    reason = error if len(error) <= 300 else error[:299] + "…"
    return PredicateResult(
        "run",
        RUN_LABEL,
        False,
        detail=f"the run ended with an error: {reason}",
        cause=_RUN_ERROR,
    )


_RUN_ERROR = Cause(RUN_ERROR)
