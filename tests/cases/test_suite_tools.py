"""The suite page's tool catalog: pasted or uploaded by editors as a new version, shown as a
table of tools and parameters, its untrusted text escaped."""

import html
import json
import re

from django.urls import reverse

from cases import services
from cases.models import Suite
from tests.support.pages import confirmed, escaped, small_document, text, upload

EVIL = "<script>alert(1)</script>"
OPENAI = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": f"Weather now {EVIL}",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "the city"},
                    f"unit{EVIL}": {"type": "string", "enum": ["C", "F"]},
                },
                "required": ["city"],
            },
        },
    }
]


def weather_suite(team, admin):
    document = small_document("weather")
    document["cases"][0]["expected_calls"][0]["required_args"] = {"citty": "Paris"}
    return services.create_suite(team, document, admin)


def test_an_editor_pastes_openai_tools_and_sees_the_warnings_and_the_table(
    as_user, editor, team, admin
):
    suite = weather_suite(team, admin)
    client = as_user(editor)
    url = reverse("suite_tools", args=[suite.pk])
    assert client.get(url).status_code == 200
    response = confirmed(client, url, {"text": json.dumps(OPENAI)}, follow=True)
    page = text(response)
    assert "Tools: imported 1 from OpenAI tools: version 2." in page
    assert "required_args.citty: unknown argument `citty` of `get_weather`; did you mean" in page
    assert suite.latest_version.message == "tools: imported 1 from OpenAI tools"
    assert suite.latest_version.document["tools"][0]["name"] == "get_weather"
    # the table: name, parameters with type and required mark, enum, description
    assert "<code>get_weather</code>" in page
    assert '<code>city</code><abbr class="required" title="required">*</abbr>' in page
    assert "one of &quot;C&quot;, &quot;F&quot;" in page
    assert EVIL not in page
    assert escaped(f"Weather now {EVIL}") in page
    assert escaped(f"unit{EVIL}") in page


def test_an_uploaded_anthropic_file_replaces_the_catalog(as_user, editor, team, admin):
    suite = weather_suite(team, admin)
    anthropic = [{"name": "forecast", "description": "d", "input_schema": {"type": "object"}}]
    client = as_user(editor)
    confirmed(
        client,
        reverse("suite_tools", args=[suite.pk]),
        {"file": upload("t.json", json.dumps(anthropic))},
    )
    assert services.suite_tools(Suite.objects.get(pk=suite.pk)) == [
        {"name": "forecast", "description": "d", "parameters": {"type": "object"}}
    ]


def test_bad_definitions_are_listed_by_path_and_save_nothing(as_user, editor, team, admin):
    suite = weather_suite(team, admin)
    client = as_user(editor)
    bad = [{"type": "function", "function": {"description": "nameless"}}]
    response = client.post(reverse("suite_tools", args=[suite.pk]), {"text": json.dumps(bad)})
    assert response.status_code == 200
    assert "<code>tools[0].name</code>: required" in text(response)
    empty = client.post(reverse("suite_tools", args=[suite.pk]), {"text": " "})
    assert "Paste the tool definitions or choose a file." in text(empty)
    assert suite.versions.count() == 1


def test_a_viewer_sees_the_catalog_but_no_import_button(as_user, viewer, team, admin):
    suite = weather_suite(team, admin)
    services.replace_tools(suite, [OPENAI[0]["function"]], admin, "tools")
    page = text(as_user(viewer).get(suite.get_absolute_url()))
    assert "<code>get_weather</code>" in page
    assert reverse("suite_tools", args=[suite.pk]) not in page
    assert as_user(viewer).get(reverse("suite_tools", args=[suite.pk])).status_code == 403


def test_a_catalog_drafted_from_a_submissions_calls_is_reviewed_then_imported(
    as_user, editor, viewer, team, admin, submit
):
    suite = weather_suite(team, admin)
    call = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
    other = {"name": "get_weather", "arguments": {"city": "Lyon", "days": 2.5, "unit": "C"}}
    runs = [
        {"case": "only-case", "batches": [[call]]},
        {"case": "only-case", "trial": 1, "batches": [[other], [{"name": f"x{EVIL}"}]]},
    ]
    submission = submit(suite, runs, label="monday")
    client = as_user(editor)
    tools_page = text(client.get(reverse("suite_tools", args=[suite.pk])))
    assert reverse("submission_tools", args=[submission.pk]) in tools_page
    page = text(client.get(reverse("submission_tools", args=[submission.pk])))
    assert "Drafted from 3 calls in 2 runs of" in page
    assert EVIL not in page
    drafted = json.loads(
        html.unescape(re.search(r"<textarea[^>]*>(.*?)</textarea>", page, re.S)[1])
    )
    weather = drafted[0]["parameters"]
    assert weather["properties"]["city"] == {"type": "string", "examples": ["Paris", "Lyon"]}
    assert weather["properties"]["days"] == {"type": "number", "examples": [3, 2.5]}
    assert weather["required"] == ["city", "days"]
    assert drafted[1]["name"] == f"x{EVIL}"
    assert suite.versions.count() == 1  # nothing saved until the author imports it
    confirmed(client, reverse("suite_tools", args=[suite.pk]), {"text": json.dumps(drafted)})
    assert [t["name"] for t in services.suite_tools(Suite.objects.get(pk=suite.pk))] == [
        "get_weather",
        f"x{EVIL}",
    ]
    assert as_user(viewer).get(reverse("submission_tools", args=[submission.pk])).status_code == 403


