"""Live traces (docs/live-traces.md): how many spans ``/otlp/v1/traces`` accepts per second,
and how long after a trace's last span its result is there.

On the production-like stack (bench/stack.py: gunicorn, one Celery worker, PostgreSQL,
Redis database 11): ``--traces`` traces of the weather agent (the SDK's own spans from
tests/fixtures/otel/otlp.jsonl, five spans each, every trace its own id) are sent as
protobuf exports of up to 512 spans (the SDK's batch size) by ``--clients`` threads at
once, as fast as they are answered; once their runs are scored, ``--paced`` traces are sent
one at a time, half a second apart, as an agent finishing runs would.

Printed: spans accepted per second (from the first export sent to the last answered), and
whether every span and every trace was kept (the rows counted afterwards); the delay from a
trace's last span (its ``received`` time) to its result (``scored_at``), for the paced
traces (target: within 5 s of the grace period) and for the burst (where the worker works
through a backlog).

    .venv/bin/python bench/otlp.py [--traces 1000] [--clients 4] [--paced 20] [--grace 2]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.stack import ROOT, Stack, free_port, fresh_database, run_script, stack_environment

BATCH_SPANS = 512  # the SDK's BatchSpanProcessor sends at most this many at once
REDIS_DB = 11
FIXTURE = json.loads((ROOT / "tests/fixtures/otel/otlp.jsonl").read_text())

SETUP = """
from rest_framework.authtoken.models import Token
from cases import services
from cases.models import User
from tests.support.producers import SUITE
user = User.objects.create_user("bench", password="bench-password")
team = services.create_team("Bench", user)
suite = services.create_suite(team, SUITE, user)
print(json.dumps({"token": Token.objects.create(user=user).key, "suite": suite.pk}))
"""

COUNTS = """
from django.db.models import F, Max
from scoring.models import Result, Trace, TraceSpan
traces = Trace.objects.filter(trace_id__startswith=PREFIX)
delays = list(
    Result.objects.filter(run__trace__in=traces)
    .annotate(received=F("run__trace__received"))
    .values_list("scored_at", "received")
)
print(json.dumps({
    "spans": TraceSpan.objects.filter(trace__in=traces).count(),
    "traces": traces.count(),
    "runs": traces.exclude(run=None).count(),
    "delays": [(scored - received).total_seconds() for scored, received in delays],
}))
"""

WAIT_SCORED = """
import time
from scoring.models import Result, Trace
deadline = time.monotonic() + TIMEOUT
while time.monotonic() < deadline:
    if Result.objects.filter(run__trace__trace_id__startswith=PREFIX).count() >= EXPECTED:
        break
    time.sleep(0.5)
print(Result.objects.filter(run__trace__trace_id__startswith=PREFIX).count())
"""


def spans_of_trace(prefix: int, number: int, suite_id: int) -> ExportTraceServiceRequest:
    """The fixture's spans as trace ``number`` (its id starts with ``prefix``)."""
    request = ParseDict({"resourceSpans": FIXTURE["resourceSpans"]}, ExportTraceServiceRequest())
    trace_id = prefix.to_bytes(4, "big") + number.to_bytes(12, "big")
    for resource_spans in request.resource_spans:
        resource_spans.resource.attributes.append(_attribute("casebook.suite", str(suite_id)))
        resource_spans.resource.attributes.append(_attribute("casebook.label", "bench"))
        for scope in resource_spans.scope_spans:
            for span in scope.spans:
                span.trace_id = trace_id
                if not span.parent_span_id:
                    span.attributes.append(_attribute("casebook.case", "weather"))
    return request


def _attribute(key: str, value: str) -> KeyValue:
    item = KeyValue(key=key)
    item.value.string_value = value
    return item


def exports(prefix: int, traces: int, suite_id: int) -> list[tuple[bytes, int]]:
    """The traces as export bodies of at most ``BATCH_SPANS`` spans, and their span counts."""
    bodies, current, count = [], ExportTraceServiceRequest(), 0
    for number in range(traces):
        trace = spans_of_trace(prefix, number, suite_id)
        spans = sum(len(s.spans) for r in trace.resource_spans for s in r.scope_spans)
        if count + spans > BATCH_SPANS:
            bodies.append((current.SerializeToString(), count))
            current, count = ExportTraceServiceRequest(), 0
        current.resource_spans.extend(trace.resource_spans)
        count += spans
    if count:
        bodies.append((current.SerializeToString(), count))
    return bodies


