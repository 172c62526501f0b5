"""User-supplied text is escaped on every page that shows it.

Every value below carries a payload (``<script>…`` or ``"><img onerror…>``) behind a marker
naming the field, so each assertion says which field of which page was (or was not) escaped.
"""

from __future__ import annotations

import json

import pytest

from cases import services
from cases.models import Membership, Role, Suite, Team, User
from tests.support.pages import HX, editor_data, escaped, text, upload

PAYLOADS = {
    "script": "<script>alert(1)</script>",
    "img": '"><img src=x onerror=alert(1)>',
}
RAW = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"]


@pytest.fixture(params=sorted(PAYLOADS))
def payload(request):
    return PAYLOADS[request.param]


def assert_safe(html: str, payload: str, *shown: str) -> None:
    """No payload markup is in the page raw, and each of ``shown`` is there escaped."""
    for raw in RAW:
        assert raw not in html
    assert payload not in html
    for value in shown:
        assert escaped(value) in html, value


class Evil:
    """One of every user-supplied text, each carrying the payload behind a marker."""

    def __init__(self, payload: str):
        self.payload = payload
        self.username = f"user{payload}"
        self.team = f"team{payload}"
        self.suite = f"suite{payload}"
        self.description = f"description{payload}"
        self.suite_tag = f"stag{payload}"
        self.key = f"key{payload}"
        self.other_key = f"other{payload}"
        self.title = f"title{payload}"
        self.prompt = f"prompt{payload}"
        self.case_tag = f"ctag{payload}"
        self.tool = f"tool{payload}"
        self.arg_value = f"value{payload}"
        self.bad_tool = f"never{payload}"
        self.text = f"text{payload}"

    def document(self) -> dict:
        return {
            "schema": "casebook.suite/1",
            "name": self.suite,
            "description": self.description,
            "tags": [self.suite_tag],
            "cases": [
                {
                    "key": self.key,
                    "title": self.title,
                    "prompt": self.prompt,
                    "tags": [self.case_tag],
                    "expected_calls": [
                        {"name": self.tool, "required_args": {"arg": self.arg_value}}
                    ],
                    "expectations": [
                        {"type": "did_not_call_tool", "tool": self.bad_tool},
                        {"type": "final_text_contains", "text": self.text},
                    ],
                },
                {"key": self.other_key, "expected_calls": [{"name": self.tool}]},
            ],
        }

    @property
    def label(self) -> str:
        """The start of the first expected call's label: tool name and argument value."""
        return f"{self.tool}(arg={json.dumps(self.arg_value)})"


@pytest.fixture
def evil(payload):
    return Evil(payload)


@pytest.fixture
def world(evil, viewer):
    """The evil user (admin of the evil team, with a plain viewer) and the evil suite at v2."""
    user = User.objects.create_user(evil.username, password="x")
    team = Team.objects.create(name=evil.team, slug=Team.unique_slug("evil"))
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    Membership.objects.create(team=team, user=viewer, role=Role.VIEWER)
    suite = services.create_suite(team, evil.document(), user)
    changed = evil.document()
    changed["cases"][1]["key"] = f"renamed{evil.payload}"
    services.replace_contents(suite, changed, user, "second")
    return user, team, suite


def case_of(suite: Suite, key: str):
    return suite.cases.get(key=key)


# --- pages that show the texts --------------------------------------------------------------


def test_library_escapes_suite_team_and_user_texts(as_user, evil, world):
    user, _, _ = world
    client = as_user(user)
    full = text(client.get("/"))
    shown = (evil.suite, evil.description, evil.suite_tag, evil.team, evil.username)
    assert_safe(full, evil.payload, *shown)
    partial = text(client.get("/", {"q": "suite"}, headers=HX))
    assert_safe(partial, evil.payload, evil.suite, evil.description, evil.suite_tag, evil.team)


def test_library_escapes_the_search_text(as_user, evil, world):
    user, _, _ = world
    client = as_user(user)
    html = text(client.get("/", {"q": evil.payload}))
    assert_safe(html, evil.payload)
    assert f'value="{escaped(evil.payload)}"' in html
    partial = text(client.get("/", {"q": f"nothing{evil.payload}"}, headers=HX))
    assert_safe(partial, evil.payload, f"nothing{evil.payload}")


def test_library_search_by_escaped_texts_finds_the_suite(as_user, evil, world):
    user, _, suite = world
    html = text(as_user(user).get("/", {"q": evil.tool}, headers=HX))
    assert f'href="/suites/{suite.pk}/"' in html
    assert_safe(html, evil.payload, evil.suite)


