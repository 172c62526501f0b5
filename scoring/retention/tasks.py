"""The Celery task of retention (docs/operations.md#retention)."""

from __future__ import annotations

from celery import shared_task

from scoring.ingest.sending import RETRY, AfterCommitTask
from scoring.retention import pruning


@shared_task(base=AfterCommitTask, **RETRY)
def prune_expired_runs() -> int:
    """Remove the runs that outlived their suite's retention (run daily by Celery beat,
    docs/operations.md#retention); a second run the same day finds nothing left."""
    return pruning.prune().rows
