"""/api/suites/{id}/cases/: reading and changing one case at a time."""

import json

import pytest

from cases.models import Case, Visibility

from .conftest import EXACT


def cases_url(suite, key=None):
    url = f"/api/suites/{suite.pk}/cases/"
    return f"{url}{key}/" if key else url


NEW_CASE = {
    "key": "refund order #42",
    "prompt": "Refund order 42.",
    "expected_calls": [{"name": "refund", "required_args": {"order": 42}}],
    "expectations": [{"type": "final_text_contains", "text": "refunded"}],
}


def test_the_list_gives_each_case_as_its_suite_file_object(api, viewer, suite):
    response = api(viewer).get(cases_url(suite))
    assert response.status_code == 200
    results = response.json()["results"]
    assert [case["key"] for case in results] == ["delete-if-exists", "weather.paris-v2"]
    first = results[0]
    stored = suite.cases.get(key="delete-if-exists")
    assert (first["id"], first["revision"]) == (stored.pk, 1)
    document = suite.latest_version.document["cases"][0]
    assert {k: v for k, v in first.items() if k not in ("id", "revision")} == document


def test_a_case_with_dots_in_its_key_is_addressable(api, viewer, suite):
    response = api(viewer).get(cases_url(suite, "weather.paris-v2"))
    assert response.status_code == 200
    assert response.json()["prompt"] == "Weather in Paris?"
    assert api(viewer).get(cases_url(suite, "weather")).status_code == 404


def test_outsiders_get_404_for_a_private_suites_cases(api, outsider, suite):
    client = api(outsider)
    assert client.get(cases_url(suite)).status_code == 404
    response = client.get(cases_url(suite, "delete-if-exists"))
    assert response.status_code == 404
    assert b"notes.txt" not in response.content
    assert client.delete(cases_url(suite, "delete-if-exists")).status_code == 404
    assert suite.cases.count() == 2


def test_everyone_reads_the_cases_of_a_suite_visible_to_everyone_but_only_its_team_edits(
    api, outsider, suite
):
    suite.visibility = Visibility.EVERYONE
    suite.save()
    client = api(outsider)
    assert client.get(cases_url(suite)).json()["count"] == 2
    assert client.post(cases_url(suite), NEW_CASE, format="json").status_code == 403
    assert client.delete(cases_url(suite, "delete-if-exists")).status_code == 403
    assert suite.cases.count() == 2


