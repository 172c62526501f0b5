"""Reviewers' work on runs: each run's review and its history, review queues and their
items, double-blind decisions, and known failures (a failure's signature tracked across a
suite's submissions, with the last decision made on it).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.db import models
from django.db.models import Q, QuerySet
from django.urls import reverse

from cases.models import ReviewLabel, Suite

from .submissions import Run, Submission


class ReviewStatus(models.TextChoices):
    UNTRIAGED = "untriaged", "untriaged"
    REGRESSION = "regression", "regression"
    EXPECTATION_WRONG = "expectation_wrong", "expectation wrong"
    FLAKY = "flaky", "flaky"
    WONT_FIX = "wont_fix", "won't fix"
    FIXED = "fixed", "fixed"  # the agent was fixed: the same failure later is failing again


class Review(models.Model):
    """A reviewer's decision on a run. Made the first time someone triages the run: a run
    without one is untriaged. It belongs to the run, not to its result, so it outlives
    re-scoring (the reviewer fixes the suite, re-scores, and sees the decision beside the
    new verdict)."""

    run = models.OneToOneField(
        Run, on_delete=models.CASCADE, primary_key=True, related_name="review"
    )
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="reviews", db_index=False
    )
    status = models.CharField(
        max_length=20, choices=ReviewStatus.choices, default=ReviewStatus.UNTRIAGED
    )
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_reviews",
    )
    labels = models.ManyToManyField(ReviewLabel, blank=True, related_name="reviews")
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["submission", "status"])]

    def __str__(self):
        return f"{self.get_status_display()}: run {self.run_id}"


LabelLink = Review.labels.through  # a label on a run's review


def with_review_status(runs: QuerySet[Run], status: str) -> QuerySet[Run]:
    """The runs whose review status is ``status`` (a run never reviewed is untriaged)."""
    if status == ReviewStatus.UNTRIAGED:
        return runs.filter(Q(review__isnull=True) | Q(review__status=status))
    return runs.filter(review__status=status)


class ReviewEvent(models.Model):
    """One entry of a run's review history: a status set, an assignment, a label put on or
    taken off (its name in ``text``, which outlives the label), or a comment."""

    class Kind(models.TextChoices):
        STATUS = "status", "status"
        ASSIGNEE = "assignee", "assignee"
        LABELLED = "labelled", "labelled"
        UNLABELLED = "unlabelled", "unlabelled"
        COMMENT = "comment", "comment"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="review_events")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    status = models.CharField(max_length=20, choices=ReviewStatus.choices, blank=True)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "created", "pk"]

    def __str__(self):
        return f"{self.kind} on run {self.run_id}"


class ReviewQueue(models.Model):
    """A list of runs to review, worked through one "next item" at a time by its reviewers.

    Made from the runs table's filters as they stood (``filter_query``) or from one failure
    group (``group``, a failing predicate's label): the items are fixed when it is made, so
    a run scored or triaged later does not move other reviewers' places.

    A double-blind queue (``scoring.review.blind``) gives each item to two reviewers, who decide
    without seeing each other's decision; the run's review is written only when the item
    is resolved."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="queues")
    name = models.CharField(max_length=200)
    filter_query = models.TextField(blank=True, help_text="the runs table's query string")
    group = models.TextField(blank=True, help_text="the failing predicate's label")
    double_blind = models.BooleanField(default=False)
    # A double-blind queue's agreement tables (``scoring.review.blind.agreement``), kept once both
    # reviewers have decided every item: decisions cannot change after that.
    agreement_tables = models.JSONField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["submission", "-created"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("queue", args=[self.pk])

    def runs_url(self) -> str:
        """The submission's runs table, filtered to the runs the queue was made from."""
        query = urlencode({"predicate": self.group}) if self.group else self.filter_query
        return f"{reverse('submission', args=[self.submission_id])}?{query}#runs-section"


class QueueItem(models.Model):
    """One run of a queue. Whether it is done is not stored: it is done when its run's
    review status is anything but untriaged, however that status was set (from the queue,
    the run page, or a bulk change to a failure group), and undone again if someone sets
    it back. ``reserved_by`` holds it for one reviewer until ``reserved_until`` so that two
    never triage the same run at once."""

    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="items")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="queue_items")
    position = models.PositiveIntegerField(help_text="1, 2, 3, ... in the order built")
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="queue_items",
    )
    reserved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reserved_until = models.DateTimeField(null=True, blank=True)
    # In a double-blind queue: when the run's review was written from the two decisions
    # (``resolved_by`` None: they agreed; else who chose between them).
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["queue", "position"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "position"], name="queue_position_unique"),
            models.UniqueConstraint(fields=["queue", "run"], name="queue_run_once"),
        ]

    def __str__(self):
        return f"{self.queue} #{self.position}"


class BlindDecisionQuerySet(models.QuerySet):
    def open_for(self, user) -> BlindDecisionQuerySet:
        """The user's decisions on items not yet resolved: the runs they review blind."""
        return self.filter(reviewer=user, item__resolved_at__isnull=True)


class BlindDecision(models.Model):
    """One reviewer's decision on an item of a double-blind queue, hidden from the other
    reviewer until the item is resolved. Made, undecided (``status`` blank), when the item
    is dealt out, so that each reviewer's share and progress are rows to count."""

    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="decisions")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="blind_decisions"
    )
    status = models.CharField(max_length=20, choices=ReviewStatus.choices, blank=True)
    labels = models.ManyToManyField(ReviewLabel, blank=True, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)

    objects = BlindDecisionQuerySet.as_manager()

    class Meta:
        ordering = ["item", "reviewer"]
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="one_decision_per_reviewer")
        ]

    def __str__(self):
        return f"{self.reviewer} on {self.item}: {self.status or 'undecided'}"


class KnownFailure(models.Model):
    """A failure tracked across the suite's submissions: the runs whose reports have the same
    signature (case key and causes). It holds the last triage decision made on any of its
    runs, so that the same failure in another submission is offered that decision, and one
    marked fixed that fails in a later submission is flagged "fixed, failing again". Made
    on the first decision."""

    # Not a column: the submission page sets it to the runs of the submission it shows that
    # fail this way (``scoring.results.known_failures.runs_here``).
    runs_here: int

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="known_failures")
    signature = models.CharField(max_length=32)
    case_key = models.TextField()
    status = models.CharField(max_length=20, choices=ReviewStatus.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_in = models.ForeignKey(
        Submission, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["suite", "signature"], name="problem_signature_unique")
        ]

    def __str__(self):
        return f"{self.case_key}: {self.get_status_display()}"


class PrunedRuns(models.Model):
    """A note that retention removed reviewed runs (docs/operations.md#retention): a run with
    a status other than untriaged, a comment or a label. Kept on the suite's page, so that
    no reviewer's work goes without a word."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="pruned_runs")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    days = models.PositiveIntegerField(help_text="the retention the runs were kept for")
    reviewed_runs = models.PositiveIntegerField()
    # What the reviews held: {"statuses": {status: runs}, "comments": n, "labels": {name: runs}}.
    lost = models.JSONField(default=dict)

    class Meta:
        ordering = ["suite", "-created"]

    def __str__(self):
        return f"{self.reviewed_runs} reviewed runs of submission {self.submission_id} pruned"

    @property
    def statuses(self) -> list[tuple[str, int]]:
        """The statuses the removed runs had, as the pages name them, with their runs."""
        return [(ReviewStatus(s).label, n) for s, n in self.lost.get("statuses", {}).items()]
