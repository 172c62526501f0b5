"""A reviewer's own work: across the suites they may see, the review queues with runs dealt
out to them and the runs assigned to them (the "My work" page); and in one queue, the next
item to review, reserved to them."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from scoring.models import QueueItem, Review, ReviewQueue, ReviewStatus
from scoring.review import blind, queues
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


@dataclass(frozen=True)
class NextItem:
    """The reviewer's next item of a queue, reserved to them; or, when there is none, why
    (``finished``: every item is done; ``only_this_left``: the item they moved on from is
    the one left to them, so they stay on it)."""

    item: QueueItem | None
    why_none: str = ""
    finished: bool = False
    only_this_left: bool = False


def reserve_next(queue: ReviewQueue, user, after: QueueItem | None = None) -> NextItem:
    """Reserve the user's next item of ``queue``, moving on from ``after`` (the item they
    are on, if any: skipped, even when not yet decided): of a double-blind queue, the next
    they have not decided; of another, as ``queues.next_item`` deals them out. When
    ``after`` is all that is left to them, it stays theirs (reserved again)."""
    if queue.double_blind:
        item = blind.next_item(queue, user, after)
        if item is None and after is not None:
            item = blind.next_item(queue, user)  # nothing else: the one they are on, if undecided
        if item is None:
            return NextItem(None, "You have decided every run of yours in this queue.", True)
        if after is not None and item.pk == after.pk:
            return NextItem(None, "Nothing else left to you in this queue: only this run is "
                            "still to decide.", only_this_left=True)  # fmt: skip
        return NextItem(item)
    item = queues.next_item(queue, user, after)
    if item is None and after is not None:
        item = queues.next_item(queue, user)  # nothing else: theirs again, if still to do
    if item is None:
        if queues.progress(queue).finished:
            return NextItem(None, "Queue finished: every run in it has been reviewed.", True)
        return NextItem(None, "The runs left are being reviewed by others right now.")
    if after is None or item.pk != after.pk:
        return NextItem(item)
    progress = queues.progress(queue)
    if progress.total - progress.done == 1:
        why = "Nothing else left in this queue: only this run is still to review."
    else:
        why = ("Nothing else left to you in this queue but this run: the other runs left "
               "are being reviewed by others right now.")  # fmt: skip
    return NextItem(None, why, only_this_left=True)
