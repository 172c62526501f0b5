"""Review pages on a large submission (issue 6): server time and queries per page.

    python bench/pages.py                 # seed 100,000 runs, then measure
    python bench/pages.py --reuse         # measure the submission seeded last time
    python bench/pages.py --requests 50
    python bench/pages.py --reuse --proposed-indexes   # with the indexes proposed below

Seeds a database of its own, ``casebook_benchpages`` or ``$BENCH_PAGES_DATABASE`` (dropped
and made again): a suite of 50 realistic cases and one submission of 100,000 runs made by
``bench.datagen`` (5-20 calls in 2-6 batches, about 60% passing), read and scored by the
real ingest and scoring code in this process (Celery eager), then a share of the runs
reviewed. Then requests each page N times through Django's test client, signed in as an
editor, and prints the median and p95 of the server time and the number of queries of each:
the results page, a filtered page (``verdict=fail&tool=…``), the table swapped by htmx for
that filter, a failure group (``predicate=label``), the list of failure groups, the CSV
export's first rows, a run page, the run page of a 300-turn conversation
(``bench.datagen.long_conversation``: 300 messages, about 60 batches of 120 calls with their
results, in a submission of its own), and the drafts of "Cases from these runs" (a case per
key of the passing runs). Target: p95 under 300 ms for each page, with a number of queries
that does not grow with the runs.

``--proposed-indexes`` adds indexes the schema does not have (``PROPOSED_INDEXES``): a
covering index that lets a filter by tool read only an index, where it otherwise reads the
wide table of runs (each row holds its document), and a trigram index for text in the final
answer. Both would slow ingestion (every run written updates them), so they are measured
here rather than made.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PG = "postgres://postgres@127.0.0.1:5432"
LABEL, LONG_LABEL = "bench", "bench 300 turns"
LONG_TURNS = 300
DATABASE = os.environ.get("BENCH_PAGES_DATABASE", "casebook_benchpages")  # one per checkout
TARGET_MS = 300
HX_TABLE = {"HX-Request": "true", "HX-Target": "runs"}
PROPOSED_INDEXES = [
    "CREATE INDEX IF NOT EXISTS proposed_run_tools ON scoring_run "
    "(submission_id) INCLUDE (id, tools)",
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS proposed_run_text ON scoring_run "
    "USING gin (upper(final_text) gin_trgm_ops)",
]


def configure() -> None:
    """Django on the benchmark's database, as in production (DEBUG off, eager tasks)."""
    os.environ.pop("REDIS_URL", None)
    os.environ.update(
        DATABASE_URL=f"{PG}/{DATABASE}",
        DJANGO_SETTINGS_MODULE="evalsite.settings",
        DEBUG="0",
        SECRET_KEY="bench-only-secret-key",
        ALLOWED_HOSTS="testserver",
        LOG_LEVEL="WARNING",
    )
    import django

    django.setup()


def recreate_database() -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")


