"""Double-blind review queues: each item goes to two reviewers, who decide (a status and
the team's labels) without seeing each other's decision; their agreement is measured
(Cohen's κ, ``scoring.review.agreement``) and their disagreements resolved.

- The two decisions of an item are ``BlindDecision`` rows, made undecided when the queue
  is made (``scoring.review.queues.build_queue``): the item at position p goes to the reviewers p
  and p + 1 (mod their number), so with two reviewers both see every item and each pair of
  decisions is the same two people's, as Cohen's κ assumes.
- Nothing of a decision reaches the run's review (which the run page, the runs table and
  the API show) until the item is resolved: a reviewer's decision lives in its own row,
  shown to nobody but its author while the other is undecided.
- When the second decision comes in, the item is settled: if the two agree (same status,
  same labels) their decision becomes the run's review at once; else the item waits for
  the resolve step, where someone else (or the queue's maker) picks the final decision.
  A reviewer may change their decision until then, not after.
- While an item is open (not resolved), its reviewers review the run blind wherever they
  open it: the run page shows them their own decision only, with or without the queue in
  its address, and hides the run's review, its thread and the known failure's earlier
  decision (a review made before the queue included); and they may not change the run's
  review from the run page or a bulk change (``scoring.review.decisions`` refuses). The runs table,
  the CSV and the results API still show the run's review to whoever may see the suite:
  it holds nothing of the other reviewer's decision until the item is resolved.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Case, Count, Exists, OuterRef, Q, QuerySet, Value, When
from django.utils import timezone

from cases.models import ReviewLabel, User
from scoring.models import BlindDecision, QueueItem, ReviewQueue, ReviewStatus, Run
from scoring.review.agreement import cohen_kappa, fleiss_kappa, observed_agreement
from scoring.review.decisions import labels_of_team, write_queue_outcome
from scoring.review.queues import Progress, Share

# What a blind reviewer may decide: a status that says something (not "untriaged").
DECISION_STATUSES = [
    (value, label) for value, label in ReviewStatus.choices if value != "untriaged"
]


class NotYours(ValueError):
    """The user is not one of the item's two reviewers."""


class Settled(ValueError):
    """Both reviewers have decided the item (or it is resolved): a decision stands."""


class NotReady(ValueError):
    """The item has no disagreement to resolve (yet)."""


def next_item(queue: ReviewQueue, user, after: QueueItem | None = None) -> QueueItem | None:
    """The user's first item (by position) that they have not decided, of the unresolved
    ones; None when they have decided all theirs. Moving on from ``after`` skips it: the
    first after its position, wrapping round to those before it."""
    undecided = BlindDecision.objects.filter(item__queue=queue, reviewer=user, status="").filter(
        item__resolved_at__isnull=True
    )
    order: list[str | Case] = ["item__position"]
    if after is not None:
        undecided = undecided.exclude(item=after)
        wrapped = Case(When(item__position__lte=after.position, then=Value(1)), default=Value(0))
        order.insert(0, wrapped)
    decision = undecided.select_related("item").order_by(*order).first()
    return decision.item if decision else None


def own_decision(item: QueueItem, user) -> BlindDecision | None:
    """The user's decision on the item (undecided, if they have not yet), or None when the
    item is not theirs."""
    return BlindDecision.objects.filter(item=item, reviewer=user).first()


def item_of(queue: ReviewQueue, run: Run) -> QueueItem | None:
    return queue.items.filter(run=run).first()


def decide(item: QueueItem, user, status: str, labels) -> BlindDecision:
    """Record the user's decision on the item; when it is the second, settle the item (an
    agreement becomes the run's review). Raises ``NotYours`` or ``Settled``."""
    if status not in dict(DECISION_STATUSES):
        raise ValueError(f"not a decision: {status!r}")
    labels = list(labels)
    with transaction.atomic():
        item = QueueItem.objects.select_for_update().get(pk=item.pk)
        decisions = list(item.decisions.select_for_update().order_by("pk"))
        mine = next((d for d in decisions if d.reviewer_id == user.pk), None)
        if mine is None:
            raise NotYours("this run is not yours to decide in this queue")
        if item.resolved_at is not None or all(d.status for d in decisions):
            raise Settled("both reviewers have decided this run")
        mine.status, mine.decided_at = status, timezone.now()
        mine.save(update_fields=["status", "decided_at"])
        mine.labels.set(labels)
        if all(d.status for d in decisions):
            _settle(item, decisions, user)
    return mine


