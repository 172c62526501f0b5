"""/api/suites/: import, export, list, detail, settings and copy, with who may do each."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from cases import services
from cases.models import Suite, Visibility
from tests.support.builders import make_team

from .conftest import EXACT, suite_file

YAML_SUITE = b"""\
schema: casebook.suite/1
name: yaml-suite
description: Written in YAML
cases:
  - key: confirm
    prompt: Answer no.
    expected_calls:
      - name: answer
        required_args: {reply: no, date: 2024-05-20}
    expectations:
      - type: final_text_contains
        text: done
"""


def suite_page(pk):
    return "http://testserver" + reverse("suite", args=[pk])


def exact_suite_bytes(name="exact"):
    """A suite file whose number a float cannot hold, as JSON text."""
    document = suite_file(name)
    document["cases"][1]["expectations"].append({"type": "final_number_equals", "value": "@EXACT@"})
    return json.dumps(document).replace('"@EXACT@"', EXACT).encode()


def import_url(team):
    return f"/api/suites/import/?team={team.slug}"


def post_file(client, team, body: bytes, content_type="application/json"):
    return client.post(import_url(team), data=body, content_type=content_type)


# --- import ------------------------------------------------------------------------------


def test_an_editor_imports_a_json_suite_file(api, editor, team):
    response = post_file(api(editor), team, exact_suite_bytes("imported"))
    assert response.status_code == 201
    body = response.json()
    suite = Suite.objects.get(pk=body["id"])
    assert body == {"id": suite.pk, "version": 1, "url": suite_page(suite.pk), "warnings": []}
    assert suite.team == team
    assert suite.name == "imported"
    assert list(suite.cases.values_list("key", flat=True)) == [
        "delete-if-exists",
        "weather.paris-v2",
    ]
    assert suite.latest_version.author == editor


@pytest.mark.parametrize("content_type", ["application/yaml", "text/yaml", "application/x-yaml"])
def test_a_yaml_suite_file_is_imported_as_data(api, admin, team, content_type):
    response = post_file(api(admin), team, YAML_SUITE, content_type)
    assert response.status_code == 201
    suite = Suite.objects.get(pk=response.json()["id"])
    call = suite.cases.get().expected_calls.get()
    # YAML 1.2: "no" and a date stay the strings the tool receives.
    assert call.required_args == {"reply": "no", "date": "2024-05-20"}
    assert suite.description == "Written in YAML"


def test_a_suite_file_can_be_uploaded_as_the_multipart_field_file(api, admin, team):
    upload = SimpleUploadedFile("suite.yaml", YAML_SUITE, content_type="application/octet-stream")
    response = api(admin).post(import_url(team), {"file": upload}, format="multipart")
    assert response.status_code == 201
    assert Suite.objects.get(pk=response.json()["id"]).name == "yaml-suite"


def test_a_multipart_upload_without_the_file_is_refused_by_field(api, admin, team):
    response = api(admin).post(import_url(team), {"other": "x"}, format="multipart")
    assert response.status_code == 400
    assert list(response.json()) == ["file"]


def test_an_invalid_suite_file_lists_every_problem_and_creates_nothing(api, admin, team):
    document = suite_file("broken")
    first, second = document["cases"]
    first["expected_calls"][0]["required_args"] = ["notes.txt"]
    first["expected_calls"][1]["name"] = ""
    second["key"] = first["key"]
    second["expectations"] = [
        {"type": "tool_call_count", "min": 3, "max": 1},
        {"type": "final_text_matches", "regex": "(a)\\1"},
    ]
    response = post_file(api(admin), team, json.dumps(document).encode())
    assert response.status_code == 400
    paths = [problem["path"] for problem in response.json()["problems"]]
    assert paths == [
        "cases[0].expected_calls[0].required_args",
        "cases[0].expected_calls[1].name",
        "cases[1].key",
        "cases[1].expectations[0].min",
        "cases[1].expectations[1].regex",
    ]
    assert all(problem["message"] for problem in response.json()["problems"])
    assert not Suite.objects.exists()


def test_a_suite_file_needs_a_name(api, admin, team):
    document = suite_file()
    del document["name"]
    response = post_file(api(admin), team, json.dumps(document).encode())
    assert response.status_code == 400
    assert [p["path"] for p in response.json()["problems"]] == ["name"]
    assert not Suite.objects.exists()


def test_a_body_that_is_neither_json_nor_yaml_is_one_problem_at_the_root(api, admin, team):
    response = post_file(api(admin), team, b'{"name": "x", "cases": [')
    assert response.status_code == 400
    [problem] = response.json()["problems"]
    assert problem["path"] == ""
    assert "invalid JSON" in problem["message"]
    response = post_file(api(admin), team, b"name: [unclosed", "application/yaml")
    assert response.status_code == 400
    assert "invalid YAML" in response.json()["problems"][0]["message"]
    assert not Suite.objects.exists()


def test_duplicate_keys_in_the_file_are_problems_not_silently_dropped(api, admin, team):
    body = b'{"name": "dup", "name": "dup2", "cases": []}'
    response = post_file(api(admin), team, body)
    assert response.status_code == 400
    assert "duplicate key 'name'" in response.json()["problems"][0]["message"]


def test_import_needs_the_team_parameter(api, admin):
    response = api(admin).post(
        "/api/suites/import/", data=json.dumps(suite_file()), content_type="application/json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["team"]


def test_a_viewer_may_not_import_into_the_team(api, viewer, team):
    assert post_file(api(viewer), team, json.dumps(suite_file()).encode()).status_code == 403
    assert not Suite.objects.exists()


def test_outsiders_and_unknown_teams_get_404_on_import(api, outsider, team):
    client = api(outsider)
    assert post_file(client, team, json.dumps(suite_file()).encode()).status_code == 404
    response = client.post(
        "/api/suites/import/?team=no-such-team",
        data=json.dumps(suite_file()),
        content_type="application/json",
    )
    assert response.status_code == 404
    assert not Suite.objects.exists()


def test_anonymous_import_is_refused(api, team):
    assert post_file(api(), team, json.dumps(suite_file()).encode()).status_code in (401, 403)
    assert not Suite.objects.exists()


def test_an_unsupported_body_type_is_415(api, admin, team):
    response = post_file(api(admin), team, b"name: x", "text/plain")
    assert response.status_code == 415


# --- export ------------------------------------------------------------------------------


def test_export_is_the_current_versions_suite_file_as_an_attachment(api, viewer, suite):
    response = api(viewer).get(f"/api/suites/{suite.pk}/export/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="{suite.slug}.v1.suite.json"'
    document = json.loads(response.content)
    assert document == suite.latest_version.document
    assert document["cases"][0]["reviewer"] == "kept: an unknown field"


def test_exported_numbers_are_exactly_as_imported(api, admin, team):
    suite_id = post_file(api(admin), team, exact_suite_bytes()).json()["id"]
    response = api(admin).get(f"/api/suites/{suite_id}/export/")
    assert EXACT.encode() in response.content


def test_import_export_import_export_keeps_every_case(api, admin, outsider, team, other_team):
    first_id = post_file(api(admin), team, exact_suite_bytes("trip")).json()["id"]
    first_export = api(admin).get(f"/api/suites/{first_id}/export/").content

    second = post_file(api(outsider), other_team, first_export)
    assert second.status_code == 201
    second_export = api(outsider).get(f"/api/suites/{second.json()['id']}/export/").content

    first, again = json.loads(first_export), json.loads(second_export)
    assert len(first["cases"]) == 2
    assert again["cases"] == first["cases"]
    assert again["name"] == first["name"] == "trip"
    assert EXACT.encode() in second_export


def test_an_old_version_exports_unchanged_after_later_edits(api, editor, suite):
    client = api(editor)
    v1 = client.get(f"/api/suites/{suite.pk}/export/").content
    case = client.get(f"/api/suites/{suite.pk}/cases/delete-if-exists/").json()
    case["prompt"] = "Remove notes.txt."
    assert (
        client.put(
            f"/api/suites/{suite.pk}/cases/delete-if-exists/", case, format="json"
        ).status_code
        == 200
    )
    assert (
        client.patch(f"/api/suites/{suite.pk}/", {"name": "renamed"}, format="json").status_code
        == 200
    )

    old = client.get(f"/api/suites/{suite.pk}/export/?version=1")
    assert old.status_code == 200
    assert old.content == v1
    assert old["Content-Disposition"].endswith('.v1.suite.json"')
    current = client.get(f"/api/suites/{suite.pk}/export/")
    assert current["Content-Disposition"] == 'attachment; filename="renamed.v3.suite.json"'
    document = json.loads(current.content)
    assert document["name"] == "renamed"
    assert document["cases"][0]["prompt"] == "Remove notes.txt."


def test_exporting_a_version_that_does_not_exist_is_404(api, admin, suite):
    assert api(admin).get(f"/api/suites/{suite.pk}/export/?version=9").status_code == 404
    assert api(admin).get(f"/api/suites/{suite.pk}/export/?version=x").status_code == 400


def test_outsiders_cannot_export_a_private_suite(api, outsider, suite):
    response = api(outsider).get(f"/api/suites/{suite.pk}/export/")
    assert response.status_code == 404
    assert b"delete-if-exists" not in response.content


# --- list and detail ---------------------------------------------------------------------


def test_the_list_holds_the_suites_the_caller_may_see(api, admin, outsider, suite, other_team):
    theirs = services.create_suite(other_team, suite_file("theirs"), outsider)
    shared = services.create_suite(other_team, suite_file("shared"), outsider)
    shared.visibility = Visibility.EVERYONE
    shared.save()

    body = api(admin).get("/api/suites/").json()
    assert body["count"] == 2
    assert [s["name"] for s in body["results"]] == ["file-ops", "shared"]
    outsider_sees = api(outsider).get("/api/suites/").json()["results"]
    assert sorted(s["id"] for s in outsider_sees) == sorted([theirs.pk, shared.pk])


def test_the_list_filters_by_team_and_by_text(api, admin, team, suite):
    other = services.create_suite(
        team, {**suite_file("weather"), "description": "Forecasts"}, admin
    )
    client = api(admin)
    by_text = client.get("/api/suites/?q=FORECAST").json()["results"]
    assert [s["id"] for s in by_text] == [other.pk]
    by_name = client.get("/api/suites/?q=file-o").json()["results"]
    assert [s["id"] for s in by_name] == [suite.pk]
    by_team = client.get(f"/api/suites/?team={team.slug}").json()
    assert by_team["count"] == 2
    assert client.get("/api/suites/?team=elsewhere").json()["count"] == 0


def test_the_detail_describes_the_suite(api, viewer, suite, team):
    response = api(viewer).get(f"/api/suites/{suite.pk}/")
    assert response.status_code == 200
    assert response.json() == {
        "id": suite.pk,
        "team": team.slug,
        "name": "file-ops",
        "slug": "file-ops",
        "description": "File tools",
        "tags": [],
        "visibility": "team",
        "match": {"tool_names": "exact", "arg_names": "exact", "null_args": "must_be_null"},
        "trace_case_attribute": "",
        "trace_case_map": {},
        "live_retention_days": 30,
        "upload_retention_days": None,
        "case_count": 2,
        "version": 1,
        "url": suite_page(suite.pk),
    }


def test_an_outsider_gets_404_for_another_teams_private_suite(api, outsider, suite):
    response = api(outsider).get(f"/api/suites/{suite.pk}/")
    assert response.status_code == 404
    assert b"file-ops" not in response.content
    assert api(outsider).get("/api/suites/999999/").status_code == 404


def test_a_suite_visible_to_everyone_is_read_by_all_but_changed_by_its_team(
    api, outsider, editor, suite
):
    suite.visibility = Visibility.EVERYONE
    suite.save()
    client = api(outsider)
    assert client.get(f"/api/suites/{suite.pk}/").status_code == 200
    assert client.get(f"/api/suites/{suite.pk}/export/").status_code == 200
    response = client.patch(f"/api/suites/{suite.pk}/", {"name": "mine"}, format="json")
    assert response.status_code == 403
    suite.refresh_from_db()
    assert suite.name == "file-ops"
    assert (
        api(editor).patch(f"/api/suites/{suite.pk}/", {"name": "ours"}, format="json").status_code
        == 200
    )


# --- settings ----------------------------------------------------------------------------


def test_an_editor_changes_the_settings_as_a_new_version(api, editor, suite):
    response = api(editor).patch(
        f"/api/suites/{suite.pk}/",
        {
            "name": "File operations",
            "description": "Files, safely",
            "tags": ["files", "safety"],
            "visibility": "everyone",
            "match": "lenient",
        },
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "File operations"
    assert body["slug"] == "file-operations"
    assert body["tags"] == ["files", "safety"]
    assert body["visibility"] == "everyone"
    assert body["match"] == "lenient"
    assert body["version"] == 2
    suite.refresh_from_db()
    assert suite.visibility == Visibility.EVERYONE
    document = suite.latest_version.document
    assert (document["name"], document["match"]) == ("File operations", "lenient")
    assert suite.latest_version.author == editor


def test_a_viewer_may_not_change_the_settings(api, viewer, suite):
    response = api(viewer).patch(f"/api/suites/{suite.pk}/", {"name": "x"}, format="json")
    assert response.status_code == 403
    suite.refresh_from_db()
    assert suite.name == "file-ops"
    assert suite.versions.count() == 1


def test_invalid_settings_are_refused_by_field(api, editor, suite):
    client = api(editor)
    response = client.patch(f"/api/suites/{suite.pk}/", {"match": "strictest"}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["match"]
    response = client.patch(
        f"/api/suites/{suite.pk}/", {"name": "", "visibility": "world"}, format="json"
    )
    assert response.status_code == 400
    assert sorted(response.json()) == ["name", "visibility"]
    assert suite.versions.count() == 1


def test_put_on_a_suite_is_not_allowed(api, editor, suite):
    response = api(editor).put(f"/api/suites/{suite.pk}/", {"name": "x"}, format="json")
    assert response.status_code == 405


# --- copy --------------------------------------------------------------------------------


def test_a_suite_is_copied_into_another_team_of_the_callers(api, editor, suite, make_user):
    target = make_team("Second", editor=editor, admin=make_user("root"))
    response = api(editor).post(
        f"/api/suites/{suite.pk}/copy/", {"team": target.slug}, format="json"
    )
    assert response.status_code == 201
    copied = Suite.objects.get(pk=response.json()["id"])
    assert response.json() == {"id": copied.pk, "url": suite_page(copied.pk)}
    assert copied.team == target
    assert copied.latest_version.document["cases"] == suite.latest_version.document["cases"]


def test_an_outsider_copies_a_suite_visible_to_everyone_into_their_own_team(
    api, outsider, suite, other_team
):
    suite.visibility = Visibility.EVERYONE
    suite.save()
    response = api(outsider).post(
        f"/api/suites/{suite.pk}/copy/", {"team": other_team.slug}, format="json"
    )
    assert response.status_code == 201
    assert Suite.objects.get(pk=response.json()["id"]).team == other_team


def test_copy_needs_an_editor_role_in_the_target_team(api, editor, suite, make_user):
    target = make_team("Read Only", viewer=editor, admin=make_user("root"))
    client = api(editor)
    url = f"/api/suites/{suite.pk}/copy/"
    assert client.post(url, {"team": target.slug}, format="json").status_code == 403
    assert client.post(url, {"team": "no-such-team"}, format="json").status_code == 404
    assert client.post(url, {}, format="json").status_code == 400
    assert Suite.objects.count() == 1


def test_outsiders_cannot_copy_a_private_suite(api, outsider, suite, other_team):
    response = api(outsider).post(
        f"/api/suites/{suite.pk}/copy/", {"team": other_team.slug}, format="json"
    )
    assert response.status_code == 404
    assert Suite.objects.count() == 1


def test_listing_suites_takes_the_same_queries_however_many_there_are(
    api, admin, team, django_assert_max_num_queries
):
    for n in range(12):
        services.create_suite(team, suite_file(f"suite-{n:02}"), admin)
    client = api(admin)
    with django_assert_max_num_queries(5):
        body = client.get("/api/suites/").json()
    assert body["count"] == 12
    assert {s["case_count"] for s in body["results"]} == {2}
