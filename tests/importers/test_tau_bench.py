"""200 real runs of GPT-4o on τ-bench's airline tasks (50 tasks, 4 trials each), in OpenAI Chat
format: every one imports to a run the matcher accepts, as a line and in the results file
as τ-bench writes it (the ``tau_bench`` importer). The numbers checked by hand below
were counted in the fixture (tests/fixtures/tau_bench, MIT licence beside it)."""

import json
from collections import Counter
from pathlib import Path

import pytest

from scoring.importers import detect_format, to_canonical
from scoring.matcher import load_run, load_suite, score
from scoring.runfiles.reader import ITEM, read_run_lines

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "tau_bench"
RESULTS_FILE = FIXTURE / "tau-bench-airline-gpt-4o.json"
RECORDS = json.loads(RESULTS_FILE.read_text())


def line_of(record, *, with_trial=True):
    line = {"case": f"task-{record['task_id']}", "messages": record["traj"]}
    if with_trial:
        line["trial"] = record["trial"]
    return line


def as_tau_bench(chat_run):
    """The batches of a run read as plain OpenAI Chat, with τ-bench's refusals (results
    starting ``Error:``) marked as tool errors, as the ``tau_bench`` importer reads them."""
    return [
        [{**c, "is_error": True} if str(c.get("result")).startswith("Error:") else c for c in batch]
        for batch in chat_run["batches"]
    ]


def record(task_id, trial):
    (found,) = [r for r in RECORDS if r["task_id"] == task_id and r["trial"] == trial]
    return found


@pytest.fixture(scope="module")
def runs():
    """(record, canonical) for all 200, each checked by load_run."""
    converted = []
    for item in RECORDS:
        canonical = to_canonical(line_of(item))
        load_run(canonical)
        converted.append((item, canonical))
    return converted


def test_all_200_runs_are_detected_as_openai_chat_and_load(runs):
    assert len(runs) == 200
    assert {detect_format(line_of(item)) for item, _ in runs} == {"openai_chat"}


def test_every_tool_call_is_kept_and_gets_its_result(runs):
    for item, canonical in runs:
        traj = item["traj"]
        expected = sum(len(m.get("tool_calls") or []) for m in traj)
        calls = [call for batch in canonical["batches"] for call in batch]
        assert len(calls) == expected
        tool_messages = sum(1 for m in traj if m["role"] == "tool")
        assert sum("result" in call for call in calls) == tool_messages


@pytest.mark.parametrize(
    ("task_id", "trial", "batches", "calls"),
    [(0, 0, 8, 8), (0, 3, 13, 13), (1, 0, 0, 0), (1, 1, 5, 5), (2, 1, 27, 27), (3, 0, 20, 20)],
)
def test_hand_checked_runs_have_their_number_of_batches_and_calls(task_id, trial, batches, calls):
    canonical = to_canonical(line_of(record(task_id, trial)))
    assert len(canonical["batches"]) == batches
    assert sum(len(batch) for batch in canonical["batches"]) == calls
    assert canonical["trial"] == trial


def test_task_3_calls_its_tools_in_this_order():
    canonical = to_canonical(line_of(record(3, 0)))
    names = [call["name"] for batch in canonical["batches"] for call in batch]
    assert names == [
        "get_user_details",
        *["get_reservation_details"] * 7,
        "search_direct_flight",
        "search_onestop_flight",
        "think",
        "calculate",
        "calculate",
        "update_reservation_flights",
        "update_reservation_flights",
        "think",
        *["update_reservation_flights"] * 4,
    ]


def test_results_are_joined_by_tool_call_id_even_where_the_trajectory_reuses_ids():
    """Task 0, trial 0 reuses call ids: get_user_details and a later calculate share one."""
    calls = [call for batch in to_canonical(line_of(record(0, 0)))["batches"] for call in batch]
    first, _, _, calculate = calls[:4]
    assert first["id"] == calculate["id"] == "call_oIHazX6yQrB8hUwl4cRilFKj"
    assert first["name"] == "get_user_details"
    assert first["arguments"] == {"user_id": "mia_li_3668"}
    assert json.loads(first["result"])["name"] == {"first_name": "Mia", "last_name": "Li"}
    assert (calculate["name"], calculate["arguments"], calculate["result"]) == (
        "calculate",
        {"expression": "152 + 103"},
        "255.0",
    )
    booking = calls[4]
    assert booking["name"] == "book_reservation"
    assert booking["result"].startswith("Error: payment amount does not add up")


def test_content_null_beside_tool_calls_is_no_text_and_the_final_text_is_the_last_reply(runs):
    nulls = sum(
        1
        for item, _ in runs
        for m in item["traj"]
        if m["role"] == "assistant" and m["content"] is None and m.get("tool_calls")
    )
    assert nulls == 1074
    canonical = to_canonical(line_of(record(0, 0)))
    assert canonical["final_text"].startswith(
        "Your flight from New York (JFK) to Seattle (SEA) has been successfully booked."
    )
    assert to_canonical(line_of(record(1, 0)))["final_text"].startswith("You're welcome!")


def _jsonl(lines):
    return [(json.dumps(line) + "\n").encode() for line in lines]


