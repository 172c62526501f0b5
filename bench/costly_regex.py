"""Time for a costly regex, what the pattern length limit guards against: a 50,000-character
literal pattern (``(?i)aaa…``) against runs whose final text is 1 MB of ``a``.

    python bench/costly_regex.py                       # this checkout
    python bench/costly_regex.py --root /tmp/before    # another one, for before/after

Prints the time of (a) ``manage.py score`` on that suite file and ``--runs`` such runs (now
the suite is refused, by path), and (b) scoring one run against the suite as a stored
version is loaded (leniently: how workers score a version saved before the limit).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.embedded import ROOT

PATTERN = "(?i)" + "a" * 50_000
SUITE = {
    "schema": "casebook.suite/1",
    "name": "costly",
    "cases": [{"key": "long", "expectations": [{"type": "final_text_matches", "regex": PATTERN}]}],
}
RUN = {"case": "long", "batches": [], "final_text": "a" * (1 << 20)}
LENIENT = """
import json, sys, time
from scoring.matcher import load_run, load_suite, score
suite = load_suite(json.load(open(sys.argv[1])), strict=False)
run = load_run(json.load(open(sys.argv[2])))
started = time.perf_counter()
report = score(suite.case("long"), run)
print(f"{time.perf_counter() - started:.2f} {report.verdict} {report.error}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--runs", type=int, default=1, help="runs in the file for (a)")
    args = parser.parse_args()
    root = args.root.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        suite, runs, run = Path(tmp, "suite.json"), Path(tmp, "runs.jsonl"), Path(tmp, "run.json")
        suite.write_text(json.dumps(SUITE))
        runs.write_text((json.dumps(RUN) + "\n") * args.runs)
        run.write_text(json.dumps(RUN))
        print(f"{root}: a {len(PATTERN):,}-character pattern, final texts of 1 MB")

        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "manage.py", "score", str(suite), str(runs)],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        said = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1]
        print(f"(a) manage.py score, {args.runs} run(s): {seconds:.1f} s, exit {result.returncode}")
        print(f"    {said[:160]}")

        result = subprocess.run(
            [sys.executable, "-c", LENIENT, str(suite), str(run)],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        )
        seconds, verdict, reason = result.stdout.split(" ", 2)
        print(f"(b) one run, the suite loaded as a stored version: {seconds} s, {verdict}")
        print(f"    {reason.strip()[:160]}")


if __name__ == "__main__":
    main()
