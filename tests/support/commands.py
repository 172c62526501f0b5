"""Running ``manage.py`` as a user runs it: a subprocess in the project, with a database URL
that nothing listens on (the offline commands must not touch a database); and the small
suite and runs the command tests share."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


def manage(*args, stdin=None, text=False, env=None):
    environment = {
        **os.environ,
        "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "manage.py", *map(str, args)],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=text,
        env=environment,
        check=False,
    )


def run_score(*args, stdin=None, env=None):
    return manage("score", *args, stdin=stdin, text=True, env=env)


def write_lines(path, *lines):
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path
