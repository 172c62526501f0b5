"""τ-bench's airline runs (tests/fixtures/tau_bench: GPT-4o, 50 tasks x 4 trials, OpenAI Chat
format) and a suite made from the tasks: case ``task-N`` expects the task's ground-truth
calls, arguments as τ-bench gives them. Against it the 200 runs score 76 pass and 124 fail,
counted by running the matcher over them directly."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS_FILE = Path(__file__).parents[1] / "fixtures/tau_bench/tau-bench-airline-gpt-4o.json"
# The airline tools as τ-bench gives them to the agent (OpenAI function tools), written by
# tests/fixtures/producers/tau_bench_tools.py from τ-bench's own tool modules.
TOOLS_FILE = Path(__file__).parents[1] / "fixtures/tau_bench/airline-tools.json"
RECORDS = json.loads(RESULTS_FILE.read_text())
PASSED, FAILED = 76, 124
# The airline tools a suite of the file's tasks takes as read-only, guessed from the names.
READ_ONLY_TOOLS = [
    "calculate",
    "get_reservation_details",
    "get_user_details",
    "search_direct_flight",
    "transfer_to_human_agents",
]


def suite_document(prefix: str = "task-") -> dict:
    """The suite; its case keys are ``prefix`` and the task id (``prefix=""``: the keys the
    results file names as it is), its prompts the instructions τ-bench gave the simulated
    user."""
    tasks = {record["task_id"]: record["info"]["task"] for record in RECORDS}
    cases = [
        {
            "key": f"{prefix}{task_id}",
            "prompt": task["instruction"],
            "expected_calls": [
                {"name": a["name"], "required_args": a["kwargs"]} for a in task["actions"]
            ],
        }
        for task_id, task in sorted(tasks.items())
    ]
    return {"schema": "casebook.suite/1", "name": "tau-bench airline", "cases": cases}


def run_line(record: dict, **fields) -> dict:
    """The record as an OpenAI Chat run line; ``fields`` override ``case`` and ``trial``."""
    line = {"case": f"task-{record['task_id']}", "trial": record["trial"]}
    return {**line, **fields, "messages": record["traj"]}


def run_file(records: list[dict] = RECORDS, copies: int = 1) -> bytes:
    """The records (all 200 runs by default) ``copies`` times over as JSON lines, each
    copy's trials numbered after the last one's."""
    return b"".join(
        json.dumps(run_line(record, trial=copy * 4 + record["trial"])).encode() + b"\n"
        for copy in range(copies)
        for record in records
    )
