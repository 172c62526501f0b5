"""How Casebook's tasks are sent (docs/pipeline.md#tasks): once the transaction that made
their work visible commits, and never at the cost of that work.

Every task is made with ``base=AfterCommitTask`` and the options here, in the ``tasks``
module beside the service it runs (``scoring.ingest.tasks``, ``scoring.live.tasks``,
``scoring.retention.tasks``), and sent through the task object itself
(``task.delay_on_commit(...)``): no task is named by a string.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any

from celery.contrib.django.task import DjangoTask
from celery.exceptions import Retry
from django.db import InterfaceError, OperationalError, transaction

log = logging.getLogger(__name__)

RETRIED = (OperationalError, InterfaceError)
# Acknowledged late, and retried with backoff on a database error (docs/pipeline.md#tasks).
RETRY: dict[str, Any] = {
    "acks_late": True,
    "autoretry_for": RETRIED,
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "max_retries": 8,
}
# Seconds between the tries of a task run in-process (eager) that asked to be retried.
EAGER_RETRY_WAITS = (0.2, 0.5, 1, 2, 4)


class AfterCommitTask(DjangoTask):
    """Celery's Django task, whose ``delay_on_commit`` and ``apply_async_on_commit`` send
    it once the current transaction commits (at once outside one), and never raise: a
    broker that cannot be reached is logged, the work being in the database for the sweep
    to send again. In eager mode (no broker) the task runs there and then, and a run that
    asks to be retried is run again after a short wait, as a worker would after its backoff
    (SQLite refusing a write while another thread of the process wrote, say)."""

    abstract = True

    def delay_on_commit(self, *args: Any, **kwargs: Any) -> None:
        transaction.on_commit(functools.partial(self._send, args, kwargs, {}))

    def apply_async_on_commit(  # type: ignore[override]
        self, args: tuple = (), kwargs: dict | None = None, **options: Any
    ) -> None:
        transaction.on_commit(functools.partial(self._send, args, kwargs or {}, options))

    def _send(self, args: tuple, kwargs: dict, options: dict) -> None:
        for retries, wait in enumerate((*EAGER_RETRY_WAITS, None)):
            try:
                if retries:
                    self.apply(args, kwargs, retries=retries, throw=True)
                else:
                    self.apply_async(args, kwargs, **options)
                return
            except Retry:
                # Celery does not retry an eager task that raises: wait, and run it again.
                if wait is None:
                    log.error("%s%r still failing; the sweep will retry", self.name, args)
                    return
                log.warning("%s%r failed; trying again in %s s", self.name, args, wait)
                time.sleep(wait)
            except Exception:
                # Also where an eager task's own failure lands; it has already marked its
                # submission failed.
                log.exception("could not run %s%r now; the sweep will retry", self.name, args)
                return
