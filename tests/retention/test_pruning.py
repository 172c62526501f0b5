"""Retention (docs/operations.md#retention): which runs expire, what pruning removes and
keeps, the note of reviewed runs, the bound on each transaction, and the pages afterwards."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from cases.models import ReviewLabel
from scoring.ingest import pipeline
from scoring.models import (
    CaseSummary,
    FailureSummary,
    PredicateResult,
    PrunedRuns,
    Result,
    Review,
    ReviewEvent,
    Run,
    Submission,
    Trace,
    TraceSpan,
    UploadChunk,
)
from scoring.retention import pruning, tasks
from scoring.review import decisions
from tests.support.commands import DEMO_RUNS
from tests.support.pages import text

LINES = DEMO_RUNS.read_text().splitlines()


def aged(submission: Submission, days: int, *, live: bool) -> Submission:
    """The submission as if made ``days`` ago; a live one as that day's live submission."""
    when = timezone.now() - timedelta(days=days)
    Submission.objects.filter(pk=submission.pk).update(
        created=when, live_day=when.date() if live else None
    )
    submission.refresh_from_db()
    return submission


@pytest.fixture
def scored(suite, submit):
    """``scored(days, live=True)``: a scored submission of the demo runs, that old."""

    def make(days: int, *, live: bool = True) -> Submission:
        return aged(submit(suite, LINES, label=f"{days} days"), days, live=live)

    return make


def test_live_runs_expire_after_the_suites_days_and_uploads_are_kept_forever(suite, scored):
    old_live, new_live, old_upload = scored(31), scored(29), scored(400, live=False)
    plan = pruning.expired()
    assert [each.submission.pk for each in plan.submissions] == [old_live.pk]
    assert plan.submissions[0].runs == len(LINES)
    suite.upload_retention_days = 365
    suite.live_retention_days = None
    suite.save()
    assert [each.submission.pk for each in pruning.expired().submissions] == [old_upload.pk]
    assert new_live.pk not in {each.submission.pk for each in pruning.expired().submissions}


def test_an_unfinished_upload_is_not_expired(suite, scored):
    upload = scored(10, live=False)
    Submission.objects.filter(pk=upload.pk).update(status="scoring")
    suite.upload_retention_days = 1
    suite.save()
    assert pruning.expired().submissions == []


def test_dry_run_says_what_would_go_and_removes_nothing(scored):
    old = scored(40)
    out = io.StringIO()
    call_command("prune", "--dry-run", stdout=out)
    assert f"submission #{old.pk}" in out.getvalue()
    assert f"would remove 1 submissions' runs: {len(LINES)} runs" in out.getvalue()
    assert Run.objects.filter(submission=old).count() == len(LINES)
    assert Submission.objects.get(pk=old.pk).runs_pruned is None


def test_pruning_removes_runs_and_file_and_keeps_counts_and_summaries(scored):
    old, kept = scored(40), scored(1)
    counts = (old.total, old.scored, old.passed, old.failed, old.errored, old.stored_runs)
    summaries = (
        FailureSummary.objects.filter(submission=old).count(),
        CaseSummary.objects.filter(submission=old).count(),
    )
    assert summaries[1]
    assert UploadChunk.objects.filter(submission=old).exists()
    out = io.StringIO()
    call_command("prune", stdout=out)
    assert f"removed 1 submissions' runs: {len(LINES)} runs" in out.getvalue()
    old.refresh_from_db()
    assert (old.total, old.scored, old.passed, old.failed, old.errored, old.stored_runs) == counts
    assert old.runs_pruned is not None
    assert old.retention_days == 30
    assert summaries == (
        FailureSummary.objects.filter(submission=old).count(),
        CaseSummary.objects.filter(submission=old).count(),
    )
    for model in (Run, Result, PredicateResult, UploadChunk):
        assert not model.objects.filter(submission=old).exists(), model
    assert Run.objects.filter(submission=kept).count() == len(LINES)
    assert PredicateResult.objects.filter(submission=kept).exists()


def test_the_daily_task_is_idempotent(scored):
    scored(40)
    assert tasks.prune_expired_runs.delay().get() > 0
    assert tasks.prune_expired_runs.delay().get() == 0


