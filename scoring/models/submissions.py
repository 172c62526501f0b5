"""Submissions and their runs and results.

A Submission is one uploaded run file (or one day of a suite's live traces), scored
against one version of a suite. Its runs are stored as canonical runs
(docs/formats.md#run-files); each run gets exactly one Result (its report,
docs/formats.md#reports) against the submission's current version, and one row per
predicate, which the results pages filter and group by. Re-scoring against another
version keeps the earlier version's counts and verdicts (EarlierScore, EarlierResult).
"""

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse

from cases.fields import JSONTextField
from cases.models import Suite, SuiteVersion
from scoring.runfiles.runmeta import tool_names


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
    # most ``scoring.runfiles.runmeta`` limits): the tools the runs called, and their meta keys.
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
    # that UTC day (``scoring.live.traces``); null on an uploaded file's.
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
    # Of a live submission: traces no span of which was a model call or a tool call, and
    # none named its case, so no run (docs/live-traces.md#assembly).
    ignored_traces = models.PositiveIntegerField(default=0, db_default=0)
    unknown_cases = models.JSONField(
        default=dict,
        blank=True,
        help_text="case key → {runs, lines}: runs of no case in the version",
    )
    created = models.DateTimeField(auto_now_add=True)
    ingest_started = models.DateTimeField(null=True, blank=True)
    ingest_finished = models.DateTimeField(null=True, blank=True)
    scoring_finished = models.DateTimeField(null=True, blank=True)
    # When the results now shown were started again, by a re-score or a retry; null: they
    # were started by the upload. How long they took is counted from here.
    scoring_restarted = models.DateTimeField(null=True, blank=True)
    # Moved by every step, so the sweep can tell a stalled submission from a busy one.
    heartbeat = models.DateTimeField(auto_now=True)
    # When retention began removing its runs, results and reviews, and how many days the
    # suite kept them (docs/operations.md#retention): its counts and summaries stay.
    runs_pruned = models.DateTimeField(null=True, blank=True)
    # Its runs' usage summarized (``scoring.results.usage``) once scoring is done, with the
    # generation it is of; null until then.
    usage = models.JSONField(null=True, blank=True)
    retention_days = models.PositiveIntegerField(null=True, blank=True)

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
    def traces(self) -> int:
        """Of a live submission, the traces it has received: each made a run or, when it
        could not, an invalid line (``scoring.live.traces``)."""
        return self.stored_runs + self.invalid

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
    # Set on a block: a gzip member of its own, so that reading may start at it
    # (docs/pipeline.md#blocks). ``offset``: where its bytes start in the decompressed file;
    # ``lines_before``: the newlines before them; ``starts_line``: whether a line starts there.
    offset = models.BigIntegerField(null=True)
    lines_before = models.BigIntegerField(null=True)
    starts_line = models.BooleanField(default=False)

    class Meta:
        ordering = ["submission", "index"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "index"], name="one_chunk_per_index")
        ]

    def __str__(self):
        return f"upload of submission {self.submission_id}, chunk {self.index}"


