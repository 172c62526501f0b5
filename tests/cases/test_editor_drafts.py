"""Drafts from a pasted run in the case editor: a run pasted in the "try a run" box, in any
format the importers detect, fills the editor's expected calls by ``cases.drafting``' rules
(batches as order, ids dropped, free text loosened per the catalog, the prompt from the first
user turn); nothing is saved, and a pasted text that is no run says what is wrong and where."""

from __future__ import annotations

import json
import re

import pytest

from cases import services
from cases.models import SuiteVersion
from tests.support import tau_bench
from tests.support.pages import HX, demo_document, editor_data, escaped, text

EVIL = "<script>alert(1)</script>"
CATALOG = [
    {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["C", "F"]}},
        },
    }
]
ANTHROPIC = [
    {"role": "user", "content": "Weather in New York, then Paris?"},
    {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "New York"},
            }
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "9"}],
    },
    {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_2",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
            {"type": "tool_use", "id": "toolu_3", "name": "get_weather", "input": {"unit": "C"}},
        ],
    },
]


@pytest.fixture
def suite(team, admin):
    made = services.create_suite(team, demo_document(), admin)
    services.replace_tools(made, CATALOG, admin, "tools")
    return made


def new_case_url(suite) -> str:
    return f"/suites/{suite.pk}/cases/new/"


def draft(client, suite, pasted, **case) -> object:
    """The editor's answer to "Draft expected calls from it" with ``pasted`` in the box."""
    data = editor_data({"key": "drafted", **case}, action="draft")
    data["run"] = pasted if isinstance(pasted, str) else json.dumps(pasted)
    return client.post(new_case_url(suite), data, headers=HX)


def call_rows(page: str) -> list[tuple[str, dict, bool, bool]]:
    """(tool, required arguments, ordered, after the previous result) of each call row."""
    rows = []
    for index in range(len(re.findall(r'name="call-\d+-name"', page))):
        name = re.search(rf'name="call-{index}-name" id="[^"]*" value="([^"]*)"', page)[1]
        args = re.search(rf'name="call-{index}-required_args"[^>]*>([^<]*)</textarea>', page)[1]
        flags = [
            bool(re.search(rf'name="call-{index}-{flag}"[^>]* checked', page))
            for flag in ("ordered", "depends_on_result")
        ]
        rows.append((name, json.loads(args.replace("&quot;", '"')), *flags))
    return rows


def test_an_anthropic_run_fills_the_expected_calls_as_drafts(as_user, editor, suite):
    versions = SuiteVersion.objects.count()
    response = draft(as_user(editor), suite, ANTHROPIC)
    page = text(response)
    assert response.status_code == 200
    assert "3 expected calls drafted from the pasted run (anthropic)" in page
    text_of = {"$text": {"value": "New York", "ignore": ["case", "space", "punctuation"]}}
    assert call_rows(page) == [
        ("get_weather", {"city": text_of}, True, False),  # free text, per the catalog
        ("get_weather", {"city": "Paris"}, True, True),  # one word: exact
        ("get_weather", {"unit": "C"}, True, False),  # the same batch: no later result
    ]
    assert "toolu_" not in page  # ids dropped
    assert "Weather in New York, then Paris?</textarea>" in page  # the prompt
    assert SuiteVersion.objects.count() == versions  # nothing saved
    assert '<div id="try-result" aria-live="polite" hx-swap-oob="true"></div>' in page


def test_a_tau_bench_trajectory_is_drafted_keeping_what_was_typed(as_user, editor, suite):
    record = tau_bench.RECORDS[0]
    kept = {
        "prompt": "My own prompt",
        "tags": ["mine"],
        "expectations": [{"type": "final_text_contains", "text": "booked"}],
        "expected_calls": [{"name": "replaced_by_the_draft"}],
    }
    page = text(draft(as_user(editor), suite, record["traj"], **kept))
    assert "(openai_chat)" in page
    names = [name for name, *_ in call_rows(page)]
    assert names[:3] == ["get_user_details", "search_direct_flight", "search_onestop_flight"]
    assert "replaced_by_the_draft" not in page
    assert "My own prompt</textarea>" in page
    assert 'value="mine"' in page
    assert re.search(r">\s*booked</textarea>", page)  # the expectation kept
    assert "unknown tool `get_user_details`" in page  # the catalog's warnings, beside the rows


def test_a_canonical_run_keeps_its_batches(as_user, editor, suite):
    run = {
        "batches": [
            [{"id": "a", "name": "get_weather", "arguments": {"city": "Oslo"}}],
            [{"id": "b", "name": "get_weather", "arguments": {"city": "Rome"}, "result": 3}],
        ]
    }
    page = text(draft(as_user(editor), suite, run))
    assert "(canonical)" in page
    assert call_rows(page) == [
        ("get_weather", {"city": "Oslo"}, True, False),
        ("get_weather", {"city": "Rome"}, True, True),
    ]


@pytest.mark.parametrize(
    ("pasted", "said"),
    [
        ("", "paste a run"),
        ('{"batches": [[{"name": "f"}],', "invalid JSON"),
        ('{"turns": []}', "unrecognised run format: expected one of the keys batches"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "1", "function": {"arguments": "{}"}}]}],
            "messages[0].tool_calls[0].function.name",
        ),
        (f'"{EVIL}"', "a run line must be a JSON object, not string"),
    ],
)
def test_a_pasted_text_that_is_no_run_says_what_and_where(as_user, editor, suite, pasted, said):
    response = draft(as_user(editor), suite, pasted)
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#try-result"  # shown in the box, the editor untouched
    page = text(response)
    assert "The pasted text is not a run that can be drafted from." in page
    assert escaped(said) in page
    assert EVIL not in page


def test_a_viewer_cannot_draft(as_user, viewer, suite):
    assert draft(as_user(viewer), suite, ANTHROPIC).status_code == 403
