"""OpenTelemetry traces (docs/formats.md#opentelemetry-genai-spans; the SDK's own JSON:
docs/formats.md#sdk-objects): a line of spans, and the log records of their trace, made into
a run.

Each convention that instrumentations write has its own module, which reads a span as a
model turn or a tool run (``turns.py``): ``openinference``, ``openllmetry``, ``vercel`` and
``genai`` (OpenTelemetry's own GenAI and MCP conventions, the others' fallback). A span is
read by the first convention that recognises it, so a span written in two conventions is
counted once. ``assembly.py`` makes the run of them, whichever conventions they came in.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..common import envelope_fields, with_error, with_note, with_transcript
from . import genai, openinference, openllmetry, vercel
from .assembly import Trace, read_turns
from .capture import INSTRUMENTATIONS, Instrumentation
from .spans import SCOPE_ATTRIBUTE, any_value, read_attributes, read_spans

NAME = "otel"
SIGNATURE = "resourceSpans, resourceLogs or spans"
# In order: a span is read by the first convention that recognises it.
CONVENTIONS = (
    (openinference.model_turn, openinference.tool_run),
    (vercel.model_turn, vercel.tool_run),
    (openllmetry.model_turn, openllmetry.tool_run),
    (genai.model_turn, genai.tool_run),
)

__all__ = [
    "INSTRUMENTATIONS",
    "NAME",
    "SCOPE_ATTRIBUTE",
    "SIGNATURE",
    "Instrumentation",
    "any_value",
    "convert",
    "detect",
    "read_attributes",
]


def detect(line: Mapping) -> bool:
    return any(
        isinstance(line.get(key), list) for key in ("resourceSpans", "resourceLogs", "spans")
    )


def convert(line: Mapping) -> dict:
    spans = read_spans(line)
    trace = Trace(spans, *read_turns(spans, CONVENTIONS))
    batches = trace.batches()
    run = envelope_fields(line)
    run["batches"] = batches
    final = trace.final_turn()
    run["final_text"] = final.text if final is not None else None
    with_error(run, trace.run_error())
    with_error(run, trace.cut_off(final))
    not_captured = trace.not_captured(batches)
    if not_captured:
        run["not_captured"] = not_captured
        for why in not_captured.values():
            with_note(run, why)
    transcript = trace.transcript(batches)
    return with_transcript(run, transcript) if transcript else run
