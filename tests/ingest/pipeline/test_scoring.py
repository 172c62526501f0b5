"""Scoring, re-scoring, resuming and deleting submissions (docs/pipeline.md), in this process:
a chunk counts once however often it runs, a task of an older generation does nothing, and the
sweep finishes what a lost worker or broker left without counting twice."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.test import TestCase
from django.utils import timezone

from cases import services
from cases.models import SuiteVersion
from scoring.ingest import chunks, reading, sending, store, tasks
from scoring.ingest.pipeline import (
    NotReady,
    create_submission,
    delete_submission,
    rescore,
    resume_stalled,
    retry,
)
from scoring.matcher import CAUSE_KINDS
from scoring.models import (
    InvalidLine,
    PredicateResult,
    ReadRange,
    Result,
    Run,
    ScoredChunk,
    Status,
    Submission,
    UploadChunk,
)
from tests.support import tau_bench

from .conftest import DEMO, DEMO_RUNS, assert_consistent, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_chunks(settings):
    """Two runs per scoring chunk: the demo file's seven runs make four chunks."""
    settings.CASEBOOK_CHUNK_RUNS = 2


def counts(submission) -> tuple[int, int, int, int]:
    submission.refresh_from_db()
    return submission.scored, submission.passed, submission.failed, submission.errored


def stall(submission) -> None:
    """Make the submission, and the ranges of its file, look as if nothing had happened to
    them for an hour."""
    an_hour_ago = timezone.now() - timedelta(hours=1)
    Submission.objects.filter(pk=submission.pk).update(heartbeat=an_hour_ago)
    ReadRange.objects.filter(submission=submission).update(heartbeat=an_hour_ago)


def uploaded_not_ingested(suite, data: bytes = DEMO_RUNS) -> tuple[Submission, list]:
    """A submission whose ingestion was enqueued but never ran (the sends are returned)."""
    with TestCase.captureOnCommitCallbacks() as sends:
        submission = create_submission(suite, None, io.BytesIO(data))
    return submission, sends


def ingested_not_scored(suite, data: bytes = DEMO_RUNS) -> tuple[Submission, list]:
    """A submission whose file was read but whose chunks were never scored (their sends
    are returned, in chunk order)."""
    submission, (send_ingest,) = uploaded_not_ingested(suite, data)
    with TestCase.captureOnCommitCallbacks() as planned:
        send_ingest()  # the file's one range planned, and sent
    with TestCase.captureOnCommitCallbacks() as sends:
        (send_range,) = planned
        send_range()
    submission.refresh_from_db()
    assert submission.status == Status.SCORING
    return submission, sends


class Killed(BaseException):
    """A worker process dying mid-task: nothing of the task's code runs after it."""


# --- a chunk scored twice, and generations ----------------------------------------------------


def test_a_chunk_scored_twice_counts_once(demo_suite, small_chunks):
    submission = upload(demo_suite, DEMO_RUNS)
    assert_consistent(submission)
    assert submission.chunk_count == 4
    before = counts(submission)
    assert before == (7, 4, 3, 0)
    results = Result.objects.filter(submission=submission)
    first_scored = dict(results.values_list("run_id", "scored_at"))

    for _ in range(2):
        chunks.score_chunk(submission.pk, submission.generation, 1)
        chunks.score_chunk(submission.pk, submission.generation, 3)

    assert counts(submission) == before
    assert_consistent(submission)
    rescored = dict(results.values_list("run_id", "scored_at"))
    assert rescored.keys() == first_scored.keys()
    runs_of_chunk_1 = set(
        Run.objects.filter(submission=submission, seq__in=[3, 4]).values_list("pk", flat=True)
    )
    assert {pk for pk in rescored if rescored[pk] != first_scored[pk]} == runs_of_chunk_1 | set(
        Run.objects.filter(submission=submission, seq=7).values_list("pk", flat=True)
    )


