"""What each instrumentation needs to record message content (docs/live-traces.md#content),
told by the instrumentation scope of the spans it writes. Checked against the libraries'
own behaviour in tests/fixtures/otlp/ (the fixtures without content)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Instrumentation:
    name: str
    scopes: tuple[str, ...]  # prefixes of the scope names its spans carry
    setting: str  # what to set for content to be recorded


INSTRUMENTATIONS = (
    Instrumentation(
        "openai-v2",
        ("opentelemetry.instrumentation.openai_v2", "opentelemetry.util.genai"),
        "set OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY",
    ),
    Instrumentation(
        "OpenLLMetry",
        (
            "opentelemetry.instrumentation.openai",
            "opentelemetry.instrumentation.anthropic",
            "opentelemetry.instrumentation.mcp",
            "traceloop",
        ),
        "set TRACELOOP_TRACE_CONTENT=true",
    ),
    Instrumentation(
        "anthropic",
        ("com.anthropic.sdk",),
        "set ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content",
    ),
    Instrumentation(
        "OpenInference",
        ("openinference.",),
        "unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_OUTPUTS (or set them to false)",
    ),
    Instrumentation(
        "pydantic-ai",
        ("pydantic-ai", "pydantic_ai", "logfire"),
        "instrument with include_content=True (InstrumentationSettings, or "
        "logfire.instrument_pydantic_ai)",
    ),
    Instrumentation(
        "strands",
        ("strands",),
        "remove gen_ai_unredacted_attributes from OTEL_SEMCONV_STABILITY_OPT_IN (strands "
        "records content unless told to redact it)",
    ),
    Instrumentation(
        "google-adk",
        ("gcp.vertex.agent", "google_adk", "google.adk"),
        "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true and export logs too "
        "(a LoggerProvider with the OTLP log exporter)",
    ),
    Instrumentation(
        "the Vercel AI SDK",
        ("ai",),
        "leave experimental_telemetry's recordInputs and recordOutputs true (their default)",
    ),
)
# Spans of no library we know: what the OpenTelemetry GenAI conventions ask for.
GENERIC = (
    "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, or what your "
    "instrumentation needs to record message content (docs/live-traces.md#content)"
)


def instrumentation_of(scopes: Iterable[str]) -> Instrumentation | None:
    """The first instrumentation whose scope the spans carry."""
    seen = set(scopes)
    for instrumentation in INSTRUMENTATIONS:
        for scope in seen:
            if any(_within(scope, prefix) for prefix in instrumentation.scopes):
                return instrumentation
    return None


def setting_for(scopes: Iterable[str]) -> str:
    found = instrumentation_of(scopes)
    return found.setting if found is not None else GENERIC


def _within(scope: str, prefix: str) -> bool:
    if prefix.endswith("."):
        return scope.startswith(prefix)
    return scope == prefix or scope.startswith(f"{prefix}.")
