"""Uploads of recorded runs, and their results.

A Submission is one uploaded run file, scored against one version of a suite. Its runs are
stored as canonical runs (DESIGN.md §3.2); each run gets exactly one Result (the §3.3
report) against the submission's current version, and one row per predicate, which the
results pages filter and group by. Re-scoring against another version keeps the earlier
version's counts and verdicts (EarlierScore, EarlierResult).
"""

import uuid
from urllib.parse import urlencode

from django.conf import settings
from django.db import models
from django.urls import reverse

from cases.fields import JSONTextField
from cases.models import ReviewLabel, Suite, SuiteVersion

from .runmeta import tool_names


class Status(models.TextChoices):
    # From the upload until every line is read (it may wait for a worker, or the broker).
    INGESTING = "ingesting", "ingesting"
    SCORING = "scoring", "scoring"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class Submission(models.Model):
    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="submissions")
    version = models.ForeignKey(SuiteVersion, on_delete=models.PROTECT, related_name="submissions")
    label = models.CharField(max_length=200, blank=True, help_text="e.g. the model's name")
    uploader = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    filename = models.CharField(max_length=255, blank=True)
    size = models.BigIntegerField(default=0, help_text="bytes uploaded")
    format = models.CharField(
        max_length=40, blank=True, help_text="forced run format, or empty to detect"
    )
    formats_seen = models.JSONField(default=list, blank=True)
    # What the runs table offers to show and filter by, gathered as the file is read (at
    # most ``scoring.runmeta`` limits): the tools the runs called, and their meta keys.
    tools_seen = models.JSONField(default=list, blank=True)
    meta_keys = models.JSONField(default=list, blank=True)
    case_field = models.CharField(
        max_length=200, blank=True, help_text="where each run names its case, when not `case`"
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.INGESTING, db_index=True
    )
    error = models.TextField(blank=True, help_text="why the submission failed")
    # Starting the ingestion again, or re-scoring, begins a new generation: tasks carry the
    # generation they were enqueued for, and one from an older generation does nothing.
    generation = models.PositiveIntegerField(default=0)
    # What cached figures of the submission are keyed on (with the generation). Not the id:
    # SQLite gives a rolled-back row's id out again, to a submission with other runs.
    uuid = models.UUIDField(default=uuid.uuid4, editable=False)
    chunk_runs = models.PositiveIntegerField(help_text="runs per scoring task")
    # Set on a live submission: the runs of a suite's OpenTelemetry traces with one label,
    # that UTC day (``scoring.traces``); null on an uploaded file's.
    live_day = models.DateField(null=True, blank=True)
    # Counts. ``scored`` and the verdicts are the sums of the ScoredChunk rows, so a chunk
    # scored twice never counts twice.
    stored_runs = models.PositiveIntegerField(default=0, help_text="valid runs kept")
    total = models.PositiveIntegerField(default=0, help_text="runs of cases in the version")
    scored = models.PositiveIntegerField(default=0)
    passed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    errored = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    unknown_cases = models.JSONField(
        default=dict,
        blank=True,
        help_text="case key → {runs, lines}: runs of no case in the version",
    )
    created = models.DateTimeField(auto_now_add=True)
    ingest_started = models.DateTimeField(null=True, blank=True)
    ingest_finished = models.DateTimeField(null=True, blank=True)
    scoring_finished = models.DateTimeField(null=True, blank=True)
    # Moved by every step, so the sweep can tell a stalled submission from a busy one.
    heartbeat = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["suite", "-created"])]
        constraints = [
            models.UniqueConstraint(
                fields=["suite", "label", "live_day"],
                condition=models.Q(live_day__isnull=False),
                name="one_live_submission_a_day",
            )
        ]

    def __str__(self):
        return f"{self.suite} #{self.pk} {self.label}".strip()

    def get_absolute_url(self):
        return reverse("submission", args=[self.pk])

    @property
    def finished(self) -> bool:
        return self.status in (Status.DONE, Status.FAILED)

    @property
    def progress(self) -> float:
        """Share of the runs scored so far, 0..1."""
        if self.status == Status.DONE:
            return 1.0
        return self.scored / self.total if self.total else 0.0

    @property
    def chunk_count(self) -> int:
        return -(-self.stored_runs // self.chunk_runs)

    def chunk_bounds(self, index: int) -> tuple[int, int]:
        """The first and last ``Run.seq`` of scoring chunk ``index``."""
        return index * self.chunk_runs + 1, (index + 1) * self.chunk_runs

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


class UploadChunk(models.Model):
    """A piece of the uploaded file, kept in the database so that any worker on any machine
    can read it (no shared disk) and nothing uploaded is lost if a worker or the broker is
    down when it arrives."""

    # Indexed by the unique constraint below, as the other tables' links to their
    # submission are by an index that starts with it: none needs one of its own.
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="chunks", db_index=False
    )
    index = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        ordering = ["submission", "index"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "index"], name="one_chunk_per_index")
        ]

    def __str__(self):
        return f"upload of submission {self.submission_id}, chunk {self.index}"


