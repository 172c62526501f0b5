"""Reading run files and `manage.py score`, before and after (issue 12, section 5).

    python bench/score_speed.py                    # against the code of --before
    python bench/score_speed.py --before HEAD~3 --runs 5000 --rounds 1

Prints, for canonical run lines (bench.datagen's realistic runs) and OpenAI-messages lines
(the τ-bench airline trajectories of tests/tau_bench.py, replicated): runs/s of parsing the
lines with orjson alone (the floor), of import + load alone (`read_run_lines`: parse, the
duplicate-key check, detect, convert, `load_run`; one process), and of `manage.py score
--json` end to end (process start included) with --jobs 1 and --jobs 2. "before" is the
code of the --before commit, exported to a temporary directory and measured in the same
run, rounds interleaved so that a shared machine's drift falls on both alike. The machine's
free cores are measured too: --jobs 2 cannot beat --jobs 1 on a machine whose other load
leaves one core.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.datagen import realistic_stream  # noqa: E402
from tests import tau_bench  # noqa: E402

# The commit before the work on section 5 (main when it began).
BEFORE = "2313a0d99233b04dd920474719d38bc1266499e7"

# Run in a child process with the tree's code first on the path: the CPU seconds of reading
# the file (process start and imports left out; CPU, not wall, time: a shared machine's
# other load then costs the figure little).
_READ = """
import sys, time
sys.path.insert(0, sys.argv[1])
from scoring.runfile import read_run_lines
start = time.process_time()
with open(sys.argv[2], "rb") as stream:
    count = sum(1 for item in read_run_lines(stream, max_line_bytes=1 << 24) if item.run)
print(count, time.process_time() - start)
"""


# `manage.py score --json --jobs N` in a child, past its start: the CPU seconds of its main
# process (reading lines, putting results in order, writing) and of its workers, apart.
_SPLIT = """
import os, resource, sys, time
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
import django
django.setup()
from django.core.management import call_command
start = time.process_time()
out = open(os.devnull, "w")
try:
    call_command("score", sys.argv[2], sys.argv[3], "--json", "--jobs", sys.argv[4], stdout=out)
except SystemExit:
    pass
workers = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.process_time() - start, workers.ru_utime + workers.ru_stime)
"""


def export(commit: str, into: Path) -> Path:
    """The code of ``commit``, as ``git archive`` writes it, under ``into``."""
    archive = subprocess.run(
        ["git", "archive", commit], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def inputs(tmp: Path, n_runs: int, tau_copies: int) -> list[tuple[str, Path, Path, int]]:
    """(name, suite file, run file, runs) for canonical lines and OpenAI-messages lines."""
    suite_doc, run_docs = realistic_stream(seed=7, n_runs=n_runs)
    canonical = (tmp / "canonical.suite.json", tmp / "canonical.jsonl")
    canonical[0].write_bytes(orjson.dumps(suite_doc))
    with canonical[1].open("wb") as out:
        for doc in run_docs:
            out.write(orjson.dumps(doc) + b"\n")
    tau = (tmp / "tau.suite.json", tmp / "tau.jsonl")
    tau[0].write_bytes(orjson.dumps(tau_bench.suite_document()))
    tau[1].write_bytes(tau_bench.run_file(copies=tau_copies))
    return [
        ("canonical lines", *canonical, n_runs),
        ("OpenAI messages (τ-bench traj)", *tau, len(tau_bench.RECORDS) * tau_copies),
    ]


def orjson_rate(runs: Path) -> float:
    start = time.perf_counter()
    count = 0
    with runs.open("rb") as stream:
        for line in stream:
            orjson.loads(line)
            count += 1
    return count / (time.perf_counter() - start)


def read_rate(tree: Path, runs: Path, n_runs: int) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(tree), str(runs)],
        capture_output=True,
        text=True,
        check=True,
    )
    count, seconds = done.stdout.split()
    if int(count) != n_runs:
        raise SystemExit(f"{tree}: read {count} runs of {n_runs}")
    return n_runs / float(seconds)


def score_rate(
    tree: Path, suite: Path, runs: Path, n_runs: int, jobs: int | None
) -> tuple[float, float]:
    """Runs per wall-clock second, and CPU seconds per thousand runs (every process of the
    command's), of ``manage.py score --json``."""
    command = [sys.executable, str(tree / "manage.py"), "score", str(suite), str(runs), "--json"]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    used = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(tree)},
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command}: exit {done.returncode}: {done.stderr.decode()[:500]}")
    return n_runs / elapsed, (_children_cpu() - used) / n_runs * 1000


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_split(suite: Path, runs: Path, jobs: int) -> tuple[float, float]:
    """(main process, workers) CPU seconds of ``manage.py score --json --jobs N``."""
    done = subprocess.run(
        [sys.executable, "-c", _SPLIT, str(ROOT), str(suite), str(runs), str(jobs)],
        capture_output=True,
        text=True,
        check=True,
    )
    main_cpu, workers_cpu = done.stdout.split()
    return float(main_cpu), float(workers_cpu)


