"""Reviewers' decisions on runs: status, the team's labels, assignee and comments, with
their history; and the double-blind rule, which every change here obeys.

A run has no ``Review`` row until someone triages it (untriaged is the default), so a
submission of 100,000 runs costs nothing until people work on it. Every change is also an
event in the run's history. Changes to many runs at once (the runs of a filter or a
failure group) are written in bulk, in one transaction.

A status set on runs is also the decision on their known failures
(docs/review.md#known-failures), kept on each one's ``KnownFailure`` row and offered again
where the same failure comes back (``scoring.results.known_failures``);
``apply_earlier_decisions`` sets those earlier decisions on the runs failing that way.

While a reviewer reviews a run blind, in a double-blind queue whose item is not resolved
(docs/review.md#double-blind-review), nothing here lets them change its review: a change of
one run raises ``ReviewingBlind``, a change of many leaves that run alone. The queue writes
the run's review itself (``write_queue_outcome``) once both decisions are in, or the
disagreement is resolved.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.template.defaultfilters import pluralize
from django.utils import timezone

from cases.models import ReviewLabel
from scoring.models import (
    BlindDecision,
    KnownFailure,
    LabelLink,
    QueueItem,
    Result,
    Review,
    ReviewEvent,
    ReviewStatus,
    Run,
    Submission,
    with_review_status,
)
from scoring.results.known_failures import offered, runs_of

BULK_BATCH = 2000


class ReviewingBlind(PermissionError):
    """The user reviews the run blind in an open double-blind queue: its review is written
    from the queue's decisions, not changed by hand."""


def blind_item(run: Run, user, queue_id: str = "") -> QueueItem | None:
    """The run as an item the user reviews blind, not resolved: of queue ``queue_id`` if
    it is one of those, else of the first queue; None when the user does not."""
    decisions = BlindDecision.objects.open_for(user).filter(item__run=run)
    decisions = decisions.select_related("item__queue")
    wanted = decisions.filter(item__queue_id=queue_id) if queue_id.isdigit() else decisions.none()
    decision = wanted.first() or decisions.order_by("item__queue_id").first()
    return decision.item if decision else None


def _refuse_if_blind(run: Run, user) -> None:
    if item := blind_item(run, user):
        raise ReviewingBlind(
            f"You are reviewing this run blind in the double-blind queue “{item.queue.name}”: "
            "decide it there. Its review is written when both decisions are in (and agree) "
            "or the disagreement is resolved."
        )


def without_blind(runs: QuerySet[Run], user) -> tuple[QuerySet[Run], int]:
    """``runs`` less those the user reviews blind, and how many those are."""
    blind = BlindDecision.objects.open_for(user).filter(item__run__in=runs)
    blind_runs = blind.values("item__run_id")
    left_out = blind_runs.distinct().count()
    return (runs.exclude(pk__in=blind_runs) if left_out else runs), left_out


# --- changes by a reviewer: never of a run they review blind ---------------------------------


def set_status(runs: QuerySet[Run], status: str, author) -> int:
    """Set the review status of every run in ``runs`` (but those ``author`` reviews blind);
    returns how many changed. Runs that already have that status are left alone (and get
    no event)."""
    return _set_status(without_blind(runs, author)[0], status, author)


def assign(runs: QuerySet[Run], assignee, author) -> int:
    """Assign every run in ``runs`` (but those ``author`` reviews blind) to ``assignee``
    (None to nobody); returns how many changed."""
    runs = without_blind(runs, author)[0]
    if assignee is None:
        unchanged = runs.filter(Q(review__isnull=True) | Q(review__assignee__isnull=True))
    else:
        unchanged = runs.filter(review__assignee=assignee)
    return _update(runs.exclude(pk__in=unchanged.values("pk")), author,
                   assignee=assignee, event=ReviewEvent.Kind.ASSIGNEE)  # fmt: skip


def add_label(runs: QuerySet[Run], label: ReviewLabel, author) -> int:
    """Put ``label`` on every run of ``runs`` that lacks it (but those ``author`` reviews
    blind); returns how many changed."""
    return _add_label(without_blind(runs, author)[0], label, author)


