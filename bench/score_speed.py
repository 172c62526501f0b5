"""Reading run files and `manage.py score`, this tree against earlier commits.

    python bench/score_speed.py                    # against the two commits named below
    python bench/score_speed.py --before HEAD~3 --runs 5000 --rounds 1

Prints, for canonical run lines (bench.datagen's realistic runs) and OpenAI-messages lines
(the τ-bench airline trajectories of tests/support/tau_bench.py, replicated): runs/s of parsing the
lines with orjson alone (the floor), of import + load alone (`read_run_lines`: read the
file as the tree's `manage.py score` opens it, parse, the duplicate-key check, detect,
convert, `load_run`; one process), of `score()` on runs already loaded, and of `manage.py
score --json` end to end (process start included) with --jobs 1 and --jobs 2, with the
peak memory of its processes; and the same of `casebook score --json` (the command without
Django, docs/command-line.md#the-casebook-command), this tree's, against `manage.py score`.
Each "before" is the code of a --before commit, exported to a temporary directory and
measured in the same run, rounds interleaved so that a shared
machine's drift falls on all alike; each tree's command runs in its own directory (Celery
puts the working directory first on sys.path, which would mix the trees) and must write a
report for every run. The machine's free cores are measured too: --jobs 2 cannot beat
--jobs 1 on a machine whose other load leaves one core.

CPU seconds on a shared VM drift by a third from minute to minute; ``--instructions`` also
counts the instructions that import + load takes per line, with valgrind's callgrind: the
same count every time for the same code and input, whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import io
import json
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
from tests.support import tau_bench  # noqa: E402

# What "before" means, twice: main before the newer run formats and checks (the first
# figures for reading run files were of this code), and main once those were in (the
# duplicate-key refusal, the transcript and notes) but reading was not yet made faster: the
# same work as now, done slower.
BEFORE = {
    "a6b663f1353301c5acaf495cb20b1f38dc1979ae": "before the newer run formats and checks",
    "2313a0d99233b04dd920474719d38bc1266499e7": "with them, before reading was made faster",
}

# Run in a child process with the tree's code first on the path: the CPU seconds of reading
# the file (process start and imports left out; CPU, not wall, time: a shared machine's
# other load then costs the figure little), then of scoring its first runs, loaded.
_READ = """
import gc, sys, time
sys.path.insert(0, sys.argv[1])
from itertools import islice
try:
    from scoring.runfiles import reader
except ModuleNotFoundError:  # a tree from before scoring/runfiles/ (scoring/runfile.py)
    from scoring import runfile as reader
from scoring.matcher import load_suite, parse_suite_document, score
buffering = getattr(reader, "READ_BUFFER", -1)  # as the tree's manage.py score opens it
def runs():
    with open(sys.argv[2], "rb", buffering=buffering) as stream:
        for item in reader.read_run_lines(stream, max_line_bytes=1 << 24):
            if item.run:
                yield item.run
start = time.process_time()
count = sum(1 for _ in runs())
read = time.process_time() - start
suite = load_suite(parse_suite_document(open(sys.argv[3], "rb").read(), "suite.json"))
pairs = [(suite.case(run.case), run) for run in islice(runs(), 2000)]
gc.freeze()  # held for the loop, as if streamed (bench/matcher.py)
start = time.process_time()
for case, run in pairs:
    score(case, run)
print(count, read, len(pairs), time.process_time() - start)
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
    """(name, suite file, run file, runs) for canonical lines, written compact (as orjson and
    Casebook write them) and as Python's json.dumps writes them (spaces after separators),
    and OpenAI-messages lines."""
    suite_doc, run_docs = realistic_stream(seed=7, n_runs=n_runs)
    suite = tmp / "canonical.suite.json"
    suite.write_bytes(orjson.dumps(suite_doc))
    compact, spaced = tmp / "canonical.jsonl", tmp / "canonical-spaced.jsonl"
    with compact.open("wb") as out, spaced.open("w") as spaced_out:
        for doc in run_docs:
            out.write(orjson.dumps(doc) + b"\n")
            spaced_out.write(json.dumps(doc) + "\n")
    tau = (tmp / "tau.suite.json", tmp / "tau.jsonl")
    tau[0].write_bytes(orjson.dumps(tau_bench.suite_document()))
    tau[1].write_bytes(tau_bench.run_file(copies=tau_copies))
    return [
        ("canonical lines, compact", suite, compact, n_runs),
        ("canonical lines, json.dumps spacing", suite, spaced, n_runs),
        ("OpenAI messages (τ-bench traj, json.dumps)", *tau, len(tau_bench.RECORDS) * tau_copies),
    ]


