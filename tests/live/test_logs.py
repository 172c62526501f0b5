"""``POST /otlp/v1/logs`` (docs/live-traces.md#log-records): log records join the trace of
their ``traceId`` as events of the span of their ``spanId``, whichever arrives first; they
are routed, authenticated, capped and answered as spans are."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

from cases import services, tokens
from scoring.live import assembly
from scoring.models import Result, Run, TraceSpan
from tests.support.otlp_fixtures import PRODUCER_SUITE, requests

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("assembled_when_told")]
PROTOBUF = "application/x-protobuf"


@pytest.fixture
def suite_key(team, admin, editor):
    suite = services.create_suite(team, PRODUCER_SUITE, admin)
    return tokens.create(editor, "agent", suite=suite)[1]


def sent(variant: str, signal: str) -> list[bytes]:
    return [body for kind, body, _, _ in requests(variant) if kind == signal]


def post(client, key: str, signal: str, body: bytes, content_type: str = PROTOBUF):
    return client.post(
        f"/otlp/v1/{signal}", body, content_type=content_type, HTTP_AUTHORIZATION=f"Token {key}"
    )


def verdict() -> str:
    return Result.objects.get(run=Run.objects.get()).verdict


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "Token"])
def test_the_receivers_take_the_token_as_an_exporter_is_usually_given_it(client, suite_key, scheme):
    """``OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer KEY"`` as well as ``Token KEY``."""
    (logs,) = sent("openai-v2-events", "logs")
    authorization = f"{scheme} {suite_key}"
    response = client.post(
        "/otlp/v1/logs", logs, content_type=PROTOBUF, HTTP_AUTHORIZATION=authorization
    )
    assert response.status_code == 200
    bad = client.post(
        "/otlp/v1/logs", logs, content_type=PROTOBUF, HTTP_AUTHORIZATION=f"{scheme} no"
    )
    assert bad.status_code == 401


def test_the_rest_api_takes_no_bearer_token(client, editor):
    key = tokens.create(editor, "scripts")[1]
    assert client.get("/api/suites/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    assert client.get("/api/suites/", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 401


@pytest.mark.django_db(transaction=True)  # scored on commit
def test_log_records_after_the_run_was_made_make_it_again_with_their_content(client, suite_key):
    """openai-v2 2.3's default: the spans hold no content, the log records all of it."""
    (spans,) = sent("openai-v2-events", "traces")
    (logs,) = sent("openai-v2-events", "logs")
    assert post(client, suite_key, "traces", spans).status_code == 200
    assert assembly.assemble_due() == 1
    assert verdict() == "error"  # the arguments and text were not captured: not a fail
    response = post(client, suite_key, "logs", logs)
    assert response.status_code == 200
    answer = ExportLogsServiceResponse.FromString(response.content)
    assert not answer.HasField("partial_success")
    assert assembly.assemble_due() == 1
    assert verdict() == "pass"
    assert Run.objects.get().document["final_text"].startswith("Paris is 18°C")


def test_a_log_record_sent_twice_is_kept_once(client, suite_key):
    (logs,) = sent("openai-v2-events", "logs")
    post(client, suite_key, "logs", logs)
    post(client, suite_key, "logs", logs)
    records = ExportLogsServiceRequest.FromString(logs).resource_logs[0].scope_logs[0].log_records
    assert TraceSpan.objects.filter(kind=TraceSpan.Kind.LOG).count() == len(records)


def test_a_log_record_without_a_trace_id_is_rejected_saying_why(client, suite_key):
    export = ExportLogsServiceRequest.FromString(sent("openai-v2-events", "logs")[0])
    records = export.resource_logs[0].scope_logs[0].log_records
    records[0].trace_id = b""
    response = post(client, suite_key, "logs", export.SerializeToString())
    assert response.status_code == 200
    partial = ExportLogsServiceResponse.FromString(response.content).partial_success
    assert partial.rejected_log_records == 1
    assert partial.error_message == (
        "a log record without a valid traceId: it joins no trace (1 log records)"
    )


def test_logs_need_a_token_as_traces_do(client):
    response = client.post("/otlp/v1/logs", b"", content_type=PROTOBUF)
    assert response.status_code == 401


def test_a_logs_body_that_is_not_an_export_is_400(client, suite_key):
    response = post(client, suite_key, "logs", b"{}x", "application/json")
    assert response.status_code == 400


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("chunks", "status", "message"),
    [
        (b"zz\r\n", 400, "the chunked body's framing is broken"),
        (b"ffff\r\n" + b"x" * 70000, 413, "the body is over 1,000 bytes, the limit"),
    ],
)
def test_chunked_bodies_are_read_with_their_framing_bounded(
    live_server, suite_key, settings, chunks, status, message
):
    settings.CASEBOOK_OTLP_MAX_BYTES = 1000
    address = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    headers = {
        "Content-Type": "application/json",
        "Authorization": f"Token {suite_key}",
        "Transfer-Encoding": "chunked",
    }
    connection.putrequest("POST", "/otlp/v1/logs")
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders()
    connection.send(chunks)
    answer = connection.getresponse()
    assert (answer.status, answer.read().decode()) == (
        status,
        f'{{"code": {3 if status == 400 else 8}, "message": "{message}"}}',
    )
    connection.close()


@pytest.mark.django_db(transaction=True)  # scored on commit
def test_the_run_page_says_what_was_not_captured(client, suite_key, editor):
    (spans,) = sent("openai-v2-events", "traces")
    post(client, suite_key, "traces", spans)
    assembly.assemble_due()
    client.force_login(editor)
    page = client.get(Run.objects.get().get_absolute_url()).content.decode()
    assert page.count("arguments not captured by the instrumentation") == 2
    assert "could not be parsed" not in page
    assert "not judged: tool arguments were not captured: set" in page
    assert "The final text was not captured: set" in page
