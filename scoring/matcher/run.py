"""Recorded runs in the canonical format (docs/formats.md#run-files)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any, cast

import msgspec

from .errors import InvalidInput, Problems
from .jsonvalue import MISSING, is_finite_number, is_number, json_type, render_short

# Calls, runs and reports are made per scored run, so they are not frozen: a frozen
# dataclass pays an object.__setattr__ per field, which was most of the cost of loading a
# run. Treat them as immutable all the same.


# A msgspec Struct, not a dataclass: it is built in C (a third of a dataclass's cost, and
# a run has dozens), and, holding no cycles, is never tracked by the garbage collector.
class Call(msgspec.Struct, gc=False):
    """One recorded tool call, at ``position`` within batch ``batch``.

    ``arguments`` is None when the agent's arguments could not be parsed as an object;
    ``arguments_raw`` then holds the text as the agent produced it. They are None too when
    the recording left them out: ``arguments_captured`` is then False
    (docs/matcher.md#content-not-captured).
    """

    name: str
    arguments: Mapping[str, Any] | None
    batch: int
    position: int
    id: str | int | None = None
    result: Any = None
    is_error: bool = False
    arguments_raw: str | None = None
    arguments_captured: bool = True
    # The tool's own time, where the recording gives it (docs/formats.md#usage).
    duration_ms: float | None = None

    @property
    def at(self) -> tuple[int, int]:
        """``[batch, position]`` as reports write it."""
        return (self.batch, self.position)

    def describe(self, limit: int = 80) -> str:
        """A one-line rendering: ``get_weather(city="Paris")``."""
        if self.arguments is None:
            return f"{self.name}(<unparsed arguments>)"
        args = ", ".join(f"{k}={render_short(v, 40)}" for k, v in self.arguments.items())
        text = f"{self.name}({args})"
        return text if len(text) <= limit else text[: limit - 2] + "…)"


TRANSCRIPT_ROLES = ("system", "user", "assistant", "tool")


@dataclass(slots=True)
class Run:
    """One agent run: its calls grouped in batches (calls of a batch were emitted together).

    ``calls`` is the flat call log (batches in order, calls in order within a batch) and
    ``by_name`` maps each tool name to the positions of its calls in that log.
    ``transcript`` is the conversation as recorded (its turns as the run file has them,
    validated; docs/formats.md#transcripts) and ``notes`` what the importer could not read
    or had to assume (docs/formats.md#notes); reports carry the notes.
    """

    case: str
    batches: tuple[tuple[Call, ...], ...]
    final_text: str | None = None
    error: str | None = None
    trial: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    transcript: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    # What the recording left out, by kind (``NOT_CAPTURED_KINDS``): why, in words.
    not_captured: Mapping[str, str] = field(default_factory=dict)
    # What the run cost, as recorded (docs/formats.md#usage): None when nothing was.
    usage: Mapping[str, Any] | None = None
    calls: tuple[Call, ...] = field(init=False, repr=False, compare=False)
    by_name: dict[str, list[int]] = field(init=False, repr=False, compare=False)
    batch_of: list[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.calls = tuple(chain.from_iterable(self.batches))
        # One loop for both (a call's batch, its name's positions): most of building a run.
        self.batch_of = batch_of = []
        by_name: dict[str, list[int]] = {}
        self.by_name = by_name
        n = 0
        for b, batch in enumerate(self.batches):
            for call in batch:
                batch_of.append(b)
                positions = by_name.get(call.name)
                if positions is None:
                    by_name[call.name] = [n]
                else:
                    positions.append(n)
                n += 1

    def with_trial(self, trial: int) -> Run:
        return replace(self, trial=trial)


def load_run(data: Any) -> Run:
    """Validate one canonical run and return it.

    Raises ``InvalidInput`` naming every bad field (``batches[0][1].name: must be a string``);
    unknown fields are ignored.
    """
    problems = Problems()
    if not isinstance(data, Mapping):
        raise InvalidInput.single("", f"a run must be a JSON object, not {json_type(data)}")

    case = data.get("case")
    if not isinstance(case, str) or not case:
        problems.add("case", _expected("a non-empty string (the case key)", data, "case"))

    trial = data.get("trial")
    if trial is not None:
        if is_number(trial) and is_finite_number(trial) and trial == int(trial) and trial >= 0:
            trial = int(trial)
        else:
            problems.add("trial", "must be a whole number ≥ 0")
            trial = None

    final_text = data.get("final_text")
    if final_text is not None and not isinstance(final_text, str):
        problems.add("final_text", _expected("a string or null", data, "final_text"))

    error = data.get("error")
    if error is not None and not isinstance(error, str):
        problems.add("error", _expected("a string or null", data, "error"))

    meta = data.get("meta")
    if meta is None:
        meta = {}
    elif type(meta) is not dict and not isinstance(meta, Mapping):
        problems.add("meta", _expected("an object", data, "meta"))

    raw_batches = data.get("batches")
    batches: list[tuple[Call, ...]] = []
    if not isinstance(raw_batches, list):
        problems.add("batches", _expected("a list of batches (lists of calls)", data, "batches"))
    elif (good := _good_batches(raw_batches)) is not None:
        batches = good
    else:
        for b, raw_batch in enumerate(raw_batches):
            if not isinstance(raw_batch, list):
                problems.add(
                    f"batches[{b}]", f"must be a list of calls, not {json_type(raw_batch)}"
                )
                continue
            checked = tuple(_check_call(raw, b, p, problems) for p, raw in enumerate(raw_batch))
            # A None stands for a bad call, recorded as a problem: the run is rejected below.
            batches.append(cast("tuple[Call, ...]", checked))

    transcript = _transcript(data.get("transcript"), len(batches), problems)
    notes = _notes(data.get("notes"), problems)
    not_captured = _not_captured(data.get("not_captured"), problems)
    usage = data.get("usage")
    if usage is not None:
        _check_usage(usage, problems)

    problems.raise_if_any()
    # A case that is not a non-empty string was recorded as a problem just above.
    return Run(
        cast(str, case), tuple(batches), final_text, error, trial, meta, transcript, notes,
        not_captured, usage,
    )  # fmt: skip


# The figures of a run's ``usage`` (docs/formats.md#usage): counts, and amounts; with the
# models, its keys as reports give it (``public_usage``).
USAGE_COUNTS = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens",
                "model_calls")  # fmt: skip
USAGE_AMOUNTS = ("duration_ms", "tool_duration_ms", "cost_usd")
# What an assistant turn of the transcript may say of its model call (docs/formats.md#usage).
TURN_COUNTS = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens")
USAGE_KEYS = (*USAGE_COUNTS, *USAGE_AMOUNTS, "models")


def public_usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """A run's usage as reports give it: ``USAGE_KEYS`` alone, each null (``models``
    empty) when not recorded."""
    if usage is None:
        return {**dict.fromkeys(USAGE_KEYS), "models": []}
    out = {key: usage.get(key) for key in USAGE_KEYS}
    if out["models"] is None:
        out["models"] = []
    return out


def _check_usage(usage: Any, problems: Problems) -> None:
    """The optional ``usage``: each figure a number ≥ 0 (a whole one for counts) or null,
    ``models`` a list of names; other keys are the importers' own, and ignored."""
    if type(usage) is not dict and not isinstance(usage, Mapping):
        problems.add("usage", f"must be an object, not {json_type(usage)}")
        return
    # The fast path: what the importers write (counts whole numbers or null, amounts
    # floats or null, models a list), one pass; anything else is looked at field by field.
    counts = [usage.get(key) for key in USAGE_COUNTS]
    amounts = [usage.get(key) for key in USAGE_AMOUNTS]
    if (
        all(c is None or (type(c) is int and c >= 0) for c in counts)
        and all(a is None or (type(a) is float and a >= 0 and a != math.inf) for a in amounts)
        and type(usage.get("models")) is list
        and all(type(m) is str for m in usage["models"])
    ):
        return
    for key in USAGE_COUNTS:
        value = usage.get(key)
        if value is not None and not (type(value) is int and value >= 0):
            problems.add(f"usage.{key}", "must be a whole number ≥ 0, or null (not recorded)")
    for key in USAGE_AMOUNTS:
        value = usage.get(key)
        if value is not None and not (is_number(value) and is_finite_number(value) and value >= 0):
            problems.add(f"usage.{key}", "must be a number ≥ 0, or null (not recorded)")
    models = usage.get("models")
    if models is not None and not (
        isinstance(models, list) and all(isinstance(m, str) for m in models)
    ):
        problems.add("usage.models", "must be a list of model names")


def _transcript(raw: Any, batch_count: int, problems: Problems) -> tuple[Mapping[str, Any], ...]:
    """The turns of an optional ``transcript`` (``{"role", "text", "batch"}`` objects),
    recording a problem for each bad field."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.add("transcript", f"must be a list of turns, not {json_type(raw)}")
        return ()
    if not _well_formed_turns(raw, batch_count):
        for t, turn in enumerate(raw):
            _check_turn(turn, f"transcript[{t}]", batch_count, problems)
    return tuple(raw)


_ROLE_SET = frozenset(TRANSCRIPT_ROLES)


def _well_formed_turns(turns: list[Any], batch_count: int) -> bool:
    """Whether every turn is a dict with a known role, text a string or null, and batch
    null or a batch's index: the fast path, one turn at a time with no call per turn (a
    third cheaper than gathering each field across the turns with map and set). Anything
    else is left to ``_check_turn``."""
    for turn in turns:
        if type(turn) is not dict:
            return False
        role = turn.get("role")
        text = turn.get("text")
        batch = turn.get("batch")
        if not (
            type(role) is str
            and role in _ROLE_SET
            and (text is None or type(text) is str)
            and (batch is None or (type(batch) is int and 0 <= batch < batch_count))
        ):
            return False
        if ("usage" in turn or "duration_ms" in turn) and _turn_figures(turn, ""):
            return False
    return True


def _check_turn(turn: Any, where: str, batch_count: int, problems: Problems) -> None:
    if not isinstance(turn, Mapping):
        problems.add(where, f"must be a turn object, not {json_type(turn)}")
        return
    role, text, batch = turn.get("role"), turn.get("text"), turn.get("batch")
    if not isinstance(role, str) or role not in TRANSCRIPT_ROLES:
        roles = ", ".join(TRANSCRIPT_ROLES)
        problems.add(f"{where}.role", _expected(f"one of {roles}", turn, "role"))
    if text is not None and not isinstance(text, str):
        problems.add(f"{where}.text", _expected("a string or null", turn, "text"))
    if batch is not None and (
        isinstance(batch, bool) or not isinstance(batch, int) or not 0 <= batch < batch_count
    ):
        problems.add(
            f"{where}.batch", f"must be null or the index of one of the {batch_count} batches"
        )
    for field_path, problem in _turn_figures(turn, where):
        problems.add(field_path, problem)


def _turn_figures(turn: Mapping[str, Any], where: str) -> list[tuple[str, str]]:
    """What is wrong with a turn's optional figures of its model call: ``usage`` (token
    counts, each a whole number ≥ 0 or null) and ``duration_ms`` (a number ≥ 0 or null), as
    ``(field path, problem)``."""
    found = []
    usage, duration = turn.get("usage"), turn.get("duration_ms")
    if usage is not None and not isinstance(usage, Mapping):
        found.append((f"{where}.usage", f"must be an object, not {json_type(usage)}"))
    elif usage is not None:
        for key in TURN_COUNTS:
            value = usage.get(key)
            if value is not None and not (type(value) is int and value >= 0):
                found.append(
                    (f"{where}.usage.{key}", "must be a whole number ≥ 0, or null (not recorded)")
                )
    if duration is not None and not _is_amount(duration):
        found.append((f"{where}.duration_ms", "must be a number ≥ 0, or null (not recorded)"))
    return found


def _is_amount(value: Any) -> bool:
    """A time or amount as recorded: a finite number ≥ 0."""
    return is_number(value) and is_finite_number(value) and value >= 0


def _notes(raw: Any, problems: Problems) -> tuple[str, ...]:
    """The optional ``notes``: a list of strings."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.add("notes", f"must be a list of strings, not {json_type(raw)}")
        return ()
    for n, note in enumerate(raw):
        if not isinstance(note, str):
            problems.add(f"notes[{n}]", f"must be a string, not {json_type(note)}")
    return tuple(raw)


