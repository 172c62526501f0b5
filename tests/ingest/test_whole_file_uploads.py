"""Whole files uploaded on the suite's upload page (docs/review.md#upload-page): τ-bench's
results and Inspect ``.eval`` archives as they are, the Case field, and a file that gives no
valid run: failed with its diagnosis, never the suite's last result, and shown apart."""

from __future__ import annotations

import pytest

from cases import services
from scoring.models import Status, Submission
from tests.support import tau_bench
from tests.support.inspect_data import INSPECT, INSPECT_SUITE
from tests.support.pages import HX, escaped, jsonl, text, upload
from tests.support.runs import GREETING_PASS, TRIALS

pytestmark = pytest.mark.django_db

# The τ-bench results turned into lines, naming the case as task_id: what a user tried.
TASK_LINES = [{"task_id": r["task_id"], "messages": r["traj"]} for r in tau_bench.RECORDS[:8]]


def post_upload(client, suite, name, content, run_tasks, **fields):
    with run_tasks():
        return client.post(
            f"/suites/{suite.pk}/upload/", {"file": upload(name, content), **fields}, headers=HX
        )


def test_the_upload_form_has_a_case_field_and_says_what_files_it_takes(as_user, editor, suite):
    html = text(as_user(editor).get(f"/suites/{suite.pk}/upload/"))
    assert '<label for="id_case_field">Case field</label>' in html
    assert "a JSON array of runs (τ-bench&#x27;s results)" in html
    assert "Inspect AI log (.json or .eval)" in html


def test_the_tau_bench_results_file_uploads_as_it_is(as_user, editor, team, admin, run_tasks):
    suite = services.create_suite(team, tau_bench.suite_document(prefix=""), admin)
    body = tau_bench.RESULTS_FILE.read_bytes()
    response = post_upload(as_user(editor), suite, "results.json", body, run_tasks)
    assert response.status_code == 200
    submission = Submission.objects.get()
    assert (submission.status, submission.total, submission.invalid) == (Status.DONE, 200, 0)
    assert (submission.passed, submission.failed) == (tau_bench.PASSED, tau_bench.FAILED)


def test_an_inspect_eval_archive_uploads_as_it_is(as_user, editor, team, admin, run_tasks):
    suite = services.create_suite(team, INSPECT_SUITE, admin)
    body = (INSPECT / "tools.eval").read_bytes()
    post_upload(as_user(editor), suite, "tools.eval", body, run_tasks)
    submission = Submission.objects.get()
    assert (submission.status, submission.total, submission.passed) == (Status.DONE, 6, 4)
    html = text(as_user(editor).get(f"/submissions/{submission.pk}/"))
    assert "crash" in html


def test_the_case_field_maps_the_case_and_is_kept_on_the_submission(
    as_user, editor, suite, run_tasks
):
    lines = [{"task_id": "greeting", "batches": [], "final_text": "Hello!"}] * 3
    post_upload(as_user(editor), suite, "runs.jsonl", jsonl(lines), run_tasks, case_field="task_id")
    submission = Submission.objects.get()
    assert (submission.case_field, submission.status, submission.passed) == (
        "task_id",
        Status.DONE,
        3,
    )


def test_a_malformed_case_field_comes_back_beside_the_field(as_user, editor, suite):
    response = as_user(editor).post(
        f"/suites/{suite.pk}/upload/",
        {"file": upload("r.jsonl", jsonl(TRIALS)), "case_field": "meta..case"},
    )
    assert response.status_code == 422
    html = text(response)
    assert escaped("'meta..case' is not a dotted path with [n] indexes") in html
    assert not Submission.objects.exists()


def test_a_file_with_no_valid_run_fails_with_its_diagnosis_and_is_never_the_last_result(
    as_user, editor, viewer, suite, submit, run_tasks
):
    real = submit(suite, [GREETING_PASS], label="real")
    post_upload(as_user(editor), suite, "tasks.jsonl", jsonl(TASK_LINES), run_tasks, label="junk")
    junk = Submission.objects.get(label="junk")
    assert junk.status == Status.FAILED
    diagnosis = (
        "This is a file of 8 JSON lines: the lines have `task_id` and `messages` but no"
        " `case`: add ?case_field=task_id to the upload (the form&#x27;s Case field), or add"
        " `case` to each."
    )
    client = as_user(viewer)
    assert diagnosis in text(client.get(f"/submissions/{junk.pk}/"))

    library = text(client.get("/"))
    assert f'<a href="/submissions/{real.pk}/" title="real">100% pass</a>' in library
    assert f"/submissions/{junk.pk}/" not in library

    suite_page = text(client.get(f"/suites/{suite.pk}/"))
    junk_row = suite_page[suite_page.index('<tr class="no-result">') :]
    junk_row = junk_row[: junk_row.index("</tr>")]
    assert f"/submissions/{junk.pk}/" in junk_row
    assert '<span class="status failed">failed</span>' in junk_row
    assert "This is a file of 8 JSON lines" in junk_row
    real_row = suite_page[suite_page.index(f'href="/submissions/{real.pk}/"') :]
    assert "no-result" not in real_row[: real_row.index("</tr>")]


def test_a_failed_submission_cannot_be_compared(as_user, editor, suite, submit, run_tasks):
    real = submit(suite, [GREETING_PASS], label="real")
    post_upload(as_user(editor), suite, "x.jsonl", b"oops\n", run_tasks, label="junk")
    junk = Submission.objects.get(label="junk")
    html = text(
        as_user(editor).get(f"/suites/{suite.pk}/compare/?baseline={real.pk}&candidate={junk.pk}")
    )
    assert "It failed, and has no result to compare." in html
