"""/api/suites/{id}/versions/: history, tags and what changed between two versions."""

from cases import services
from cases.models import SuiteVersion


def versions_url(suite, number=None, tail=""):
    url = f"/api/suites/{suite.pk}/versions/"
    return f"{url}{number}/{tail}" if number is not None else url


def edit_twice(suite, editor):
    """Version 2 changes a case's prompt and an expectation; version 3 adds a case."""
    case = suite.cases.get(key="delete-if-exists")
    data = services.case_document(case)
    data["prompt"] = "Remove notes.txt."
    data["expectations"][1] = {"type": "final_text_contains", "text": "removed"}
    services.save_case(suite, data, editor, case=case)
    services.save_case(suite, {"key": "new-case", "prompt": "Hi"}, editor)


def test_versions_are_listed_newest_first_with_their_authors(api, viewer, editor, admin, suite):
    edit_twice(suite, editor)
    response = api(viewer).get(versions_url(suite))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3
    rows = body["results"]
    assert [(v["number"], v["author"]) for v in rows] == [
        (3, editor.username),
        (2, editor.username),
        (1, admin.username),
    ]
    assert rows[0]["message"] == "Added case new-case"
    assert set(rows[0]) == {"number", "author", "created", "message", "tag"}


def test_a_version_holds_its_suite_file(api, viewer, editor, suite):
    edit_twice(suite, editor)
    response = api(viewer).get(versions_url(suite, 1))
    assert response.status_code == 200
    body = response.json()
    assert body["number"] == 1
    assert body["document"] == SuiteVersion.objects.get(suite=suite, number=1).document
    assert body["document"]["cases"][0]["prompt"] == "Delete notes.txt if it is there."
    assert api(viewer).get(versions_url(suite, 7)).status_code == 404


def test_outsiders_get_404_for_a_private_suites_versions(api, outsider, suite):
    client = api(outsider)
    assert client.get(versions_url(suite)).status_code == 404
    assert client.get(versions_url(suite, 1)).status_code == 404
    assert client.get(versions_url(suite, 1, "diff/")).status_code == 404
    assert (
        client.post(versions_url(suite, 1, "tag/"), {"tag": "x"}, format="json").status_code == 404
    )


def test_an_editor_tags_a_version(api, editor, suite):
    response = api(editor).post(versions_url(suite, 1, "tag/"), {"tag": "release"}, format="json")
    assert response.status_code == 200
    assert response.json()["tag"] == "release"
    assert suite.versions.get(number=1).tag == "release"
    cleared = api(editor).post(versions_url(suite, 1, "tag/"), {"tag": ""}, format="json")
    assert cleared.status_code == 200
    assert suite.versions.get(number=1).tag == ""


def test_a_viewer_may_not_tag_a_version(api, viewer, suite):
    response = api(viewer).post(versions_url(suite, 1, "tag/"), {"tag": "release"}, format="json")
    assert response.status_code == 403
    assert suite.versions.get(number=1).tag == ""


def test_a_tag_is_checked_by_field(api, editor, suite):
    client = api(editor)
    too_long = client.post(versions_url(suite, 1, "tag/"), {"tag": "x" * 51}, format="json")
    assert too_long.status_code == 400
    assert list(too_long.json()) == ["tag"]
    missing = client.post(versions_url(suite, 1, "tag/"), {}, format="json")
    assert missing.status_code == 400
    assert list(missing.json()) == ["tag"]
    assert (
        client.post(versions_url(suite, 9, "tag/"), {"tag": "x"}, format="json").status_code == 404
    )


def test_the_diff_against_the_version_before_is_the_default(api, viewer, editor, suite):
    edit_twice(suite, editor)
    response = api(viewer).get(versions_url(suite, 2, "diff/"))
    assert response.status_code == 200
    assert response.json() == {
        "old": 1,
        "new": 2,
        "suite_fields": [],
        "verdict_settings": [],
        "tools_added": [],
        "tools_removed": [],
        "tools_changed": [],
        "tool_changes": [],
        "added": [],
        "removed": [],
        "changed": [
            {
                "key": "delete-if-exists",
                "fields": ["prompt"],
                "predicates_added": ['final text contains "removed"'],
                "predicates_removed": ['final text contains "deleted"'],
            }
        ],
    }


def test_the_diff_names_the_tools_added_removed_and_changed(api, viewer, editor, suite):
    def tool(name, description=""):
        return {"name": name, "description": description, "parameters": {"type": "object"}}

    services.replace_tools(suite, [tool("kept"), tool("changed"), tool("gone")], editor, "v2")
    services.replace_tools(suite, [tool("kept"), tool("changed", "now"), tool("new")], editor, "v3")
    body = api(viewer).get(versions_url(suite, 3, "diff/")).json()
    assert (body["tools_added"], body["tools_removed"]) == (["new"], ["gone"])
    assert body["tools_changed"] == ["changed"]
    assert body["tool_changes"] == [
        {
            "name": "changed",
            "parameters_added": [],
            "parameters_removed": [],
            "parameters_changed": [],
            "fields": ["description"],
        }
    ]
    assert body["changed"] == []
    assert body["suite_fields"] == []


def test_the_diff_against_an_older_version(api, viewer, editor, suite):
    edit_twice(suite, editor)
    body = api(viewer).get(versions_url(suite, 3, "diff/") + "?against=1").json()
    assert (body["old"], body["new"]) == (1, 3)
    assert body["added"] == ["new-case"]
    assert [change["key"] for change in body["changed"]] == ["delete-if-exists"]
    backwards = api(viewer).get(versions_url(suite, 1, "diff/") + "?against=3").json()
    assert backwards["removed"] == ["new-case"]


def test_the_first_version_is_diffed_against_the_empty_suite(api, viewer, suite):
    body = api(viewer).get(versions_url(suite, 1, "diff/")).json()
    assert body["old"] == 0
    assert body["added"] == ["delete-if-exists", "weather.paris-v2"]
    assert "name" in body["suite_fields"]


def test_a_diff_against_a_missing_version_is_404(api, viewer, suite):
    client = api(viewer)
    assert client.get(versions_url(suite, 1, "diff/") + "?against=5").status_code == 404
    assert client.get(versions_url(suite, 1, "diff/") + "?against=-1").status_code == 400


def test_the_version_list_is_paginated(api, editor, suite):
    for n in range(52):
        services.update_settings(suite, editor, description=f"take {n}")
    body = api(editor).get(versions_url(suite)).json()
    assert body["count"] == 53
    assert len(body["results"]) == 50
    assert body["next"] is not None
    second = api(editor).get(body["next"]).json()
    assert [v["number"] for v in second["results"]] == [3, 2, 1]
