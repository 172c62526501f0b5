"""The pipeline with a real broker and real workers (DESIGN.md §5): a redis-server and
``celery worker`` processes of our own, on the test database, that the tests stop and kill.

- an upload through the API is ingested and scored by the worker, counted once;
- a worker killed (SIGKILL, the whole process group) in the middle of scoring leaves its
  messages unacknowledged; a new worker and the sweep finish the submission, and nothing is
  counted twice;
- with the broker down at upload time the file is still taken (202) and kept; once the broker
  and a worker are back, the sweep starts it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evalsite.celery import app as celery_app
from scoring import tasks
from scoring.models import Status, Submission, UploadChunk
from scoring.submissions import resume_stalled
from tests import tau_bench

from .conftest import ROOT, assert_consistent, jsonl

pytestmark = pytest.mark.django_db(transaction=True)

CHUNK_RUNS = 50
STALL_SECONDS = 2
REPEATS = 10  # the 200 τ-bench runs, ten times over: 2,000 runs, 40 chunks
TIMEOUT = 90


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(process: subprocess.Popen) -> None:
    """Kill the process and everything it started (it leads its own process group)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


class Broker:
    """A redis-server of our own, stopped and started again on the same port."""

    def __init__(self, log: Path):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log = log
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--daemonize", "no"]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        wait_for(lambda: _answers(client), 10, "redis-server to start", self.log)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


def _answers(client: redis.Redis) -> bool:
    try:
        return client.ping()
    except redis.ConnectionError:
        return False


class Workers:
    """``celery worker`` processes on the test database, each logging to a file."""

    def __init__(self, broker: Broker, logs: Path):
        self.broker = broker
        self.logs = logs
        self.started: list[tuple[subprocess.Popen, Path]] = []

    def start(self, concurrency: int = 2) -> subprocess.Popen:
        database = connection.settings_dict
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "evalsite.settings",
            "REDIS_URL": self.broker.url,
            "DATABASE_URL": (
                f"postgres://{database['USER']}:{database['PASSWORD'] or ''}"
                f"@{database['HOST']}:{database['PORT'] or 5432}/{database['NAME']}"
            ),
            "CASEBOOK_CHUNK_RUNS": str(CHUNK_RUNS),
            "CASEBOOK_STALL_SECONDS": str(STALL_SECONDS),
        }
        number = len(self.started) + 1
        log = self.logs / f"worker-{number}.log"
        command = [sys.executable, "-m", "celery", "-A", "evalsite", "worker"]
        command += ["--pool", "prefork", "--concurrency", str(concurrency), "--queues", "celery"]
        command += ["--loglevel", "info", "--hostname", f"pipeline-{number}@%h"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        with log.open("wb") as output:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started.append((process, log))
        return process

    def text(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text()}" for _, log in self.started)

    def stop_all(self) -> None:
        for process, _ in self.started:
            stop(process)


def wait_for(condition: Callable[[], object], timeout: float, what: str, *logs) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.2)
    details = "\n".join(log.text() if hasattr(log, "text") else log.read_text() for log in logs)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{details}")


@pytest.fixture
def pipeline(tmp_path, settings):
    """A broker, a way to start workers, and this process enqueueing through that broker."""
    settings.CASEBOOK_CHUNK_RUNS = CHUNK_RUNS
    settings.CASEBOOK_STALL_SECONDS = STALL_SECONDS
    broker = Broker(tmp_path / "redis.log")
    broker.start()
    workers = Workers(broker, tmp_path)
    saved = {name: celery_app.conf[name] for name in ("broker_url", "task_always_eager")}
    _use_broker(broker_url=broker.url, task_always_eager=False)
    try:
        yield broker, workers
    finally:
        workers.stop_all()
        broker.stop()
        _use_broker(**saved)
        print(workers.text())  # shown by pytest when the test failed


def _use_broker(**conf) -> None:
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
    celery_app.conf.update(conf)
    celery_app._pool = None  # connections are made again, to the broker now configured
    celery_app.amqp._producer_pool = None


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


def upload(api, suite, body: bytes) -> int:
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


