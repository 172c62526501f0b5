"""Tool catalogs from the schemas agents already have: OpenAI, Anthropic, MCP (bare or in its
JSON-RPC answer) and BFCL function docs, the shape detected."""

import pytest

from cases.tool_catalog import catalog_rows, tools_from_any
from scoring.matcher import InvalidInput, load_suite, suite_warnings
from tests.support.bfcl_data import imported_suite

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "a city"}},
    "required": ["city"],
}
EXPECTED = [{"name": "get_weather", "description": "Weather", "parameters": SCHEMA}]


@pytest.mark.parametrize(
    ("data", "shape", "message"),
    [
        (
            [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "description": "Weather",
                        "parameters": SCHEMA,
                    },
                }
            ],
            "openai",
            "tools: imported 1 from OpenAI tools",
        ),
        (
            [
                {
                    "type": "function",
                    "name": "get_weather",
                    "description": "Weather",
                    "parameters": SCHEMA,
                }
            ],
            "openai",
            "tools: imported 1 from OpenAI tools",
        ),
        (
            [{"name": "get_weather", "description": "Weather", "input_schema": SCHEMA}],
            "anthropic",
            "tools: imported 1 from Anthropic tool definitions",
        ),
        (
            {"tools": [{"name": "get_weather", "description": "Weather", "inputSchema": SCHEMA}]},
            "mcp",
            "tools: imported 1 from an MCP tools/list result",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {
                    "tools": [
                        {"name": "get_weather", "description": "Weather", "inputSchema": SCHEMA}
                    ],
                    "nextCursor": None,
                },
            },
            "mcp",
            "tools: imported 1 from an MCP tools/list result",
        ),
        (EXPECTED, "casebook", "tools: imported 1 from a Casebook tool catalog"),
    ],
)
def test_each_shape_is_detected_and_converted(data, shape, message):
    imported = tools_from_any(data)
    assert (imported.tools, imported.shape, imported.message) == (EXPECTED, shape, message)


def test_mcp_annotations_are_kept_as_the_tool_gives_them():
    hints = {"readOnlyHint": True, "title": "Weather"}
    mcp = {"name": "get_weather", "inputSchema": SCHEMA, "annotations": hints}
    assert tools_from_any({"tools": [mcp]}).tools == [
        {"name": "get_weather", "parameters": SCHEMA, "annotations": hints}
    ]


def test_bfcl_docs_get_json_schema_types():
    doc = {
        "name": "calc.area",
        "description": "Area",
        "parameters": {
            "type": "dict",
            "properties": {
                "base": {"type": "float"},
                "sides": {"type": "tuple", "items": {"type": "integer"}},
                "opts": {"type": "dict", "properties": {"x": {"type": "any"}}},
                "map": {"type": "HashMap"},
            },
            "required": ["base"],
        },
    }
    imported = tools_from_any([doc])
    assert imported.shape == "bfcl"
    assert imported.tools[0]["parameters"] == {
        "type": "object",
        "properties": {
            "base": {"type": "number"},
            "sides": {"type": "array", "items": {"type": "integer"}},
            "opts": {"type": "object", "properties": {"x": {}}},
            "map": {"x-bfcl-type": "HashMap"},
        },
        "required": ["base"],
    }
    load_suite({"name": "s", "tools": imported.tools, "cases": []})  # a valid catalog


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ("text", ""),
        ([], ""),
        ([1], "[0]"),
        ([{"foo": 1}], "[0]"),
        ({"result": {"tools": 3}}, "result.tools"),
    ],
)
def test_what_is_no_tool_definition_is_refused_by_path(data, path):
    with pytest.raises(InvalidInput) as refused:
        tools_from_any(data)
    assert refused.value.problems[0].path == path


def test_import_bfcl_fills_the_catalog_from_the_questions_docs():
    document = imported_suite("multiple")
    names = [tool["name"] for tool in document["tools"]]
    assert len(names) == len(set(names)) > 1
    types = {
        schema.get("type")
        for tool in document["tools"]
        for schema in [tool["parameters"], *tool["parameters"]["properties"].values()]
    }
    assert "object" in types
    assert not {"dict", "float"} & types
    assert load_suite(document).tools
    # BFCL's own ground truth agrees with its own docs: nothing to warn about
    assert suite_warnings(document) == []


def test_catalog_rows_show_types_required_marks_and_enums():
    tools = [
        {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "unit": {"type": "string", "enum": ["C", "F"], "description": "u"},
                    "ids": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["unit"],
            },
        }
    ]
    (row,) = catalog_rows(tools)
    assert row["parameters"] == [
        {
            "name": "unit",
            "type": "string",
            "required": True,
            "description": "u",
            "enum": ['"C"', '"F"'],
        },
        {
            "name": "ids",
            "type": "array of integer",
            "required": False,
            "description": "",
            "enum": [],
        },
    ]


def test_inferred_tools_name_types_examples_and_always_sent_arguments():
    from cases.tool_catalog import infer_tools

    calls = [
        ("f", {"n": 1, "x": "a"}),
        ("f", {"n": 2.0, "x": None}),
        ("f", {"n": 3, "flag": True}),
        ("f", {"n": 1, "x": "b"}),
        ("g", "not an object"),
        ("", {"ignored": 1}),
    ]
    f, g = infer_tools(calls)
    assert f["parameters"]["properties"] == {
        "n": {"type": "integer", "examples": [1, 2.0, 3]},
        "x": {"type": ["string", "null"], "examples": ["a", None, "b"]},
        "flag": {"type": "boolean", "examples": [True]},
    }
    assert f["parameters"]["required"] == ["n"]
    assert f["description"] == "inferred from 4 recorded calls"
    assert g["parameters"] == {"type": "object", "properties": {}, "required": []}
    load_suite({"name": "s", "tools": [f, g], "cases": []})
