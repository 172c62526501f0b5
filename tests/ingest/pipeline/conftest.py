"""Builders for the pipeline tests (docs/pipeline.md): a team and its suites, run files, and
uploads taken through ingestion and scoring in this process (Celery's eager mode); and, for the
worker and fault tests, uploads through the API to a broker and workers of our own
(tests/support/workers.py) and the checks that nothing was lost or counted twice.

Two suites: the demo suite, and one made from τ-bench's airline tasks (tests/support/tau_bench.py).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable

import pytest
from django.db.models import Count
from django.test import TestCase
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases import services
from cases.models import Membership, Role, Team
from evalsite.celery import app as celery_app
from scoring.ingest.conductor import chunk_indexes
from scoring.ingest.pipeline import create_submission, resume_stalled
from scoring.matcher import load_suite
from scoring.models import PredicateResult, Result, Run, ScoredChunk, Status, Submission
from tests.support import tau_bench
from tests.support.workers import (
    CHUNK_RUNS,
    ROOT,
    STALL_SECONDS,
    TIMEOUT,
    Broker,
    Workers,
    skip_without_database_server,
    use_broker,
    wait_for,
)

REPEATS = 10  # the 200 τ-bench runs, ten times over: 2,000 runs, 40 chunks
DEMO = json.loads((ROOT / "cases/demo/assistant.suite.json").read_text())
DEMO_RUNS = (ROOT / "cases/demo/assistant.runs.jsonl").read_bytes()


def jsonl(values: Iterable) -> bytes:
    """JSON lines; a ``bytes`` value is written as it is (a broken line, say)."""
    return b"".join(
        (value if isinstance(value, bytes) else json.dumps(value).encode()) + b"\n"
        for value in values
    )


@pytest.fixture
def team(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    return team


@pytest.fixture
def demo_suite(team, user):
    return services.create_suite(team, DEMO, user)


@pytest.fixture
def tau_suite(team, user):
    return services.create_suite(team, tau_bench.suite_document(), user)


def upload(suite, data: bytes, user=None, **kwargs) -> Submission:
    """Upload ``data`` and run what it enqueues (ingestion, then scoring) to the end."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        submission = create_submission(suite, user, io.BytesIO(data), **kwargs)
    submission.refresh_from_db()
    return submission


def assert_consistent(submission: Submission) -> None:
    """The submission is done and its counts are what its rows say: every run of a case in
    its version has exactly one result, the others none, and each run counts once."""
    submission.refresh_from_db()
    assert submission.status == Status.DONE, (submission.status, submission.error)
    keys = set(load_suite(submission.version.document, strict=False).by_key)
    runs = Run.objects.filter(submission=submission)
    known = runs.filter(case_key__in=keys)
    assert submission.stored_runs == runs.count()
    seqs = sorted(runs.values_list("seq", flat=True))
    if submission.read_ranges.count() <= 1:  # ranges leave gaps between them
        assert seqs == list(range(1, runs.count() + 1))
    assert submission.total == known.count()
    results = Result.objects.filter(submission=submission)
    assert set(results.values_list("run_id", flat=True)) == set(known.values_list("pk", flat=True))
    assert not results.exclude(run__submission=submission).exists()
    by_verdict = dict(results.values_list("verdict").annotate(n=Count("pk")))
    assert submission.scored == results.count() == submission.total
    assert (submission.passed, submission.failed, submission.errored) == (
        by_verdict.get("pass", 0),
        by_verdict.get("fail", 0),
        by_verdict.get("error", 0),
    )
    assert all(r.report["trial"] == r.run.trial for r in results.select_related("run"))
    predicates = PredicateResult.objects.filter(submission=submission)
    failed = [p for r in results for p in r.report["predicates"] if not p["passed"]]
    assert predicates.count() == len(failed)  # the failed predicates alone
    assert not predicates.exclude(result__submission=submission).exists()
    chunks = ScoredChunk.objects.filter(submission=submission)
    assert sorted(chunks.values_list("generation", "index")) == [
        (submission.generation, index) for index in chunk_indexes(submission)
    ]
    assert {(seq - 1) // submission.chunk_runs for seq in seqs} == set(chunk_indexes(submission))


@pytest.fixture
def pipeline(tmp_path, settings):
    """A broker, a way to start workers, and this process enqueueing through that broker.
    Skipped at once on SQLite, whose workers cannot start (``Workers.start``): else what a
    test does before starting them would run without them, in an order no worker sees."""
    skip_without_database_server()
    settings.CASEBOOK_CHUNK_RUNS = CHUNK_RUNS
    settings.CASEBOOK_STALL_SECONDS = STALL_SECONDS
    broker = Broker(tmp_path / "redis.log")
    broker.start()
    workers = Workers(broker, tmp_path)
    saved = {name: celery_app.conf[name] for name in ("broker_url", "task_always_eager")}
    use_broker(broker_url=broker.url, task_always_eager=False)
    try:
        yield broker, workers
    finally:
        workers.stop_all()
        broker.stop()
        use_broker(**saved)
        print(workers.text())  # shown by pytest when the test failed


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def run_file() -> tuple[bytes, dict[int, str]]:
    """The τ-bench runs ten times over (each repeat with trials of its own), with a broken
    line and a run of an unknown case in each repeat; and the invalid lines' numbers."""
    lines, invalid = [], {}
    for repeat in range(REPEATS):
        for number, record in enumerate(tau_bench.RECORDS):
            lines.append(tau_bench.run_line(record, trial=record["trial"] + 4 * repeat))
            if number == 100:
                lines.append(b'{"case": "task-1", "messages": [')
                invalid[len(lines)] = "invalid JSON"
                lines.append({"case": "no-such-task", "batches": []})
    return jsonl(lines), invalid


def status_of(api, submission_id: int) -> dict:
    response = api.get(f"/api/submissions/{submission_id}/")
    assert response.status_code == 200
    return response.json()


def upload_over_api(api, suite, body: bytes) -> int:
    response = api.post(
        f"/api/suites/{suite.pk}/submissions/?label=gpt-4o",
        data=body,
        content_type="application/x-ndjson",
    )
    assert response.status_code == 202, response.content
    return response.json()["id"]


def assert_scored_once(submission_id: int) -> None:
    submission = Submission.objects.get(pk=submission_id)
    assert_consistent(submission)
    assert submission.total == 200 * REPEATS
    assert (submission.passed, submission.failed, submission.errored) == (
        tau_bench.PASSED * REPEATS,
        tau_bench.FAILED * REPEATS,
        0,
    )
    assert submission.unknown_cases["no-such-task"]["runs"] == REPEATS


def finish_with_the_sweep(api, submission_id: int, workers: Workers) -> dict:
    """Wait until the submission is done, sweeping every second as Celery beat would."""

    def done():
        status = status_of(api, submission_id)
        if status["status"] == Status.DONE:
            return status
        assert status["status"] != Status.FAILED, status["error"]
        resume_stalled()
        return None

    try:
        return wait_for(done, TIMEOUT, "the submission to be done", workers)
    except AssertionError as exc:
        row = Submission.objects.values().get(pk=submission_id)
        raise AssertionError(f"{exc}\nthe submission: {row}") from None
