"""Load test: 50 reviewers at once against the production-like stack.

    python bench/load.py                       # 50 reviewers for 90 s
    python bench/load.py --users 100 --duration 300 --web-workers 4

Starts the stack of bench/stack.py on a fresh database ``casebook_load``: gunicorn with
DEBUG off (``--web-workers`` processes of ``--threads`` threads), two Celery workers,
PostgreSQL and Redis database 15. Seeds a library: a team with reviewers (editors, each an
account of their own) and two suites made by ``bench.datagen``, and uploads three
submissions of ``--runs`` runs each through the API, scored by the workers. Then runs
bench/locustfile.py headless: ``--users`` simulated users (two of them uploaders of small
run files through the API, the others reviewers who sign in and browse, filter, review and
edit cases, a pause of 1-4 s between clicks), arriving two a second, then all of them for
``--duration`` seconds.

Prints the throughput (requests/s), the median, p95 and p99 per page and the error rate,
with the machine's load average (other work on the machine slows the figures). Target: no
errors, p95 under 500 ms for every page.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.datagen import realistic_stream  # noqa: E402
from bench.stack import (  # noqa: E402
    PG,
    Stack,
    free_port,
    fresh_database,
    run_script,
    stack_environment,
    upload_and_wait,
)

TARGET_P95_MS = 500
UPLOADERS = 2
SPAWN_RATE = 2  # users arriving a second
UPLOAD_RUNS = 50
SUBMISSIONS_PER_SUITE = (2, 1)
SEED = """
from rest_framework.authtoken.models import Token
from cases import services
from cases.models import Membership, Role, User
owner = User.objects.create_user("owner", password=PASSWORD)
team = services.create_team("Agents", owner)
for n in range(REVIEWERS):
    reviewer = User.objects.create_user(f"reviewer{n}", password=PASSWORD)
    Membership.objects.create(team=team, user=reviewer, role=Role.EDITOR)
suites = [services.create_suite(team, document, owner).pk for document in SUITES]
tokens = [Token.objects.create(user=owner).key]
print(json.dumps({"suites": suites, "tokens": tokens}))
"""
LIBRARY = """
from django.db.models import Count
from cases.models import Case
from scoring.models import PredicateResult, Run, Submission
plan = {"suites": [], "submissions": []}
for suite in SUITES:
    cases = Case.objects.filter(suite_id=suite).order_by("position")
    plan["suites"].append({"id": suite, "cases": list(cases.values_list("pk", flat=True))})
for submission in Submission.objects.order_by("pk"):
    failing = PredicateResult.objects.filter(submission=submission)
    labels = failing.values("label").annotate(n=Count("pk")).order_by("-n")[:10]
    runs = Run.objects.filter(submission=submission).values_list("pk", flat=True)
    plan["submissions"].append(
        {"id": submission.pk, "runs": list(runs), "labels": [g["label"] for g in labels]}
    )