def _undecided(queue: ReviewQueue) -> QuerySet[BlindDecision]:
    """The decisions of the queue not yet made (on runs not yet resolved)."""
    open_items = Q(item__queue=queue, item__resolved_at__isnull=True)
    return BlindDecision.objects.filter(open_items, status="")


def reviewers_with_runs_left(queue: ReviewQueue) -> QuerySet[User]:
    """The queue's reviewers with runs they have not decided, by username."""
    left = _undecided(queue).values("reviewer")
    return User.objects.filter(pk__in=left).order_by("username")


@dataclass(frozen=True)
class HandedOn:
    moved: int  # runs now the new reviewer's
    kept: int  # runs left with the old one: the new reviewer is already the other one


def hand_on(queue: ReviewQueue, reviewer, to) -> HandedOn:
    """Give ``to`` the runs of the queue ``reviewer`` has not decided (someone away, say),
    but those ``to`` already reviews: a run keeps two different reviewers. What ``reviewer``
    decided stays theirs; the agreement then compares more than two people (Fleiss' κ)."""
    undecided = _undecided(queue).filter(reviewer=reviewer)
    already = BlindDecision.objects.filter(item=OuterRef("item"), reviewer=to)
    with transaction.atomic():
        # Locked, as ``decide`` locks them: a decision made meanwhile stays its maker's.
        movable = undecided.exclude(Exists(already)).select_for_update()
        moved = undecided.filter(pk__in=list(movable.values_list("pk", flat=True)))
        return HandedOn(moved.update(reviewer=to), undecided.filter(Exists(already)).count())


def _settle(item: QueueItem, decisions: list[BlindDecision], author) -> None:
    first, second = (_verdict(d) for d in decisions)
    if first == second:
        _write_review(item, decisions[0].status, decisions[0].labels.all(), author, None)


def _verdict(decision: BlindDecision) -> tuple[str, frozenset[int]]:
    return decision.status, frozenset(decision.labels.values_list("pk", flat=True))


def resolve(item: QueueItem, user, status: str, labels) -> None:
    """The final decision on an item its reviewers disagree on, picked by ``user`` (whom
    ``cases.permissions.can_resolve`` allows): it becomes the run's review."""
    if status not in dict(DECISION_STATUSES):
        raise ValueError(f"not a decision: {status!r}")
    with transaction.atomic():
        item = QueueItem.objects.select_for_update().get(pk=item.pk)
        if item.resolved_at is not None or not disputed(item):
            raise NotReady("this run has no disagreement to resolve")
        _write_review(item, status, labels, user, user)


def _write_review(item: QueueItem, status: str, labels, author, resolver) -> None:
    write_queue_outcome(item, status, labels, author)
    item.resolved_at, item.resolved_by = timezone.now(), resolver
    item.save(update_fields=["resolved_at", "resolved_by"])


def disputed(item: QueueItem) -> bool:
    """Whether both reviewers decided the item, differently."""
    decisions = list(item.decisions.order_by("pk"))
    if len(decisions) != 2 or not all(d.status for d in decisions):
        return False
    return _verdict(decisions[0]) != _verdict(decisions[1])


def to_resolve(queue: ReviewQueue) -> QuerySet[QueueItem]:
    """The items both reviewers decided, not resolved (so: they disagree), by position."""
    undecided = BlindDecision.objects.filter(item=OuterRef("pk"), status="")
    return (
        queue.items.filter(resolved_at__isnull=True)
        .filter(~Exists(undecided))
        .select_related("run")
        .order_by("position")
    )


def with_decisions(items) -> list[tuple[QueueItem, list[BlindDecision]]]:
    """Each item with its decisions in the order of their reviewers (as ``agreement``
    pairs them, so that a column is one person's), and their labels: in two queries."""
    items = list(items)
    decisions = (
        BlindDecision.objects.filter(item__in=items)
        .select_related("reviewer")
        .prefetch_related("labels")
        .order_by("item_id", "reviewer_id")
    )
    by_item: dict[int, list[BlindDecision]] = defaultdict(list)
    for decision in decisions:
        by_item[decision.item_id].append(decision)
    return [(item, by_item[item.pk]) for item in items]


