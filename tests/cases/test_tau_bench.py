"""A suite from τ-bench's results file (cases.tau_bench): one case per task, the write actions
as ordered expected calls, outputs as final-text expectations, no writes beyond the ground
truth's; bad input named by element and field."""

from __future__ import annotations

import io
import json

import pytest

from cases import tau_bench
from scoring.matcher import InvalidInput, load_suite
from tests.support.tau_bench import RESULTS_FILE

BOOK = {"name": "book_reservation", "kwargs": {"user_id": "mia", "flights": [{"n": "HAT1"}]}}
CANCEL = {"name": "cancel_reservation", "kwargs": {"reservation_id": "ABC"}}
LOOKUP = {"name": "get_user_details", "kwargs": {"user_id": "mia"}}


def element(task_id, trial=0, actions=(LOOKUP, BOOK, CANCEL), outputs=(), **task) -> dict:
    task = {"instruction": f"task {task_id}", "actions": list(actions), "outputs": list(outputs)}
    return {"task_id": task_id, "trial": trial, "reward": 1.0, "info": {"task": task}, "traj": []}


def read(elements: list) -> tau_bench.Results:
    return tau_bench.read_results(io.BytesIO(json.dumps(elements).encode()))


def problems(content: bytes) -> list[str]:
    with pytest.raises(InvalidInput) as raised:
        tau_bench.read_results(io.BytesIO(content))
    return [str(problem) for problem in raised.value.problems]


def test_each_task_is_one_case_whose_expected_calls_are_its_writes_in_order():
    results = read([element(10), element(2), element(2, trial=1)])
    document = tau_bench.suite_document(results, name="air", read_only=["get_user_details"])
    assert [case["key"] for case in document["cases"]] == ["2", "10"]  # numbers in order
    case = document["cases"][0]
    assert case["prompt"] == "task 2"
    assert case["expected_calls"] == [
        {"name": "book_reservation", "required_args": BOOK["kwargs"], "ordered": True},
        {"name": "cancel_reservation", "required_args": CANCEL["kwargs"], "ordered": True},
    ]
    assert results.runs == 3
    load_suite(document)  # a valid suite file


def test_outputs_are_final_text_expectations_and_one_suite_rule_caps_the_writes():
    results = read([element(0, actions=[CANCEL, CANCEL], outputs=["1786"]), element(1)])
    case = tau_bench.suite_cases(results, read_only=[])[0]
    assert case["expectations"] == [
        {"type": "final_text_contains", "text": "1786", "case_insensitive": True},
    ]
    document = tau_bench.suite_document(results, name="air", read_only=["get_user_details"])
    assert document["expectations"] == [
        {
            "type": "no_calls_beyond_expected",
            "tools": ["book_reservation", "cancel_reservation"],
            "succeeded_only": True,
        }
    ]
    suite = load_suite(document)
    # each case may call each write tool as often as it expects it: 0 and 2, then 1 and 1
    assert [case.expectations[-1].allowed for case in suite.cases] == [(0, 2), (1, 1)]
    no_writes = read([element(0, actions=[LOOKUP])])
    assert "expectations" not in tau_bench.suite_document(
        no_writes, name="air", read_only=["get_user_details"]
    )


def test_a_thousand_tasks_each_writing_with_its_own_tool_make_a_row_or_two_each():
    """One rule for the suite, not a count per case per tool: a million rows before."""
    elements = [element(n, actions=[{"name": f"update_{n}", "kwargs": {}}]) for n in range(1000)]
    document = tau_bench.suite_document(read(elements), name="wide", read_only=[])
    assert sum(len(case.get("expectations", [])) for case in document["cases"]) == 0
    assert len(document["expectations"][0]["tools"]) == 1000


def test_the_rows_the_tasks_may_make_are_capped_as_they_are_read():
    elements = [element(n, actions=[BOOK, CANCEL]) for n in range(10)]
    with pytest.raises(InvalidInput) as raised:
        tau_bench.read_results(io.BytesIO(json.dumps(elements).encode()), max_rows=25)
    (problem,) = raised.value.problems
    assert problem.path == "[8]"  # 9 tasks of 3 rows each pass 25
    assert "CASEBOOK_MAX_SUITE_ROWS = 25" in problem.message


def test_kwargs_are_argument_names_whatever_they_start_with():
    action = {"name": "update", "kwargs": {"$set": 1, "filter": {"$in": [1, 2]}}}
    case = tau_bench.suite_cases(read([element(0, actions=[action])]), read_only=[])[0]
    assert case["expected_calls"][0]["required_args"] == {
        "$set": 1,
        "filter": {"$literal": {"$in": [1, 2]}},
    }


def test_an_argument_that_reads_as_a_matcher_is_kept_literal():
    odd = {"name": "set_note", "kwargs": {"note": {"$regex": "x"}}}
    case = tau_bench.suite_cases(read([element(0, actions=[odd])]), read_only=[])[0]
    assert case["expected_calls"][0]["required_args"] == {"note": {"$literal": {"$regex": "x"}}}


