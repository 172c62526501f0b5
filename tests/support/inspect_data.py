"""The Inspect AI logs in tests/fixtures/inspect (written by inspect_ai with its mockllm
model, ``tests/fixtures/inspect/produce.py``) and the suite their samples are scored against."""

from pathlib import Path

INSPECT = Path(__file__).resolve().parents[1] / "fixtures" / "inspect"
INSPECT_SUITE = {
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