class ReadRange(models.Model):
    """A stretch of an uploaded file's blocks, read into runs by one task of its own
    (docs/pipeline.md#ranges): the blocks ``first_chunk`` up to ``end_chunk`` (excluded), its
    first line's number, and the runs' ``seq`` window, which starts after ``first_seq``."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="read_ranges", db_index=False
    )
    generation = models.PositiveIntegerField()
    index = models.PositiveIntegerField()
    first_chunk = models.PositiveIntegerField()
    end_chunk = models.PositiveIntegerField()
    first_line = models.BigIntegerField()
    first_seq = models.PositiveIntegerField()
    # Claimed anew by each attempt at reading it: an older attempt's writes then stop.
    attempt = models.PositiveIntegerField(default=0)
    done = models.BooleanField(default=False)
    runs = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    last_line = models.BigIntegerField(default=0, help_text="the line of the last record read")
    first_problems = models.JSONField(default=list, blank=True)
    formats_seen = models.JSONField(default=list, blank=True)
    tools_seen = models.JSONField(default=list, blank=True)
    meta_keys = models.JSONField(default=list, blank=True)
    # Why the file could not be read past this range (its gzip broke off), on the last one.
    stop_reason = models.TextField(blank=True)
    heartbeat = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["submission", "generation", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "generation", "index"], name="one_read_range_per_index"
            )
        ]

    def __str__(self):
        return f"range {self.index} of submission {self.submission_id}"


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
    # Whether the file gave the trial; one it did not is numbered again, in file order, when
    # the file's ranges are settled (docs/pipeline.md#ranges).
    trial_given = models.BooleanField(default=True)
    document = JSONTextField(help_text="the canonical run, unknown fields kept")
    # A copy, for searching; null (no text reply) differs from "" (an empty one).
    final_text = models.TextField(null=True, blank=True)  # noqa: DJ001
    # The names of the tools it called, each on a line of its own and the text starting
    # with a newline ("\nget_weather\nsend_email\n"), so that one portable ``contains``
    # finds the runs that called a tool.
    tools = models.TextField(default="", blank=True)
    # The run's scalar ``meta`` values, bounded (``scoring.runfiles.runmeta``): the runs table's
    # chosen columns, read without the document.
    meta_values = JSONTextField(default=dict, blank=True)
    # The benchmark's own score of the run, when its file gave one (``meta.reward``, as
    # τ-bench writes it): shown beside the verdict, and compared with it
    # (``scoring.results.rewards``). Null when the file gave none.
    reward = models.FloatField(null=True, blank=True)
    # What the run cost (docs/formats.md#usage), copied from the document's ``usage`` so
    # that a submission's totals, percentiles and histograms are queries; null: not recorded.
    input_tokens = models.BigIntegerField(null=True, blank=True)
    output_tokens = models.BigIntegerField(null=True, blank=True)
    cached_input_tokens = models.BigIntegerField(null=True, blank=True)
    reasoning_tokens = models.BigIntegerField(null=True, blank=True)
    model_calls = models.BigIntegerField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    tool_duration_ms = models.FloatField(null=True, blank=True)  # the time in its tools
    cost_usd = models.FloatField(null=True, blank=True)
    model_names = models.TextField(null=True, blank=True)  # noqa: DJ001  # as ``tools``

    class Meta:
        ordering = ["submission", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "seq"], name="run_seq_unique"),
        ]
        indexes = [
            # Not unique: ranges read apart store a run's trial as given, and the step that
            # puts them together numbers them and refuses repeats (docs/pipeline.md#ranges).
            models.Index(fields=["submission", "case_key", "trial"], name="run_trials"),
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
    """The one report (docs/formats.md#reports) of a run, against its submission's suite
    version."""

    # The run's own id: a worker knows it before inserting, so reports and their predicate
    # rows go in with one bulk copy each, no ids to read back.
    run = models.OneToOneField(
        Run, on_delete=models.CASCADE, primary_key=True, related_name="result"
    )
    # Its run's, copied here for the indexes: no constraint in the database, as
    # ``PredicateResult``'s keys (docs/pipeline.md#scoring-chunks).
    submission = models.ForeignKey(
        Submission,
        on_delete=models.CASCADE,
        related_name="results",
        db_index=False,
        db_constraint=False,
    )
    verdict = models.CharField(max_length=5, choices=Verdict.choices)
    report = JSONTextField()
    scored_at = models.DateTimeField(auto_now=True)
    # The failure's signature (``scoring.matcher.failure_signature``; blank when it passed):
    # the same failure in every submission of the suite (docs/pipeline.md#signatures).
    signature = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        indexes = [
            # With the run id inside, filtering and counting by verdict reads only the index
            # (PostgreSQL; elsewhere a plain index).
            models.Index(
                fields=["submission", "verdict"], include=["run"], name="result_verdict_runs"
            ),
            # A known failure's runs in a submission, and the submissions it was seen in.
            models.Index(
                fields=["signature", "submission"],
                condition=~models.Q(signature=""),
                name="result_signatures",
            ),
        ]

    def __str__(self):
        return f"{self.verdict}: run {self.run_id}"


class PredicateResult(models.Model):
    """One failed predicate of one report, for filtering runs by failing predicate and
    grouping failures. Passed predicates have no row: nothing queries them, and they were
    most of the rows scoring wrote (docs/pipeline.md#scoring-chunks); the report holds
    every predicate."""

    # No foreign key constraints in the database: scoring writes several of these rows a
    # run, and PostgreSQL checked each key a row at a time (docs/pipeline.md#scoring-chunks).
    result = models.ForeignKey(
        Result, on_delete=models.CASCADE, related_name="predicates", db_constraint=False
    )
    # Reached through ``result`` for everything but the failing-label index below, so no
    # index of its own.
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    kind = models.CharField(max_length=20)
    index = models.IntegerField(null=True)
    label = models.TextField()  # at most LABEL_LIMIT characters: the row is indexed by it
    detail = models.TextField(blank=True)
    # Why the predicate failed (its ``cause``, docs/formats.md#cause), kept in columns so
    # that grouping failures by cause is a query, not a re-score.
    cause_kind = models.CharField(max_length=20, blank=True)
    cause_tool = models.TextField(blank=True)  # at most LABEL_LIMIT characters, as label
    cause_argument = models.TextField(blank=True)  # likewise

    class Meta:
        indexes = [
            # What reviewers filter and group by.
            models.Index(
                fields=["submission", "label"],
                include=["result"],
                name="failing_label_results",
            ),
            models.Index(
                fields=["submission", "cause_kind", "cause_tool"],
                include=["result", "cause_argument"],
                name="failing_cause_results",
            ),
        ]

    def __str__(self):
        return f"failed: {self.label}"


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
