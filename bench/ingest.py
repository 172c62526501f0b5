"""Upload-to-results benchmark: N runs uploaded through the API to a live server backed by
PostgreSQL, Redis and two Celery workers, read and scored as docs/pipeline.md describes.

    python bench/ingest.py                                  # 100,000 runs, each format
    python bench/ingest.py --runs 1000000 --format canonical --gzip   # memory vs file size

Prints, per format: the file's size, runs ingested per second (upload start to the last
run stored), runs scored per second end to end (upload start to the submission done), the
peak resident memory and CPU time of every process (the web server's and each worker's),
and the machine's load average as it ends. Targets on
a 2-core machine: 100,000 runs in under 60 s end to end; every process under 300 MB, also
for a file ten times that size.

The stack is started here (bench/stack.py): a fresh database (``casebook_bench`` unless
``--database``; dropped and made again), gunicorn with DEBUG off, two Celery workers (one
process each, ``--workers``), Redis database 15 (``--redis-db``). Runs are made by
``bench.datagen`` (realistic: 5-20 calls in 2-6 batches, ~60% passing); ``--keep-files``
keeps the files to use again.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.datagen import as_openai_chat, realistic_stream  # noqa: E402
from bench.stack import (  # noqa: E402
    REDIS_DB,
    Stack,
    free_port,
    fresh_database,
    run_script,
    stack_environment,
    upload_and_wait,
)

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
    parser.add_argument("--database", default="casebook_bench", help="dropped and made again")
    parser.add_argument("--redis-db", type=int, default=REDIS_DB)
    parser.add_argument(
        "--keep-files", type=Path, help="keep the generated run files here, and reuse them"
    )
    args = parser.parse_args()

    formats = ["canonical", "openai"] if args.format == "both" else [args.format]
    args.port = args.port or free_port()
    with tempfile.TemporaryDirectory(prefix="casebook-bench-") as tmp:
        tmp = Path(tmp)
        suite = None
        files = {}
        for name in formats:
            suite, files[name] = write_runs(
                args.keep_files or tmp, name, args.runs, compress=args.gzip
            )
        env = stack_environment(tmp, args.database, args.redis_db)
        fresh_database(env)
        suite_id, token = run_script(env, SETUP, SUITE=suite).split()[-2:]
        with Stack(env, args.port, args.workers, tmp) as stack:
            for name in formats:
                cpu_before = stack.cpu_seconds()
                figures = upload_and_wait(args.port, token, int(suite_id), files[name], args.runs)
                cpu = {k: v - cpu_before.get(k, 0) for k, v in stack.cpu_seconds().items()}
                report(name, files[name], args.runs, figures, stack.peak_memory(), cpu)


def write_runs(folder: Path, name: str, n_runs: int, *, compress: bool) -> tuple[dict, Path]:
    """The suite and a file of ``n_runs`` runs in format ``name``; a file already in
    ``folder`` (``--keep-files``) is used again, as the runs are made the same each time."""
    suite, runs = realistic_stream(seed=5, n_runs=n_runs)
    path = folder / f"runs-{name}-{n_runs}.jsonl{'.gz' if compress else ''}"
    if path.exists():
        return suite, path
    print(f"generating {n_runs:,} runs, {name} format ...", flush=True)
    opener = gzip.open(path, "wb", compresslevel=3) if compress else open(path, "wb")  # noqa: SIM115
    with opener as out:
        for run in runs:
            out.write(orjson.dumps(as_openai_chat(run) if name == "openai" else run) + b"\n")
    return suite, path


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
    # The machine may be shared: the figures above are only comparable at like loads.
    _row("load average, 1/5/15 min", " / ".join(f"{load:.2f}" for load in os.getloadavg()))
    sys.stdout.flush()


def _row(what: str, figure: str, note: str = "") -> None:
    print(f"  {what:<28} {figure}{'   (' + note + ')' if note else ''}")


if __name__ == "__main__":
    if not shutil.which("redis-cli"):
        raise SystemExit("needs redis-cli (and a Redis server on 127.0.0.1:6379)")
    main()
