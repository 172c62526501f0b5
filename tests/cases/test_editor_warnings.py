"""The tool catalog's warnings in the case editor: as the arguments or the tool are typed (the
as-you-type check), and beside the fields when a case is opened or saved; warnings never stop a
save."""

import json

from cases import services
from cases.models import Case
from tests.support.pages import editor_data, small_document, text

WEATHER = {
    "name": "get_weather",
    "description": "Weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
EVIL = "<script>alert(1)</script>"


def weather_suite(team, admin, tools=(WEATHER,)):
    suite = services.create_suite(team, small_document("weather"), admin)
    services.replace_tools(suite, list(tools), admin, "tools")
    return suite


def typed(client, suite, args, tool="get_weather", place="call"):
    return client.post(
        "/editor/validate/",
        {
            "kind": "args",
            "field": "call-0-required_args",
            "call-0-required_args": args,
            "call-0-name": tool,
            "tool_field": "call-0-name",
            "suite": str(suite.pk),
            "place": place,
        },
    )


def test_typing_a_misspelt_argument_warns_with_a_suggestion(as_user, editor, team, admin):
    suite = weather_suite(team, admin)
    answer = text(typed(as_user(editor), suite, '{"citty": "Paris"}'))
    assert (
        '<span class="field-warning">citty: unknown argument `citty` of `get_weather`; ' in answer
    )
    assert "did you mean `city`?</span>" in answer
    assert "requires `city`, which this call never constrains" in answer
    assert text(typed(as_user(editor), suite, '{"city": "Paris"}')) == ""


def test_typing_an_unknown_tool_or_a_value_outside_the_enum_warns(as_user, editor, team, admin):
    suite = weather_suite(team, admin)
    client = as_user(editor)
    assert "unknown tool `get_wether`; did you mean `get_weather`?" in text(
        typed(client, suite, "", tool="get_wether")
    )
    outside = text(typed(client, suite, '{"unit": "kelvin"}', place="with"))
    assert "unit: not one of the values the schema allows" in outside
    assert "never constrains" not in outside  # called_tool_with need not name every argument


def test_an_argument_error_is_said_instead_of_warnings(as_user, editor, team, admin):
    suite = weather_suite(team, admin)
    answer = text(typed(as_user(editor), suite, '{"citty": {"$bogus": 1}}'))
    assert answer.startswith("citty.$bogus: unknown matcher")
    assert "field-warning" not in answer


def test_warnings_about_another_teams_suite_are_not_given(as_user, outsider, team, admin):
    suite = weather_suite(team, admin)
    assert typed(as_user(outsider), suite, '{"citty": 1}').status_code == 404


def test_typed_warnings_escape_the_catalogs_and_the_authors_text(as_user, editor, team, admin):
    evil_tool = {**WEATHER, "name": f"w{EVIL}"}
    suite = weather_suite(team, admin, tools=(evil_tool,))
    answer = text(typed(as_user(editor), suite, json.dumps({f"a{EVIL}": 1}), tool=f"x{EVIL}"))
    assert "unknown tool" in answer
    assert EVIL not in answer
    assert "&lt;script&gt;" in answer


def test_opening_and_saving_a_case_shows_warnings_beside_the_fields(as_user, editor, team, admin):
    suite = weather_suite(team, admin)
    case = suite.cases.get()
    client = as_user(editor)
    document = services.case_document(case)
    document["expected_calls"][0]["required_args"] = {"citty": "Paris"}
    document["expectations"] = [{"type": "called_tool", "tool": "get_wether"}]
    response = client.post(
        f"/suites/{suite.pk}/cases/{case.pk}/", editor_data(document, revision=case.revision)
    )
    assert response.status_code == 302  # saved: warnings never refuse
    assert Case.objects.get(pk=case.pk).expected_calls.get().required_args == {"citty": "Paris"}
    page = text(client.get(f"/suites/{suite.pk}/cases/{case.pk}/"))
    assert (
        '<span class="field-warning">citty: unknown argument `citty` of `get_weather`; '
        "did you mean `city`?</span>"
    ) in page
    assert (
        '<div class="field-warning">tool: unknown tool `get_wether`; '
        "did you mean `get_weather`?</div>"
    ) in page
    assert '<datalist id="tool-names"><option value="get_weather"></option></datalist>' in page
