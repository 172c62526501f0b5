"""The suite's tool catalog (docs/formats.md#tool-catalog): its shape checked by path, kept on
the loaded suite and ignored by scoring, and the authoring warnings it gives."""

import copy

import pytest

from scoring.matcher import InvalidInput, load_run, load_suite, score, suite_warnings

WEATHER = {
    "name": "get_weather",
    "description": "Current weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
            "where": {
                "type": "object",
                "properties": {
                    "lat": {"type": "number"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "required": ["city"],
    },
}


def suite(required_args=None, expectations=(), tools=(WEATHER,), match=None):
    document = {
        "name": "weather",
        "tools": copy.deepcopy(list(tools)),
        "cases": [
            {
                "key": "paris",
                "expected_calls": [
                    {"name": "get_weather", "required_args": required_args or {"city": "Paris"}}
                ],
                "expectations": list(expectations),
            }
        ],
    }
    if match is not None:
        document["match"] = match
    return document


def warnings_of(document):
    return {warning.path: warning.message for warning in suite_warnings(document)}


CALL = "cases[0].expected_calls[0]"


def test_the_catalog_is_kept_on_the_suite_and_does_not_change_verdicts():
    with_tools = load_suite(suite({"citty": "Paris"}))
    without = load_suite({**suite({"citty": "Paris"}), "tools": []})
    assert [tool.name for tool in with_tools.tools] == ["get_weather"]
    assert with_tools.tools[0].required == ("city",)
    run = load_run(
        {"case": "paris", "batches": [[{"name": "get_weather", "arguments": {"citty": "Paris"}}]]}
    )
    assert (
        score(with_tools.case("paris"), run).to_dict()
        == score(without.case("paris"), run).to_dict()
    )


@pytest.mark.parametrize(
    ("tools", "path", "message"),
    [
        ("nope", "tools", "must be a list of tools or an MCP tools/list result, not string"),
        ([3], "tools[0]", "must be a tool object, not number"),
        ([{"description": "x"}], "tools[0].name", "required"),
        ([{"name": ""}], "tools[0].name", "must not be empty"),
        ([{"name": "f", "parameters": []}], "tools[0].parameters", "must be an object, not array"),
        (
            [{"name": "f", "parameters": {"type": "dict"}}],
            "tools[0].parameters.type",
            "unknown JSON Schema type",
        ),
        (
            [{"name": "f", "parameters": {"type": "string"}}],
            "tools[0].parameters.type",
            'must be of type "object"',
        ),
        (
            [{"name": "f", "parameters": {"properties": {"a": 1}}}],
            "tools[0].parameters.properties.a",
            "must be a JSON Schema object",
        ),
        (
            [{"name": "f", "parameters": {"required": [1]}}],
            "tools[0].parameters.required[0]",
            "must be a string",
        ),
        ([{"name": "f"}, {"name": "f"}], "tools[1].name", "duplicate tool 'f' (also tools[0])"),
    ],
)
def test_a_catalog_of_the_wrong_shape_is_refused_by_path(tools, path, message):
    with pytest.raises(InvalidInput) as refused:
        load_suite(suite(tools=()) | {"tools": tools})
    assert [(p.path, message in p.message) for p in refused.value.problems] == [(path, True)]


def test_a_suite_without_a_catalog_has_no_warnings():
    assert suite_warnings(suite({"anything": 1}, tools=())) == []
    assert suite_warnings(["not a suite"]) == []


def test_an_unknown_argument_suggests_the_close_name():
    assert warnings_of(suite({"citty": "Paris"})) == {
        f"{CALL}.required_args.citty": (
            "unknown argument `citty` of `get_weather`; did you mean `city`?"
        ),
        f"{CALL}.required_args": "`get_weather` requires `city`, which this call never constrains",
    }


def test_an_unknown_tool_suggests_the_close_name_in_calls_and_expectations():
    document = suite(
        expectations=[
            {"type": "did_not_call_tool", "tool": "get_wether"},
            {"type": "called_tools_in_order", "tools": ["get_weather", "zzz"]},
            {"type": "tool_call_count", "max": 2},
        ]
    )
    document["cases"][0]["expected_calls"][0]["name"] = "get_wether"
    assert warnings_of(document) == {
        f"{CALL}.name": "unknown tool `get_wether`; did you mean `get_weather`?",
        "cases[0].expectations[0].tool": "unknown tool `get_wether`; did you mean `get_weather`?",
        "cases[0].expectations[1].tools[1]": "unknown tool `zzz`",
    }


@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        (5, "days", None),
        (5.0, "days", None),
        (5.5, "days", "must be integer, not number"),
        ("5", "days", "must be integer, not string"),
        ({"$approx": {"value": 5, "tolerance": 1}}, "days", None),
        ({"$regex": "5"}, "days.$regex", "matches only string values; the schema says integer"),
        ({"$text": {"value": "5"}}, "days.$text", "matches only string values"),
        ({"$type": "number"}, "days", None),
        ({"$type": "string"}, "days.$type", "matches only string values"),
        (
            {"$approx": {"value": 1, "tolerance": 0}},
            "city.$approx",
            "matches only number values; the schema says string",
        ),
        (
            {"$one_of": ["celsius", "kelvin"]},
            "unit.$one_of[1]",
            'not one of the values the schema allows: "celsius", "fahrenheit"',
        ),
        ({"$optional": "kelvin"}, "unit.$optional", "not one of the values"),
        ("celsius", "unit", None),
        ({"lat": "north"}, "where.lat", "must be number, not string"),
        ({"$subset": {"tags": ["a", 3]}}, "where.$subset.tags[1]", "must be string, not number"),
        ({"$literal": {"$x": 1}}, "where.$literal", None),
        ({"$literal": 3}, "unit.$literal", "must be string, not number"),
        (None, "unit", "must be string, not null"),
    ],
)
def test_values_and_matchers_are_compared_with_the_parameter_schema(value, path, message):
    found = warnings_of(suite({"city": "Paris", path.split(".")[0]: value}))
    found.pop(f"{CALL}.required_args", None)  # city is constrained: never this warning
    if message is None:
        assert found == {}
    else:
        assert list(found) == [f"{CALL}.required_args.{path}"]
        assert message in found[f"{CALL}.required_args.{path}"]


def test_a_required_parameter_marked_absent_is_a_warning_at_its_place():
    assert warnings_of(suite({"city": {"$absent": True}})) == {
        f"{CALL}.required_args.city": "`get_weather` requires `city`: a call without it is invalid"
    }


def test_called_tool_with_args_are_checked_but_need_not_name_required_parameters():
    document = suite(
        expectations=[
            {"type": "called_tool_with", "tool": "get_weather", "args": {"unit": "kelvin"}}
        ]
    )
    assert warnings_of(document) == {
        "cases[0].expectations[0].args.unit": (
            'not one of the values the schema allows: "celsius", "fahrenheit"'
        )
    }


def test_names_compare_under_the_cases_match_options():
    document = suite({"CITY": "Paris"}, match="lenient")
    document["cases"][0]["expected_calls"][0]["name"] = "Get_Weather"
    assert warnings_of(document) == {}
    assert set(warnings_of(suite({"CITY": "Paris"}))) == {
        f"{CALL}.required_args.CITY",
        f"{CALL}.required_args",
    }