class InvalidLine(models.Model):
    """A line of the upload that holds no valid run, and why (the valid ones are kept)."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="invalid_lines", db_index=False
    )
    line = models.PositiveIntegerField()
    reason = models.TextField()

    class Meta:
        ordering = ["submission", "line"]
        indexes = [models.Index(fields=["submission", "line"])]

    def __str__(self):
        return f"line {self.line}: {self.reason}"


class Run(models.Model):
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="runs", db_index=False
    )
    seq = models.PositiveIntegerField(help_text="1, 2, 3, ... in file order; chunks are ranges")
    line = models.PositiveIntegerField(
        help_text="where the run was in the uploaded file (for an Inspect log, its sample)"
    )
    case_key = models.TextField()  # of any length: a run may name a case the suite lacks
    # ``cases.natural.natural_key(case_key)``: the runs table sorts by it in the database,
    # so that task-2 comes before task-10 on every page of it.
    case_order = models.TextField(default="", blank=True)
    trial = models.PositiveIntegerField()
    document = JSONTextField(help_text="the canonical run (§3.2), unknown fields kept")
    # A copy, for searching; null (no text reply) differs from "" (an empty one).
    final_text = models.TextField(null=True, blank=True)  # noqa: DJ001
    # The names of the tools it called, each on a line of its own and the text starting
    # with a newline ("\nget_weather\nsend_email\n"), so that one portable ``contains``
    # finds the runs that called a tool.
    tools = models.TextField(default="", blank=True)
    # The run's scalar ``meta`` values, bounded (``scoring.runmeta``): the runs table's
    # chosen columns, read without the document.
    meta_values = JSONTextField(default=dict, blank=True)

    class Meta:
        ordering = ["submission", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "seq"], name="run_seq_unique"),
            models.UniqueConstraint(
                fields=["submission", "case_key", "trial"], name="one_run_per_trial"
            ),
        ]
        indexes = [
            models.Index(
                fields=["submission", "case_order", "case_key", "trial"], name="run_natural_order"
            ),
            # The runs' cases without their wide rows (PostgreSQL): a tag filter's runs, the
            # cases of the failing runs a filter's failures are grouped by, and each case's
            # first passing runs in file order ("cases from these runs").
            models.Index(
                fields=["submission", "case_key", "seq"],
                include=["id", "trial"],
                name="run_cases_in_file_order",
            ),
        ]

    def __str__(self):
        return f"{self.case_key} trial {self.trial}"

    def get_absolute_url(self):
        return reverse("run", args=[self.submission_id, self.pk])

    @property
    def tool_names(self) -> list[str]:
        return tool_names(self.tools)


LABEL_LIMIT = 1000


class Verdict(models.TextChoices):
    PASS = "pass", "pass"
    FAIL = "fail", "fail"
    ERROR = "error", "error"


class Result(models.Model):
    """The one report (§3.3) of a run, against its submission's suite version."""

    # The run's own id: a worker knows it before inserting, so reports and their predicate
    # rows go in with one bulk copy each, no ids to read back.
    run = models.OneToOneField(
        Run, on_delete=models.CASCADE, primary_key=True, related_name="result"
    )
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="results", db_index=False
    )
    verdict = models.CharField(max_length=5, choices=Verdict.choices)
    report = JSONTextField()
    scored_at = models.DateTimeField(auto_now=True)
    # The failure's signature (``scoring.matcher.failure_signature``; blank when it passed):
    # the same problem in every submission of the suite.
    signature = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        indexes = [
            # With the run id inside, filtering and counting by verdict reads only the index
            # (PostgreSQL; elsewhere a plain index).
            models.Index(
                fields=["submission", "verdict"], include=["run"], name="result_verdict_runs"
            ),
            # A problem's runs in a submission, and the submissions it was seen in.
            models.Index(
                fields=["signature", "submission"],
                condition=~models.Q(signature=""),
                name="result_signatures",
            ),
        ]

    def __str__(self):
        return f"{self.verdict}: run {self.run_id}"


