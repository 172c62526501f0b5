"""The side-by-side timeline of a scored run: the case's expected calls beside the run's
recorded calls, batch by batch.

A recorded call and the expected call credited with it share a row. An expected call that
was not credited shares a row with the recorded call the report names as its nearest, the
expected call first, with the report's reason and an argument-by-argument comparison with
that call (docs/review.md#run-page); when that call is credited to another expected call,
or is the nearest of an earlier one, the miss gets a row of its own just below it. One
with no call to compare with (the tool was never called, each of its calls is credited
to another expected call, or the run is not scored) comes after the batches. Recorded calls
credited to nothing are marked: as failures when the case forbids extra calls, quietly when
it allows them.

A run with a transcript (docs/formats.md#transcripts) is also shown as its conversation: the
turns in order, each batch of calls (with its rows) at the assistant turn that emitted it,
and each assistant turn's tokens and time where recorded (docs/formats.md#usage).

Everything comes from the report (docs/formats.md#reports) of the suite version the run was
scored against: the timeline shows what the matcher decided, it does not decide again. The
template ``scoring/_timeline.html`` renders a ``Timeline`` and needs nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scoring.matcher import (
    NOT_CAPTURED,
    ArgumentRow,
    Call,
    ExpectedCall,
    InvalidInput,
    MatchOptions,
    compare_arguments,
    describe_arguments,
    load_run,
)
from scoring.matcher import Case as MatcherCase
from scoring.matcher import Run as MatcherRun
from scoring.models import Run

MATCHED, MISSED, ERROR, UNSCORED = "matched", "missed", "error", "unscored"


@dataclass(frozen=True)
class ExpectedStep:
    """An expected call of the case and what the report says of it."""

    index: int
    name: str
    required_args: Mapping
    flags: tuple[str, ...]
    label: str
    words: tuple[str, ...]  # required_args in words, one phrase per argument
    state: str  # MATCHED, MISSED, ERROR (could not be evaluated) or UNSCORED
    detail: str | None = None
    matched: tuple[int, int] | None = None  # the recorded call credited with it (MATCHED)
    nearest: tuple[int, int] | None = None
    # Against the nearest call, when some argument differs (empty when only order failed).
    diff: tuple[ArgumentRow, ...] = ()


@dataclass(frozen=True)
class RecordedStep:
    """A recorded call and what the report made of it."""

    call: Call
    credited: int | None = None  # the expected call credited with it
    # Whether the report is there to say: an unscored run marks no call as unmatched.
    scored: bool = False
    forbidden: bool = False  # matched nothing, and the case forbids extra calls
    # The expected call it is the nearest of, beside it in its row (credited to nothing).
    nearest_of: int | None = None
    # The case expects calls: with none, a call is neither matched nor extra, just made.
    expects_calls: bool = True

    @property
    def unmatched(self) -> bool:
        return self.scored and self.credited is None

    @property
    def allowed_extra(self) -> bool:
        """Credited to nothing, and the case allows that: nothing to look at. Not said of
        the nearest call of a miss (it is beside it), nor where the case expects no call."""
        return (
            self.unmatched and not self.forbidden and self.nearest_of is None and self.expects_calls
        )


@dataclass(frozen=True)
class TimelineRow:
    """One line of the timeline: a matched pair, a recorded call alone, or an expected call
    that was not credited (with the recorded call its reason is about, if any)."""

    expected: ExpectedStep | None = None
    recorded: RecordedStep | None = None
    nearest: RecordedStep | None = None

    @property
    def kind(self) -> str:
        if self.expected is None:
            return "recorded"
        if self.recorded is not None:
            return "pair" if self.recorded.credited is not None else "near"
        return "missed"


@dataclass(frozen=True)
class TimelineBatch:
    index: int
    rows: tuple[TimelineRow, ...]
    size: int  # recorded calls in the batch


@dataclass(frozen=True)
class Turn:
    """A turn of the conversation: its role and text, and the batch of calls it emitted (an
    assistant turn) or whose results it carries (a tool turn whose calls hold none)."""

    role: str
    text: str | None
    batch: TimelineBatch | None = None
    result_of: int | None = None  # a tool turn: the batch whose result it is
    # A user turn of a run of several (docs/matcher.md#turns): its number, from 1; the
    # page starts each turn there, with its message (or says it was not recorded).
    number: int | None = None
    # An assistant turn's model call, where recorded (docs/formats.md#usage): its tokens
    # (``input_tokens``, ``output_tokens``, ...) and its time.
    usage: Mapping | None = None
    duration_ms: float | None = None


@dataclass(frozen=True)
class Timeline:
    batches: tuple[TimelineBatch, ...]
    # Expected calls with no recorded call beside them: never called, missing (each call of
    # the tool credited to another expected call), or not scored.
    unplaced: tuple[TimelineRow, ...]
    expected: int
    credited: int
    recorded: int
    unmatched: int  # recorded calls credited to no expected call
    scored: bool
    # Prefix of the element ids (``call-0-1``), so two timelines can share a page.
    anchor: str = ""
    # Where an editor turns a recorded call into an expectation; empty for everyone else.
    promote_url: str = ""
    forbids_extra_calls: bool = False
    case: MatcherCase | None = None
    # The run's transcript with the batches woven in; empty when the run has none.
    conversation: tuple[Turn, ...] = ()
    # What the run's recording left out (docs/matcher.md#content-not-captured), by kind.
    not_captured: Mapping = field(default_factory=dict)
    # The calls whose tool returned an error (``is_error``), in order.
    tool_errors: tuple = ()

    def promotable(self, url: str) -> Timeline:
        """This timeline with a "make this an expectation" action on each recorded call."""
        return replace(self, promote_url=url)

    def calls_only(self) -> Timeline:
        """This timeline without its conversation: the batches alone."""
        return replace(self, conversation=())


def build_timeline(
    case: MatcherCase | None, run: MatcherRun, report: Mapping | None, *, anchor: str = ""
) -> Timeline:
    """The timeline of ``run`` against ``case`` (None: the version has no such case), as
    ``report`` (the stored report, or None before scoring) judged it."""
    calls = {call.at: call for call in run.calls}
    verdicts = _expected_verdicts(report)
    scored = report is not None
    forbids = case is not None and case.forbids_extra_calls
    steps = (
        [
            _expected_step(expected, verdicts.get(expected.index), calls, case.match)
            for expected in case.expected_calls
        ]
        if case is not None
        else []
    )
    credited = {step.matched: step.index for step in steps if step.matched is not None}
    by_index = {step.index: step for step in steps}
    recorded = {
        at: RecordedStep(
            call,
            credited.get(at),
            scored=scored,
            forbidden=scored and forbids and at not in credited,
            expects_calls=bool(steps),
        )
        for at, call in calls.items()
    }
    missed_after: dict[tuple[int, int], list[ExpectedStep]] = {}
    unplaced = []
    for step in steps:
        if step.state == MATCHED:
            continue
        if step.nearest in calls:
            missed_after.setdefault(step.nearest, []).append(step)
        else:
            unplaced.append(TimelineRow(expected=step))
    batches = []
    for b, batch in enumerate(run.batches):
        rows = []
        for call in batch:
            made = recorded[call.at]
            misses = list(missed_after.get(call.at, ()))
            if made.credited is None and misses:
                # The miss and its nearest call side by side, the expected call first.
                missed = misses.pop(0)
                beside = replace(made, nearest_of=missed.index)
                recorded[call.at] = beside
                rows.append(TimelineRow(expected=missed, recorded=beside))
            else:
                pair = by_index[made.credited] if made.credited is not None else None
                rows.append(TimelineRow(expected=pair, recorded=made))
            rows.extend(TimelineRow(expected=missed, nearest=made) for missed in misses)
        batches.append(TimelineBatch(b, tuple(rows), len(batch)))
    return Timeline(
        batches=tuple(batches),
        unplaced=tuple(unplaced),
        expected=len(steps),
        credited=len(credited),
        recorded=len(calls),
        unmatched=sum(step.unmatched for step in recorded.values()),
        scored=scored,
        anchor=anchor,
        forbids_extra_calls=forbids,
        case=case,
        conversation=_conversation(run, batches),
        not_captured=run.not_captured,
        tool_errors=tuple(call for call in run.calls if call.is_error),
    )


def _conversation(run: MatcherRun, batches: list[TimelineBatch]) -> tuple[Turn, ...]:
    """The transcript's turns with each batch at the assistant turn that emitted it. A batch
    no turn names comes just before the next one named (or at the end), so every batch is
    shown once and in order; a tool turn is left out when its calls hold their results, and
    a turn with no text and no calls."""
    if not run.transcript:
        return ()
    turns: list[Turn] = []
    placed = 0  # batches placed so far: they are placed in order
    several = sum(raw["role"] == "user" for raw in run.transcript) > 1
    users = 0
    for raw in run.transcript:
        role, text, b = raw["role"], raw.get("text"), raw.get("batch")
        if role == "user" and several:  # every turn starts here, its message or not
            users += 1
            turns.append(Turn(role, text, number=users))
        elif role == "assistant" and b is not None and b >= placed:
            turns.extend(Turn("assistant", None, batch) for batch in batches[placed:b])
            turns.append(Turn(role, text, batches[b], **_call_figures(raw)))
            placed = b + 1
        elif role == "tool" and b is not None:
            if any(call.result is None for call in run.batches[b]):
                turns.append(Turn(role, text, result_of=b))
        elif text:  # a turn with nothing to read (an empty message) is left out
            turns.append(Turn(role, text, **_call_figures(raw)))
    turns.extend(Turn("assistant", None, batch) for batch in batches[placed:])
    if turns and turns[-1].number is not None and not turns[-1].text:
        turns.pop()  # a last turn with no message and nothing after it: nothing to read
    return tuple(turns)


def _call_figures(raw: Mapping) -> dict[str, Any]:
    """An assistant turn's figures of its model call, as the transcript gives them."""
    if raw["role"] != "assistant":
        return {}
    return {"usage": raw.get("usage"), "duration_ms": raw.get("duration_ms")}


