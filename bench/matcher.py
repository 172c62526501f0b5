"""Matcher benchmark: typical throughput (plain and with argument matchers), the adversarial
worst case, and `manage.py score` end to end.

    python bench/matcher.py            # every figure
    python bench/matcher.py --e2e-runs 0 --seconds 5

Targets: ≥ 25,000 typical case-runs per second per core through score(); argument matchers
cost at most 20% of that; no adversarial case above 50 ms.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.datagen import (  # noqa: E402
    adversarial_cases,
    realistic_pairs,
    realistic_stream,
    with_matchers,
)
from cases.tool_catalog import infer_tools  # noqa: E402
from scoring.matcher import load_run, load_suite, score  # noqa: E402
from scoring.runfiles import reader  # noqa: E402
from scoring.runfiles.reader import json_lines  # noqa: E402

ROUNDS = 15
PLAIN = "score()"
MATCHERS = "score(), a third of expected values matchers"
CATALOG = "score(), every call checked against the catalog"


class Workload:
    """Typical runs loaded against one suite, ready to be scored again and again."""

    def __init__(self, suite_doc: dict, run_docs: list[dict]):
        suite = load_suite(suite_doc)
        self.run_docs = run_docs
        self.lines = [orjson.dumps(doc) + b"\n" for doc in run_docs]
        self.cases = [suite.case(doc["case"]) for doc in run_docs]
        self.runs = [load_run(doc) for doc in run_docs]
        self.n_cases = len(suite.cases)

    def score_all(self) -> None:
        for case, run in zip(self.cases, self.runs, strict=True):
            score(case, run)

    def read_all(self) -> None:
        """Each run's line parsed and checked as a run file's lines are, then loaded."""
        for _, value in json_lines(self.lines):
            load_run(value)

    def load_and_score_all(self) -> None:
        for case, doc in zip(self.cases, self.run_docs, strict=True):
            score(case, load_run(doc))

    def describe(self) -> str:
        reports = [score(case, run) for case, run in zip(self.cases, self.runs, strict=True)]
        failing = sum(report.verdict != "pass" for report in reports) / len(reports)
        calls = sum(len(run.calls) for run in self.runs) / len(self.runs)
        predicates = sum(len(report.predicates) for report in reports) / len(reports)
        return (
            f"{len(self.runs):,} runs of {self.n_cases} cases, {calls:.1f} calls and "
            f"{predicates:.1f} predicates per run on average, {failing:.0%} failing"
        )


def rates(workloads: dict[str, callable], seconds: float, n_items: int) -> dict[str, list]:
    """Case-runs per second of each workload, in interleaved rounds: a shared machine's speed
    drifts, and interleaving spreads the drift evenly over the workloads compared."""
    # The runs held for the loop are frozen out of the cyclic GC, as if streamed: a scorer
    # holding 10,000 runs would otherwise spend its time in the collector, not scoring.
    gc.collect()
    gc.freeze()
    found: dict[str, list] = {name: [] for name in workloads}
    for _ in range(ROUNDS):
        for name, fn in workloads.items():
            done, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds / ROUNDS:
                fn()
                done += n_items
            found[name].append(done / (time.perf_counter() - start))
    gc.unfreeze()
    return found


def typical(n_runs: int, seconds: float) -> None:
    suite_doc, run_docs = realistic_pairs(seed=2026, n_runs=n_runs)
    plain = Workload(suite_doc, run_docs)
    some_matchers = Workload(with_matchers(suite_doc), run_docs)
    all_matchers = Workload(with_matchers(suite_doc, share=1), run_docs)
    checked = Workload(with_catalog_checks(suite_doc, run_docs), run_docs)
    print(f"typical: {plain.describe()}")
    found = rates(
        {
            PLAIN: plain.score_all,
            MATCHERS: some_matchers.score_all,
            CATALOG: checked.score_all,
            "score(), every expected value a matcher (stress)": all_matchers.score_all,
            "load_run() + score()": plain.load_and_score_all,
            "json_lines() + load_run() (reading a run file)": plain.read_all,
        },
        seconds,
        n_runs,
    )
    for name, rounds in found.items():
        print(
            f"  {name + ':':<50} {statistics.median(rounds):>7,.0f} case-runs/s on one core "
            f"(median of {ROUNDS} rounds; best {max(rounds):,.0f})"
        )
    # Rounds run back to back, so the ratio within a round cancels the machine's drift.
    ratios = [m / p for m, p in zip(found[MATCHERS], found[PLAIN], strict=True)]
    print(
        f"  argument matchers cost {1 - statistics.median(ratios):.0%} of the throughput "
        "(median over rounds; target: at most 20%)"
    )
    ratios = [c / p for c, p in zip(found[CATALOG], found[PLAIN], strict=True)]
    print(
        f"  catalog checks (schema validation of every call) cost "
        f"{1 - statistics.median(ratios):.0%} of the throughput (median over rounds)"
    )


def with_catalog_checks(suite: dict, runs: list[dict]) -> dict:
    """The suite with a catalog drafted from the runs' own calls (so most calls are valid)
    and ``catalog_checks`` on: every call's arguments validated against its tool's schema."""
    calls = ((c["name"], c.get("arguments")) for run in runs for b in run["batches"] for c in b)
    return {**suite, "tools": infer_tools(calls), "catalog_checks": True}


def duplicate_key_cost(n_runs: int, seconds: float) -> None:
    """What the duplicate-key check on run lines costs of reading them (parse, checks and
    load_run): the same lines read with and without it, in interleaved rounds."""
    suite_doc, run_docs = realistic_pairs(seed=2026, n_runs=n_runs)
    plain = Workload(suite_doc, run_docs)
    check = reader.duplicate_key

    def unchecked() -> None:
        reader.duplicate_key = lambda raw, value: None
        try:
            plain.read_all()
        finally:
            reader.duplicate_key = check

    found = rates({"checked": plain.read_all, "unchecked": unchecked}, seconds, n_runs)
    ratios = [c / u for c, u in zip(found["checked"], found["unchecked"], strict=True)]
    print(
        f"duplicate keys: checking run lines for them costs {1 - statistics.median(ratios):.1%} "
        f"of json_lines() + load_run() ({statistics.median(found['checked']):,.0f} vs "
        f"{statistics.median(found['unchecked']):,.0f} lines/s; median over {ROUNDS} rounds)"
    )


def adversarial() -> None:
    worst = (0.0, "")
    for name, case_doc, run_doc in adversarial_cases():
        case = load_suite({"cases": [case_doc]}).case("k")
        run = load_run(run_doc)
        best = min(_timed(lambda c=case, r=run: score(c, r)) for _ in range(3))
        print(f"  {best * 1000:7.2f} ms  {score(case, run).verdict:<4}  {name}")
        worst = max(worst, (best, name))
    print(f"adversarial: worst {worst[0] * 1000:.2f} ms ({worst[1]})")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def end_to_end(n_runs: int) -> None:
    # Written one run at a time: the benchmark process stays small, so the child's peak
    # memory (which counts what it inherits at fork) is the command's own.
    suite_doc, run_docs = realistic_stream(seed=7, n_runs=n_runs)
    with tempfile.TemporaryDirectory() as tmp:
        suite_path = Path(tmp, "suite.json")
        runs_path = Path(tmp, "runs.jsonl")
        suite_path.write_bytes(orjson.dumps(suite_doc))
        with runs_path.open("wb") as out:
            for doc in run_docs:
                out.write(orjson.dumps(doc) + b"\n")
        size = runs_path.stat().st_size
        command = [sys.executable, str(ROOT / "manage.py"), "score", str(suite_path)]
        command += [str(runs_path), "--json"]
        start = time.perf_counter()
        done = subprocess.run(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
        elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"manage.py score failed ({done.returncode}): {done.stderr.decode()[:500]}"
        )
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"end to end: manage.py score --json on {n_runs:,} runs ({size / 1e6:.0f} MB): "
        f"{elapsed:.1f} s, {n_runs / elapsed:,.0f} runs/s (parse + score + print), "
        f"peak memory {peak_mb:.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="typical runs to cycle through")
    parser.add_argument("--seconds", type=float, default=5.0, help="time per throughput figure")
    parser.add_argument("--e2e-runs", type=int, default=100_000, help="runs for manage.py score")
    args = parser.parse_args()
    if args.e2e_runs:  # first, while this process is small (see end_to_end)
        end_to_end(args.e2e_runs)
    typical(args.runs, args.seconds)
    duplicate_key_cost(args.runs, args.seconds)
    adversarial()


if __name__ == "__main__":
    main()
