"""A case's verdicts on its own reference run (``contradiction`` when it fails) and on an
agent that does nothing (``passes_idle`` when it passes), in the matcher's own words
(docs/audit.md#problems)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from scoring.matcher import ERROR, PASS, Case, Replayer, score

from .problems import CONTRADICTION, PASSES_IDLE, Problem, Unchecked
from .runs import CATALOG_TYPES, END_STATE_TYPES, TEXT_TYPES, idle_run, is_concrete, reference_run

# Predicates an idle run's message names before it says how many more there are.
PREDICATES_NAMED = 4


def contradictions(case: Case, replayer: Replayer | None) -> tuple[list[Problem], list[Unchecked]]:
    """What the case's reference run fails, and what could not be derived for it."""
    reference = reference_run(case)
    problems, unchecked = [], []
    for (kind, index), reasons in reference.missing.items():
        where = f"expected call #{index}" if kind == "call" else f"expectation #{index}"
        for reason in reasons:
            if reason.proven:
                problems.append(
                    Problem(case.key, CONTRADICTION, f"{where}: no value satisfies {reason}")
                )
            else:
                unchecked.append(Unchecked(case.key, f"{where} not tried: {reason}"))
    judged = replace(case, expectations=_judged_expectations(case, reference.added))
    report = score(judged, reference.run, replayer=replayer)
    calls_missing = any(kind == "call" for kind, _ in reference.missing)
    text_missing = any(
        e.type in TEXT_TYPES and ("expectation", e.index) in reference.missing
        for e in case.expectations
    )
    for predicate in report.predicates:
        if predicate.passed or _follows(
            predicate, reference.missing, calls_missing, text_missing, case
        ):
            continue
        if predicate.error is not None:
            unchecked.append(Unchecked(case.key, f"{predicate.label}: {predicate.error}"))
            continue
        message = f"its reference run fails “{predicate.label}”: {predicate.detail}"
        problems.append(Problem(case.key, CONTRADICTION, message))
    return problems, unchecked


def _judged_expectations(case: Case, added: bool) -> tuple:
    """The expectations the reference run is judged by: not the catalog's (``unknown_tool``
    and ``schema`` say more), nor the end state's (``replay_refused`` and
    ``state_mismatch``), except ``end_state_matches`` of one turn where the reference run is
    exactly the expected calls, concrete: whether they leave the reference calls' state."""
    kept = []
    expectation: Any  # its type's own fields are read (docs/formats.md#expectations-in-a-case)
    for expectation in case.expectations:
        if expectation.type in CATALOG_TYPES:
            continue
        if expectation.type in END_STATE_TYPES and not (
            expectation.type == "end_state_matches"
            and not expectation.by_turn
            and not added
            and case.expected_calls
            and all(is_concrete(call.required_args) for call in case.expected_calls)
        ):
            continue
        kept.append(expectation)
    return tuple(kept)


def _follows(predicate, missing: dict, calls_missing: bool, text_missing: bool, case: Case) -> bool:
    """Whether a failing predicate only follows from a value with no example, already said
    (an expected call made without it, or a text without what it should hold)."""
    if predicate.kind == "expected_call":
        return calls_missing
    if predicate.kind != "expectation":
        return False
    if ("expectation", predicate.index) in missing:
        return True
    expectation = next(e for e in case.expectations if e.index == predicate.index)
    return text_missing and expectation.type in TEXT_TYPES


def passes_idle(case: Case, replayer: Replayer | None) -> tuple[list[Problem], list[Unchecked]]:
    """Whether an agent doing nothing passes the case; when some predicate could not judge
    it (its end state not replayed, say), that is unchecked rather than a pass or a fail."""
    report = score(case, idle_run(case), replayer=replayer)
    if report.verdict == ERROR and not any(
        p.error is None and not p.passed for p in report.predicates
    ):
        return [], [Unchecked(case.key, f"the idle run could not be judged: {report.error}")]
    if report.verdict != PASS:
        return [], []
    held = [p.label for p in report.predicates if p.kind != "run"]
    if not held:
        message = "it has no expected calls and no expectations: any run passes it"
    else:
        shown = ", ".join(f"“{label}”" for label in held[:PREDICATES_NAMED])
        if len(held) > PREDICATES_NAMED:
            shown += f" and {len(held) - PREDICATES_NAMED} more"
        holds = "holds" if len(held) == 1 else "all hold"
        message = (
            f"a run with no calls and an empty final text passes it ({shown} {holds}): "
            "add an expected call or an expectation such a run fails, unless doing nothing "
            "is the right answer"
        )
    return [Problem(case.key, PASSES_IDLE, message)], []
