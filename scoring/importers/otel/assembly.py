"""A run from a trace's model turns and tool runs, whichever convention read them
(docs/formats.md#opentelemetry-genai-spans).

- Turns: a model turn whose span has another model turn below it (an agent span, or a
  library's span around each of its model calls) is a wrapper: only the innermost turns
  give calls, so a call described by both is counted once. Calls of one id are one call,
  whichever span names it first.
- Batches: each innermost turn's calls are a batch, in turn start order. Tool runs complete
  the call of their id (result, failure, arguments the message lacked); a tool run inside
  another of the same tool (an MCP client span under the agent's tool span) is the same
  call. Tool runs that no message names are batched by model turn: the latest turn beside
  them that started before them, else their parent.
- The final text is the text of the last innermost turn that has output messages, else of
  the last wrapper that has them. The transcript is that turn's input and output messages.
- What the instrumentation did not record is said in ``not_captured`` and the notes, with
  the setting of the library that sent the spans (``capture.py``): arguments left out,
  the final text left out, and model turns that asked for tool calls no span names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain

from ..common import cut_off, is_cut_off, truncation_error, turn
from .capture import setting_for
from .spans import Span
from .turns import CAPTURED, ModelTurn, ToolRun

Reader = tuple[Callable[[Span], ModelTurn | None], Callable[[Span], ToolRun | None]]


def read_turns(spans: list[Span], conventions: Iterable[Reader]) -> tuple[list, list]:
    """Each span as the first convention that reads it: a tool run, else a model turn."""
    turns, runs = [], []
    conventions = list(conventions)
    for span in spans:
        for model_turn, tool_run in conventions:
            if (run := tool_run(span)) is not None:
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
        turn_keys = {t.span.key for t in turns}
        wrappers = {key for t in turns for key in self._ancestors(t.span) if key in turn_keys}
        self.inner = [t for t in turns if t.span.key not in wrappers]
        self.wrappers = [t for t in turns if t.span.key in wrappers]
        self.runs = self._merged_runs(runs)

    def _ancestors(self, span: Span) -> list[str]:
        keys, seen = [], {span.key}
        parent = self.by_key.get(span.parent_id) if span.parent_id else None
        while parent is not None and parent.key not in seen:
            keys.append(parent.key)
            seen.add(parent.key)
            parent = self.by_key.get(parent.parent_id) if parent.parent_id else None
        return keys

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

    # --- batches ----------------------------------------------------------------------------

    def batches(self) -> list[list[dict]]:
        """A batch per model turn: the calls its messages name, each completed by the tool
        run of its id, then the turn's tool runs that no message named."""
        named: dict = {}
        turn_calls: dict[str, list[dict]] = {}
        for model_turn in self.inner:
            calls = []
            for made in model_turn.calls:
                if made["id"] is None or made["id"] not in named:
                    calls.append(made)
                    if made["id"] is not None:
                        named[made["id"]] = made
            if calls:
                turn_calls[model_turn.span.key] = calls
        results = {call_id: result for t in self.inner for call_id, result in t.results.items()}
        for made in named.values():
            if made["id"] in results and "result" not in made:
                made["result"] = results[made["id"]]
        groups: dict[str, list[ToolRun]] = {}
        claimed: set[int] = set()
        for run in self.runs:
            key = self._model_turn_of(run.span)
            # its turn's calls first, then the latest turn's (a library's own span around the
            # same model call may stand between)
            candidates = [*turn_calls.get(key, ()), *chain(*reversed(turn_calls.values()))]
            same = named.get(run.call["id"]) or _unclaimed(candidates, run, claimed)
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
        """The key of the span whose model turn a tool run belongs to: the latest inner turn
        beside it that started before it, else its parent."""
        earlier = [
            t.span
            for t in self.inner
            if t.span.parent_id == span.parent_id and t.span.span_id and t.span.start <= span.start
        ]
        return earlier[-1].key if earlier else span.parent_id

    # --- final text, transcript, errors -------------------------------------------------------

    def final_turn(self) -> ModelTurn | None:
        """The turn holding the final message (see the module's docstring)."""
        for turns in (self.inner, self.wrappers):
            answering = [t for t in turns if t.output]
            if answering:
                return answering[-1]
        return None

    def transcript(self, batches: list[list[dict]]) -> list:
        """The conversation as the last turn with messages saw it: its input messages, then
        its output messages."""
        last = next((t for t in reversed(self.inner) if t.input or t.output), None)
        if last is None:
            return []
        batch_of = {c["id"]: b for b, batch in enumerate(batches) for c in batch if c["id"]}
        turns = []
        for message in [*last.input, *last.output]:
            for call_id, result in message.answers:
                turns.append(turn("tool", result, _batch_of(call_id, batch_of)))
            if message.text is not None or message.call_ids or not message.answers:
                batch = _batch_of(message.call_ids[0], batch_of) if message.call_ids else None
                turns.append(turn(message.role, message.text, batch))
        return turns

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
        tool_spans = {run.span.key for run in self.runs}
        for span in sorted(self.spans, key=lambda s: s.sort_key):
            root = not span.parent_id or span.parent_id not in self.by_key
            if span.failed and root and span.key not in tool_spans:
                reason = span.status_message or span.attributes.get("error.type") or "failed"
                return f"{span.name}: {reason}" if span.name else str(reason)
        return None

    # --- what was not recorded ----------------------------------------------------------------

    def not_captured(self, batches: list[list[dict]]) -> dict:
        """``{"arguments" | "final_text" | "calls": why}`` for what the spans left out; a
        trace with no span read as a model turn or a tool run holds none of it."""
        setting = setting_for(span.scope for span in self.spans)
        found = {}
        turns = [*self.inner, *self.wrappers]
        text_missing = bool(turns) and not any(t.captured for t in turns)
        if any(made.get(CAPTURED) is False for batch in batches for made in batch):
            found["arguments"] = f"tool arguments were not captured: {setting}"
        asked = [t for t in self.inner if t.asked_for_calls and not self._calls_of(t)]
        if asked:
            found["calls"] = (
                f"{_count(len(asked), 'model turn')} asked for tool calls that were not "
                f"captured (no span names them): {setting}"
            )
        if text_missing:
            found["final_text"] = f"the final text was not captured: {setting}"
        if not turns and not self.runs:
            found["calls"] = found["final_text"] = (
                "no span of the trace is a model call or a tool call in a convention Casebook "
                "reads (docs/formats.md#opentelemetry-genai-spans)"
            )
        return found

    def _calls_of(self, model_turn: ModelTurn) -> bool:
        """Whether some call of the turn was recorded: by its messages, or a tool run."""
        if model_turn.calls:
            return True
        key = model_turn.span.key
        return any(self._model_turn_of(run.span) == key for run in self.runs)


def complete(made: dict, from_run: dict) -> None:
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


def _unclaimed(calls, run: ToolRun, claimed: set[int]) -> dict | None:
    """For a tool run that has no call id: the first call of its model turn that no run
    completed yet, of the same tool and, when both were recorded, the same arguments."""
    if run.call["id"] is not None:
        return None
    for made in calls:
        if id(made) in claimed or made["name"] != run.call["name"]:
            continue
        arguments = run.call.get("arguments")
        if arguments is None or made.get("arguments") is None or arguments == made["arguments"]:
            return made
    return None


def _batch_of(call_id, batch_of: dict) -> int | None:
    return batch_of.get(call_id) if isinstance(call_id, str | int) else None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
