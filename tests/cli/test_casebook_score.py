"""``casebook score`` (docs/command-line.md#the-casebook-command): the same command as
``manage.py score``, run without Django. Both run as a user runs them: subprocesses, real
files."""

import dataclasses
import json
import subprocess
import sys

import pytest
from django.conf import settings

from scoring.runfiles.command import OfflineSettings
from tests.support.commands import (
    DEMO_RUNS,
    DEMO_SUITE,
    FAILING,
    PASSING,
    ROOT,
    SUITE,
    run_score,
    write_lines,
)


def casebook(*args, env=None):
    # Django made unimportable: the command must never reach for it.
    program = (
        "import sys; sys.modules['django'] = None; from scoring.cli.main import main;"
        " sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", program, *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(SUITE))
    return path


@pytest.mark.parametrize("options", [(), ("--json",), ("--jobs", "1"), ("--jobs", "2", "--json")])
def test_the_demo_files_give_what_manage_py_score_gives(options):
    ours = casebook("score", DEMO_SUITE, DEMO_RUNS, *options)
    theirs = run_score(DEMO_SUITE, DEMO_RUNS, *options)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stdout == theirs.stdout
    assert "7 runs of 4 cases" in ours.stdout or len(json.loads(ours.stdout)) == 7
    assert ours.stderr == theirs.stderr == ""


def test_invalid_lines_and_a_regression_against_a_baseline_are_said_alike(suite_file, tmp_path):
    baseline = tmp_path / "baseline.json"
    passing = write_lines(tmp_path / "passing.jsonl", PASSING)
    baseline.write_text(run_score(suite_file, passing, "--json").stdout)
    runs = write_lines(tmp_path / "runs.jsonl", FAILING, "{not json")
    options = ("--baseline", baseline, "--fail-on", "regressions")
    ours = casebook("score", suite_file, runs, *options)
    theirs = run_score(suite_file, runs, *options)
    assert ours.returncode == theirs.returncode == 2
    assert (ours.stdout, ours.stderr) == (theirs.stdout, theirs.stderr)
    assert "regressed: weather" in ours.stdout
    assert f"{runs}:2: " in ours.stderr


def test_its_limits_default_to_the_web_apps_settings():
    for setting in dataclasses.fields(OfflineSettings):
        assert getattr(OfflineSettings(), setting.name) == getattr(settings, setting.name)


def test_a_limit_is_read_from_its_environment_variable(suite_file, tmp_path):
    runs = write_lines(tmp_path / "runs.jsonl", PASSING)
    result = casebook("score", suite_file, runs, env={"CASEBOOK_MAX_LINE_BYTES": "20"})
    assert result.returncode == 2
    assert "the limit is 20" in result.stderr
    read = OfflineSettings.from_environment({"CASEBOOK_MAX_JSON_DEPTH": "3"})
    assert read.CASEBOOK_MAX_JSON_DEPTH == 3


def test_a_limit_that_is_no_number_is_refused_by_name(suite_file, tmp_path):
    runs = write_lines(tmp_path / "runs.jsonl", PASSING)
    result = casebook("score", suite_file, runs, env={"CASEBOOK_MAX_JSON_DEPTH": "deep"})
    assert result.returncode == 2
    assert result.stderr == "casebook: CASEBOOK_MAX_JSON_DEPTH: not a number: 'deep'\n"


def test_a_prices_file_costs_runs_alike(suite_file, tmp_path):
    """docs/command-line.md#arguments-and-options: ``--prices FILE`` before the catalogue."""
    completion = {
        "object": "chat.completion",
        "model": "my-llama",
        "choices": [{"message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000},
    }
    case = SUITE["cases"][0]["key"]
    runs = write_lines(tmp_path / "runs.jsonl", {"case": case, "messages": [completion]})
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-llama": {"input": 0.25, "output": 0.75}}))
    ours = casebook("score", suite_file, runs, "--json", "--prices", prices)
    theirs = run_score(suite_file, runs, "--json", "--prices", prices)
    assert ours.stdout == theirs.stdout
    assert json.loads(ours.stdout)[0]["usage"]["cost_usd"] == 1.0
