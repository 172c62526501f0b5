"""Tool catalogs from the schemas agents already have: OpenAI, Anthropic, MCP (bare or in its
JSON-RPC answer, one page or several; kept as given) and BFCL function docs, the shape
detected; and the catalog as the suite page shows it."""

import pytest

from cases.tool_catalog import argument_schemas, catalog_rows, tools_from_any
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
        (EXPECTED, "casebook", "tools: imported 1 from a Casebook tool catalog"),
    ],
)
def test_each_shape_is_detected_and_converted(data, shape, message):
    imported = tools_from_any(data)
    assert (imported.tools, imported.shape, imported.message) == (EXPECTED, shape, message)


MCP_TOOL = {
    "name": "get_weather",
    "title": "Weather now",
    "description": "Weather",
    "inputSchema": SCHEMA,
    "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}},
    "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": True},
    "_meta": {"vendor.example/tier": "free"},
}
OTHER_TOOL = {"name": "cancel", "inputSchema": {"type": "object"}}


@pytest.mark.parametrize(
    "data",
    [
        {"tools": [MCP_TOOL, OTHER_TOOL]},
        {"jsonrpc": "2.0", "id": 2, "result": {"tools": [MCP_TOOL, OTHER_TOOL]}},
        # a paginated listing: its pages in order, bare or as JSON-RPC answers
        [
            {"tools": [MCP_TOOL], "nextCursor": "2"},
            {"jsonrpc": "2.0", "id": 3, "result": {"tools": [OTHER_TOOL]}},
        ],
    ],
)
def test_mcp_tools_are_kept_as_the_server_gave_them_pages_merged(data):
    imported = tools_from_any(data)
    assert imported.tools == [MCP_TOOL, OTHER_TOOL]
    assert imported.message == "tools: imported 2 from an MCP tools/list result"
    assert argument_schemas(imported.tools) == [
        {"name": "get_weather", "description": "Weather", "parameters": SCHEMA},
        {"name": "cancel", "description": "", "parameters": {"type": "object"}},
    ]


def test_a_json_rpc_error_answer_is_refused_with_its_message():
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    with pytest.raises(InvalidInput) as refused:
        tools_from_any(error)
    (problem,) = refused.value.problems
    assert (problem.path, problem.message) == (
        "error",
        'a JSON-RPC error answer, not a tools/list result: "Method not found"',
    )


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
        (
            [{"tools": [MCP_TOOL]}, {"result": {"tools": [5]}}],
            "[1].result.tools[0]",
        ),
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


def test_catalog_rows_show_an_mcp_tools_title_hints_and_output():
    optional = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    tool = {**MCP_TOOL, "inputSchema": {**SCHEMA, "properties": {"note": optional}}}
    pages = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool, OTHER_TOOL]}}
    row, other = catalog_rows(pages)  # a suite file may hold the listing as it came
    assert (row["name"], row["title"], row["description"]) == (
        "get_weather",
        "Weather now",
        "Weather",
    )
    assert row["hints"] == ["read-only", "open-world"]  # destructiveHint is false
    assert [(p["name"], p["type"], p["required"]) for p in row["parameters"]] == [
        ("note", "string | null", False)
    ]
    assert [(p["name"], p["type"]) for p in row["output"]] == [("celsius", "number")]
    assert (other["title"], other["hints"], other["output"]) == ("", [], None)


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