@dataclass(frozen=True)
class BlindProgress(Progress):
    """The queue's decisions per reviewer (``shares``: ``done`` of ``total`` decisions), and
    its items' resolution."""

    items: int
    resolved: int
    disputed: int  # decided by both, differently, not yet resolved

    @property
    def all_decided(self) -> bool:
        """Whether both reviewers have decided every item: agreement can be shown."""
        return super().finished

    @property
    def finished(self) -> bool:
        return self.resolved == self.items


def progress(queue: ReviewQueue) -> BlindProgress:
    # Grouped by reviewer id, named after: a join of every decision to its user costs more
    # than the counting.
    rows = (
        BlindDecision.objects.filter(item__queue=queue)
        .values("reviewer_id")
        .annotate(total=Count("pk"), done=Count("pk", filter=~Q(status="")))
        .order_by()
    )
    names = dict(
        User.objects.filter(pk__in=[row["reviewer_id"] for row in rows]).values_list(
            "pk", "username"
        )
    )
    counts = queue.items.aggregate(
        items=Count("pk"), resolved=Count("pk", filter=Q(resolved_at__isnull=False))
    )
    return BlindProgress(
        shares=[
            Share(names[row["reviewer_id"]], row["total"], row["done"])
            for row in sorted(rows, key=lambda row: names[row["reviewer_id"]])
        ],
        items=counts["items"],
        resolved=counts["resolved"],
        disputed=to_resolve(queue).order_by().count(),
    )


# Two reviewers: Cohen's κ, each with their own habits. More, two of them to an item: the
# pairs differ from item to item, and Fleiss' κ pools the decisions of all.
KAPPAS = {"cohen": cohen_kappa, "fleiss": fleiss_kappa}


@dataclass(frozen=True)
class Kappa:
    """Agreement on one question (the status, or one status or label: given or not)."""

    name: str
    kappa: float | None  # None: not defined (see ``cohen_kappa``)
    agreement: float | None  # the share of items they agree on
    first: int  # items the first reviewer gave it (for the status: items decided)
    second: int


@dataclass(frozen=True)
class Agreement:
    items: int  # decided by both
    reviewers: tuple[str, ...]
    statistic: str  # "cohen": two reviewers; "fleiss": more, two of them to an item
    status: Kappa  # over the statuses as categories
    statuses: list[Kappa]  # each status, as given or not
    labels: list[Kappa]  # each label either gave, as given or not


def agreement(queue: ReviewQueue, *, final: bool = False) -> Agreement:
    """How far the reviewers agree, over the items both of their reviewers decided: on the
    status (κ over the statuses), and on each status and each label used (κ of "given it"
    or not); Cohen's κ with two reviewers, Fleiss' κ with more (``KAPPAS``).

    ``final``: both reviewers have decided every item, so that no decision can change any
    more (``decide`` refuses once both are in): the tables are then counted once and kept
    on the queue (``ReviewQueue.agreement_tables``), and read from there afterwards."""
    tables = queue.agreement_tables
    if tables is None:
        tables = _count_tables(queue)
        if final:
            queue.agreement_tables = tables
            queue.save(update_fields=["agreement_tables"])
    statuses = {(first, second): n for first, second, n in tables["statuses"]}
    items = sum(statuses.values())
    by_label: dict[int, Counter] = defaultdict(Counter)
    for label_id, first, second, n in tables["labels"]:
        by_label[label_id][first, second] = n
    # Named as they are called now; a label deleted since is left out.
    names = dict(ReviewLabel.objects.filter(pk__in=by_label).values_list("pk", "name"))
    labelled = sorted((names[pk], table) for pk, table in by_label.items() if pk in names)
    statistic = "cohen" if len(tables["reviewers"]) <= 2 else "fleiss"
    kappa = KAPPAS[statistic]
    return Agreement(
        items=items,
        reviewers=tuple(tables["reviewers"]),
        statistic=statistic,
        status=Kappa("status", kappa(statuses), observed_agreement(statuses), items, items),
        statuses=[
            _binary(ReviewStatus(value).label, _given(statuses, value), kappa)
            for value, _ in DECISION_STATUSES
            if any(value in pair for pair in statuses)
        ],
        labels=[_binary(name, _label_table(table, items), kappa) for name, table in labelled],
    )


