"""POST /api/suites/import/?from=tau-bench: a suite of a τ-bench results file's tasks, the
read-only tools guessed or given, for editors of the team only."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from cases.models import Suite
from tests.support.tau_bench import READ_ONLY_TOOLS, RESULTS_FILE

RESULTS = RESULTS_FILE.read_bytes()


def post(client, team, query: str = "", body: bytes = RESULTS):
    url = f"/api/suites/import/?team={team.slug}&from=tau-bench{query}"
    return client.post(url, data=body, content_type="application/json")


def test_an_editor_makes_a_suite_of_the_tasks_and_hears_which_tools_only_read(api, editor, team):
    response = post(api(editor), team, "&name=airline")
    assert response.status_code == 201
    body = response.json()
    suite = Suite.objects.get(pk=body["id"])
    assert (suite.name, suite.cases.count(), body["version"]) == ("airline", 50, 1)
    assert [tool["name"] for tool in body["tools"] if tool["read_only"]] == READ_ONLY_TOOLS
    assert {tool["source"] for tool in body["tools"]} == {"name"}
    called = set(suite.cases.values_list("expected_calls__name", flat=True))
    assert not called & set(READ_ONLY_TOOLS)


def test_the_read_only_tools_given_are_used_and_checked(api, admin, team):
    response = post(api(admin), team, "&read_only=get_user_details,calculate")
    assert response.status_code == 201
    tools = {tool["name"]: tool for tool in response.json()["tools"]}
    assert tools["calculate"] == {"name": "calculate", "read_only": True, "source": "given"}
    assert tools["get_reservation_details"]["read_only"] is False
    typo = post(api(admin), team, "&read_only=get_usr")
    assert typo.status_code == 400
    assert typo.json()["problems"][0]["path"] == "read_only"


def test_a_bad_results_file_creates_nothing_and_says_where(api, admin, team):
    response = post(api(admin), team, body=b'[{"task_id": 1, "info": {}, "traj": []}]')
    assert response.status_code == 400
    assert response.json()["problems"] == [
        {
            "path": "[0].info.task",
            "message": "required: the task τ-bench ran (instruction, actions, outputs)",
        }
    ]
    assert not Suite.objects.exists()


def test_the_results_file_may_be_the_multipart_field_file(api, admin, team):
    upload = SimpleUploadedFile("results.json", RESULTS)
    url = f"/api/suites/import/?team={team.slug}&from=tau-bench"
    response = api(admin).post(url, {"file": upload}, format="multipart")
    assert response.status_code == 201


@pytest.mark.parametrize(("who", "status"), [("viewer", 403), ("outsider", 404)])
def test_only_editors_of_the_team_import(api, team, request, who, status):
    assert post(api(request.getfixturevalue(who)), team).status_code == status
    assert post(api(), team).status_code in (401, 403)
    assert not Suite.objects.exists()
