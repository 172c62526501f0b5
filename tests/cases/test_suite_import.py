"""Importing a suite file into a suite (docs/review.md#import-file): the file, a preview of
what it would change, then a confirmation that makes the version. What the file leaves out
is kept; a preview the suite has moved past is refused; only the suite's editors import."""

from __future__ import annotations

import json

import pytest
import yaml

from cases import services
from cases.forms import ConfirmImportForm
from tests.support.pages import confirm_field, counts, demo_document, escaped, text, upload

TOOLS = [
    {"name": name, "description": f"{name} tool", "parameters": {"type": "object"}}
    for name in ("file_exists", "delete_file", "get_weather", "issue_refund", "lookup_order")
]


@pytest.fixture
def catalogued(suite, admin):
    """The demo suite with tags and a five-tool catalog, at version 3."""
    services.update_settings(suite, admin, tags=["demo", "smoke"])
    services.replace_tools(suite, TOOLS, admin, "tools")
    return suite


def exported(suite) -> dict:
    return json.loads(json.dumps(suite.latest_version.document))


def preview(client, suite, document, name="next.suite.json"):
    content = document if isinstance(document, str) else json.dumps(document)
    return client.post(f"/suites/{suite.pk}/import/", {"file": upload(name, content)})


def confirm(client, suite, field: str, **extra):
    return client.post(f"/suites/{suite.pk}/import/confirm/", {"file": field}, **extra)


def section(page: str, heading: str) -> str:
    return page.split(heading)[1].split("</section>")[0]


def test_the_preview_lists_what_would_change_and_saves_nothing(as_user, editor, catalogued):
    document = exported(catalogued)
    document["name"] = "renamed"
    document["tags"] = ["demo"]
    document["cases"] = [c for c in document["cases"] if c["key"] != "greeting"]
    document["cases"][0]["title"] = "Delete carefully"
    document["cases"].append({"key": "new-case", "expected_calls": [{"name": "ping"}]})
    document["tools"] = [*TOOLS[1:], {**TOOLS[0], "description": "does it exist?"}]
    document["tools"].append({"name": "ping", "parameters": {"type": "object"}})
    before = counts()

    response = preview(as_user(editor), catalogued, document)

    page = text(response)
    assert response.status_code == 200
    assert counts() == before
    assert catalogued.latest_version.number == 3
    assert (
        "<strong>Name and tags changed, 1 tool added, 1 tool changed, 1 case added, "
        "1 case removed, 1 case changed</strong>"
    ) in page
    assert "<h2>Changes against version 3, the current one</h2>" in page
    assert "The suite would then hold 4 cases." in page
    fields = section(page, "<h2>Suite fields changed</h2>")
    assert "<code>name</code>" in fields
    assert escaped('"renamed"') in fields
    assert escaped('["demo", "smoke"]') in fields
    assert escaped('["demo"]') in fields
    tools = section(page, "<h2>Tool catalog changed</h2>")
    assert "+ <code>ping</code> added" in tools
    assert "~ <code>file_exists</code> changed" in tools
    assert "get_weather" not in tools
    assert '<code class="case-key">new-case</code>' in section(page, "Cases added</h2>")
    assert '<code class="case-key">greeting</code>' in section(page, "Cases removed</h2>")
    changed = section(page, "<h2>Cases changed</h2>")
    assert '<code class="case-key">delete-if-exists</code>' in changed
    assert escaped('"Delete carefully"') in changed
    assert "Import as version 4" in page


def test_confirming_makes_the_version_and_says_what_changed(as_user, editor, catalogued):
    document = exported(catalogued)
    document["name"] = "renamed"
    document["cases"] = [c for c in document["cases"] if c["key"] != "greeting"]
    client = as_user(editor)
    field = confirm_field(preview(client, catalogued, document))

    response = confirm(client, catalogued, field, follow=True)

    catalogued.refresh_from_db()
    latest = catalogued.latest_version
    assert latest.number == 4
    assert latest.author == editor
    assert latest.message == "Imported next.suite.json: name changed, 1 case removed"
    assert "Imported next.suite.json: name changed, 1 case removed (now version 4)." in text(
        response
    )
    assert response.redirect_chain[-1][0] == catalogued.get_absolute_url()
    assert catalogued.name == "renamed"
    assert sorted(catalogued.cases.values_list("key", flat=True)) == [
        "delete-if-exists",
        "refund-order",
        "weather-two-cities",
    ]


def test_what_the_file_leaves_out_is_kept(as_user, editor, catalogued):
    """A file of cases only, as another tool writes it: no name, description, tags, match
    or tools."""
    before = exported(catalogued)
    cases = before["cases"][:2]
    client = as_user(editor)

    response = preview(client, catalogued, {"cases": cases}, name="cases.yaml")

    page = text(response)
    assert (
        "Kept as the suite has them, since the file leaves them out: <code>name</code>, "
        "<code>description</code>, <code>tags</code>, <code>match</code>, <code>tools</code>."
    ) in page
    assert "Suite fields changed" not in page
    assert "Tool catalog changed" not in page
    confirm(client, catalogued, confirm_field(response))
    after = catalogued.latest_version.document
    assert after == {**before, "cases": cases}
    catalogued.refresh_from_db()
    assert (catalogued.name, catalogued.tags) == ("assistant-basics", ["demo", "smoke"])
    assert services.suite_tools(catalogued) == TOOLS


