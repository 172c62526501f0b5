"""A long run of the importers' fuzz (tests/importers/test_fuzz.py): whatever a line holds,
reading it raises only ``InvalidInput`` (docs/formats.md#run-formats).

    python bench/fuzz_importers.py                  # 28,000 lines, about 200,000 conversions
    python bench/fuzz_importers.py --examples 2000

Each example is a mutated real line (tests/support/fuzzing.py), read as detected and forced
into every format, so one example is ``1 + len(FORMAT_NAMES)`` conversions (none for a
line nested deeper than the reader reads: it never reaches an importer). It prints the
conversions made, their rate, and each distinct crash site (file and line of the exception
that was not ``InvalidInput``) with an example line; it exits 1 when it found any.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

from hypothesis import HealthCheck, Phase, given, settings

from scoring.importers import FORMAT_NAMES
from scoring.matcher import nested_deeper_than
from scoring.runfiles.reader import MAX_DEPTH
from tests.support.fuzzing import mutations, problems_of, text_of

FORMATS = [None, *FORMAT_NAMES]


def crash_site(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=28_000)
    args = parser.parse_args()
    crashes: dict[str, tuple[str, bytes]] = {}
    conversions = 0

    @settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(mutations())
    def search(line):
        nonlocal conversions
        text = text_of(line)
        if nested_deeper_than(text, MAX_DEPTH):
            return  # the reader refuses it before any importer sees it
        for format_name in FORMATS:
            conversions += 1
            try:
                problems_of(text, format_name)
            except Exception as exc:  # what the search looks for
                crashes.setdefault(crash_site(exc), (format_name or "detected", text[:300]))

    started = time.perf_counter()
    search()
    elapsed = time.perf_counter() - started
    print(f"{conversions:,} conversions in {elapsed:.0f} s ({conversions / elapsed:,.0f}/s)")
    print(f"{len(crashes)} crash sites")
    for site, (format_name, text) in sorted(crashes.items()):
        print(f"  {site}  (format {format_name}): {text.decode(errors='replace')}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
