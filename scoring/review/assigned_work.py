"""A reviewer's own work across the suites they may see: the review queues with runs dealt
out to them, and the runs assigned to them (the "My work" page)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from scoring.models import QueueItem, Review, ReviewQueue, ReviewStatus
from scoring.review.queues import reviewed

QUEUES_SHOWN = 200  # a reviewer's queues with runs left; older finished ones are not listed


@dataclass(frozen=True)
class MyQueue:
    queue: ReviewQueue
    mine: int  # items dealt out to the user
    done: int  # of those, reviewed

    @property
    def left(self) -> int:
        return self.mine - self.done


def my_queues(user, suites: QuerySet) -> list[MyQueue]:
    """The queues of ``suites`` with items dealt out to ``user``, those with runs left first
    (then newest first), with how many are theirs and done: one aggregate query."""
    rows = (
        QueueItem.objects.filter(assignee=user, queue__submission__suite__in=suites)
        .values("queue_id")
        .annotate(mine=Count("pk"), done=Count("pk", filter=reviewed()))
        .order_by()
    )
    counts = {row["queue_id"]: (row["mine"], row["done"]) for row in rows}
    found = (
        ReviewQueue.objects.filter(pk__in=counts)
        .select_related("submission__suite", "created_by")
        .defer("submission__unknown_cases", "submission__formats_seen", "submission__error")
    )
    queues = [MyQueue(queue, *counts[queue.pk]) for queue in found]
    queues.sort(key=lambda q: (q.left == 0, -q.queue.created.timestamp(), q.queue.pk))
    return queues[:QUEUES_SHOWN]


def my_runs(user, suites: QuerySet, *, open_only: bool = True) -> QuerySet[Review]:
    """The reviews of runs assigned to ``user`` in ``suites`` (only those still untriaged
    when ``open_only``), by suite, submission (newest first) and case key in natural
    order."""
    reviews = Review.objects.filter(assignee=user, submission__suite__in=suites)
    if open_only:
        reviews = reviews.filter(status=ReviewStatus.UNTRIAGED)
    return (
        reviews.select_related("run__result", "submission__suite")
        .order_by(
            "submission__suite__name",
            "-submission__created",
            "run__case_order",
            "run__case_key",
            "run__trial",
        )
        .only(
            "status",
            "updated",
            "run__case_key",
            "run__trial",
            "run__submission_id",
            "run__result__verdict",
            "submission__label",
            "submission__suite__name",
        )
    )
