"""Suite pages: create, import (suite files and BFCL), replace, export, copy, settings,
versions, tags, diffs, and who may do which."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from cases import services
from cases.models import Case, Role, Suite, SuiteVersion
from scoring.matcher import SUITE_SCHEMA as SCHEMA
from tests.support.builders import make_team
from tests.support.pages import (
    BFCL,
    confirmed,
    counts,
    demo_document,
    escaped,
    import_into,
    normalized,
    small_document,
    text,
    upload,
)


def exported(client, suite, version=None) -> dict:
    url = f"/suites/{suite.pk}/export/" + (f"?version={version}" if version else "")
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    return json.loads(response.content)


@pytest.fixture
def labs(admin, viewer):
    """A second team where the admin is admin and the viewer of ``team`` is a viewer."""
    return make_team("Labs", admin=admin, viewer=viewer)


# --- creating ------------------------------------------------------------------------------


def test_new_suite_form_offers_only_teams_where_the_user_edits(as_user, admin, team, viewer):
    make_team("Read only", viewer=admin)
    html = text(as_user(admin).get("/suites/new/"))
    assert f'<option value="{team.pk}"' in html
    assert ">Read only</option>" not in html


def test_the_new_suite_form_names_matching_once(as_user, editor, team):
    html = text(as_user(editor).get("/suites/new/"))
    assert html.count("Matching") == 1
    assert "<legend>Matching</legend>" in html
    assert '<label for="id_match_preset">Preset</label>' in html


def test_a_viewer_only_user_is_told_to_create_a_team_first(as_user, viewer, team):
    html = text(as_user(viewer).get("/suites/new/"))
    assert "You are not an editor in any team." in html
    assert "Create suite" not in html


def test_editor_creates_a_suite_as_version_1(as_user, editor, team):
    response = as_user(editor).post(
        "/suites/new/",
        {
            "team": team.pk,
            "name": "billing",
            "description": "Invoices and refunds",
            "tags": "money, writes, money",
            "visibility": "everyone",
            "match_preset": "lenient",
        },
    )
    suite = Suite.objects.get(name="billing")
    assert response.status_code == 302
    assert response["Location"] == f"/suites/{suite.pk}/"
    assert suite.team == team
    assert suite.visibility == "everyone"
    assert suite.tags == ["money", "writes"]
    version = suite.latest_version
    assert version.number == 1
    assert version.author == editor
    assert version.document == {
        "schema": SCHEMA,
        "name": "billing",
        "description": "Invoices and refunds",
        "tags": ["money", "writes"],
        "match": "lenient",
        "cases": [],
    }


def test_a_viewer_cannot_create_a_suite_in_their_team(as_user, viewer, team):
    before = counts()
    response = as_user(viewer).post(
        "/suites/new/", {"team": team.pk, "name": "sneaky", "visibility": "team"}
    )
    assert response.status_code == 200
    assert counts() == before


def test_an_outsider_cannot_create_a_suite_in_another_team(as_user, outsider, team, other_team):
    before = counts()
    response = as_user(outsider).post(
        "/suites/new/", {"team": team.pk, "name": "sneaky", "visibility": "team"}
    )
    assert response.status_code == 200
    assert "Select a valid choice." in text(response)
    assert counts() == before


# --- importing a suite file ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "dump"),
    [
        ("assistant.suite.json", json.dumps),
        ("assistant.suite.yaml", yaml.safe_dump),
        ("assistant.suite.yml", yaml.safe_dump),
    ],
)
def test_importing_a_suite_file_makes_version_1_with_its_cases(
    as_user, editor, team, filename, dump
):
    document = demo_document()
    response = confirmed(
        as_user(editor),
        "/suites/import/",
        {"team": team.pk, "file": upload(filename, dump(document))},
    )
    suite = Suite.objects.get(name="assistant-basics")
    assert response.status_code == 302
    assert response["Location"] == f"/suites/{suite.pk}/"
    assert list(suite.cases.values_list("key", flat=True)) == [
        "delete-if-exists",
        "weather-two-cities",
        "refund-order",
        "greeting",
    ]
    assert list(suite.versions.values_list("number", flat=True)) == [1]
    assert suite.latest_version.document["cases"] == normalized(document["cases"])
    page = text(as_user(editor).get(response["Location"]))
    assert "Imported 4 cases as version 1." in page


def test_an_imported_suite_page_lists_its_cases_with_expected_calls(as_user, viewer, suite):
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/"))
    assert '<code class="case-key">delete-if-exists</code>' in html
    assert escaped('file_exists(path="notes.txt") [ordered]') in html
    assert escaped(
        'issue_refund(order_id="A-1001", amount=42.5) [ordered, after result of #0]'
    ) in (html)
    assert '<span class="badge">no other calls</span>' in html
    assert "v1</a>" in html


INVALID_SUITE = {
    "schema": "casebook.suite/1",
    "name": "broken",
    "cases": [
        {
            "key": "a",
            "expected_calls": [
                {"name": "f", "depends_on_result": True},
                {"name": "g", "required_args": ["not", "an", "object"]},
            ],
        },
        {"key": "b", "expectations": [{"type": "tool_call_count", "min": 3, "max": 1}]},
        {"key": "a"},
        {"key": "c", "expectations": [{"type": "final_text_matches", "regex": "(x)\\1"}]},
    ],
}
INVALID_PATHS = [
    "cases[0].expected_calls[0].depends_on_result",
    "cases[0].expected_calls[1].required_args",
    "cases[1].expectations[0].min",
    "cases[2].key",
    "cases[3].expectations[0].regex",
]


@pytest.mark.parametrize(
    ("filename", "dump"), [("broken.json", json.dumps), ("broken.yaml", yaml.safe_dump)]
)
def test_an_invalid_suite_file_lists_every_problem_by_path_and_imports_nothing(
    as_user, editor, team, suite, filename, dump
):
    before = counts()
    response = as_user(editor).post(
        "/suites/import/", {"team": team.pk, "file": upload(filename, dump(INVALID_SUITE))}
    )
    html = text(response)
    assert response.status_code == 200
    assert "5 problems; nothing was saved:" in html
    for path in INVALID_PATHS:
        assert f"<code>{path}</code>: " in html, path
    assert "min (3) is greater than max (1)" in html
    assert escaped("duplicate case key 'a' (also cases[0])") in html
    assert "must be an object" in html
    assert "RE2 cannot compile this pattern" in html
    assert counts() == before
    assert not Suite.objects.filter(name="broken").exists()


@pytest.mark.parametrize(
    ("filename", "content"),
    [("bad.json", '{"schema": "casebook.suite/1", "name": '), ("bad.yaml", "cases: [unclosed")],
)
def test_a_file_that_does_not_parse_is_reported_and_imports_nothing(
    as_user, editor, team, filename, content
):
    before = counts()
    response = as_user(editor).post(
        "/suites/import/", {"team": team.pk, "file": upload(filename, content)}
    )
    assert response.status_code == 200
    assert "nothing was saved" in text(response)
    assert counts() == before


def test_a_suite_file_without_a_name_is_refused(as_user, editor, team):
    document = demo_document()
    del document["name"]
    before = counts()
    response = as_user(editor).post(
        "/suites/import/", {"team": team.pk, "file": upload("x.json", json.dumps(document))}
    )
    assert "<code>name</code>: " in text(response)
    assert counts() == before


def test_a_viewer_cannot_import_into_their_team(as_user, viewer, team):
    before = counts()
    response = as_user(viewer).post(
        "/suites/import/",
        {"team": team.pk, "file": upload("a.json", json.dumps(demo_document()))},
    )
    assert response.status_code == 200
    assert "Select a valid choice." in text(response)
    assert counts() == before


# --- replacing the contents from a file -----------------------------------------------------


def test_importing_into_a_suite_makes_a_new_version(as_user, editor, suite):
    document = small_document("assistant-basics")
    response = import_into(as_user(editor), suite, "next.json", json.dumps(document))
    assert response.status_code == 302
    assert list(suite.cases.values_list("key", flat=True)) == ["only-case"]
    latest = suite.latest_version
    assert latest.number == 2
    assert latest.message == "Imported next.json: 1 case added, 4 cases removed"
    assert latest.author == editor
    assert latest.document["cases"] == normalized(document["cases"])
    assert len(suite.versions.get(number=1).document["cases"]) == 4


def test_an_invalid_replacement_changes_nothing(as_user, editor, suite):
    before = counts()
    response = as_user(editor).post(
        f"/suites/{suite.pk}/import/", {"file": upload("broken.json", json.dumps(INVALID_SUITE))}
    )
    assert response.status_code == 200
    assert "5 problems; nothing was saved:" in text(response)
    assert counts() == before
    suite.refresh_from_db()
    assert suite.name == "assistant-basics"
    assert suite.cases.count() == 4


# --- export ---------------------------------------------------------------------------------


def test_export_downloads_the_current_version_as_a_suite_file(as_user, viewer, suite):
    response = as_user(viewer).get(f"/suites/{suite.pk}/export/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert (
        response["Content-Disposition"] == 'attachment; filename="assistant-basics.v1.suite.json"'
    )
    document = demo_document()
    assert json.loads(response.content) == {**document, "cases": normalized(document["cases"])}


def test_an_old_version_exports_unchanged_after_later_edits(as_user, editor, suite):
    client = as_user(editor)
    before = client.get(f"/suites/{suite.pk}/export/?version=1").content
    client.post(
        f"/suites/{suite.pk}/settings/",
        {"name": "renamed", "description": "", "tags": "x", "visibility": "team"},
    )
    case = suite.cases.get(key="greeting")
    client.post(f"/suites/{suite.pk}/cases/{case.pk}/delete/")
    import_into(client, suite, "n.json", json.dumps(small_document("third")))
    assert suite.versions.count() == 4
    after = client.get(f"/suites/{suite.pk}/export/?version=1")
    assert after.content == before
    assert after["Content-Disposition"] == 'attachment; filename="third.v1.suite.json"'
    current = exported(client, suite)
    assert current["name"] == "third"
    assert exported(client, suite, 2)["name"] == "renamed"
    assert [c["key"] for c in exported(client, suite, 3)["cases"]] == [
        "delete-if-exists",
        "weather-two-cities",
        "refund-order",
    ]


@pytest.mark.parametrize("version", ["7", "0"])
def test_exporting_a_version_that_does_not_exist_is_404(as_user, viewer, suite, version):
    response = as_user(viewer).get(f"/suites/{suite.pk}/export/?version={version}")
    assert response.status_code == 404


@pytest.mark.parametrize("version", ["abc", "1.5"])
def test_exporting_a_version_that_is_not_a_number_is_404(as_user, viewer, suite, version):
    client = as_user(viewer)
    client.raise_request_exception = False
    response = client.get(f"/suites/{suite.pk}/export/?version={version}")
    assert response.status_code == 404


def test_export_then_import_elsewhere_then_export_gives_equal_cases(as_user, admin, suite, labs):
    client = as_user(admin)
    first = client.get(f"/suites/{suite.pk}/export/")
    response = confirmed(
        client,
        "/suites/import/",
        {"team": labs.pk, "file": upload("exported.suite.json", first.content)},
    )
    assert response.status_code == 302
    copy_ = Suite.objects.get(team=labs)
    second = exported(client, copy_)
    assert second["cases"] == json.loads(first.content)["cases"]
    assert second == json.loads(first.content)


def test_round_trip_keeps_unknown_fields_and_exact_numbers(as_user, admin, team, labs):
    document = small_document("exacting")
    document["owner"] = "platform"
    document["cases"][0]["reviewer"] = "kept"
    document["cases"][0]["expected_calls"][0]["required_args"] = {
        "amount": 0.1000000000000000055511151231257827
    }
    text_file = json.dumps(document).replace("0.1", "0.1000000000000000055511151231257827", 1)
    client = as_user(admin)
    confirmed(client, "/suites/import/", {"team": team.pk, "file": upload("e.json", text_file)})
    made = Suite.objects.get(name="exacting")
    body = client.get(f"/suites/{made.pk}/export/").content.decode()
    assert "0.1000000000000000055511151231257827" in body
    assert '"owner": "platform"' in body or '"owner":"platform"' in body
    assert json.loads(body)["cases"][0]["reviewer"] == "kept"


# --- copy ---------------------------------------------------------------------------------


def test_copy_to_another_team_makes_a_new_suite_from_the_current_version(
    as_user, admin, suite, labs
):
    response = as_user(admin).post(f"/suites/{suite.pk}/copy/", {"team": labs.pk})
    made = Suite.objects.get(team=labs)
    assert response.status_code == 302
    assert response["Location"] == f"/suites/{made.pk}/"
    assert made.pk != suite.pk
    assert made.latest_version.number == 1
    assert made.latest_version.message == "Copied from agents/assistant-basics"
    assert made.latest_version.document == suite.latest_version.document
    assert made.cases.count() == 4
    assert suite.cases.count() == 4


def test_copy_into_the_same_team_gets_a_distinct_slug(as_user, editor, team, suite):
    as_user(editor).post(f"/suites/{suite.pk}/copy/", {"team": team.pk})
    assert sorted(team.suites.values_list("slug", flat=True)) == [
        "assistant-basics",
        "assistant-basics-2",
    ]


def test_copy_into_a_team_where_the_user_only_views_is_refused(as_user, admin, viewer, suite, labs):
    # The viewer sees the suite (member of its team) but edits no team at all.
    before = counts()
    response = as_user(viewer).post(f"/suites/{suite.pk}/copy/", {"team": labs.pk}, follow=True)
    assert "Choose a team where you are an editor." in text(response)
    assert counts() == before


def test_a_viewer_is_told_there_is_no_team_to_copy_into(as_user, viewer, suite):
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/"))
    assert "You are not an editor in any team to copy into." in html


def test_a_non_member_editor_copies_an_everyone_suite_into_their_own_team(
    as_user, editor, team, shared_suite
):
    response = as_user(editor).post(f"/suites/{shared_suite.pk}/copy/", {"team": team.pk})
    made = Suite.objects.get(team=team, name="shared-weather")
    assert response.status_code == 302
    assert made.visibility == "team"
    assert made.latest_version.document["cases"] == shared_suite.latest_version.document["cases"]


# --- settings -------------------------------------------------------------------------------


def test_changing_settings_makes_a_new_version(as_user, editor, suite):
    response = as_user(editor).post(
        f"/suites/{suite.pk}/settings/",
        {
            "name": "assistant-v2",
            "description": "Now with more",
            "tags": "demo, smoke",
            "visibility": "everyone",
            "match_preset": "custom",
            "match_tool_names": "ignore_case",
            "match_arg_names": "exact",
            "match_null_args": "absent_or_null",
        },
    )
    assert response.status_code == 302
    suite.refresh_from_db()
    assert (suite.name, suite.slug, suite.visibility) == (
        "assistant-v2",
        "assistant-v2",
        "everyone",
    )
    latest = suite.latest_version
    assert latest.number == 2
    assert latest.message == "Changed the suite's settings"
    assert latest.document["name"] == "assistant-v2"
    assert latest.document["tags"] == ["demo", "smoke"]
    assert latest.document["match"] == {
        "tool_names": "ignore_case",
        "arg_names": "exact",
        "null_args": "absent_or_null",
    }
    assert latest.document["cases"] == normalized(demo_document()["cases"])
    assert suite.versions.get(number=1).document["name"] == "assistant-basics"


def test_settings_form_shows_the_current_settings(as_user, editor, suite):
    html = text(as_user(editor).get(f"/suites/{suite.pk}/settings/"))
    assert 'value="assistant-basics"' in html
    assert '<option value="custom" selected>' in html


def test_settings_without_a_name_are_refused_and_change_nothing(as_user, editor, suite):
    before = counts()
    response = as_user(editor).post(
        f"/suites/{suite.pk}/settings/", {"name": "", "visibility": "team"}
    )
    assert response.status_code == 200
    assert "This field is required." in text(response)
    assert counts() == before


def test_catalog_checks_are_a_setting_that_needs_a_catalog(as_user, editor, suite):
    form = {"name": suite.name, "visibility": "team", "catalog_checks": "on"}
    refused = as_user(editor).post(f"/suites/{suite.pk}/settings/", form)
    assert "needs a tool catalog (tools) to check calls against" in text(refused)
    weather = {"name": "get_weather", "inputSchema": {"type": "object"}}
    services.replace_tools(suite, [weather], editor, "tools")
    assert as_user(editor).post(f"/suites/{suite.pk}/settings/", form).status_code == 302
    suite.refresh_from_db()
    assert suite.latest_version.document["catalog_checks"] is True
    html = text(as_user(editor).get(f"/suites/{suite.pk}/settings/"))
    assert re.search(r'<input[^>]*name="catalog_checks"[^>]*checked', html)
    del form["catalog_checks"]
    as_user(editor).post(f"/suites/{suite.pk}/settings/", form)
    suite.refresh_from_db()
    assert "catalog_checks" not in suite.latest_version.document


# --- versions -------------------------------------------------------------------------------


@pytest.fixture
def edited_suite(suite, editor):
    """The demo suite at version 2: one case removed, one added, one changed."""
    document = demo_document()
    document["cases"] = [c for c in document["cases"] if c["key"] != "greeting"]
    weather = document["cases"][1]
    weather["expected_calls"][1]["required_args"] = {"city": "London"}
    weather["expectations"].append({"type": "no_error"})
    document["cases"][0]["title"] = "Delete carefully"
    document["cases"].append(
        {"key": "new-case", "expected_calls": [{"name": "ping"}], "expectations": []}
    )
    services.replace_contents(suite, document, editor, "edit")
    return suite


def test_the_version_page_shows_that_version_read_only(as_user, viewer, edited_suite):
    before = SuiteVersion.objects.count()
    response = as_user(viewer).get(f"/suites/{edited_suite.pk}/versions/1/")
    html = text(response)
    assert response.status_code == 200
    assert "older version, read-only" in html
    assert '<code class="case-key">greeting</code>' in html
    assert '<code class="case-key">new-case</code>' not in html
    assert escaped('get_weather(city="Tokyo")') in html
    assert "<textarea" not in html
    assert 'name="tag"' not in html
    assert SuiteVersion.objects.count() == before


def test_viewing_versions_never_creates_one(as_user, editor, edited_suite):
    client = as_user(editor)
    before = list(SuiteVersion.objects.values_list("pk", "number", "document"))
    for url in ("versions/1/", "versions/2/", "versions/2/diff/", "export/?version=1", ""):
        assert client.get(f"/suites/{edited_suite.pk}/{url}").status_code == 200
    assert list(SuiteVersion.objects.values_list("pk", "number", "document")) == before


def test_the_latest_version_is_not_marked_older(as_user, viewer, edited_suite):
    html = text(as_user(viewer).get(f"/suites/{edited_suite.pk}/versions/2/"))
    assert "older version, read-only" not in html
    assert '<code class="case-key">new-case</code>' in html


def test_an_unknown_version_is_404(as_user, viewer, suite):
    assert as_user(viewer).get(f"/suites/{suite.pk}/versions/9/").status_code == 404


def test_the_suite_page_lists_the_history(as_user, viewer, edited_suite):
    html = text(as_user(viewer).get(f"/suites/{edited_suite.pk}/"))
    assert f'<a href="/suites/{edited_suite.pk}/versions/2/">v2</a>' in html
    assert f'<a href="/suites/{edited_suite.pk}/versions/1/">v1</a>' in html
    assert "<td>edit: 1 case added, 1 case removed, 2 cases changed</td>" in html
    assert "<td>Imported</td>" in html
    assert f'href="/suites/{edited_suite.pk}/versions/2/diff/"' in html


def test_an_editor_tags_a_version(as_user, editor, edited_suite):
    client = as_user(editor)
    response = client.post(f"/suites/{edited_suite.pk}/versions/1/tag/", {"tag": " release "})
    assert response.status_code == 302
    assert edited_suite.versions.get(number=1).tag == "release"
    html = text(client.get(f"/suites/{edited_suite.pk}/"))
    assert '>v1</a> <span class="tag">release</span>' in html
    assert edited_suite.versions.count() == 2


def test_an_empty_tag_removes_it(as_user, editor, suite):
    SuiteVersion.objects.filter(suite=suite).update(tag="release")
    as_user(editor).post(f"/suites/{suite.pk}/versions/1/tag/", {"tag": ""})
    assert suite.versions.get(number=1).tag == ""


def test_a_viewer_cannot_tag_a_version(as_user, viewer, suite):
    response = as_user(viewer).post(f"/suites/{suite.pk}/versions/1/tag/", {"tag": "release"})
    assert response.status_code == 403
    assert suite.versions.get(number=1).tag == ""


def test_the_tag_form_is_shown_to_editors_only(as_user, editor, viewer, suite):
    url = f"/suites/{suite.pk}/versions/1/"
    assert 'name="tag"' in text(as_user(editor).get(url))
    assert 'name="tag"' not in text(as_user(viewer).get(url))


def test_the_diff_page_shows_cases_added_removed_and_changed(as_user, viewer, edited_suite):
    html = text(as_user(viewer).get(f"/suites/{edited_suite.pk}/versions/2/diff/"))
    added = html.split('<h2 class="added">Cases added</h2>')[1].split("</section>")[0]
    removed = html.split('<h2 class="removed">Cases removed</h2>')[1].split("</section>")[0]
    changed = html.split("<h2>Cases changed</h2>")[1].split("</section>")[0]
    assert '<code class="case-key">new-case</code>' in added
    assert '<code class="case-key">greeting</code>' in removed
    assert '<code class="case-key">weather-two-cities</code>' in changed
    assert '<code class="case-key">delete-if-exists</code>' in changed
    assert '<code class="case-key">refund-order</code>' not in changed


def test_the_diff_page_shows_each_changed_fields_old_and_new_value(as_user, viewer, edited_suite):
    html = text(as_user(viewer).get(f"/suites/{edited_suite.pk}/versions/2/diff/"))
    deleting = html.split('<h3><code class="case-key">delete-if-exists</code></h3>')[1].split(
        "</div>"
    )[0]
    before, after = (edited_suite.versions.get(number=n).document for n in (1, 2))
    titles = [
        next(c.get("title") for c in document["cases"] if c["key"] == "delete-if-exists")
        for document in (before, after)
    ]
    assert titles[0] != titles[1]
    row = deleting.split("<td><code>title</code></td>")[1].split("</tr>")[0]
    shown = [
        escaped(json.dumps(title, ensure_ascii=False)) if title else "(absent)" for title in titles
    ]
    assert f'<td class="removed"><code class="value">{shown[0]}</code></td>' in row
    assert f'<td class="added"><code class="value">{shown[1]}</code></td>' in row


def test_the_diff_page_shows_predicate_labels_added_and_removed(as_user, viewer, edited_suite):
    html = text(as_user(viewer).get(f"/suites/{edited_suite.pk}/versions/2/diff/"))
    weather = html.split('<h3><code class="case-key">weather-two-cities</code></h3>')[1].split(
        "</div>"
    )[0]
    london = escaped('get_weather(city="London")')
    tokyo = escaped('get_weather(city="Tokyo")')
    assert f'<li class="added">+ <code>{london}</code></li>' in weather
    assert '<li class="added">+ <code>no run error</code></li>' in weather
    minus = "\N{MINUS SIGN}"
    assert f'<li class="removed">{minus} <code>{tokyo}</code></li>' in weather
    assert "Paris" not in weather


def test_the_diff_page_compares_against_any_version(as_user, editor, edited_suite):
    client = as_user(editor)
    client.post(
        f"/suites/{edited_suite.pk}/settings/",
        {"name": "assistant-basics", "description": "other", "visibility": "team"},
    )
    html = text(client.get(f"/suites/{edited_suite.pk}/versions/3/diff/?against=1"))
    assert "Changes from v1 to" in html
    assert '<code class="case-key">greeting</code>' in html
    assert "<code>description</code>" in html
    same = text(client.get(f"/suites/{edited_suite.pk}/versions/3/diff/?against=3"))
    assert "No differences." in same


def test_the_diff_of_version_1_has_nothing_to_compare_with(as_user, viewer, suite):
    assert as_user(viewer).get(f"/suites/{suite.pk}/versions/1/diff/").status_code == 404


def test_the_diff_against_a_version_that_does_not_exist_is_404(as_user, viewer, edited_suite):
    response = as_user(viewer).get(f"/suites/{edited_suite.pk}/versions/2/diff/?against=9")
    assert response.status_code == 404


def test_the_diff_against_a_version_that_is_not_a_number_is_404(as_user, viewer, edited_suite):
    client = as_user(viewer)
    client.raise_request_exception = False
    response = client.get(f"/suites/{edited_suite.pk}/versions/2/diff/?against=abc")
    assert response.status_code == 404


# --- BFCL -----------------------------------------------------------------------------------


def bfcl_files(answers: bytes | None = None) -> dict:
    questions = (BFCL / "simple_python.questions.jsonl").read_bytes()
    if answers is None:
        answers = (BFCL / "simple_python.answers.jsonl").read_bytes()
    return {
        "questions": upload("simple_python.questions.jsonl", questions),
        "possible_answers": upload("simple_python.answers.jsonl", answers),
    }


def test_importing_a_bfcl_category_makes_one_case_per_id(as_user, editor, team):
    response = confirmed(
        as_user(editor), "/suites/import-bfcl/", {"team": team.pk, "name": "", **bfcl_files()}
    )
    suite = Suite.objects.get(team=team)
    assert response.status_code == 302
    assert suite.name == "simple_python"  # the file name, before its first dot
    assert suite.cases.count() == 12
    first = suite.cases.get(key="simple_python_0")
    call = first.expected_calls.get()
    assert call.name == "calculate_triangle_area"
    assert call.exact_args is True
    assert first.extra_calls == "forbid"
    assert suite.latest_version.number == 1
    assert suite.latest_version.message == "Imported from BFCL"


def test_bfcl_import_names_the_suite_and_can_underscore_dots(as_user, editor, team):
    confirmed(
        as_user(editor),
        "/suites/import-bfcl/",
        {"team": team.pk, "name": "bfcl-simple", "underscore_dots": "on", **bfcl_files()},
    )
    suite = Suite.objects.get(name="bfcl-simple")
    call = suite.cases.get(key="simple_python_1").expected_calls.get()
    assert call.name == "math_factorial"


def test_a_bfcl_file_with_a_bad_line_reports_file_and_line_and_imports_nothing(
    as_user, editor, team
):
    lines = (BFCL / "simple_python.answers.jsonl").read_bytes().splitlines(keepends=True)
    lines[2] = b'{"id": "simple_python_2", "ground_truth": [\n'
    before = counts()
    response = as_user(editor).post(
        "/suites/import-bfcl/", {"team": team.pk, **bfcl_files(b"".join(lines))}
    )
    html = text(response)
    assert response.status_code == 200
    assert '<span class="muted">line 3</span> <code>simple_python.answers.jsonl</code>' in html
    assert counts() == before


def test_an_irrelevance_category_imports_without_possible_answers(as_user, editor, team):
    questions = (BFCL / "irrelevance.questions.jsonl").read_bytes()
    response = confirmed(
        as_user(editor),
        "/suites/import-bfcl/",
        {"team": team.pk, "questions": upload("BFCL_v4_irrelevance.json", questions)},
    )
    assert response.status_code == 302
    suite = Suite.objects.get(team=team)
    case = suite.cases.get(key="irrelevance_0")
    assert not case.expected_calls.exists()
    assert case.extra_calls == "forbid"
    assert [e.type for e in case.expectations.all()] == ["no_tool_calls"]


def test_a_category_with_possible_answers_is_refused_without_them(as_user, editor, team):
    questions = (BFCL / "simple_python.questions.jsonl").read_bytes()
    response = as_user(editor).post(
        "/suites/import-bfcl/",
        {"team": team.pk, "questions": upload("simple_python.questions.jsonl", questions)},
    )
    assert response.status_code == 200
    assert "give this category&#x27;s possible-answer file" in text(response)
    assert not Suite.objects.filter(team=team).exists()


def test_a_bfcl_viewer_cannot_import_into_their_team(as_user, viewer, team):
    before = counts()
    response = as_user(viewer).post("/suites/import-bfcl/", {"team": team.pk, **bfcl_files()})
    assert response.status_code == 200
    assert "Select a valid choice." in text(response)
    assert counts() == before


# --- who may do what ----------------------------------------------------------------------


def suite_urls(suite) -> dict[str, tuple[str, str, dict]]:
    """Every suite URL as (method, path, data) by name."""
    case = suite.cases.order_by("position").first()
    base = f"/suites/{suite.pk}"
    file = json.dumps(small_document(suite.name))
    case_form = {"key": "x", "extra_calls": "allow", "action": "save"}
    return {
        "page": ("get", f"{base}/", {}),
        "export": ("get", f"{base}/export/", {}),
        "export-v1": ("get", f"{base}/export/?version=1", {}),
        "version": ("get", f"{base}/versions/1/", {}),
        "diff": ("get", f"{base}/versions/2/diff/", {}),
        "case": ("get", f"{base}/cases/{case.pk}/", {}),
        "try": ("post", f"{base}/cases/try/", {**case_form, "run": '{"batches": []}'}),
        "settings": ("get", f"{base}/settings/", {}),
        "settings-post": ("post", f"{base}/settings/", {"name": "x", "visibility": "team"}),
        "replace": ("get", f"{base}/import/", {}),
        "replace-post": ("post", f"{base}/import/", {"file": upload("s.json", file)}),
        "case-new": ("get", f"{base}/cases/new/", {}),
        "case-new-post": ("post", f"{base}/cases/new/", case_form),
        "case-save": ("post", f"{base}/cases/{case.pk}/", {**case_form, "key": case.key}),
        "case-delete": ("post", f"{base}/cases/{case.pk}/delete/", {}),
        "tag": ("post", f"{base}/versions/1/tag/", {"tag": "release"}),
        "copy": ("post", f"{base}/copy/", {"team": suite.team_id}),
    }


READS = {"page", "export", "export-v1", "version", "diff", "case", "try"}
CHANGES = {
    "settings",
    "settings-post",
    "replace",
    "replace-post",
    "case-new",
    "case-new-post",
    "case-save",
    "case-delete",
    "tag",
}


@pytest.fixture
def two_versions(suite, editor):
    services.update_settings(suite, editor, description="second")
    return suite


def snapshot():
    return (
        counts(),
        list(Suite.objects.values_list("name", "description", "visibility").order_by("pk")),
        list(Case.objects.values_list("key", "revision").order_by("pk")),
        list(SuiteVersion.objects.values_list("number", "tag").order_by("pk")),
    )


@pytest.mark.parametrize("name", sorted(READS))
def test_a_viewer_may_read_everything_of_their_teams_suite(as_user, viewer, two_versions, name):
    method, url, data = suite_urls(two_versions)[name]
    before = snapshot()
    response = getattr(as_user(viewer), method)(url, data)
    assert response.status_code == 200
    assert snapshot() == before


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_viewer_gets_403_on_every_change(as_user, viewer, two_versions, name):
    method, url, data = suite_urls(two_versions)[name]
    before = snapshot()
    response = getattr(as_user(viewer), method)(url, data)
    assert response.status_code == 403
    assert snapshot() == before


@pytest.mark.parametrize("name", sorted(READS | CHANGES | {"copy"}))
def test_an_outsider_gets_404_on_everything_of_a_private_suite(
    as_user, outsider, other_team, two_versions, name
):
    method, url, data = suite_urls(two_versions)[name]
    if name == "copy":
        data = {"team": other_team.pk}  # into a team where the outsider is admin
    before = snapshot()
    response = getattr(as_user(outsider), method)(url, data)
    assert response.status_code == 404
    assert "assistant-basics" not in text(response)
    assert snapshot() == before


@pytest.mark.parametrize("who", ["editor", "admin"])
@pytest.mark.parametrize("name", sorted(READS | CHANGES - {"case-new-post", "case-save"}))
def test_editors_and_admins_may_do_everything(as_user, request, two_versions, who, name):
    method, url, data = suite_urls(two_versions)[name]
    response = getattr(as_user(request.getfixturevalue(who)), method)(url, data)
    assert response.status_code in (200, 302)


@pytest.mark.parametrize("name", sorted(READS))
def test_anyone_signed_in_reads_an_everyone_suite(as_user, viewer, outsider, shared_suite, name):
    services.update_settings(shared_suite, outsider, description="second")
    method, url, data = suite_urls(shared_suite)[name]
    response = getattr(as_user(viewer), method)(url, data)
    assert response.status_code == 200


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_non_member_gets_403_changing_an_everyone_suite(
    as_user, admin, outsider, shared_suite, name
):
    services.update_settings(shared_suite, outsider, description="second")
    method, url, data = suite_urls(shared_suite)[name]
    before = snapshot()
    response = getattr(as_user(admin), method)(url, data)
    assert response.status_code == 403
    assert snapshot() == before


def test_an_everyone_suite_shows_no_edit_buttons_to_non_members(as_user, viewer, shared_suite):
    html = text(as_user(viewer).get(f"/suites/{shared_suite.pk}/"))
    assert "/settings/" not in html.split("<main")[1]
    assert f"/suites/{shared_suite.pk}/cases/new/" not in html


def test_a_viewer_sees_no_edit_buttons(as_user, viewer, suite):
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/"))
    assert f"/suites/{suite.pk}/settings/" not in html
    assert f"/suites/{suite.pk}/import/" not in html
    assert f"/suites/{suite.pk}/cases/new/" not in html
    assert f"/suites/{suite.pk}/export/" in html


def test_anonymous_users_are_sent_to_sign_in(client, suite):
    for path in (f"/suites/{suite.pk}/", f"/suites/{suite.pk}/export/", "/suites/new/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_a_viewer_promoted_to_editor_may_import_at_once(as_user, admin, viewer, team):
    client = as_user(viewer)
    data = {"file": upload("s.json", json.dumps(small_document("mine"))), "team": team.pk}
    assert client.post("/suites/import/", data).status_code == 200
    assert not Suite.objects.filter(name="mine").exists()
    team.memberships.filter(user=viewer).update(role=Role.EDITOR)
    data["file"] = upload("s.json", json.dumps(small_document("mine")))
    assert confirmed(client, "/suites/import/", data).status_code == 302
    assert Suite.objects.filter(name="mine", team=team).exists()


def test_a_setting_that_changes_verdicts_is_in_the_diff_in_words(as_user, viewer, editor, team):
    """Two versions apart only in ``catalog_checks`` score differently: never "No
    differences"; nor a change of the suite's match options or its expectations."""
    from tests.support.pages import small_document

    document = small_document("checked")
    document["tools"] = [{"name": "get_weather", "parameters": {"type": "object"}}]
    suite = services.create_suite(team, document, editor)
    services.update_settings(suite, editor, catalog_checks=True)
    services.update_settings(suite, editor, match={"tool_names": "ignore_case"})
    client = as_user(viewer)
    html = text(client.get(f"/suites/{suite.pk}/versions/2/diff/"))
    assert "No differences" not in html
    settings = html.split("<h2>Settings that change verdicts</h2>")[1].split("</section>")[0]
    assert "Catalog checks turned on: whether every case also checks its calls" in settings
    html = text(client.get(f"/suites/{suite.pk}/versions/3/diff/"))
    assert "Changed how every case compares tool names" in html
    api = client.get(f"/api/suites/{suite.pk}/versions/2/diff/").json()
    assert api["verdict_settings"][0].startswith("Catalog checks turned on")
    assert api["suite_fields"] == ["catalog_checks"]
