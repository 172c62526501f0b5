"""The OpenAPI schema documents the API without warnings, and its pages load."""

import pytest
import yaml
from django.core.management import call_command


@pytest.fixture
def schema(tmp_path):
    path = tmp_path / "schema.yaml"
    # --fail-on-warn turns any warning drf-spectacular emits into a failure.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


def test_the_schema_validates_and_lists_every_endpoint(schema):
    operations = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method != "parameters"
    }
    expected = {
        ("GET", "/api/teams/"),
        ("POST", "/api/teams/"),
        ("GET", "/api/teams/{team_slug}/members/"),
        ("POST", "/api/teams/{team_slug}/members/"),
        ("DELETE", "/api/teams/{team_slug}/members/{username}/"),
        ("POST", "/api/suites/import/"),
        ("GET", "/api/suites/"),
        ("GET", "/api/suites/{id}/"),
        ("PATCH", "/api/suites/{id}/"),
        ("GET", "/api/suites/{id}/export/"),
        ("POST", "/api/suites/{id}/copy/"),
        ("GET", "/api/suites/{suite_pk}/cases/"),
        ("POST", "/api/suites/{suite_pk}/cases/"),
        ("GET", "/api/suites/{suite_pk}/cases/{key}/"),
        ("PUT", "/api/suites/{suite_pk}/cases/{key}/"),
        ("DELETE", "/api/suites/{suite_pk}/cases/{key}/"),
        ("GET", "/api/suites/{suite_pk}/versions/"),
        ("GET", "/api/suites/{suite_pk}/versions/{number}/"),
        ("POST", "/api/suites/{suite_pk}/versions/{number}/tag/"),
        ("GET", "/api/suites/{suite_pk}/versions/{number}/diff/"),
    }
    assert expected <= operations
    assert ("PATCH", "/api/suites/{suite_pk}/cases/{key}/") not in operations
    assert ("PUT", "/api/suites/{id}/") not in operations


def test_import_documents_raw_json_yaml_and_multipart_bodies(schema):
    operation = schema["paths"]["/api/suites/import/"]["post"]
    content = operation["requestBody"]["content"]
    assert {"application/json", "application/yaml", "text/yaml", "multipart/form-data"} <= set(
        content
    )
    upload = schema["components"]["schemas"]["SuiteUpload"]["properties"]["file"]
    assert upload["format"] == "binary"
    assert operation["responses"]["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/BadRequest"
    }
    # the file's problems by JSON path, or DRF's messages by field (a missing team)
    assert {"$ref": "#/components/schemas/Problems"} in schema["components"]["schemas"][
        "BadRequest"
    ]["oneOf"]
    parameters = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert set(parameters) == {"team", "from", "name", "read_only"}
    assert parameters["from"]["enum"] == ["suite-file", "tau-bench"]


def test_export_documents_a_json_file_and_path_ids_are_integers(schema):
    operation = schema["paths"]["/api/suites/{id}/export/"]["get"]
    assert list(operation["responses"]["200"]["content"]) == ["application/json"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert parameters["id"]["schema"]["type"] == "integer"
    assert parameters["version"]["in"] == "query"


def test_a_stale_edit_is_documented_as_409(schema):
    put = schema["paths"]["/api/suites/{suite_pk}/cases/{key}/"]["put"]
    assert put["responses"]["409"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/StaleEdit"
    }


def test_schema_and_docs_pages_load(api, viewer):
    client = api(viewer)
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/suites/import/" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()


def test_the_browsable_api_renders_for_a_person(api, viewer, suite):
    client = api(viewer)
    for url in (
        "/api/",
        "/api/suites/",
        f"/api/suites/{suite.pk}/",
        f"/api/suites/{suite.pk}/cases/",
        f"/api/suites/{suite.pk}/versions/1/",
    ):
        response = client.get(url, HTTP_ACCEPT="text/html")
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith("text/html"), url
