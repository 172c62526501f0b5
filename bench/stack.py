"""The production-like stack the benchmarks run against (bench/ingest.py, bench/load.py):
a fresh PostgreSQL database, gunicorn with DEBUG off, Celery workers and Redis database 15,
each process in a process group of its own; uploads through the API; and what each process
used (CPU time, peak memory), read from /proc.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG = "postgres://postgres@127.0.0.1:5432"
REDIS_DB = 15


def stack_environment(tmp: Path, database: str, redis_db: int = REDIS_DB) -> dict:
    """The environment of every process of the stack: production settings (DEBUG off) on
    ``database`` and Redis database ``redis_db``, connections kept between requests."""
    return {
        **os.environ,
        "DATABASE_URL": f"{PG}/{database}",
        "REDIS_URL": f"redis://127.0.0.1:6379/{redis_db}",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key",
        "ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
        "CONN_MAX_AGE": "60",
        "TMPDIR": str(tmp),
    }


def fresh_database(env: dict) -> None:
    """Drop and make again the environment's database, migrated, with the static files
    collected; and empty the environment's Redis database."""
    import psycopg

    database = env["DATABASE_URL"].rsplit("/", 1)[1]
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {database}")
    manage("migrate", "--noinput", "-v0", env=env)
    manage("collectstatic", "--noinput", "-v0", env=env)
    redis_db = env["REDIS_URL"].rsplit("/", 1)[1]
    subprocess.run(["redis-cli", "-n", redis_db, "flushdb"], check=True, capture_output=True)


def manage(*arguments: str, env: dict) -> str:
    """Run a management command of the project; its output. Stops the benchmark, with the
    command's errors, if it fails."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *arguments],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"manage.py {arguments[0]} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def run_script(env: dict, script: str, **values) -> str:
    """Run ``script`` in ``manage.py shell`` with ``values`` (JSON) bound to their names;
    what it printed."""
    bound = "".join(
        f"{name} = json.loads({json.dumps(value)!r})\n" for name, value in values.items()
    )
    return manage("shell", "-c", f"import json\n{bound}{script}", env=env)


class Stack:
    """gunicorn and the Celery workers, each in its own process group, logging to ``tmp``.

    ``workers`` Celery workers of one process each; gunicorn with ``web_workers`` processes
    of ``threads`` threads."""

    def __init__(self, env: dict, port: int, workers: int, tmp: Path, *, web_workers=1, threads=4):
        self.env, self.port, self.n_workers, self.tmp = env, port, workers, tmp
        self.web_workers, self.threads = web_workers, threads
        self.processes: dict[str, subprocess.Popen] = {}

    def __enter__(self) -> Stack:
        bin_dir = Path(sys.executable).parent
        self._start(
            "web",
            [str(bin_dir / "gunicorn"), "evalsite.wsgi", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(self.web_workers), "--threads", str(self.threads),
             "--timeout", "600", "--no-control-socket",
             # Clients talk to gunicorn directly, pausing between requests: an idle
             # connection closed as the next request is sent would be an error of the
             # benchmark, not of the site (a proxy in front keeps them in production).
             "--keep-alive", "30"],
        )  # fmt: skip
        for i in range(self.n_workers):
            self._start(
                f"worker {i + 1}",
                [str(bin_dir / "celery"), "-A", "evalsite", "worker", "--pool", "solo",
                 "-n", f"bench{i}@%h", "--loglevel", "WARNING"],
            )  # fmt: skip
        try:
            wait_for_server(self.port)
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def _start(self, name: str, command: list[str]) -> None:
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        self.processes[name] = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time used so far by each process (with its children), and by PostgreSQL: its
        processes, and the connections' processes that have ended (the server's reaped
        children: the workers' connections come and go with their tasks)."""
        used = {name: sum(map(process_cpu, _tree(p.pid))) for name, p in self.processes.items()}
        postgres = sum(process_cpu(pid, reaped=True) for pid in _pids_of("postgres"))
        return used | {"postgres": postgres}

    def peak_memory(self) -> dict[str, float]:
        """Each process's peak resident memory (VmHWM) in MB, counting its children."""
        return {
            name: max(_peak_mb(pid) for pid in _tree(process.pid))
            for name, process in self.processes.items()
        }

    def __exit__(self, *exc) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None or exc[0] is not None:
                print(f"--- {name}:\n{(self.tmp / f'{name}.log').read_text()[-3000:]}")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            process.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_server(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/accounts/login/")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the web server did not start")


def upload_and_wait(port: int, token: str, suite_id: int, path: Path, n_runs: int) -> dict:
    """Upload the run file through the API and wait for its submission to be done: the
    seconds to the upload's answer, to the last run stored and to the end, and its status.
    Stops the benchmark if it is refused, fails or scores other than ``n_runs`` runs."""
    headers = {"Authorization": f"Token {token}"}
    started = time.time()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600, blocksize=1 << 20)
    with path.open("rb") as body:
        conn.request(
            "POST",
            f"/api/suites/{suite_id}/submissions/?label=bench&filename={path.name}",
            body=body,
            headers=headers
            | {"Content-Type": "application/x-ndjson", "Content-Length": str(path.stat().st_size)},
        )
        answer = conn.getresponse()
        data = json.loads(answer.read())
    if answer.status != 202:
        raise SystemExit(f"upload refused: {answer.status} {data}")
    uploaded = time.time()
    status_path = f"/api/submissions/{data['id']}/"
    while True:
        conn.request("GET", status_path, headers=headers)
        status = json.loads(conn.getresponse().read())
        if status["status"] in ("done", "failed"):
            break
        time.sleep(0.25)
    finished = time.time()
    if status["status"] == "failed" or status["scored"] != n_runs:
        raise SystemExit(f"the submission did not complete: {status}")
    ingested = _epoch(status["ingest_finished"])
    return {
        "upload": uploaded - started,
        "ingested": ingested - started,
        "end_to_end": finished - started,
        "status": status,
    }


def _epoch(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def _tree(pid: int) -> list[int]:
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children.get(current, []))
    return found


def process_cpu(pid: int, *, reaped: bool = False) -> float:
    """The process's CPU time; with ``reaped``, its ended children's too."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def _pids_of(command: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == command:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _peak_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
