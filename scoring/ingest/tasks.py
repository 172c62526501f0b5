"""The pipeline's Celery tasks (docs/pipeline.md#tasks): reading a submission's file, a range
of it, scoring a chunk, and the sweep that resumes stalled submissions.

Each is thin: it calls the service that does the step, and sends the work that step leaves
(``conductor.Work``) once it is committed, through the task objects below, so no task is
named by a string. The services below never send a task. Tasks are acknowledged late,
retried with backoff when the database hiccups, and idempotent (a generation claimed under
a row lock), so a second delivery does no harm. With no ``REDIS_URL`` they run in the
calling process.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from celery import shared_task

from scoring.ingest import chunks, conductor, reading
from scoring.ingest.conductor import Work
from scoring.ingest.garbage import collected_between_chunks
from scoring.ingest.sending import RETRIED, RETRY, AfterCommitTask


@contextmanager
def _failing(submission_id: int) -> Iterator[None]:
    """An error that retrying cannot cure (a bug) fails the submission, with the reason."""
    try:
        yield
    except RETRIED:
        raise  # retried; if it never clears, the sweep resumes the submission later
    except Exception as exc:
        conductor.mark_failed(submission_id, f"{type(exc).__name__}: {exc}")
        raise


@shared_task(base=AfterCommitTask, bind=True, **RETRY)
def ingest_submission(self: AfterCommitTask, submission_id: int) -> None:
    """Start reading the submission's file: plan its ranges and send them, or read a file
    that is one document of runs here, sending each chunk to be scored as it is written."""
    # A retry follows this task's own attempt, which lost the database mid-file: it starts
    # again at once rather than wait for the sweep to see the submission stalled.
    with _failing(submission_id), collected_between_chunks():
        generation = conductor.claim(submission_id, take_over=self.request.retries > 0)
        if generation is None:
            return  # read already, or another attempt is at it
        ranges = conductor.plan_ranges(submission_id, generation)
        if ranges:
            send(Work(submission_id, generation, ranges=ranges))
        elif ranges is not None:
            for index in reading.read_whole(submission_id, generation):
                send(Work(submission_id, generation, chunks=(index,)))
        conductor.finish(submission_id)


@shared_task(base=AfterCommitTask, bind=True, **RETRY)
def ingest_range(self: AfterCommitTask, submission_id: int, generation: int, index: int) -> None:
    """Read one range of the file; the task that reads the last one settles them."""
    with _failing(submission_id), collected_between_chunks():
        take_over = self.request.retries > 0
        span = conductor.claim_range(submission_id, generation, index, take_over=take_over)
        if span is not None:
            for chunk in reading.read_range(submission_id, generation, span):
                send(Work(submission_id, generation, chunks=(chunk,)))
        conductor.settle(submission_id, generation)
        conductor.finish(submission_id)


@shared_task(base=AfterCommitTask, **RETRY)
def score_chunk(submission_id: int, generation: int, index: int) -> None:
    with _failing(submission_id), collected_between_chunks():
        chunks.score_chunk(submission_id, generation, index)
        conductor.finish(submission_id)


@shared_task(base=AfterCommitTask, acks_late=True)
def sweep() -> list[int]:
    """Resume submissions that stalled (run every minute by Celery beat); returns their ids."""
    resumed = conductor.resume_stalled()
    for work in resumed:
        send(work)
    return [work.submission_id for work in resumed]


def send(work: Work) -> None:
    """Send the tasks that do ``work``, once the current transaction commits (at once
    outside one)."""
    if work.read:
        ingest_submission.delay_on_commit(work.submission_id)
    for index in work.ranges:
        ingest_range.delay_on_commit(work.submission_id, work.generation, index)
    for index in work.chunks:
        score_chunk.delay_on_commit(work.submission_id, work.generation, index)
