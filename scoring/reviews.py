"""Reviewers' decisions on runs: status, assignee and comments, with their history.

A run has no ``Review`` row until someone triages it (untriaged is the default), so a
submission of 100,000 runs costs nothing until people work on it. Every change is also an
event in the run's history. Changes to many runs at once (the runs of a filter or a
failure group) are written in bulk, in one transaction.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q, QuerySet

from .models import Review, ReviewEvent, ReviewStatus, Run
from .problems import record_decision

BULK_BATCH = 2000


def with_status(runs: QuerySet[Run], status: str) -> QuerySet[Run]:
    """The runs whose review status is ``status`` (a run never reviewed is untriaged)."""
    if status == ReviewStatus.UNTRIAGED:
        return runs.filter(Q(review__isnull=True) | Q(review__status=status))
    return runs.filter(review__status=status)


def set_status(runs: QuerySet[Run], status: str, author) -> int:
    """Set the review status of every run in ``runs``; returns how many changed. Runs that
    already have that status are left alone (and get no event)."""
    ReviewStatus(status)  # a ValueError for anything else
    with transaction.atomic():
        changed = _update(runs.exclude(pk__in=with_status(runs, status).values("pk")), author,
                          status=status, event=ReviewEvent.Kind.STATUS)  # fmt: skip
        record_decision(runs, status, author)  # offered again where the failure comes back
    return changed


def assign(runs: QuerySet[Run], assignee, author) -> int:
    """Assign every run in ``runs`` to ``assignee`` (None to nobody); returns how many
    changed."""
    if assignee is None:
        unchanged = runs.filter(Q(review__isnull=True) | Q(review__assignee__isnull=True))
    else:
        unchanged = runs.filter(review__assignee=assignee)
    return _update(runs.exclude(pk__in=unchanged.values("pk")), author,
                   assignee=assignee, event=ReviewEvent.Kind.ASSIGNEE)  # fmt: skip


def comment(run: Run, text: str, author) -> ReviewEvent:
    """Add a comment to the run's thread."""
    text = text.strip()
    if not text:
        raise ValueError("a comment needs some text")
    return ReviewEvent.objects.create(
        run=run, author=author, kind=ReviewEvent.Kind.COMMENT, text=text
    )


def _update(runs: QuerySet[Run], author, *, event: str, **fields) -> int:
    with transaction.atomic():
        # Distinct: a filter that joins (through predicates, say) may name a run twice, and
        # one upsert may not touch a row twice.
        pairs = list(runs.order_by().values_list("pk", "submission_id").distinct())
        for start in range(0, len(pairs), BULK_BATCH):
            batch = pairs[start : start + BULK_BATCH]
            Review.objects.bulk_create(
                [Review(run_id=pk, submission_id=sid, **fields) for pk, sid in batch],
                update_conflicts=True,
                unique_fields=["run"],
                update_fields=[*fields, "updated"],
            )
            ReviewEvent.objects.bulk_create(
                [ReviewEvent(run_id=pk, author=author, kind=event, **fields) for pk, _ in batch]
            )
    return len(pairs)


def history(run: Run) -> QuerySet[ReviewEvent]:
    """The run's review events, oldest first, with their authors."""
    return run.review_events.select_related("author", "assignee")


def review_of(run: Run) -> Review:
    """The run's review, or an unsaved untriaged one when nobody has triaged it yet (the
    row is made by the first change)."""
    review = Review.objects.filter(run=run).select_related("assignee").first()
    return review or Review(run=run, submission_id=run.submission_id)