def test_no_transaction_deletes_more_than_the_batch(scored, monkeypatch):
    old = scored(40)
    rows_by_transaction: dict[str, int] = {}
    delete_ids = pruning._delete_ids

    def counted(model, ids):
        deleted = delete_ids(model, ids)
        # Inside the test's own transaction each batch is a savepoint of its own.
        savepoint = connection.savepoint_ids[-1]
        rows_by_transaction[savepoint] = rows_by_transaction.get(savepoint, 0) + deleted
        return deleted

    monkeypatch.setattr(pruning, "_delete_ids", counted)
    stored = PredicateResult.objects.filter(submission=old).count() + 2 * len(LINES)
    done = pruning.prune(batch=7)
    assert max(rows_by_transaction.values()) <= 7
    assert sum(rows_by_transaction.values()) == done.rows >= stored
    assert len(rows_by_transaction) >= stored // 7
    assert not Run.objects.filter(submission=old).exists()


def test_reviewed_runs_are_removed_with_a_note_on_the_suites_page(
    suite, scored, editor, as_user, viewer
):
    old = scored(40)
    failing = old.runs.exclude(result__verdict="pass")
    first, second = failing[:2]
    label = ReviewLabel.objects.create(team=suite.team, name="wrong tool")
    decisions.set_status(Run.objects.filter(pk=first.pk), "expectation_wrong", editor)
    decisions.comment(second, "looks flaky to me", editor)
    decisions.add_label(Run.objects.filter(pk=second.pk), label, editor)
    assigned_only = old.runs.exclude(pk__in=[first.pk, second.pk]).first()
    decisions.assign(Run.objects.filter(pk=assigned_only.pk), editor, editor)
    pruning.prune()
    note = PrunedRuns.objects.get(suite=suite)
    assert note.submission_id == old.pk
    assert note.reviewed_runs == 2
    assert note.lost["statuses"] == {"expectation_wrong": 1}
    assert note.lost["comments"] == 1
    assert note.lost["labels"] == {"wrong tool": 1}
    assert not Review.objects.filter(submission=old).exists()
    assert not ReviewEvent.objects.filter(run__submission=old).exists()
    html = text(as_user(viewer).get(suite.get_absolute_url()))
    assert "retention removed 2 reviewed runs of" in html
    assert "1 expectation wrong; 1 comment; labels wrong tool (1)" in html


def test_nothing_reviewed_leaves_no_note(suite, scored):
    scored(40)
    pruning.prune()
    assert not PrunedRuns.objects.exists()


def test_pages_of_a_pruned_submission_say_so(suite, scored, as_user, viewer):
    old, new = scored(40), scored(1)
    run = old.runs.first()
    pruning.prune()
    client = as_user(viewer)
    page = text(client.get(old.get_absolute_url()))
    assert "Runs removed after 30 days by retention" in page
    missing = client.get(f"/submissions/{old.pk}/runs/{run.pk}/")
    assert missing.status_code == 404
    assert "removed by retention" in text(missing)
    compared = client.get(f"/suites/{suite.pk}/compare/?baseline={old.pk}&candidate={new.pk}")
    assert compared.status_code == 200
    assert client.get(f"/suites/{suite.pk}/flaky/").status_code == 200
    assert "runs removed by retention" in text(client.get(suite.get_absolute_url()))


def test_a_pruned_submission_cannot_be_rescored(scored):
    old = scored(40)
    pruning.prune()
    with pytest.raises(pipeline.NotReady, match="retention"):
        pipeline.rescore(old, old.version)


def test_traces_of_pruned_runs_and_old_orphan_traces_go(suite, scored):
    old = scored(40)
    long_ago = timezone.now() - timedelta(days=40)

    def trace(trace_id, run=None, received=long_ago, pending=False):
        made = Trace.objects.create(
            suite=suite, trace_id=trace_id, run=run, received=received, pending=pending
        )
        TraceSpan.objects.create(trace=made, span_hex="ab", start=1, data=b"x")
        return made

    trace("a" * 32, run=old.runs.first())
    trace("b" * 32)  # made no run, long ago
    recent = trace("c" * 32, received=timezone.now())
    pending = trace("d" * 32, pending=True)
    assert pruning.expired().orphan_traces == 1
    pruning.prune()
    assert set(Trace.objects.values_list("pk", flat=True)) == {recent.pk, pending.pk}
    assert TraceSpan.objects.count() == 2


