"""Review queues: a fixed list of a submission's runs that reviewers work through one
"next item" at a time (docs/review.md#review-queues).

- A queue is built from the runs table's filters, or from one failure group (the runs that
  fail a predicate), in the order the table shows them: one read of run ids and bulk
  inserts, so 10,000 items take well under a second.
- Its items are dealt out to the reviewers round-robin, so each sees their share and
  progress per reviewer means something. Shares are a plan, not a wall: once a reviewer's
  own items are done, ``next_item`` gives them the unreserved items of others (and the item
  becomes theirs), so a queue never waits on someone who is away.
- An item handed out by ``next_item`` is reserved to that reviewer for
  ``CASEBOOK_REVIEW_RESERVATION_SECONDS``; nobody else is given it meanwhile. On PostgreSQL
  the pick skips rows another reviewer is picking at that instant (``SKIP LOCKED``); the
  claim itself is a conditional update, which is what keeps SQLite (no row locks) safe.
- An item is done when its run's review status is not untriaged: nothing to keep in sync
  when the status is set from the run page, or for a whole failure group at once.
- A double-blind queue (``scoring.review.blind``) deals each item to two reviewers instead; its
  items are done when resolved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.db import connection, transaction
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    Field,
    Model,
    OrderBy,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
    Window,
)
from django.db.models.expressions import Combinable
from django.db.models.functions import Cast, Mod, RowNumber
from django.db.models.lookups import Exact
from django.http import QueryDict
from django.utils import timezone

from scoring.models import (
    BlindDecision,
    QueueItem,
    Result,
    Review,
    ReviewQueue,
    ReviewStatus,
    Submission,
)
from scoring.results.filtersets import RunFilterSet

# A claim fails only when another reviewer took the same item between our read and our
# update, which row locks prevent on PostgreSQL; on SQLite a few tries are plenty.
CLAIM_ATTEMPTS = 5


class NothingToReview(ValueError):
    """The filter or group names no scored run: there is nothing to queue."""


def reviewed() -> Exists:
    """Whether the run of a queue item (or of a result) has been triaged: its review status
    is not untriaged (a run without a review row is untriaged)."""
    return Exists(
        Review.objects.filter(run_id=OuterRef("run_id")).exclude(status=ReviewStatus.UNTRIAGED)
    )


def group_of(filters: RunFilterSet) -> str:
    """The failure group the filters show, if they show exactly one: a failing predicate
    and no other filter. Else ""."""
    return filters.predicate if filters.as_query().keys() == {"predicate"} else ""


def build_queue(
    submission: Submission,
    name: str,
    created_by,
    *,
    filters: RunFilterSet | None = None,
    group: str = "",
    reviewers=(),
    double_blind: bool = False,
) -> ReviewQueue:
    """A queue of the runs that pass ``filters``, in the runs table's order, or of the
    failure group ``group`` (the runs failing that predicate); dealt out to ``reviewers``
    (none: a shared pool), or with ``double_blind`` each to two of them (at least two).
    Raises ``NothingToReview`` when no run qualifies."""
    filters = RunFilterSet({"predicate": group}) if group else filters or RunFilterSet()
    group = group_of(filters)
    reviewers = list(reviewers)
    if double_blind and len(reviewers) < 2:
        raise ValueError("a double-blind queue needs at least two reviewers")
    with transaction.atomic():
        queue = ReviewQueue.objects.create(
            submission=submission,
            name=name,
            filter_query="" if group else urlencode(filters.as_query()),
            group=group,
            double_blind=double_blind,
            created_by=created_by,
        )
        # A blind item's reviewers are its two decisions, not the one assignee.
        if not _insert_items(queue, filters.results(submission), [] if double_blind else reviewers):
            raise NothingToReview("no scored run matches")  # and the queue is rolled back
        if double_blind:
            _deal_out_pairs(queue, reviewers)
    return queue


def _deal_out_pairs(queue: ReviewQueue, reviewers: list) -> None:
    """Make each item's two undecided blind decisions, for the reviewers at its position
    and the next (round-robin): an ``INSERT ... SELECT`` per side, as ``_insert_items``."""
    quote = connection.ops.quote_name
    columns = _columns(BlindDecision, ["item", "reviewer", "status"])
    table = quote(BlindDecision._meta.db_table)
    for offset in (0, 1):
        rows = (
            queue.items.order_by()
            .annotate(who=_share(F("position") + offset, reviewers), undecided=Value(""))
            .values_list("pk", "who", "undecided")
        )
        select, params = rows.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {table} ({columns}) {select}", params)


def _insert_items(queue: ReviewQueue, results: QuerySet[Result], reviewers: list) -> int:
    """Add the runs of ``results`` to the queue, numbered in their order and dealt out as
    ``deal_out`` would, with one ``INSERT ... SELECT``: the rows never pass through Python
    (10,000 model instances take the better part of a second to build and send, and a
    separate update to deal them out as long again). Returns how many."""
    order = _window_order(results.query.order_by)
    position = Window(RowNumber(), order_by=order)
    rows = results.annotate(
        item_queue=Value(queue.pk),
        item_position=position,
        # Cast: without reviewers the column is all NULLs, which PostgreSQL takes for text.
        item_assignee=Cast(
            Case(When(reviewed(), then=Value(None)), default=_share(position, reviewers)),
            QueueItem._meta.get_field("assignee").target_field,
        ),
    ).values_list("item_queue", "run_id", "item_position", "item_assignee")
    select, params = rows.query.sql_with_params()
    quote = connection.ops.quote_name
    columns = _columns(QueueItem, ["queue", "run", "position", "assignee"])
    table = quote(QueueItem._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} ({columns}) {select}", params)
        return cursor.rowcount


def _columns(model: type[Model], names: list[str]) -> str:
    """The quoted columns of ``model``'s fields ``names``, in order, for an ``INSERT``."""
    quoted = []
    for name in names:
        field = model._meta.get_field(name)
        assert isinstance(field, Field)  # a field of the table, not a relation's other side
        quoted.append(connection.ops.quote_name(field.column))
    return ", ".join(quoted)


