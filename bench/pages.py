"""Review pages on a large submission: server time and queries per page.

    python bench/pages.py                 # seed 100,000 runs, then measure
    python bench/pages.py --runs 1000000 --total 10000000   # a million, ten million in all
    python bench/pages.py --reuse         # measure the submission seeded last time
    python bench/pages.py --requests 50
    python bench/pages.py --reuse --proposed-indexes   # with the indexes proposed below

Seeds a database of its own, ``casebook_benchpages`` or ``$BENCH_PAGES_DATABASE`` (dropped
and made again): a suite of 50 realistic cases and two submissions of 100,000 runs each
made by ``bench.datagen`` (5-20 calls in 2-6 batches, about 60% passing, each with its
usage: tokens, model calls, time and cost, as the pages' usage figures read them; the first,
"baseline", other runs of the same suite), read and scored by the real ingest and scoring
code in this process (Celery eager), then a share of each one's runs reviewed. With
``--runs`` above ``--template`` (100,000), the template is what is read and scored, and
copies of it inside PostgreSQL (``bench.copies``) grow each submission to ``--runs``;
``--total`` adds older submissions ("nightly N", a day apart) of copies until that many runs
are stored. Drop the database afterwards: ten million runs take about 30 GB. Then requests
each page N times through Django's test client, signed in as an editor, and prints the
least, median and p95 server time, the CPU time and the number of queries of each: the
results page, a filtered page (``verdict=fail&tool=…``), the table swapped by htmx for that
filter, a failure group (``predicate=label``) and a cause group, text in the final answer,
the failures by cause (unfiltered, and by tag, review status and text), a run page, the run
page of a 300-turn conversation (``bench.datagen.long_conversation``: 300 messages, about
60 batches of 120 calls with their results, in a submission of its own), the drafts of
"Cases from these runs" (a case per key of the passing runs), the suite page with its open
problems, the comparison of the two submissions, and the API's lists of submissions,
results and failure groups. ``--only WORD`` measures the pages whose name holds it. Target:
p95 under 300 ms for each page, with a number of queries that does not grow with the runs.

``--proposed-indexes`` adds indexes the schema does not have (``PROPOSED_INDEXES``): a
covering index that lets a filter by tool read only an index, where it otherwise reads the
wide table of runs (each row holds its document). It would slow ingestion (every run
written updates it), so it is measured here rather than made. (The trigram index for text
in the final answer, once proposed here, is made by migration scoring 0018.)
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
LABEL, BASELINE_LABEL, LONG_LABEL = "bench", "baseline", "bench 300 turns"
LONG_TURNS = 300
DATABASE = os.environ.get("BENCH_PAGES_DATABASE", "casebook_benchpages")  # one per checkout
TARGET_MS = 300
HX_TABLE = {"HX-Request": "true", "HX-Target": "runs"}
PROPOSED_INDEXES = [
    "CREATE INDEX IF NOT EXISTS proposed_run_tools ON scoring_run "
    "(submission_id) INCLUDE (id, tools)",
]


def configure(database: str = DATABASE) -> None:
    """Django on a benchmark's database, as in production (DEBUG off, eager tasks)."""
    os.environ.pop("REDIS_URL", None)
    os.environ.update(
        DATABASE_URL=f"{PG}/{database}",
        DJANGO_SETTINGS_MODULE="evalsite.settings",
        DEBUG="0",
        SECRET_KEY="bench-only-secret-key",
        ALLOWED_HOSTS="testserver",
        LOG_LEVEL="WARNING",
    )
    import django

    django.setup()


def recreate_database(database: str = DATABASE) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {database}")