def test_a_chunk_past_the_end_scores_nothing(demo_suite):
    submission = upload(demo_suite, DEMO_RUNS)
    chunks.score_chunk(submission.pk, submission.generation, 5)
    assert counts(submission) == (7, 4, 3, 0)
    assert submission.status == Status.DONE


def test_re_scoring_against_another_version_replaces_every_result(demo_suite, user):
    submission = upload(demo_suite, DEMO_RUNS)
    first_version, old_generation = submission.version, submission.generation
    assert counts(submission) == (7, 4, 3, 0)
    old_results = set(Result.objects.filter(submission=submission).values_list("pk", "verdict"))

    greeting = demo_suite.cases.get(key="greeting")
    document = services.case_document(greeting)
    document["expectations"] = [{"type": "final_text_contains", "text": "Goodbye"}]
    second_version = services.save_case(demo_suite, document, user, case=greeting).version
    with TestCase.captureOnCommitCallbacks(execute=True):
        rescore(submission, second_version)

    assert_consistent(submission)
    assert submission.version == second_version
    assert submission.generation == old_generation + 1
    assert counts(submission) == (7, 3, 4, 0)
    results = Result.objects.filter(submission=submission)
    assert results.get(run__case_key="greeting").verdict == "fail"
    assert set(results.values_list("pk", "verdict")) != old_results
    labels = set(PredicateResult.objects.filter(submission=submission).values_list("label"))
    assert ('final text contains "Goodbye"',) in labels
    assert not any("hello|hi" in label for (label,) in labels)  # the old regex's predicate
    assert set(ScoredChunk.objects.filter(submission=submission).values_list("generation")) == {
        (submission.generation,)
    }

    # A task sent for the older generation, delivered late, changes nothing.
    chunks.score_chunk(submission.pk, old_generation, 0)
    assert counts(submission) == (7, 3, 4, 0)
    assert_consistent(submission)

    with TestCase.captureOnCommitCallbacks(execute=True):
        rescore(submission, first_version)
    assert counts(submission) == (7, 4, 3, 0)
    assert_consistent(submission)


def test_re_scoring_while_the_file_is_read_or_against_another_suite_is_refused(
    demo_suite, team, user
):
    waiting, _ = uploaded_not_ingested(demo_suite)
    with pytest.raises(NotReady, match="still reading"):
        rescore(waiting, demo_suite.latest_version)

    other = services.create_suite(team, {**DEMO, "name": "other"}, user)
    done = upload(demo_suite, DEMO_RUNS)
    with pytest.raises(NotReady, match="another suite"):
        rescore(done, other.latest_version)
    assert done.version == demo_suite.latest_version


def test_a_version_that_cannot_evaluate_a_case_scores_its_runs_as_errors(demo_suite, user):
    """An older version may hold a pattern RE2 refuses: the runs reaching it are errors."""
    version = demo_suite.latest_version
    broken = version.document
    broken["cases"][3]["expectations"][1]["regex"] = "(?<=x)hello"
    copy = SuiteVersion.objects.create(suite=demo_suite, number=9, document=broken, author=user)
    submission = upload(demo_suite, DEMO_RUNS)
    with TestCase.captureOnCommitCallbacks(execute=True):
        rescore(submission, copy)
    assert counts(submission) == (7, 3, 3, 1)
    assert_consistent(submission)
    error = Result.objects.get(submission=submission, verdict="error").report
    assert error["case"] == "greeting"
    assert "RE2 cannot compile" in error["error"]


# --- resuming ---------------------------------------------------------------------------------


def test_the_sweep_enqueues_only_the_chunks_not_scored(demo_suite, small_chunks):
    submission, sends = ingested_not_scored(demo_suite)
    assert len(sends) == 4
    sends[1]()  # one chunk scored; the messages of the three others were lost
    assert counts(submission) == (2, 1, 1, 0)

    assert resume_stalled() == []  # it made progress just now
    stall(submission)
    with TestCase.captureOnCommitCallbacks() as resent:
        assert resume_stalled() == [submission.pk]
    assert len(resent) == 3
    for send in resent:
        send()

    assert_consistent(submission)
    assert counts(submission) == (7, 4, 3, 0)
    stall(submission)
    assert resume_stalled() == []  # done: nothing to resume


