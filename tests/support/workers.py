"""A real broker and real workers for the pipeline tests (docs/pipeline.md#redis-workers): a
redis-server and ``celery worker`` processes of our own, on the test database, that the tests
stop, kill and start again. The ``pipeline`` fixture (tests/ingest/pipeline/conftest.py) puts
them together for the worker and fault tests.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from django.db import connection
from kombu import pools

from evalsite.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]
CHUNK_RUNS = 50
STALL_SECONDS = 2
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


def skip_without_database_server() -> None:
    """Skip the test on SQLite, where no worker process of its own can run."""
    if connection.vendor != "postgresql":
        pytest.skip(
            "separate worker processes need a database server: SQLite's test database "
            "lives in this process's memory, and workers of their own are the "
            "PostgreSQL stack's (on SQLite, tasks run in the web process: eager mode)"
        )


class Workers:
    """``celery worker`` processes on the test database, each logging to a file."""

    def __init__(self, broker: Broker, logs: Path):
        self.broker = broker
        self.logs = logs
        self.started: list[tuple[subprocess.Popen, Path]] = []

    def start(self, concurrency: int = 2) -> subprocess.Popen:
        skip_without_database_server()
        database = connection.settings_dict
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "evalsite.settings",
            "REDIS_URL": self.broker.url,
            "DATABASE_URL": (
                f"postgres://{database['USER']}:{database['PASSWORD'] or ''}"
                f"@{database['HOST']}:{database['PORT'] or 5432}/{database['NAME']}"
            ),
            # Connections kept between tasks, as in production: a dropped one must not fail
            # the next task that picks it up.
            "CONN_MAX_AGE": "60",
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


def use_broker(**conf) -> None:
    """Point this process's Celery app at another broker (or back), dropping the
    connections it holds to the one before."""
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
    # kombu keeps its pools by connection, process-wide: the closed one would be handed out
    # again for the same broker (the in-memory one of eager mode, which still publishes).
    pools.reset()
    celery_app.conf.update(conf)
    celery_app._pool = None  # connections are made again, to the broker now configured
    celery_app.amqp._producer_pool = None
