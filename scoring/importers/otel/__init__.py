"""OpenTelemetry traces (docs/formats.md#opentelemetry-genai-spans; the SDK's own JSON:
docs/formats.md#sdk-objects): a line of spans, and the log records of their trace, made into
a run.

Each convention that instrumentations write has its own module, which reads a span as a
model turn, an agent's turn or a tool run (``turns.py``): ``openinference``, ``vercel``,
``litellm`` (LiteLLM's own callback), ``openllmetry``, ``genai`` (OpenTelemetry's own GenAI
and MCP conventions, the others' fallback), and ``langsmith`` (LangSmith's OpenTelemetry
mode, for the spans of its scope only). A framework whose instrumentation writes one of
these with quirks of its own has its module in ``frameworks/``, tried first on the spans of
its instrumentation scopes. A span is read by the first reader that recognises it, so a span
written in two conventions is counted once. ``assembly.py`` makes the run of them, whichever
readers they came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..common import envelope_fields, with_error, with_note, with_transcript
from . import genai, langsmith, litellm, openinference, openllmetry, vercel
from .assembly import Reader, Trace, read_turns
from .capture import INSTRUMENTATIONS, Instrumentation
from .frameworks import FRAMEWORKS
from .spans import SCOPE_ATTRIBUTE, Span, any_value, read_attributes, read_spans
from .turns import NotARun

NAME = "otel"
SIGNATURE = "resourceSpans, resourceLogs or spans"
CASE = "casebook.case"
# A line's mark that its case was read from the trace (a span, or the resource), not given
# by the line: Collector files regrouped, live traces.
CASE_FROM_TRACE = "case_from_trace"
# In order: a span is read by the first convention that recognises it.
CONVENTIONS: tuple[Reader, ...] = (
    (openinference.model_turn, openinference.tool_run),
    (vercel.model_turn, vercel.tool_run),
    (litellm.model_turn, None),  # before OpenLLMetry's, which LiteLLM's attributes look like
    (openllmetry.model_turn, openllmetry.tool_run),
    (genai.model_turn, genai.tool_run),
)
# Conventions only spans of their own instrumentation scope are written in.
SCOPED = (langsmith,)

__all__ = [
    "CASE",
    "CASE_FROM_TRACE",
    "INSTRUMENTATIONS",
    "NAME",
    "SCOPE_ATTRIBUTE",
    "SIGNATURE",
    "Instrumentation",
    "NotARun",
    "any_value",
    "convert",
    "detect",
    "read_attributes",
]


def detect(line: Mapping[str, Any]) -> bool:
    return any(
        isinstance(line.get(key), list) for key in ("resourceSpans", "resourceLogs", "spans")
    )


@lru_cache(maxsize=512)
def readers(scope: str) -> tuple[Reader, ...]:
    """The readers of a span of ``scope``: its framework's and its own convention's first,
    then the conventions."""
    own = tuple(
        (module.model_turn, module.tool_run)
        for module in (*FRAMEWORKS, *SCOPED)
        if any(scope == s or scope.startswith(f"{s}.") for s in module.SCOPES)
    )
    return own + CONVENTIONS


def convert(line: Mapping[str, Any]) -> dict[str, Any]:
    """The run of the line's spans. ``NotARun`` when no span is a model call, an agent's
    turn or a tool call, and the line's case was read from the trace (``CASE_FROM_TRACE``)
    where no span names it (``casebook.case``, or the suite's case attribute in
    ``meta.case_value``): a resource's case is on every trace its process sends,
    bookkeeping ones included (an agent being made)."""
    spans = read_spans(line)
    trace = Trace(spans, *read_turns(spans, readers))
    if trace.is_empty and line.get(CASE_FROM_TRACE) and not _names_its_case(line, spans):
        raise NotARun.single(
            "", "no span is a model call or a tool call, and none names the case: not a run"
        )
    batches = trace.batches()
    run = envelope_fields(line)
    run["batches"] = batches
    final = trace.final_turn()
    run["final_text"] = final.text if final is not None else None
    with_error(run, trace.run_error())
    with_error(run, trace.cut_off(final))
    for note in trace.notes():
        with_note(run, note)
    not_captured = trace.not_captured(batches)
    if not_captured:
        run["not_captured"] = not_captured
        for why in not_captured.values():
            with_note(run, why)
    run["usage"] = trace.usage(batches)
    transcript = trace.transcript(batches)
    return with_transcript(run, transcript) if transcript else run


def _names_its_case(line: Mapping[str, Any], spans: list[Span]) -> bool:
    meta = line.get("meta")
    if isinstance(meta, Mapping) and meta.get("case_value"):
        return True
    return any(CASE in span.attributes for span in spans)
