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
# The weather case as every producer was told to run it.
WEATHER_SUITE = {
    "schema": "casebook.suite/1",
    "name": "weather",
    "cases": [
        {
            "key": "weather",
            "prompt": "Weather in Paris and Tokyo?",
            "expected_calls": [
                {"name": "get_weather", "required_args": {"city": "Paris"}},
                {"name": "get_weather", "required_args": {"city": "Tokyo"}},
            ],
            "expectations": [{"type": "final_text_contains", "text": "Paris is 18°C"}],
        }
    ],
}

VARIANTS = sorted(path.name for path in OTLP.iterdir() if (path / "expected.json").exists())


def check_run(told: dict, run, verdict: str) -> None:
    """``run`` (a loaded Run) and its ``verdict`` are what the producer was told to make."""
    want = [[(c["name"], c["arguments"]) for c in batch] for batch in told["batches"]]
    got = [[(c.name, c.arguments) for c in batch] for batch in run.batches]
    if told_content(told):
        assert got == want
        assert run.final_text.strip() == told["final_text"]
        assert not run.not_captured
        assert verdict == "pass"
    else:  # the calls' names at most; what was not captured said, and not the agent's fault
        assert [[(name, None) for name, _ in batch] for batch in got] in (
            [[(name, None) for name, _ in batch] for batch in want],
            [],
        )
        assert run.not_captured
        assert run.final_text in (None, "")
        assert verdict == "error"


def told_content(told: dict) -> bool:
    return told["content_captured"]


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