def test_suite_page_escapes_every_text(as_user, evil, world):
    user, _, suite = world
    html = text(as_user(user).get(f"/suites/{suite.pk}/"))
    assert_safe(
        html,
        evil.payload,
        evil.suite,
        evil.description,
        evil.suite_tag,
        evil.team,
        evil.key,
        evil.title,
        evil.case_tag,
        evil.label,
        evil.username,
    )


def test_case_editor_escapes_every_field(as_user, evil, world):
    user, _, suite = world
    case = case_of(suite, evil.key)
    html = text(as_user(user).get(f"/suites/{suite.pk}/cases/{case.pk}/"))
    assert_safe(
        html,
        evil.payload,
        evil.suite,
        evil.key,
        evil.title,
        evil.prompt,
        evil.case_tag,
        evil.tool,
        json.dumps(evil.arg_value),
        evil.bad_tool,
        evil.text,
        f"Remove case {evil.key}?",
    )


def test_read_only_case_page_escapes_every_field(as_user, evil, world, viewer):
    _, _, suite = world
    case = case_of(suite, evil.key)
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/cases/{case.pk}/"))
    assert "read-only" in html
    assert_safe(
        html,
        evil.payload,
        evil.suite,
        evil.team,
        evil.key,
        evil.title,
        evil.prompt,
        json.dumps(evil.tool),
        json.dumps(evil.arg_value),
    )


def test_version_page_escapes_every_text(as_user, evil, world):
    user, _, suite = world
    html = text(as_user(user).get(f"/suites/{suite.pk}/versions/1/"))
    assert_safe(
        html,
        evil.payload,
        evil.suite,
        evil.key,
        evil.title,
        evil.prompt,
        evil.label,
        f"did not call {evil.bad_tool}",
        evil.username,
    )


def test_diff_page_escapes_case_keys_and_labels(as_user, evil, world):
    user, _, suite = world
    html = text(as_user(user).get(f"/suites/{suite.pk}/versions/2/diff/"))
    assert_safe(html, evil.payload, evil.suite, evil.other_key, f"renamed{evil.payload}")


def test_team_pages_escape_team_and_user_names(as_user, evil, world):
    user, team, _ = world
    client = as_user(user)
    page = text(client.get(f"/teams/{team.slug}/"))
    assert_safe(
        page,
        evil.payload,
        evil.team,
        evil.username,
        evil.suite,
        f"Role of {evil.username}",
        f"Remove {evil.username} from {evil.team}?",
    )
    listing = text(client.get("/teams/"))
    assert_safe(listing, evil.payload, evil.team, evil.username)


def test_settings_page_escapes_the_username(as_user, evil, world):
    user, _, _ = world
    assert_safe(text(as_user(user).get("/settings/")), evil.payload, evil.username)


def test_suite_forms_escape_current_values(as_user, evil, world):
    user, _, suite = world
    client = as_user(user)
    settings_page = text(client.get(f"/suites/{suite.pk}/settings/"))
    assert_safe(settings_page, evil.payload, evil.suite, evil.description, evil.suite_tag)
    for url in ("/suites/new/", "/suites/import/", "/suites/import-bfcl/"):
        assert_safe(text(client.get(url)), evil.payload, evil.team)


# --- texts that come back in messages and errors --------------------------------------------


def test_flash_messages_escape_case_keys_team_names_and_tags(as_user, evil, world):
    user, team, suite = world
    client = as_user(user)
    case = case_of(suite, evil.key)
    data = editor_data(services.case_document(case), revision=case.revision)
    saved = text(client.post(f"/suites/{suite.pk}/cases/{case.pk}/", data, follow=True))
    assert_safe(saved, evil.payload, f"Saved case {evil.key} as version 3.")
    copied = text(client.post(f"/suites/{suite.pk}/copy/", {"team": team.pk}, follow=True))
    assert_safe(copied, evil.payload, f"Copied to {evil.team}.")
    tag = f"g{evil.payload}"
    tagged = text(client.post(f"/suites/{suite.pk}/versions/1/tag/", {"tag": tag}, follow=True))
    assert_safe(tagged, evil.payload, f"Version 1 tagged “{tag}”.")
    history = text(client.get(f"/suites/{suite.pk}/"))
    assert_safe(history, evil.payload, tag)


def test_removing_a_case_flash_escapes_its_key(as_user, evil, world):
    user, _, suite = world
    case = case_of(suite, evil.key)
    html = text(as_user(user).post(f"/suites/{suite.pk}/cases/{case.pk}/delete/", follow=True))
    assert_safe(html, evil.payload, f"Removed case {evil.key} (version 3).")


