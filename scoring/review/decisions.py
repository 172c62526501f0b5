"""Reviewers' decisions on runs: status, the team's labels, assignee and comments, with
their history.

A run has no ``Review`` row until someone triages it (untriaged is the default), so a
submission of 100,000 runs costs nothing until people work on it. Every change is also an
event in the run's history. Changes to many runs at once (the runs of a filter or a
failure group) are written in bulk, in one transaction.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q, QuerySet

from cases.models import ReviewLabel
from scoring.models import Review, ReviewEvent, ReviewStatus, Run
from scoring.results.known_failures import record_decision

BULK_BATCH = 2000
LabelLink = Review.labels.through  # a label on a run's review


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


def add_label(runs: QuerySet[Run], label: ReviewLabel, author) -> int:
    """Put ``label`` on every run of ``runs`` that lacks it; returns how many changed."""
    with transaction.atomic():
        pairs = list(_without_label(runs, label).values_list("pk", "submission_id").distinct())
        for start in range(0, len(pairs), BULK_BATCH):
            batch = pairs[start : start + BULK_BATCH]
            # A run gets its review row (untriaged) with its first label.
            Review.objects.bulk_create(
                [Review(run_id=pk, submission_id=sid) for pk, sid in batch], ignore_conflicts=True
            )
            LabelLink.objects.bulk_create(
                [LabelLink(review_id=pk, reviewlabel_id=label.pk) for pk, _ in batch]
            )
            _label_events(batch, label, author, ReviewEvent.Kind.LABELLED)
    return len(pairs)


def remove_label(runs: QuerySet[Run], label: ReviewLabel, author) -> int:
    """Take ``label`` off every run of ``runs`` that has it; returns how many changed."""
    with transaction.atomic():
        links = LabelLink.objects.filter(reviewlabel=label, review__run__in=runs.values("pk"))
        pairs = [(pk, None) for pk in links.values_list("review_id", flat=True)]
        links.delete()
        _label_events(pairs, label, author, ReviewEvent.Kind.UNLABELLED)
    return len(pairs)


def toggle_label(run: Run, label: ReviewLabel, author) -> bool:
    """Put ``label`` on the run, or take it off if it has it; returns whether it has it now."""
    runs = Run.objects.filter(pk=run.pk)
    if add_label(runs, label, author):
        return True
    remove_label(runs, label, author)
    return False


def set_labels(runs: QuerySet[Run], labels, author) -> None:
    """Make ``labels`` exactly the labels of every run of ``runs``."""
    labels = list(labels)
    with transaction.atomic():
        for label in labels:
            add_label(runs, label, author)
        for label in (
            ReviewLabel.objects.filter(reviews__run__in=runs.values("pk"))
            .exclude(pk__in=[label.pk for label in labels])
            .distinct()
        ):
            remove_label(runs, label, author)


def _without_label(runs: QuerySet[Run], label: ReviewLabel) -> QuerySet[Run]:
    labelled = LabelLink.objects.filter(reviewlabel=label).values("review_id")
    return runs.order_by().exclude(pk__in=labelled)


def _label_events(pairs, label: ReviewLabel, author, kind: str) -> None:
    ReviewEvent.objects.bulk_create(
        [ReviewEvent(run_id=pk, author=author, kind=kind, text=label.name) for pk, _ in pairs],
        batch_size=BULK_BATCH,
    )


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


def decisions_of_runs(run_ids: list[int]) -> dict[int, dict]:
    """The review status and label names of those runs that have a review, by run id (two
    queries, whatever their number)."""
    found = {
        pk: {"status": status, "labels": []}
        for pk, status in Review.objects.filter(run_id__in=run_ids).values_list("run_id", "status")
    }
    links = LabelLink.objects.filter(review_id__in=run_ids).order_by("reviewlabel__name")
    for run_id, name in links.values_list("review_id", "reviewlabel__name"):
        found[run_id]["labels"].append(name)
    return found


def labels_of(run: Run) -> list[ReviewLabel]:
    """The labels on the run, by name."""
    return list(ReviewLabel.objects.filter(reviews__run=run).order_by("name"))


def labels_of_team(team_id: int) -> QuerySet[ReviewLabel]:
    """The review labels a team offers, by name."""
    return ReviewLabel.objects.filter(team_id=team_id).order_by("name")


def team_labels(run: Run) -> QuerySet[ReviewLabel]:
    """The labels the run's suite's team offers."""
    return labels_of_team(run.submission.suite.team_id)
