"""A run from a trace's model turns, agent turns and tool runs, whichever reader read them
(docs/formats.md#opentelemetry-genai-spans).

- Turns: a model turn whose span has another model turn below it (a library's span around
  each of its model calls) is a wrapper: only the innermost turns give calls, so a call
  described by both is counted once. A turn with exactly one turn below it is one model
  call described twice (two instrumentations of one call): the description that recorded
  content is read, with the finish reasons of either. Agent turns (an agent's invocation)
  give no calls: their text is the final text where no model turn holds one.
- Call ids: an id is an id only when it is not empty and names one call of the trace (a
  library that numbers calls within a response, ``add_0``, gives the same id to calls of
  two turns): calls that share one are paired with their tool runs as calls with no id.
- Batches: each innermost turn's calls are a batch, in turn start order. A tool run belongs
  to the latest innermost turn beside it (same parent) that started before it, else the
  latest that started before it anywhere in the trace, else its parent. It completes the
  call of its id (result, failure, arguments the message lacked); with no id, the first
  call of its turn of the same tool, one with the same arguments first; with no such call
  there, an unclaimed call of another turn with the same arguments. A tool run inside another
  of the same tool (an MCP client span under the agent's tool span) is the same call. A
  framework's control step (``ToolRun.control``) is no call. Tool runs that no message
  names are batched by their turn.
- The final text is the text of the last innermost turn that has output messages, else of
  the last wrapper, else of the last agent turn that has them. The transcript is that
  turn's input and output messages.
- Times and tokens (docs/formats.md#usage): a tool run's span gives its call's
  ``duration_ms``; each model call (counted once, as the run's totals count it) gives its
  tokens and span time to the assistant message it answered with: the k-th assistant
  message to the k-th model call when the transcript has one for each call, else the first
  message that asked for a call to the model call that asked for it, and the last turn's
  answer to it.
- What the instrumentation did not record is said in ``not_captured`` and the notes, with
  what records it for the library that sent the spans (``capture.py``): arguments left
  out, the final text left out, model turns that asked for tool calls no span names (or
  whose finish reasons cannot say, when no tool run was recorded either), the calls when no
  model call and no tool run was recorded, and the batches when tool runs were recorded but
  no model call.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

from .. import usage
from ..common import cut_off, is_cut_off, truncation_error, turn
from .capture import Instrumentation, calls_setting, content_setting, instrumentation_of
from .spans import Span
from .tokens import span_call, span_ms
from .turns import CAPTURED, CallDict, Message, ModelTurn, ToolRun

# What a reader makes of a span: a model or agent turn, a tool run (None: it reads none).
Reader = tuple[Callable[[Span], ModelTurn | None], Callable[[Span], ToolRun | None] | None]
# The calls of a run, a batch to each model turn.
Batches = list[list[CallDict]]
# The start times of model turns, in order, and the keys of their spans.
TurnStarts = tuple[list[int], list[str]]
NO_CALLS = (
    "no span of the trace is a model call or a tool call in a convention Casebook reads "
    "(docs/formats.md#opentelemetry-genai-spans)"
)


def read_turns(
    spans: list[Span], readers: Callable[[str], Iterable[Reader]]
) -> tuple[list[ModelTurn], list[ToolRun]]:
    """Each span as the first reader for its scope that reads it: a tool run, else a turn."""
    turns: list[ModelTurn] = []
    runs: list[ToolRun] = []
    for span in spans:
        for model_turn, tool_run in readers(span.scope):
            if tool_run is not None and (run := tool_run(span)) is not None:
                runs.append(run)
                break
            if (found := model_turn(span)) is not None:
                turns.append(found)
                break
    return turns, runs


class Trace:
    """The spans of a trace, read into a run's parts."""

    def __init__(self, spans: list[Span], turns: list[ModelTurn], runs: list[ToolRun]):
        self.spans = spans
        self.by_key = {span.key: span for span in spans}
        turns.sort(key=lambda t: t.span.sort_key)
        self.agents = [t for t in turns if t.agent]
        self.inner, self.wrappers = self._innermost([t for t in turns if not t.agent])
        self.control = [run for run in runs if run.control]
        called = [run for run in runs if not run.control]
        for run in called:
            if (took := span_ms(run.span)) is not None:
                run.call["duration_ms"] = took
        self.runs = self._merged_runs(called)
        self._drop_shared_ids()

    @property
    def turns(self) -> list[ModelTurn]:
        return [*self.inner, *self.wrappers, *self.agents]

    def _ancestors(self, span: Span) -> list[str]:
        keys, seen = [], {span.key}
        parent = self.by_key.get(span.parent_id) if span.parent_id else None
        while parent is not None and parent.key not in seen:
            keys.append(parent.key)
            seen.add(parent.key)
            parent = self.by_key.get(parent.parent_id) if parent.parent_id else None
        return keys

    def _innermost(self, turns: list[ModelTurn]) -> tuple[list[ModelTurn], list[ModelTurn]]:
        """The innermost turns and the wrappers, a call described twice read once."""
        keys = {t.span.key for t in turns}
        below: dict[str, list[ModelTurn]] = {}
        for t in turns:
            for key in self._ancestors(t.span):
                if key in keys:
                    below.setdefault(key, []).append(t)
        inner = {t.span.key: t for t in turns if t.span.key not in below}
        wrappers = {t.span.key: t for t in turns if t.span.key in below}
        for key, wrapper in list(wrappers.items()):
            if len(below[key]) != 1 or below[key][0].span.key not in inner:
                continue
            (described,) = below[key]
            kept, other = (
                (wrapper, described)
                if wrapper.captured and not described.captured
                else (described, wrapper)
            )
            if not kept.finish_reasons:
                kept.finish_reasons, kept.finish_field = other.finish_reasons, other.finish_field
            kept.also = other.span
            if kept is wrapper:
                del inner[described.span.key], wrappers[key]
                inner[key] = wrapper
        return sorted(inner.values(), key=lambda t: t.span.sort_key), list(wrappers.values())

    def _merged_runs(self, runs: list[ToolRun]) -> list[ToolRun]:
        """Tool runs less those inside a run of the same tool, which complete it."""
        by_key = {run.span.key: run for run in runs}
        kept = []
        for run in sorted(runs, key=lambda r: r.span.sort_key):
            outer = next(
                (
                    by_key[key]
                    for key in self._ancestors(run.span)
                    if key in by_key and by_key[key].call["name"] == run.call["name"]
                ),
                None,
            )
            if outer is None:
                kept.append(run)
            else:
                complete(outer.call, run.call)
        return kept

    def _drop_shared_ids(self) -> None:
        """Empty ids, and ids that name calls of two turns (or two calls of one), are no
        ids. The results a turn's input gives under such an id answer its calls in order:
        the conversation so far, the k-th result of an id answering the k-th call of it."""
        named: set[Any] = {""}
        shared: set[Any] = set()
        for t in self.inner:
            for made in t.calls:
                if (call_id := made["id"]) is not None:
                    (shared if call_id in named else named).add(call_id)
        for run in self.runs:
            if run.call["id"] == "":
                shared.add("")
        if not shared:
            return
        calls_of: dict[Any, list[CallDict]] = {}
        for t in self.inner:
            answered: dict[Any, int] = {}
            for message in t.input:
                for call_id, result in message.answers:
                    k = answered[call_id] = answered.get(call_id, -1) + 1
                    calls = calls_of.get(call_id, ())
                    if call_id in shared and k < len(calls) and "result" not in calls[k]:
                        calls[k]["result"] = result
            for made in t.calls:
                if made["id"] in shared:
                    calls_of.setdefault(made["id"], []).append(made)
        for t in self.inner:
            for made in t.calls:
                if made["id"] in shared:
                    made["id"] = None
            for message in [*t.input, *t.output]:
                message.call_ids = [None if i in shared else i for i in message.call_ids]
                message.answers = [(None if i in shared else i, r) for i, r in message.answers]
        for run in self.runs:
            if run.call["id"] in shared:
                run.call["id"] = None

    # --- batches ----------------------------------------------------------------------------

    def batches(self) -> Batches:
        """A batch per model turn: the calls its messages name, each completed by its tool
        run, then the turn's tool runs that no message named."""
        turn_calls = {t.span.key: t.calls for t in self.inner if t.calls}
        named = {c["id"]: c for calls in turn_calls.values() for c in calls if c["id"] is not None}
        results = {call_id: result for t in self.inner for call_id, result in t.results.items()}
        for made in named.values():
            if made["id"] in results and "result" not in made:
                made["result"] = results[made["id"]]
        groups: dict[str, list[ToolRun]] = {}
        claimed: set[int] = set()
        for run in self.runs:
            key = self._model_turn_of(run.span)
            same = named.get(run.call["id"]) if run.call["id"] is not None else None
            if same is None and run.call["id"] is None:
                same = _unclaimed(turn_calls.get(key, ()), run, claimed) or _unclaimed(
                    [c for k, calls in reversed(turn_calls.items()) if k != key for c in calls],
                    run,
                    claimed,
                    same_arguments=True,
                )
            if same is not None:
                claimed.add(id(same))
                complete(same, run.call)
            else:
                groups.setdefault(key, []).append(run)

        def turn_start(key: str) -> tuple[int, int]:
            span = self.by_key.get(key)
            if span is not None:
                return span.sort_key
            return min(run.span.sort_key for run in groups[key])

        return [
            [*turn_calls.get(key, []), *(run.call for run in groups.get(key, []))]
            for key in sorted(turn_calls.keys() | groups.keys(), key=turn_start)
        ]

    def _model_turn_of(self, span: Span) -> str:
        """The key of the span whose model turn a tool run belongs to: the latest innermost
        turn beside it that started before it, else the latest anywhere, else its parent."""
        beside, anywhere = self._turn_starts
        for starts, keys in (beside.get(span.parent_id, ((), ())), anywhere):
            at = bisect_right(starts, span.start)
            if at:
                return keys[at - 1]
        return span.parent_id

    @cached_property
    def _turn_starts(self) -> tuple[dict[str, TurnStarts], TurnStarts]:
        """The innermost turns' starts and keys, in start order: by parent, and in all."""
        beside: dict[str, TurnStarts] = {}
        anywhere: TurnStarts = ([], [])
        for t in self.inner:
            if t.span.span_id:
                for starts, keys in (beside.setdefault(t.span.parent_id, ([], [])), anywhere):
                    starts.append(t.span.start)
                    keys.append(t.span.key)
        return beside, anywhere

    # --- final text, transcript, errors -------------------------------------------------------

    def final_turn(self) -> ModelTurn | None:
        """The turn holding the final message (see the module's docstring)."""
        for turns in (self.inner, self.wrappers, self.agents):
            answering = [t for t in turns if t.output]
            if answering:
                return answering[-1]
        return None

    def transcript(self, batches: Batches) -> list[dict[str, Any] | None]:
        """The conversation as the last turn with messages saw it: its input messages, then
        its output messages."""
        last = next((t for t in reversed(self.inner) if t.input or t.output), None)
        if last is None:
            return []
        batch_of = {c["id"]: b for b, batch in enumerate(batches) for c in batch if c["id"]}
        turns: list[dict[str, Any] | None] = []
        answers: list[tuple[dict[str, Any], Message, bool]] = []
        for message in [*last.input, *last.output]:
            for call_id, result in message.answers:
                turns.append(turn("tool", result, _batch_of(call_id, batch_of)))
            if message.text is not None or message.call_ids or not message.answers:
                batch = _batch_of(message.call_ids[0], batch_of) if message.call_ids else None
                made = turn(message.role, message.text, batch)
                turns.append(made)
                if made is not None and made["role"] == "assistant":
                    answers.append((made, message, message in last.output))
        self._give_figures(answers, last)
        return turns

    def _give_figures(
        self, answers: list[tuple[dict[str, Any], Message, bool]], last: ModelTurn
    ) -> None:
        """Give each assistant turn of the transcript its model call's tokens and time
        (see the module's docstring): ``answers`` are the turns, their messages, and
        whether the message is the last turn's own answer."""
        calls = self.model_calls()
        if len(answers) == len(calls):
            for (made, _, _), call_turn in zip(answers, calls, strict=True):
                made.update(_figures(call_turn))
            return
        by_call_id = {
            made["id"]: model_call
            for model_call in calls
            for made in model_call.calls
            if made["id"] is not None
        }
        given: set[int] = set()  # a call's figures go to one message: its first
        for made, message, answer in answers:
            model_call = next((by_call_id[i] for i in message.call_ids if i in by_call_id), None)
            if model_call is None and answer and last in calls:
                model_call = last
            if model_call is not None and id(model_call) not in given:
                given.add(id(model_call))
                made.update(_figures(model_call))

    def cut_off(self, final: ModelTurn | None) -> str | None:
        """The run error when the final message was cut off at the token limit: its last
        output message's finish reason, or the turn's finish reasons (all there is when
        content was not captured, and then the turn is the last one)."""
        model_turn = final or (self.inner[-1] if self.inner else None)
        if model_turn is None:
            return None
        last = model_turn.output[-1] if model_turn.output else None
        if last is not None and last.finish_reason is not None:
            return cut_off({"finish_reason": last.finish_reason})
        for reason in model_turn.finish_reasons:
            if is_cut_off("finish_reason", reason):
                return truncation_error(model_turn.finish_field, reason)
        return None

    def run_error(self) -> str | None:
        """The status of a failed root span (one whose parent is not in the trace) that is
        not a tool's."""
        tool_spans = {run.span.key for run in [*self.runs, *self.control]}
        for span in sorted(self.spans, key=lambda s: s.sort_key):
            root = not span.parent_id or span.parent_id not in self.by_key
            if span.failed and root and span.key not in tool_spans:
                reason = span.status_message or span.attributes.get("error.type") or "failed"
                return f"{span.name}: {reason}" if span.name else str(reason)
        return None

    def notes(self) -> list[str]:
        """What the readers assumed, each said once."""
        parts: list[ModelTurn | ToolRun] = [*self.turns, *self.runs]
        said = [note for part in parts for note in part.notes]
        return list(dict.fromkeys(said))

    # --- usage ---------------------------------------------------------------------------------

    def usage(self, batches: Batches) -> dict[str, Any]:
        """The run's usage (docs/formats.md#usage): each model call once (see
        ``model_calls``); where no model call was recorded, the totals an agent's span
        holds for the run (``ModelTurn.run_totals``), and no count of calls. The wall time
        runs from the first span's start to the last one's end; the time in tools is the
        calls' of ``batches``."""
        starts = [span.start for span in self.spans if span.start]
        ends = [span.end for span in self.spans if span.end]
        duration_ms = usage.nanoseconds_to_ms(min(starts), max(ends)) if starts and ends else None
        tool_duration_ms = usage.tool_time(batches)
        calls = self.model_calls()
        if calls:
            return usage.run_usage(
                [span_call(t.span, t.also) for t in calls],
                duration_ms=duration_ms,
                tool_duration_ms=tool_duration_ms,
            )
        totals = [span_call(t.span) for t in self.agents if t.run_totals]
        found = usage.run_usage(
            totals or None, duration_ms=duration_ms, tool_duration_ms=tool_duration_ms
        )
        found["model_calls"] = None
        return found

    def model_calls(self) -> list[ModelTurn]:
        """The innermost turns that are model calls, each call once: a wrapper's totals (the
        Vercel AI SDK's root span) are not a call, and a call two instrumentations describe
        as spans side by side (the anthropic SDK's own beside OpenLLMetry's) is one, read
        from both: turns of different scopes whose times overlap."""
        kept: list[ModelTurn] = []
        for t in self.inner:
            if not t.model_call:
                continue
            same = next(
                (
                    k
                    for k in kept
                    if k.span.scope != t.span.scope
                    and k.also is None
                    and t.span.start < (k.span.end or k.span.start)
                    and k.span.start < (t.span.end or t.span.start)
                ),
                None,
            )
            if same is None:
                kept.append(t)
            else:
                same.also = t.span
        return kept

    # --- what was not recorded ----------------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        """Whether no span was read as a model call, an agent's turn or a tool call."""
        return not (self.inner or self.wrappers or self.agents or self.runs or self.control)

    @cached_property
    def instrumentation(self) -> Instrumentation | None:
        return instrumentation_of(self.spans)

    def _setting(self) -> str:
        return content_setting(self.instrumentation)

    def _calls_setting(self) -> str:
        return calls_setting(self.instrumentation)

    def not_captured(self, batches: Batches) -> dict[str, str]:
        """``{"arguments" | "final_text" | "calls" | "batches": why}`` for what the spans
        left out (see the module's docstring)."""
        if self.is_empty:
            return {"calls": NO_CALLS, "final_text": NO_CALLS}
        found: dict[str, str] = {}
        if any(made.get(CAPTURED) is False for batch in batches for made in batch):
            found["arguments"] = f"tool arguments were not captured: {self._setting()}"
        if not self.inner and not self.runs:
            found["calls"] = f"no model call or tool call was recorded: {self._calls_setting()}"
        elif not self.inner:
            found["batches"] = (
                "no model call was recorded, so which tool calls were made together, and "
                f"after which results, is not known: {self._calls_setting()}"
            )
        asked = [
            t
            for t in self.inner
            if (t.asked_for_calls or not (self.runs or t.captured or t.tells_calls))
            and not self._calls_of(t)
        ]
        if asked:
            found["calls"] = (
                f"{_count(len(asked), 'model turn')} may have asked for tool calls that were "
                f"not captured (no span names them): {self._setting()}"
                if not any(t.asked_for_calls for t in asked)
                else f"{_count(len(asked), 'model turn')} asked for tool calls that were not "
                f"captured (no span names them): {self._setting()}"
            )
        if not any(t.captured for t in self.turns):
            why = self._setting() if self.inner else self._calls_setting()
            found["final_text"] = f"the final text was not captured: {why}"
        return found

    def _calls_of(self, model_turn: ModelTurn) -> bool:
        """Whether some call of the turn was recorded: by its messages, or a tool run."""
        if model_turn.calls:
            return True
        key = model_turn.span.key
        return any(self._model_turn_of(run.span) == key for run in [*self.runs, *self.control])