class PredicateResult(models.Model):
    """One predicate of one report, for filtering runs by failing predicate and grouping
    failures."""

    result = models.ForeignKey(Result, on_delete=models.CASCADE, related_name="predicates")
    # Reached through ``result`` for everything but the failing-label index below, so no
    # index of its own: ingestion writes several of these rows per run.
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    kind = models.CharField(max_length=20)
    index = models.IntegerField(null=True)
    label = models.TextField()  # at most LABEL_LIMIT characters: the row is indexed by it
    passed = models.BooleanField()
    detail = models.TextField(blank=True)
    # Why a failed predicate failed (DESIGN.md §3.3 ``cause``): blank on passed ones. Kept
    # in columns so that grouping failures by cause is a query, not a re-score.
    cause_kind = models.CharField(max_length=20, blank=True)
    cause_tool = models.TextField(blank=True)  # at most LABEL_LIMIT characters, as label
    cause_argument = models.TextField(blank=True)  # likewise

    class Meta:
        indexes = [
            # Failing predicates are what reviewers filter and group by.
            models.Index(
                fields=["submission", "label"],
                condition=models.Q(passed=False),
                include=["result"],
                name="failing_label_results",
            ),
            models.Index(
                fields=["submission", "cause_kind", "cause_tool"],
                condition=models.Q(passed=False),
                include=["result", "cause_argument"],
                name="failing_cause_results",
            ),
        ]

    def __str__(self):
        return f"{'passed' if self.passed else 'failed'}: {self.label}"


class EarlierScore(models.Model):
    """The submission's counts against a version it was scored against before being
    re-scored against another: kept, with its runs' ``EarlierResult`` rows, so that the
    earlier result stays readable and the suite's chart keeps its point. The current
    version's counts are the submission's own; re-scoring against a version listed here
    makes it current again, and its row goes."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="earlier_scores", db_index=False
    )
    version = models.ForeignKey(SuiteVersion, on_delete=models.PROTECT, related_name="+")
    total = models.PositiveIntegerField()
    scored = models.PositiveIntegerField()
    passed = models.PositiveIntegerField()
    failed = models.PositiveIntegerField()
    errored = models.PositiveIntegerField()
    scoring_finished = models.DateTimeField(null=True)

    class Meta:
        ordering = ["submission", "version__number"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "version"], name="earlier_score_per_version"
            )
        ]

    def __str__(self):
        return f"submission {self.submission_id} against version {self.version_id}"

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


class EarlierResult(models.Model):
    """A run's report against an earlier version of its submission (see ``EarlierScore``),
    as ``Result`` held it."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", db_index=False)
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    version = models.ForeignKey(SuiteVersion, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=5, choices=Verdict.choices)
    report = JSONTextField()
    signature = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "version"], name="earlier_result_per_version")
        ]
        indexes = [
            # A version's runs in file order (run ids are given out in it), page by page.
            models.Index(fields=["submission", "version", "run"], name="earlier_results")
        ]

    def __str__(self):
        return f"{self.verdict}: run {self.run_id} against version {self.version_id}"


class FailureSummary(models.Model):
    """One row of a submission's failures grouped by cause as the failures page shows them
    unfiltered (``scoring.failures``), stored once its scoring is done: the page then reads
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


class ProblemSummary(models.Model):
    """A submission's failing runs counted by signature (``scoring.problems``), stored with
    its ``FailureSummary`` once its scoring is done: the suite's open problems add up a few
    rows per submission rather than group every failing run of ten submissions. Rows of an
    older ``generation`` than the submission's are stale and never read."""

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
    two submissions (``scoring.comparison``) then reads a row per case on either side
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

    class Meta:
        indexes = [
            models.Index(fields=["submission", "generation", "case_key"], name="case_summary")
        ]

    def __str__(self):
        return f"submission {self.submission_id} {self.case_key}: {self.passed}/{self.runs}"


