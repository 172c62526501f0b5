"""The Celery tasks of live traces (docs/live-traces.md#assembly): assembling the traces of an
export once they are due, and the periodic sweep of due traces whose own task was lost.

The services below send no task: the receiver has ``assemble_when_due`` send the traces an
export added to, and the task calls ``scoring.live.assembly``.
"""

from __future__ import annotations

from celery import current_app, shared_task
from django.conf import settings

from scoring.ingest.garbage import collected_between_chunks
from scoring.ingest.sending import RETRY, AfterCommitTask
from scoring.live import assembly


@shared_task(base=AfterCommitTask, **RETRY)
def assemble_traces(trace_ids: list[int]) -> None:
    """Make the traces of an export into their runs once due (sent for when the grace period
    ends), and score them; a trace a later span made pending again waits for that span's
    task."""
    with collected_between_chunks():
        assembly.assemble(trace_ids)


@shared_task(base=AfterCommitTask, acks_late=True)
def assemble_due_traces() -> int:
    """Assemble the traces whose own task was lost (run every few seconds by Celery beat)."""
    return assembly.assemble_due()


def assemble_when_due(trace_pks: list[int]) -> None:
    """Have the traces assembled once their grace period is over: by their task, or with no
    broker by the web process's timer (``assembly.embedded_timer``)."""
    if not trace_pks:
        return
    grace = settings.CASEBOOK_TRACE_GRACE_SECONDS
    if current_app.conf.task_always_eager:
        assembly.embedded_timer.wake_in(grace)
        return
    # A broker that cannot be reached is logged: the spans are stored, and the periodic
    # sweep assembles them once it is back.
    assemble_traces.apply_async_on_commit((trace_pks,), countdown=grace)