def complete(made: CallDict, from_run: CallDict) -> None:
    """Give a message's call what its tool run knows: the result, whether it failed, and
    the arguments when the message did not carry them."""
    if made.get(CAPTURED) is False and from_run.get(CAPTURED) is not False:
        del made[CAPTURED]
        made.pop("arguments_raw", None)
        made.update((k, from_run[k]) for k in ("arguments", "arguments_raw") if k in from_run)
    if "result" in from_run:
        made["result"] = from_run["result"]
    if from_run.get("is_error"):
        made["is_error"] = True
    if made.get("duration_ms") is None and from_run.get("duration_ms") is not None:
        made["duration_ms"] = from_run["duration_ms"]


def _unclaimed(
    calls: Iterable[CallDict], run: ToolRun, claimed: set[int], *, same_arguments: bool = False
) -> CallDict | None:
    """The call of ``calls`` that a tool run with no call id completes: the first no run
    completed yet of the same tool, one with the same arguments first; only one with the
    same arguments (or none recorded) when ``same_arguments``."""
    arguments = run.call.get("arguments")
    first = None
    for made in calls:
        if id(made) in claimed or made["name"] != run.call["name"]:
            continue
        if arguments is None or made.get("arguments") is None or arguments == made["arguments"]:
            return made
        first = first or made
    return None if same_arguments else first


def _figures(model_call: ModelTurn) -> dict[str, Any]:
    """What a transcript's assistant turn says of its model call: its tokens and its span's
    time, where recorded."""
    return usage.turn_figures(span_call(model_call.span, model_call.also))


def _batch_of(call_id: Any, batch_of: dict[Any, int]) -> int | None:
    return batch_of.get(call_id) if isinstance(call_id, str | int) else None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
