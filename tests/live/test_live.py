"""An agent process instrumented with OpenTelemetry (the openai-v2 instrumentation, the SDK's
own OTLP/HTTP exporter) sends its traces to a live Casebook, configured by environment
variables only, and gets its runs scored with the verdicts its spans get as a file.

This is the embedded default (no broker): the web process's own timer thread assembles the
traces once the grace period is over, and scores them in-process. The same with a real
broker and worker, the worker down while the spans arrive: tests/ingest/pipeline/test_otlp.py."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.db import OperationalError
from rest_framework.authtoken.models import Token

from scoring.live import assembly
from scoring.models import Submission, Trace
from tests.support.otlp_data import live_reports, run_agent, uploaded_reports

# A real agent process sending to a live server: a pipeline test.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pipeline]

CASES = ["weather", "weather-answer", "-"]  # the last names no case


@pytest.fixture
def token(editor):
    return Token.objects.create(user=editor).key


@pytest.fixture(autouse=True)
def short_grace(settings):
    settings.CASEBOOK_TRACE_GRACE_SECONDS = 1
    yield
    timer = assembly.embedded_timer.timer
    if timer is not None:  # none should be left waiting on a database that is going away
        timer.cancel()


def embedded_timer_busy() -> bool:
    """Whether the server's assembly timer waits or works (scoring, then summarizing)."""
    return any(isinstance(t, threading.Timer) and t.is_alive() for t in threading.enumerate())


def scored_live_submission(runs: int, timeout: float = 30) -> Submission:
    """The live submission once its runs are scored and the timer is done with it: SQLite's
    in-memory test database is shared by the live server's threads, and refuses (rather than
    waits for) a read or write of this thread while the timer writes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            live = Submission.objects.filter(live_day__isnull=False).first()
        except OperationalError:
            live = None  # refused, not waited for: see above
        scored = live is not None and live.stored_runs == runs and live.scored == live.total == 2
        if scored and not embedded_timer_busy():
            return live
        time.sleep(0.2)
    raise AssertionError(f"no scored live submission: {list(Submission.objects.values())}")


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--encoding", "json", "--delivery", "split"],
    ],
    ids=["protobuf-batches", "json-one-span-per-export-out-of-order"],
)
def test_an_agent_configured_by_environment_gets_its_runs_scored_as_its_spans_file_would_be(
    live_server, suite, editor, token, tmp_path, options
):
    spans_file = tmp_path / "spans.jsonl"
    run_agent(
        live_server.url,
        token,
        suite.pk,
        CASES,
        label="gpt-4o",
        options=[*options, "--spans-file", str(spans_file)],
    )
    assert Trace.objects.count() == len(CASES)  # stored before the exporter was answered
    live = scored_live_submission(len(CASES))
    assert (live.label, live.passed, live.failed) == ("gpt-4o", 1, 1)
    # In the order the traces were complete (split: the last trace's spans came first).
    runs = live.runs.order_by("case_key").values_list("case_key", "trial")
    assert list(runs) == [("", 0), ("weather", 0), ("weather-answer", 0)]
    lines = [json.loads(line) for line in spans_file.read_text().splitlines()]
    by_case = sorted(live_reports(live), key=lambda report: report["case"])
    assert by_case == uploaded_reports(suite, editor, lines[:2])
