"""Retention under load: expired live runs removed while an upload is read and scored
(docs/operations.md#retention).

    python bench/prune.py                       # 200,000 expired runs, a 20,000-run upload
    python bench/prune.py --runs 50000 --upload-runs 5000

Seeds a fresh PostgreSQL database ``bench_retention`` (dropped at the end) with expired live
submissions written by COPY: their runs, a result and three failed predicates a run (as many
rows as before only failed ones were stored, so the figures compare), and a review on one
run in a hundred. Then reads and scores an upload (in a process of its own, tasks run in
it) twice: alone, and while ``scoring.retention.pruning.prune`` removes the expired runs.
Prints the rows deleted a second, the longest transaction of the prune (as PostgreSQL's
``pg_stat_activity`` saw it, polled every few milliseconds) and the rows the largest
deleted, and the upload's runs a second with and without the prune beside it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.datagen import realistic_stream  # noqa: E402
from bench.stack import PG, fresh_database, run_script, stack_environment  # noqa: E402

DATABASE = "bench_retention"
REDIS_DB = 7
PREDICATES_PER_RUN = 3
REVIEWED_EVERY = 100  # one run in this many carries a review

UPLOAD = """
import time
from pathlib import Path
from cases.models import Suite, User
from scoring.ingest.pipeline import create_submission
suite = Suite.objects.get(pk=SUITE_ID)
started = time.monotonic()
with Path(PATH).open("rb") as body:
    made = create_submission(suite, User.objects.get(username="bench"), body, filename="runs.jsonl")
made.refresh_from_db()
print(made.status, made.scored, time.monotonic() - started)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200_000, help="expired live runs")
    parser.add_argument("--submissions", type=int, default=20, help="expired live days")
    parser.add_argument("--upload-runs", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="casebook-bench-") as tmp:
        env = stack_environment(Path(tmp), DATABASE, redis_db=REDIS_DB)
        fresh_database(env)
        del env["REDIS_URL"]  # tasks run in the process that sends them
        os.environ.update(env)
        try:
            run_bench(args, env, Path(tmp))
        finally:
            drop_database()


def run_bench(args, env: dict, tmp: Path) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    django.setup()
    from scoring.retention import pruning

    suite_document, runs = realistic_stream(seed=7, n_runs=args.upload_runs)
    upload = tmp / "runs.jsonl"
    upload.write_bytes(b"".join(orjson.dumps(run) + b"\n" for run in runs))
    suite_id = make_suite(suite_document)
    started = time.monotonic()
    seeded = seed(suite_id, args.runs, args.submissions)
    print(f"seeded {seeded:,} rows in {time.monotonic() - started:.1f} s", flush=True)

    alone = upload_seconds(env, suite_id, upload, args.upload_runs)
    watcher = LongestTransaction()
    uploading = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", upload_script(suite_id, upload)],
        env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(1)  # the upload under way before the prune starts
    started = time.monotonic()
    with watcher.watching():
        done = pruning.prune()
    pruned = time.monotonic() - started
    beside = parse_upload(uploading.communicate()[0], args.upload_runs)

    print(f"\n{done.runs:,} expired runs in {len(done.submissions)} submissions")
    _row("rows deleted", f"{done.rows:,} in {pruned:.1f} s: {done.rows / pruned:,.0f} rows/s")
    _row("largest transaction", f"{done.largest_batch:,} rows")
    _row("longest transaction", f"{watcher.longest * 1000:,.0f} ms")
    _row("reviewed runs noted", f"{done.reviewed_runs:,}")
    _row("upload alone", f"{alone:.1f} s: {args.upload_runs / alone:,.0f} runs/s")
    _row("upload beside the prune", f"{beside:.1f} s: {args.upload_runs / beside:,.0f} runs/s")


def make_suite(document: dict) -> int:
    from cases import services
    from cases.models import User

    user = User.objects.create_user("bench", password="bench-password")
    team = services.create_team("Bench", user)
    return services.create_suite(team, document, user).pk


