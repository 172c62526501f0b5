"""Suites for the audit's tests (docs/audit.md): ``PLANTED``, holding a case of each kind
of problem (``PLANTED_KINDS`` says which case has which), and ``CLEAN``, whose cases use
every feature the audit derives runs for and contradict nothing. Their environment is the
tests' ``Store`` (``tests.support.environments``)."""

from __future__ import annotations

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["C", "F"]},
            "days": {"type": "integer"},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
}
DELETE = {
    "name": "delete_file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}
STORE_TOOLS = [
    {"name": name, "parameters": {"type": "object", "properties": {"key": {}, "value": {}}}}
    for name in ("put", "get", "delete")
]
TOOLS = [WEATHER, DELETE, *STORE_TOOLS]
STORE = {"name": "Store", "initial_state": {"a": 1}}
SAID_DONE = {"type": "final_text_contains", "text": "done"}


def call(tool: str, **arguments) -> dict:
    return {"name": tool, "required_args": arguments}


PLANTED_CASES = [
    {
        "key": "count-contradicts",
        "prompt": "Weather in Paris and Tokyo",
        "expected_calls": [call("get_weather", city="Paris"), call("get_weather", city="Tokyo")],
        "expectations": [{"type": "tool_call_count", "tool": "get_weather", "max": 1}],
    },
    {
        "key": "forbids-its-call",
        "prompt": "Delete a.txt",
        "expected_calls": [call("delete_file", path="a.txt")],
        "expectations": [{"type": "did_not_call_tool", "tool": "delete_file"}],
    },
    {
        "key": "order-contradicts",
        "prompt": "Check the weather, then delete the file",
        "expected_calls": [
            {**call("get_weather", city="Paris"), "ordered": True},
            {**call("delete_file", path="a.txt"), "ordered": True},
        ],
        "extra_calls": "forbid",
        "expectations": [
            {"type": "called_tools_in_order", "tools": ["delete_file", "get_weather"]}
        ],
    },
    {
        "key": "regex-matches-nothing",
        "prompt": "Weather somewhere",
        "expected_calls": [call("get_weather", city={"$regex": "Par^is"})],
    },
    {
        "key": "idle-passes",
        "prompt": "Do not delete anything",
        "expectations": [{"type": "did_not_call_tool", "tool": "delete_file"}],
    },
    {
        "key": "unknown-tool",
        "prompt": "Weather in Oslo",
        "expected_calls": [call("get_wether", city="Oslo")],
    },
    {
        "key": "schema-refuses",
        "prompt": "Weather in Rome in kelvin",
        "expected_calls": [call("get_weather", city="Rome", unit="K")],
    },
    {
        "key": "replay-refused",
        "prompt": "Remove zzz",
        "environment": STORE,
        "expectations": [
            {
                "type": "end_state_matches",
                "reference_calls": [{"name": "delete", "arguments": {"key": "zzz"}}],
            },
            SAID_DONE,
        ],
    },
    {
        "key": "state-mismatch",
        "prompt": "Store b",
        "environment": STORE,
        "expected_calls": [call("put", key="b", value=2)],
        "expectations": [{"type": "state_path_equals", "path": "b", "value": 3}],
    },
    {
        "key": "first",
        "prompt": "Weather in Lima",
        "expected_calls": [call("get_weather", city="Lima")],
    },
    {
        "key": "repeats-first",
        "title": "the same again",
        "prompt": "Weather in Lima",
        "expected_calls": [call("get_weather", city="Lima")],
    },
]
PLANTED = {"schema": "casebook.suite/1", "name": "planted", "tools": TOOLS, "cases": PLANTED_CASES}
# Each planted case's problems, by kind.
PLANTED_KINDS = {
    "count-contradicts": ["contradiction"],
    "forbids-its-call": ["contradiction"],
    "order-contradicts": ["contradiction"],
    "regex-matches-nothing": ["contradiction"],
    "idle-passes": ["passes_idle"],
    "unknown-tool": ["unknown_tool"],
    "schema-refuses": ["schema"],
    "replay-refused": ["replay_refused"],
    "state-mismatch": ["state_mismatch"],
    "repeats-first": ["duplicate"],
}

CLEAN_CASES = [
    {
        "key": "matchers",
        "prompt": "Weather in Paris for a few days",
        "expected_calls": [
            {
                "name": "get_weather",
                "required_args": {
                    "city": {"$text": {"value": "paris", "ignore": ["case"]}},
                    "unit": {"$one_of": ["C", "F"]},
                    "days": {"$optional": {"$approx": {"value": 3, "tolerance": 1}}},
                },
                "exact_args": True,
            },
            {
                "name": "get_weather",
                "required_args": {"city": {"$regex": "[A-Z][a-z]+ \\d{2}"}},
                "ordered": True,
                "depends_on_result": True,
            },
        ],
        "expectations": [
            {"type": "tool_call_count", "tool": "get_weather", "min": 2, "max": 2},
            {"type": "final_text_matches", "regex": "^Forecast"},
            {"type": "final_text_contains", "text": "paris", "case_insensitive": True},
            {"type": "final_number_equals", "value": 21.5, "tolerance": 0.5},
            {"type": "no_error"},
        ],
    },
    {
        "key": "adds-what-it-asks",
        "prompt": "Look things up, at least three times, recovering from an error",
        "expectations": [
            {"type": "called_tool", "tool": "get_weather"},
            {
                "type": "called_tool_with",
                "tool": "delete_file",
                "args": {"path": {"$type": "string"}},
            },
            {"type": "called_tools_in_order", "tools": ["get_weather", "delete_file"]},
            {"type": "tool_call_count", "min": 3},
            {"type": "tool_error_count", "tool": "get_weather", "min": 1},
            {"type": "final_text_equals", "text": "All done."},
        ],
    },
    {
        "key": "in-the-store",
        "prompt": "Store b and c",
        "environment": STORE,
        "expected_calls": [call("put", key="b", value=2), call("put", key="c", value=[1, 2])],
        "expectations": [
            {
                "type": "end_state_matches",
                "reference_calls": [
                    {"name": "get", "arguments": {"key": "a"}},
                    {"name": "put", "arguments": {"key": "b", "value": 2}},
                    {"name": "put", "arguments": {"key": "c", "value": [1, 2]}},
                ],
            },
            {"type": "state_path_equals", "path": "c[1]", "value": {"$type": "integer"}},
        ],
    },
    {
        "key": "by-turn",
        "prompt": "Store b, then remove a",
        "environment": STORE,
        "expectations": [
            {
                "type": "end_state_matches",
                "reference_turns": [
                    [{"name": "put", "arguments": {"key": "b", "value": 2}}],
                    [],
                    [{"name": "delete", "arguments": {"key": "a"}}],
                ],
            }
        ],
    },
    {
        "key": "refuses",
        "prompt": "Format my disk",
        "expected_calls": [],
        "extra_calls": "forbid",
        "expectations": [
            {"type": "no_tool_calls"},
            {"type": "final_text_contains", "text": "cannot"},
        ],
    },
]
CLEAN = {
    "schema": "casebook.suite/1",
    "name": "clean",
    "tools": TOOLS,
    "catalog_checks": True,
    "cases": CLEAN_CASES,
}

# The environment kinds again, in BFCL's vehicle backend (the installed ``bfcl``
# environment), for what cannot name the tests' own environments: the command, the pages.
VEHICLE = {
    "name": "bfcl",
    "initial_state": {"involved_classes": ["VehicleControlAPI"], "initial_config": {}},
}
LOCK = {"unlock": False, "door": ["driver"]}
VEHICLE_CASES = [
    {
        "key": "vehicle-refused",
        "prompt": "Lock the driver's door in red",
        "environment": VEHICLE,
        "expectations": [
            {
                "type": "end_state_matches",
                "reference_calls": [{"name": "lockDoors", "arguments": {**LOCK, "colour": "red"}}],
            },
            SAID_DONE,
        ],
    },
    {
        "key": "vehicle-mismatch",
        "prompt": "Lock the driver's door",
        "environment": VEHICLE,
        "expected_calls": [{"name": "lockDoors", "required_args": LOCK}],
        "expectations": [
            {
                "type": "state_path_equals",
                "path": "VehicleControlAPI.doorStatus.driver",
                "value": "unlocked",
            }
        ],
    },
]
# The planted suite with its environment kinds in the vehicle backend; its catalog names
# the vehicle's tools.
PLANTED_IN_BFCL = {
    **PLANTED,
    "tools": [*TOOLS, {"name": "lockDoors", "parameters": {"type": "object"}}],
    "cases": [
        *(case for case in PLANTED_CASES if "environment" not in case),
        *VEHICLE_CASES,
    ],
}
PLANTED_IN_BFCL_KINDS = {
    **{
        key: kinds
        for key, kinds in PLANTED_KINDS.items()
        if key not in ("replay-refused", "state-mismatch")
    },
    "vehicle-refused": ["replay_refused"],
    "vehicle-mismatch": ["state_mismatch"],
}