def seed(n_runs: int, total: int, template_runs: int):
    """The editor and two submissions of the suite (the second, another file of the same
    suite, is what the comparison and the problems across submissions read), each read and
    scored, about 10% of each one's failures triaged, then grown to ``n_runs`` by copies
    (``bench.copies``); then older submissions of those runs until ``total`` are stored."""
    from django.core.management import call_command

    from bench import copies
    from bench.datagen import realistic_stream
    from cases import services
    from cases.models import User

    call_command("migrate", verbosity=0)
    user = User.objects.create_user("bench", password="bench-password")
    team = services.create_team("Bench", user)
    suite_document, _ = realistic_stream(seed=6, n_runs=0)
    suite = services.create_suite(team, suite_document, user)
    templates = []
    for label, runs_seed in ((BASELINE_LABEL, 7), (LABEL, None)):
        submission = upload(suite, user, runs_seed, template_runs, label)
        triage(submission, user, template_runs)
        templates.append(copies.Template.of(submission))
    seed_long_run(suite, user)
    started = time.perf_counter()
    older = max(0, total - 2 * n_runs) // template_runs
    if n_runs > template_runs or older:
        with copies.bulk_loading():
            for template in templates:
                copies.grow(template, n_runs // template_runs - 1)
            for day in range(1, older + 1):
                copies.copy_submission(templates[day % 2], f"nightly {day}", days_ago=day)
        print(
            f"copied to {n_runs:,} runs a submission and {older} older submissions of "
            f"{template_runs:,} in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    return user, submission


def upload(suite, user, runs_seed: int | None, n_runs: int, label: str):
    from bench.datagen import realistic_stream
    from scoring.ingest.pipeline import create_submission

    _, runs = realistic_stream(seed=6, n_runs=n_runs, runs_seed=runs_seed, usage=True)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as runs_file:
        for run in runs:
            runs_file.write(orjson.dumps(run) + b"\n")
        runs_file.seek(0)
        # Autocommit: the ingest task runs (eagerly) as soon as the upload is stored, and
        # each scoring chunk as soon as ingestion enqueues it.
        submission = create_submission(suite, user, runs_file, label=label)
    submission.refresh_from_db()
    print(
        f"seeded {submission.scored:,} runs ({submission.passed:,} pass, {submission.failed:,} "
        f"fail, {submission.errored:,} error) in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return submission


def triage(submission, user, n_runs: int) -> None:
    from scoring.models import ReviewStatus, Run
    from scoring.review import decisions

    failing = Run.objects.filter(submission=submission, result__verdict="fail")
    statuses = [ReviewStatus.REGRESSION, ReviewStatus.FLAKY, ReviewStatus.EXPECTATION_WRONG]
    for i, status in enumerate(statuses):
        chosen = failing.filter(seq__gt=i * n_runs // 10, seq__lte=i * n_runs // 10 + n_runs // 30)
        decisions.set_status(chosen, status, user)


def seed_long_run(suite, user) -> None:
    """A submission of one run: a conversation of ``LONG_TURNS`` messages (OpenAI Chat)."""
    import random

    from bench.datagen import long_conversation, realistic_suite
    from scoring.ingest.pipeline import create_submission

    case = realistic_suite(random.Random(6), 1)["cases"][0]  # the suite's first case
    line = orjson.dumps(long_conversation(7, case, LONG_TURNS)) + b"\n"
    with tempfile.TemporaryFile() as runs_file:
        runs_file.write(line)
        runs_file.seek(0)
        create_submission(suite, user, runs_file, label=LONG_LABEL)


def settle(proposed_indexes: bool) -> None:
    """Let the tables reach the state a live database is in soon after an upload (autovacuum
    has set their visibility maps and statistics), with the proposed indexes if asked. A
    database seeded by an earlier version gets the tables added since, and the summaries
    (failures, problems, cases) its last scoring task would have stored."""
    from django.core.management import call_command
    from django.db import connection

    from scoring.models import (
        CaseSummary,
        FailureSummary,
        KnownFailureSummary,
        PredicateResult,
        Result,
        Review,
        Run,
        Submission,
    )
    from scoring.results.failures import summarize_when_scored

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)  # DEBUG off: the manifest
    started = time.perf_counter()
    for pk in Submission.objects.values_list("pk", flat=True):
        summarize_when_scored(pk)
    with connection.cursor() as cursor:
        if proposed_indexes:
            for statement in PROPOSED_INDEXES:
                cursor.execute(statement)
        analyzed = (Run, Result, PredicateResult, Review, FailureSummary, KnownFailureSummary)
        for model in (*analyzed, CaseSummary):
            cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    print(f"summarized and vacuumed in {time.perf_counter() - started:.0f} s", flush=True)


def existing():
    from cases.models import User
    from scoring.models import Submission

    return User.objects.get(username="bench"), Submission.objects.get(label=LABEL)


def pages(submission) -> dict[str, tuple[str, dict, dict]]:
    """Name → (path, query, headers) of each page measured."""
    from bench.datagen import TOOLS
    from scoring.models import Run, Submission
    from scoring.results.tables import common_failures

    base = submission.get_absolute_url()
    suite = submission.suite_id
    baseline = Submission.objects.get(suite_id=suite, label=BASELINE_LABEL)
    label = common_failures(submission)[0]["label"]
    run = Run.objects.filter(submission=submission, result__verdict="fail").order_by("seq")[500]
    long_run = Run.objects.get(submission=Submission.objects.get(label=LONG_LABEL))
    filtered = {"verdict": "fail", "tool": TOOLS[0]}
    failures = f"{base}failures/"
    api = f"/api/submissions/{submission.pk}/"
    return {
        "results page": (base, {}, {}),
        "filtered page": (base, filtered, {}),
        "filtered table (htmx)": (base, filtered, HX_TABLE),
        "sorted by review": (base, {"sort": "-review", "verdict": "fail"}, {}),
        "failure group": (base, {"predicate": label}, {}),
        "cause group": (base, {"cause": "argument_value:get_user"}, {}),
        "text search (htmx)": (base, {"text": "seats, total $7"}, HX_TABLE),
        "failures by cause": (failures, {}, {}),
        "failures, tag": (failures, {"tag": "booking"}, {}),
        "failures, review": (failures, {"review": "flaky"}, {}),
        "failures, text": (failures, {"text": "seats, total $7"}, {}),
        "run page": (run.get_absolute_url(), {"verdict": "fail"}, {}),
        f"run page, {LONG_TURNS} turns": (long_run.get_absolute_url(), {}, {}),
        "cases from passing runs": (f"{base}cases-from-runs/", {}, {}),
        "suite page": (f"/suites/{suite}/", {}, {}),
        "open known failures (htmx)": (f"/suites/{suite}/problems/", {}, {"HX-Request": "true"}),
        "compare": (
            f"/suites/{suite}/compare/",
            {"baseline": baseline.pk, "candidate": submission.pk},
            {},
        ),
        "API submissions": (f"/api/suites/{suite}/submissions/", {}, {}),
        "API submission (usage)": (api, {}, {}),
        "API results": (f"{api}results/", {"verdict": "fail"}, {}),
        "API failures": (f"{api}failures/", {}, {}),
    }


def measure(user, submission, n_requests: int, only: str = "") -> bool:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(user)
    print(f"\n{n_requests} requests per page; server time in ms (the test client, in process)")
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores shared with other work)")
    # "min", and "cpu" (the median CPU time of this process alone: the database's is not in
    # it), tell the work done from the wait for a core on a machine busy with other work,
    # which inflates the time on the clock; the target is on the p95.
    print(
        f"{'page':<24}{'first':>8}{'min':>8}{'median':>8}{'p95':>8}{'max':>8}{'cpu':>7}"
        f"{'queries':>9}  status"
    )
    all_fast = True
    for name, (path, query, headers) in pages(submission).items():
        if only not in name:
            continue
        # The first request warms the process and fills the cache with the figures it keeps
        # (docs/review.md#scale): shown apart, as what the first reviewer to ask waits.
        started = time.perf_counter()
        client.get(path, query, headers=headers)
        first = (time.perf_counter() - started) * 1000
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
            f"{name:<24}{first:>8.0f}{times[0]:>8.1f}{statistics.median(times):>8.1f}{p95:>8.1f}"
            f"{times[-1]:>8.1f}{statistics.median(cpu):>7.0f}{len(queries):>9}  "
            f"{'ok' if fast else 'SLOW'}",
            flush=True,
        )
    return all_fast


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000, help="in the submission measured")
    parser.add_argument(
        "--total", type=int, default=0, help="runs stored in all: older submissions add the rest"
    )
    parser.add_argument(
        "--template",
        type=int,
        default=100_000,
        help="runs read and scored by the real code; the others are copies (bench/copies.py)",
    )
    parser.add_argument("--requests", type=int, default=30, help="per page")
    parser.add_argument("--reuse", action="store_true", help="keep the last seeded database")
    parser.add_argument("--proposed-indexes", action="store_true", help="see the notes above")
    parser.add_argument("--only", default="", help="measure the pages whose name holds this")
    args = parser.parse_args()
    if not args.reuse:
        recreate_database()
    configure()
    if args.runs % min(args.template, args.runs):
        parser.error("--runs must be a multiple of --template")
    user, submission = (
        existing() if args.reuse else seed(args.runs, args.total, min(args.template, args.runs))
    )
    settle(args.proposed_indexes)
    fast = measure(user, submission, args.requests, args.only)
    print(f"\n{'every page' if fast else 'NOT every page'} under {TARGET_MS} ms at p95")


if __name__ == "__main__":
    main()
