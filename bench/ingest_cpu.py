"""Where a stored run's CPU goes: a gzip file of N canonical runs read, scored and stored in
this one process (Celery eager, as in the embedded default) against PostgreSQL, so that the
worker's CPU and its one PostgreSQL backend's can each be counted exactly, even on a machine
shared with other work.

    python bench/ingest_cpu.py --runs 50000
    python bench/ingest_cpu.py --runs 50000 --profile     # with py-spy and pg_stat_statements

Prints the CPU time a run of this process (the worker's share) and of its PostgreSQL backend,
and with ``--profile`` the functions the samples of py-spy found most (inclusive and own
time) and the statements ``pg_stat_statements`` timed most (it must be in PostgreSQL's
``shared_preload_libraries``). ``bench/ingest.py`` measures the same path through the whole
stack (gunicorn, two Celery workers, Redis); this isolates what each run costs.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import write_runs  # noqa: E402
from bench.stack import PG, fresh_database, process_cpu, stack_environment  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50_000)
    parser.add_argument("--database", default="casebook_bench_cpu", help="dropped and made again")
    parser.add_argument("--profile", action="store_true", help="py-spy and pg_stat_statements")
    parser.add_argument("--top", type=int, default=25, help="functions and statements listed")
    parser.add_argument("--keep-files", type=Path, help="keep the run file here, and reuse it")
    parser.add_argument("--keep-database", action="store_true", help="to look at its tables")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="casebook-bench-") as tmp:
        suite_document, path = write_runs(
            args.keep_files or Path(tmp), "canonical", args.runs, compress=True
        )
        env = stack_environment(Path(tmp), args.database)
        fresh_database(env)
        # This process runs the tasks itself: no broker.
        os.environ.update({k: v for k, v in env.items() if k != "REDIS_URL"})
        os.environ.pop("REDIS_URL", None)
        os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
        import django

        django.setup()
        # As a worker starts (evalsite/celery.py): what is loaded is frozen out of the
        # collector's scans, and its thresholds raised.
        from evalsite.celery import tune_garbage_collection

        tune_garbage_collection()
        measure(suite_document, path, args)
    if not args.keep_database:
        with psycopg_connect("postgres") as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {args.database} WITH (FORCE)")


def measure(suite_document: dict, path: Path, args: argparse.Namespace) -> None:
    from django.db import connection

    from cases import services
    from cases.models import User
    from scoring.ingest import conductor, tasks
    from scoring.ingest.conductor import Work

    user = User.objects.create_user("bench", password="bench-password")
    team = services.create_team("Bench", user)
    suite = services.create_suite(team, suite_document, user)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    statements = args.profile and statements_reset(args.database)

    # The upload (the web process's part) is measured apart from reading, scoring and
    # storing (the workers' part), which the tasks do when it is sent.
    with path.open("rb") as stream:
        upload = Usage(backend)
        submission = conductor.create(suite, user, stream, filename=path.name)
        upload.stop()
    sampler = args.profile and start_py_spy(path.parent / "py-spy.txt")
    work = Usage(backend)
    tasks.send(Work(submission.pk, read=True))
    work.stop()
    submission.refresh_from_db()
    if submission.status != "done" or submission.scored != args.runs:
        raise SystemExit(f"the submission did not complete: {submission.status} {submission.error}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        if cursor.fetchone()[0] != backend:
            print("note: the connection was opened again; PostgreSQL's figure is partial")
    per_run = 1e6 / args.runs
    print(f"{args.runs:,} canonical runs, gzip, read, scored and stored in one process")
    for what, usage in (("the upload", upload), ("reading, scoring, storing", work)):
        print(f"  {what}: {usage.wall:.1f} s wall")
        for name, seconds in (("this process's", usage.cpu), ("PostgreSQL's", usage.backend)):
            print(f"    {name + ' CPU':<20} {seconds:8.1f} s {seconds * per_run:6.0f} µs a run")
        together = (usage.cpu + usage.backend) * per_run
        print(f"    {'together':<31} {together:6.0f} µs a run")
    print(f"  load average        {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if sampler:
        stop_py_spy(sampler)
        print_profile(path.parent / "py-spy.txt", args.top)
    if statements:
        print_statements(args.database, args.top, args.runs)


class Usage:
    """The CPU time of this process and of its PostgreSQL backend, and the wall time, from
    now to ``stop``."""

    def __init__(self, backend: int) -> None:
        self.backend_pid = backend
        self.cpu, self.backend, self.wall = (
            -time.process_time(),
            -process_cpu(backend),
            -time.perf_counter(),
        )

    def stop(self) -> None:
        self.cpu += time.process_time()
        self.backend += process_cpu(self.backend_pid)
        self.wall += time.perf_counter()


def psycopg_connect(database: str):
    import psycopg

    return psycopg.connect(f"{PG}/{database}", autocommit=True)


def statements_reset(database: str) -> bool:
    import psycopg

    try:
        with psycopg_connect(database) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            conn.execute("SELECT pg_stat_statements_reset()")
    except psycopg.Error as error:
        print(f"pg_stat_statements unavailable ({error}): add it to shared_preload_libraries")
        return False
    return True


def print_statements(database: str, top: int, runs: int) -> None:
    with psycopg_connect(database) as conn:
        rows = conn.execute(
            "SELECT total_exec_time, calls, rows,"
            " left(regexp_replace(query, '\\s+', ' ', 'g'), 110)"
            " FROM pg_stat_statements JOIN pg_database d ON d.oid = dbid WHERE datname = %s"
            " ORDER BY total_exec_time DESC LIMIT %s",
            (database, top),
        ).fetchall()
    print(f"\nPostgreSQL statements by execution time (µs a run; calls; rows), top {top}:")
    for total_ms, calls, n_rows, query in rows:
        print(f"  {total_ms * 1000 / runs:7.1f}  {calls:7,}  {n_rows:9,}  {query}")


def start_py_spy(output: Path) -> subprocess.Popen:
    spy = Path(sys.executable).parent / "py-spy"
    command = [str(spy), "record", "--pid", str(os.getpid()), "--format", "raw"]
    command += ["--rate", "200", "--output", str(output), "--nonblocking"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1)  # attached before the work starts
    return process


def stop_py_spy(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)


def print_profile(collapsed: Path, top: int) -> None:
    """The functions most sampled, inclusive (on the stack) and own (at its top), as shares
    of all samples, from py-spy's collapsed stacks."""
    inclusive, own, total = Counter(), Counter(), 0
    for line in collapsed.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [_short(frame) for frame in stack.split(";")]
        samples = int(count)
        total += samples
        own[frames[-1]] += samples
        for frame in set(frames):
            inclusive[frame] += samples
    if not total:
        print("py-spy took no samples")
        return
    for title, counter in (("inclusive", inclusive), ("own", own)):
        print(f"\npy-spy, {total:,} samples: functions by {title} share, top {top}")
        for frame, samples in counter.most_common(top):
            print(f"  {100 * samples / total:5.1f}%  {frame}")


def _short(frame: str) -> str:
    # "function (path/to/module.py:line)" as "function (module.py)"
    name, _, where = frame.partition(" (")
    return f"{name} ({Path(where.split(':')[0]).name})" if where else name


if __name__ == "__main__":
    main()