print(json.dumps(plan))
"""
SUBMISSIONS = """
from django.db.models import Count
from scoring.models import Result, Run, Submission
results = dict(Result.objects.values_list("submission").annotate(n=Count("pk")))
scored_runs = dict(
    Result.objects.values_list("submission").annotate(n=Count("run_id", distinct=True))
)
runs = dict(Run.objects.values_list("submission").annotate(n=Count("pk")))
print(json.dumps([
    {"id": s.pk, "status": s.status, "total": s.total, "scored": s.scored,
     "stored_runs": s.stored_runs, "runs": runs.get(s.pk, 0), "results": results.get(s.pk, 0),
     "scored_runs": scored_runs.get(s.pk, 0)}
    for s in Submission.objects.order_by("pk")
]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--duration", type=int, default=90, help="seconds")
    parser.add_argument("--runs", type=int, default=3000, help="per seeded submission")
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument(
        "--drop-connections",
        type=int,
        default=0,
        metavar="SECONDS",
        help="a fault: end every connection to the database (web and workers) this often",
    )
    parser.add_argument("--port", type=int, default=0, help="default: a free one")
    args = parser.parse_args()

    port = args.port or free_port()
    with tempfile.TemporaryDirectory(prefix="casebook-load-") as tmp:
        tmp = Path(tmp)
        env = stack_environment(tmp, "casebook_load")
        print("seeding the library ...", flush=True)
        fresh_database(env)
        suites, run_files = write_library(tmp, args.runs)
        reviewers = args.users - UPLOADERS
        password = "load-test-password"
        seeded = last_line_json(
            run_script(env, SEED, SUITES=suites, REVIEWERS=reviewers, PASSWORD=password)
        )
        with Stack(env, port, 2, tmp, web_workers=args.web_workers, threads=args.threads) as stack:
            for suite_id, path in zip_files(seeded["suites"], run_files):
                upload_and_wait(port, seeded["tokens"][0], suite_id, path, args.runs)
            plan = last_line_json(run_script(env, LIBRARY, SUITES=seeded["suites"]))
            plan |= {
                "users": args.users,
                "reviewers": [
                    {"username": f"reviewer{n}", "password": password} for n in range(reviewers)
                ],
                "tokens": seeded["tokens"],
                "upload_suite": seeded["suites"][0],
                "upload_file": str(write_upload(tmp)),
            }
            (tmp / "plan.json").write_text(json.dumps(plan))
            seeded_runs = sum(len(s["runs"]) for s in plan["submissions"])
            print(
                f"seeded {len(plan['suites'])} suites, {len(plan['submissions'])} submissions"
                f" of {seeded_runs:,} runs; {args.users} users for {args.duration} s ...",
                flush=True,
            )
            load_before = os.getloadavg()
            cpu_before = stack.cpu_seconds()
            with dropping_connections(every=args.drop_connections) as dropped:
                swarm(tmp, port, args.users, args.duration)
            # PostgreSQL's figure is left out: its backends come and go (and the dropped
            # ones take their CPU time with them), and other databases' are in it.
            cpu = {
                name: seconds - cpu_before[name]
                for name, seconds in stack.cpu_seconds().items()
                if name != "postgres"
            }
            load_after = os.getloadavg()
            submissions = finished_submissions(env)
        report(tmp / "stats_stats.csv", args, load_before, load_after, cpu)
    check_submissions(submissions, dropped)


def last_line_json(output: str):
    return json.loads(output.splitlines()[-1])


@contextlib.contextmanager
def dropping_connections(every: int):
    """While in the block, every ``every`` seconds (if any), end every connection to the
    database but our own: gunicorn's and the workers', wherever they are. Yields a list
    that counts the connections ended each time."""
    import psycopg

    dropped: list[int] = []
    stopping = threading.Event()

    def drop():
        with psycopg.connect(f"{PG}/casebook_load", autocommit=True) as conn:
            while not stopping.wait(every):
                ended = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchone()[0]
                dropped.append(ended)

    dropper = threading.Thread(target=drop, daemon=True)
    if every:
        dropper.start()
    try:
        yield dropped
    finally:
        stopping.set()
        if every:
            dropper.join()


def finished_submissions(env: dict, timeout: float = 180) -> list[dict]:
    """Each submission's state once none is left unfinished (or the time is up): its
    status, runs stored and counted, and results."""
    deadline = time.monotonic() + timeout
    while True:
        submissions = last_line_json(run_script(env, SUBMISSIONS))
        unfinished = [s for s in submissions if s["status"] in ("ingesting", "scoring")]
        if not unfinished or time.monotonic() > deadline:
            return submissions
        time.sleep(2)


def complete(submission: dict) -> bool:
    """Done; every run read from the file stored; every run of a known case scored, with
    one result (no more, no fewer)."""
    s = submission
    scored_once = s["total"] == s["scored"] == s["results"] == s["scored_runs"]
    return s["status"] == "done" and scored_once and s["stored_runs"] == s["runs"]


def check_submissions(submissions: list[dict], dropped: list[int]) -> None:
    """Every submission done, every run of a known case with exactly one result."""
    if dropped:
        print(f"database connections ended {len(dropped)} times: {sum(dropped)} connections")
    wrong = [s for s in submissions if not complete(s)]
    runs = sum(s["runs"] for s in submissions)
    print(
        f"submissions: {len(submissions)} ({runs:,} runs), {len(submissions) - len(wrong)} "
        "done with exactly one result for every run of a known case"
    )
    for submission in wrong:
        print(f"  NOT COMPLETE: {submission}")


def write_library(tmp: Path, n_runs: int) -> tuple[list[dict], list[list[Path]]]:
    """Two suites and, for each, its submissions' run files (runs of the suite's cases)."""
    suites, files = [], []
    for number, submissions in enumerate(SUBMISSIONS_PER_SUITE, start=1):
        suite, runs = realistic_stream(seed=number, n_runs=n_runs * submissions)
        suites.append({**suite, "name": f"Agent suite {number}"})
        files.append([])
        for submission in range(submissions):
            path = tmp / f"suite-{number}-{submission}.jsonl"
            with path.open("wb") as out:
                for _ in range(n_runs):
                    out.write(orjson.dumps(next(runs)) + b"\n")
            files[-1].append(path)
    return suites, files


def zip_files(suite_ids: list[int], files: list[list[Path]]):
    for suite_id, paths in zip(suite_ids, files, strict=True):
        for path in paths:
            yield suite_id, path


def write_upload(tmp: Path) -> Path:
    """The small run file the uploaders send: runs of the first suite's cases."""
    _, runs = realistic_stream(seed=1, n_runs=UPLOAD_RUNS)
    path = tmp / "upload.jsonl"
    path.write_bytes(b"".join(orjson.dumps(run) + b"\n" for run in runs))
    return path


def swarm(tmp: Path, port: int, users: int, duration: int) -> None:
    """Run locust: the users arrive over the first seconds (each signs in: a deliberately
    slow password hash), then all of them for ``duration`` seconds, the steady state that
    the statistics are about (they are reset once every user has arrived)."""
    arriving = users // SPAWN_RATE
    command = [
        shutil.which("locust") or "locust", "-f", str(ROOT / "bench/locustfile.py"),
        "--headless", "--users", str(users), "--spawn-rate", str(SPAWN_RATE),
        "--run-time", f"{arriving + duration}s", "--stop-timeout", "10",
        "--host", f"http://127.0.0.1:{port}", "--csv", str(tmp / "stats"),
        "--reset-stats", "--only-summary", "--loglevel", "WARNING",
    ]  # fmt: skip
    log = tmp / "locust.log"
    with log.open("wb") as output:
        done = subprocess.run(
            command,
            env={**os.environ, "LOAD_PLAN": str(tmp / "plan.json")},
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    # It answers 1 when a request failed (reported below), and for its own errors.
    if not (tmp / "stats_stats.csv").exists():
        raise SystemExit(f"locust did not run ({done.returncode}):\n{log.read_text()[-3000:]}")


def report(stats: Path, args, load_before, load_after, cpu: dict) -> None:
    rows = list(csv.DictReader(stats.open()))
    total = next(row for row in rows if row["Name"] == "Aggregated")
    pages = sorted((row for row in rows if row["Name"] != "Aggregated"), key=lambda r: r["Name"])
    requests, failures = int(total["Request Count"]), int(total["Failure Count"])
    print(
        f"\n{args.users} users, all signed in, for {args.duration} s; gunicorn "
        f"{args.web_workers} x {args.threads} threads, 2 Celery workers; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after ({os.cpu_count()} cores)"
    )
    print(f"{'page':<26}{'requests':>9}{'errors':>8}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}")
    for row in [*pages, total]:
        over = "  over the target" if float(row["95%"]) > TARGET_P95_MS else ""
        print(
            f"{row['Name']:<26}{int(row['Request Count']):>9}{int(row['Failure Count']):>8}"
            f"{row['50%']:>8}{row['95%']:>8}{row['99%']:>8}{over}"
        )
    print(
        f"throughput {float(total['Requests/s']):.1f} requests/s; "
        f"error rate {failures / max(requests, 1):.2%} ({failures} of {requests:,})"
    )
    sign_ins = json.loads(stats.with_name("sign_ins.json").read_text())
    times = sorted(ms for ms, _ in sign_ins)
    refused = sum(status != 302 for _, status in sign_ins)
    print(
        f"sign-ins while the users arrived: {len(times)}, {refused} failed; p50 "
        f"{times[len(times) // 2]:.0f} ms, max {times[-1]:.0f} ms (PBKDF2, by design)"
    )
    used = ", ".join(f"{name} {seconds:.0f}" for name, seconds in cpu.items())
    print(f"CPU seconds used, arrivals included: {used}")
    failures_file = stats.with_name("stats_failures.csv")
    for row in list(csv.DictReader(failures_file.open()))[:10]:
        print(f"  failed: {row['Name']}: {row['Occurrences']} x {row['Error'][:200]}")


if __name__ == "__main__":
    main()
