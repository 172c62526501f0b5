"""The suite's tool catalog through the API: imported with the suite and on its own
(``POST /api/suites/{id}/tools/``), exported, and the warnings it gives by JSON path."""

import json

from cases import services
from cases.models import Suite

from .conftest import suite_file

WEATHER = {
    "name": "get_weather",
    "description": "Current weather in a city",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "the city's name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
OPENAI_TOOLS = [{"type": "function", "function": WEATHER}]


def weather_suite(required_args: dict) -> dict:
    return {
        "schema": "casebook.suite/1",
        "name": "weather",
        "tools": [WEATHER],
        "cases": [
            {
                "key": "paris",
                "expected_calls": [{"name": "get_weather", "required_args": required_args}],
            }
        ],
    }


def post_json(client, url, data):
    return client.post(url, data=json.dumps(data).encode(), content_type="application/json")


def import_suite(client, team, document):
    return post_json(client, f"/api/suites/import/?team={team.slug}", document)


def test_a_suite_with_its_openai_tools_and_a_misspelt_argument_imports_with_a_warning(
    api, editor, team
):
    # The whole round: the suite's tools imported from OpenAI's array, then a case naming
    # `citty` is accepted (201) with a warning at its path suggesting `city`.
    response = import_suite(api(editor), team, weather_suite({"city": "Paris"}))
    assert response.status_code == 201, response.content
    suite_id = response.json()["id"]
    answer = post_json(api(editor), f"/api/suites/{suite_id}/tools/", OPENAI_TOOLS)
    assert answer.status_code == 201, answer.content
    assert answer.json()["message"] == "tools: imported 1 from OpenAI tools"
    exported = api(editor).get(f"/api/suites/{suite_id}/export/").json()
    assert exported["tools"] == [WEATHER]

    exported["name"] = "weather, misspelt"
    exported["cases"][0]["expected_calls"][0]["required_args"] = {"citty": "Paris"}
    response = import_suite(api(editor), team, exported)
    assert response.status_code == 201, response.content
    warnings = response.json()["warnings"]
    at = [w for w in warnings if w["path"] == "cases[0].expected_calls[0].required_args.citty"]
    assert len(at) == 1
    assert "did you mean `city`?" in at[0]["message"]
    # never a rejection: the case is stored as written
    suite = Suite.objects.get(pk=response.json()["id"])
    assert suite.cases.get().expected_calls.get().required_args == {"citty": "Paris"}


def test_import_warns_of_unknown_tools_wrong_types_enums_and_unconstrained_parameters(
    api, editor, team
):
    document = weather_suite({"unit": "kelvin"})
    document["cases"][0]["expected_calls"].append({"name": "get_wether"})
    document["cases"][0]["expectations"] = [
        {"type": "called_tool_with", "tool": "get_weather", "args": {"city": {"$approx": {
            "value": 1, "tolerance": 0}}}}
    ]  # fmt: skip
    response = import_suite(api(editor), team, document)
    assert response.status_code == 201
    by_path = {w["path"]: w["message"] for w in response.json()["warnings"]}
    assert set(by_path) == {
        "cases[0].expected_calls[0].required_args.unit",
        "cases[0].expected_calls[0].required_args",
        "cases[0].expected_calls[1].name",
        "cases[0].expectations[0].args.city.$approx",
    }
    assert '"celsius", "fahrenheit"' in by_path["cases[0].expected_calls[0].required_args.unit"]
    assert "requires `city`" in by_path["cases[0].expected_calls[0].required_args"]
    assert "did you mean `get_weather`?" in by_path["cases[0].expected_calls[1].name"]


def test_tools_of_a_bad_shape_answer_400_by_path_and_change_nothing(api, editor, suite):
    before = suite.latest_version.number
    bad = [WEATHER, {"description": "no name", "parameters": {}}]
    response = post_json(api(editor), f"/api/suites/{suite.pk}/tools/", bad)
    assert response.status_code == 400
    assert {"path": "tools[1].name", "message": "required"} in response.json()["problems"]
    assert suite.latest_version.number == before
    unknown = post_json(api(editor), f"/api/suites/{suite.pk}/tools/", [{"x": 1}])
    assert unknown.status_code == 400
    assert unknown.json()["problems"][0]["path"] == "[0]"


def test_only_editors_replace_the_catalog(api, viewer, outsider, suite):
    url = f"/api/suites/{suite.pk}/tools/"
    assert post_json(api(viewer), url, OPENAI_TOOLS).status_code == 403
    assert post_json(api(outsider), url, OPENAI_TOOLS).status_code == 404
    assert post_json(api(), url, OPENAI_TOOLS).status_code in (401, 403)
    assert services.suite_tools(Suite.objects.get(pk=suite.pk)) == []


def test_an_mcp_json_rpc_answer_is_kept_as_the_server_gave_it(api, admin, suite):
    tool = {
        "name": "get_weather",
        "title": "Weather",
        "inputSchema": WEATHER["parameters"],
        "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}},
        "annotations": {"readOnlyHint": True, "openWorldHint": True},
        "_meta": {"vendor/x": 1},
    }
    mcp = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool], "nextCursor": None}}
    response = post_json(api(admin), f"/api/suites/{suite.pk}/tools/", mcp)
    assert response.status_code == 201
    assert response.json()["message"] == "tools: imported 1 from an MCP tools/list result"
    # the fixture's suite calls file_exists and delete_file, which this catalog lacks
    paths = {w["path"] for w in response.json()["warnings"]}
    assert "cases[0].expected_calls[0].name" in paths
    suite_file_again = services.suite_document(Suite.objects.get(pk=suite.pk))
    assert suite_file_again["tools"] == [tool]
    assert suite_file()["cases"][0]["key"] == suite_file_again["cases"][0]["key"]