def test_a_worker_ingests_and_scores_an_upload_of_two_thousand_runs(api, tau_suite, pipeline):
    _, workers = pipeline
    workers.start()
    body, invalid = run_file()
    submission_id = upload(api, tau_suite, body)

    def done():
        status = status_of(api, submission_id)
        assert status["status"] != Status.FAILED, status["error"]
        return status if status["status"] == Status.DONE else None

    status = wait_for(done, TIMEOUT, "the submission to be done", workers)
    assert status["total"] == status["scored"] == 2000
    assert status["counts"] == {
        "pass": tau_bench.PASSED * REPEATS,
        "fail": tau_bench.FAILED * REPEATS,
        "error": 0,
    }
    assert [line["line"] for line in status["invalid_lines"]] == sorted(invalid)
    assert all(line["reason"].startswith("invalid JSON") for line in status["invalid_lines"])
    assert status["unknown_cases"] == ["no-such-task"]
    assert status["formats_seen"] == ["canonical", "openai_chat"]
    assert_scored_once(submission_id)
    assert Submission.objects.get(pk=submission_id).generation == 1  # never restarted


@pytest.mark.parametrize(
    ("concurrency", "while_"),
    [(1, Status.SCORING), (2, Status.INGESTING)],
    ids=["while-scoring", "while-still-ingesting"],
)
def test_a_worker_killed_mid_way_is_replaced_and_nothing_counts_twice(
    api, tau_suite, pipeline, concurrency, while_
):
    """One process reads the whole file before it scores a chunk; with two, the worker is
    killed with the file half read and some chunks scored."""
    _, workers = pipeline
    first = workers.start(concurrency)
    submission_id = upload(api, tau_suite, run_file()[0])

    def under_way():
        status = status_of(api, submission_id)
        return status["status"] == while_ and 0 < status["scored"] < 1000 and status

    before = wait_for(under_way, TIMEOUT, f"scoring to be under way, {while_}", workers)
    stop(first)  # SIGKILL to the worker and its pool: its messages are never acknowledged
    time.sleep(STALL_SECONDS + 0.5)
    killed = status_of(api, submission_id)
    assert killed["status"] == while_
    assert before["scored"] <= killed["scored"] < 2000

    workers.start()
    tasks.sweep.delay()  # the sweep as a task, as Celery beat sends it
    finish_with_the_sweep(api, submission_id, workers)
    assert_scored_once(submission_id)
    restarted = Submission.objects.get(pk=submission_id).generation > 1
    assert restarted == (while_ == Status.INGESTING)


def test_with_the_broker_down_the_upload_is_kept_and_the_sweep_starts_it_later(
    api, tau_suite, pipeline
):
    broker, workers = pipeline
    broker.stop()
    started = time.monotonic()
    submission_id = upload(api, tau_suite, run_file()[0])
    assert time.monotonic() - started < 15  # the broker's absence costs a few seconds at most
    submission = Submission.objects.get(pk=submission_id)
    assert submission.status == Status.INGESTING
    assert UploadChunk.objects.filter(submission=submission).exists()
    time.sleep(STALL_SECONDS + 0.5)
    assert status_of(api, submission_id)["status"] == Status.INGESTING  # waiting, not lost

    broker.start()
    workers.start()
    finish_with_the_sweep(api, submission_id, workers)
    assert_scored_once(submission_id)


@pytest.fixture
def silent_broker():
    """The address of a broker that accepts connections and never answers (a hung server,
    or one whose packets a firewall drops after the handshake)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)  # the kernel completes handshakes; nothing ever reads
        yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"


def test_a_broker_that_never_answers_delays_an_upload_by_seconds_not_forever(
    api, tau_suite, pipeline, silent_broker
):
    _use_broker(broker_url=silent_broker)
    sending = threading.Thread(target=_send_sweep, daemon=True)
    sending.start()
    sending.join(30)
    assert not sending.is_alive(), "sending a task to a silent broker hangs"

    started = time.monotonic()
    submission_id = upload(api, tau_suite, tau_bench.run_file(tau_bench.RECORDS[:10]))
    assert time.monotonic() - started < 30
    assert Submission.objects.get(pk=submission_id).status == Status.INGESTING


def _send_sweep():
    with contextlib.suppress(Exception):
        tasks.sweep.delay()
