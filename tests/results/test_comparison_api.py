"""``GET /api/submissions/{id}/comparison/`` (docs/api.md#submissions): a submission against
the last finished one before it, or the last with a label; its regressions and fixes by
case, each with its runs' pages; who may read it; and its place in the OpenAPI schema."""

from __future__ import annotations

import io
import json

import pytest
import yaml
from django.core.management import call_command
from rest_framework.test import APIClient

from cases import services
from scoring.ingest.pipeline import create_submission
from scoring.models import Run, Status, Submission

KEYS = ("regresses", "gets-fixed", "still-passing")


def document() -> dict:
    cases = [
        {"key": k, "expectations": [{"type": "final_text_contains", "text": "ok"}]} for k in KEYS
    ]
    return {"schema": "casebook.suite/1", "name": "gated", "cases": cases}


def run(key: str, passes: bool) -> dict:
    return {"case": key, "batches": [], "final_text": "ok" if passes else "nope"}


BEFORE = [run("regresses", True), run("gets-fixed", False), run("still-passing", True)]
AFTER = [run("regresses", False), run("gets-fixed", True), run("still-passing", True)]


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, document(), admin)


@pytest.fixture
def submit(django_capture_on_commit_callbacks, admin):
    def make(suite, runs, label="") -> Submission:
        lines = "".join(json.dumps(r) + "\n" for r in runs).encode()
        with django_capture_on_commit_callbacks(execute=True):
            made = create_submission(suite, admin, io.BytesIO(lines), label=label)
        made.refresh_from_db()
        assert made.status == Status.DONE
        return made

    return make


def api(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def compared(user, submission, **query):
    return api(user).get(f"/api/submissions/{submission.pk}/comparison/", query)


def test_the_latest_finished_submission_is_the_baseline(suite, submit, viewer):
    baseline = submit(suite, BEFORE, label="main")
    candidate = submit(suite, AFTER, label="pr-7")
    answer = compared(viewer, candidate)
    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert data["baseline"]["id"] == baseline.pk
    assert data["baseline"]["label"] == "main"
    assert [row["case"] for row in data["regressions"]] == ["regresses"]
    assert [row["case"] for row in data["fixes"]] == ["gets-fixed"]
    assert data["counts"]["regressed"] == data["counts"]["fixed"] == 1
    assert data["counts"]["still_passing"] == 1
    regression = data["regressions"][0]
    assert regression["delta"] == -1.0
    passing = Run.objects.get(submission=baseline, case_key="regresses")
    failing = Run.objects.get(submission=candidate, case_key="regresses")
    assert regression["baseline"]["html_url"].endswith(
        f"/submissions/{baseline.pk}/runs/{passing.pk}/"
    )
    assert regression["candidate"]["html_url"].endswith(
        f"/submissions/{candidate.pk}/runs/{failing.pk}/"
    )
    assert (regression["baseline"]["passed"], regression["candidate"]["passed"]) == (1, 0)
    assert data["html_url"].endswith(
        f"/suites/{suite.pk}/compare/?baseline={baseline.pk}&candidate={candidate.pk}"
    )
    assert (data["baseline_pass_rate"], data["candidate_pass_rate"]) == (2 / 3, 2 / 3)


def test_a_label_names_the_last_submission_with_it(suite, submit, viewer):
    labelled = submit(suite, BEFORE, label="main")
    submit(suite, AFTER, label="pr-6")  # later, but not labelled main
    candidate = submit(suite, AFTER, label="pr-7")
    data = compared(viewer, candidate, baseline="main").json()
    assert data["baseline"]["id"] == labelled.pk
    assert [row["case"] for row in data["regressions"]] == ["regresses"]
    latest = compared(viewer, candidate).json()
    assert latest["regressions"] == []
    assert latest["counts"]["regressed"] == 0


def test_with_no_baseline_there_is_nothing_to_regress_from(suite, submit, viewer):
    only = submit(suite, AFTER)
    data = compared(viewer, only).json()
    assert data["baseline"] is None
    assert data["regressions"] == data["fixes"] == []
    assert data["candidate_pass_rate"] == only.pass_rate
    assert compared(viewer, submit(suite, AFTER), baseline="nightly").json()["baseline"] is None


def test_a_submission_not_scored_to_the_end_is_refused_with_409(suite, submit, viewer):
    submit(suite, BEFORE)
    candidate = submit(suite, AFTER)
    Submission.objects.filter(pk=candidate.pk).update(status=Status.SCORING)
    answer = compared(viewer, candidate)
    assert answer.status_code == 409
    assert "scoring" in answer.json()["detail"]


def test_only_who_sees_the_suite_reads_it(suite, submit, outsider, viewer):
    submit(suite, BEFORE)
    candidate = submit(suite, AFTER)
    assert compared(outsider, candidate).status_code == 404
    assert APIClient().get(f"/api/submissions/{candidate.pk}/comparison/").status_code == 401
    assert compared(viewer, candidate).status_code == 200


def test_the_schema_documents_it(tmp_path):
    path = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    operation = yaml.safe_load(path.read_text())["paths"]["/api/submissions/{id}/comparison/"]
    assert [p["name"] for p in operation["get"]["parameters"]] == ["baseline", "id"]
    assert {"200", "404", "409"} <= set(operation["get"]["responses"])