def remove_label(runs: QuerySet[Run], label: ReviewLabel, author) -> int:
    """Take ``label`` off every run of ``runs`` that has it (but those ``author`` reviews
    blind); returns how many changed."""
    return _remove_label(without_blind(runs, author)[0], label, author)


def set_labels(runs: QuerySet[Run], labels: Iterable[ReviewLabel], author) -> None:
    """Make ``labels`` exactly the labels of every run of ``runs`` (but those ``author``
    reviews blind)."""
    _set_labels(without_blind(runs, author)[0], labels, author)


def toggle_label(run: Run, label: ReviewLabel, author) -> bool:
    """Put ``label`` on the run, or take it off if it has it; returns whether it has it now.
    Raises ``ReviewingBlind``."""
    _refuse_if_blind(run, author)
    runs = Run.objects.filter(pk=run.pk)
    if _add_label(runs, label, author):
        return True
    _remove_label(runs, label, author)
    return False


def comment(run: Run, text: str, author) -> ReviewEvent:
    """Add a comment to the run's thread. Raises ``ReviewingBlind`` (the other reviewer
    would read it)."""
    text = text.strip()
    if not text:
        raise ValueError("a comment needs some text")
    _refuse_if_blind(run, author)
    return ReviewEvent.objects.create(
        run=run, author=author, kind=ReviewEvent.Kind.COMMENT, text=text
    )


UNCHANGED = object()  # an assignee left as it is


def review_run(
    run: Run, author, *, status: str = "", assignee=UNCHANGED, label=None, comment_text=""
) -> str:
    """The run page's change of one run: any of its status, assignee, a label toggled and
    a comment, together. Returns what it did in words, for the page to announce
    (docs/review.md#keyboard-and-screen-readers). Raises ``ReviewingBlind`` before changing
    anything."""
    _refuse_if_blind(run, author)
    runs = Run.objects.filter(pk=run.pk)
    done = []
    with transaction.atomic():
        if status:
            _set_status(runs, status, author)
            done.append(f"Status set to {ReviewStatus(status).label}")
        if assignee is not UNCHANGED:
            assign(runs, assignee, author)
            done.append(f"Assigned to {assignee.get_username()}" if assignee else "Unassigned")
        if label is not None:
            on = toggle_label(run, label, author)
            done.append(f"Label {label.name} {'put on' if on else 'taken off'}")
        if comment_text:
            comment(run, comment_text, author)
            done.append("Comment posted")
    return ". ".join(done)


@dataclass(frozen=True)
class BulkReview:
    """What a change of many runs did, for the page to say."""

    runs: int  # changed or not, but for those left out
    left_out: int  # reviewed blind by the author
    changes: tuple[str, ...]  # a sentence per change made

    @property
    def notice(self) -> str:
        done = list(self.changes)
        if self.left_out:
            them = pluralize(self.left_out, "it,them")
            done.insert(
                0,
                f"{self.left_out} run{pluralize(self.left_out)} left alone: you review {them} "
                "blind in a double-blind queue.",
            )
        return " ".join(done)


def review_runs(
    runs: QuerySet[Run],
    author,
    *,
    status: str = "",
    assignee=UNCHANGED,
    label_change: tuple[ReviewLabel, bool] | None = None,
) -> BulkReview:
    """A change of every run of ``runs`` (a filter's, a failure group's): a status, an
    assignee, a label put on (``(label, True)``) or taken off; in one transaction."""
    runs, left_out = without_blind(runs, author)
    total = runs.count()
    of_total = f"of {total} run{pluralize(total)}"
    changes = []
    with transaction.atomic():
        if status:
            changed = _set_status(runs, status, author)
            changes.append(f"Status “{ReviewStatus(status).label}”: {changed} {of_total} changed.")
        if assignee is not UNCHANGED:
            changed = assign(runs, assignee, author)
            name = assignee.get_username() if assignee else "nobody"
            changes.append(f"Assigned to {name}: {changed} {of_total} changed.")
        if label_change:
            label, adding = label_change
            if adding:
                changed = _add_label(runs, label, author)
                changes.append(f"Label “{label.name}” put on {changed} {of_total}.")
            else:
                changed = _remove_label(runs, label, author)
                changes.append(f"Label “{label.name}” taken off {changed} {of_total}.")
    return BulkReview(total, left_out, tuple(changes))


