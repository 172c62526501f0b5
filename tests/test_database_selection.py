"""CI's second pass, on PostgreSQL, runs only the tests that touch the database
(``CASEBOOK_TESTS=database``, docs/development.md#tests): a test that uses the database is
never left out of it, and one that cannot use it is."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FILE = "tests/results/test_rewards.py"
PURE = f"{FILE}::test_the_reward_is_a_finite_number_of_meta_and_a_full_one_goes_with_a_pass"
WITH_DATABASE = f"{FILE}::test_each_run_keeps_its_reward_and_the_submission_counts_the_agreement"


def collected(selection: str | None) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k != "CASEBOOK_TESTS"}
    if selection is not None:
        env["CASEBOOK_TESTS"] = selection
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", FILE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return {line for line in done.stdout.splitlines() if line.startswith(FILE)}


def test_the_database_pass_keeps_the_tests_that_touch_it_and_leaves_out_the_rest():
    every = collected(None)
    assert {PURE, WITH_DATABASE} <= every
    database = collected("database")
    assert WITH_DATABASE in database
    assert PURE not in database
    assert database < every
