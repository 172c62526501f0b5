"""The instrumentations Casebook knows (docs/live-traces.md#instrumentations): how each is set
up to send here, which instrumentation scopes its spans carry, and what it needs to record
message content. The importer names that setting when a trace lacks content
(docs/live-traces.md#content); the suite page's panel, the README and docs show the rest.
Each setting was checked against the library's own behaviour: tests/fixtures/otlp/ holds what
it sends with content and without.

In ``settings``, ``{endpoint}`` stands for the absolute URL of ``/otlp`` and ``{key}`` for
the suite token's key; the panel fills them in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Instrumentation:
    name: str
    package: str  # what the agent installs
    scopes: tuple[str, ...]  # prefixes of the scope names its spans carry ("x." a namespace)
    settings: tuple[str, ...]  # environment lines, beside the OTEL_EXPORTER_OTLP_* ones
    code: str  # what the agent's code does, if anything
    note: str  # what records the content, in a sentence
    setting: str  # what to do when content was not recorded, as the run's notes say it
    docs: str  # the instrumentation's own documentation

    def settings_for(self, endpoint: str, key: str) -> tuple[str, ...]:
        """The settings, with the endpoint and the key in them."""
        return tuple(line.format(endpoint=endpoint, key=key) for line in self.settings)


INSTRUMENTATIONS = (
    Instrumentation(
        name="openai-v2",
        package="opentelemetry-instrumentation-openai-v2",
        scopes=("opentelemetry.instrumentation.openai_v2", "opentelemetry.util.genai"),
        settings=(
            "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY",
        ),
        code=(
            "from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor\n"
            "OpenAIInstrumentor().instrument()"
        ),
        note="Messages go on the chat spans only with both settings (2.4: the value true "
        "records nothing).",
        setting="set OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY",
        docs="https://pypi.org/project/opentelemetry-instrumentation-openai-v2/",
    ),
    Instrumentation(
        name="OpenLLMetry",
        package="traceloop-sdk",
        scopes=(
            "opentelemetry.instrumentation.openai",
            "opentelemetry.instrumentation.anthropic",
            "opentelemetry.instrumentation.mcp",
            "traceloop",
        ),
        settings=(
            "TRACELOOP_BASE_URL={endpoint}",
            "TRACELOOP_HEADERS=Authorization=Token {key}",
            "TRACELOOP_TRACE_CONTENT=true",
        ),
        code='from traceloop.sdk import Traceloop\nTraceloop.init(app_name="my-agent")',
        note="Traceloop's own exporter settings; content is captured by default (true).",
        setting="set TRACELOOP_TRACE_CONTENT=true",
        docs="https://github.com/traceloop/openllmetry",
    ),
    Instrumentation(
        name="OpenInference",
        package="openinference-instrumentation-openai (and the other frameworks')",
        scopes=("openinference.",),
        settings=("OPENINFERENCE_HIDE_INPUTS=false", "OPENINFERENCE_HIDE_OUTPUTS=false"),
        code=(
            "from openinference.instrumentation.openai import OpenAIInstrumentor\n"
            "OpenAIInstrumentor().instrument()"
        ),
        note="Content is captured by default: the two settings must not be true.",
        setting="unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_OUTPUTS (or set them "
        "to false)",
        docs="https://github.com/Arize-ai/openinference",
    ),
    Instrumentation(
        name="Pydantic AI",
        package="pydantic-ai with logfire",
        scopes=("pydantic-ai", "pydantic_ai", "logfire"),
        settings=(),
        code=(
            "import logfire\n"
            "logfire.configure(send_to_logfire=False)\n"
            "logfire.instrument_pydantic_ai()\n"
            "# or, without logfire: Agent.instrument_all()"
        ),
        note="Content is captured while include_content stays True (the default).",
        setting="instrument with include_content=True (InstrumentationSettings, or "
        "logfire.instrument_pydantic_ai)",
        docs="https://ai.pydantic.dev/logfire/",
    ),
    Instrumentation(
        name="Strands Agents",
        package="strands-agents[otel]",
        scopes=("strands",),
        settings=(),
        code=(
            "from strands.telemetry import StrandsTelemetry\n"
            "StrandsTelemetry().setup_otlp_exporter()"
        ),
        note="Content is captured by default; gen_ai_unredacted_attributes in "
        "OTEL_SEMCONV_STABILITY_OPT_IN redacts it.",
        setting="remove gen_ai_unredacted_attributes from OTEL_SEMCONV_STABILITY_OPT_IN "
        "(strands records content unless told to redact it)",
        docs="https://github.com/strands-agents/sdk-python",
    ),
    Instrumentation(
        name="Google ADK",
        package="google-adk",
        scopes=("gcp.vertex.agent", "opentelemetry.instrumentation.google_genai"),
        settings=("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_AND_EVENT",),
        code=(
            "from google.adk.telemetry.setup import maybe_set_otel_providers\n"
            "maybe_set_otel_providers()  # with OTEL_EXPORTER_OTLP_ENDPOINT set, as adk does"
        ),
        note="SPAN_AND_EVENT puts the messages on the spans and in log records (EVENT_ONLY, "
        "or true: in log records only, which /otlp/v1/logs receives).",
        setting="set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_AND_EVENT",
        docs="https://google.github.io/adk-docs/",
    ),
    Instrumentation(
        name="Vercel AI SDK",
        package="ai, @opentelemetry/sdk-node, @opentelemetry/exporter-trace-otlp-proto",
        scopes=("ai",),
        settings=(),
        code=(
            'import { NodeSDK } from "@opentelemetry/sdk-node";\n'
            'import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";\n'
            "new NodeSDK({ traceExporter: new OTLPTraceExporter() }).start();\n"
            "// on each call:\n"
            "generateText({ model, prompt, experimental_telemetry: { isEnabled: true } });"
        ),
        note="recordInputs and recordOutputs are true by default; "
        "@opentelemetry/exporter-trace-otlp-http works too.",
        setting="leave experimental_telemetry's recordInputs and recordOutputs true (their "
        "default)",
        docs="https://ai-sdk.dev/docs/ai-sdk-core/telemetry",
    ),
    Instrumentation(
        name="Anthropic SDK",
        package="anthropic",
        scopes=("com.anthropic.sdk",),
        settings=("ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content",),
        code="# the SDK traces its own calls once a tracer provider is set",
        note="Its own spans hold metadata only unless the content mode is content.",
        setting="set ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content",
        docs="https://github.com/anthropics/anthropic-sdk-python",
    ),
)
# Spans of no library we know: what the OpenTelemetry GenAI instrumentations ask for.
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
