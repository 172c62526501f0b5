"""The exports that instrumentations sent, as captured in tests/fixtures/otlp/ (each
variant's directory: ``NNN-traces.pb``, ``NNN-logs.json.gz``, ..., and ``expected.json``,
what the producer was told to do; tests/fixtures/producers/otlp_capture.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

OTLP = Path(__file__).parent.parent / "fixtures" / "otlp"
# The cases every producer was told to run (tests/fixtures/producers/fake_server.py): two
# parallel calls, and a call that needs the result of the one before.
PRODUCER_SUITE = {
    "schema": "casebook.suite/1",
    "name": "producers",
    "cases": [
        {
            "key": "weather",
            "prompt": "Weather in Paris and Tokyo?",
            "expected_calls": [
                {"name": "get_weather", "required_args": {"city": "Paris"}},
                {"name": "get_weather", "required_args": {"city": "Tokyo"}},
            ],
            "expectations": [{"type": "final_text_contains", "text": "Paris is 18°C"}],
        },
        {
            "key": "add",
            "prompt": "What is (2+3)+5?",
            "expected_calls": [
                {"name": "add", "required_args": {"a": 2, "b": 3}, "ordered": True},
                {
                    "name": "add",
                    "required_args": {"a": 5, "b": 5},
                    "ordered": True,
                    "depends_on_result": True,
                },
            ],
            "expectations": [{"type": "final_text_contains", "text": "The answer is 10."}],
        },
    ],
}

VARIANTS = sorted(path.name for path in OTLP.iterdir() if (path / "expected.json").exists())
# What an instrumentation leaves out whatever its content setting (each variant's
# expected.json notes say so): no model call recorded, so no batches (agno's and CrewAI's
# instrumentations, AutoGen's own spans, LlamaIndex's OpenLLMetry instrumentation alone), or
# neither model nor tool calls (CrewAI's OpenLLMetry instrumentation alone), or each call
# written over the last on the caller's span (LiteLLM's callback without its request span).
# The run must say so.
UNRECORDED = {
    "agno-openllmetry": {"batches"},
    "agno-openllmetry-no-content": {"batches"},
    "autogen-otel": {"batches"},
    "crewai-openinference": {"batches"},
    "crewai-openinference-no-content": {"batches"},
    "crewai-openllmetry": {"calls"},
    "crewai-openllmetry-no-content": {"calls"},
    "litellm-otel-callback-latest": {"calls", "final_text"},
    "llamaindex-openllmetry": {"batches"},
    "llamaindex-openllmetry-no-content": {"batches"},
}
# What an instrumentation sends even with content off: CrewAI's OpenLLMetry instrumentation
# keeps the crew's result (crewai.crew.result). The run must hold it, as it was.
RECORDED_WITHOUT_CONTENT = {
    "crewai-openllmetry-no-content": {"final_text"},
    "crewai-traceloop-no-content": {"final_text"},
}


def check_run(variant: str, told: dict, run, verdict: str) -> None:
    """``run`` (a loaded Run) and its ``verdict`` are what the producer was told to make
    (``told``, a run of the variant's expected.json), as far as the variant recorded it:
    what it did not record said (``not_captured``), never the agent's fault."""
    content = expected(variant)["content_captured"]
    unrecorded = UNRECORDED.get(variant, set())
    want = [[(c["name"], c["arguments"]) for c in batch] for batch in told["batches"]]
    got = [[(c.name, c.arguments) for c in batch] for batch in run.batches]
    if "batches" in unrecorded:  # the calls, in the order they ran, batched as they may be
        want, got = [[c for batch in want for c in batch]], [[c for batch in got for c in batch]]
    if "calls" in unrecorded:
        want = []
    if not content:
        want = [[(name, None) for name, _ in batch] for batch in want]
        got = [[(name, None) for name, _ in batch] for batch in got]
    assert got in (want, []) if not content else got == want
    if content:
        text_recorded = "final_text" not in unrecorded
    else:
        text_recorded = "final_text" in RECORDED_WITHOUT_CONTENT.get(variant, ())
    if text_recorded:
        assert run.final_text.strip() == told["final_text"]
    else:
        assert run.final_text in (None, "")
    if content:
        assert set(run.not_captured) == unrecorded
        judged = unrecorded - ({"batches"} if len(told["batches"]) == 1 else set())
        assert verdict == ("error" if judged else "pass")
    else:
        assert unrecorded <= set(run.not_captured)
        assert run.not_captured
        assert verdict == "error"


def expected(variant: str) -> dict:
    return json.loads((OTLP / variant / "expected.json").read_text(encoding="utf-8"))


def requests(variant: str) -> list[tuple[str, bytes, str, bool]]:
    """Each export as sent: (signal, body, content type, gzip-compressed), in order."""
    sent = []
    for path in sorted((OTLP / variant).glob("[0-9][0-9][0-9]-*")):
        signal, _, suffix = path.name[4:].partition(".")
        content_type = "application/json" if suffix.startswith("json") else "application/x-protobuf"
        sent.append((signal, path.read_bytes(), content_type, suffix.endswith("gz")))
    return sent


def as_otlp_json(signal: str, body: bytes, content_type: str, compressed: bool) -> dict:
    """An export as OTLP/JSON, as the Collector's file exporter writes a line."""
    body = gzip.decompress(body) if compressed else body
    if content_type == "application/json":
        return json.loads(body)
    message = ExportTraceServiceRequest() if signal == "traces" else ExportLogsServiceRequest()
    message.ParseFromString(body)
    return MessageToDict(message)


def collector_lines(variant: str) -> list[dict]:
    """The variant's exports as a Collector's file exporter writes them: a line each."""
    return [as_otlp_json(*request) for request in requests(variant)]