def timeline_of(run: Run, report: Mapping | None) -> Timeline | None:
    """The timeline of a stored run against the suite version its submission was scored
    against, with ids of its own (``run-<pk>-call-0-1``); None when the stored run no
    longer reads as a valid run."""
    try:
        recorded = load_run(run.document)
    except InvalidInput:
        return None
    case = run.submission.version.matcher_suite().case(run.case_key)
    return build_timeline(case, recorded, report, anchor=f"run-{run.pk}-")


def _expected_verdicts(report: Mapping | None) -> dict[int, Mapping]:
    if report is None:
        return {}
    return {p["index"]: p for p in report.get("predicates", ()) if p.get("kind") == "expected_call"}


def _expected_step(
    expected: ExpectedCall, verdict: Mapping | None, calls: Mapping, options: MatchOptions
) -> ExpectedStep:
    common: dict[str, Any] = {
        "index": expected.index,
        "name": expected.name,
        "required_args": expected.required_args,
        "flags": expected.flags,
        "label": expected.label,
        "words": describe_arguments(expected.required_args, options),
    }
    if verdict is None:
        return ExpectedStep(**common, state=UNSCORED)
    matched = _at(verdict.get("matched"))
    if verdict.get("passed") and matched in calls:
        return ExpectedStep(**common, state=MATCHED, matched=matched)
    nearest = _at(verdict.get("nearest"))
    diff: tuple[ArgumentRow, ...] = ()
    # Arguments that were not captured are not compared: there is nothing to set beside them.
    judged = (verdict.get("cause") or {}).get("kind") != NOT_CAPTURED
    if nearest in calls and judged:
        rows = compare_arguments(expected.arguments, calls[nearest].arguments)
        if not all(row.holds for row in rows):
            diff = rows
    return ExpectedStep(
        **common,
        state=ERROR if verdict.get("error") else MISSED,
        detail=verdict.get("detail"),
        nearest=nearest,
        diff=diff,
    )


def _at(value) -> tuple[int, int] | None:
    """A report's ``[batch, position]`` as a key of the calls (None if absent)."""
    return (value[0], value[1]) if isinstance(value, list | tuple) and len(value) == 2 else None
