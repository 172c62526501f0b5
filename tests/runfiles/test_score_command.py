"""``manage.py score`` (docs/command-line.md#score), run as a user runs it: a subprocess,
real files."""

import io
import json
import tracemalloc
import xml.etree.ElementTree as ET

import pytest
from django.core.management import call_command

from tests.support.commands import (
    DEMO_RUNS,
    DEMO_SUITE,
    FAILING,
    PASSING,
    SUITE,
    run_score,
    write_lines,
)


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(SUITE))
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


def test_a_line_past_the_line_limit_is_skipped_as_it_streams(suite_file, tmp_path):
    size = 40 << 20
    runs = tmp_path / "runs.jsonl"
    with runs.open("wb") as out:
        out.write((json.dumps(PASSING) + "\n").encode())
        out.write(b'{"case": "chat", "final_text": "' + b"a" * size + b'"}\n')
        out.write((json.dumps(FAILING) + "\n").encode())
    out, errors = io.StringIO(), io.StringIO()

    tracemalloc.start()  # in this process, to see Python's own allocations
    try:
        with pytest.raises(SystemExit) as exit:
            call_command(
                "score", suite_file, runs, "--json", "--max-line-bytes", 1 << 20,
                stdout=out, stderr=errors,
            )  # fmt: skip
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < size / 8
    assert exit.value.code == 2
    assert [r["verdict"] for r in json.loads(out.getvalue())] == ["pass", "fail"]
    line = size + len('{"case": "chat", "final_text": ""}\n')
    assert errors.getvalue() == f"{runs}:2: the line is {line:,} bytes; the limit is 1,048,576\n"


def test_a_run_past_the_time_budget_is_an_error_and_the_next_is_scored(suite_file, tmp_path):
    runs = write_lines(tmp_path / "runs.jsonl", PASSING, FAILING)
    result = run_score(suite_file, runs, "--json", "--time-budget", "0")
    assert result.returncode == 1
    reports = json.loads(result.stdout)
    assert [r["verdict"] for r in reports] == ["error", "error"]
    assert reports[0]["error"].startswith("scoring took longer than 0 s, the limit for one run")
    assert run_score(suite_file, runs, "--json").returncode == 1  # the default: scored in full


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


# --- --baseline and --fail-on (docs/command-line.md#baseline): each run and case marked
# against an earlier --json output in the text, JSON and JUnit output; the CI gate exits 1
# only on a regression.

CHAT_PASS = {"case": "chat", "batches": []}
CHAT_FAIL = {"case": "chat", "batches": [[{"name": "search", "arguments": {}}]]}


@pytest.fixture
def baseline(suite_file, tmp_path):
    """Yesterday: weather trial 0 passed, trial 1 failed; chat passed."""
    runs = write_lines(tmp_path / "before.jsonl", PASSING, FAILING, CHAT_PASS)
    result = run_score(suite_file, runs, "--json")
    path = tmp_path / "before.json"
    path.write_text(result.stdout)
    return path


def test_each_run_is_marked_against_the_same_case_and_trial(suite_file, tmp_path, baseline):
    runs = write_lines(tmp_path / "now.jsonl", FAILING, PASSING, CHAT_PASS)
    result = run_score(suite_file, runs, "--json", "--baseline", baseline)
    assert result.returncode == 1, result.stderr
    reports = json.loads(result.stdout)
    assert [(r["case"], r["trial"], r["baseline"]) for r in reports] == [
        ("weather", 0, "regressed"),
        ("weather", 1, "fixed"),
        ("chat", 0, "still_passing"),
    ]


def test_the_summary_names_regressed_and_fixed_cases(suite_file, tmp_path, baseline):
    runs = write_lines(tmp_path / "now.jsonl", PASSING, PASSING, CHAT_FAIL)
    result = run_score(suite_file, runs, "--baseline", baseline)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "PASS   weather  trial 0  [still passing]"
    assert lines[1] == "PASS   weather  trial 1  [fixed]"
    assert "FAIL   chat  trial 0  [regressed]" in lines
    assert "Against the baseline, cases: 1 regressed, 1 fixed" in result.stdout
    assert "  regressed: chat" in lines
    assert "  fixed: weather" in lines


