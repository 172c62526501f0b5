"""``scoring.runfiles.diagnosis``: one message for a file that gave no valid run, from its first
bytes and its first problems, saying what it looks like and what to change; and one for
runs read but none of a case the suite has."""

import json

from scoring.runfiles.diagnosis import COMMAND, UPLOAD, diagnose, no_known_case
from tests.support import tau_bench


def test_lines_with_a_case_elsewhere_get_the_case_field_for_the_upload_or_the_command():
    head = b'{"task_id": 3, "traj": [], "messages": []}\n' * 2
    problems = ["line 1, case: must be a non-empty string (the case key), not null"]
    assert diagnose(head, problems, invalid=2, via=UPLOAD) == (
        "This is a file of 2 JSON lines: the lines have `task_id` and `traj` and `messages` but"
        " no `case`: add ?case_field=task_id to the upload (the form's Case field), or add"
        " `case` to each."
    )
    assert "add --case-field task_id," in diagnose(head, problems, invalid=2, via=COMMAND)


def test_a_case_under_metadata_is_found_too():
    head = json.dumps({"metadata": {"case": "a"}, "batches": []}).encode() + b"\n"
    message = diagnose(head, ["line 1, case: required: a non-empty string"], invalid=1)
    assert "have `metadata.case` and `batches` but no `case`: add ?case_field=metadata.case" in (
        message
    )


def test_a_number_no_decimal_holds_ends_the_keys_read_not_the_diagnosis():
    head = b'{"task_id": "a", "score": 1e999999999999999999999999, "batches": []}\n'
    message = diagnose(head, ["line 1: invalid JSON: the number … is out of range"], invalid=1)
    assert "task_id" in message


def test_records_with_no_field_to_use_are_told_to_add_one():
    head = b'{"question": "q", "batches": []}\n'
    message = diagnose(head, ["line 1, case: required: a non-empty string"], invalid=1)
    assert message == (
        "This is a file of 1 JSON line: the lines name no `case` (keys: question, batches): add"
        " `case` to each, or name the field that holds it (add ?case_field=PATH to the upload"
        " (the form's Case field))."
    )


def test_records_in_no_format_list_their_keys_and_the_formats():
    head = b'[{"prompt": "p", "completion": "c"}, {"prompt": "q", "completion": "d"}]'
    message = diagnose(head, ["[0]: unrecognised run format: expected ..."], invalid=2)
    assert message.startswith(
        "This is one JSON array of 2 elements, but its elements are runs in no format Casebook"
        " reads (keys: prompt, completion). A run has `batches` (canonical)"
    )
    assert "`traj` (τ-bench)" in message


def test_a_pretty_printed_object_is_not_json_lines():
    head = json.dumps({"case": "a", "messages": []}, indent=2).encode()
    problems = ["a run file holds one JSON object per line; this one is a single JSON document"]
    assert diagnose(head, problems, invalid=1).startswith(
        "This is a pretty-printed JSON object (its keys: case, messages), not JSON lines: a run"
        " file holds one run per line"
    )


def test_the_start_of_a_long_first_line_is_read_as_a_json_lines_record():
    record = {"id": "x", "messages": [{"role": "user", "content": "y" * 100_000}]}
    head = json.dumps(record).encode()[: 1 << 16]
    message = diagnose(head, ["line 1, case: must be a non-empty string, not null"], invalid=1)
    assert "have `id` and `messages` but no `case`: add ?case_field=id" in message


def test_what_is_not_json_says_how_it_starts():
    message = diagnose(b"task,reward\n1,0.5\n", ["line 1, invalid JSON: ..."], invalid=2)
    assert message.startswith(
        "This is not JSON lines: the first line is not JSON (`task` at column 1 is not a JSON"
    )
    assert "it starts 'task,reward'" in message


def test_a_zip_that_is_not_an_eval_log_is_named():
    message = diagnose(b"PK\x03\x04rest", ["not a readable zip archive: ..."], invalid=1)
    assert message.startswith("This is a zip archive Casebook cannot read")
    forced = "line 1: the file is an Inspect AI eval log, not JSON lines in the gemini format"
    assert diagnose(b"PK\x03\x04rest", [forced], invalid=1) == (
        f"This is an Inspect AI .eval archive, and no run could be read from it: {forced}"
    )


def test_lines_that_are_not_objects_and_blank_files_are_named():
    assert diagnose(b"[1]\n", [], invalid=0).startswith("This is one JSON array")
    assert diagnose(b'"text"\n"more"\n', ["line 1, ..."], invalid=2).startswith(
        "The lines are JSON strings, not objects"
    )
    assert diagnose(b"\n\n", [], invalid=0) == (
        "The file holds no run: it is empty, or only blank lines."
    )


def test_the_tau_bench_file_as_lines_without_case_would_be_told_its_field():
    record = tau_bench.RECORDS[0]
    head = json.dumps({"task_id": 0, "traj": record["traj"]}).encode()[: 1 << 16]
    message = diagnose(head, ["line 1, case: required: a non-empty string"], invalid=200)
    assert "have `task_id` and `traj` but no `case`: add ?case_field=task_id" in message


# --- runs of no case the suite has ---------------------------------------------------------


def test_runs_of_no_case_name_theirs_and_the_suites_and_how_to_change_them():
    message = no_known_case(["a", "b", "c", "d"], 9, ["x", "y"], suite="version 2 of the suite")
    assert message == (
        "None of the 9 runs is of a case in version 2 of the suite: they name 4 cases ('a',"
        " 'b', 'c', …), and its cases are 'x', 'y'. Re-score against a version that has these"
        " cases, or upload the runs with the suite's keys (the Case field, ?case_field=PATH,"
        " reads them from another field)."
    )
    command = no_known_case(["a"], 1, [], via=COMMAND)
    assert command == (
        "The file's one run is of no case in the suite: it names case 'a', and it has no"
        " cases. Score against a suite that has these cases, or give the runs the suite's keys"
        " (--case-field PATH reads them from another field)."
    )


def test_a_prefix_or_suffix_the_suites_keys_add_to_the_runs_is_named():
    runs = [str(task) for task in range(30)]
    assert "; its keys are the runs' with 'task-' before them." in no_known_case(
        runs, 30, [f"task-{task}" for task in range(50)]
    )
    assert "; its keys are the runs' with '@v2' after them." in no_known_case(
        ["a", "b"], 2, ["b@v2", "a@v2", "c"]
    )
    assert "; the runs' keys are its keys with 'airline/' before them." in no_known_case(
        ["airline/0", "airline/1"], 2, ["0", "1", "2"]
    )
    assert "; the runs' keys are its keys with '-2' after them." in no_known_case(
        ["weather-2"], 1, ["chat", "weather"]
    )
    # Only when it holds for every run key checked: here '1' has no 'task-1'.
    assert "before them" not in no_known_case(["0", "1"], 2, ["task-0", "task-2"])


def test_a_list_of_run_cases_cut_short_is_counted_as_a_lower_bound():
    message = no_known_case(["a", "b"], 5, ["z"], more=True)
    assert "they name 2 or more cases ('a', 'b')" in message