def test_new_case_from_a_run_opens_an_unsaved_draft_that_saves_as_a_case(
    as_user, editor, viewer, team, admin, submit
):
    suite = weather_suite(team, admin)
    services.replace_tools(suite, [OPENAI[0]["function"]], admin, "tools")
    runs = [
        {
            "case": "only-case",
            "batches": [
                [{"id": "a", "name": "get_weather", "arguments": {"city": "New York"}}],
                [{"id": "b", "name": "get_weather", "arguments": {"city": "Paris"}}],
            ],
        }
    ]
    submission = submit(suite, runs)
    run = submission.runs.get()
    client = as_user(editor)
    run_page = text(client.get(reverse("run", args=[submission.pk, run.pk])))
    draft_url = reverse("run_draft_case", args=[submission.pk, run.pk])
    assert draft_url in run_page
    versions = suite.versions.count()
    page = text(client.get(draft_url))
    assert suite.versions.count() == versions  # nothing saved by opening the draft
    key = f"only-case-run-{run.pk}"
    assert f'value="{key}"' in page
    assert "&quot;$text&quot;" in page  # a free-text city, loosened per the catalog
    fields = {
        "key": key,
        "title": "",
        "prompt": "",
        "tags": "",
        "extra_calls": "allow",
        "match_preset": "",
        "action": "save",
        "call-0-name": "get_weather",
        "call-0-required_args": '{"city": {"$text": {"value": "New York", "ignore": ["case"]}}}',
        "call-0-ordered": "on",
        "call-1-name": "get_weather",
        "call-1-required_args": '{"city": "Paris"}',
        "call-1-ordered": "on",
        "call-1-depends_on_result": "on",
    }
    assert client.post(reverse("case_new", args=[suite.pk]), fields).status_code == 302
    saved = services.case_document(suite.cases.get(key=key))
    assert [c["depends_on_result"] for c in saved["expected_calls"]] == [False, True]
    assert as_user(viewer).get(draft_url).status_code == 403


MCP_TOOL = {
    "name": "get_weather",
    "title": f"Weather {EVIL}",
    "description": "Weather now",
    "inputSchema": OPENAI[0]["function"]["parameters"],
    "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}},
    "annotations": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False},
}


def test_a_pasted_mcp_listing_shows_titles_hints_and_outputs_and_feeds_the_editor(
    as_user, editor, team, admin
):
    suite = weather_suite(team, admin)
    client = as_user(editor)
    pages = [
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [MCP_TOOL], "nextCursor": "p2"}},
        {"tools": [{"name": "forecast", "inputSchema": {"type": "object"}}]},
    ]
    response = confirmed(
        client, reverse("suite_tools", args=[suite.pk]), {"text": json.dumps(pages)}
    )
    assert response.status_code == 302
    suite = Suite.objects.get(pk=suite.pk)
    assert suite.latest_version.document["tools"][0] == MCP_TOOL  # as the server gave it
    page = text(client.get(suite.get_absolute_url()))
    assert EVIL not in page
    assert f'<div class="small">{escaped(MCP_TOOL["title"])}</div>' in page
    hints = re.findall(r'<span class="badge hint [^"]+"[^>]*>([^<]+)</span>', page)
    assert hints == ["read-only", "idempotent"]
    assert "<summary>Returns 1 field</summary>" in page
    assert '<code>city</code><abbr class="required" title="required">*</abbr>' in page
    # the case editor's argument builder reads the input schema as parameters
    editor_page = text(client.get(reverse("case_new", args=[suite.pk])))
    catalog = re.search(
        r'<script id="tool-catalog" type="application/json">(.*?)</script>', editor_page
    )
    assert json.loads(catalog[1])[0]["parameters"] == MCP_TOOL["inputSchema"]
