"""A release's code run as an operator runs it, for the upgrade tests: its ``manage.py``
commands and its web server (gunicorn, in the embedded default's eager mode: each upload
and re-score is scored in its request, live traces by the web process's timer), on
PostgreSQL databases of the test's own, dumped and restored with pg_dump and pg_restore as
docs/operations.md says."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.support.workers import free_port

TIMEOUT = 120
# What a release's processes must not inherit from the test run: its settings module, a
# broker (the servers here run tasks in-process), a cache.
LEFT_OUT = ("DJANGO_SETTINGS_MODULE", "REDIS_URL", "CACHE_URL", "PYTHONPATH")


class Databases:
    """PostgreSQL databases named ``{prefix}_{name}`` on the server of a postgres:// URL."""

    def __init__(self, url: str, prefix: str):
        self.server = url.rsplit("/", 1)[0]
        self.prefix = prefix
        self.made: list[str] = []

    def url(self, name: str) -> str:
        return f"{self.server}/{self.prefix}_{name}"

    def _admin(self, statement: str) -> None:
        with psycopg.connect(f"{self.server}/postgres", autocommit=True) as conn:
            conn.execute(statement)

    def create(self, name: str) -> str:
        """An empty database (dropped first if a run before left it)."""
        database = f"{self.prefix}_{name}"
        self._admin(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        self._admin(f"CREATE DATABASE {database}")
        self.made.append(database)
        return self.url(name)

    def drop_all(self) -> None:
        for database in self.made:
            self._admin(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


def environment(database_url: str, **extra: str) -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in LEFT_OUT and not k.startswith("CASEBOOK_")
    }
    return env | {"DATABASE_URL": database_url, "DEBUG": "true", **extra}


def manage(tree: Path, database_url: str, *args: str, **extra: str) -> str:
    """``python manage.py ARGS`` of the release in ``tree``; its output, or an assertion
    error with it."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=tree,
        env=environment(database_url, **extra),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, (
        f"manage.py {' '.join(args)} in {tree}:\n{done.stdout}{done.stderr}"
    )
    return done.stdout


def pg_dump(database_url: str, path: Path) -> None:
    """The backup docs/operations.md takes before an upgrade."""
    subprocess.run(
        ["pg_dump", "--format=custom", "--file", str(path), database_url],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )


def pg_restore(path: Path, database_url: str) -> subprocess.CompletedProcess:
    """The rollback docs/operations.md describes: restore into an empty database."""
    return subprocess.run(
        ["pg_restore", "--no-owner", "--exit-on-error", "--dbname", database_url, str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@contextmanager
def serving(tree: Path, database_url: str, log: Path):
    """The release in ``tree`` served by gunicorn on a free port; yields its base URL."""
    port = free_port()
    env = environment(database_url, CASEBOOK_TRACE_GRACE_SECONDS="0.5")
    command = [sys.executable, "-m", "gunicorn", "evalsite.wsgi", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", "1", "--timeout", str(TIMEOUT), "--no-control-socket"]
    with log.open("ab") as output:
        process = subprocess.Popen(
            command,
            cwd=tree,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                    break
            except OSError:
                assert process.poll() is None, (
                    f"gunicorn of {tree} exited:\n{log.read_text()[-3000:]}"
                )
                assert time.monotonic() < deadline, f"gunicorn of {tree} never answered"
                time.sleep(0.2)
        yield base
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
