"""Judging a run by the state it leaves (docs/matcher.md#end-state): the case's environment,
what the matcher asks of whoever replays calls in it (``Replayer``), the comparison of two
replays turn by turn, and the expectations ``end_state_matches`` and ``state_path_equals``.

The matcher replays nothing itself: it stays pure, and the replayer given to ``score`` runs
the environment (in Casebook, ``scoring.environments``, in a separate process with limits).
With no replayer, these expectations are not evaluated and the verdict is ``error``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ..arguments.matchers import EQUAL, PatternCompiler
from ..arguments.patterns import ValuePattern
from ..errors import Problems, field_path
from ..fields import FieldReader
from ..jsonvalue import MISSING, json_equal, json_type, render, render_short
from ..options import MatchOptions
from ..report import END_STATE, Cause
from ..run import Call, Run
from .expectations import PASSED, Expectation, Outcome, RunView

# Differences a failure names before it says how many more there are.
DIFFERENCES_NAMED = 5

# A call as replayed: its tool name and arguments (None when they could not be parsed).
ReplayCall = tuple[str, Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class CaseEnvironment:
    """The environment a case's calls are replayed in: an installed environment's ``name``
    and the JSON document it starts from (docs/formats.md#environment)."""

    name: str
    initial_state: Any


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What one replayed call gave: its result, or why the environment refused it."""

    value: Any = None
    refused: str | None = None

    def same_as(self, other: CallOutcome) -> bool:
        return self.refused == other.refused and json_equal(self.value, other.value)


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """The environment's state after a turn's calls, and what each of them gave."""

    state: Any
    outcomes: tuple[CallOutcome, ...]


class ReplayFailed(Exception):
    """The calls could not be replayed: no such environment, its initial state refused, or
    a limit reached. The message says which; the predicate's verdict is ``error``."""


class Replayer(Protocol):
    """Replays calls in a fresh instance of an environment and reports each turn's end."""

    def replay(
        self,
        environment: CaseEnvironment,
        turns: Sequence[Sequence[ReplayCall]],
        *,
        reference: bool = False,
    ) -> tuple[TurnEnd, ...]:
        """One ``TurnEnd`` per turn of ``turns``, the calls replayed in order in one fresh
        environment. ``reference`` marks a case's own calls, whose ends may be cached.
        Raises ``ReplayFailed``."""
        ...


NO_REPLAYER = (
    "cannot evaluate: no environment runner is configured to replay the calls in "
    "(docs/matcher.md#end-state)"
)


def run_turns(run: Run) -> list[list[Call]]:
    """The run's calls by turn (docs/matcher.md#turns): a turn starts at each ``user``
    entry of the transcript; a batch belongs to the turn of the transcript entry that first
    names it, or, named by none, to the turn of the batch before it. Without user entries
    the run is one turn."""
    users = 0
    first_turn: dict[int, int] = {}
    for entry in run.transcript:
        if entry.get("role") == "user":
            users += 1
        batch = entry.get("batch")
        if batch is not None and batch not in first_turn:
            first_turn[batch] = max(users - 1, 0)
    turns: list[list[Call]] = [[] for _ in range(max(users, 1))]
    turn = 0
    for index, batch in enumerate(run.batches):
        turn = max(turn, first_turn.get(index, turn))
        turns[turn].extend(batch)
    return turns


def as_replayed(calls: Sequence[Call]) -> tuple[ReplayCall, ...]:
    return tuple((call.name, call.arguments) for call in calls)


def end_state_comparisons(
    case: Any, run: Run, replayer: Replayer
) -> list[tuple[str, TurnComparison | str | None]]:
    """For the run page: each ``end_state_matches`` of ``case`` (a ``suite.Case``, which
    imports this module) by its label, with where
    ``run`` parts from the reference (None: nowhere), or why the replay could not be made.
    The same replays as scoring's, so the same answer (the reference's end is cached)."""
    view = RunView(
        run, case.match, catalog=case.catalog, environment=case.environment, replayer=replayer
    )
    found: list[tuple[str, TurnComparison | str | None]] = []
    for expectation in case.expectations:
        if isinstance(expectation, EndStateMatches):
            comparison = expectation.comparison(view)
            if isinstance(comparison, Outcome):
                why = comparison.error or comparison.detail or "not evaluated"
                found.append((expectation.label, why))
            else:
                found.append((expectation.label, comparison))
    return found


def replay_run(view: RunView, environment: CaseEnvironment) -> tuple[TurnEnd, ...]:
    """The run's calls replayed turn by turn, once per scoring (``RunView`` keeps it)."""
    replayed: tuple[TurnEnd, ...] | None = view.replayed
    if replayed is None:
        turns = tuple(as_replayed(turn) for turn in run_turns(view.run))
        replayed = view.replayed = view.replayer.replay(environment, turns)
    return replayed


@dataclass(frozen=True, slots=True)
class StateDifference:
    """One place two states differ: its path, and the value on each side (``MISSING`` where
    a side lacks it)."""

    path: str
    run: Any
    reference: Any

    def describe(self) -> str:
        return f"{self.path or '(the whole state)'}: run {self.run_text}, reference " + (
            self.reference_text
        )

    @property
    def run_text(self) -> str:
        return _side(self.run)

    @property
    def reference_text(self) -> str:
        return _side(self.reference)

    @property
    def run_value(self) -> str:
        """The run's value for a table that has the room: cut only past ``SHOWN_IN_FULL``."""
        return _side(self.run, SHOWN_IN_FULL)

    @property
    def reference_value(self) -> str:
        return _side(self.reference, SHOWN_IN_FULL)


SHOWN_IN_FULL = 2000  # characters of a differing value in the run page's table


def _side(value: Any, limit: int = 60) -> str:
    return "has none" if value is MISSING else render_short(value, limit)


def state_differences(run: Any, reference: Any, path: str = "") -> list[StateDifference]:
    """Every place ``run`` differs from ``reference`` by JSON meaning, by path as argument
    differences write them (``GorillaFileSystem.root.contents[2]``), in document order."""
    if isinstance(run, Mapping) and isinstance(reference, Mapping):
        found = []
        for key in [*reference, *(k for k in run if k not in reference)]:
            found.extend(
                state_differences(
                    run.get(key, MISSING), reference.get(key, MISSING), field_path(path, key)
                )
            )
        return found
    if isinstance(run, list) and isinstance(reference, list):
        found = []
        for index in range(max(len(run), len(reference))):
            found.extend(
                state_differences(
                    run[index] if index < len(run) else MISSING,
                    reference[index] if index < len(reference) else MISSING,
                    field_path(path, index),
                )
            )
        return found
    if run is MISSING or reference is MISSING or not json_equal(run, reference):
        return [StateDifference(path, run, reference)]
    return []


@dataclass(frozen=True, slots=True)
class TurnComparison:
    """Where a run's replay first parts from the reference's (``end_state_matches``): the
    turn, what went wrong in words, the state differences, and the run's refused calls."""

    turn: int | None
    problem: str
    differences: tuple[StateDifference, ...] = ()
    refused: tuple[str, ...] = ()

    def describe(self) -> str:
        parts = [self.problem]
        shown = [d.describe() for d in self.differences[:DIFFERENCES_NAMED]]
        more = len(self.differences) - DIFFERENCES_NAMED
        if more > 0:
            shown.append(f"and {more} more difference{'s' if more > 1 else ''}")
        if shown:
            parts.append("; ".join(shown))
        if self.refused:
            parts.append("refused: " + "; ".join(self.refused[:DIFFERENCES_NAMED]))
        text = ": ".join(parts[:2])
        return "; ".join([text, *parts[2:]])


def _refused(calls: Sequence[Call], outcomes: Sequence[CallOutcome]) -> tuple[str, ...]:
    return tuple(
        f"{call.name} (batch {call.batch}, call {call.position}): {outcome.refused}"
        for call, outcome in zip(calls, outcomes, strict=False)
        if outcome.refused is not None
    )


def compare_turns(
    run: Run,
    replayed: Sequence[TurnEnd],
    reference_turns: Sequence[Sequence[ReplayCall]],
    reference: Sequence[TurnEnd],
    *,
    by_turn: bool,
    results: bool,
) -> TurnComparison | None:
    """The first place the run's replay parts from the reference's, or None when it does
    not (docs/matcher.md#end-state). ``by_turn``: the states are compared after each turn
    the reference acts in; otherwise once, at the end. ``results``: each such turn's
    reference results must be among the run's results so far."""
    calls = run_turns(run)
    if not by_turn:
        run_calls = [call for turn in calls for call in turn]
        outcomes = [o for turn in replayed for o in turn.outcomes]
        return _compare_end(
            None, replayed[-1].state, reference[-1], run_calls, outcomes, outcomes, results
        )
    if len(calls) != len(reference_turns):
        return TurnComparison(
            None, f"the run has {len(calls)} turns; the reference has {len(reference_turns)}"
        )
    so_far: list[CallOutcome] = []
    for turn, (run_turn, reference_end) in enumerate(zip(replayed, reference, strict=True)):
        so_far.extend(run_turn.outcomes)
        wanted = len(reference_turns[turn])
        if not wanted:
            continue  # a turn where the reference does nothing is checked with the next
        if not calls[turn]:
            return TurnComparison(
                turn, f"turn {turn}: the run made no calls; the reference makes {wanted}"
            )
        found = _compare_end(
            turn, run_turn.state, reference_end, calls[turn], run_turn.outcomes, so_far, results
        )
        if found is not None:
            return found
    return None


def _compare_end(
    turn: int | None,
    state: Any,
    reference: TurnEnd,
    calls: Sequence[Call],
    outcomes: Sequence[CallOutcome],
    so_far: Sequence[CallOutcome],
    results: bool,
) -> TurnComparison | None:
    where = "the end state" if turn is None else f"turn {turn}: the state"
    differences = state_differences(state, reference.state)
    if differences:
        return TurnComparison(
            turn,
            f"{where} differs from the reference's",
            tuple(differences),
            _refused(calls, outcomes),
        )
    if results:
        missing = _missing_results(reference.outcomes, so_far)
        if missing:
            shown = "; ".join(_outcome_text(o) for o in missing[:DIFFERENCES_NAMED])
            when = "" if turn is None else f"turn {turn}: "
            return TurnComparison(
                turn,
                f"{when}{len(missing)} of the reference's results never came from the run's "
                f"calls: {shown}",
                refused=_refused(calls, outcomes),
            )
    return None


def _missing_results(
    wanted: Sequence[CallOutcome], got: Sequence[CallOutcome]
) -> list[CallOutcome]:
    """The outcomes of ``wanted`` not among ``got``, each of ``got`` used once, in any order."""
    left = Counter(_outcome_key(o) for o in got)
    missing = []
    for outcome in wanted:
        key = _outcome_key(outcome)
        if left[key]:
            left[key] -= 1
        else:
            missing.append(outcome)
    return missing


def _outcome_key(outcome: CallOutcome) -> str:
    return render(outcome.value) if outcome.refused is None else f"\0{outcome.refused}"


def _outcome_text(outcome: CallOutcome) -> str:
    if outcome.refused is not None:
        return f"refused ({render_short(outcome.refused, 60)})"
    return render_short(outcome.value, 60)


def read_reference_calls(fields: FieldReader, key: str) -> list[list[ReplayCall]] | None:
    """``reference_calls`` (one turn, a list of calls) or ``reference_turns`` (a list of
    turns, each a list of calls), each call ``{"name", "arguments"}``; problems by path."""
    data = fields.data.get(key)
    if data is None:
        return None
    where = fields.at(key)
    if not isinstance(data, list):
        fields.problems.add(where, f"must be a list, not {json_type(data)}")
        return None
    if key == "reference_calls":
        return [_calls(data, where, fields.problems)]
    turns = []
    for index, turn in enumerate(data):
        if isinstance(turn, list):
            turns.append(_calls(turn, field_path(where, index), fields.problems))
        else:
            fields.problems.add(
                field_path(where, index), f"must be a list of calls, not {json_type(turn)}"
            )
    return turns


def _calls(items: list[Any], where: str, problems: Problems) -> list[ReplayCall]:
    """The calls of ``items``; one with a problem is recorded on ``problems`` (so the
    suite is refused) and left out."""
    calls: list[ReplayCall] = []
    for index, item in enumerate(items):
        path = field_path(where, index)
        if not isinstance(item, Mapping):
            problems.add(path, f"must be a call object, not {json_type(item)}")
            continue
        name, arguments = item.get("name"), item.get("arguments", {})
        if not isinstance(name, str) or not name:
            problems.add(field_path(path, "name"), "required: a non-empty string (the tool)")
        if not isinstance(arguments, Mapping):
            problems.add(field_path(path, "arguments"), "must be an object")
        elif isinstance(name, str) and name:
            calls.append((name, arguments))
    return calls


@dataclass(frozen=True, slots=True)
class _OnEndState(Expectation):
    """An expectation about the state the run's calls leave in the case's environment."""

    cause_kind: ClassVar[str] = END_STATE
    reads: ClassVar[str] = "arguments"
    needs_environment: ClassVar[bool] = True
    # The replay can fail for reasons of its own: no runner, a limit reached.
    may_not_evaluate: ClassVar[bool] = True

    def _replayed(self, view: RunView) -> tuple[TurnEnd, ...] | Outcome:
        if view.replayer is None:
            return Outcome(False, error=NO_REPLAYER)
        try:
            return replay_run(view, view.environment)
        except ReplayFailed as exc:
            return Outcome(False, error=f"cannot evaluate: {exc}")


@dataclass(frozen=True, slots=True)
class EndStateMatches(_OnEndState):
    """The run's calls, replayed in order in a fresh environment, leave the state the
    reference calls leave in another (docs/matcher.md#end-state)."""

    type: ClassVar[str] = "end_state_matches"
    turns: tuple[tuple[ReplayCall, ...], ...] = ()
    by_turn: bool = False
    results: bool = False

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> EndStateMatches | None:
        by_turn = "reference_turns" in fields.data
        if by_turn == ("reference_calls" in fields.data):
            fields.problems.add(
                fields.path, "needs reference_calls (one turn) or reference_turns, not both"
            )
            return None
        turns = read_reference_calls(fields, "reference_turns" if by_turn else "reference_calls")
        results = fields.boolean("results_include_reference")
        if turns is None:
            return None
        return cls(index, "", tuple(map(tuple, turns)), by_turn, results)

    def describe(self) -> str:
        count = sum(map(len, self.turns))
        what = f"{count} reference call{'s' if count != 1 else ''}"
        if self.by_turn:
            what += f" over {len(self.turns)} turns"
        return f"end state matches {what}" + (", with their results" if self.results else "")

    def evaluate(self, view: RunView) -> Outcome:
        comparison = self.comparison(view)
        if isinstance(comparison, Outcome):
            return comparison
        if comparison is None:
            return PASSED
        first = comparison.differences[0].path if comparison.differences else None
        return Outcome(False, comparison.describe(), cause=Cause(END_STATE, None, first))

    def comparison(self, view: RunView) -> TurnComparison | Outcome | None:
        """Where the run parts from the reference (None: nowhere), or the ``Outcome`` of a
        replay that could not be made."""
        replayed = self._replayed(view)
        if isinstance(replayed, Outcome):
            return replayed
        try:
            reference = view.replayer.replay(view.environment, self.turns, reference=True)
        except ReplayFailed as exc:
            return Outcome(False, error=f"cannot evaluate the reference calls: {exc}")
        return compare_turns(
            view.run, replayed, self.turns, reference, by_turn=self.by_turn, results=self.results
        )


@dataclass(frozen=True, slots=True)
class StatePathEquals(_OnEndState):
    """The value at ``path`` in the state the run's calls leave equals ``value``, or
    satisfies it when it is an argument matcher (docs/matcher.md#argument-matchers)."""

    type: ClassVar[str] = "state_path_equals"
    path: str
    steps: tuple[str | int, ...]
    value: Any
    pattern: ValuePattern

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> StatePathEquals | None:
        path = fields.string("path", required=True)
        if "value" not in fields.data:
            fields.problems.add(fields.at("value"), "required: a JSON value or a matcher")
            return None
        if path is None:
            return None
        steps = parse_state_path(path)
        if steps is None:
            fields.problems.add(
                fields.at("path"), "must be a path such as account.orders[0].status"
            )
            return None
        value = fields.data["value"]
        compiler = PatternCompiler(options, fields.problems, strict=strict)
        pattern = compiler.value(value, fields.at("value"), EQUAL)
        return cls(index, "", path, steps, value, pattern)

    def describe(self) -> str:
        return f"state at {self.path} is {self.pattern.describe()}"

    def evaluate(self, view: RunView) -> Outcome:
        replayed = self._replayed(view)
        if isinstance(replayed, Outcome):
            return replayed
        found = value_at(replayed[-1].state, self.steps)
        if found is not MISSING and self.pattern.matches(found):
            return PASSED
        if found is MISSING:
            detail = f"{self.path}: the end state has no such value"
        else:
            detail = str(self.pattern.difference(found, self.path))
        return Outcome(False, detail, cause=Cause(END_STATE, None, self.path))


def parse_state_path(path: str) -> tuple[str | int, ...] | None:
    """``a.b[0].c`` as ``("a", "b", 0, "c")``; None when it is not such a path. The empty
    path is the whole state."""
    steps: list[str | int] = []
    for part in path.split(".") if path else ():
        name, _, rest = part.partition("[")
        if name:
            steps.append(name)
        elif not steps or not rest:
            return None
        while rest:
            number, bracket, rest = rest.partition("]")
            if not bracket or not number.isdigit() or (rest and not rest.startswith("[")):
                return None
            steps.append(int(number))
            rest = rest[1:]
    return tuple(steps)


def value_at(state: Any, steps: Sequence[str | int]) -> Any:
    """The value at ``steps`` in ``state``, or ``MISSING``."""
    for step in steps:
        if isinstance(step, int):
            if not (isinstance(state, list) and step < len(state)):
                return MISSING
        elif not (isinstance(state, Mapping) and step in state):
            return MISSING
        state = state[step]
    return state
