"""Shared by the tests of ``/otlp/v1/traces`` (tests/live, tests/ingest/pipeline/test_otlp.py):
exports made from the spans the real SDK wrote (tests/fixtures/otel/otlp.jsonl), sent and
their answers read, the agent process that exports its own
(tests/fixtures/producers/otlp_agent.py), and the reports the same spans get when uploaded
as a file."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from django.test import TestCase
from google.protobuf.json_format import MessageToDict, ParseDict
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

from scoring.ingest.pipeline import create_submission
from scoring.live import assembly
from scoring.models import Result, Submission
from tests.support.producers import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "tests/fixtures/producers/otlp_agent.py"
ENDPOINT = "/otlp/v1/traces"
PROTOBUF = "application/x-protobuf"
# One run of the weather agent, as the SDK exported it: an agent span, two chat spans and
# two tool spans (the case key "weather", content captured).
SPANS_LINE = json.loads((FIXTURES / "otel/otlp.jsonl").read_text())


def export(suite_id=None, *, case: str | None = "weather", label="", trace: int = 1, spans=None):
    """An ExportTraceServiceRequest of the fixture's spans (or those named by their index
    in it), routed to ``suite_id`` (None: no ``casebook.suite``), its root naming ``case``,
    as trace number ``trace`` (each number its own trace id)."""
    request = ParseDict({"resourceSpans": SPANS_LINE["resourceSpans"]}, ExportTraceServiceRequest())
    position = 0  # of the span in the fixture, across its scopes
    for resource_spans in request.resource_spans:
        attributes = resource_spans.resource.attributes
        if suite_id is not None:
            attributes.append(string_attribute("casebook.suite", str(suite_id)))
        if label:
            attributes.append(string_attribute("casebook.label", label))
        for scope in resource_spans.scope_spans:
            kept = []
            for span in scope.spans:
                if spans is None or position in spans:
                    kept.append(span)
                position += 1
            del scope.spans[:]
            scope.spans.extend(kept)
            for span in scope.spans:
                span.trace_id = trace.to_bytes(16, "big")
                if case is not None and not span.parent_span_id:
                    span.attributes.append(string_attribute("casebook.case", case))
    return request


def string_attribute(key: str, value: str) -> KeyValue:
    item = KeyValue(key=key)
    item.value.string_value = value
    return item


FIXTURE_SPANS = [
    span
    for resource in SPANS_LINE["resourceSpans"]
    for scope in resource["scopeSpans"]
    for span in scope["spans"]
]
ROOT_SPAN = next(k for k, span in enumerate(FIXTURE_SPANS) if not span.get("parentSpanId"))
TOKYO_SPAN = next(
    k
    for k, span in enumerate(FIXTURE_SPANS)
    if span.get("status", {}).get("code") == "STATUS_CODE_ERROR"
)


def post(client, request: ExportTraceServiceRequest, *, as_json=False, hex_ids=True, **headers):
    body, content_type = body_of(request, as_json=as_json, hex_ids=hex_ids)
    if headers.pop("gzipped", False):
        body = gzip.compress(body)
        headers["HTTP_CONTENT_ENCODING"] = "gzip"
    return client.post(ENDPOINT, data=body, content_type=content_type, **headers)


def body_of(
    request: ExportTraceServiceRequest, *, as_json=False, hex_ids=True
) -> tuple[bytes, str]:
    """The body of an export, and its content type: protobuf, or OTLP/JSON (its ids in hex
    as OTLP/JSON writes them, or in base64 as protobuf's JSON mapping does)."""
    if not as_json:
        return request.SerializeToString(), PROTOBUF
    document = MessageToDict(request)
    if hex_ids:
        for resource in document.get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(document).encode(), "application/json"


def answer_of(response) -> ExportTraceServiceResponse:
    if response["Content-Type"] == "application/json":
        return ParseDict(json.loads(response.content), ExportTraceServiceResponse())
    assert response["Content-Type"] == PROTOBUF
    return ExportTraceServiceResponse.FromString(response.content)


def status_of(response) -> Status:
    if response["Content-Type"] == "application/json":
        return ParseDict(json.loads(response.content), Status())
    return Status.FromString(response.content)


def assemble_due() -> int:
    """Assemble what is due, and run the scoring it enqueues (in this process)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return assembly.assemble_due()


def uploaded_reports(suite, user, lines: Iterable[dict]) -> list[dict]:
    """The reports of ``lines`` uploaded as a run file, in file order (run in this process)."""
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    with TestCase.captureOnCommitCallbacks(execute=True):
        submission = create_submission(suite, user, io.BytesIO(body))
    submission = Submission.objects.get(pk=submission.pk)
    results = Result.objects.filter(submission=submission).order_by("run__seq")
    return [result.report for result in results]


def live_reports(submission: Submission) -> list[dict]:
    results = Result.objects.filter(submission=submission).order_by("run__seq")
    return [result.report for result in results]


def run_agent(
    base_url: str, token: str, suite_id: int, cases: list[str], *, label="", options=()
) -> subprocess.CompletedProcess:
    """The instrumented agent in a process of its own, configured by environment variables
    only, as a team would configure theirs."""
    resource = f"casebook.suite={suite_id}" + (f",casebook.label={label}" if label else "")
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{base_url}{ENDPOINT}",
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Token {token}",
        "OTEL_RESOURCE_ATTRIBUTES": resource,
        "OTEL_BSP_SCHEDULE_DELAY": "200",
    }
    command = [sys.executable, str(AGENT), *options, *cases]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Failed to export" not in done.stderr, done.stderr
    assert "export failed" not in done.stderr, done.stderr
    return done