def test_editor_errors_escape_the_texts_they_quote(as_user, evil, world):
    user, _, suite = world
    case = case_of(suite, evil.key)
    data = editor_data(services.case_document(case), revision=case.revision)
    data["key"] = f"renamed{evil.payload}"
    data["call-0-required_args"] = json.dumps({f"name{evil.payload}": {"$bogus": 1}})
    response = as_user(user).post(f"/suites/{suite.pk}/cases/{case.pk}/", data)
    assert response.status_code == 422
    html = text(response)
    assert_safe(
        html,
        evil.payload,
        f"another case of this suite has the key {f'renamed{evil.payload}'!r}",
        f"name{evil.payload}.$bogus: unknown matcher",
    )


def test_import_problems_escape_keys_and_paths(as_user, evil, world):
    user, team, _ = world
    document = evil.document()
    document["cases"][1]["key"] = evil.key
    document["cases"][0]["expected_calls"][0]["required_args"] = {f"a{evil.payload}": {"$x": 1}}
    response = as_user(user).post(
        "/suites/import/", {"team": team.pk, "file": upload("e.json", json.dumps(document))}
    )
    html = text(response)
    assert "nothing was saved" in html
    assert_safe(
        html,
        evil.payload,
        f"duplicate case key {evil.key!r}",
        f"cases[0].expected_calls[0].required_args.a{evil.payload}.$x",
    )


def test_member_errors_escape_the_username_typed(as_user, evil, world):
    user, team, _ = world
    typed = f"nobody{evil.payload}"
    for headers in ({}, HX):
        response = as_user(user).post(
            f"/teams/{team.slug}/members/", {"username": typed, "role": "viewer"}, headers=headers
        )
        assert_safe(text(response), evil.payload, f"No user is called {typed!r}.")


def test_team_creation_errors_escape_the_name_typed(as_user, evil, world):
    user, _, _ = world
    html = text(as_user(user).post("/teams/", {"name": evil.payload * 10}))
    assert "Ensure this value has at most 100 characters" in html
    assert_safe(html, evil.payload, evil.payload * 10)


def test_try_results_escape_recorded_calls_and_final_text(as_user, evil, world):
    user, _, suite = world
    case = case_of(suite, evil.key)
    data = editor_data(services.case_document(case), revision=case.revision)
    data["run"] = json.dumps(
        {
            "batches": [[{"name": f"rec{evil.payload}", "arguments": {"a": f"ra{evil.payload}"}}]],
            "final_text": f"final{evil.payload}",
        }
    )
    response = as_user(user).post(f"/suites/{suite.pk}/cases/try/", data)
    html = text(response)
    assert "verdict fail" in html
    assert_safe(
        html,
        evil.payload,
        evil.label,
        f"did not call {evil.bad_tool}",
        f"rec{evil.payload}",
        f"final{evil.payload}",
    )


def test_try_problems_escape_the_pasted_run(as_user, evil, world):
    user, _, suite = world
    case = case_of(suite, evil.key)
    data = editor_data(services.case_document(case), revision=case.revision)
    data["run"] = json.dumps({"batches": [[{"name": 1, f"x{evil.payload}": 2}]], "final_text": 3})
    html = text(as_user(user).post(f"/suites/{suite.pk}/cases/try/", data))
    assert "nothing was saved" in html
    assert_safe(html, evil.payload)


# --- as-you-type checks: swapped into the page by htmx --------------------------------------


def validate_swap(client, suite, case) -> str:
    """How the editor swaps the validate answer into the page (its ``hx-swap``)."""
    html = text(client.get(f"/suites/{suite.pk}/cases/{case.pk}/"))
    at = html.index('hx-post="/editor/validate/"')
    return html[at : html.index(">", at)].split('hx-swap="')[1].split('"')[0]


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        ("regex", "exp-0-regex", "(" + PAYLOADS["img"]),
        ("args", "call-0-required_args", json.dumps({PAYLOADS["img"]: {"$bogus": 1}})),
    ],
)
def test_validate_answers_are_safe_to_swap_into_the_page(
    as_user, editor, suite, kind, field, value
):
    client = as_user(editor)
    swap = validate_swap(client, suite, suite.cases.first())
    response = client.post("/editor/validate/", {"kind": kind, "field": field, field: value})
    answer = response.content.decode()
    assert answer  # there is a problem to report
    if swap != "textContent":
        for raw in RAW:
            assert raw not in answer