def test_the_sweep_starts_an_ingestion_that_never_ran(demo_suite):
    submission, _ = uploaded_not_ingested(demo_suite)  # the broker never got the message
    stall(submission)
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert resume_stalled() == [submission.pk]
    assert_consistent(submission)
    assert counts(submission) == (7, 4, 3, 0)


def test_a_stalled_range_is_read_again_from_its_start_and_counts_each_run_once(
    demo_suite, small_chunks, monkeypatch
):
    data = tau_bench.run_file(tau_bench.RECORDS[:7]) + DEMO_RUNS + b"oops\n"
    submission, (send_ingest,) = uploaded_not_ingested(demo_suite, data)
    with TestCase.captureOnCommitCallbacks() as planned:
        send_ingest()  # the file's one range planned, and sent
    (send_ingest,) = planned

    add = reading._Batch.add
    read = []

    def dies_on_the_ninth_line(batch, item):
        if len(read) == 8:
            raise Killed
        read.append(item.line)
        add(batch, item)

    monkeypatch.setattr(reading._Batch, "add", dies_on_the_ninth_line)
    with TestCase.captureOnCommitCallbacks() as stray, pytest.raises(Killed):
        send_ingest()
    monkeypatch.setattr(reading._Batch, "add", add)
    submission.refresh_from_db()
    assert submission.status == Status.INGESTING
    assert submission.stored_runs == 8  # four chunks written before the worker died
    assert len(stray) == 4
    stray[0]()  # two of them scored: seven runs of no case in the suite (task-N) ...
    stray[3]()  # ... and the demo's first
    assert counts(submission) == (1, 1, 0, 0)
    stale_generation = submission.generation

    with TestCase.captureOnCommitCallbacks(execute=True):
        assert resume_stalled() == []  # the heartbeat is fresh: it might still be running
    stall(submission)
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert resume_stalled() == [submission.pk]
    stray[1]()  # the lost attempt's other messages arrive after all
    stray[2]()

    assert_consistent(submission)
    assert submission.generation == stale_generation  # the range read again, not the file
    assert submission.stored_runs == 14
    assert submission.invalid == 1
    assert InvalidLine.objects.filter(submission=submission).count() == 1
    assert counts(submission) == (7, 4, 3, 0)
    assert submission.unknown_cases["task-0"]["runs"] == 1


def test_an_ingestion_claimed_by_a_live_attempt_is_not_started_twice(demo_suite):
    submission, _ = uploaded_not_ingested(demo_suite)
    Submission.objects.filter(pk=submission.pk).update(ingest_started=timezone.now())
    tasks.ingest_submission(submission.pk)
    submission.refresh_from_db()
    assert (submission.generation, submission.stored_runs) == (0, 0)

    done = upload(demo_suite, DEMO_RUNS)
    generation = done.generation
    tasks.ingest_submission(done.pk)  # a second delivery of its message
    assert_consistent(done)
    assert done.generation == generation


def test_a_failed_submission_is_retried_from_where_it_failed(demo_suite):
    submission = upload(demo_suite, DEMO_RUNS)
    Submission.objects.filter(pk=submission.pk).update(status=Status.FAILED, error="boom")
    with TestCase.captureOnCommitCallbacks(execute=True):
        retry(submission)
    assert_consistent(submission)
    assert submission.error == ""

    with pytest.raises(NotReady):
        retry(submission)

    unread, _ = uploaded_not_ingested(demo_suite)
    Submission.objects.filter(pk=unread.pk).update(status=Status.FAILED, error="boom")
    with TestCase.captureOnCommitCallbacks(execute=True):
        retry(unread)
    assert_consistent(unread)


