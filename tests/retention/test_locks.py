"""On PostgreSQL, pruning skips the runs another transaction holds rather than wait for
them (docs/operations.md#retention): ingest and scoring are never held up by it."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from scoring.models import Run, Submission
from scoring.retention import pruning
from tests.support.commands import DEMO_RUNS

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL only"),
]


def test_runs_locked_by_another_transaction_are_skipped_not_waited_for(suite, submit):
    old = submit(suite, DEMO_RUNS.read_text().splitlines())
    Submission.objects.filter(pk=old.pk).update(
        live_day=(timezone.now() - timedelta(days=40)).date()
    )
    held = list(old.runs.order_by("seq").values_list("pk", flat=True)[:2])
    locked, release = threading.Event(), threading.Event()

    def hold_two_runs():
        with transaction.atomic():
            list(Run.objects.select_for_update(of=("self",)).filter(pk__in=held))
            locked.set()
            release.wait(30)
        connections.close_all()

    holder = threading.Thread(target=hold_two_runs)
    holder.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        pruning.prune(batch=5)
        took = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    assert took < 5
    assert set(Run.objects.filter(submission=old).values_list("pk", flat=True)) == set(held)
    # The next prune, with nothing held, finishes the job.
    pruning.prune()
    assert not Run.objects.filter(submission=old).exists()
