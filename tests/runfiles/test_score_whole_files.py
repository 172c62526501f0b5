"""``manage.py score`` on whole files (docs/command-line.md#what-it-reads): τ-bench's results
as they are, Inspect ``.eval`` archives, ``--case-field``, and the one diagnosis of a file that
gives no valid run (stderr, exit 2). Run as a user runs it: a subprocess, real files."""

import gzip
import json

import pytest

from tests.support import tau_bench
from tests.support.commands import PASSING, ROOT, SUITE, run_score, write_lines

INSPECT = ROOT / "tests/fixtures/inspect"


@pytest.fixture
def tau_suite(tmp_path):
    path = tmp_path / "tau.suite.json"
    path.write_text(json.dumps(tau_bench.suite_document(prefix="")))
    return path


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(SUITE))
    return path


def test_the_tau_bench_results_file_as_it_is_scores_its_200_runs(tau_suite):
    result = run_score(tau_suite, tau_bench.RESULTS_FILE)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines()[-1] == (
        f"200 runs of 50 cases: {tau_bench.PASSED} pass, {tau_bench.FAILED} fail, 0 error,"
        " pass rate 38%"
    )


def test_a_pretty_printed_array_from_standard_input_reads_the_same(tau_suite):
    result = run_score(tau_suite, "-", "--json", stdin=tau_bench.RESULTS_FILE.read_text())
    reports = json.loads(result.stdout)
    assert len(reports) == 200
    assert sum(r["verdict"] == "pass" for r in reports) == tau_bench.PASSED


def test_an_inspect_eval_archive_is_scored_as_it_is(tmp_path):
    suite = {
        "schema": "casebook.suite/1",
        "name": "tools",
        "cases": [
            {
                "key": "weather",
                "expected_calls": [{"name": "get_weather", "required_args": {"city": "Paris"}}],
            },
            {
                "key": "delete",
                "expected_calls": [{"name": "delete_file", "required_args": {"path": "notes.txt"}}],
            },
            {"key": "crash", "expectations": [{"type": "no_error"}]},
        ],
    }
    (tmp_path / "s.json").write_text(json.dumps(suite))
    for name in ("tools.eval", "tools.json"):
        result = run_score(tmp_path / "s.json", INSPECT / name, "--json")
        assert result.returncode == 1, result.stderr
        verdicts = sorted((r["case"], r["trial"], r["verdict"]) for r in json.loads(result.stdout))
        assert verdicts == [
            ("crash", 0, "fail"),
            ("crash", 1, "fail"),
            ("delete", 0, "pass"),
            ("delete", 1, "pass"),
            ("weather", 0, "pass"),
            ("weather", 1, "pass"),
        ]


def test_case_field_names_where_each_line_holds_its_case(suite_file, tmp_path):
    line = {"task_id": "weather", **{k: v for k, v in PASSING.items() if k != "case"}}
    runs = write_lines(tmp_path / "runs.jsonl", line)
    result = run_score(suite_file, runs, "--case-field", "task_id")
    assert (result.returncode, result.stderr) == (0, "")
    missing = run_score(suite_file, runs, "--case-field", "metadata.case")
    assert missing.returncode == 2
    assert (
        f"{runs}:1: metadata: required by case_field=metadata.case: the case key" in missing.stderr
    )
    bad = run_score(suite_file, runs, "--case-field", "a..b")
    assert bad.returncode == 2
    assert bad.stderr.startswith("--case-field: 'a..b' is not a dotted path")


def test_lines_that_name_their_case_elsewhere_are_diagnosed_once_at_the_end(suite_file, tmp_path):
    line = {"task_id": "weather", "messages": [{"role": "assistant", "content": "hi"}]}
    runs = write_lines(tmp_path / "runs.jsonl", line, line)
    result = run_score(suite_file, runs)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"{runs}: This is a file of 2 JSON lines: the lines have `task_id` and `messages` but"
        " no `case`: add --case-field task_id, or add `case` to each."
    )


def test_runs_read_but_of_no_case_in_the_suite_are_diagnosed_once_at_the_end(tmp_path):
    suite = tmp_path / "tau.suite.json"
    suite.write_text(json.dumps(tau_bench.suite_document(prefix="task-")))
    for jobs in ("1", "2"):
        result = run_score(suite, tau_bench.RESULTS_FILE, "--json", "--jobs", jobs)
        assert result.returncode == 2
        assert json.loads(result.stdout) == []
        lines = result.stderr.splitlines()
        assert lines[0] == f"{tau_bench.RESULTS_FILE}: [0].case: '0' is not in the suite"
        assert lines[-1] == (
            f"{tau_bench.RESULTS_FILE}: None of the 200 runs is of a case in the suite: they"
            " name 50 cases ('0', '1', '2', …), and its cases are 'task-0', 'task-1', 'task-2',"
            " …; its keys are the runs' with 'task-' before them. Score against a suite that"
            " has these cases, or give the runs the suite's keys (--case-field PATH reads them"
            " from another field)."
        )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_json_lines_of_no_case_in_the_suite_are_diagnosed_on_any_number_of_processes(
    suite_file, tmp_path, jobs
):
    other = {**PASSING, "case": "weather-2"}
    runs = write_lines(tmp_path / "runs.jsonl", other, other)
    result = run_score(suite_file, runs, "--jobs", jobs)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"{runs}: None of the 2 runs is of a case in the suite: they name case 'weather-2',"
        " and its cases are 'weather', 'chat'; the runs' keys are its keys with '-2' after"
        " them. Score"
        " against a suite that has these cases, or give the runs the suite's keys"
        " (--case-field PATH reads them from another field)."
    )
    # One run of a case the suite has, and the file is scored, its unknown runs listed.
    mixed = run_score(suite_file, write_lines(tmp_path / "mixed.jsonl", other, PASSING))
    assert mixed.returncode == 2
    assert "None of the" not in mixed.stderr


def test_a_pretty_printed_object_is_diagnosed_as_not_json_lines(suite_file, tmp_path):
    runs = tmp_path / "run.json"
    runs.write_text(json.dumps(PASSING, indent=2))
    result = run_score(suite_file, runs)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith(
        f"{runs}: This is a pretty-printed JSON object (its keys: case, batches, final_text),"
        " not JSON lines"
    )


def test_a_file_that_is_not_json_is_diagnosed_from_standard_input_too(suite_file):
    result = run_score(suite_file, "-", stdin="task,reward\n1,0.5\n")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith(
        "-: This is not JSON lines: the first line is not JSON"
    )
    assert "it starts 'task,reward'" in result.stderr


def test_an_empty_file_holds_no_run_and_exits_two(suite_file, tmp_path):
    result = run_score(suite_file, write_lines(tmp_path / "runs.jsonl", ""))
    assert result.returncode == 2
    assert result.stderr.strip().endswith(
        "The file holds no run: it is empty, or only blank lines."
    )


def test_a_gzip_file_is_not_read_by_the_command_but_diagnosed(suite_file, tmp_path):
    runs = tmp_path / "runs.jsonl.gz"
    runs.write_bytes(gzip.compress(json.dumps(PASSING).encode()))
    result = run_score(suite_file, runs)
    assert result.returncode == 2
    assert "This is not JSON lines" in result.stderr.splitlines()[-1]
