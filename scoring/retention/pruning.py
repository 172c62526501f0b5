"""Which submissions' runs have outlived their suite's retention, and removing them
(docs/operations.md#retention).

A suite keeps the runs of its live submissions ``Suite.live_retention_days`` days after
their day, and those of uploaded files ``Suite.upload_retention_days`` days after the upload
(null: forever). An expired submission keeps its row, counts, earlier scores and summaries;
its runs go with everything that hangs on them (results, predicate rows, earlier results,
reviews and their history, queue items, live traces and their spans), and so does its
uploaded file. Reviewed runs are noted first (``PrunedRuns``), shown on the suite's page.

Rows are deleted in transactions of at most ``BATCH_ROWS`` rows, the runs of each taken with
``FOR UPDATE SKIP LOCKED`` on PostgreSQL: a run some other transaction holds is left for the
next day, never waited for, and no transaction is long enough to hold up ingest or scoring.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from cases.models import Suite
from cases.natural import natural_sorted
from scoring.models import (
    BlindDecision,
    EarlierResult,
    LabelLink,
    PredicateResult,
    PrunedRuns,
    QueueItem,
    Result,
    Review,
    ReviewEvent,
    ReviewStatus,
    Run,
    Status,
    Submission,
    Trace,
    TraceSpan,
    UploadChunk,
)

BATCH_ROWS = 1000  # rows deleted per transaction
# Rows a run usually comes with (itself, its result, a few predicate rows): a transaction
# takes BATCH_ROWS / this many runs, so it mostly deletes whole runs, not the same runs'
# predicate rows over several transactions.
ROWS_PER_RUN = 5
CASE_KEYS_NOTED = 20  # case keys of reviewed runs a note lists

# What hangs on a run, children before parents, each with its path to the run's id.
RUN_DEPENDENTS = (
    (PredicateResult, "result_id"),
    (Result, "run_id"),
    (EarlierResult, "run_id"),
    (LabelLink, "review_id"),
    (ReviewEvent, "run_id"),
    (BlindDecision.labels.through, "blinddecision__item__run_id"),
    (BlindDecision, "item__run_id"),
    (QueueItem, "run_id"),
    (Review, "run_id"),
    (TraceSpan, "trace__run_id"),
    (Trace, "run_id"),
)


@dataclass(frozen=True)
class Expired:
    """A submission whose runs have outlived its suite's retention of ``days``."""

    submission: Submission
    days: int
    runs: int
    reviewed_runs: int
    upload_chunks: int


@dataclass
class Pruned:
    """What a prune removed, or with ``dry_run`` would remove."""

    submissions: list[Expired] = field(default_factory=list)
    orphan_traces: int = 0
    rows: int = 0  # every row deleted, of every table
    largest_batch: int = 0  # the most rows one transaction deleted

    @property
    def runs(self) -> int:
        return sum(each.runs for each in self.submissions)

    @property
    def reviewed_runs(self) -> int:
        return sum(each.reviewed_runs for each in self.submissions)


def expired(now: datetime | None = None, suite_id: int | None = None) -> Pruned:
    """What a prune at ``now`` would remove; removes nothing."""
    now = now or timezone.now()
    plan = Pruned()
    for suite, live_days, upload_days in _suites(suite_id):
        for submission, days in _expired_submissions(suite, now, live_days, upload_days):
            plan.submissions.append(
                Expired(
                    submission,
                    days,
                    Run.objects.filter(submission=submission).count(),
                    reviewed(submission).count(),
                    UploadChunk.objects.filter(submission=submission).count(),
                )
            )
        if live_days is not None:
            plan.orphan_traces += _orphan_traces(suite, now - timedelta(days=live_days)).count()
    return plan


def prune(
    now: datetime | None = None, suite_id: int | None = None, batch: int = BATCH_ROWS
) -> Pruned:
    """Remove what has outlived retention at ``now``. Idempotent: a run left (locked by
    another transaction, or a prune cut short) is removed by the next."""
    now = now or timezone.now()
    plan = expired(now, suite_id)
    done = Pruned(orphan_traces=plan.orphan_traces)
    for each in plan.submissions:
        if not _mark(each, now):
            continue  # busy (being re-scored, say): the next prune has it
        done.submissions.append(each)
        _delete_runs(Run.objects.filter(submission=each.submission), batch, done)
        _delete_rows(UploadChunk.objects.filter(submission=each.submission), batch, done)
    for suite, live_days, _ in _suites(suite_id):
        if live_days is not None:
            orphans = _orphan_traces(suite, now - timedelta(days=live_days))
            _delete_rows(TraceSpan.objects.filter(trace__in=orphans), batch, done)
            _delete_rows(orphans, batch, done)
    return done


def reviewed(submission: Submission) -> QuerySet[Run]:
    """The submission's runs someone reviewed: a status other than untriaged, a comment, or
    a label (an assignment alone is no review). Three lookups by index, not one join of
    every run with its review and history."""
    decided = _reviews(submission).exclude(status=ReviewStatus.UNTRIAGED).values("run_id")
    commented = _comments(submission).values("run_id")
    labelled = _labels(submission).values("review_id")
    return Run.objects.filter(submission=submission).filter(
        Q(pk__in=decided) | Q(pk__in=commented) | Q(pk__in=labelled)
    )


