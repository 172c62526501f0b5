"""Matcher benchmark: typical throughput, adversarial worst case, and `manage.py score` end to end.

    python bench/matcher.py            # all three figures
    python bench/matcher.py --runs 20000 --e2e-runs 100000

Targets (issue #2): ≥ 25,000 typical case-runs per second per core through score(); no
adversarial case above 50 ms; and the time of `manage.py score --json` on 100,000 runs.
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

from bench.datagen import adversarial_cases, realistic_pairs, realistic_stream  # noqa: E402
from scoring.matcher import load_run, load_suite, score  # noqa: E402


def typical(n_runs: int, seconds: float) -> None:
    suite_doc, run_docs = realistic_pairs(seed=2026, n_runs=n_runs)
    suite = load_suite(suite_doc)
    pairs = [(suite.case(doc["case"]), load_run(doc)) for doc in run_docs]
    verdicts = {}
    for case, run in pairs:
        verdict = score(case, run).verdict
        verdicts[verdict] = verdicts.get(verdict, 0) + 1

    def rate(fn) -> tuple[float, float]:
        """Median and best of five rounds, in case-runs per second (shared machines are noisy)."""
        # The runs held for the loop are frozen out of the cyclic GC, as if streamed: a
        # scorer that held 10,000 runs would spend its time in the collector, not scoring.
        gc.collect()
        gc.freeze()
        rounds = []
        for _ in range(5):
            done, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds / 5:
                fn()
                done += len(pairs)
            rounds.append(done / (time.perf_counter() - start))
        gc.unfreeze()
        return statistics.median(rounds), max(rounds)

    def score_all():
        for case, run in pairs:
            score(case, run)

    cases = [suite.case(doc["case"]) for doc in run_docs]

    def load_and_score_all():
        for case, doc in zip(cases, run_docs, strict=True):
            score(case, load_run(doc))

    scored = rate(score_all)
    loaded = rate(load_and_score_all)
    calls = sum(len(run.calls) for _, run in pairs) / len(pairs)
    predicates = sum(len(score(c, r).predicates) for c, r in pairs[:2000]) / min(2000, len(pairs))
    print(
        f"typical: {len(pairs):,} runs of {len(suite.cases)} cases, {calls:.1f} calls and "
        f"{predicates:.1f} predicates per run on average; verdicts {verdicts}"
    )
    print(
        f"  score():              {scored[0]:>8,.0f} case-runs/s on one core "
        f"(median of 5 rounds; best {scored[1]:,.0f})"
    )
    print(
        f"  load_run() + score(): {loaded[0]:>8,.0f} case-runs/s on one core "
        f"(median of 5 rounds; best {loaded[1]:,.0f})"
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
        command = [sys.executable, str(ROOT / "manage.py"), "score", str(suite_path),
                   str(runs_path), "--json"]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)  # fmt: skip
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
    adversarial()


if __name__ == "__main__":
    main()
