"""Scoring one run against one case (DESIGN.md §4, "Verdict")."""

from __future__ import annotations

from .calls import assess_expected_calls
from .expectations import PASSED, RunView
from .report import ERROR, FAIL, PASS, PredicateResult, Report
from .run import Run
from .suite import RUN_LABEL, Case


def score(case: Case, run: Run) -> Report:
    """Score ``run`` against ``case`` and report every predicate.

    The verdict is ``pass`` when the run has no error and every predicate holds, ``error``
    when some predicate could not be evaluated, and ``fail`` otherwise. A run that ended in
    an error still has all its other predicates evaluated, so reviewers see everything.
    """
    view = RunView(run, case.match)
    predicates = [_RUN_OK if run.error is None else _run_failed(run.error)]
    predicates.extend(assess_expected_calls(case, view))
    all_passed = run.error is None and all(p.passed for p in predicates)
    for expectation in case.expectations:
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
            )
        )
    # Only a pattern RE2 refused (a suite stored before its rules tightened) leaves a
    # predicate unevaluated, and the case knows whether it holds one.
    errors = [f"{p.label}: {p.error}" for p in predicates if p.error] if case.unevaluable else []
    verdict = ERROR if errors else PASS if all_passed else FAIL
    errors_text = "; ".join(errors) or None
    return Report(case.key, run.trial, verdict, predicates, errors_text, run.notes)


_RUN_OK = PredicateResult("run", RUN_LABEL, True)


def _run_failed(error: str) -> PredicateResult:
    reason = error if len(error) <= 300 else error[:299] + "…"
    return PredicateResult("run", RUN_LABEL, False, detail=f"the run ended with an error: {reason}")
