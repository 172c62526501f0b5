"""The submissions API (docs/api.md#submissions) as a CI job uses it, with a token: upload a
run file (the body, or multipart), follow its status, page through the reports, re-score,
delete."""

from __future__ import annotations

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases import services
from scoring.models import Result, Run, Status, Submission, UploadChunk
from tests.support import tau_bench

from .conftest import DEMO_RUNS, assert_consistent

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def post_run_file(api, suite, body: bytes, query: str = "", **kwargs):
    """POST the file as the whole body, running what it enqueues to the end."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return api.post(
            f"/api/suites/{suite.pk}/submissions/{query}",
            data=body,
            content_type=kwargs.pop("content_type", "application/x-ndjson"),
            **kwargs,
        )


def accepted(response) -> Submission:
    assert response.status_code == 202, response.content
    answer = response.json()
    assert set(answer) == {"id", "status_url", "html_url"}
    assert answer["status_url"] == f"http://testserver/api/submissions/{answer['id']}/"
    assert answer["html_url"] == f"http://testserver/submissions/{answer['id']}/"
    return Submission.objects.get(pk=answer["id"])


def test_a_run_file_as_the_body_is_accepted_and_its_status_is_as_designed(api, demo_suite, user):
    mystery = b'{"case": "mystery", "batches": []}'
    body = DEMO_RUNS.replace(b"\n", b"\n" + mystery + b"\n", 1) + b"{oops\n"
    response = post_run_file(api, demo_suite, body, "?label=gpt-4o")
    submission = accepted(response)
    assert (submission.label, submission.uploader) == ("gpt-4o", user)

    status = api.get(response.json()["status_url"]).json()
    assert {
        key: status[key]
        for key in ("status", "total", "scored", "counts", "invalid_lines", "unknown_cases")
    } == {
        "status": "done",
        "total": 7,
        "scored": 7,
        "counts": {"pass": 4, "fail": 3, "error": 0},
        "invalid_lines": [{"line": 9, "reason": status["invalid_lines"][0]["reason"]}],
        "unknown_cases": ["mystery"],
    }
    assert "JSON" in status["invalid_lines"][0]["reason"]
    assert status["html_url"] == response.json()["html_url"]
    assert (status["stored_runs"], status["invalid"], status["version"]) == (8, 1, 1)
    assert_consistent(submission)


def test_the_tau_bench_file_sent_to_a_suite_keyed_otherwise_fails_naming_both_keys(api, tau_suite):
    response = post_run_file(
        api, tau_suite, tau_bench.RESULTS_FILE.read_bytes(), content_type="application/json"
    )
    status = api.get(response.json()["status_url"]).json()
    assert (status["status"], status["total"], status["stored_runs"]) == ("failed", 0, 200)
    assert status["unknown_cases"][:3] == ["0", "1", "2"]
    assert "its keys are the runs' with 'task-' before them" in status["error"]


def test_invalid_lines_past_the_stored_limit_are_counted_and_said_to_be_left_out(
    api, demo_suite, settings
):
    settings.CASEBOOK_MAX_STORED_INVALID_LINES = 2
    response = post_run_file(api, demo_suite, b"1\n" * 5 + DEMO_RUNS, "")
    accepted(response)
    status = api.get(response.json()["status_url"]).json()
    assert [line["line"] for line in status["invalid_lines"]] == [1, 2]
    assert (status["invalid"], status["invalid_lines_omitted"]) == (5, 3)
    assert status["total"] == 7


def test_a_gzip_body_and_a_multipart_file_are_accepted_alike(api, demo_suite):
    packed = accepted(post_run_file(api, demo_suite, gzip.compress(DEMO_RUNS), "?label=gz"))
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = api.post(
            f"/api/suites/{demo_suite.pk}/submissions/?label=form",
            {"file": SimpleUploadedFile("runs.jsonl", DEMO_RUNS)},
            format="multipart",
        )
    form = accepted(response)
    assert form.filename == "runs.jsonl"
    for submission in (packed, form):
        assert_consistent(submission)
        assert (submission.passed, submission.failed) == (4, 3)


def test_the_reports_are_paged_in_file_order_each_with_its_review_page(api, tau_suite):
    response = post_run_file(api, tau_suite, tau_bench.run_file())
    submission = accepted(response)
    status = api.get(response.json()["status_url"]).json()
    assert status["counts"] == {"pass": tau_bench.PASSED, "fail": tau_bench.FAILED, "error": 0}

    url = status["results_url"]
    assert url == f"http://testserver/api/submissions/{submission.pk}/results/"
    pages = []
    while url:
        page = api.get(url).json()
        assert page["count"] == 200
        pages.append(page)
        url = page["next"]
    assert [len(page["results"]) for page in pages] == [50, 50, 50, 50]
    assert pages[0]["previous"] is None
    assert pages[1]["previous"] is not None

    reports = [report for page in pages for report in page["results"]]
    runs = list(Run.objects.filter(submission=submission).order_by("seq"))
    assert [(r["case"], r["trial"]) for r in reports] == [(r.case_key, r.trial) for r in runs]
    assert [r["html_url"] for r in reports] == [
        f"http://testserver/submissions/{submission.pk}/runs/{run.pk}/" for run in runs
    ]
    assert [r["verdict"] for r in reports] == [run.result.verdict for run in runs]
    for report in reports:
        assert {"case", "trial", "verdict", "predicates", "error"} <= set(report)
    assert api.get(reports[0]["html_url"]).status_code in (200, 302)

    results = f"/api/submissions/{submission.pk}/results/"
    assert api.get(results, {"verdict": "pass"}).json()["count"] == tau_bench.PASSED
    by_case = api.get(results, {"case": "task-3"}).json()
    assert sorted(r["trial"] for r in by_case["results"]) == [0, 1, 2, 3]


def test_the_reports_carry_the_runs_notes_as_the_otel_sdk_wrote_the_file(api, team, user):
    """The OpenTelemetry SDK's spans, content capture off (tests/fixtures/otel): the report
    says why the arguments are unknown."""
    from tests.support.producers import FIXTURES, GENERIC_SETTING, SUITE

    suite = services.create_suite(team, SUITE, user)
    body = (FIXTURES / "otel/sdk_spans_no_content.jsonl").read_bytes()
    body += (FIXTURES / "openai/responses_state.jsonl").read_bytes()
    submission = accepted(post_run_file(api, suite, body))
    reports = api.get(f"/api/submissions/{submission.pk}/results/").json()["results"]
    assert [(r["case"], r["verdict"], r["notes"]) for r in reports] == [
        (
            "weather-no-content",
            "error",
            [
                f"tool arguments were not captured: {GENERIC_SETTING}",
                f"the final text was not captured: {GENERIC_SETTING}",
            ],
        ),
        ("weather", "pass", []),
        ("weather-pair", "pass", []),
        ("weather-truncated", "fail", []),
    ]
    stored = Run.objects.get(submission=submission, case_key="weather")
    assert stored.document["transcript"][-1] == {
        "role": "assistant",
        "text": "Paris is 18°C; Tokyo is unavailable right now.",
    }


def test_an_upload_over_the_limit_is_413_and_nothing_is_kept(api, demo_suite, settings):
    settings.CASEBOOK_MAX_UPLOAD_BYTES = 1000
    response = post_run_file(api, demo_suite, b"x" * 1001)
    assert response.status_code == 413
    assert response.json() == {"detail": "the file is over the 0 MB upload limit"}
    response = api.post(
        f"/api/suites/{demo_suite.pk}/submissions/",
        {"file": SimpleUploadedFile("runs.jsonl", b"x" * 2000)},
        format="multipart",
    )
    assert response.status_code == 413
    assert not Submission.objects.exists()
    assert not UploadChunk.objects.exists()


def test_an_empty_upload_is_400(api, demo_suite):
    response = post_run_file(api, demo_suite, b"")
    assert response.status_code == 400
    assert "the run file as the body" in response.json()["detail"]
    response = api.post(
        f"/api/suites/{demo_suite.pk}/submissions/",
        {"file": SimpleUploadedFile("runs.jsonl", b"")},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "the file is empty"}
    response = api.post(
        f"/api/suites/{demo_suite.pk}/submissions/", {"other": "x"}, format="multipart"
    )
    assert response.status_code == 400
    assert not Submission.objects.exists()


def test_re_scoring_and_deleting_through_the_api(api, demo_suite, user):
    submission = accepted(post_run_file(api, demo_suite, DEMO_RUNS))
    greeting = demo_suite.cases.get(key="greeting")
    document = services.case_document(greeting)
    document["expectations"] = [{"type": "final_text_contains", "text": "Goodbye"}]
    services.save_case(demo_suite, document, user, case=greeting)
    url = f"/api/submissions/{submission.pk}/"

    with TestCase.captureOnCommitCallbacks(execute=True):
        response = api.post(f"{url}rescore/", {"version": 2}, format="json")
    assert response.status_code == 202
    assert response.json()["version"] == 2
    status = api.get(url).json()
    assert (status["status"], status["counts"]) == ("done", {"pass": 3, "fail": 4, "error": 0})
    assert_consistent(submission)

    assert api.post(f"{url}rescore/", {"version": 7}, format="json").status_code == 404
    Submission.objects.filter(pk=submission.pk).update(status=Status.INGESTING)
    assert api.post(f"{url}rescore/", {"version": 1}, format="json").status_code == 409

    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404
    assert not Result.objects.exists()
    assert not Run.objects.exists()


def test_without_a_token_the_api_answers_401(demo_suite):
    response = APIClient().post(
        f"/api/suites/{demo_suite.pk}/submissions/", DEMO_RUNS, content_type="text/plain"
    )
    assert response.status_code == 401
    assert not Submission.objects.exists()
