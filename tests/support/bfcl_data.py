"""BFCL's data in tests/fixtures/bfcl, as the BFCL tests read it."""

import json
from pathlib import Path

from scoring.benchmarks.bfcl_suites import suite_from_bfcl

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "bfcl"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")


def lines(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def imported_suite(category):
    return suite_from_bfcl(
        enumerate(lines(FIXTURE / f"{category}.questions.jsonl"), 1),
        enumerate(lines(FIXTURE / f"{category}.answers.jsonl"), 1),
        name=category,
    )