def _window_order(ordering: Sequence[str | Combinable]) -> list[OrderBy]:
    """A queryset's ordering by field names (``-`` first: descending) as a window's."""
    order = []
    for name in ordering:
        assert isinstance(name, str)  # the result filters order by field names
        order.append(F(name[1:]).desc() if name.startswith("-") else F(name).asc())
    return order


def _share(position, reviewers: list) -> Case:
    """Who gets the item at ``position``: the reviewers in turn (nobody, if none)."""
    return Case(
        *(
            When(Exact(Mod(position, len(reviewers)), slot), then=Value(reviewer.pk))
            for slot, reviewer in enumerate(reviewers)
        ),
        default=Value(None),
        output_field=QueueItem._meta.get_field("assignee"),
    )


def made_from(queue: ReviewQueue) -> str:
    """The filters the queue was made from, in words ("" for every run of the submission, or
    for a failure group, which its page names)."""
    return RunFilterSet(QueryDict(queue.filter_query)).in_words()


def listed_items(queue: ReviewQueue) -> QuerySet[QueueItem]:
    """The queue's items as its page lists them, by position, with what a row shows."""
    # By position alone: the items' default order leads with the queue's submission's and
    # the queue's dates, a join and a sort of every item for one page.
    return (
        queue.items.order_by("position")
        .select_related("run__result", "run__review", "assignee", "reserved_by", "resolved_by")
        .only(
            "queue",  # the related manager sets it on each item
            "position",
            "reserved_until",
            "run__submission_id",
            "run__case_key",
            "run__trial",
            "run__result__verdict",
            "run__review__status",
            "assignee__username",
            "reserved_by__username",
            "resolved_at",
            "resolved_by__username",
        )
    )


def reviewers_of(queue: ReviewQueue) -> QuerySet:
    """Whom the queue's unfinished items are dealt out to now (ids)."""
    undone = queue.items.filter(~reviewed(), assignee__isnull=False)
    return undone.order_by().values_list("assignee", flat=True).distinct()