def orjson_rate(runs: Path) -> float:
    """Lines per CPU second of orjson.loads alone."""
    start = time.process_time()
    count = 0
    with runs.open("rb") as stream:
        for line in stream:
            orjson.loads(line)
            count += 1
    return count / (time.process_time() - start)


def read_rates(tree: Path, suite: Path, runs: Path, n_runs: int) -> tuple[float, float]:
    """Runs per CPU second of import + load, and of ``score()`` on loaded runs."""
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(tree), str(runs), str(suite)],
        capture_output=True,
        text=True,
        check=True,
    )
    count, read, scored, scoring = done.stdout.split()
    if int(count) != n_runs:
        raise SystemExit(f"{tree}: read {count} runs of {n_runs}")
    return n_runs / float(read), int(scored) / float(scoring)


# Import + load of the first N lines of a run file, for callgrind to count (``--instructions``):
# the lines are read into memory first, so the count is the reading of a stream in memory,
# parsing, checking, converting and loading, with nothing of the disk in it.
_COUNT = """
import io, sys
sys.path.insert(0, sys.argv[1])
try:
    from scoring.runfiles import reader
except ModuleNotFoundError:  # a tree from before scoring/runfiles/ (scoring/runfile.py)
    from scoring import runfile as reader
lines = open(sys.argv[2], "rb").readlines()[: int(sys.argv[3])]
stream = io.BufferedReader(io.BytesIO(b"".join(lines)), 1 << 20)
count = sum(1 for item in reader.read_run_lines(stream, max_line_bytes=1 << 24) if item.run)
assert count == len(lines), count
"""
COUNTED_LINES = (100, 500)  # the count per line is the difference over the lines between


def instructions_per_line(tree: Path, runs: Path) -> float:
    """Instructions per line of import + load: callgrind's total over ``COUNTED_LINES[1]``
    lines less that over ``COUNTED_LINES[0]`` (start-up and imports cancel out)."""
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    totals = []
    for lines in COUNTED_LINES:
        done = subprocess.run(
            [*valgrind, sys.executable, "-c", _COUNT, str(tree), str(runs), str(lines)],
            capture_output=True,
            text=True,
            check=True,
        )
        totals.append(int(done.stderr.split("Collected : ")[1].split()[0]))
    return (totals[1] - totals[0]) / (COUNTED_LINES[1] - COUNTED_LINES[0])


