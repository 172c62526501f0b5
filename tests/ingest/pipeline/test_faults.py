"""Faults in the middle of a submission, with a real broker and real workers: whatever breaks,
every submission completes, every run has exactly one result, and nothing uploaded is lost
(tests/ingest/pipeline/test_worker.py has a worker killed mid-chunk and the broker down at
upload).

- Redis restarted while chunks are queued and in flight: our redis-server keeps nothing on
  disk, so the queued tasks and the unacknowledged ones are gone with it. The workers
  reconnect, and the sweep sends the chunks not yet scored again.
- The workers' PostgreSQL connections terminated (``pg_terminate_backend``) while the file is
  being read, and again while its chunks are being scored: the tasks that lose their connection are
  retried, and the reading task that lost its connection takes over from its own attempt
  at once (before, it waited for the sweep to find the submission stalled: minutes).
"""

from __future__ import annotations

import io

import pytest
import redis
from django.db import connection
from django.test import TestCase
from django.utils import timezone

from scoring.ingest import tasks
from scoring.ingest.pipeline import create_submission
from scoring.models import Status, Submission
from tests.support.workers import TIMEOUT, wait_for

from .conftest import (
    DEMO_RUNS,
    REPEATS,
    assert_consistent,
    assert_scored_once,
    finish_with_the_sweep,
    run_file,
    status_of,
    upload_over_api,
)

pytestmark = pytest.mark.django_db(transaction=True)

RUNS = 200 * REPEATS


def test_redis_restarted_mid_submission_loses_its_queue_and_the_sweep_sends_it_again(
    api, tau_suite, pipeline
):
    broker, workers = pipeline
    workers.start(concurrency=1)  # the file is read whole before a chunk is scored
    submission_id = upload_over_api(api, tau_suite, run_file()[0])

    def scoring():
        status = status_of(api, submission_id)
        return status["status"] == Status.SCORING and 0 < status["scored"] < RUNS // 2

    wait_for(scoring, TIMEOUT, "scoring to be under way", workers)
    queue = redis.Redis(port=broker.port)
    assert queue.llen("celery") > 0  # chunks waiting their turn
    broker.stop()
    broker.start()
    assert queue.llen("celery") == 0  # gone with the server
    assert status_of(api, submission_id)["status"] == Status.SCORING

    finish_with_the_sweep(api, submission_id, workers)
    assert_scored_once(submission_id)


def test_the_workers_database_connections_dropped_mid_submission(api, tau_suite, pipeline):
    _, workers = pipeline
    workers.start(concurrency=1)  # the file is read whole, then its chunks are scored
    submission_id = upload_over_api(api, tau_suite, run_file()[0])

    def reading():
        status = status_of(api, submission_id)
        return status["status"] == Status.INGESTING and 0 < status["total"] < RUNS

    wait_for(reading, TIMEOUT, "the file to be half read", workers)
    wait_for(terminate_other_connections, 5, "a worker's connection to end", workers)

    def scoring():
        status = status_of(api, submission_id)
        return status["status"] == Status.SCORING and 0 < status["scored"] < RUNS // 2

    wait_for(scoring, TIMEOUT, "scoring to be under way", workers)
    # A worker may be between two chunks, its connection being made again: soon, then.
    wait_for(terminate_other_connections, 5, "a worker's connection to end", workers)

    finish_with_the_sweep(api, submission_id, workers)
    assert_scored_once(submission_id)
    # Its range read again by the reading task's retry, under the same generation
    # (docs/pipeline.md#ranges); scoring picked up where it was.
    assert Submission.objects.get(pk=submission_id).generation == 1


@pytest.mark.django_db  # in this process: Celery's eager mode
def test_a_retried_ingestion_takes_over_at_once_from_its_attempt_that_lost_the_database(
    demo_suite,
):
    with TestCase.captureOnCommitCallbacks():  # the first delivery, never run here
        submission = create_submission(demo_suite, None, io.BytesIO(DEMO_RUNS))
    # An attempt claimed the file a moment ago, and lost its connection mid-file.
    Submission.objects.filter(pk=submission.pk).update(generation=1, ingest_started=timezone.now())
    tasks.ingest_submission(submission.pk)  # a second delivery: that attempt may be alive, it waits
    assert Submission.objects.get(pk=submission.pk).stored_runs == 0

    with TestCase.captureOnCommitCallbacks(execute=True):
        tasks.ingest_submission.apply(args=(submission.pk,), retries=1)  # its own retry
    assert_consistent(submission)
    assert submission.generation == 2


def terminate_other_connections() -> int:
    """End every connection to the test database but this test's own: the workers'."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]
