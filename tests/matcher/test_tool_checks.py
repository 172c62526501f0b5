"""Calls checked against the suite's tool catalog, and the errors tools returned
(docs/matcher.md#tool-checks)."""

import copy
import json
import time

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cases.tool_catalog import tools_from_any
from scoring.importers import to_canonical
from scoring.matcher import ERROR, FAIL, PASS, InvalidInput, load_run, load_suite, score
from scoring.matcher.arguments.schemas import ToolSchema, TooSlow, _unique_items, validating
from tests.support import tau_bench

WEATHER = {
    "name": "get_weather",
    "title": "Weather",
    "description": "Current weather for a city",
    "inputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "units": {"enum": ["metric", "imperial"]},
            "stations": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]{4}$"}},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
}
BOOK = {
    "name": "book_table",
    "description": "Book a table",
    "parameters": {
        "type": "object",
        "properties": {"guests": {"type": "integer"}},
        "required": ["guests"],
    },
}


def suite(expectations=(), tools=None, strict=True, **top):
    document = {
        "schema": "casebook.suite/1",
        "name": "s",
        "tools": [WEATHER, BOOK] if tools is None else tools,
        "cases": [{"key": "c", "expectations": list(expectations)}],
        **top,
    }
    return load_suite(document, strict=strict)


def run(*batches, **fields):
    return load_run({"case": "c", "batches": [list(batch) for batch in batches], **fields})


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def predicate(report, label_start):
    [found] = [p for p in report.predicates if p.label.startswith(label_start)]
    return found


SCHEMA_CHECK = [{"type": "arguments_match_schema"}]


def test_calls_valid_against_their_schemas_pass():
    report = score(
        suite(SCHEMA_CHECK).cases[0],
        run(
            [call("get_weather", city="Paris", days=3, stations=["LFPG"])],
            [call("book_table", guests=2)],
        ),
    )
    assert report.verdict == PASS


def test_the_failing_call_is_named_with_its_path_and_what_the_schema_wanted():
    report = score(
        suite(SCHEMA_CHECK).cases[0],
        run([call("get_weather", city="Paris")], [call("get_weather", city=5)]),
    )
    assert report.verdict == FAIL
    failed = predicate(report, "every call's arguments")
    assert failed.detail == "get_weather, batch 1, call 0: city: 5 is not of type 'string'"
    assert failed.nearest == (1, 0)
    assert failed.cause.to_dict() == {"kind": "schema", "tool": "get_weather", "argument": "city"}


@pytest.mark.parametrize(
    ("arguments", "detail", "argument"),
    [
        ({}, "'city' is a required property", "city"),
        ({"city": "Oslo", "days": 9}, "days: 9 is greater than the maximum of 7", "days"),
        ({"city": "Oslo", "days": 2.0}, None, None),  # 2.0 is an integer, as JSON means it
        ({"city": "Oslo", "units": "kelvin"}, "units: 'kelvin' is not one of", "units"),
        (
            {"city": "Oslo", "stations": ["LFPG", "x"]},
            "stations[1]: 'x' does not match",
            "stations[1]",
        ),
        ({"city": "Oslo", "country": "NO"}, "Additional properties are not allowed", "country"),
    ],
)
def test_each_kind_of_schema_failure(arguments, detail, argument):
    report = score(suite(SCHEMA_CHECK).cases[0], run([call("get_weather", **arguments)]))
    if detail is None:
        assert report.verdict == PASS
        return
    failed = predicate(report, "every call's arguments")
    assert failed.detail.startswith(f"get_weather, batch 0, call 0: {detail}")
    assert failed.cause.argument == argument


def test_only_the_named_tool_is_checked_and_calls_outside_the_catalog_are_not():
    checks = [{"type": "arguments_match_schema", "tool": "book_table"}]
    calls = [call("get_weather", city=5), call("unknown_tool", x=1)]
    assert score(suite(checks).cases[0], run(calls, [call("book_table", guests=2)])).verdict == PASS
    report = score(suite(checks).cases[0], run([call("book_table", guests="two")]))
    assert predicate(report, "arguments of book_table").detail == (
        "book_table, batch 0, call 0: guests: 'two' is not of type 'integer'"
    )


def test_many_failing_calls_are_counted_after_the_first_few():
    calls = [call("get_weather", city=n) for n in range(5)]
    detail = predicate(score(suite(SCHEMA_CHECK).cases[0], run(calls)), "every call's").detail
    assert detail.count("is not of type 'string'") == 3
    assert detail.endswith("; and 2 more calls")


