"""Upload-to-results benchmark (issue 5): N runs uploaded through the API to a live server
backed by PostgreSQL, Redis and two Celery workers.

    python bench/ingest.py                                  # 100,000 runs, each format
    python bench/ingest.py --runs 1000000 --format canonical --gzip   # memory vs file size

Prints, per format: the file's size, runs ingested per second (upload start to the last
run stored), runs scored per second end to end (upload start to the submission done), and
the peak resident memory of every process (the web server's and each worker's). Targets on
a 2-core machine: 100,000 runs in under 60 s end to end; every process under 300 MB, also
for a file ten times that size.

The stack is started here: a fresh database ``casebook_bench`` (dropped and made again),
gunicorn with DEBUG off, two Celery workers (one process each), Redis database 15. Runs are
made by ``bench.datagen`` (realistic: 5-20 calls in 2-6 batches, ~60% passing).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.datagen import as_openai_chat, realistic_stream  # noqa: E402

PG = "postgres://postgres@127.0.0.1:5432"
TARGET_RUNS, TARGET_SECONDS = 100_000, 60
TARGET_MB = 300
SETUP = """
from rest_framework.authtoken.models import Token
from cases import services
from cases.models import User
user = User.objects.create_user("bench", password="bench-password")
team = services.create_team("Bench", user)
suite = services.create_suite(team, SUITE, user)
print(suite.pk, Token.objects.create(user=user).key)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--format", choices=["canonical", "openai", "both"], default="both")
    parser.add_argument("--gzip", action="store_true", help="upload the file gzip-compressed")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=0, help="default: a free one")
    args = parser.parse_args()

    formats = ["canonical", "openai"] if args.format == "both" else [args.format]
    args.port = args.port or free_port()
    with tempfile.TemporaryDirectory(prefix="casebook-bench-") as tmp:
        tmp = Path(tmp)
        suite = None
        files = {}
        for name in formats:
            print(f"generating {args.runs:,} runs, {name} format ...", flush=True)
            suite, files[name] = write_runs(tmp, name, args.runs, compress=args.gzip)
        env = stack_environment(tmp)
        suite_id, token = prepare_database(env, suite)
        with Stack(env, args.port, args.workers, tmp) as stack:
            for name in formats:
                cpu_before = stack.cpu_seconds()
                figures = upload_and_wait(args.port, token, suite_id, files[name], args.runs)
                cpu = {k: v - cpu_before.get(k, 0) for k, v in stack.cpu_seconds().items()}
                report(name, files[name], args.runs, figures, stack.peak_memory(), cpu)


def write_runs(tmp: Path, name: str, n_runs: int, *, compress: bool) -> tuple[dict, Path]:
    suite, runs = realistic_stream(seed=5, n_runs=n_runs)
    path = tmp / f"runs-{name}.jsonl{'.gz' if compress else ''}"
    opener = gzip.open(path, "wb", compresslevel=3) if compress else open(path, "wb")  # noqa: SIM115
    with opener as out:
        for run in runs:
            out.write(orjson.dumps(as_openai_chat(run) if name == "openai" else run) + b"\n")
    return suite, path


def stack_environment(tmp: Path) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": f"{PG}/casebook_bench",
        "REDIS_URL": "redis://127.0.0.1:6379/15",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key",
        "ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
        "CONN_MAX_AGE": "60",
        "TMPDIR": str(tmp),
    }


def prepare_database(env: dict, suite: dict) -> tuple[int, str]:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS casebook_bench WITH (FORCE)")
        conn.execute("CREATE DATABASE casebook_bench")
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], env=env, check=True)
    subprocess.run([*manage, "collectstatic", "--noinput", "-v0"], env=env, check=True)
    script = f"SUITE = {json.dumps(suite)!r}\nimport json; SUITE = json.loads(SUITE)\n{SETUP}"
    out = subprocess.run(
        [*manage, "shell", "-c", script], env=env, check=True, capture_output=True, text=True
    ).stdout.split()
    subprocess.run(["redis-cli", "-n", "15", "flushdb"], check=True, capture_output=True)
    return int(out[-2]), out[-1]


class Stack:
    """gunicorn and the Celery workers, each in its own process group."""

    def __init__(self, env: dict, port: int, workers: int, tmp: Path):
        self.env, self.port, self.n_workers, self.tmp = env, port, workers, tmp
        self.processes: dict[str, subprocess.Popen] = {}

    def __enter__(self) -> Stack:
        bin_dir = Path(sys.executable).parent
        self._start(
            "web",
            [str(bin_dir / "gunicorn"), "evalsite.wsgi", "--bind", f"127.0.0.1:{self.port}",
             "--workers", "1", "--threads", "4", "--timeout", "600"],
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
        """CPU time used so far by each process (with its children), and by PostgreSQL."""
        used = {name: sum(map(_cpu, _tree(p.pid))) for name, p in self.processes.items()}
        return used | {"postgres": sum(map(_cpu, _pids_of("postgres")))}

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
    from datetime import datetime

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


def _cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def report(name: str, path: Path, n_runs: int, figures: dict, memory: dict, cpu: dict) -> None:
    size = path.stat().st_size / (1 << 20)
    packed = " (gzip)" if path.suffix == ".gz" else ""
    end = figures["end_to_end"]
    # The target is 100,000 runs in 60 s: as a rate, for files of any size.
    verdict = "meets" if n_runs / end > TARGET_RUNS / TARGET_SECONDS else "misses"
    print(f"\n{name} format: {n_runs:,} runs, a {size:,.0f} MB file{packed}")
    _row("upload (client to 202)", f"{figures['upload']:8.1f} s")
    ingested = figures["ingested"]
    _row("ingested", f"{ingested:8.1f} s   {n_runs / ingested:9,.0f} runs/s")
    _row(
        "scored, end to end",
        f"{end:8.1f} s   {n_runs / end:9,.0f} runs/s",
        f"{verdict} the target rate",
    )
    _row("verdicts", str(figures["status"]["counts"]))
    for process, mb in memory.items():
        over = "" if mb < TARGET_MB else f"over the {TARGET_MB} MB target"
        _row(f"peak memory, {process}", f"{mb:8.0f} MB", over)
    for process, seconds in cpu.items():
        _row(f"CPU time, {process}", f"{seconds:8.1f} s")
    sys.stdout.flush()


def _row(what: str, figure: str, note: str = "") -> None:
    print(f"  {what:<28} {figure}{'   (' + note + ')' if note else ''}")


if __name__ == "__main__":
    if not shutil.which("redis-cli"):
        raise SystemExit("needs redis-cli (and a Redis server on 127.0.0.1:6379)")
    main()