def _count_tables(queue: ReviewQueue) -> dict:
    """The contingency tables of the queue's pairs of decisions, as JSON: the statuses'
    (``[first, second, items]``) and each label's (``[label id, first gave it, second
    gave it, items]``, but for the pairs where neither did), and the reviewers' names.

    Counted in the database, a pair of decisions being an item's decision and the decision
    of its other reviewer with a greater id (so that with two reviewers the first of every
    pair is the same person's, as Cohen's κ compares two raters): what comes back is the
    tables, not the decisions."""
    by_status = _pairs("a.status, b.status, COUNT(*)") + " GROUP BY a.status, b.status"
    sides: dict[int, dict[int, list[bool]]] = defaultdict(
        lambda: defaultdict(lambda: [False, False])
    )
    with connection.cursor() as cursor:
        cursor.execute(by_status, [queue.pk])
        statuses = [list(row) for row in cursor.fetchall()]
        # The labels on the first decisions of the pairs, then on the second ones.
        for index, side in enumerate("ab"):
            cursor.execute(_pairs("dl.reviewlabel_id, a.item_id", labels_of=side), [queue.pk])
            for label_id, item_id in cursor.fetchall():
                sides[label_id][item_id][index] = True
    reviewer_ids = BlindDecision.objects.filter(item__queue=queue).order_by().values("reviewer")
    names = (
        User.objects.filter(pk__in=reviewer_ids).order_by("pk").values_list("username", flat=True)
    )
    labels = [
        [label_id, first, second, n]
        for label_id, pairs in sides.items()
        for (first, second), n in Counter(tuple(pair) for pair in pairs.values()).items()
    ]
    return {"reviewers": list(names), "statuses": statuses, "labels": labels}


# An item's two decisions as a pair, the first the one of the reviewer with the smaller id,
# both decided: a self-join (each pair once), where correlated subqueries cost a lookup per
# decision (and PostgreSQL, finding that dear, compiled them first).
_PAIRS = """
    SELECT {columns} FROM {decision} a
    JOIN {decision} b ON b.item_id = a.item_id AND b.reviewer_id > a.reviewer_id
    JOIN {item} i ON i.id = a.item_id
    {join}
    WHERE i.queue_id = %s AND a.status <> '' AND b.status <> ''
"""


def _pairs(columns: str, *, labels_of: str = "") -> str:
    """``_PAIRS`` selecting ``columns``, with the label links (``dl``) of decision ``labels_of``
    (``a`` or ``b``) if asked."""
    quote = connection.ops.quote_name
    join = ""
    if labels_of:
        link = quote(BlindDecision.labels.through._meta.db_table)
        join = f"JOIN {link} dl ON dl.blinddecision_id = {labels_of}.id"
    return _PAIRS.format(
        columns=columns,
        decision=quote(BlindDecision._meta.db_table),
        item=quote(QueueItem._meta.db_table),
        join=join,
    )


def _given(statuses: dict, value: str) -> Counter:
    """The status table as "gave ``value``" or not, by each reviewer."""
    table: Counter = Counter()
    for (first, second), n in statuses.items():
        table[first == value, second == value] += n
    return table


def _label_table(table: Counter, items: int) -> Counter:
    """Whether each reviewer gave the label, over the ``items`` pairs (those not counted in
    ``table``: neither did)."""
    table = Counter(table)
    table[False, False] += items - sum(table.values())
    return table


def _binary(name: str, table: Counter, kappa) -> Kappa:
    first = sum(n for (a, _), n in table.items() if a)
    second = sum(n for (_, b), n in table.items() if b)
    return Kappa(name, kappa(table), observed_agreement(table), first, second)


def own_decisions(items, user) -> dict[int, BlindDecision]:
    """The user's decisions on those of ``items`` that are theirs, by item id."""
    return {d.item_id: d for d in BlindDecision.objects.filter(item__in=items, reviewer=user)}


def decided_counts(items) -> dict[int, int]:
    """How many of its two decisions each item has (ids to counts): a number, not whose."""
    rows = (
        BlindDecision.objects.filter(item__in=items)
        .exclude(status="")
        .values("item_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {row["item_id"]: row["n"] for row in rows}


def decisions_of(item: QueueItem) -> list[BlindDecision]:
    """Both decisions on an item, with their labels, in the order of their reviewers."""
    return with_decisions([item])[0][1]


def labels_for(queue: ReviewQueue) -> QuerySet[ReviewLabel]:
    """The labels the reviewers may give: the suite's team's."""
    return labels_of_team(queue.submission.suite.team_id)
