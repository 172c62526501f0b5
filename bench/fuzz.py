"""A long run of the fuzz of everything that reads what users send (tests/security/test_fuzz.py
runs a bounded part of it): the importers, whole run files, suite files, OTLP exports, τ-bench
results, BFCL categories and tool catalogs (``tests/support/fuzzing.py``'s targets). Each
input must be read, or refused as documented, within the costs a hostile input is held to
(docs/operations.md#limits-on-hostile-input: 300 MB, 10 s of CPU).

    python bench/fuzz.py --minutes 30
    python bench/fuzz.py --minutes 5 --target "OTLP exports"

It takes the targets in turn, a batch of inputs each, until the time is up, and prints the
inputs read per target and their dearest (CPU, memory), then each distinct finding (a crash
by where it was raised, or a cost past the limits) with an example; it exits 1 when it found
any.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import FlakyStrategyDefinition

from tests.support.cost import measured
from tests.support.fuzzing import TARGETS, findings

BATCH = 200  # inputs of one target before the next target's turn


def shown(example) -> str:
    text = repr(example)
    return text if len(text) <= 300 else f"{text[:300]}… ({len(text):,} characters)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--target", action="append", help="only these (by name)")
    args = parser.parse_args()
    targets = [t for t in TARGETS if not args.target or t.name in args.target]
    found: dict[str, tuple[str, str]] = {}  # site → (what, an example)
    read: Counter = Counter()
    dearest: dict[str, tuple[float, float]] = {t.name: (0.0, 0.0) for t in targets}
    stop = time.monotonic() + args.minutes * 60

    for target in _turns(targets, stop):
        _search(target, read, dearest, found)

    print(f"{sum(read.values()):,} inputs in {args.minutes:g} min")
    for target in targets:
        cpu, megabytes = dearest[target.name]
        print(f"  {target.name}: {read[target.name]:,}, dearest {cpu:.2f} s, {megabytes:.0f} MB")
    print(f"{len(found)} findings")
    for site, (detail, example) in sorted(found.items()):
        print(f"  {site}: {detail}\n    {example}")
    return 1 if found else 0


def _search(target, read: Counter, dearest: dict, found: dict) -> None:
    """A batch of the target's inputs, each read once; what each cost and found noted."""

    @settings(
        max_examples=BATCH,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(target.inputs())
    def search(example):
        read[target.name] += 1
        with measured() as cost:
            problems = findings(target, example)
        cpu, megabytes = dearest[target.name]
        dearest[target.name] = (max(cpu, cost.cpu_seconds), max(megabytes, cost.megabytes))
        for problem in problems:
            found.setdefault(problem.site, (problem.detail, shown(example)))

    # Hypothesis's own check, when a mutation drew differently on its replay (rare under
    # phases=[generate]): the batch ends there, the inputs read so far counted.
    with contextlib.suppress(FlakyStrategyDefinition):
        search()


def _turns(targets, stop: float):
    while time.monotonic() < stop:
        for target in targets:
            if time.monotonic() >= stop:
                return
            yield target


if __name__ == "__main__":
    sys.exit(main())
