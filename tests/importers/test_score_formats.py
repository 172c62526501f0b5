"""``manage.py score`` (docs/command-line.md#score) reads a run file in every format, as a
user runs it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .examples import LINES, inspect_log, inspect_sample

ROOT = Path(__file__).resolve().parent.parent.parent
SUITE = {
    "schema": "casebook.suite/1",
    "name": "formats",
    "cases": [
        {
            "key": "weather",
            "expected_calls": [
                {"name": "get_weather", "required_args": {"city": "Paris"}},
                {"name": "get_weather", "required_args": {"city": "Tokyo"}},
            ],
            "expectations": [
                {"type": "final_text_contains", "text": "Paris is 18°C"},
                {"type": "tool_call_count", "max": 2},
            ],
        }
    ],
}


def run_score(*args):
    # A database URL nothing listens on: the command must not touch a database.
    environment = {**os.environ, "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none"}
    return subprocess.run(
        [sys.executable, "manage.py", "score", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(SUITE))
    return path


def verdicts(result):
    return [(r["case"], r["trial"], r["verdict"]) for r in json.loads(result.stdout)]


@pytest.mark.parametrize("name", sorted(LINES))
def test_a_file_of_each_format_is_detected_and_scored_and_can_be_forced(name, suite_file, tmp_path):
    runs = tmp_path / f"{name}.jsonl"
    runs.write_text(json.dumps({**LINES[name](), "case": "weather"}) + "\n")
    for forced in ((), ("--format", name)):
        result = run_score(suite_file, runs, "--json", *forced)
        assert result.returncode == 0, result.stderr
        assert verdicts(result) == [("weather", 0, "pass")]


def test_one_file_may_mix_formats_line_by_line(suite_file, tmp_path):
    runs = tmp_path / "mixed.jsonl"
    lines = [{**make(), "case": "weather", "trial": k} for k, make in enumerate(LINES.values())]
    runs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run_score(suite_file, runs, "--json")
    assert result.returncode == 0, result.stderr
    assert verdicts(result) == [("weather", trial, "pass") for trial in range(len(LINES))]


def test_an_inspect_log_file_gives_a_run_per_sample_and_lists_bad_samples(suite_file, tmp_path):
    broken = inspect_sample("weather", epoch=3)
    broken["messages"][1]["tool_calls"][0]["function"] = None
    log = inspect_log(inspect_sample("weather", 1), inspect_sample("weather", 2), broken)
    path = tmp_path / "logs" / "2026-01-01T00-00-00_weather.json"
    path.parent.mkdir()
    path.write_text(json.dumps(log, indent=2))
    for forced in ((), ("--format", "inspect_ai")):
        result = run_score(suite_file, path, "--json", *forced)
        assert result.returncode == 2
        assert verdicts(result) == [("weather", 0, "pass"), ("weather", 1, "pass")]
        assert result.stderr.splitlines() == [
            f"{path}: samples[2].messages[1].tool_calls[0].function: must be a string, not null"
        ]


def test_an_inspect_sample_of_an_unknown_case_is_named_by_its_path(suite_file, tmp_path):
    path = tmp_path / "log.json"
    path.write_text(
        json.dumps(inspect_log(inspect_sample("weather"), inspect_sample("other")), indent=2)
    )
    result = run_score(suite_file, path)
    assert result.returncode == 2
    assert result.stdout.startswith("PASS   weather  trial 0")
    assert result.stderr.strip() == f"{path}: samples[1].case: 'other' is not in the suite"


def test_help_lists_every_format():
    result = run_score("--help")
    assert result.returncode == 0
    for name in (
        "canonical",
        "inspect_ai",
        "anthropic",
        "openai_chat",
        "openai_responses",
        "gemini",
        "otel",
        "bfcl",
    ):
        assert name in result.stdout
