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
VARIANTS = sorted(path.name for path in OTLP.iterdir() if (path / "expected.json").exists())


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
