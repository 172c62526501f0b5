"""The instrumentations whose content-capture settings the suite page's "Send live traces"
panel shows (docs/live-traces.md#instrumentations): one entry each, in the order shown. The
README and docs/live-traces.md name every one (tests/live/test_instrumentations.py).

In ``settings``, ``{endpoint}`` stands for the absolute URL of ``/otlp`` and ``{key}`` for
the suite token's key; the panel fills them in.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Instrumentation:
    name: str
    package: str  # what the agent installs
    settings: tuple[str, ...]  # environment lines, beside the OTEL_EXPORTER_OTLP_* ones
    code: str  # what the agent's code does, if anything
    note: str  # what captures the content, in a sentence
    docs: str  # the instrumentation's own documentation

    def settings_for(self, endpoint: str, key: str) -> tuple[str, ...]:
        """The settings, with the endpoint and the key in them."""
        return tuple(line.format(endpoint=endpoint, key=key) for line in self.settings)


INSTRUMENTATIONS = (
    Instrumentation(
        name="openai-v2",
        package="opentelemetry-instrumentation-openai-v2",
        settings=(
            "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY",
        ),
        code=(
            "from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor\n"
            "OpenAIInstrumentor().instrument()"
        ),
        note="Messages go on the chat spans only with both settings.",
        docs="https://pypi.org/project/opentelemetry-instrumentation-openai-v2/",
    ),
    Instrumentation(
        name="OpenLLMetry",
        package="traceloop-sdk",
        settings=(
            "TRACELOOP_BASE_URL={endpoint}",
            "TRACELOOP_HEADERS=Authorization=Token {key}",
            "TRACELOOP_TRACE_CONTENT=true",
        ),
        code='from traceloop.sdk import Traceloop\nTraceloop.init(app_name="my-agent")',
        note="Traceloop's own exporter settings; content is captured by default (true).",
        docs="https://github.com/traceloop/openllmetry",
    ),
    Instrumentation(
        name="OpenInference",
        package="openinference-instrumentation-openai (and the other frameworks')",
        settings=("OPENINFERENCE_HIDE_INPUTS=false", "OPENINFERENCE_HIDE_OUTPUTS=false"),
        code=(
            "from openinference.instrumentation.openai import OpenAIInstrumentor\n"
            "OpenAIInstrumentor().instrument()"
        ),
        note="Content is captured by default: the two settings must not be true.",
        docs="https://github.com/Arize-ai/openinference",
    ),
    Instrumentation(
        name="Pydantic AI",
        package="pydantic-ai with logfire",
        settings=(),
        code=(
            "import logfire\n"
            "logfire.configure(send_to_logfire=False)\n"
            "logfire.instrument_pydantic_ai()\n"
            "# or, without logfire: Agent.instrument_all()"
        ),
        note="Content is captured while include_content stays True (the default).",
        docs="https://ai.pydantic.dev/logfire/",
    ),
    Instrumentation(
        name="Strands Agents",
        package="strands-agents[otel]",
        settings=(),
        code=(
            "from strands.telemetry import StrandsTelemetry\n"
            "StrandsTelemetry().setup_otlp_exporter()"
        ),
        note="Content is captured by default.",
        docs="https://github.com/strands-agents/sdk-python",
    ),
    Instrumentation(
        name="Google ADK",
        package="google-adk",
        settings=("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true",),
        code=(
            "from opentelemetry._logs import set_logger_provider\n"
            "from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter\n"
            "from opentelemetry.sdk._logs import LoggerProvider\n"
            "from opentelemetry.sdk._logs.export import BatchLogRecordProcessor\n"
            "logs = LoggerProvider()\n"
            "logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))\n"
            "set_logger_provider(logs)"
        ),
        note="The content comes as log events: a LoggerProvider with the OTLP log exporter "
        "sends them.",
        docs="https://google.github.io/adk-docs/",
    ),
    Instrumentation(
        name="Vercel AI SDK",
        package="ai, @opentelemetry/sdk-node, @opentelemetry/exporter-trace-otlp-proto",
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
        docs="https://ai-sdk.dev/docs/ai-sdk-core/telemetry",
    ),
)
