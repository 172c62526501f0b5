"""``bin/stack`` (``make stack``) end to end: it prepares a database of its own, starts gunicorn,
a Celery worker and beat on free ports, answers /readyz, scores an upload in the worker, and
stops everything on Ctrl-C. About 20 s; it runs in CI (marker ``stack``)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest

from tests.support.workers import free_port

pytestmark = pytest.mark.stack

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "casebook_ops_stack_test"
# Starting means migrating a new database and loading the demo: on a loaded 2-core machine
# that alone took over a minute.
TIMEOUT = 180


@pytest.fixture
def database_url():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("the stack runs on PostgreSQL: set DATABASE_URL to a postgres:// URL")
    base = url.rsplit("/", 1)[0]
    drop = f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(drop)
    yield f"{base}/{DATABASE}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(drop)


class Output:
    """The stack's output, read as it comes, for lines to wait for."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines:
                if text in line:
                    return line
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} in {timeout}s:\n" + "\n".join(self.lines[-40:]))

    def records(self, process: str) -> list[dict]:
        prefix = f"{process:<9}| {{"
        return [
            json.loads(line[len(prefix) - 1 :]) for line in self.lines if line.startswith(prefix)
        ]


def _manage(env, *args) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def _call(url, *, token, data=None, headers=None) -> dict:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    request.add_header("Authorization", f"Token {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def test_the_stack_starts_scores_in_a_worker_and_stops(database_url, broker):
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": broker.url,
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "CELERY_WORKERS": "1",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    stack = subprocess.Popen(
        [sys.executable, "bin/stack", "--demo"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output = Output(stack.stdout)
    try:
        output.wait_for("ready: http://127.0.0.1")
        output.wait_for("worker1@")  # the worker has joined the broker
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(f"{base}/readyz", timeout=5) as response:
            assert json.load(response)["checks"] == {"database": "ok", "broker": "ok"}

        manage_env = env | {"DEBUG": "false", "SECRET_KEY": "t" * 50, "ALLOWED_HOSTS": "x"}
        token = _manage(manage_env, "drf_create_token", "demo").split()[2]
        suite = _call(f"{base}/api/suites/", token=token)["results"][0]["id"]
        upload = _call(
            f"{base}/api/suites/{suite}/submissions/?label=stack",
            token=token,
            data=(ROOT / "cases/demo/assistant.runs.jsonl").read_bytes(),
            headers={"Content-Type": "application/x-ndjson", "X-Request-ID": "smoke-1"},
        )
        deadline = time.monotonic() + TIMEOUT
        while (status := _call(upload["status_url"], token=token))["status"] != "done":
            assert status["status"] in ("ingesting", "scoring"), status
            assert time.monotonic() < deadline, status
            time.sleep(0.3)
        assert (status["total"], status["scored"]) == (7, 7)

        # Scored by the worker, not in the web process, and its lines say for which upload.
        def scored_chunks():
            return [
                record
                for record in output.records("worker.1")
                if record["message"].startswith("Task scoring.ingest.tasks.score_chunk")
                and "succeeded" in record["message"]
                and record.get("submission_id") == upload["id"]
            ]

        # Logged just after the chunk's results are committed, so maybe after "done".
        deadline = time.monotonic() + 10
        while not (scored := scored_chunks()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(scored) == 1, "\n".join(output.lines[-40:])
        assert scored[0]["request_id"] == "smoke-1"
        started = _started(output)
        assert len(started) == 3  # web, worker.1, beat

        stack.send_signal(signal.SIGINT)  # as Ctrl-C
        assert stack.wait(timeout=30) == 0
        for group in started:  # each leads a process group: gunicorn's and Celery's children
            with pytest.raises(ProcessLookupError):
                os.killpg(group, 0)
    finally:
        _stop(stack, output)


def _stop(stack: subprocess.Popen, output: Output) -> None:
    """After a failure: let the stack stop its processes, then kill what is left of them
    (each leads a process group of its own, which killing the stack would not reach)."""
    if stack.poll() is None:
        stack.send_signal(signal.SIGINT)
        try:
            stack.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stack.kill()
            stack.wait()
    for group in _started(output):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


def _started(output: Output) -> list[int]:
    """The process ids bin/stack said it started ("started web (pid 123)")."""
    return [
        int(line.rsplit("pid ", 1)[1].rstrip(")"))
        for line in output.lines
        if line.startswith("stack    | started ")
    ]
