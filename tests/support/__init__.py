"""What the tests share and that is not a test: builders, data, producers' fixtures, and the
real broker and workers of the pipeline tests. No test module imports another."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