def test_arguments_that_are_not_an_object_fail():
    bad = {"name": "get_weather", "arguments": None, "arguments_raw": '{"city": "Par'}
    detail = predicate(score(suite(SCHEMA_CHECK).cases[0], run([bad])), "every call's").detail
    assert (
        detail
        == 'get_weather, batch 0, call 0: arguments are not a JSON object: "{\\"city\\": \\"Par"'
    )


def test_arguments_not_captured_are_not_judged():
    unrecorded = {"name": "get_weather", "arguments": None, "arguments_captured": False}
    report = score(
        suite(SCHEMA_CHECK).cases[0],
        run([unrecorded], not_captured={"arguments": "capture is off: set CAPTURE=on"}),
    )
    assert report.verdict == ERROR
    assert predicate(report, "every call's").detail == "not judged: capture is off: set CAPTURE=on"


def test_the_schema_dialect_is_the_one_it_names():
    """Draft-07's ``dependencies`` is a keyword there; Draft 2020-12 ignores it."""
    schema = {
        "type": "object",
        "properties": {"a": {}, "b": {}},
        "dependencies": {"a": ["b"]},
    }
    draft7 = {
        "name": "t",
        "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", **schema},
    }
    latest = {"name": "t", "inputSchema": schema}
    assert score(suite(SCHEMA_CHECK, [draft7]).cases[0], run([call("t", a=1)])).verdict == FAIL
    assert score(suite(SCHEMA_CHECK, [latest]).cases[0], run([call("t", a=1)])).verdict == PASS


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "minProperties": -1}, "not a valid JSON Schema at ['minProperties']"),
        ({"type": "object", "properties": {"a": {"pattern": "(a)\\1"}}}, "RE2 cannot compile"),
        ({"$schema": "https://example.com/mine", "type": "object"}, "not a dialect Casebook knows"),
        (
            {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(12_000)}},
            "larger than 20,000",
        ),
    ],
)
def test_a_schema_that_cannot_be_checked_is_refused_by_path(schema, problem):
    with pytest.raises(InvalidInput) as refused:
        suite(SCHEMA_CHECK, [{"name": "t", "inputSchema": schema}])
    [found] = refused.value.problems
    assert found.path == "tools[0].inputSchema"
    assert problem in found.message


def test_a_stored_suite_whose_schema_cannot_be_checked_scores_error():
    tools = [{"name": "t", "parameters": {"type": "object", "minProperties": -1}}]
    report = score(suite(SCHEMA_CHECK, tools, strict=False).cases[0], run([call("t", a=1)]))
    assert report.verdict == ERROR
    assert "t's input schema (tools[0].parameters) not a valid JSON Schema" in report.error


def test_a_reference_outside_the_schema_is_an_error_not_a_failure():
    tools = [
        {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"$ref": "https://example.com/a.json"}},
            },
        }
    ]
    report = score(suite(SCHEMA_CHECK, tools).cases[0], run([call("t", a=1)]))
    assert report.verdict == ERROR
    assert "'https://example.com/a.json' cannot be resolved within the schema" in report.error


def test_validation_is_bounded_in_time():
    """Nested alternatives make validation exponential in the arguments' depth; it stops at
    the limit and says so."""
    node = {
        "anyOf": [{"type": "array", "items": {"$ref": "#/$defs/n"}}] * 3
        + [{"type": "integer", "maximum": 0}]
    }
    tools = [
        {
            "name": "t",
            "inputSchema": {
                "$defs": {"n": node},
                "type": "object",
                "properties": {"x": {"$ref": "#/$defs/n"}},
            },
        }
    ]
    deep = 1
    for _ in range(40):
        deep = [deep]
    started = time.monotonic()
    report = score(suite(SCHEMA_CHECK, tools).cases[0], run([call("t", x=deep)]))
    assert time.monotonic() - started < 3
    assert report.verdict == ERROR
    assert "validating the calls took longer than 1 s" in report.error


@pytest.mark.parametrize(
    ("expectation", "tools", "path", "message"),
    [
        (
            {"type": "arguments_match_schema", "tool": "nope"},
            [BOOK],
            "cases[0].expectations[0].tool",
            "'nope' is not in the suite's tool catalog",
        ),
        (
            {"type": "only_catalog_tools"},
            [],
            "cases[0].expectations[0]",
            "the suite has no tool catalog",
        ),
    ],
)
def test_a_catalog_check_needs_the_catalog(expectation, tools, path, message):
    with pytest.raises(InvalidInput) as refused:
        suite([expectation], tools)
    assert [(p.path, p.message) for p in refused.value.problems] == [
        (path, message + (" (tools) to check calls against" if not tools else ""))
    ]


