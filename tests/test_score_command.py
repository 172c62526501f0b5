"""``manage.py score`` (DESIGN.md §7), run as a user runs it: a subprocess, real files."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO_SUITE = ROOT / "cases/demo/assistant.suite.json"
DEMO_RUNS = ROOT / "cases/demo/assistant.runs.jsonl"

SUITE = {
    "schema": "casebook.suite/1",
    "name": "cli",
    "cases": [
        {
            "key": "weather",
            "expected_calls": [{"name": "get_weather", "required_args": {"city": "Paris"}}],
            "expectations": [{"type": "final_text_contains", "text": "Paris"}],
        },
        {"key": "chat", "expectations": [{"type": "no_tool_calls"}]},
    ],
}
PASSING = {
    "case": "weather",
    "batches": [[{"name": "get_weather", "arguments": {"city": "Paris"}}]],
    "final_text": "Paris: 18°C",
}
FAILING = {**PASSING, "batches": [[{"name": "get_weather", "arguments": {"city": "Lyon"}}]]}


def run_score(*args, stdin=None, env=None):
    # A database URL nothing listens on: the command must not touch a database.
    environment = {
        **os.environ,
        "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "manage.py", "score", *map(str, args)],
        cwd=ROOT,
        input=stdin,
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


def write_lines(path, *lines):
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def test_summary_lists_each_run_with_its_failed_predicates_and_totals():
    result = run_score(DEMO_SUITE, DEMO_RUNS)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "PASS   delete-if-exists  trial 0"
    assert lines[1] == "FAIL   delete-if-exists  trial 1"
    assert '✗ delete_file(path="notes.txt") [ordered, after result of #0]' in lines[2]
    assert "the same batch as file_exists (#0)" in lines[3]
    assert "7 runs of 4 cases: 4 pass, 3 fail, 0 error, pass rate 57.1%" in result.stdout
    assert result.stderr == ""


def test_all_passing_runs_exit_zero(suite_file, tmp_path):
    runs = write_lines(tmp_path / "runs.jsonl", PASSING, {"case": "chat", "batches": []})
    result = run_score(suite_file, runs)
    assert result.returncode == 0, result.stderr
    assert "2 runs of 2 cases: 2 pass, 0 fail, 0 error" in result.stdout


def test_json_prints_one_array_of_reports_in_file_order_and_nothing_else(suite_file, tmp_path):
    runs = write_lines(tmp_path / "runs.jsonl", FAILING, PASSING, {"case": "chat", "batches": []})
    result = run_score(suite_file, runs, "--json")
    assert result.returncode == 1
    reports = json.loads(result.stdout)
    assert [(r["case"], r["trial"], r["verdict"]) for r in reports] == [
        ("weather", 0, "fail"),
        ("weather", 1, "pass"),
        ("chat", 0, "pass"),
    ]
    failed = reports[0]["predicates"][1]
    assert failed == {
        "kind": "expected_call",
        "index": 0,
        "label": 'get_weather(city="Paris")',
        "passed": False,
        "matched": None,
        "nearest": [0, 0],
        "detail": 'get_weather was called in batch 0: city: expected "Paris", got "Lyon"',
        "cause": {"kind": "argument_value", "tool": "get_weather", "argument": "city"},
    }


def test_json_with_no_valid_runs_is_an_empty_array(suite_file, tmp_path):
    result = run_score(suite_file, write_lines(tmp_path / "runs.jsonl", "{oops"), "--json")
    assert result.returncode == 2
    assert json.loads(result.stdout) == []


def test_invalid_lines_are_listed_by_line_and_field_while_valid_lines_are_still_scored(
    suite_file, tmp_path
):
    runs = write_lines(
        tmp_path / "runs.jsonl",
        PASSING,
        "{not json",
        "",
        {"case": "weather", "batches": [[{"name": 7, "arguments": {}}]]},
        {"case": "nope", "batches": []},
        {"case": "chat", "batches": []},
    )
    result = run_score(suite_file, runs, "--json")
    assert result.returncode == 2
    assert [r["case"] for r in json.loads(result.stdout)] == ["weather", "chat"]
    errors = result.stderr.splitlines()
    assert errors[0].startswith(f"{runs}:2: invalid JSON")
    assert errors[1] == f"{runs}:4: batches[0][0].name: must be a string, not number"
    assert errors[2] == f"{runs}:5: case: 'nope' is not in the suite"
    assert len(errors) == 3


def test_a_repeated_explicit_trial_is_an_invalid_line_and_the_first_stands(suite_file, tmp_path):
    runs = write_lines(tmp_path / "runs.jsonl", {**PASSING, "trial": 3}, {**FAILING, "trial": 3})
    result = run_score(suite_file, runs, "--json")
    assert result.returncode == 2
    assert [(r["trial"], r["verdict"]) for r in json.loads(result.stdout)] == [(3, "pass")]
    assert "runs.jsonl:2: trial: case 'weather' already has a run with trial 3" in result.stderr


def test_an_invalid_suite_stops_everything_listing_every_problem_by_path(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(
        json.dumps(
            {
                "cases": [
                    {"key": "a", "expected_calls": [{"name": "x", "depends_on_result": True}]},
                    {
                        "key": "a",
                        "expectations": [{"type": "final_text_matches", "regex": "(?=x)"}],
                    },
                ]
            }
        )
    )
    result = run_score(suite, DEMO_RUNS)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"{suite}: invalid suite file:" in result.stderr
    assert "cases[0].expected_calls[0].depends_on_result:" in result.stderr
    assert "cases[1].key: duplicate case key 'a' (also cases[0])" in result.stderr
    assert "cases[1].expectations[0].regex: RE2 cannot compile this pattern" in result.stderr


def test_missing_files_are_reported_with_exit_status_two(suite_file, tmp_path):
    result = run_score(suite_file, tmp_path / "absent.jsonl")
    assert result.returncode == 2
    assert "absent.jsonl: cannot read the run file: No such file or directory" in result.stderr
    result = run_score(tmp_path / "absent.json", DEMO_RUNS)
    assert result.returncode == 2
    assert "cannot read the suite file" in result.stderr


def test_junit_is_valid_xml_with_a_test_case_per_run_and_per_invalid_line(suite_file, tmp_path):
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    runs = write_lines(
        tmp_path / "runs.jsonl",
        PASSING,
        {**FAILING, "final_text": "Lyon\x01\x1b[31m <b>&</b>"},
        "[]",
    )
    result = run_score(suite_file, runs, "--junit", junit)
    assert result.returncode == 2
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite.get("name") == "cli"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["weather trial 0", "weather trial 1", "line 3"]
    failure = cases[1].find("failure")
    assert 'get_weather(city="Paris")' in failure.text
    assert "final text contains" in failure.text
    assert cases[2].find("error") is not None
    assert cases[0].find("failure") is None


def test_yaml_suites_and_standard_input_runs_are_read(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: yaml\ncases:\n  - key: book\n    expected_calls:\n"
        "      - name: book\n        required_args: {date: 2024-05-20, insurance: no}\n"
    )
    line = {
        "case": "book",
        "batches": [[{"name": "book", "arguments": {"date": "2024-05-20", "insurance": "no"}}]],
    }
    result = run_score(suite, "-", stdin=json.dumps(line) + "\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("PASS   book  trial 0")


def test_openai_chat_lines_are_scored_like_canonical_ones(suite_file, tmp_path):
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"temp_c": 18}'},
        {"role": "assistant", "content": "Paris is 18°C."},
    ]
    runs = write_lines(tmp_path / "runs.jsonl", {"case": "weather", "messages": messages})
    for extra in ((), ("--format", "openai_chat")):
        result = run_score(suite_file, runs, "--json", *extra)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)[0]["verdict"] == "pass"
    result = run_score(suite_file, runs, "--format", "canonical")
    assert result.returncode == 2
    assert "runs.jsonl:1: batches: required" in result.stderr


def test_catalog_warnings_go_to_stderr_without_changing_the_exit_status(tmp_path):
    weather = {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"town": {"type": "string"}}},
    }
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({**SUITE, "tools": [weather]}))
    runs = write_lines(tmp_path / "runs.jsonl", PASSING)
    result = run_score(suite, runs, "--json")
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        f"{suite}: cases[0].expected_calls[0].required_args.city: warning: "
        "unknown argument `city` of `get_weather`"
    ]
    assert json.loads(result.stdout)[0]["verdict"] == "pass"
