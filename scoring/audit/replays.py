"""A case's reference calls replayed in its environment (docs/audit.md#in-its-environment):
the calls the environment refuses (``replay_refused``), and the ``state_path_equals`` the
state they leave contradicts (``state_mismatch``).

The replays go through the replayer the caller gives, Casebook's sandbox process with its
limits (``scoring.environments``), as scoring's do. Every replay an audit makes is of calls
the case itself holds (its reference calls, its expected calls, no calls at all), so all
are asked for as ``reference`` replays, whose ends the replayer may keep; ``Memo`` keeps
them for the audit too, so that the checks of one case replay each list of calls once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from scoring.matcher import (
    Call,
    Case,
    CaseEnvironment,
    Replayer,
    ReplayFailed,
    Run,
    TurnEnd,
    dump_json,
    render_short,
    score,
)

from .problems import REPLAY_REFUSED, STATE_MISMATCH, Problem, Unchecked
from .runs import is_concrete

# Refused calls a problem names before it says how many more there are.
REFUSED_NAMED = 5


class Memo:
    """A replayer that asks ``replayer`` once for each list of calls, failures included,
    and none at all once ``seconds`` (wall-clock, from its making) have passed: what was not
    replayed by then is unchecked, so that one audit's replays are bounded as a whole, not
    only each by the sandbox's limits."""

    def __init__(self, replayer: Replayer, seconds: float | None = None):
        self.replayer = replayer
        self.seconds = seconds
        self.deadline = math.inf if seconds is None else time.monotonic() + seconds
        self.ends: dict[bytes, tuple[TurnEnd, ...] | ReplayFailed] = {}

    def replay(
        self, environment: CaseEnvironment, turns: Sequence, *, reference: bool = False
    ) -> tuple[TurnEnd, ...]:
        key = dump_json([environment.name, environment.initial_state, turns])
        if key not in self.ends:
            if time.monotonic() > self.deadline:
                raise ReplayFailed(
                    f"the audit's {self.seconds:g} s for replays were spent on other cases "
                    "(CASEBOOK_AUDIT_REPLAY_SECONDS)"
                )
            try:
                self.ends[key] = self.replayer.replay(environment, turns, reference=True)
            except ReplayFailed as exc:
                self.ends[key] = exc
        found = self.ends[key]
        if isinstance(found, ReplayFailed):
            raise found
        return found


def reference_turns(case: Case) -> tuple[str, tuple] | None:
    """What the case's reference calls are, in words, and their turns: the first
    ``end_state_matches``' reference calls, else the expected calls when their arguments
    are all concrete; None when there are neither."""
    expectation: Any  # its type's own fields are read (docs/formats.md#expectations-in-a-case)
    for expectation in case.expectations:
        if expectation.type == "end_state_matches":
            return f"the reference calls of expectation #{expectation.index}", expectation.turns
    calls = case.expected_calls
    if calls and all(is_concrete(call.required_args) for call in calls):
        return "the expected calls", (tuple((c.name, dict(c.required_args)) for c in calls),)
    return None


def environment_problems(
    case: Case, replayer: Replayer | None
) -> tuple[list[Problem], list[Unchecked]]:
    if case.environment is None:
        return [], []
    states = tuple(e for e in case.expectations if e.type == "state_path_equals")
    found = reference_turns(case)
    if found is None:
        if not states:
            return [], []
        reason = "it has no reference calls, and its expected calls' arguments hold matchers"
        return [], [Unchecked(case.key, f"state_path_equals not checked: {reason}")]
    if replayer is None:
        return [], [Unchecked(case.key, "not replayed: no environment runner is configured")]
    what, turns = found
    try:
        ends = replayer.replay(case.environment, turns, reference=True)
    except ReplayFailed as exc:
        return [], [Unchecked(case.key, f"{what} could not be replayed: {exc}")]
    problems = _refused(case, what, turns, ends)
    unchecked = []
    if states:
        judged = replace(case, expected_calls=(), expectations=states, extra_calls="allow")
        report = score(judged, _as_run(case.key, turns), replayer=replayer)
        for predicate in report.predicates:
            if predicate.error is not None:
                unchecked.append(Unchecked(case.key, f"{predicate.label}: {predicate.error}"))
            elif not predicate.passed:
                message = f"{predicate.label}: after {what}, {predicate.detail}"
                problems.append(Problem(case.key, STATE_MISMATCH, message))
    return problems, unchecked


def _refused(case: Case, what: str, turns: Sequence, ends: Sequence[TurnEnd]) -> list[Problem]:
    refused = []
    for turn, (calls, end) in enumerate(zip(turns, ends, strict=True)):
        for position, ((name, arguments), outcome) in enumerate(
            zip(calls, end.outcomes, strict=True)
        ):
            if outcome.refused is not None and not _unknown(case, name):
                where = f"turn {turn}, call {position}" if len(turns) > 1 else f"call {position}"
                refused.append(f"{where}: {_call_text(name, arguments)}: {outcome.refused}")
    if not refused:
        return []
    shown = "; ".join(refused[:REFUSED_NAMED])
    more = len(refused) - REFUSED_NAMED
    if more > 0:
        shown += f"; and {more} more"
    count = f"{len(refused)} call{'s' if len(refused) > 1 else ''}"
    message = f"the environment refuses {count} of {what}, replayed from the initial state: {shown}"
    return [Problem(case.key, REPLAY_REFUSED, message)]


def _unknown(case: Case, name: str) -> bool:
    """Whether the catalog lacks the tool: its calls' refusals are that ``unknown_tool``."""
    return bool(case.catalog) and case.catalog.find(name, case.match) is None


def _call_text(name: str, arguments: Any) -> str:
    if isinstance(arguments, Mapping):
        shown = ", ".join(f"{k}={render_short(v, 30)}" for k, v in arguments.items())
    else:
        shown = "…"
    text = f"{name}({shown})"
    return text if len(text) <= 100 else text[:98] + "…)"


def _as_run(key: str, turns: Sequence[Sequence[tuple[str, Any]]]) -> Run:
    """The calls of ``turns`` as a run: a batch per turn, a user entry opening each turn."""
    batches: list[tuple[Call, ...]] = []
    transcript: list[dict[str, Any]] = []
    for calls in turns:
        transcript.append({"role": "user", "content": ""})
        if calls:
            number = len(batches)
            batches.append(
                tuple(
                    Call(name, arguments, number, position)
                    for position, (name, arguments) in enumerate(calls)
                )
            )
            transcript.append({"role": "assistant", "batch": number})
    return Run(key, tuple(batches), final_text="", transcript=tuple(transcript))