def test_only_catalog_tools_names_the_unknown_ones():
    report = score(
        suite([{"type": "only_catalog_tools"}]).cases[0],
        run(
            [call("get_weather", city="Oslo"), call("get_wether", city="Oslo")],
            [call("delete_all")],
        ),
    )
    failed = predicate(report, "called only tools")
    assert failed.detail == (
        "not in the tool catalog: get_wether (batch 0, call 1); did you mean get_weather?; "
        "delete_all (batch 1, call 0)"
    )
    assert failed.cause.to_dict() == {
        "kind": "unknown_tool",
        "tool": "get_wether",
        "argument": None,
    }


def test_tool_names_compare_under_the_case_match_options():
    loose = suite([{"type": "only_catalog_tools"}], match={"tool_names": "ignore_case"})
    assert score(loose.cases[0], run([call("GET_WEATHER", city="Oslo")])).verdict == PASS
    assert (
        score(suite([{"type": "only_catalog_tools"}]).cases[0], run([call("GET_WEATHER")])).verdict
        == FAIL
    )


def test_the_suite_option_adds_both_checks_to_every_case():
    checked = suite(catalog_checks=True)
    labels = [e.label for e in checked.cases[0].expectations]
    assert labels == [
        "every call's arguments match its tool's schema",
        "called only tools in the catalog",
    ]
    report = score(checked.cases[0], run([call("get_weather", city=5), call("nope")]))
    assert {p.cause.kind for p in report.predicates if not p.passed} == {"schema", "unknown_tool"}
    with pytest.raises(InvalidInput, match="catalog_checks: needs a tool catalog"):
        suite(tools=[], catalog_checks=True)


def test_a_catalog_may_be_an_mcp_tools_list_answer_as_it_is():
    response = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [WEATHER], "nextCursor": "2"}}
    second = {"tools": [BOOK]}
    both = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [WEATHER, BOOK]}}
    for tools in (both, [response, second], {"tools": [WEATHER, BOOK]}):
        loaded = suite(SCHEMA_CHECK, tools)
        report = score(loaded.cases[0], run([call("book_table", guests="x")]))
        assert predicate(report, "every call's").cause.tool == "book_table"
    [weather] = [t for t in suite(tools=[response, second]).tools if t.name == "get_weather"]
    assert (weather.title, weather.annotations, weather.schema_path) == (
        "Weather",
        {"readOnlyHint": True},
        "tools[0].result.tools[0].inputSchema",
    )


@pytest.mark.parametrize(
    ("tools", "path", "message"),
    [
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}},
            "tools.error",
            'a JSON-RPC error answer, not a tools/list result: "Method not found"',
        ),
        ({"nextCursor": "x"}, "tools.tools", "required"),
        (
            [{"tools": [WEATHER]}, {"tools": [WEATHER]}],
            "tools[1].tools[0].name",
            "duplicate tool 'get_weather' (also tools[0].tools[0])",
        ),
        ([{"name": "t", "inputSchema": None}], "tools[0].inputSchema", "must not be null"),
    ],
)
def test_an_mcp_catalog_of_the_wrong_shape_is_refused_by_path(tools, path, message):
    with pytest.raises(InvalidInput) as refused:
        suite(tools=tools)
    assert any(p.path == path and p.message.startswith(message) for p in refused.value.problems), (
        refused.value.problems
    )


TOOL_ERRORS = run(
    [
        call("get_weather", city="Oslo"),
        {
            "name": "book_table",
            "arguments": {"guests": 2},
            "is_error": True,
            "result": "no tables left",
        },
    ],
    [
        {
            "name": "book_table",
            "arguments": {"guests": 1},
            "is_error": True,
            "result": {"error": "closed"},
        }
    ],
)


def test_no_tool_errors_names_the_first():
    report = score(suite([{"type": "no_tool_errors"}]).cases[0], TOOL_ERRORS)
    failed = predicate(report, "no tool errors")
    assert (
        failed.detail
        == 'book_table returned an error in batch 0, call 1: "no tables left"; 2 tool errors in all'
    )
    assert failed.cause.to_dict() == {"kind": "tool_error", "tool": "book_table", "argument": None}
    assert (
        score(
            suite([{"type": "no_tool_errors", "tool": "get_weather"}]).cases[0], TOOL_ERRORS
        ).verdict
        == PASS
    )


@pytest.mark.parametrize(
    ("fields", "verdict", "label"),
    [
        ({"max": 1}, FAIL, "tool errors: at most 1"),
        ({"min": 1, "max": 2}, PASS, "tool errors: 1 to 2"),
        ({"tool": "get_weather", "min": 1}, FAIL, "errors from get_weather: at least 1"),
    ],
)
def test_tool_error_count(fields, verdict, label):
    report = score(suite([{"type": "tool_error_count", **fields}]).cases[0], TOOL_ERRORS)
    assert report.verdict == verdict
    assert predicate(report, label).passed is (verdict == PASS)