def seed(n_runs: int):
    """The editor and the submission, read and scored; about 10% of its failures triaged."""
    from django.core.management import call_command

    from bench.datagen import realistic_stream
    from cases import services
    from cases.models import User
    from scoring import reviews
    from scoring.models import ReviewStatus, Run
    from scoring.submissions import create_submission

    call_command("migrate", verbosity=0)
    user = User.objects.create_user("bench", password="bench-password")
    team = services.create_team("Bench", user)
    suite_document, runs = realistic_stream(seed=6, n_runs=n_runs)
    suite = services.create_suite(team, suite_document, user)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as runs_file:
        for run in runs:
            runs_file.write(orjson.dumps(run) + b"\n")
        runs_file.seek(0)
        # Autocommit: the ingest task runs (eagerly) as soon as the upload is stored, and
        # each scoring chunk as soon as ingestion enqueues it.
        submission = create_submission(suite, user, runs_file, label=LABEL)
    submission.refresh_from_db()
    seed_long_run(suite, user)
    print(
        f"seeded {submission.scored:,} runs ({submission.passed:,} pass, {submission.failed:,} "
        f"fail, {submission.errored:,} error) in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    failing = Run.objects.filter(submission=submission, result__verdict="fail")
    statuses = [ReviewStatus.REGRESSION, ReviewStatus.FLAKY, ReviewStatus.EXPECTATION_WRONG]
    for i, status in enumerate(statuses):
        chosen = failing.filter(seq__gt=i * n_runs // 10, seq__lte=i * n_runs // 10 + n_runs // 30)
        reviews.set_status(chosen, status, user)
    return user, submission


def seed_long_run(suite, user) -> None:
    """A submission of one run: a conversation of ``LONG_TURNS`` messages (OpenAI Chat)."""
    import random

    from bench.datagen import long_conversation, realistic_suite
    from scoring.submissions import create_submission

    case = realistic_suite(random.Random(6), 1)["cases"][0]  # the suite's first case
    line = orjson.dumps(long_conversation(7, case, LONG_TURNS)) + b"\n"
    with tempfile.TemporaryFile() as runs_file:
        runs_file.write(line)
        runs_file.seek(0)
        create_submission(suite, user, runs_file, label=LONG_LABEL)


def settle(proposed_indexes: bool) -> None:
    """Let the tables reach the state a live database is in soon after an upload (autovacuum
    has set their visibility maps and statistics), with the proposed indexes if asked."""
    from django.db import connection

    with connection.cursor() as cursor:
        if proposed_indexes:
            for statement in PROPOSED_INDEXES:
                cursor.execute(statement)
        for table in ("scoring_run", "scoring_result", "scoring_predicateresult", "scoring_review"):
            cursor.execute(f"VACUUM ANALYZE {table}")


def existing():
    from cases.models import User
    from scoring.models import Submission

    return User.objects.get(username="bench"), Submission.objects.get(label=LABEL)


def pages(submission) -> dict[str, tuple[str, dict, dict]]:
    """Name → (path, query, headers) of each page measured."""
    from bench.datagen import TOOLS
    from scoring.models import Run, Submission
    from scoring.results import common_failures

    base = submission.get_absolute_url()
    label = common_failures(submission)[0]["label"]
    run = Run.objects.filter(submission=submission, result__verdict="fail").order_by("seq")[500]
    long_run = Run.objects.get(submission=Submission.objects.get(label=LONG_LABEL))
    filtered = {"verdict": "fail", "tool": TOOLS[0]}
    return {
        "results page": (base, {}, {}),
        "filtered page": (base, filtered, {}),
        "filtered table (htmx)": (base, filtered, HX_TABLE),
        "sorted by review": (base, {"sort": "-review", "verdict": "fail"}, {}),
        "failure group": (base, {"predicate": label}, {}),
        "failure groups list": (f"{base}failures/", {}, {}),
        "text search (htmx)": (base, {"text": "seats, total $7"}, HX_TABLE),
        "run page": (run.get_absolute_url(), {"verdict": "fail"}, {}),
        f"run page, {LONG_TURNS} turns": (long_run.get_absolute_url(), {}, {}),
        "cases from passing runs": (f"{base}cases-from-runs/", {}, {}),
    }


def measure(user, submission, n_requests: int) -> bool:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(user)
    print(f"\n{n_requests} requests per page; server time in ms (the test client, in process)")
    # "cpu": the median CPU time of this process alone (the database's is not in it), which a
    # machine busy with other work inflates much less than the time on the clock.
    print(f"{'page':<24}{'median':>8}{'p95':>8}{'max':>8}{'cpu':>8}{'queries':>9}  status")
    all_fast = True
    for name, (path, query, headers) in pages(submission).items():
        client.get(path, query, headers=headers)  # warm: caches, connections
        times, cpu = [], []
        for _ in range(n_requests):
            with CaptureQueriesContext(connection) as queries:
                started, started_cpu = time.perf_counter(), time.process_time()
                response = client.get(path, query, headers=headers)
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - started_cpu) * 1000)
            assert response.status_code == 200, (name, response.status_code)
        times.sort()
        p95 = times[max(0, round(0.95 * len(times)) - 1)]
        fast = p95 < TARGET_MS
        all_fast &= fast
        print(
            f"{name:<24}{statistics.median(times):>8.1f}{p95:>8.1f}{times[-1]:>8.1f}"
            f"{statistics.median(cpu):>8.1f}{len(queries):>9}  {'ok' if fast else 'SLOW'}",
            flush=True,
        )
    return all_fast


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=30, help="per page")
    parser.add_argument("--reuse", action="store_true", help="keep the last seeded database")
    parser.add_argument("--proposed-indexes", action="store_true", help="see the notes above")
    args = parser.parse_args()
    if not args.reuse:
        recreate_database()
    configure()
    user, submission = existing() if args.reuse else seed(args.runs)
    settle(args.proposed_indexes)
    fast = measure(user, submission, args.requests)
    print(f"\n{'every page' if fast else 'NOT every page'} under {TARGET_MS} ms at p95")


if __name__ == "__main__":
    main()
