"""Auditing a suite, or one case of it as it is edited (docs/audit.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scoring.matcher import Case, Replayer, Suite

from .catalog import catalog_problems
from .duplicates import duplicate_problems
from .problems import Audit, Problem, Unchecked, in_case_order
from .replays import Memo, environment_problems
from .verdicts import contradictions, passes_idle


def audit_suite(suite: Suite, replayer: Replayer | None = None) -> Audit:
    """Every case of ``suite`` tried against its reference run, an idle agent, the tool
    catalog and (with ``replayer``) its environment; and the suite for duplicates."""
    return _audit(suite.cases, replayer, ())


def audit_case(
    case: Case, replayer: Replayer | None = None, *, others: Iterable[Case] = ()
) -> Audit:
    """One case, as it stands in the editor: a ``duplicate`` when it repeats one of
    ``others`` (the suite's other cases)."""
    return _audit((case,), replayer, others)


def _audit(cases: Sequence[Case], replayer: Replayer | None, others: Iterable[Case]) -> Audit:
    memo = Memo(replayer) if replayer is not None else None
    problems: list[Problem] = []
    unchecked: list[Unchecked] = []
    for case in cases:
        found, missed = contradictions(case, memo)
        problems += found + passes_idle(case, memo) + catalog_problems(case)
        found, more = environment_problems(case, memo)
        problems += found
        unchecked += missed + more
    problems += duplicate_problems(cases, others)
    keys = [case.key for case in cases]
    return Audit(len(cases), in_case_order(keys, problems), tuple(unchecked))