def test_tau_bench_runs_against_the_tools_tau_bench_gave_the_agent():
    """GPT-4o's 200 airline runs make 1,164 calls, every one valid against τ-bench's own
    schemas and of a tool in its catalog; a call given a number for a string fails, named."""
    document = tau_bench.suite_document(prefix="")
    document["tools"] = tools_from_any(json.loads(tau_bench.TOOLS_FILE.read_text())).tools
    document["catalog_checks"] = True
    checked = load_suite(document)
    runs = [load_run(to_canonical(record)) for record in tau_bench.RECORDS]
    assert sum(len(run.calls) for run in runs) == 1164
    for run in runs:
        report = score(checked.case(run.case), run)
        assert [
            p for p in report.predicates if p.cause and p.cause.kind in ("schema", "unknown_tool")
        ] == []
    record = copy.deepcopy(tau_bench.RECORDS[0])
    [call] = [
        c
        for m in record["traj"]
        for c in m.get("tool_calls") or ()
        if c["function"]["name"] == "get_user_details"
    ][:1]
    call["function"]["arguments"] = json.dumps({"user_id": 42})
    report = score(checked.case(str(record["task_id"])), load_run(to_canonical(record)))
    failed = predicate(report, "every call's arguments")
    assert failed.detail.startswith(
        "get_user_details, batch 0, call 0: user_id: 42 is not of type 'string'"
    )


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(-5, 5, allow_nan=False)
    | st.text("ab", max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)
    ),
    max_leaves=8,
)
AGREEMENT_SCHEMA = {
    "$defs": {
        "pair": {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "items": False,
        }
    },
    "type": "object",
    "properties": {
        "a": {"anyOf": [{"type": "integer", "minimum": 0}, {"$ref": "#/$defs/pair"}]},
        "b": {"type": "string", "pattern": "^a+$"},
        "c": {"type": "object", "additionalProperties": {"type": "boolean"}, "minProperties": 1},
        "d": {
            "oneOf": [{"type": "number", "multipleOf": 0.5}, {"type": "null"}],
            "not": {"const": 0},
        },
    },
    "required": ["a"],
    "additionalProperties": False,
}


AGREEMENT_CHECK = ToolSchema(AGREEMENT_SCHEMA)
AGREEMENT_REFERENCE = jsonschema.Draft202012Validator(AGREEMENT_SCHEMA)


@given(st.dictionaries(st.sampled_from("abcde"), JSON_VALUES, max_size=4))
@settings(max_examples=300, deadline=None)
def test_the_fast_answer_agrees_with_jsonschema(arguments):
    """Only calls jsonschema itself finds invalid fail: the fast validator's "valid" is
    never wrong."""
    assert AGREEMENT_CHECK._fast is not None  # the schema's one $ref is bounded
    with validating(5.0):
        valid = AGREEMENT_CHECK.failure(arguments) is None
    assert valid == AGREEMENT_REFERENCE.is_valid(arguments)


UNIQUE_SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "uniqueItems": True}},
}
UNIQUE_CHECK = ToolSchema(UNIQUE_SCHEMA)
UNIQUE_REFERENCE = jsonschema.Draft202012Validator(UNIQUE_SCHEMA)


@given(st.lists(JSON_VALUES, max_size=6))
@settings(max_examples=300, deadline=None)
def test_unique_items_agrees_with_jsonschema(items):
    """Items equal by JSON meaning (1 and 1.0, objects in any key order; true is not 1)."""
    with validating(5.0):
        valid = UNIQUE_CHECK.failure({"items": items}) is None
    assert valid == UNIQUE_REFERENCE.is_valid({"items": items})


def test_unique_items_over_thousands_of_objects_costs_time_linear_in_them():
    """jsonschema compares unhashable items pairwise: 6,000 objects took 46 s."""
    items = [{"id": n, "tags": [str(n)]} for n in range(6000)] + [{"tags": ["7"], "id": 7.0}]
    started = time.process_time()
    with validating(5.0):
        failure = UNIQUE_CHECK.failure({"items": items})
    assert time.process_time() - started < 1
    assert failure.path == "items"
    assert failure.message.startswith("items 7 and 6000 are equal")


def test_unique_items_looks_at_the_deadline_as_it_goes():
    validator = jsonschema.Draft202012Validator({})
    with validating(0.0), pytest.raises(TooSlow):
        list(_unique_items(validator, True, [[n] for n in range(1000)], {}))