def test_a_file_without_cases_keeps_the_cases(as_user, editor, catalogued):
    client = as_user(editor)
    field = confirm_field(preview(client, catalogued, "tags: []\n", name="tags.yaml"))
    confirm(client, catalogued, field)
    catalogued.refresh_from_db()
    assert catalogued.tags == []
    assert catalogued.cases.count() == 4
    assert catalogued.latest_version.message == "Imported tags.yaml: tags changed"


def test_a_field_the_file_sets_empty_is_emptied(as_user, editor, catalogued):
    document = {**exported(catalogued), "tags": [], "tools": []}
    client = as_user(editor)
    response = preview(client, catalogued, document)
    assert "Tags changed, 5 tools removed" in text(response)
    confirm(client, catalogued, confirm_field(response))
    catalogued.refresh_from_db()
    assert catalogued.tags == []
    assert services.suite_tools(catalogued) == []


def test_a_file_that_changes_nothing_offers_no_import(as_user, editor, catalogued):
    response = preview(as_user(editor), catalogued, exported(catalogued))
    page = text(response)
    assert "The file changes nothing: version 3 already holds what it says." in page
    assert "/import/confirm/" not in page


def test_an_invalid_file_is_refused_at_the_preview(as_user, editor, catalogued):
    before = counts()
    document = {"cases": [{"key": "a"}, {"key": "a"}]}
    response = preview(as_user(editor), catalogued, document)
    page = text(response)
    assert "nothing was saved" in page
    assert "/import/confirm/" not in page
    assert counts() == before


def test_a_stale_preview_is_refused_and_shown_again(as_user, editor, admin, catalogued):
    document = {**exported(catalogued), "name": "renamed"}
    client = as_user(editor)
    field = confirm_field(preview(client, catalogued, document))
    services.update_settings(catalogued, admin, description="changed meanwhile")

    response = confirm(client, catalogued, field)

    page = text(response)
    assert response.status_code == 200
    assert catalogued.latest_version.number == 4  # the admin's edit, no import
    catalogued.refresh_from_db()
    assert catalogued.name == "assistant-basics"
    assert (
        "Nothing was imported: the suite was changed since the preview (it is now at version 4)."
    ) in page
    assert "<h2>Changes against version 4, the current one</h2>" in page
    assert "Name and description changed" in page  # the file would undo the description
    confirm(client, catalogued, confirm_field(response))
    catalogued.refresh_from_db()
    assert (catalogued.name, catalogued.latest_version.number) == ("renamed", 5)


def test_an_altered_preview_is_refused(as_user, editor, catalogued):
    client = as_user(editor)
    field = confirm_field(preview(client, catalogued, {"name": "renamed"}))
    before = counts()
    response = confirm(client, catalogued, field[:-2] + "xx", follow=True)
    assert "This preview was altered or is not for you. Nothing was imported" in text(response)
    assert response.redirect_chain[-1][0] == f"/suites/{catalogued.pk}/import/"
    assert counts() == before


def test_a_preview_is_for_its_user_and_suite_only(as_user, editor, admin, team, catalogued):
    field = confirm_field(preview(as_user(editor), catalogued, {"name": "renamed"}))
    other = services.create_suite(team, demo_document() | {"name": "other"}, admin)
    before = counts()
    assert "not for you" in text(confirm(as_user(admin), catalogued, field, follow=True))
    assert "not for you" in text(confirm(as_user(editor), other, field, follow=True))
    assert counts() == before


def test_an_old_preview_is_refused(as_user, editor, catalogued, monkeypatch):
    client = as_user(editor)
    field = confirm_field(preview(client, catalogued, {"name": "renamed"}))
    monkeypatch.setattr(ConfirmImportForm, "MAX_AGE", -1)
    response = confirm(client, catalogued, field, follow=True)
    assert "This preview is over an hour old." in text(response)
    assert catalogued.latest_version.number == 3


@pytest.mark.parametrize(("who", "status"), [("viewer", 403), ("outsider", 404)])
def test_only_editors_preview_or_confirm(as_user, request, editor, catalogued, who, status):
    field = confirm_field(preview(as_user(editor), catalogued, {"name": "renamed"}))
    client = as_user(request.getfixturevalue(who))
    before = counts()
    assert client.get(f"/suites/{catalogued.pk}/import/").status_code == status
    assert preview(client, catalogued, {"name": "renamed"}).status_code == status
    assert confirm(client, catalogued, field).status_code == status
    assert counts() == before
    catalogued.refresh_from_db()
    assert catalogued.name == "assistant-basics"


def test_untrusted_text_in_the_file_is_escaped_on_the_preview(as_user, editor, catalogued):
    evil = "<script>alert(1)</script>"
    document = {"name": evil, "tools": [{"name": evil, "parameters": {"type": "object"}}]}
    response = preview(as_user(editor), catalogued, yaml.safe_dump(document), name=f"{evil}.yaml")
    page = text(response)
    assert evil not in page
    assert escaped(evil) in page