# What a recording can leave out: the calls themselves (a model turn asked for calls no
# span names), their arguments, their batches (which calls were made together, and after
# which results: no model call was recorded), the final text.
NOT_CAPTURED_KINDS = ("calls", "arguments", "batches", "final_text")


def _not_captured(raw: Any, problems: Problems) -> Mapping[str, str]:
    """The optional ``not_captured``: ``{kind: why, in words}``, kinds as above."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.add("not_captured", f"must be an object, not {json_type(raw)}")
        return {}
    for kind, why in raw.items():
        if kind not in NOT_CAPTURED_KINDS:
            problems.add(f"not_captured.{kind}", f"must be one of {', '.join(NOT_CAPTURED_KINDS)}")
        elif not isinstance(why, str) or not why:
            problems.add(f"not_captured.{kind}", "must be a non-empty string (why, in words)")
    return raw


def _good_batches(raw_batches: list[Any]) -> list[tuple[Call, ...]] | None:
    """The batches of calls, when every batch is a list and every call a well-formed call
    object (the fast path, one function call per run rather than per batch or call), else
    None: ``_check_call`` then says what is wrong."""
    batches = []
    for batch, raw_batch in enumerate(raw_batches):
        if type(raw_batch) is not list:
            return None
        calls = []
        for position, raw in enumerate(raw_batch):
            if type(raw) is not dict:
                return None
            name = raw.get("name")
            arguments = raw.get("arguments", MISSING)
            arguments_raw = raw.get("arguments_raw")
            call_id = raw.get("id")
            is_error = raw.get("is_error")
            captured = raw.get("arguments_captured")
            duration = raw.get("duration_ms")
            if not (
                type(name) is str
                and (duration is None or _is_amount(duration))
                and (arguments is None or arguments is MISSING or type(arguments) is dict)
                and (arguments_raw is None or type(arguments_raw) is str)
                and (call_id is None or type(call_id) is str or type(call_id) is int)
                and (is_error is None or type(is_error) is bool)
                and (captured is None or type(captured) is bool)
            ):
                return None
            if arguments is MISSING:
                arguments = {}
            calls.append(Call(
                name, arguments, batch, position, call_id, raw.get("result"), is_error is True,
                arguments_raw, captured is not False, duration,
            ))  # fmt: skip
        batches.append(tuple(calls))
    return batches


def _check_call(raw: Any, batch: int, position: int, problems: Problems) -> Call | None:
    """The call, recording a problem for each bad field (the slow, thorough path)."""
    where = f"batches[{batch}][{position}]"
    if not isinstance(raw, Mapping):
        problems.add(where, f"must be a call object, not {json_type(raw)}")
        return None
    name = raw.get("name")
    if not isinstance(name, str):
        problems.add(f"{where}.name", _expected("a string", raw, "name"))
    arguments = raw.get("arguments", {})
    if arguments is not None and not isinstance(arguments, Mapping):
        problems.add(
            f"{where}.arguments",
            _expected("an object (or null, with the text in arguments_raw)", raw, "arguments"),
        )
    arguments_raw = raw.get("arguments_raw")
    if arguments_raw is not None and not isinstance(arguments_raw, str):
        problems.add(f"{where}.arguments_raw", _expected("a string", raw, "arguments_raw"))
    call_id = raw.get("id")
    if call_id is not None and (isinstance(call_id, bool) or not isinstance(call_id, str | int)):
        problems.add(f"{where}.id", _expected("a string", raw, "id"))
    is_error = raw.get("is_error")
    if is_error is not None and not isinstance(is_error, bool):
        problems.add(f"{where}.is_error", _expected("true or false", raw, "is_error"))
    captured = raw.get("arguments_captured")
    if captured is not None and not isinstance(captured, bool):
        problems.add(
            f"{where}.arguments_captured", _expected("true or false", raw, "arguments_captured")
        )
    duration = raw.get("duration_ms")
    if duration is not None and not _is_amount(duration):
        problems.add(f"{where}.duration_ms", "must be a number ≥ 0, or null (not recorded)")
    # A name that is not a string was recorded as a problem: the run is rejected.
    return Call(
        cast(str, name),
        arguments,
        batch,
        position,
        call_id,
        raw.get("result"),
        bool(is_error),
        arguments_raw,
        captured is not False,
        duration,
    )


def _expected(what: str, data: Mapping[str, Any], key: str) -> str:
    if key not in data:
        return f"required: {what}"
    return f"must be {what}, not {json_type(data[key])}"


class TrialNumbering:
    """Gives each run of a run file its trial number (docs/formats.md#trials).

    An explicit ``trial`` is kept; where it is absent, a case's runs are numbered 0, 1, 2, …
    in file order (skipping numbers already taken). A second run of a case with a trial
    already taken is refused, and the first one stands.
    """

    __slots__ = ("_seen", "_taken")

    def __init__(self) -> None:
        self._taken: dict[str, _TakenTrials] = {}
        self._seen: dict[str, int] = {}

    def number(self, run: Run) -> Run:
        trial = self.trial(run.case, run.trial)
        return run if trial == run.trial else run.with_trial(trial)

    def trial(self, case: str, trial: int | None) -> int:
        """The trial number of the next run of ``case`` in the file, whose own ``trial`` is
        given (or None); raises ``InvalidInput`` when the case already has that trial."""
        taken = self._taken.get(case)
        if taken is None:
            taken = self._taken[case] = _TakenTrials()
        if trial is None:
            trial = self._seen.get(case, 0)
            while trial in taken:
                trial += 1
        elif trial in taken:
            raise InvalidInput.single(
                "trial", f"case {case!r} already has a run with trial {trial}"
            )
        taken.add(trial)
        self._seen[case] = self._seen.get(case, 0) + 1
        return trial


class _TakenTrials:
    """The trial numbers a case has used: every number below ``prefix``, and the others in
    a set. Trials mostly come as 0, 1, 2, …, so the set stays empty and a file of a million
    runs costs a few integers per case, not a million set entries."""

    __slots__ = ("others", "prefix")

    def __init__(self) -> None:
        self.prefix = 0
        self.others: set[int] = set()

    def __contains__(self, trial: int) -> bool:
        return trial < self.prefix or trial in self.others

    def add(self, trial: int) -> None:
        if trial != self.prefix:
            self.others.add(trial)
            return
        self.prefix += 1
        while self.prefix in self.others:
            self.others.remove(self.prefix)
            self.prefix += 1
