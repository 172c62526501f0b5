"""Celery tasks: thin wrappers over the services they run (docs/pipeline.md#tasks): reading
and scoring a submission, and resuming stalled ones (``scoring.ingest``); storing its
summaries once it is done (``scoring.results.failures``); assembling live traces
(``scoring.live.assembly``); removing runs past their suite's retention (``scoring.retention``).

Tasks are acknowledged late (a worker lost mid-task leaves its message to be delivered
again), retried with backoff when the database or broker hiccups, and idempotent, so a
second delivery does no harm. With no ``REDIS_URL`` they run in the calling process.
"""

from __future__ import annotations

from contextlib import contextmanager

from celery import shared_task
from django.db import InterfaceError, OperationalError

from scoring.ingest import chunks, pipeline, reading
from scoring.ingest.garbage import fewer_collections
from scoring.live import assembly
from scoring.results import failures
from scoring.retention import pruning

RETRIED = (OperationalError, InterfaceError)
RETRY = {
    "acks_late": True,
    "autoretry_for": RETRIED,
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "max_retries": 8,
}


@contextmanager
def _failing(submission_id: int):
    """An error that retrying cannot cure (a bug) fails the submission, with the reason."""
    try:
        yield
    except RETRIED:
        raise  # retried; if it never clears, the sweep resumes the submission later
    except Exception as exc:
        pipeline.mark_failed(submission_id, f"{type(exc).__name__}: {exc}")
        raise


@shared_task(bind=True, **RETRY)
def ingest_submission(self, submission_id: int) -> None:
    # A retry follows this task's own attempt, which lost the database mid-file: it starts
    # again at once rather than wait for the sweep to see the submission stalled.
    with _failing(submission_id), fewer_collections():
        reading.ingest(submission_id, take_over=self.request.retries > 0)
        # The last step of the scoring, whichever it is, summarizes the failures.
        failures.summarize_when_scored(submission_id)


@shared_task(bind=True, **RETRY)
def ingest_range(self, submission_id: int, generation: int, index: int) -> None:
    with _failing(submission_id), fewer_collections():
        reading.read_range(submission_id, generation, index, take_over=self.request.retries > 0)
        failures.summarize_when_scored(submission_id)


@shared_task(**RETRY)
def score_chunk(submission_id: int, generation: int, index: int) -> None:
    with _failing(submission_id), fewer_collections():
        chunks.score_chunk(submission_id, generation, index)
        failures.summarize_when_scored(submission_id)


@shared_task(acks_late=True)
def sweep() -> list[int]:
    """Resume submissions that stalled (run every minute by Celery beat)."""
    return pipeline.resume_stalled()


@shared_task(**RETRY)
def assemble_traces(trace_ids: list[int]) -> None:
    """Make the traces of an export into their runs once due (sent for when the grace period
    ends), and score them; a trace a later span made pending again waits for that span's
    task."""
    assembly.assemble(trace_ids)


@shared_task(acks_late=True)
def assemble_due_traces() -> int:
    """Assemble the traces whose own task was lost (run every few seconds by Celery beat)."""
    return assembly.assemble_due()


@shared_task(**RETRY)
def prune_expired_runs() -> int:
    """Remove the runs that outlived their suite's retention (run daily by Celery beat,
    docs/operations.md#retention); a second run the same day finds nothing left."""
    return pruning.prune().rows