def test_an_editor_adds_a_case_as_a_new_version(api, editor, suite):
    response = api(editor).post(cases_url(suite), NEW_CASE, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["key"] == "refund order #42"
    assert body["revision"] == 1
    assert body["expected_calls"][0]["required_args"] == {"order": 42}
    version = suite.latest_version
    assert version.number == 2
    assert version.author == editor
    assert [c["key"] for c in version.document["cases"]][-1] == "refund order #42"
    # The key holds a space and a '#': both reach it once URL-encoded.
    assert api(editor).get(cases_url(suite, "refund%20order%20%2342")).status_code == 200


def test_a_viewer_may_not_add_change_or_remove_cases(api, viewer, suite):
    client = api(viewer)
    assert client.post(cases_url(suite), NEW_CASE, format="json").status_code == 403
    case = client.get(cases_url(suite, "delete-if-exists")).json()
    response = client.put(cases_url(suite, "delete-if-exists"), case, format="json")
    assert response.status_code == 403
    assert client.delete(cases_url(suite, "delete-if-exists")).status_code == 403
    assert suite.versions.count() == 1


def test_an_invalid_case_lists_its_problems_relative_to_the_case(api, editor, suite):
    bad = {
        "key": "",
        "expected_calls": [{"name": "", "depends_on_result": True}],
        "expectations": [{"type": "final_number_equals", "value": 1, "tolerance": -1}],
    }
    response = api(editor).post(cases_url(suite), bad, format="json")
    assert response.status_code == 400
    assert [p["path"] for p in response.json()["problems"]] == [
        "key",
        "expected_calls[0].name",
        "expected_calls[0].depends_on_result",
        "expectations[0].tolerance",
    ]
    assert suite.cases.count() == 2
    assert suite.versions.count() == 1


def test_a_key_another_case_holds_is_refused(api, editor, suite):
    response = api(editor).post(
        cases_url(suite), {**NEW_CASE, "key": "weather.paris-v2"}, format="json"
    )
    assert response.status_code == 400
    assert [p["path"] for p in response.json()["problems"]] == ["key"]


def test_a_body_that_is_not_an_object_is_refused(api, editor, suite):
    response = api(editor).post(cases_url(suite), ["a", "list"], format="json")
    assert response.status_code == 400
    assert "non_field_errors" in response.json()


def test_a_case_replaced_from_its_revision_is_saved(api, editor, suite):
    client = api(editor)
    case = client.get(cases_url(suite, "delete-if-exists")).json()
    case["prompt"] = "Remove notes.txt if present."
    case["expectations"].append({"type": "no_error"})
    response = client.put(cases_url(suite, "delete-if-exists"), case, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["revision"] == 2
    assert body["prompt"] == "Remove notes.txt if present."
    stored = suite.latest_version.document["cases"][0]
    # id and revision describe the row; they are not stored as unknown fields of the case.
    assert "id" not in stored
    assert "revision" not in stored
    assert stored["reviewer"] == "kept: an unknown field"
    assert stored["expectations"][-1] == {"type": "no_error"}


def test_a_stale_revision_is_refused_with_409_and_changes_nothing(api, admin, editor, suite):
    loaded = api(editor).get(cases_url(suite, "delete-if-exists")).json()
    theirs = {**loaded, "prompt": "Saved first."}
    assert (
        api(admin)
        .put(cases_url(suite, "delete-if-exists"), theirs, format="json")
        .json()["revision"]
        == 2
    )

    mine = {**loaded, "prompt": "Saved second, from revision 1."}
    response = api(editor).put(cases_url(suite, "delete-if-exists"), mine, format="json")
    assert response.status_code == 409
    assert response.json()["revision"] == 2
    assert "changed by someone else" in response.json()["detail"]
    case = Case.objects.get(suite=suite, key="delete-if-exists")
    assert (case.prompt, case.revision) == ("Saved first.", 2)
    assert suite.versions.count() == 2


def test_a_revision_that_is_not_a_positive_number_is_refused_by_field(api, editor, suite):
    case = api(editor).get(cases_url(suite, "delete-if-exists")).json()
    response = api(editor).put(
        cases_url(suite, "delete-if-exists"), {**case, "revision": "two"}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["revision"]


def test_put_without_a_revision_overwrites(api, editor, suite):
    response = api(editor).put(
        cases_url(suite, "weather.paris-v2"), {**NEW_CASE, "key": "weather.paris-v2"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["revision"] == 2
    assert response.json()["prompt"] == "Refund order 42."


def test_put_may_rename_the_case(api, editor, suite):
    case = api(editor).get(cases_url(suite, "weather.paris-v2")).json()
    response = api(editor).put(
        cases_url(suite, "weather.paris-v2"), {**case, "key": "weather-paris"}, format="json"
    )
    assert response.status_code == 200
    assert api(editor).get(cases_url(suite, "weather-paris")).status_code == 200
    assert api(editor).get(cases_url(suite, "weather.paris-v2")).status_code == 404


def test_put_with_an_invalid_case_changes_nothing(api, editor, suite):
    case = api(editor).get(cases_url(suite, "delete-if-exists")).json()
    case["expected_calls"][0]["required_args"] = "notes.txt"
    response = api(editor).put(cases_url(suite, "delete-if-exists"), case, format="json")
    assert response.status_code == 400
    assert response.json()["problems"][0]["path"] == "expected_calls[0].required_args"
    assert suite.cases.get(key="delete-if-exists").revision == 1


def test_put_on_a_missing_case_is_404_and_patch_is_not_offered(api, editor, suite):
    client = api(editor)
    assert client.put(cases_url(suite, "nope"), NEW_CASE, format="json").status_code == 404
    response = client.patch(cases_url(suite, "delete-if-exists"), {"prompt": "x"}, format="json")
    assert response.status_code == 405


def test_duplicate_keys_in_a_case_body_are_problems(api, editor, suite):
    body = b'{"key": "k", "prompt": "a", "prompt": "b"}'
    response = api(editor).post(cases_url(suite), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["problems"] == [{"path": "", "message": "duplicate key 'prompt'"}]


def test_numbers_in_a_case_keep_every_digit(api, editor, suite):
    body = json.dumps(
        {"key": "pi", "expectations": [{"type": "final_number_equals", "value": "@"}]}
    ).replace('"@"', EXACT)
    response = api(editor).post(cases_url(suite), body, content_type="application/json")
    assert response.status_code == 201
    assert f'"value":{EXACT}'.encode() in response.content
    got = api(editor).get(cases_url(suite, "pi"))
    assert f'"value":{EXACT}'.encode() in got.content


def test_an_editor_removes_a_case_as_a_new_version(api, editor, suite):
    response = api(editor).delete(cases_url(suite, "delete-if-exists"))
    assert response.status_code == 204
    assert list(suite.cases.values_list("key", flat=True)) == ["weather.paris-v2"]
    version = suite.latest_version
    assert version.number == 2
    assert [c["key"] for c in version.document["cases"]] == ["weather.paris-v2"]
    assert api(editor).delete(cases_url(suite, "delete-if-exists")).status_code == 404


@pytest.mark.parametrize("method", ["get", "post"])
def test_anonymous_callers_cannot_reach_cases(api, suite, method):
    response = getattr(api(), method)(cases_url(suite), NEW_CASE, format="json")
    assert response.status_code in (401, 403)
    assert suite.cases.count() == 2


def test_listing_cases_takes_the_same_queries_however_many_there_are(
    api, viewer, editor, suite, django_assert_max_num_queries
):
    client = api(viewer)
    client.get(cases_url(suite))  # session and user loaded once
    with django_assert_max_num_queries(8):
        assert client.get(cases_url(suite)).json()["count"] == 2
    for n in range(10):
        api(editor).post(cases_url(suite), {**NEW_CASE, "key": f"k{n}"}, format="json")
    with django_assert_max_num_queries(8):
        assert client.get(cases_url(suite)).json()["count"] == 12
