"""What each instrumentation sends, sent to a live Casebook exactly as it was sent (the
captured requests of tests/fixtures/otlp/: protobuf or OTLP/JSON, traces and logs, in
their order; OTLP/JSON from Node chunked, with no Content-Length, as Node's exporters send
it), with a suite token and no routing attributes: each trace becomes its run once, with
the calls, arguments and final text the producer was told to make, and the verdict a file of
the same spans gets (docs/live-traces.md#what-is-read)."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest

from cases import services, tokens
from scoring.live import assembly
from scoring.matcher import load_run
from scoring.models import Result, Run
from tests.support.otlp_fixtures import (
    PRODUCER_SUITE,
    VARIANTS,
    check_run,
    expected,
    requests,
)

# A real HTTP server: a pipeline test.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pipeline]


@pytest.fixture
def suite_key(team, admin, editor):
    suite = services.create_suite(team, PRODUCER_SUITE, admin)
    return tokens.create(editor, "agent", suite=suite, label="producers")[1]


def send(url: str, key: str, signal: str, body: bytes, content_type: str, gzipped: bool):
    """One export, as the producer sent it: chunked when it was OTLP/JSON (Node)."""
    address = urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    headers = {"Content-Type": content_type, "Authorization": f"Token {key}"}
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    chunked = content_type == "application/json"
    if chunked:
        headers["Transfer-Encoding"] = "chunked"
        body = iter([body[: len(body) // 2], body[len(body) // 2 :]])
    connection.request("POST", f"/otlp/v1/{signal}", body, headers, encode_chunked=chunked)
    answer = connection.getresponse()
    text = answer.read()
    connection.close()
    return answer.status, text


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_instrumentation_sent_as_it_sends_gives_its_runs(
    variant, live_server, suite_key, assembled_when_told
):
    for request in requests(variant):
        status, answer = send(live_server.url, suite_key, *request)
        assert status == 200, answer
    assert assembly.assemble_due() == len(expected(variant)["runs"])
    told = expected(variant)
    stored = list(Run.objects.order_by("seq"))
    assert [run.case_key for run in stored] == [run["case"] for run in told["runs"]]
    for run, want in zip(stored, told["runs"], strict=True):
        verdict = Result.objects.get(run=run).verdict
        check_run(variant, want, load_run(run.document), verdict)
