"""The instrumentations Casebook knows (docs/live-traces.md#instrumentations), a library or
agent framework under each instrumentation that traces it: what to install and set for its
traces to come here, which instrumentation scopes its spans carry, what records message
content, and what records the model calls where its spans hold none. The importer names
these when a trace lacks them (docs/live-traces.md#content); the suite page's panel, the
README and docs show the rest. Each entry was checked against what the library itself sends:
``variants`` names the captures of tests/fixtures/otlp/ (with content and without) that it
was checked against, made with the versions in ``tried``.

In ``settings``, ``{endpoint}`` stands for the absolute URL of ``/otlp`` and ``{key}`` for
the suite token's key; the panel fills them in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .spans import Span

OPENINFERENCE_CONTENT = (
    "unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_OUTPUTS (or set them to false)"
)
OPENINFERENCE_SETTINGS = ("OPENINFERENCE_HIDE_INPUTS=false", "OPENINFERENCE_HIDE_OUTPUTS=false")
OPENINFERENCE_NOTE = "Content is captured by default: the two settings must not be true."
TRACELOOP_CONTENT = "set TRACELOOP_TRACE_CONTENT=true"
TRACELOOP_SETTINGS = (
    "TRACELOOP_BASE_URL={endpoint}",
    "TRACELOOP_HEADERS=Authorization=Token {key}",
    "TRACELOOP_TRACE_CONTENT=true",
)
TRACELOOP_INIT = 'from traceloop.sdk import Traceloop\nTraceloop.init(app_name="my-agent")'
TRACELOOP_NOTE = "Traceloop's own exporter settings; content is captured by default (true)."
# Where a library's own tracing is set up with the OpenTelemetry SDK: a tracer provider whose
# exporter takes the OTEL_EXPORTER_OTLP_* settings.
SDK_PACKAGES = "opentelemetry-sdk opentelemetry-exporter-otlp-proto-http"
SDK_SETUP = (
    "from opentelemetry import trace\n"
    "from opentelemetry.sdk.trace import TracerProvider\n"
    "from opentelemetry.sdk.trace.export import BatchSpanProcessor\n"
    "from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter\n"
    "provider = TracerProvider()\n"
    "provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))\n"
    "trace.set_tracer_provider(provider)"
)


@dataclass(frozen=True, slots=True)
class Instrumentation:
    name: str  # the library or framework, as its users know it
    via: str  # the instrumentation that writes its spans
    packages: str  # what the agent installs (pip), with the pins a fresh install needs
    scopes: tuple[str, ...]  # prefixes of the scope names its spans carry ("x." a namespace)
    settings: tuple[str, ...]  # environment lines, beside the OTEL_EXPORTER_OTLP_* ones
    code: str  # what the agent's code does
    note: str  # what records the content, in a sentence
    setting: str  # what to do when content was not recorded, as the run's notes say it
    docs: str  # the instrumentation's own documentation
    tried: str  # the versions its captures were made with
    variants: tuple[str, ...]  # its captures in tests/fixtures/otlp/
    # What records the model calls, when its spans hold none (as the run's notes say it).
    calls: str = ""
    # Attributes that mark its spans where their scope is another library's (LiteLLM writes
    # onto the caller's span).
    markers: tuple[str, ...] = ()
    installer: str = "pip"

    @property
    def title(self) -> str:
        return f"{self.name} ({self.via})"

    @property
    def install(self) -> str:
        """The command that installs its packages."""
        return f"{self.installer} install {self.packages}"

    def settings_for(self, endpoint: str, key: str) -> tuple[str, ...]:
        """The settings, with the endpoint and the key in them."""
        return tuple(line.format(endpoint=endpoint, key=key) for line in self.settings)


def _openinference(
    name: str,
    package: str,
    scope: str,
    tried: str,
    variants: tuple[str, ...],
    code: str,
    *,
    calls: str = "",
    docs: str = "",
) -> Instrumentation:
    """A framework under its OpenInference instrumentation."""
    return Instrumentation(
        name=name,
        via="OpenInference",
        packages=f"{package} {SDK_PACKAGES}",
        scopes=(f"openinference.instrumentation.{scope}",),
        settings=OPENINFERENCE_SETTINGS,
        code=f"{SDK_SETUP}\n{code}",
        note=OPENINFERENCE_NOTE,
        setting=OPENINFERENCE_CONTENT,
        docs=docs or "https://github.com/Arize-ai/openinference",
        tried=tried,
        variants=variants,
        calls=calls,
    )


INSTRUMENTATIONS = (
    Instrumentation(
        name="openai-v2",
        via="OpenTelemetry's GenAI instrumentation",
        packages="opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-util-genai==1.1b0 "
        f"httpx {SDK_PACKAGES}",
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
        "records nothing). 2.4b0 imports opentelemetry-util-genai (1.1b0: later ones lack "
        "its module) and httpx without requiring them.",
        setting="set OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY",
        docs="https://pypi.org/project/opentelemetry-instrumentation-openai-v2/",
        tried="opentelemetry-instrumentation-openai-v2 2.3b0 and 2.4b0, openai 3.57",
        variants=(
            "openai-v2-default-no-content",
            "openai-v2-events",
            "openai-v2-events-no-content",
            "openai-v2-latest",
            "openai-v2-latest-events",
            "openai-v2-latest-no-content",
            "mcp-client-semconv",
            "mcp-client-semconv-no-content",
        ),
    ),
    Instrumentation(
        name="OpenLLMetry",
        via="Traceloop",
        packages="traceloop-sdk",
        scopes=(
            "opentelemetry.instrumentation.openai",
            "opentelemetry.instrumentation.anthropic",
            "opentelemetry.instrumentation.mcp",
            "traceloop",
        ),
        settings=TRACELOOP_SETTINGS,
        code=TRACELOOP_INIT,
        note=TRACELOOP_NOTE,
        setting=TRACELOOP_CONTENT,
        docs="https://github.com/traceloop/openllmetry",
        tried="traceloop-sdk 0.47.5 and 0.62.4 (openai, anthropic, MCP)",
        variants=(
            "openllmetry-0.47-openai",
            "openllmetry-0.47-openai-no-content",
            "openllmetry-anthropic",
            "openllmetry-anthropic-no-content",
            "openllmetry-openai",
            "openllmetry-openai-no-content",
            "mcp-client-traceloop",
            "mcp-client-traceloop-no-content",
        ),
    ),
    Instrumentation(
        name="OpenInference",
        via="Arize Phoenix",
        packages=f"openinference-instrumentation-openai {SDK_PACKAGES}",
        scopes=("openinference.",),
        settings=OPENINFERENCE_SETTINGS,
        code=(
            "from openinference.instrumentation.openai import OpenAIInstrumentor\n"
            "OpenAIInstrumentor().instrument()"
        ),
        note=f"{OPENINFERENCE_NOTE} Each model SDK has its instrumentation "
        "(openinference-instrumentation-anthropic, -openai-agents, ...).",
        setting=OPENINFERENCE_CONTENT,
        docs="https://github.com/Arize-ai/openinference",
        tried="openinference-instrumentation-openai 0.1.66, -anthropic 3.1.0, -openai-agents 2.6.0",
        variants=(
            "openinference-anthropic",
            "openinference-anthropic-no-content",
            "openinference-openai",
            "openinference-openai-agents",
            "openinference-openai-agents-no-content",
            "openinference-openai-genai",
            "openinference-openai-no-content",
        ),
    ),
    Instrumentation(
        name="Pydantic AI",
        via="its own instrumentation",
        packages="pydantic-ai logfire",
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
        tried="pydantic-ai-slim 2.68",
        variants=("pydantic-ai", "pydantic-ai-no-content", "pydantic-ai-v6"),
    ),
    Instrumentation(
        name="Strands Agents",
        via="its own instrumentation",
        packages="strands-agents[otel]",
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
        tried="strands-agents 1.62",
        variants=("strands", "strands-latest", "strands-latest-no-content", "strands-no-content"),
    ),
    Instrumentation(
        name="Google ADK",
        via="its own instrumentation",
        packages="google-adk",
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
        tried="google-adk 2.13, opentelemetry-instrumentation-google-genai 1.3b0",
        variants=(
            "google-adk",
            "google-adk-events",
            "google-adk-no-content",
            "google-adk-no-genai-instrumentor",
            "google-adk-v1",
            "google-adk-v1-no-content",
        ),
    ),
    Instrumentation(
        name="Vercel AI SDK",
        via="its own telemetry",
        packages="ai @opentelemetry/sdk-node @opentelemetry/exporter-trace-otlp-proto",
        installer="npm",
        scopes=("ai", "gen_ai"),  # AI SDK 6's, and 7's own integration
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
        tried="ai 6.0 and 7.0 (@ai-sdk/otel 1.0)",
        variants=(
            "vercel-ai",
            "vercel-ai-no-content",
            "vercel-ai-protobuf",
            "vercel-ai-v7",
            "vercel-ai-v7-legacy",
            "vercel-ai-v7-no-content",
        ),
    ),
    Instrumentation(
        name="Anthropic SDK",
        via="its own tracing",
        packages=f"anthropic {SDK_PACKAGES}",
        scopes=("com.anthropic.sdk",),
        settings=("ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content",),
        code=f"{SDK_SETUP}\n# the SDK traces its own calls once a tracer provider is set",
        note="Its own spans hold metadata only unless the content mode is content. With "
        "OpenInference's anthropic instrumentation beside it, each call has a span of each: "
        "the one that recorded content is read.",
        setting="set ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content (and, with "
        "OpenInference's instrumentation beside it, unset OPENINFERENCE_HIDE_INPUTS and "
        "OPENINFERENCE_HIDE_OUTPUTS)",
        docs="https://github.com/anthropics/anthropic-sdk-python",
        tried="anthropic 2.16 and 2.17, openinference-instrumentation-anthropic 3.1.0",
        variants=(
            "anthropic-native",
            "anthropic-native-no-content",
            "anthropic-native-tool-runner",
            "anthropic-native-tool-runner-no-content",
            "anthropic-native-openinference",
            "anthropic-native-metadata-openinference",
            "anthropic-native-openinference-no-content",
        ),
    ),
    # --- agent frameworks ---------------------------------------------------------------------
    _openinference(
        "LangChain / LangGraph",
        "openinference-instrumentation-langchain",
        "langchain",
        "langchain 1.5.2, langgraph 1.2.24, openinference-instrumentation-langchain 0.1.80",
        ("langchain-openinference", "langchain-openinference-no-content"),
        "from openinference.instrumentation.langchain import LangChainInstrumentor\n"
        "LangChainInstrumentor().instrument()",
    ),
    Instrumentation(
        name="LangChain / LangGraph",
        via="OpenLLMetry",
        packages="traceloop-sdk",
        scopes=("opentelemetry.instrumentation.langchain",),
        settings=TRACELOOP_SETTINGS,
        code=f"{TRACELOOP_INIT}\n# or opentelemetry-instrumentation-langchain alone, with the "
        "SDK's exporter:\n# LangchainInstrumentor().instrument()",
        note=f"{TRACELOOP_NOTE} The tool spans carry LangChain's callback payload; the "
        "arguments and call id are read from it.",
        setting=TRACELOOP_CONTENT,
        docs="https://github.com/traceloop/openllmetry",
        tried="langchain 1.5.2, langgraph 1.2.24, traceloop-sdk and "
        "opentelemetry-instrumentation-langchain 0.62.4",
        variants=(
            "langchain-openllmetry",
            "langchain-openllmetry-no-content",
            "langchain-traceloop",
            "langchain-traceloop-no-content",
        ),
    ),
    Instrumentation(
        name="LangChain / LangGraph",
        via="LangSmith's OpenTelemetry mode",
        packages=f"langsmith {SDK_PACKAGES}",
        scopes=("langsmith",),
        settings=("LANGSMITH_TRACING=true", "LANGSMITH_TRACING_MODE=otel"),
        code=f"{SDK_SETUP}  # before the first trace: LangSmith's own provider drops the "
        "resource attributes",
        note="Content is captured unless LANGSMITH_HIDE_INPUTS or LANGSMITH_HIDE_OUTPUTS is "
        "true. Set the global tracer provider first: the one LangSmith makes for itself "
        "ignores OTEL_RESOURCE_ATTRIBUTES.",
        setting="unset LANGSMITH_HIDE_INPUTS and LANGSMITH_HIDE_OUTPUTS",
        docs="https://docs.smith.langchain.com/observability/how_to_guides/trace_with_opentelemetry",
        tried="langchain 1.5.2, langgraph 1.2.24, langsmith 0.15.1",
        variants=("langchain-langsmith-otel", "langchain-langsmith-otel-no-content"),
    ),
    _openinference(
        "LlamaIndex",
        "openinference-instrumentation-llama-index",
        "llama_index",
        "llama-index 0.14.25, openinference-instrumentation-llama-index 4.6.1",
        ("llamaindex-openinference", "llamaindex-openinference-no-content"),
        "from openinference.instrumentation.llama_index import LlamaIndexInstrumentor\n"
        "LlamaIndexInstrumentor().instrument()",
    ),
    Instrumentation(
        name="LlamaIndex",
        via="OpenLLMetry",
        packages="llama-index traceloop-sdk",
        scopes=("opentelemetry.instrumentation.llamaindex",),
        settings=TRACELOOP_SETTINGS,
        code=TRACELOOP_INIT,
        note=f"{TRACELOOP_NOTE} Install llama-index, not only llama-index-core: Traceloop.init "
        "instruments LlamaIndex only when it finds it. The LlamaIndex instrumentation alone "
        "records the workflow's steps and tool calls, not the model calls: Traceloop.init adds "
        "the openai one.",
        setting=TRACELOOP_CONTENT,
        calls="LlamaIndex's OpenLLMetry instrumentation records the workflow's tool calls, not "
        "the model calls: use Traceloop.init, or install opentelemetry-instrumentation-openai "
        "beside it",
        docs="https://github.com/traceloop/openllmetry",
        tried="llama-index 0.14.25, traceloop-sdk and opentelemetry-instrumentation-llamaindex "
        "0.62.4",
        variants=(
            "llamaindex-openllmetry",
            "llamaindex-openllmetry-no-content",
            "llamaindex-traceloop",
            "llamaindex-traceloop-no-content",
        ),
    ),
    _openinference(
        "Haystack",
        "openinference-instrumentation-haystack",
        "haystack",
        "haystack-ai 3.4.1, openinference-instrumentation-haystack 0.1.46",
        ("haystack-openinference", "haystack-openinference-no-content"),
        "from openinference.instrumentation.haystack import HaystackInstrumentor\n"
        "HaystackInstrumentor().instrument()",
    ),
    _openinference(
        "DSPy",
        "openinference-instrumentation-dspy",
        "dspy",
        "dspy 3.4.1, openinference-instrumentation-dspy 0.1.48",
        ("dspy-openinference", "dspy-openinference-no-content"),
        "from openinference.instrumentation.dspy import DSPyInstrumentor\n"
        "DSPyInstrumentor().instrument()",
    ),
    _openinference(
        "CrewAI",
        "openinference-instrumentation-crewai openinference-instrumentation-openai",
        "crewai",
        "crewai 1.15.30, openinference-instrumentation-crewai 1.1.21, "
        "openinference-instrumentation-openai 0.1.66",
        (
            "crewai-openinference",
            "crewai-openinference-no-content",
            "crewai-openinference-openai",
            "crewai-openinference-openai-no-content",
        ),
        "from openinference.instrumentation.crewai import CrewAIInstrumentor\n"
        "from openinference.instrumentation.openai import OpenAIInstrumentor\n"
        "CrewAIInstrumentor().instrument()\n"
        "OpenAIInstrumentor().instrument()  # the model calls: crewai calls openai directly",
        calls="CrewAI's OpenInference instrumentation records the crew, its agents and "
        "tools, not the model calls: instrument the model client too "
        "(openinference-instrumentation-openai)",
    ),
    Instrumentation(
        name="CrewAI",
        via="OpenLLMetry",
        packages="crewai traceloop-sdk",
        scopes=("opentelemetry.instrumentation.crewai",),
        settings=TRACELOOP_SETTINGS,
        code=TRACELOOP_INIT,
        note=f"{TRACELOOP_NOTE} The CrewAI instrumentation alone records the crew, its tasks "
        "and agents, not the model or tool calls: Traceloop.init adds the openai one.",
        setting=TRACELOOP_CONTENT,
        calls="CrewAI's OpenLLMetry instrumentation records the crew, not the model or tool "
        "calls: use Traceloop.init, or install opentelemetry-instrumentation-openai beside it",
        docs="https://github.com/traceloop/openllmetry",
        tried="crewai 1.15.30, traceloop-sdk and opentelemetry-instrumentation-crewai 0.62.4",
        variants=(
            "crewai-openllmetry",
            "crewai-openllmetry-no-content",
            "crewai-traceloop",
            "crewai-traceloop-no-content",
        ),
    ),
    _openinference(
        "smolagents",
        "openinference-instrumentation-smolagents",
        "smolagents",
        "smolagents 1.26.0, openinference-instrumentation-smolagents 0.1.43",
        ("smolagents-openinference", "smolagents-openinference-no-content"),
        "from openinference.instrumentation.smolagents import SmolagentsInstrumentor\n"
        "SmolagentsInstrumentor().instrument()",
    ),
    _openinference(
        "LiteLLM",
        "openinference-instrumentation-litellm",
        "litellm",
        "litellm 1.110.2, openinference-instrumentation-litellm 0.1.51",
        ("litellm-openinference", "litellm-openinference-no-content"),
        "from openinference.instrumentation.litellm import LiteLLMInstrumentor\n"
        "LiteLLMInstrumentor().instrument()",
    ),
    Instrumentation(
        name="LiteLLM",
        via="its OpenTelemetry callback",
        packages=f"litellm {SDK_PACKAGES}",
        scopes=("litellm",),
        markers=("litellm.call_id",),
        settings=(
            "OTEL_EXPORTER=otlp_http",
            "OTEL_ENDPOINT={endpoint}/v1/traces",
            "OTEL_HEADERS=Authorization=Token {key}",
            "USE_OTEL_LITELLM_REQUEST_SPAN=true",
        ),
        code=(
            "import litellm\n"
            "from litellm.integrations.opentelemetry import OpenTelemetry\n"
            "litellm.callbacks = [OpenTelemetry()]  # before the agent's first span"
        ),
        note="USE_OTEL_LITELLM_REQUEST_SPAN=true gives each model call a span of its own: "
        "without it LiteLLM writes each call onto the caller's span, over the last. Made "
        'up front, OpenTelemetry() sets the tracer provider the agent\'s spans need ("otel" '
        "makes it at the first call). Content is captured unless "
        "litellm.turn_off_message_logging is True.",
        setting="leave litellm.turn_off_message_logging False (its default)",
        calls="set USE_OTEL_LITELLM_REQUEST_SPAN=true and leave "
        "litellm.turn_off_message_logging False: without a span of its own, each model "
        "call is written onto the caller's span, over the last one",
        docs="https://docs.litellm.ai/docs/observability/opentelemetry_integration",
        tried="litellm 1.110.2",
        variants=(
            "litellm-otel-callback",
            "litellm-otel-callback-latest",
            "litellm-otel-callback-no-content",
            "litellm-otel-callback-request-span",
        ),
    ),
    Instrumentation(
        name="Google Gen AI SDK",
        via="OpenTelemetry's GenAI instrumentation",
        packages="google-genai opentelemetry-instrumentation-google-genai==1.3b0 "
        f"opentelemetry-util-genai==1.3b0 {SDK_PACKAGES}",
        scopes=("opentelemetry.instrumentation.google_genai",),
        settings=("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_AND_EVENT",),
        code=(
            "from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor\n"
            "GoogleGenAiSdkInstrumentor().instrument()"
        ),
        note="Content only with the setting (SPAN_ONLY or EVENT_ONLY too). Its call ids are "
        "the call's place in the response (add_0), not ids: calls are paired with their "
        "results by name and order.",
        setting="set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_AND_EVENT",
        docs="https://pypi.org/project/opentelemetry-instrumentation-google-genai/",
        tried="google-genai 2.34.0, opentelemetry-instrumentation-google-genai 1.3b0",
        variants=(
            "google-genai-otel-afc",
            "google-genai-otel-afc-no-content",
            "google-genai-otel-manual",
            "google-genai-otel-manual-no-content",
        ),
    ),
    Instrumentation(
        name="Google Gen AI SDK",
        via="OpenLLMetry",
        packages=f"google-genai opentelemetry-instrumentation-google-generativeai {SDK_PACKAGES}",
        scopes=("opentelemetry.instrumentation.google_generativeai",),
        settings=("TRACELOOP_TRACE_CONTENT=true",),
        code=(
            "from opentelemetry.instrumentation.google_generativeai import (\n"
            "    GoogleGenerativeAiInstrumentor)\n"
            "GoogleGenerativeAiInstrumentor().instrument()"
        ),
        note="Content is captured by default (true).",
        setting=TRACELOOP_CONTENT,
        docs="https://github.com/traceloop/openllmetry",
        tried="google-genai 2.34.0, opentelemetry-instrumentation-google-generativeai 0.62.4",
        variants=(
            "google-genai-openllmetry-afc",
            "google-genai-openllmetry-afc-no-content",
            "google-genai-openllmetry-manual",
            "google-genai-openllmetry-manual-no-content",
        ),
    ),
    _openinference(
        "Google Gen AI SDK",
        "openinference-instrumentation-google-genai",
        "google_genai",
        "google-genai 2.34.0, openinference-instrumentation-google-genai 1.4.14",
        (
            "google-genai-openinference-afc",
            "google-genai-openinference-afc-no-content",
            "google-genai-openinference-manual",
            "google-genai-openinference-manual-no-content",
        ),
        "from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor\n"
        "GoogleGenAIInstrumentor().instrument()",
    ),
    Instrumentation(
        name="AutoGen",
        via="its own tracing",
        packages=f"autogen-agentchat {SDK_PACKAGES}",
        scopes=("autogen-core",),
        settings=(),
        code=f"{SDK_SETUP}\n# AutoGen traces its agents and tools once a tracer provider is set",
        note="Its own spans name the tools called, with no arguments, results or messages, and "
        "no model calls: OpenInference's AutoGen instrumentation records those.",
        setting="AutoGen's own spans record no content: add openinference-instrumentation-"
        "autogen-agentchat",
        calls="AutoGen's own spans record no model calls: add "
        "openinference-instrumentation-autogen-agentchat",
        docs="https://microsoft.github.io/autogen/stable/user-guide/agentchat-user-guide/tracing.html",
        tried="autogen-agentchat 0.7.5",
        variants=("autogen-otel",),
    ),
    _openinference(
        "AutoGen",
        "openinference-instrumentation-autogen-agentchat",
        "autogen_agentchat",
        "autogen-agentchat 0.7.5, openinference-instrumentation-autogen-agentchat 0.1.22",
        ("autogen-openinference", "autogen-openinference-no-content"),
        "from openinference.instrumentation.autogen_agentchat import "
        "AutogenAgentChatInstrumentor\nAutogenAgentChatInstrumentor().instrument()",
    ),
    Instrumentation(
        name="Semantic Kernel",
        via="its own diagnostics",
        packages=f"semantic-kernel {SDK_PACKAGES}",
        scopes=("semantic_kernel",),
        settings=(
            "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS=true",
            "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true",
        ),
        code=(
            f"{SDK_SETUP}\n"
            "# the messages are log records: a LoggerProvider with the OTLP log exporter,\n"
            '# and a LoggingHandler on the "semantic_kernel" logger'
        ),
        note="The _SENSITIVE setting records messages, arguments and results; the model's "
        "messages go out as log records (/otlp/v1/logs). Its tool names carry their plugin "
        "(Tools-get_weather): the function's name is read.",
        setting="set SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true",
        docs="https://learn.microsoft.com/semantic-kernel/concepts/enterprise-readiness/observability/",
        tried="semantic-kernel 1.45.0",
        variants=("semantic-kernel", "semantic-kernel-no-content"),
    ),
    _openinference(
        "Agno",
        "openinference-instrumentation-agno",
        "agno",
        "agno 3.1.10, openinference-instrumentation-agno 1.0.15",
        ("agno-openinference", "agno-openinference-no-content"),
        "from openinference.instrumentation.agno import AgnoInstrumentor\n"
        "AgnoInstrumentor().instrument()",
    ),
    Instrumentation(
        name="Agno",
        via="OpenLLMetry",
        packages=f"agno opentelemetry-instrumentation-agno {SDK_PACKAGES}",
        scopes=("opentelemetry.instrumentation.agno",),
        settings=("TRACELOOP_TRACE_CONTENT=true",),
        code=f"{SDK_SETUP}\nfrom opentelemetry.instrumentation.agno import AgnoInstrumentor\n"
        "AgnoInstrumentor().instrument()",
        note="Content is captured by default (true). It records the agent and its tools, "
        "not the model calls: without them, which calls were made together is not known.",
        setting=TRACELOOP_CONTENT,
        calls="Agno's OpenLLMetry instrumentation records the agent and its tools, not the "
        "model calls: install opentelemetry-instrumentation-openai beside it (Traceloop.init "
        "does)",
        docs="https://github.com/traceloop/openllmetry",
        tried="agno 3.1.10, opentelemetry-instrumentation-agno 0.62.4",
        variants=("agno-openllmetry", "agno-openllmetry-no-content"),
    ),
    Instrumentation(
        name="Microsoft Agent Framework",
        via="its own instrumentation",
        packages=f"agent-framework-core agent-framework-openai {SDK_PACKAGES}",
        scopes=("agent_framework",),
        settings=("ENABLE_SENSITIVE_DATA=true",),
        code=(
            "from agent_framework.observability import configure_otel_providers\n"
            "configure_otel_providers(enable_sensitive_data=True)"
        ),
        note="Messages, arguments and results only with sensitive data on (off by default); "
        "its OTLP exporters default to gRPC, so OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf "
        "is needed.",
        setting="call configure_otel_providers(enable_sensitive_data=True), or set "
        "ENABLE_SENSITIVE_DATA=true",
        docs="https://learn.microsoft.com/agent-framework/user-guide/observability",
        tried="agent-framework-core 1.26.0, agent-framework-openai 1.17.0",
        variants=("agent-framework", "agent-framework-no-content"),
    ),
)
# Spans of no library we know: what the OpenTelemetry GenAI instrumentations ask for.
GENERIC = (
    "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, or what your "
    "instrumentation needs to record message content (docs/live-traces.md#content)"
)
GENERIC_CALLS = (
    "instrument the model client too, so that its calls are recorded "
    "(docs/live-traces.md#instrumentations)"
)


def instrumentation_of(spans: Iterable[Span]) -> Instrumentation | None:
    """The instrumentation that sent the spans: the one whose scopes they carry most (the
    longest prefix breaking ties, then the last listed: frameworks come after the libraries
    they use), or whose marker attributes they carry."""
    spans = list(spans)
    seen = {span.scope for span in spans}
    best, best_score = None, (0, 0)
    for instrumentation in INSTRUMENTATIONS:
        matched = [
            prefix for prefix in instrumentation.scopes if any(_within(s, prefix) for s in seen)
        ]
        if not matched and any(m in s.attributes for m in instrumentation.markers for s in spans):
            matched = list(instrumentation.markers)
        score = (len(matched), max(map(len, matched), default=0))
        if matched and score >= best_score:
            best, best_score = instrumentation, score
    return best


def content_setting(found: Instrumentation | None) -> str:
    """What records message content, for the instrumentation that sent a trace."""
    return found.setting if found is not None else GENERIC


def calls_setting(found: Instrumentation | None) -> str:
    """What records the model calls, for an instrumentation whose spans hold none."""
    return found.calls if found is not None and found.calls else GENERIC_CALLS


def _within(scope: str, prefix: str) -> bool:
    if prefix.endswith("."):
        return scope.startswith(prefix)
    return scope == prefix or scope.startswith(f"{prefix}.")