def free_cores() -> float:
    """How many cores two CPU-bound processes get here now (2.0 on an idle two-core machine)."""

    def burn(n: int) -> float:
        start = time.perf_counter()
        loop = "sum(range(20_000_000))"
        children = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(n)]
        for child in children:
            child.wait()
        return time.perf_counter() - start

    return 2 * burn(1) / burn(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=20_000, help="canonical runs")
    parser.add_argument("--tau-copies", type=int, default=25, help="copies of τ-bench's 200")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; medians are printed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = export(args.before, Path(tmp, "before"))
        print(f"before: {args.before[:12]}; after: the working tree ({ROOT})")
        print(f"cores free for two processes now: {free_cores():.1f} of {os.cpu_count()}")
        for name, suite, runs, n_runs in inputs(Path(tmp), args.runs, args.tau_copies):
            size = runs.stat().st_size / 1e6
            print(f"\n{name}: {n_runs:,} runs, {size:.0f} MB")
            reads = {
                "orjson.loads alone (the floor)": lambda r=runs: orjson_rate(r),
                "import + load, before": lambda r=runs, n=n_runs: read_rate(before, r, n),
                "import + load, after": lambda r=runs, n=n_runs: read_rate(ROOT, r, n),
            }
            scores = {"manage.py score --json, before": (before, None)}
            for jobs in (1, 2):
                scores[f"manage.py score --json --jobs {jobs}, after"] = (ROOT, jobs)
            found: dict[str, list] = {label: [] for label in [*reads, *scores]}
            for _ in range(args.rounds):
                for label, measure in reads.items():
                    found[label].append(measure())
                for label, (tree, jobs) in scores.items():
                    found[label].append(score_rate(tree, suite, runs, n_runs, jobs))
            for label in reads:
                rate = statistics.median(found[label])
                unit = "per second" if label.startswith("orjson") else "per CPU second"
                print(f"  {label + ':':<46} {rate:>9,.0f} runs {unit}")
            for label in scores:
                rate = statistics.median(rate for rate, _ in found[label])
                cpu = statistics.median(cpu for _, cpu in found[label])
                print(
                    f"  {label + ':':<46} {rate:>9,.0f} runs/s, "
                    f"{cpu:.3f} CPU s per 1,000 runs (all processes)"
                )
            read = statistics.median(
                new / old
                for new, old in zip(
                    found["import + load, after"], found["import + load, before"], strict=True
                )
            )
            print(f"  import + load: {read:.2f}x before (median of the rounds' ratios)")
            for jobs in (1, 2):
                after = found[f"manage.py score --json --jobs {jobs}, after"]
                ratio = statistics.median(
                    a[0] / b[0]
                    for a, b in zip(after, found["manage.py score --json, before"], strict=True)
                )
                print(f"  manage.py score --jobs {jobs}: {ratio:.2f}x before, wall clock")
            alone, _ = cpu_split(suite, runs, 1)
            main_cpu, workers_cpu = cpu_split(suite, runs, 2)
            bound = max(main_cpu, (main_cpu + workers_cpu) / 2)
            print(
                f"  CPU past start: --jobs 1 {alone:.2f} s; --jobs 2 main process {main_cpu:.2f}"
                f" s, workers {workers_cpu:.2f} s: on two free cores at least {bound:.2f} s (half"
                f" of all, or the main process if more), {alone / bound:.2f}x --jobs 1 at best"
            )


if __name__ == "__main__":
    main()
