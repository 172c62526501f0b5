"""Auditing a suite, a suite file against an earlier version's audit, or one case of it as
it is edited (docs/audit.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from scoring.matcher import Case, Replayer, Suite, dump_json, load_suite

from .catalog import catalog_problems
from .duplicates import duplicate_problems
from .problems import DUPLICATE, Audit, Problem, Unchecked, in_case_order
from .replays import Memo, environment_problems
from .verdicts import contradictions, passes_idle

# The fields of a suite file an audit of its cases does not read: an earlier audit of a
# case still holds when only these changed.
UNREAD = ("name", "description", "tags", "cases")


def audit_suite(
    suite: Suite, replayer: Replayer | None = None, *, replay_seconds: float | None = None
) -> Audit:
    """Every case of ``suite`` tried against its reference run, an idle agent, the tool
    catalog and (with ``replayer``) its environment; and the suite for duplicates. With
    ``replay_seconds``, replays stop after that long and what they would have checked is
    unchecked."""
    problems, unchecked = _each_case(suite.cases, replayer, replay_seconds)
    cases = _cases_of(suite.data)
    problems += duplicate_problems(cases, suite.data.get("environment"))
    keys = [case.key for case in suite.cases]
    return Audit(len(keys), in_case_order(keys, problems), tuple(unchecked))


def audit_document(
    document: Mapping,
    replayer: Replayer | None = None,
    *,
    earlier: tuple[Mapping, Audit] | None = None,
    replay_seconds: float | None = None,
) -> Audit:
    """The audit of a suite file, loaded as a stored version is (a pattern RE2 has come to
    refuse leaves its check unchecked). ``earlier`` is the document and audit of a version
    before it: when nothing but unread fields (``UNREAD``) changed besides the cases, a
    case written exactly as it was there, which nothing was left unchecked of, keeps its
    problems, and only the others are audited again (the cost of saving one case of a large
    suite, its replays above all, is then one case's). Duplicates are always looked for
    across every case."""
    cases = _cases_of(document)
    changed, kept = cases, []
    if earlier is not None and _read(earlier[0]) == _read(document):
        before = {case.get("key"): dump_json(case) for case in _cases_of(earlier[0])}
        unsure = {item.case for item in earlier[1].unchecked}
        changed = [
            case
            for case in cases
            if before.get(case.get("key")) != dump_json(case) or case.get("key") in unsure
        ]
        again = {case.get("key") for case in changed}
        now = {case.get("key") for case in cases}
        kept = [p for p in earlier[1].problems if p.kind != DUPLICATE and p.case in now - again]
    loaded = load_suite({**document, "cases": changed}, strict=False)
    problems, unchecked = _each_case(loaded.cases, replayer, replay_seconds)
    problems += kept + duplicate_problems(cases, document.get("environment"))
    keys = [case["key"] for case in cases]
    return Audit(len(keys), in_case_order(keys, problems), tuple(unchecked))


def audit_case(
    case: Case,
    replayer: Replayer | None = None,
    *,
    others: Iterable[Mapping] = (),
    environment: Mapping | None = None,
    replay_seconds: float | None = None,
) -> Audit:
    """One case, as it stands in the editor: a ``duplicate`` when it repeats one of
    ``others`` (the suite's other cases, as its suite file writes them; ``environment`` the
    suite's)."""
    problems, unchecked = _each_case((case,), replayer, replay_seconds)
    problems += duplicate_problems([case.data], environment, earlier=others)
    return Audit(1, in_case_order([case.key], problems), tuple(unchecked))


def _each_case(
    cases: Sequence[Case], replayer: Replayer | None, replay_seconds: float | None
) -> tuple[list[Problem], list[Unchecked]]:
    memo = Memo(replayer, replay_seconds) if replayer is not None else None
    problems: list[Problem] = []
    unchecked: list[Unchecked] = []
    for case in cases:
        found, missed = contradictions(case, memo)
        idle, undecided = passes_idle(case, memo)
        problems += found + idle + catalog_problems(case)
        found, more = environment_problems(case, memo)
        problems += found
        unchecked += missed + undecided + more
    return problems, unchecked


def _cases_of(document: Mapping) -> list[Mapping]:
    cases = document.get("cases")
    return [case for case in cases if isinstance(case, Mapping)] if isinstance(cases, list) else []


def _read(document: Mapping) -> bytes:
    return dump_json({k: v for k, v in document.items() if k not in UNREAD})
