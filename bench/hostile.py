"""What each of the hostile inputs of tests/security/test_hostile_costs.py costs the process
that takes it: the peak of its resident memory above what it held before, and its CPU time
(tests/support/cost.py), against the limits of docs/operations.md#limits-on-hostile-input
(300 MB, 10 s of CPU).

    python bench/hostile.py                      # SQLite, as the tests run
    DATABASE_URL=postgres://... python bench/hostile.py

It runs the tests (each input is built and sent as they send it) and prints a line per
measure, in the order they ran; it exits 1 when a test failed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COST = re.compile(r"cost of \S+::(\S+): ([\d,]+) MB peak, ([\d.]+) s of CPU")


def main() -> int:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/security/test_hostile_costs.py", "-s", "-q",
         "-p", "no:cacheprovider", *sys.argv[1:]],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    print(f"{'input':<86} {'MB':>6} {'CPU s':>7}")
    for test, megabytes, cpu in COST.findall(done.stdout):
        print(f"{test:<86} {megabytes:>6} {cpu:>7}")
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:])
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