def test_trials_that_disagree_on_their_task_are_refused_naming_where():
    found = problems(json.dumps([element(3), element(3, trial=1, actions=[BOOK])]).encode())
    assert found == [
        "[1].info.task.actions: differs from task 3's in [0]: every trial of a task must run"
        " the same task, as its case holds one ground truth"
    ]


def test_bad_elements_are_located_by_element_and_field():
    bad_action = element(1, actions=[{"kwargs": {}}, {"name": "x", "kwargs": [1]}])
    no_task = {"task_id": 2, "info": {}, "traj": []}
    content = json.dumps([{"traj": []}, bad_action, no_task, element(4, outputs=[5])]).encode()
    assert problems(content) == [
        "[0].task_id: required: the task id, a string or a number",
        "[1].info.task.actions[0].name: required: the tool's name",
        "[1].info.task.actions[1].kwargs: must be an object of arguments",
        "[2].info.task: required: the task τ-bench ran (instruction, actions, outputs)",
        "[3].info.task.outputs: must be a list of strings",
    ]
    assert problems(b'{"task_id": 1}')[0].startswith("not τ-bench's results file")
    assert problems(b"[" + json.dumps(element(0)).encode() + b", {") == [
        "[1]: invalid JSON: parse error: premature EOF"
    ]


def test_a_run_that_crashed_carries_no_task_and_is_counted_apart():
    crashed = {"task_id": 7, "trial": 0, "info": {"error": "boom", "traceback": "..."}, "traj": []}
    results = read([element(0), crashed])
    assert [task.key for task in results.tasks] == ["0"]
    assert results.crashed == 1


def test_an_element_past_the_size_limit_is_a_problem():
    content = json.dumps([element(0, outputs=["x" * 5000])]).encode()
    with pytest.raises(InvalidInput) as raised:
        tau_bench.read_results(io.BytesIO(content), max_item_bytes=1000)
    assert "over 1,000 bytes" in str(raised.value.problems[0])


def test_read_only_tools_come_from_the_catalogs_hint_else_from_their_names():
    catalog = [
        {"name": "get_user_details", "annotations": {"readOnlyHint": False}},
        {"name": "book_reservation", "annotations": {"title": "Book"}},
    ]
    roles = tau_bench.proposed_roles(["book_reservation", "get_user_details", "think"], catalog)
    assert [(r.name, r.read_only, r.source) for r in roles] == [
        ("book_reservation", False, tau_bench.NAME),
        ("get_user_details", False, tau_bench.CATALOG),
        ("think", True, tau_bench.NAME),
    ]
    with pytest.raises(InvalidInput, match="get_usr: no action of the tasks calls it"):
        tau_bench.given_roles(["get_user_details"], ["get_usr"], "read_only")


def test_the_fixture_makes_fifty_cases_of_its_writes():
    with RESULTS_FILE.open("rb") as stream:
        results = tau_bench.read_results(stream)
    reads = [r.name for r in tau_bench.proposed_roles(results.tools, []) if r.read_only]
    assert reads == [
        "calculate",
        "get_reservation_details",
        "get_user_details",
        "search_direct_flight",
        "transfer_to_human_agents",
    ]
    document = tau_bench.suite_document(results, name="airline", read_only=reads)
    assert (len(document["cases"]), results.runs) == (50, 200)
    called = {call["name"] for case in document["cases"] for call in case.get("expected_calls", [])}
    assert not called & set(reads)
    load_suite(document)


def test_a_write_the_tool_refused_does_not_count_against_the_cap_and_reward_mostly_agrees():
    """Run 11/0 (reward 1): its first book_reservation was refused (``Error: …``), so the
    database did not change; the cap counts the second only. Across the fixture, Casebook
    and the file's reward then disagree on 4 runs (docs/benchmarks.md), 12 before."""
    from scoring.importers import tau_bench as tau_bench_format
    from scoring.matcher import load_run, score

    with RESULTS_FILE.open("rb") as stream:
        results = tau_bench.read_results(stream)
    reads = [r.name for r in tau_bench.proposed_roles(results.tools, []) if r.read_only]
    suite = load_suite(tau_bench.suite_document(results, name="airline", read_only=reads))
    records = json.loads(RESULTS_FILE.read_text())
    verdicts = {}
    for record in records:
        run = load_run(tau_bench_format.convert(record))
        verdicts[record["task_id"], record["trial"]] = score(suite.case(run.case), run).verdict
    assert verdicts[11, 0] == "pass"
    disagree = sorted(
        (r["task_id"], r["trial"])
        for r in records
        if (verdicts[r["task_id"], r["trial"]] == "pass") != (r["reward"] == 1)
    )
    assert disagree == [(2, 2), (5, 1), (44, 2), (46, 3)]