def apply_earlier_decisions(submission: Submission, author, signature: str = "") -> int:
    """Set each earlier decision on a known failure (or the one on ``signature``) on this
    submission's runs that fail that way; how many runs changed. Not on the runs the author
    reviews blind: their review comes from the queue."""
    known = offered(submission)
    if signature:
        known = known.filter(signature=signature)
    changed = 0
    for status in set(known.values_list("status", flat=True)):
        signatures = known.filter(status=status).values("signature")
        changed += set_status(runs_of(submission, signatures), status, author)
    return changed


# --- the double-blind queue's own outcome ----------------------------------------------------


def write_queue_outcome(item: QueueItem, status: str, labels: Iterable[ReviewLabel], author):
    """Make the decision a double-blind queue reached on ``item`` (both reviewers agreed,
    or someone resolved their disagreement) its run's review. The one change that does
    not leave out runs reviewed blind: it is how their review gets written."""
    runs = Run.objects.filter(pk=item.run_id)
    _set_status(runs, status, author)
    _set_labels(runs, labels, author)


# --- the writes themselves -------------------------------------------------------------------


def _set_status(runs: QuerySet[Run], status: str, author) -> int:
    ReviewStatus(status)  # a ValueError for anything else
    with transaction.atomic():
        unchanged = with_review_status(runs, status).values("pk")
        changed = _update(runs.exclude(pk__in=unchanged), author,
                          status=status, event=ReviewEvent.Kind.STATUS)  # fmt: skip
        _record_decision(runs, status, author)  # offered again where the failure comes back
    return changed


def _add_label(runs: QuerySet[Run], label: ReviewLabel, author) -> int:
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


def _remove_label(runs: QuerySet[Run], label: ReviewLabel, author) -> int:
    with transaction.atomic():
        links = LabelLink.objects.filter(reviewlabel=label, review__run__in=runs.values("pk"))
        pairs = [(pk, None) for pk in links.values_list("review_id", flat=True)]
        links.delete()
        _label_events(pairs, label, author, ReviewEvent.Kind.UNLABELLED)
    return len(pairs)


def _set_labels(runs: QuerySet[Run], labels: Iterable[ReviewLabel], author) -> None:
    """Make ``labels`` exactly the labels of every run of ``runs``."""
    labels = list(labels)
    with transaction.atomic():
        for label in labels:
            _add_label(runs, label, author)
        for label in (
            ReviewLabel.objects.filter(reviews__run__in=runs.values("pk"))
            .exclude(pk__in=[label.pk for label in labels])
            .distinct()
        ):
            _remove_label(runs, label, author)


def _record_decision(runs: QuerySet[Run], status: str, author) -> None:
    """Keep ``status``, just set on ``runs``, as the decision on their known failures."""
    if status == ReviewStatus.UNTRIAGED:
        return  # taking a decision back decides nothing about the failure
    rows = (
        Result.objects.filter(run__in=runs.values("pk"))
        .exclude(signature="")
        .values_list("signature", "run__case_key", "submission_id", "submission__suite_id")
        .order_by()
        .distinct()
    )
    now = timezone.now()
    decided = {
        (suite_id, signature): KnownFailure(
            suite_id=suite_id,
            signature=signature,
            case_key=case_key,
            status=status,
            decided_by=author,
            decided_in_id=submission_id,
            decided_at=now,
        )
        for signature, case_key, submission_id, suite_id in rows
    }
    KnownFailure.objects.bulk_create(
        decided.values(),
        update_conflicts=True,
        unique_fields=["suite", "signature"],
        update_fields=["status", "decided_by", "decided_in", "decided_at"],
    )


def _without_label(runs: QuerySet[Run], label: ReviewLabel) -> QuerySet[Run]:
    labelled = LabelLink.objects.filter(reviewlabel=label).values("review_id")
    return runs.order_by().exclude(pk__in=labelled)


def _label_events(pairs, label: ReviewLabel, author, kind: str) -> None:
    ReviewEvent.objects.bulk_create(
        [ReviewEvent(run_id=pk, author=author, kind=kind, text=label.name) for pk, _ in pairs],
        batch_size=BULK_BATCH,
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
    found: dict[int, dict[str, Any]] = {
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