def test_only_editors_change_retention(suite, as_user, editor, viewer):
    url = f"/suites/{suite.pk}/settings/"
    assert as_user(viewer).get(url).status_code in (403, 404)
    form = {
        "name": suite.name,
        "visibility": suite.visibility,
        "live_retention_days": "7",
        "upload_retention_days": "",
    }
    assert as_user(viewer).post(url, form).status_code in (403, 404)
    suite.refresh_from_db()
    assert suite.live_retention_days == 30
    assert as_user(editor).post(url, form).status_code == 302
    suite.refresh_from_db()
    assert (suite.live_retention_days, suite.upload_retention_days) == (7, None)
    refused = as_user(editor).post(url, form | {"live_retention_days": "0"})
    assert "greater than or equal to 1" in text(refused)
    refused = as_user(editor).post(url, form | {"live_retention_days": "36501"})
    assert "less than or equal to 36500" in text(refused)


def test_the_api_changes_retention_validated(suite, as_user, editor, viewer):
    url = f"/api/suites/{suite.pk}/"
    body = {"name": suite.name, "upload_retention_days": 90, "live_retention_days": None}
    refused = as_user(viewer).patch(url, body, content_type="application/json")
    assert refused.status_code in (403, 404)
    answer = as_user(editor).patch(url, body, content_type="application/json")
    assert answer.status_code == 200, answer.content
    suite.refresh_from_db()
    assert (suite.live_retention_days, suite.upload_retention_days) == (None, 90)
    for days in (0, 36_501, 2**41):  # past a century, PostgreSQL's integer and the dates
        bad = as_user(editor).patch(
            url, {"upload_retention_days": days}, content_type="application/json"
        )
        assert bad.status_code == 400
        assert "upload_retention_days" in bad.json()
    assert as_user(editor).get(url).json()["upload_retention_days"] == 90


def test_a_prune_that_finishes_anothers_work_notes_its_reviewed_runs_once(
    scored, editor, monkeypatch
):
    old = scored(40)
    two = list(old.runs.values_list("pk", flat=True)[:2])
    decisions.set_status(Run.objects.filter(pk__in=two), "flaky", editor)
    with monkeypatch.context() as cut_short:  # marked and noted, nothing deleted yet
        cut_short.setattr(pruning, "_delete_runs", lambda *args: None)
        pruning.prune()
    assert [each.submission.pk for each in pruning.expired().submissions] == [old.pk]
    pruning.prune()
    assert list(PrunedRuns.objects.values_list("reviewed_runs", flat=True)) == [2]
    assert not Run.objects.filter(submission=old).exists()
    assert pruning.expired().submissions == []


def test_a_day_of_retention_is_one_day_and_the_notes_cases_are_in_natural_order(
    suite, submit, editor, as_user, viewer
):
    suite.live_retention_days = 1
    suite.save()
    lines = [{"case": key, "batches": []} for key in ("10", "3", "25", "4", "0")]
    old = aged(submit(suite, lines), 3, live=True)
    decisions.set_status(old.runs.all(), "flaky", editor)
    run = old.runs.first()
    out = io.StringIO()
    call_command("prune", stdout=out)
    assert "1 day)" in out.getvalue()
    assert "1 days" not in out.getvalue()
    note = PrunedRuns.objects.get(suite=suite)
    assert note.lost["case_keys"] == ["0", "3", "4", "10", "25"]
    client = as_user(viewer)
    assert "Cases: 0, 3, 4, 10, 25." in text(client.get(suite.get_absolute_url()))
    missing = text(client.get(f"/submissions/{old.pk}/runs/{run.pk}/"))
    assert "keeps runs for 1 day." in missing
    assert "1 days" not in missing
    page = text(client.get(old.get_absolute_url()))
    assert "Runs removed after 1 day by retention" in page


def test_saving_only_the_retention_says_the_version_did_not_change(suite, as_user, editor):
    from cases.forms import SuiteSettingsForm

    url = f"/suites/{suite.pk}/settings/"
    # the settings as they are, posted as the form shows them (unticked boxes left out)
    initial = SuiteSettingsForm.initial_of(suite)
    form = {k: ("" if v is None else v) for k, v in initial.items() if v is not False}
    client = as_user(editor)
    page = text(client.post(url, form | {"live_retention_days": "7"}, follow=True))
    assert "The suite file did not change: it is still version 1." in page
    assert "as a new version" not in page
    assert suite.versions.count() == 1
    renamed = text(
        client.post(url, form | {"name": "renamed", "live_retention_days": "7"}, follow=True)
    )
    assert "Settings saved as version 2." in renamed
