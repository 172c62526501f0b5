"""Whole files uploaded through the API (docs/formats.md#file-shapes): τ-bench's results and
Inspect ``.eval`` archives as their producers write them, ``?case_field``, and a file that
gives no valid run ending ``failed`` with one diagnosis
(docs/pipeline.md#files-that-yield-nothing)."""

from __future__ import annotations

import gzip
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from cases import services
from cases.filtersets import listed_suites
from scoring.ingest import pipeline
from scoring.ingest.tasks import ingest_submission
from scoring.models import Status, Submission, UploadChunk
from scoring.views.library import with_last_result
from tests.support import tau_bench
from tests.support.inspect_data import INSPECT, INSPECT_SUITE

from .conftest import DEMO, assert_consistent, jsonl, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def task_id_suite(team, user):
    """τ-bench's airline suite with its cases keyed by task id, as the results name them."""
    return services.create_suite(team, tau_bench.suite_document(prefix=""), user)


@pytest.fixture
def inspect_suite(team, user):
    return services.create_suite(team, INSPECT_SUITE, user)


def post(api, suite, body, query="", content_type="application/octet-stream") -> Submission:
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = api.post(
            f"/api/suites/{suite.pk}/submissions/{query}", data=body, content_type=content_type
        )
    assert response.status_code == 202, response.content
    return Submission.objects.get(pk=response.json()["id"])


def post_multipart(api, suite, name, body, query="") -> Submission:
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = api.post(
            f"/api/suites/{suite.pk}/submissions/{query}",
            {"file": SimpleUploadedFile(name, body)},
        )
    assert response.status_code == 202, response.content
    return Submission.objects.get(pk=response.json()["id"])


def test_the_53013_line_tau_bench_file_uploads_as_it_is_and_scores_200_runs(api, task_id_suite):
    """The file that once became 'done' with 0 runs and 53,013 invalid lines."""
    body = tau_bench.RESULTS_FILE.read_bytes()
    assert len(body.splitlines()) == 53_013
    submission = post(api, task_id_suite, body, "?label=gpt-4o")
    assert_consistent(submission)
    assert (submission.stored_runs, submission.total, submission.invalid) == (200, 200, 0)
    assert (submission.passed, submission.failed) == (tau_bench.PASSED, tau_bench.FAILED)
    assert submission.formats_seen == ["tau_bench"]
    status = api.get(f"/api/submissions/{submission.pk}/").json()
    assert (status["status"], status["counts"]["pass"]) == ("done", tau_bench.PASSED)


def test_the_tau_bench_file_gzipped_or_as_a_form_file_reads_the_same(api, task_id_suite):
    body = tau_bench.RESULTS_FILE.read_bytes()
    for submission in (
        post(api, task_id_suite, gzip.compress(body)),
        post_multipart(api, task_id_suite, "results.json", body),
    ):
        assert_consistent(submission)
        assert (submission.total, submission.passed) == (200, tau_bench.PASSED)


@pytest.mark.parametrize("how", ["body", "multipart"])
def test_an_inspect_eval_archive_uploads_as_it_is(api, inspect_suite, how):
    body = (INSPECT / "tools.eval").read_bytes()
    if how == "body":
        submission = post(api, inspect_suite, body)
    else:
        submission = post_multipart(api, inspect_suite, "tools.eval", body)
    assert_consistent(submission)
    assert (submission.total, submission.passed, submission.failed) == (6, 4, 2)
    assert submission.formats_seen == ["inspect_ai"]
    first_chunk = UploadChunk.objects.filter(submission=submission).first().data
    assert bytes(first_chunk).startswith(b"PK\x03\x04")  # kept as it came: zip is compressed


def test_an_eval_archive_past_the_uncompressed_limit_is_refused_by_its_sample(
    api, inspect_suite, settings
):
    settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES = 40_000
    submission = post(api, inspect_suite, (INSPECT / "tools.eval").read_bytes())
    reasons = list(submission.invalid_lines.values_list("reason", flat=True))
    assert reasons
    assert all("past the archive's limit" in r or "expands" in r for r in reasons)
    assert submission.stored_runs < 6


def test_case_field_on_the_upload_names_where_each_line_holds_its_case(api, team, user):
    suite = services.create_suite(team, DEMO, user)
    lines = [{"meta": {"task": "greeting"}, "batches": [], "final_text": "Hello"}] * 2
    submission = post(api, suite, jsonl(lines), "?case_field=meta.task&label=x")
    assert submission.case_field == "meta.task"
    assert (submission.status, submission.total) == (Status.DONE, 2)
    status = api.get(f"/api/submissions/{submission.pk}/").json()
    assert status["case_field"] == "meta.task"
    # Read again (as after a lost worker), it is read the same way.
    Submission.objects.filter(pk=submission.pk).update(status=Status.INGESTING)
    with TestCase.captureOnCommitCallbacks(execute=True):
        ingest_submission.apply(args=(submission.pk,), retries=1)  # takes over at once
    submission.refresh_from_db()
    assert (submission.generation, submission.total) == (2, 2)
    assert list(submission.runs.values_list("case_key", flat=True)) == ["greeting"] * 2


def test_a_malformed_case_field_is_a_400_naming_the_parameter(api, team, user):
    suite = services.create_suite(team, DEMO, user)
    response = api.post(
        f"/api/suites/{suite.pk}/submissions/?case_field=a..b",
        data=b"{}",
        content_type="application/x-ndjson",
    )
    assert response.status_code == 400
    assert "case_field" in response.json()
    assert not Submission.objects.exists()


def test_lines_without_case_fail_with_the_case_field_to_add_and_are_never_the_last_result(
    api, task_id_suite, user
):
    real = post(api, task_id_suite, tau_bench.RESULTS_FILE.read_bytes(), "?label=real")
    lines = [{"task_id": r["task_id"], "messages": r["traj"]} for r in tau_bench.RECORDS]
    junk = post(api, task_id_suite, jsonl(lines), "?label=junk")
    assert junk.status == Status.FAILED
    assert junk.error == (
        "This is a file of 200 JSON lines: the lines have `task_id` and `messages` but no"
        " `case`: add ?case_field=task_id to the upload (the form's Case field), or add `case`"
        " to each."
    )
    status = api.get(f"/api/submissions/{junk.pk}/").json()
    assert (status["status"], status["error"], status["invalid"]) == ("failed", junk.error, 200)
    (listed,) = with_last_result(listed_suites(user))
    assert (listed.last_submission, listed.last_label) == (real.pk, "real")
    fixed = post(api, task_id_suite, jsonl(lines), "?label=fixed&case_field=task_id")
    assert (fixed.status, fixed.total) == (Status.DONE, 200)


def test_a_pretty_printed_object_fails_saying_it_is_not_json_lines(api, team, user):
    suite = services.create_suite(team, DEMO, user)
    body = json.dumps({"case": "greeting", "batches": []}, indent=2).encode()
    submission = post(api, suite, body)
    assert submission.status == Status.FAILED
    assert submission.error.startswith(
        "This is a pretty-printed JSON object (its keys: case, batches), not JSON lines"
    )


def test_retrying_a_diagnosed_submission_reads_its_file_again(api, team, user):
    suite = services.create_suite(team, DEMO, user)
    submission = upload(suite, b"oops\n")
    assert submission.status == Status.FAILED
    with TestCase.captureOnCommitCallbacks(execute=True):
        pipeline.retry(submission)
    submission.refresh_from_db()
    assert submission.status == Status.FAILED
    assert submission.error.startswith("This is not JSON lines")
    assert submission.invalid == 1  # read again, not added to the first reading