class ScoredChunk(models.Model):
    """A scoring chunk that is done: written with its results in one transaction, so the
    submission's counts (the sums of these rows) count each run once however often a chunk
    is re-run."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    generation = models.PositiveIntegerField()
    index = models.PositiveIntegerField()
    scored = models.PositiveIntegerField()
    passed = models.PositiveIntegerField()
    failed = models.PositiveIntegerField()
    errored = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "generation", "index"], name="chunk_scored_once"
            )
        ]

    def __str__(self):
        return f"submission {self.submission_id} chunk {self.index} (generation {self.generation})"


class ReviewStatus(models.TextChoices):
    UNTRIAGED = "untriaged", "untriaged"
    REGRESSION = "regression", "regression"
    EXPECTATION_WRONG = "expectation_wrong", "expectation wrong"
    FLAKY = "flaky", "flaky"
    WONT_FIX = "wont_fix", "won't fix"
    FIXED = "fixed", "fixed"  # the agent was fixed: the same failure again is a regression


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

    A double-blind queue (``scoring.blind``) gives each item to two reviewers, who decide
    without seeing each other's decision; the run's review is written only when the item
    is resolved."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="queues")
    name = models.CharField(max_length=200)
    filter_query = models.TextField(blank=True, help_text="the runs table's query string")
    group = models.TextField(blank=True, help_text="the failing predicate's label")
    double_blind = models.BooleanField(default=False)
    # A double-blind queue's agreement tables (``scoring.blind.agreement``), kept once both
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

    class Meta:
        ordering = ["item", "reviewer"]
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="one_decision_per_reviewer")
        ]

    def __str__(self):
        return f"{self.reviewer} on {self.item}: {self.status or 'undecided'}"


class Problem(models.Model):
    """A failure tracked across the suite's submissions: the runs whose reports have the same
    signature (case key and causes). It holds the last triage decision made on any of its
    runs, so that the same failure in a later submission is offered that decision, and one
    marked fixed that fails again is flagged as a regression. Made on the first decision."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="problems")
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


class Trace(models.Model):
    """An OpenTelemetry trace sent to ``/otlp/v1/traces``: its spans are kept as they come,
    and it is made into a run of its suite's live submission once it is complete
    (``scoring.traces``); spans that come later make the same run again."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="traces")
    trace_id = models.CharField(max_length=32, help_text="hex, as OpenTelemetry writes it")
    label = models.CharField(max_length=200, blank=True, help_text="casebook.label")
    sender = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    received = models.DateTimeField(help_text="when its latest span arrived")
    has_root = models.BooleanField(default=False)
    # Spans arrived since it was last made into a run (or it never was).
    pending = models.BooleanField(default=True)
    run = models.OneToOneField(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="trace"
    )
    problem = models.TextField(blank=True, help_text="why its spans make no valid run")
    # Its stored spans and their bytes, kept with them: the caps (CASEBOOK_TRACE_MAX_SPANS,
    # CASEBOOK_TRACE_MAX_BYTES) are checked against these, without reading the spans.
    span_count = models.IntegerField(default=0)
    span_bytes = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["suite", "trace_id"], name="one_trace_per_id")
        ]
        indexes = [
            models.Index(
                fields=["received"], condition=models.Q(pending=True), name="pending_traces"
            )
        ]

    def __str__(self):
        return f"trace {self.trace_id}"


class TraceSpan(models.Model):
    """One span of a trace, as it was sent: the OTLP ``Span`` message (protobuf). It is
    written as OTLP/JSON, which ``scoring.importers.otel`` reads, only when its trace is
    assembled: accepting an export stays cheap."""

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="spans", db_index=False)
    span_hex = models.CharField(max_length=16, help_text="its spanId, hex")
    start = models.BigIntegerField(help_text="startTimeUnixNano")
    case_key = models.TextField(blank=True, help_text="casebook.case, on the span or resource")
    case_value = models.TextField(
        blank=True, help_text="the value of the suite's case attribute (Suite.trace_case_attribute)"
    )
    data = models.BinaryField()

    class Meta:
        constraints = [
            # An export sent again (the exporter retries) stores each span once.
            models.UniqueConstraint(fields=["trace", "span_hex"], name="one_span_per_id")
        ]

    def __str__(self):
        return f"span {self.span_hex}"