class Sender:
    """Sends export bodies over one kept-alive connection; refusals stop the benchmark."""

    def __init__(self, port: int, token: str):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/x-protobuf"}

    def send(self, body: bytes) -> None:
        self.conn.request("POST", "/otlp/v1/traces", body=body, headers=self.headers)
        answer = self.conn.getresponse()
        content = answer.read()
        if answer.status != 200 or content:  # content: a partial success
            raise SystemExit(f"export refused: {answer.status} {content[:300]!r}")


def burst(port: int, token: str, bodies: list[tuple[bytes, int]], clients: int) -> float:
    """Seconds to send every body, ``clients`` at a time."""
    pending = list(reversed(bodies))
    lock = threading.Lock()
    failures = []

    def client():
        sender = Sender(port, token)
        while True:
            with lock:
                if not pending:
                    return
                body, _ = pending.pop()
            try:
                sender.send(body)
            except BaseException as exc:
                failures.append(exc)
                return

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"an export failed: {failures[0]}")
    return elapsed


def summary(delays: list[float]) -> str:
    ordered = sorted(delays)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (
        f"median {statistics.median(ordered):.2f} s, p95 {p95:.2f} s, max {ordered[-1]:.2f} s"
        f" ({len(ordered)} traces)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--paced", type=int, default=20)
    parser.add_argument("--grace", type=float, default=2.0)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        env = stack_environment(Path(tmp), "casebook_otlp_bench", redis_db=REDIS_DB)
        env["CASEBOOK_TRACE_GRACE_SECONDS"] = str(options.grace)
        fresh_database(env)
        ids = json.loads(run_script(env, SETUP).strip().splitlines()[-1])
        port = free_port()
        with Stack(env, port, workers=1, tmp=Path(tmp), web_workers=2, threads=4):
            bodies = exports(1, options.traces, ids["suite"])
            sent = sum(count for _, count in bodies)
            elapsed = burst(port, ids["token"], bodies, options.clients)
            say(
                f"accepted {sent:,} spans ({options.traces:,} traces) in {len(bodies)} exports "
                f"from {options.clients} clients in {elapsed:.2f} s: {sent / elapsed:,.0f} spans/s"
            )
            started = time.perf_counter()
            scored = wait_scored(env, "00000001", options.traces)
            say(
                f"their {scored:,} runs scored by one worker {time.perf_counter() - started:.0f} s "
                f"after the last export"
            )
            sender = Sender(port, ids["token"])
            for number in range(options.paced):
                sender.send(spans_of_trace(2, number, ids["suite"]).SerializeToString())
                time.sleep(0.5)
            wait_scored(env, "00000002", options.paced)
            burst_counts = counts(env, "00000001")
            paced_counts = counts(env, "00000002")
        lost = sent - burst_counts["spans"]
        say(
            f"kept {burst_counts['spans']:,} of {sent:,} spans ({lost} lost), "
            f"{burst_counts['traces']:,} traces, {burst_counts['runs']:,} runs"
        )
        say(
            f"last span to result, paced traces (grace {options.grace:g} s): "
            f"{summary(paced_counts['delays'])}"
        )
        say(f"last span to result, burst (a backlog of {options.traces:,}): "
            f"{summary(burst_counts['delays'])}")  # fmt: skip


def say(text: str) -> None:
    print(text, flush=True)


def wait_scored(env: dict, prefix: str, expected: int) -> int:
    output = run_script(env, WAIT_SCORED, PREFIX=prefix, EXPECTED=expected, TIMEOUT=1200)
    return int(output.strip().splitlines()[-1])


def counts(env: dict, prefix: str) -> dict:
    return json.loads(run_script(env, COUNTS, PREFIX=prefix).strip().splitlines()[-1])


if __name__ == "__main__":
    main()
