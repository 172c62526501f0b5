"""Live traces (docs/live-traces.md#throughput): how fast ``/otlp/v1/traces`` accepts spans,
and how soon after a trace's last span its run is scored, with 1 and with 2 workers.

On the production-like stack (bench/stack.py: gunicorn with 2 processes of 4 threads,
``--workers`` Celery workers, PostgreSQL, Redis database 11), each worker count on a fresh
database, one after the other in the same run. The traces are the openai-v2 weather agent's
own spans (tests/fixtures/otel/otlp.jsonl, five spans each, every trace its own id), sent as
protobuf exports of up to 512 spans (the SDK's batch size):

1. **burst**: ``--burst`` traces sent by ``--clients`` threads as fast as they are answered;
   printed: spans accepted per second, and how long after the last export was answered the
   last run was scored (target: 2,000 traces within 8 s, with 2 workers, grace 2 s);
2. **steady**: ``--rate`` traces a second offered for ``--seconds`` (each export sent at its
   time, by as many threads as it takes); printed: the rate achieved, the cores each process
   used while the traces were sent (the web server's, the workers', PostgreSQL's), the delay
   from each trace's last span to its result, median, p95 and max (target: 1,000 traces/s
   for 60 s, p95 within the grace period + 5 s), and each process's CPU a trace;
3. **paced**: ``--paced`` traces one at a time, half a second apart, as an idle agent's.

Each scenario checks that every span and every trace was kept and made a run.

    .venv/bin/python bench/otlp.py [--workers 1 2] [--burst 2000] [--rate 1000] [--seconds 60]
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
SPANS_PER_TRACE = 5
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
    "last_scored": max((scored.timestamp() for scored, _ in delays), default=0),
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


TEMPLATE = ParseDict({"resourceSpans": FIXTURE["resourceSpans"]}, ExportTraceServiceRequest())


def spans_of_trace(prefix: int, number: int, suite_id: int) -> ExportTraceServiceRequest:
    """The fixture's spans as trace ``number`` (its id starts with ``prefix``)."""
    request = ExportTraceServiceRequest()
    request.CopyFrom(TEMPLATE)
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


def send_all(port: int, token: str, bodies: list[tuple[bytes, int]], clients: int, at=None):
    """Send every body, ``clients`` at a time; with ``at``, body i not before ``at[i]``
    (``time.perf_counter()``). Returns the seconds from the first to the last answer."""
    pending = list(reversed(range(len(bodies))))
    lock = threading.Lock()
    failures = []

    def client():
        sender = Sender(port, token)
        while True:
            with lock:
                if not pending:
                    return
                i = pending.pop()
            if at is not None:
                time.sleep(max(0.0, at[i] - time.perf_counter()))
            try:
                sender.send(bodies[i][0])
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
        f" ({len(ordered):,} traces)"
    )


def check_kept(env: dict, prefix: str, traces: int, spans: int) -> dict:
    """The scenario's counts; stops the benchmark if anything was lost."""
    found = counts(env, prefix)
    if (found["spans"], found["traces"], found["runs"]) != (spans, traces, traces):
        raise SystemExit(
            f"lost: kept {found['spans']:,} of {spans:,} spans, {found['traces']:,} of "
            f"{traces:,} traces, {found['runs']:,} runs"
        )
    return found