def seed(suite_id: int, n_runs: int, n_submissions: int) -> int:
    """Expired live submissions of ``n_runs`` runs in all, with their results, predicate
    rows and a few reviews, written by COPY; the rows written."""
    from django.utils import timezone

    from cases.models import Suite
    from scoring.ingest.bulk import insert_rows
    from scoring.models import PredicateResult, Result, Review, Run, Status, Submission

    suite = Suite.objects.get(pk=suite_id)
    document = orjson.dumps({"case": "c", "batches": [[{"name": "t", "arguments": {}}]]})
    per_submission = n_runs // n_submissions
    rows = 0
    for day in range(n_submissions):
        live_day = (timezone.now() - timedelta(days=40 + day)).date()
        submission = Submission.objects.create(
            suite=suite, version=suite.latest_version, label="live", live_day=live_day,
            status=Status.DONE, chunk_runs=1, stored_runs=per_submission,
            total=per_submission, scored=per_submission, passed=per_submission // 2,
            failed=per_submission - per_submission // 2,
        )  # fmt: skip
        rows += insert_rows(
            Run,
            ["submission_id", "seq", "line", "case_key", "case_order", "trial", "trial_given",
             "document", "final_text", "tools", "meta_values"],
            ((submission.pk, seq, seq, f"case-{seq % 50}", f"case-{seq % 50}", seq // 50, False,
              orjson.loads(document), "done", "\nt\n", {}) for seq in range(1, per_submission + 1)),
        )  # fmt: skip
        run_ids = list(Run.objects.filter(submission=submission).values_list("pk", flat=True))
        rows += insert_rows(
            Result,
            ["run_id", "submission_id", "verdict", "report", "scored_at", "signature"],
            ((pk, submission.pk, "fail" if pk % 2 else "pass", {}, timezone.now(), "")
             for pk in run_ids),
        )  # fmt: skip
        rows += insert_rows(
            PredicateResult,
            ["result_id", "submission_id", "kind", "index", "label", "detail", "cause_kind",
             "cause_tool", "cause_argument"],
            ((pk, submission.pk, "call", i, f"calls t ({i})", "", "", "", "")
             for pk in run_ids for i in range(PREDICATES_PER_RUN)),
        )  # fmt: skip
        rows += insert_rows(
            Review,
            ["run_id", "submission_id", "status", "updated"],
            ((pk, submission.pk, "regression", timezone.now()) for pk in run_ids[::REVIEWED_EVERY]),
        )
    return rows


def upload_script(suite_id: int, path: Path) -> str:
    return f"SUITE_ID = {suite_id}\nPATH = {str(path)!r}\n{UPLOAD}"


def upload_seconds(env: dict, suite_id: int, path: Path, n_runs: int) -> float:
    out = run_script(env, UPLOAD, SUITE_ID=suite_id, PATH=str(path))
    return parse_upload(out, n_runs)


def parse_upload(out: str, n_runs: int) -> float:
    status, scored, seconds = out.split()[-3:]
    if status != "done" or int(scored) != n_runs:
        raise SystemExit(f"the upload did not complete: {out[-500:]}")
    return float(seconds)


class LongestTransaction:
    """The longest transaction of this process's database connection, as PostgreSQL's
    ``pg_stat_activity`` shows it, polled from a connection of its own."""

    def __init__(self):
        self.longest = 0.0
        self._stop = threading.Event()

    def watching(self):
        from django.db import connection

        connection.ensure_connection()
        self._pid = connection.connection.info.backend_pid
        self._thread = threading.Thread(target=self._poll)
        self._thread.start()
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _poll(self):
        import psycopg

        query = (
            "SELECT extract(epoch FROM clock_timestamp() - xact_start) FROM pg_stat_activity "
            "WHERE pid = %s AND xact_start IS NOT NULL"
        )
        with psycopg.connect(f"{PG}/{DATABASE}", autocommit=True) as conn:
            while not self._stop.is_set():
                row = conn.execute(query, (self._pid,)).fetchone()
                if row:
                    self.longest = max(self.longest, float(row[0]))
                time.sleep(0.005)


def drop_database() -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def _row(what: str, figure: str) -> None:
    print(f"  {what:<26} {figure}")


if __name__ == "__main__":
    main()
