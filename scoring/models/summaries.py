"""What a submission's finished scoring is summarized into, so that pages read a few rows
rather than aggregate every result: failures by cause, failing runs by signature, and
each case's trials (docs/pipeline.md#summaries). Rows of an older ``generation`` than the
submission's are stale and never read.
"""

from django.db import models

from .submissions import Submission


class FailureSummary(models.Model):
    """One row of a submission's failures grouped by cause as the failures page shows them
    unfiltered (``scoring.results.failures``), stored once its scoring is done: the page then reads
    a few rows rather than aggregate every failed predicate of 100,000 runs. It depends on
    the results alone (not on reviews), so only scoring again changes it; rows of an older
    ``generation`` than the submission's are stale and never read."""

    class Level(models.TextChoices):
        FAILING = "failing", "failing runs"  # one row: the runs that did not pass
        CAUSE = "cause", "cause kind and tool"
        ARGUMENT = "argument", "argument"  # the most common under each cause
        PREDICATE = "predicate", "exact predicate"  # likewise

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    generation = models.PositiveIntegerField()
    # The rows in the page's order: each cause (most runs first) followed by its arguments
    # and its exact predicates (likewise), so that ties fall the same way as when grouped.
    position = models.PositiveIntegerField()
    level = models.CharField(max_length=10, choices=Level.choices)
    cause_kind = models.CharField(max_length=20, blank=True)
    cause_tool = models.TextField(blank=True)
    name = models.TextField(blank=True, help_text="the argument, or the predicate's label")
    runs = models.PositiveIntegerField()
    cases = models.PositiveIntegerField(null=True, help_text="none for exact predicates")

    class Meta:
        indexes = [
            models.Index(
                fields=["submission", "generation", "level", "position"], name="failure_summary"
            )
        ]

    def __str__(self):
        return f"submission {self.submission_id} {self.level}: {self.cause_kind} {self.name}"


class KnownFailureSummary(models.Model):
    """A submission's failing runs counted by signature
    (``scoring.results.known_failures``), stored with its ``FailureSummary`` once its
    scoring is done: the suite's open known failures add up a few rows per submission rather
    than group every failing run of ten submissions. Rows of an older ``generation`` than
    the submission's are stale and never read."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    generation = models.PositiveIntegerField()
    signature = models.CharField(max_length=32)
    case_key = models.TextField()
    runs = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(
                fields=["submission", "generation", "signature"],
                include=["case_key", "runs"],
                name="problem_summary",
            )
        ]

    def __str__(self):
        return f"submission {self.submission_id} {self.signature}: {self.runs} runs"


class CaseSummary(models.Model):
    """A submission's scored runs of one case, stored once its scoring is done: which trials
    were scored and which passed, and the runs a comparison opens for the case. Comparing
    two submissions (``scoring.results.comparison``) then reads a row per case on either side
    rather than every run of both. Rows of an older ``generation`` than the submission's
    are stale and never read."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    generation = models.PositiveIntegerField()
    case_key = models.TextField()
    runs = models.PositiveIntegerField()  # scored
    passed = models.PositiveIntegerField()
    # The verdicts of the scored trials, compactly: a segment per stretch of consecutive
    # trials, "first trial:verdicts" ("p" passed, "f" did not), segments by trial and
    # separated by spaces: "0:ppfp 7:f". A submission's usual trials 0 to N make one.
    verdicts = models.TextField()
    # [run id, trial] of the first trial (by number) that passed, of the first that did not
    # (scored or not), and of the first scored; null where there is none.
    first_passing = models.JSONField(null=True)
    first_not_passing = models.JSONField(null=True)
    first_scored = models.JSONField(null=True)
    # The mean per run of its runs' cost and wall time, over those that recorded them
    # (docs/formats.md#usage); null where none did.
    cost_usd = models.FloatField(null=True)
    duration_ms = models.FloatField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["submission", "generation", "case_key"], name="case_summary")
        ]

    def __str__(self):
        return f"submission {self.submission_id} {self.case_key}: {self.passed}/{self.runs}"