def lost_reviews(submission: Submission) -> dict:
    """What the reviews of the submission's runs held, counted, for the note kept after
    they go."""
    decided = _reviews(submission).exclude(status=ReviewStatus.UNTRIAGED)
    statuses = Counter(decided.values_list("status", flat=True))
    labels = Counter(_labels(submission).values_list("reviewlabel__name", flat=True))
    # In natural order, as every page lists cases: 3 before 10.
    case_keys = natural_sorted(set(reviewed(submission).values_list("case_key", flat=True)))
    return {
        "statuses": dict(statuses.most_common()),
        "labels": dict(labels.most_common()),
        "comments": _comments(submission).count(),
        "case_keys": case_keys[:CASE_KEYS_NOTED],
    }


def _reviews(submission: Submission) -> QuerySet[Review]:
    return Review.objects.filter(submission=submission)


def _comments(submission: Submission) -> QuerySet[ReviewEvent]:
    return ReviewEvent.objects.filter(run__submission=submission, kind=ReviewEvent.Kind.COMMENT)


def _labels(submission: Submission) -> QuerySet:
    return LabelLink.objects.filter(review__submission=submission)


def _suites(suite_id: int | None):
    suites = Suite.objects.filter(
        Q(live_retention_days__isnull=False) | Q(upload_retention_days__isnull=False)
    )
    if suite_id is not None:
        suites = suites.filter(pk=suite_id)
    for suite in suites.order_by("pk"):
        yield suite, suite.live_retention_days, suite.upload_retention_days


def _expired_submissions(suite, now, live_days, upload_days):
    # A submission already marked is expired again only while something of it is left.
    left = (
        Q(runs_pruned__isnull=True)
        | Exists(Run.objects.filter(submission=OuterRef("pk")))
        | Exists(UploadChunk.objects.filter(submission=OuterRef("pk")))
    )
    submissions = Submission.objects.filter(left, suite=suite).defer("unknown_cases")
    if live_days is not None:
        cutoff = (now - timedelta(days=live_days)).date()
        for submission in submissions.filter(live_day__lt=cutoff).order_by("pk"):
            yield submission, live_days
    if upload_days is not None:
        finished = submissions.filter(
            live_day__isnull=True,
            status__in=(Status.DONE, Status.FAILED),
            created__lt=now - timedelta(days=upload_days),
        )
        for submission in finished.order_by("pk"):
            yield submission, upload_days


def _orphan_traces(suite, cutoff: datetime) -> QuerySet[Trace]:
    """Traces that made no run (their spans make none) and wait for nothing more."""
    return Trace.objects.filter(suite=suite, run__isnull=True, pending=False, received__lt=cutoff)


def _mark(expiry: Expired, now: datetime) -> bool:
    """Mark the submission pruned, and note its reviewed runs, under its lock; False if
    another transaction holds it, or it is not finished."""
    with transaction.atomic():
        locked = _take(Submission.objects.filter(pk=expiry.submission.pk), 1)
        if not locked:
            return False
        submission = Submission.objects.get(pk=locked[0])
        if submission.status not in (Status.DONE, Status.FAILED):
            return False
        if submission.runs_pruned is not None:
            return True  # marked and noted by an earlier prune, which left some rows
        reviewed_runs = reviewed(submission).count()
        if reviewed_runs:
            PrunedRuns.objects.create(
                suite_id=submission.suite_id,
                submission=submission,
                days=expiry.days,
                reviewed_runs=reviewed_runs,
                lost=lost_reviews(submission),
            )
        # An update, not a save: the heartbeat is the pipeline's, not retention's.
        Submission.objects.filter(pk=submission.pk).update(
            runs_pruned=now, retention_days=expiry.days
        )
    return True


def _delete_runs(runs: QuerySet[Run], batch: int, done: Pruned) -> None:
    """Delete ``runs`` and what hangs on them, at most ``batch`` rows a transaction: a
    transaction takes some runs, deletes their dependents table by table while its budget
    lasts, then as many of the runs as it still may (the next takes up the rest)."""
    while True:
        with transaction.atomic():
            run_ids = _take(runs, max(1, batch // ROWS_PER_RUN))
            if not run_ids:
                return
            budget = batch
            for model, link in RUN_DEPENDENTS:
                ids = list(
                    model.objects.filter(**{f"{link}__in": run_ids})
                    .order_by()  # by the link's index, not a sort
                    .values_list("pk", flat=True)[:budget]
                )
                budget -= _delete_ids(model, ids)
                if budget == 0:
                    break
            else:
                budget -= _delete_ids(Run, run_ids[:budget])
            _count(done, batch - budget)


def _delete_rows(rows: QuerySet, batch: int, done: Pruned) -> None:
    """Delete ``rows`` (which nothing else hangs on) at most ``batch`` a transaction."""
    while True:
        with transaction.atomic():
            ids = _take(rows, batch)
            if not ids:
                return
            _count(done, _delete_ids(rows.model, ids))


def _take(rows: QuerySet, limit: int) -> list[int]:
    """Up to ``limit`` ids of ``rows``, locked, skipping those another transaction holds
    (PostgreSQL; SQLite's transactions already hold the whole database)."""
    if connection.vendor == "postgresql":
        rows = rows.select_for_update(skip_locked=True, of=("self",))
    # In no order: a sort would read every match, and a run's default order (by its
    # submission) would join, and lock, the submission too.
    return list(rows.order_by().values_list("pk", flat=True)[:limit])


def _delete_ids(model, ids: list[int]) -> int:
    if not ids:
        return 0
    # A raw delete: the dependents are already gone, so no cascade needs collecting.
    return model.objects.filter(pk__in=ids)._raw_delete(model.objects.db)


def _count(done: Pruned, rows: int) -> None:
    done.rows += rows
    done.largest_batch = max(done.largest_batch, rows)