def deal_out(queue: ReviewQueue, reviewers) -> None:
    """Share the queue's unfinished items among ``reviewers`` round-robin by position, in
    one update; with no reviewers they go back to the shared pool. Finished items keep
    whoever did them, so progress stays true."""
    share = _share(F("position"), list(reviewers))
    queue.items.filter(~reviewed()).update(assignee=share)


def reservation_time() -> timedelta:
    return timedelta(seconds=settings.CASEBOOK_REVIEW_RESERVATION_SECONDS)


def next_item(queue: ReviewQueue, user, after: QueueItem | None = None) -> QueueItem | None:
    """The next unfinished item for ``user``, reserved to them; None when nothing is left
    that someone else has not reserved.

    In order: an item they hold already (they come back to it), then their own share, then
    the pool, then others' shares, each by position. Moving on from ``after`` (the item
    they are on, decided or not) skips it and gives up its reservation; each of those
    groups then starts after its position and wraps round, so skipped items come back
    once the rest are done, never straight away."""
    if after is not None:
        queue.items.filter(pk=after.pk, reserved_by=user).update(
            reserved_by=None, reserved_until=None
        )
    for _ in range(CLAIM_ATTEMPTS):
        now = timezone.now()
        free = Q(reserved_until__isnull=True) | Q(reserved_until__lte=now) | Q(reserved_by=user)
        candidates = queue.items.filter(free).filter(~reviewed())
        order = [
            Case(
                When(reserved_by=user, then=Value(0)),
                When(assignee=user, then=Value(1)),
                When(assignee__isnull=True, then=Value(2)),
                default=Value(3),
            )
        ]
        if after is not None:
            candidates = candidates.exclude(pk=after.pk)
            order.append(Case(When(position__lte=after.position, then=Value(1)), default=Value(0)))
        candidates = candidates.order_by(*order, "position")
        with transaction.atomic():
            item = candidates.select_for_update(skip_locked=True).first()
            if item is None:
                return None
            until = now + reservation_time()
            claimed = (
                QueueItem.objects.filter(pk=item.pk)
                .filter(free)
                .update(reserved_by=user, reserved_until=until, assignee=user)
            )
            if claimed:
                item.reserved_by, item.reserved_until, item.assignee = user, until, user
                return item
    return None


def holder(item: QueueItem, user):
    """Who else holds the item right now (None if nobody, or ``user`` themself)."""
    live = item.reserved_until is not None and item.reserved_until > timezone.now()
    if live and item.reserved_by_id is not None and item.reserved_by_id != user.pk:
        return item.reserved_by
    return None


@dataclass(frozen=True)
class Share:
    """One reviewer's part of a queue (``assignee`` None: the shared pool)."""

    assignee: str | None
    total: int
    done: int

    @property
    def left(self) -> int:
        return self.total - self.done


@dataclass(frozen=True)
class Progress:
    shares: list[Share]

    @property
    def total(self) -> int:
        return sum(share.total for share in self.shares)

    @property
    def done(self) -> int:
        return sum(share.done for share in self.shares)

    @property
    def finished(self) -> bool:
        return self.done == self.total


def progress(queue: ReviewQueue) -> Progress:
    """Done and total per assignee, in one aggregate query."""
    rows = (
        queue.items.values("assignee__username")
        .annotate(total=Count("pk"), done=Count("pk", filter=reviewed()))
        .order_by("assignee__username")
    )
    return Progress([Share(row["assignee__username"], row["total"], row["done"]) for row in rows])


def progress_of_queues(queues: QuerySet[ReviewQueue]) -> dict[int, Progress]:
    """Each queue's progress as a whole (one share), in one aggregate query."""
    # A blind queue's item is done when resolved, another's when its run is reviewed.
    done = Q(queue__double_blind=True, resolved_at__isnull=False) | Q(
        Q(reviewed()), queue__double_blind=False
    )
    rows = (
        QueueItem.objects.filter(queue__in=queues)
        .values("queue_id")
        .annotate(total=Count("pk"), done=Count("pk", filter=done))
        .order_by()
    )
    return {row["queue_id"]: Progress([Share(None, row["total"], row["done"])]) for row in rows}