def test_the_four_trials_of_each_task_are_kept_apart():
    items = list(read_run_lines(_jsonl(line_of(r) for r in RECORDS)))
    assert all(item.run is not None for item in items), [i.problems for i in items if i.problems]
    trials = Counter(item.run.case for item in items)
    assert len(trials) == 50
    assert set(trials.values()) == {4}
    by_case = {}
    for item in items:
        by_case.setdefault(item.run.case, []).append(item.run.trial)
    assert all(sorted(found) == [0, 1, 2, 3] for found in by_case.values())


def test_without_explicit_trials_each_task_is_numbered_in_file_order():
    ordered = sorted(RECORDS, key=lambda r: (r["task_id"], r["trial"]))
    items = list(read_run_lines(_jsonl(line_of(r, with_trial=False) for r in ordered)))
    assert [(i.run.case, i.run.trial) for i in items[:5]] == [
        ("task-0", 0),
        ("task-0", 1),
        ("task-0", 2),
        ("task-0", 3),
        ("task-1", 0),
    ]
    same = next(i for i in items if (i.run.case, i.run.trial) == ("task-2", 1))
    assert len(same.run.calls) == 27  # trial 1 of task 2 is the one with 27 calls


# --- the results file as τ-bench writes it: one JSON array, read as it is ---------------------


def test_the_results_file_as_it_is_gives_200_runs_keyed_by_task_id():
    with RESULTS_FILE.open("rb") as file:
        items = list(read_run_lines(file))
    assert [i.problems for i in items] == [()] * 200
    assert {i.format for i in items} == {"tau_bench"}
    assert {i.unit for i in items} == {ITEM}
    assert [i.line for i in items] == list(range(1, 201))
    runs = {(i.run.case, i.run.trial): i for i in items}
    assert sorted(runs) == sorted((str(r["task_id"]), r["trial"]) for r in RECORDS)
    first = runs[("0", 0)]
    assert first.canonical["batches"] == as_tau_bench(to_canonical(line_of(record(0, 0))))
    assert first.run.meta == {"reward": 0.0, "source": "user", "user_cost": 0.0035475000000000003}


def test_each_element_converts_like_its_trajectory_as_openai_chat():
    for item in RECORDS[:20]:
        canonical = to_canonical(item)
        as_chat = to_canonical(line_of(item))
        assert (canonical["batches"], canonical["final_text"]) == (
            as_tau_bench(as_chat),
            as_chat["final_text"],
        )
        assert (canonical["case"], canonical["trial"]) == (str(item["task_id"]), item["trial"])


def test_the_task_and_its_ground_truth_stay_out_of_meta_and_a_crash_is_the_runs_error():
    crashed = {
        "task_id": 7,
        "trial": 2,
        "reward": 0.0,
        "info": {"error": "litellm.Timeout", "traceback": "Traceback ...", "task": {"a": 1}},
        "traj": [],
    }
    canonical = to_canonical(crashed)
    assert canonical["error"] == "litellm.Timeout"
    assert canonical["meta"] == {"reward": 0.0}
    assert (canonical["case"], canonical["trial"], canonical["batches"]) == ("7", 2, [])


def test_problems_in_an_element_are_named_by_its_index_and_its_traj_path():
    broken = json.loads(json.dumps(RECORDS[:3]))
    broken[1]["traj"][2]["tool_calls"] = "oops"
    broken[2]["task_id"] = None
    items = list(read_run_lines([json.dumps(broken, indent=2).encode()]))
    assert items[0].run is not None
    assert [str(p) for p in items[1].problems] == ["[1].traj[2].tool_calls: must be a list"]
    assert [str(p) for p in items[2].problems] == [
        "[2].task_id: required: the task id, a string or a number"
    ]


def test_the_results_score_76_pass_against_a_suite_keyed_by_task_id():
    from tests.support import tau_bench

    suite = load_suite(tau_bench.suite_document(prefix=""))
    with RESULTS_FILE.open("rb") as file:
        verdicts = Counter(
            score(suite.case(i.run.case), i.run).verdict for i in read_run_lines(file)
        )
    assert verdicts == {"pass": tau_bench.PASSED, "fail": tau_bench.FAILED}


def test_a_result_the_environment_refused_is_a_tool_error_and_no_other_is():
    """Run 11/0: τ-bench refused the first book_reservation (``Error: payment amount does
    not add up``) and the database did not change; the second booked."""
    canonical = to_canonical(record(11, 0))
    books = [c for b in canonical["batches"] for c in b if c["name"] == "book_reservation"]
    assert [c["result"].startswith("Error:") for c in books] == [True, False]
    assert [c.get("is_error", False) for c in books] == [True, False]
    as_chat = to_canonical(line_of(record(11, 0)))  # the plain messages carry no convention
    assert not any(c.get("is_error") for b in as_chat["batches"] for c in b)
    refused = sum(
        c.get("is_error", False) for r in RECORDS for b in to_canonical(r)["batches"] for c in b
    )
    errors = sum(
        m["role"] == "tool" and m["content"].startswith("Error:")
        for r in RECORDS
        for m in r["traj"]
    )
    assert refused == errors > 0