def one_stack(options, workers: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = stack_environment(Path(tmp), "casebook_otlp_bench", redis_db=REDIS_DB)
        env["CASEBOOK_TRACE_GRACE_SECONDS"] = str(options.grace)
        fresh_database(env)
        ids = json.loads(run_script(env, SETUP).strip().splitlines()[-1])
        port = free_port()
        with Stack(env, port, workers=workers, tmp=Path(tmp), web_workers=2, threads=4) as stack:
            say(f"\n== {workers} worker{'s' * (workers > 1)}, grace {options.grace:g} s ==")
            if options.burst:
                burst(env, port, ids, options)
            if options.rate and options.seconds:
                steady(env, port, ids, options, stack)
            if options.paced:
                paced(env, port, ids, options)
            memory = stack.peak_memory()
        say("peak memory: " + ", ".join(f"{name} {mb:.0f} MB" for name, mb in memory.items()))


def burst(env: dict, port: int, ids: dict, options) -> None:
    bodies = exports(1, options.burst, ids["suite"])
    sent = sum(count for _, count in bodies)
    elapsed = send_all(port, ids["token"], bodies, options.clients)
    last_answer = time.time()
    say(
        f"burst: accepted {sent:,} spans ({options.burst:,} traces) in {len(bodies)} exports "
        f"from {options.clients} clients in {elapsed:.2f} s: {sent / elapsed:,.0f} spans/s"
    )
    wait_scored(env, "00000001", options.burst)
    found = check_kept(env, "00000001", options.burst, sent)
    say(
        f"burst: every run scored {found['last_scored'] - last_answer:.1f} s after the last "
        f"export was answered; last span to result: {summary(found['delays'])}"
    )


def steady(env: dict, port: int, ids: dict, options, stack: Stack) -> None:
    traces = options.rate * options.seconds
    bodies = exports(2, traces, ids["suite"])
    per_body = traces / len(bodies)
    started = time.perf_counter() + 0.5
    at = [started + i * per_body / options.rate for i in range(len(bodies))]
    sent = sum(count for _, count in bodies)
    before = stack.cpu_seconds()
    elapsed = send_all(port, ids["token"], bodies, options.clients * 4, at=at)
    while_sent = used_since(before, stack.cpu_seconds())
    say(
        f"steady: offered {options.rate:,} traces/s for {options.seconds} s; sent "
        f"{traces:,} traces in {elapsed:.1f} s ({traces / elapsed:,.0f} traces/s)"
    )
    # How the two cores were shared while the traces came: what is left of them for the
    # workers once the web server has accepted the spans.
    say(
        "steady: cores used while sent: "
        + ", ".join(f"{name} {seconds / elapsed:.2f}" for name, seconds in while_sent.items())
    )
    wait_scored(env, "00000002", traces)
    total = used_since(before, stack.cpu_seconds())
    found = check_kept(env, "00000002", traces, sent)
    say(f"steady: last span to result: {summary(found['delays'])}")
    say(
        "steady: CPU a trace, to the last result: "
        + ", ".join(f"{name} {seconds / traces * 1000:.2f} ms" for name, seconds in total.items())
    )


def used_since(before: dict[str, float], now: dict[str, float]) -> dict[str, float]:
    """CPU seconds each process used between two readings of ``Stack.cpu_seconds``."""
    return {name: seconds - before.get(name, 0.0) for name, seconds in now.items()}


def paced(env: dict, port: int, ids: dict, options) -> None:
    sender = Sender(port, ids["token"])
    for number in range(options.paced):
        sender.send(spans_of_trace(3, number, ids["suite"]).SerializeToString())
        time.sleep(0.5)
    wait_scored(env, "00000003", options.paced)
    found = check_kept(env, "00000003", options.paced, options.paced * SPANS_PER_TRACE)
    say(f"paced: last span to result: {summary(found['delays'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--burst", type=int, default=2000)
    parser.add_argument("--rate", type=int, default=1000, help="traces a second, steady")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--paced", type=int, default=20)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--grace", type=float, default=2.0)
    options = parser.parse_args()
    for workers in options.workers:
        one_stack(options, workers)


def say(text: str) -> None:
    print(text, flush=True)


def wait_scored(env: dict, prefix: str, expected: int) -> int:
    output = run_script(env, WAIT_SCORED, PREFIX=prefix, EXPECTED=expected, TIMEOUT=1200)
    return int(output.strip().splitlines()[-1])


def counts(env: dict, prefix: str) -> dict:
    return json.loads(run_script(env, COUNTS, PREFIX=prefix).strip().splitlines()[-1])


if __name__ == "__main__":
    main()
