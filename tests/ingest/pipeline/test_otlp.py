"""Live traces with a real broker and worker: an instrumented agent exports its spans to a live
Casebook while no worker is up, or while the broker is down. Every span is kept when it is
accepted; the runs are assembled and scored once a worker (or the broker) is back, with the
verdicts the same spans get when uploaded as a file."""

from __future__ import annotations

import json
import time

import pytest
from rest_framework.authtoken.models import Token

from scoring.live import assembly
from scoring.models import Submission, Trace
from tests.support.otlp_data import live_reports, run_agent
from tests.support.producers import SUITE
from tests.support.workers import TIMEOUT, wait_for

from .conftest import status_of

pytestmark = pytest.mark.django_db(transaction=True)

CASES = ["weather", "weather-answer", "weather"]
GRACE = 1


@pytest.fixture
def producers_suite(team, user):
    from cases import services

    return services.create_suite(team, SUITE, user)


@pytest.fixture
def short_grace(settings, monkeypatch):
    settings.CASEBOOK_TRACE_GRACE_SECONDS = GRACE
    monkeypatch.setenv("CASEBOOK_TRACE_GRACE_SECONDS", str(GRACE))  # the workers'


def scored(submission_runs: int):
    def check():
        live = Submission.objects.filter(live_day__isnull=False).first()
        done = live is not None and live.stored_runs == submission_runs
        return live if done and live.scored == live.total == submission_runs else None

    return check


def expected_reports(api, suite, spans_file, workers) -> list[dict]:
    """The reports of the agent's spans uploaded as a file, scored by the workers."""
    response = api.post(
        f"/api/suites/{suite.pk}/submissions/",
        data=spans_file.read_bytes(),
        content_type="application/x-ndjson",
    )
    assert response.status_code == 202, response.content
    pk = response.json()["id"]
    wait_for(lambda: status_of(api, pk)["status"] == "done", TIMEOUT, "the upload", workers)
    return live_reports(Submission.objects.get(pk=pk))


def test_spans_sent_while_no_worker_is_up_are_kept_and_scored_when_one_starts(
    api, user, producers_suite, pipeline, live_server, short_grace, tmp_path
):
    _, workers = pipeline
    token = Token.objects.get(user=user).key
    spans_file = tmp_path / "spans.jsonl"
    run_agent(
        live_server.url, token, producers_suite.pk, CASES, options=["--spans-file", str(spans_file)]
    )
    time.sleep(GRACE + 1)  # past the grace period: nothing can assemble them yet
    assert Trace.objects.filter(pending=True, run=None).count() == len(CASES)

    workers.start(concurrency=1)  # the queued assembly tasks are delivered to it
    live = wait_for(scored(len(CASES)), TIMEOUT, "the traces to be scored", workers)
    runs = live.runs.order_by("seq").values_list("case_key", "trial")
    assert list(runs) == [("weather", 0), ("weather-answer", 0), ("weather", 1)]
    assert (live.passed, live.failed, live.status) == (2, 1, "done")
    assert live_reports(live) == expected_reports(api, producers_suite, spans_file, workers)


def test_spans_sent_while_the_broker_is_down_are_kept_and_the_sweep_assembles_them(
    api, user, producers_suite, pipeline, live_server, short_grace, tmp_path
):
    broker, workers = pipeline
    token = Token.objects.get(user=user).key
    broker.stop()
    run_agent(live_server.url, token, producers_suite.pk, CASES[:2])  # answered 200 all the same
    assert Trace.objects.filter(pending=True).count() == 2

    broker.start()
    workers.start(concurrency=1)
    time.sleep(GRACE)
    assert assembly.assemble_due() == 2  # what Celery beat's sweep does every few seconds
    live = wait_for(scored(2), TIMEOUT, "the traces to be scored", workers)
    assert (live.passed, live.failed) == (1, 1)
    report = json.dumps(live_reports(live))
    assert '"verdict": "pass"' in report