def test_fail_on_regressions_exits_1_only_when_something_regressed(suite_file, tmp_path, baseline):
    still_failing = write_lines(tmp_path / "a.jsonl", PASSING, FAILING, CHAT_PASS)
    result = run_score(
        suite_file, still_failing, "--baseline", baseline, "--fail-on", "regressions"
    )
    assert result.returncode == 0, result.stdout
    # weather's trial 1 failed then and fails now: the case still fails, nothing regressed.
    assert "Against the baseline, cases: 1 still failing, 1 still passing" in result.stdout
    regressed = write_lines(tmp_path / "b.jsonl", PASSING, FAILING, CHAT_FAIL)
    result = run_score(suite_file, regressed, "--baseline", baseline, "--fail-on", "regressions")
    assert result.returncode == 1


def test_a_case_or_trial_the_baseline_lacks(suite_file, tmp_path, baseline):
    third = {**PASSING, "trial": 7}
    only_weather = tmp_path / "weather.json"
    only_weather.write_text(
        json.dumps([r for r in json.loads(baseline.read_text()) if r["case"] == "weather"])
    )
    runs = write_lines(tmp_path / "now.jsonl", third, CHAT_PASS)
    result = run_score(suite_file, runs, "--json", "--baseline", only_weather)
    marks = [r["baseline"] for r in json.loads(result.stdout)]
    # weather had a failing trial, so the case did not pass before: trial 7 passing fixes it.
    assert marks == ["fixed", "new"]


def test_junit_carries_each_runs_mark(suite_file, tmp_path, baseline):
    runs = write_lines(tmp_path / "now.jsonl", FAILING, PASSING, CHAT_PASS)
    junit = tmp_path / "out.xml"
    run_score(suite_file, runs, "--baseline", baseline, "--junit", junit)
    cases = ET.parse(junit).getroot().iter("testcase")
    marks = [
        case.find("properties/property[@name='casebook.baseline']").get("value") for case in cases
    ]
    assert marks == ["regressed", "fixed", "still_passing"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a --json output of manage.py score"),
        ('[{"case": "weather"}]', "[0]: not a report of manage.py score --json"),
        ("[1]", "[0]: a report must be a JSON object"),
    ],
)
def test_a_baseline_that_is_not_a_json_output_is_refused(suite_file, tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    runs = write_lines(tmp_path / "now.jsonl", PASSING)
    result = run_score(suite_file, runs, "--baseline", bad)
    assert result.returncode == 2
    assert message in result.stderr
    assert str(bad) in result.stderr
    assert result.stdout == ""


def test_fail_on_regressions_needs_a_baseline(suite_file, tmp_path):
    runs = write_lines(tmp_path / "now.jsonl", PASSING)
    result = run_score(suite_file, runs, "--fail-on", "regressions")
    assert result.returncode == 2
    assert "--fail-on regressions needs --baseline FILE" in result.stderr


NOTE = (
    "tool arguments were not captured: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"
)


def test_every_report_carries_the_runs_notes_in_text_json_and_junit(suite_file, tmp_path):
    noted = {**PASSING, "notes": [NOTE, "a <second> & last note"]}
    runs = write_lines(tmp_path / "runs.jsonl", noted, {**FAILING, "notes": [NOTE]}, PASSING)
    junit = tmp_path / "junit.xml"
    text = run_score(suite_file, runs, "--junit", junit)
    lines = text.stdout.splitlines()
    assert lines[:3] == [
        "PASS   weather  trial 0",
        f"       note: {NOTE}",
        "       note: a <second> & last note",
    ]
    assert lines[3:5] == ["FAIL   weather  trial 1", f"       note: {NOTE}"]
    assert lines[5].startswith("       ✗ ")  # the failed predicates come after the notes
    assert lines[7:9] == ["PASS   weather  trial 2", ""]
    reports = json.loads(run_score(suite_file, runs, "--json").stdout)
    assert [r["notes"] for r in reports] == [noted["notes"], [NOTE], []]
    cases = ET.parse(junit).getroot().find("testsuite").findall("testcase")
    assert [c.findtext("system-out") for c in cases] == [
        f"note: {NOTE}\nnote: a <second> & last note",
        f"note: {NOTE}",
        None,
    ]
    assert cases[1].find("failure") is not None


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