# ``manage.py score`` in a grandchild, so that the peak memory reported (the largest of its
# processes', main or worker) is the command's own, not the benchmark's; with the number of
# reports it wrote (one "verdict" key each), so that a command that fails is no figure.
_PEAK = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sys.stderr.buffer.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.stdout.count(b'"verdict":'))
raise SystemExit(done.returncode)
"""


MANAGE_PY, CASEBOOK = "manage.py score", "casebook score"


def score_rate(
    tree: Path, suite: Path, runs: Path, n_runs: int, jobs: int | None, program=MANAGE_PY
) -> tuple[float, float, float]:
    """Runs per wall-clock second, CPU seconds per thousand runs (every process of the
    command's), and the peak memory in MB of its largest process, of ``manage.py score
    --json`` (or ``casebook score --json``, run as ``python -m casebook`` in the tree)."""
    start_of = [str(tree / "manage.py")] if program == MANAGE_PY else ["-m", "scoring.cli"]
    command = [sys.executable, *start_of, "score", str(suite), str(runs), "--json"]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    used = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *command],
        capture_output=True,
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        check=False,
    )
    elapsed = time.perf_counter() - start
    peak, reports = (int(figure) for figure in done.stdout.split())
    if done.returncode not in (0, 1) or reports != n_runs:
        raise SystemExit(
            f"{command}: exit {done.returncode}, {reports:,} reports of {n_runs:,}:"
            f" {done.stderr.decode()[-500:]}"
        )
    return n_runs / elapsed, (_children_cpu() - used) / n_runs * 1000, peak / 1024


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
    parser.add_argument(
        "--before",
        action="append",
        help="a commit to compare with (repeat for more; default: the two of BEFORE)",
    )
    parser.add_argument("--runs", type=int, default=20_000, help="canonical runs")
    parser.add_argument("--tau-copies", type=int, default=25, help="copies of τ-bench's 200")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; medians are printed")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count import + load's instructions per line (valgrind; a few minutes)",
    )
    args = parser.parse_args()
    befores = dict.fromkeys(args.before, "") if args.before else BEFORE
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for commit, when in befores.items():
            label = f"before {commit[:7]}"
            trees[label] = export(commit, Path(tmp, commit))
            print(f"{label}: {commit}" + (f", {when}" if when else ""))
        trees["after"] = ROOT
        print(f"after: the working tree ({ROOT})")
        print(f"cores free for two processes now: {free_cores():.1f} of {os.cpu_count()}")
        for name, suite, runs, n_runs in inputs(Path(tmp), args.runs, args.tau_copies):
            size = runs.stat().st_size / 1e6
            print(f"\n{name}: {n_runs:,} runs, {size:.0f} MB")
            measure(suite, runs, n_runs, trees, args.rounds)
            if args.instructions:
                count_instructions(runs, trees)


def measure(suite: Path, runs: Path, n_runs: int, trees: dict[str, Path], rounds: int) -> None:
    """Every figure for one input, over ``trees`` (the befores, then "after")."""
    befores = [label for label in trees if label != "after"]
    commands = {f"{label} (one process)": (trees[label], None, MANAGE_PY) for label in befores}
    commands |= {"after, --jobs 1": (ROOT, 1, MANAGE_PY), "after, --jobs 2": (ROOT, 2, MANAGE_PY)}
    commands |= {f"after, --jobs {jobs}, casebook": (ROOT, jobs, CASEBOOK) for jobs in (1, 2)}
    floor: list[float] = []
    reads: dict[str, list] = {label: [] for label in trees}
    scores: dict[str, list] = {label: [] for label in commands}
    for _ in range(rounds):  # interleaved: a shared machine's drift falls on all alike
        floor.append(orjson_rate(runs))
        for label, tree in trees.items():
            reads[label].append(read_rates(tree, suite, runs, n_runs))
        for label, (tree, jobs, program) in commands.items():
            scores[label].append(score_rate(tree, suite, runs, n_runs, jobs, program))
    median = statistics.median

    def ratio(figures: dict[str, list], after: str, before: str) -> float:
        """The median of the rounds' ratios of the first figure, after over before."""
        pairs = zip(figures[after], figures[before], strict=True)
        return median(a[0] / b[0] for a, b in pairs)

    print(f"  {'orjson.loads alone (the floor):':<48} {median(floor):>9,.0f} runs per CPU second")
    for label in trees:
        rate = median(read for read, _ in reads[label])
        print(f"  {f'import + load, {label}:':<48} {rate:>9,.0f} runs per CPU second")
    for label in befores:
        print(f"  import + load: {ratio(reads, 'after', label):.2f}x {label}")
    for label in trees:
        rate = median(scoring for _, scoring in reads[label])
        print(f"  {f'score() on loaded runs, {label}:':<48} {rate:>9,.0f} runs per CPU second")
    for label, (_, _, program) in commands.items():
        rate = median(rate for rate, _, _ in scores[label])
        cpu = median(cpu for _, cpu, _ in scores[label])
        peak = max(peak for _, _, peak in scores[label])
        shown = label.removesuffix(", casebook")
        print(
            f"  {f'{program} --json, {shown}:':<48} {rate:>9,.0f} runs/s wall, "
            f"{cpu:.3f} CPU s per 1,000 runs (all processes), peak {peak:.0f} MB"
        )
    for after in ("after, --jobs 1", "after, --jobs 2"):
        for before in befores:
            figure = ratio(scores, after, f"{before} (one process)")
            print(f"  manage.py score {after}: {figure:.2f}x {before}, wall clock")
    for jobs in (1, 2):
        figure = ratio(scores, f"after, --jobs {jobs}, casebook", f"after, --jobs {jobs}")
        print(f"  casebook score --jobs {jobs}: {figure:.2f}x manage.py score, wall clock")
    alone, _ = cpu_split(suite, runs, 1)
    main_cpu, workers_cpu = cpu_split(suite, runs, 2)
    bound = max(main_cpu, (main_cpu + workers_cpu) / 2)
    print(
        f"  CPU past start: --jobs 1 {alone:.2f} s; --jobs 2 main process {main_cpu:.2f}"
        f" s, workers {workers_cpu:.2f} s: on two free cores at least {bound:.2f} s (half"
        f" of all, or the main process if more), {alone / bound:.2f}x --jobs 1 at best"
    )


def count_instructions(runs: Path, trees: dict[str, Path]) -> None:
    counts = {label: instructions_per_line(tree, runs) for label, tree in trees.items()}
    for label, count in counts.items():
        print(f"  {f'import + load, {label}:':<48} {count:>9,.0f} instructions per line")
    for label in trees:
        if label != "after":
            print(f"  import + load: {counts[label] / counts['after']:.2f}x {label}, instructions")


if __name__ == "__main__":
    main()