def test_a_bug_in_a_task_fails_the_submission_with_the_reason(demo_suite, monkeypatch, caplog):
    def broken(*args):
        raise ValueError("a bug")

    monkeypatch.setattr(store, "insert_rows", broken)
    submission = upload(demo_suite, DEMO_RUNS)
    assert submission.status == Status.FAILED
    assert submission.error == "ValueError: a bug"
    assert "the sweep will retry" in caplog.text  # logged by the eager send, not raised


def test_a_task_run_in_process_that_the_database_refuses_is_tried_again(
    demo_suite, small_chunks, monkeypatch, caplog
):
    """With no broker Celery runs tasks eagerly and does not retry them: a write SQLite
    refused (another thread of the process reading) would leave the submission unfinished."""
    refusals = {"ingest": 1, "chunk": 2}

    def refusing(kind, real):
        def run(*args, **kwargs):
            if refusals[kind]:
                refusals[kind] -= 1
                raise OperationalError("database table is locked: scoring_submission")
            return real(*args, **kwargs)

        return run

    monkeypatch.setattr(sending, "EAGER_RETRY_WAITS", (0, 0, 0))
    monkeypatch.setattr(store, "finish_if_complete", refusing("chunk", store.finish_if_complete))
    monkeypatch.setattr(reading, "read_lines_from", refusing("ingest", reading.read_lines_from))
    submission = upload(demo_suite, DEMO_RUNS)
    assert refusals == {"ingest": 0, "chunk": 0}
    assert_consistent(submission)
    assert caplog.text.count("trying again") == 3


# --- deleting -------------------------------------------------------------------------------------


def test_deleting_a_submission_removes_its_file_runs_and_results_only(demo_suite, small_chunks):
    kept = upload(demo_suite, DEMO_RUNS + b"oops\n")
    gone = upload(demo_suite, DEMO_RUNS + b"oops\n")
    tables = (UploadChunk, InvalidLine, Run, Result, PredicateResult, ScoredChunk)
    before = {model: model.objects.filter(submission=kept).count() for model in tables}
    assert all(before.values())

    delete_submission(gone)
    delete_submission(gone)  # twice: the second finds nothing to do

    assert not Submission.objects.filter(pk=gone.pk).exists()
    for model in tables:
        assert not model.objects.filter(submission_id=gone.pk).exists(), model
        assert model.objects.filter(submission=kept).count() == before[model], model
    assert_consistent(kept)


def test_tasks_of_a_deleted_submission_do_nothing(demo_suite, small_chunks):
    submission, sends = ingested_not_scored(demo_suite)
    delete_submission(submission)
    for send in sends:
        send()
    assert not Result.objects.exists()
    assert not ScoredChunk.objects.exists()

    unread, (send_ingest,) = uploaded_not_ingested(demo_suite)
    delete_submission(unread)
    send_ingest()
    assert not Run.objects.exists()


# --- causes stored with the results ---------------------------------------------------------


def test_each_failed_predicate_is_stored_with_its_cause_as_in_its_report(demo_suite):
    submission = upload(demo_suite, DEMO_RUNS)
    failed = PredicateResult.objects.filter(submission=submission)
    assert failed.exists()
    for row in failed.select_related("result"):
        (reported,) = [p for p in row.result.report["predicates"] if p["label"] == row.label[:1000]]
        assert not reported["passed"]  # a passed predicate has no row
        cause = reported["cause"]
        assert (row.cause_kind, row.cause_tool, row.cause_argument) == (
            cause["kind"],
            cause["tool"] or "",
            cause["argument"] or "",
        )
    # Grouping by cause is a query over the stored rows.
    kinds = set(failed.values_list("cause_kind", flat=True))
    assert kinds
    assert kinds <= set(CAUSE_KINDS)
