"""The upload in a real browser: an editor uploads an OpenAI-format file of thousands of real
runs (τ-bench airline, tests/fixtures/tau_bench), lands on its results with pass@k, filters the
runs to the failures and reads one; a file dropped on the drop zone is the one uploaded; and
the page of a submission still being scored follows its progress by itself, then shows the
results once it is done.

The live server runs the scoring tasks in the request (Celery is eager without REDIS_URL), so
an upload answers once it is scored. The progress test therefore moves the counts from the
test itself, as a worker would."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.db.models import Count
from django.utils import timezone

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import Result, Status, Submission, Verdict
from tests.support import tau_bench

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

COPIES = 15  # of the 200 runs (50 tasks, 4 trials each): 3,000 runs, 60 trials a task


@pytest.fixture
def suite(user):
    team = Team.objects.create(name="Airline", slug="airline")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return services.create_suite(team, tau_bench.suite_document(), user)


def counts(page) -> dict[str, str]:
    """The counts in the progress box, by name."""
    box = page.locator("#progress")
    names = box.locator("dt").all_inner_texts()
    return dict(zip(names, box.locator("dd").all_inner_texts(), strict=True))


def drop_file(page, name: str, content: str) -> None:
    """Drop a file on the drop zone, as a user dragging it from their desktop would."""
    page.locator(".dropzone").evaluate(
        """(zone, [name, content]) => {
            const data = new DataTransfer();
            data.items.add(new File([content], name, { type: "application/jsonl" }));
            const init = { dataTransfer: data, bubbles: true, cancelable: true };
            for (const type of ["dragenter", "dragover", "drop"]) {
                zone.dispatchEvent(new DragEvent(type, init));
            }
        }""",
        [name, content],
    )


def test_an_editor_uploads_thousands_of_runs_and_reads_the_results(
    page, live_server, user, password, suite, tmp_path
):
    run_file = tmp_path / "gpt-4o-airline.jsonl"
    run_file.write_bytes(tau_bench.run_file(copies=COPIES))
    sign_in(page, live_server, user.username, password)
    page.get_by_role("link", name="tau-bench airline").click()
    page.get_by_role("link", name="Upload runs").click()
    assert "to be scored against version 1" in page.locator(".pagehead").inner_text()

    page.get_by_label("Drop a run file here").set_input_files(run_file)
    size = f"{run_file.stat().st_size / 1048576:.1f} MB"
    page.get_by_text(f"gpt-4o-airline.jsonl ({size})").wait_for()
    page.get_by_label("Label").fill("gpt-4o, τ-bench airline")
    page.get_by_role("button", name="Upload and score").click()
    # The bytes go up with a progress bar; then the server reads and scores them.
    page.get_by_text("Uploaded. Reading the file").wait_for(timeout=60_000)
    assert page.locator(".upload-progress").get_attribute("value") == "100"
    assert page.get_by_role("button", name="Upload and score").is_disabled()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"), timeout=180_000)

    submission = Submission.objects.get()
    passed = Result.objects.filter(submission=submission, verdict=Verdict.PASS).count()
    assert (submission.status, submission.total, submission.formats_seen) == (
        Status.DONE,
        3000,
        ["openai_chat"],
    )
    page.get_by_role("heading", name="gpt-4o, τ-bench airline").wait_for()
    shown = counts(page)
    assert (shown["Runs"], shown["Scored"], shown["Invalid lines"]) == ("3000", "3000", "0")
    assert shown["Passed"] == str(passed)
    assert shown["Pass rate"] == f"{100 * passed / 3000:.1f}".removesuffix(".0") + "%"

    trials = page.locator("section.card", has_text="Trials: pass@k and pass^k")
    rows = trials.locator("table").first.locator("tbody tr")
    ks = [row.locator("td").first.inner_text() for row in rows.all()]
    assert ks == ["1", "2", "3", "4", "5", "8", "16", "32", "60"]
    pass_at_1 = float(rows.first.locator("td").nth(1).inner_text())
    per_task = Result.objects.filter(submission=submission).values("run__case_key")
    per_task = per_task.annotate(n=Count("pk"))
    assert {row["n"] for row in per_task} == {60}  # so pass@1 is the pass rate
    assert pass_at_1 == pytest.approx(passed / 3000, abs=0.0005)

    # Only the failures, without leaving the page.
    page.get_by_label("Verdict").select_option("fail")
    page.wait_for_url(re.compile(r"verdict=fail"))
    page.get_by_text(f"{3000 - passed} runs match").wait_for()
    verdicts = page.locator("#runs tbody td span.verdict").all_inner_texts()
    assert len(verdicts) == 50
    assert set(verdicts) == {"fail"}
    assert page.get_by_role("heading", name="Trials: pass@k and pass^k").is_visible()

    first = page.locator("#runs tbody tr").first
    case_key = first.locator("code.case-key").inner_text()
    first.get_by_role("link", name=case_key).click()
    page.wait_for_url(re.compile(r"/runs/\d+/\?verdict=fail$"))  # the filter is kept
    page.get_by_role("heading", name="Verdict").wait_for()
    assert page.locator(".report .verdict.fail").count() == 1
    failing = page.locator("li.predicate.fail")
    assert failing.count() >= 1
    assert failing.first.locator(".detail").inner_text().strip()
    page.get_by_role("heading", name="Conversation").wait_for()  # OpenAI's messages, read
    assert page.locator(".turn.user").count() >= 1
    assert page.locator(".tl-call.recorded").count() >= 1
    assert page.locator("nav.trials a").count() == 59  # the case's other trials


def test_a_file_dropped_on_the_drop_zone_is_the_one_uploaded(
    page, live_server, user, password, suite
):
    lines = [
        json.dumps({"case": f"task-{r['task_id']}", "trial": r["trial"], "messages": r["traj"]})
        for r in tau_bench.RECORDS[:8]
    ]
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/suites/{suite.pk}/upload/")
    drop_file(page, "dropped.jsonl", "\n".join(lines) + "\nnot json\n")
    page.get_by_text("dropped.jsonl (").wait_for()
    assert page.get_by_label("Drop a run file here").evaluate("input => input.files[0].name") == (
        "dropped.jsonl"
    )
    page.get_by_role("button", name="Upload and score").click()
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    assert counts(page)["Runs"] == "8"
    assert counts(page)["Invalid lines"] == "1"
    invalid = page.locator("section.card", has_text="Invalid lines")
    assert "not JSON" in invalid.locator("tbody tr").first.inner_text()
    assert Submission.objects.get().filename == "dropped.jsonl"


def test_an_upload_without_a_file_shows_the_error_in_place(
    page, live_server, user, password, suite
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/suites/{suite.pk}/upload/")
    page.get_by_label("Drop a run file here").evaluate("input => input.removeAttribute('required')")
    page.get_by_label("Label").fill("nothing")
    page.get_by_role("button", name="Upload and score").click()
    page.locator(".upload-form .field-error", has_text="This field is required.").wait_for()
    assert page.url.endswith("/upload/")
    assert page.get_by_label("Label").input_value() == "nothing"


def test_the_submission_page_follows_scoring_and_shows_the_results_when_done(
    page, live_server, user, password, suite
):
    submission = create_submission(suite, user, io.BytesIO(tau_bench.run_file()), label="in flight")
    submission.refresh_from_db()  # read and scored in this process (the tasks are eager)
    final = {name: getattr(submission, name) for name in ("scored", "passed", "failed", "errored")}
    assert final["scored"] == 200

    def move(**fields):
        Submission.objects.filter(pk=submission.pk).update(heartbeat=timezone.now(), **fields)

    move(status=Status.SCORING, scored=40, passed=10, failed=30, errored=0, scoring_finished=None)
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/submissions/{submission.pk}/")
    page.get_by_text("40 of 200 runs scored.").wait_for()
    assert page.get_by_role("heading", name="Trials: pass@k and pass^k").count() == 0
    navigations = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))

    move(scored=120, passed=30, failed=90)
    page.get_by_text("120 of 200 runs scored.").wait_for()
    assert counts(page)["Failed"] == "90"
    assert float(page.locator("#progress progress").get_attribute("value")) == 0.6
    assert navigations == []  # the box was swapped in place

    move(status=Status.DONE, scoring_finished=timezone.now(), **final)
    page.get_by_role("heading", name="Trials: pass@k and pass^k").wait_for()
    page.get_by_text("200 runs scored").wait_for()
    assert counts(page)["Passed"] == str(final["passed"])
    assert navigations  # reloaded by the server's HX-Refresh, not by the test
    assert page.locator("#progress[hx-trigger]").count() == 0
