"""A submission's way through the pipeline (docs/pipeline.md): upload, re-score, and resuming
what a lost worker or broker left unfinished (docs/pipeline.md#the-sweep).

Every step that changes a submission's state takes its row lock first, so a web request,
the ingesting task, the scoring tasks and the sweep never act on a stale view of it. Tasks
are enqueued only once the transaction that made their work visible has committed.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from typing import BinaryIO

from celery import Task, current_app
from celery.exceptions import Retry
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Sum
from django.utils import timezone

from cases.models import Suite, SuiteVersion
from scoring.ingest.uploads import UploadRefused, store_upload
from scoring.matcher import Suite as MatcherSuite
from scoring.models import (
    EarlierResult,
    EarlierScore,
    PredicateResult,
    ReadRange,
    Result,
    Review,
    ReviewEvent,
    ScoredChunk,
    Status,
    Submission,
)
from scoring.runfiles.diagnosis import CASES_KEPT, no_known_case

log = logging.getLogger(__name__)

# The tasks that run the pipeline's steps (scoring/tasks.py), by name.
INGEST_TASK = "scoring.tasks.ingest_submission"
RANGE_TASK = "scoring.tasks.ingest_range"
SCORE_CHUNK_TASK = "scoring.tasks.score_chunk"

# Seconds between the tries of a task run in-process (eager) that asked to be retried.
EAGER_RETRY_WAITS = (0.2, 0.5, 1, 2, 4)

UNKNOWN_LINES_KEPT = 5  # line numbers listed per unknown case

_TASK_IMPORT = threading.Lock()


class NotReady(Exception):
    """The submission is not in a state that allows this; the message says why."""


def create_submission(
    suite: Suite,
    uploader,
    stream: BinaryIO,
    *,
    filename: str = "",
    label: str = "",
    format_name: str = "",
    case_field: str = "",
) -> Submission:
    """Store an uploaded run file as a new submission against the suite's current version,
    and enqueue its ingestion. Raises ``UploadRefused`` (and keeps nothing) when the file
    breaks a limit or is empty."""
    version = suite.latest_version
    if version is None:
        raise UploadRefused("the suite has no version to score against")
    with transaction.atomic():
        submission = Submission.objects.create(
            suite=suite,
            version=version,
            uploader=uploader,
            filename=filename[:255],
            label=label,
            format=format_name,
            case_field=case_field,
            chunk_runs=settings.CASEBOOK_CHUNK_RUNS,
        )
        submission.size = store_upload(submission.pk, stream)
        if not submission.size:
            raise UploadRefused("the file is empty")
        submission.save(update_fields=["size", "heartbeat"])
        enqueue_ingest(submission.pk)
    return submission


def rescore(submission: Submission, version: SuiteVersion) -> None:
    """Score the submission's runs again, against ``version`` of its suite."""
    if version.suite_id != submission.suite_id:
        raise NotReady("that version belongs to another suite")
    with transaction.atomic():
        locked = Submission.objects.select_for_update().get(pk=submission.pk)
        if locked.status == Status.INGESTING:
            raise NotReady("the submission is still reading its file")
        if locked.runs_pruned:  # docs/operations.md#retention
            raise NotReady("its runs were removed by retention")
        keep_earlier(locked, version)
        clear_results(locked)
        locked.version = version
        locked.generation += 1
        locked.error = ""
        recount_cases(locked, version.matcher_suite())
        locked.status = Status.SCORING
        locked.scoring_restarted = timezone.now()
        locked.scoring_finished = None
        finish_if_complete(locked)
        locked.save()
        enqueue_chunks(locked, chunk_indexes(locked))
    submission.refresh_from_db()


def retry(submission: Submission) -> None:
    """Start a failed submission again from where it failed: reading, or scoring."""
    with transaction.atomic():
        locked = Submission.objects.select_for_update().get(pk=submission.pk)
        if locked.status != Status.FAILED:
            raise NotReady("only a failed submission can be retried")
        if locked.runs_pruned:
            raise NotReady("its runs and file were removed by retention")
        locked.error = ""
        if locked.ingest_finished is None or not locked.stored_runs:  # read it (again)
            locked.status = Status.INGESTING
            locked.ingest_started = None
            locked.scoring_restarted = timezone.now()
            locked.save()
            enqueue_ingest(locked.pk)
            return
    rescore(submission, submission.version)


def mark_failed(submission_id: int, reason: str) -> None:
    Submission.objects.filter(pk=submission_id).exclude(status=Status.DONE).update(
        status=Status.FAILED, error=reason, heartbeat=timezone.now()
    )


def resume_stalled() -> list[int]:
    """Pick up every unfinished submission that has made no progress for
    ``CASEBOOK_STALL_SECONDS``: its ingestion is started again, or the chunks not yet
    scored are enqueued again. Returns their ids. Run periodically (Celery beat)."""
    cutoff = timezone.now() - timedelta(seconds=settings.CASEBOOK_STALL_SECONDS)
    stalled = Submission.objects.filter(
        status__in=[Status.INGESTING, Status.SCORING], heartbeat__lt=cutoff
    ).values_list("pk", flat=True)
    resumed = []
    for pk in stalled:
        with transaction.atomic():
            submission = Submission.objects.select_for_update().get(pk=pk)
            if submission.finished or submission.heartbeat >= cutoff:
                continue  # moved on while we looked
            if submission.status == Status.INGESTING:
                _resume_reading(submission)
            else:
                done = set(
                    ScoredChunk.objects.filter(
                        submission=submission, generation=submission.generation
                    ).values_list("index", flat=True)
                )
                missing = [i for i in chunk_indexes(submission) if i not in done]
                enqueue_chunks(submission, missing)
                finish_if_complete(submission)
            # Touched, so that it is not enqueued again before the workers have had a go.
            submission.save()
        log.info("resumed stalled submission %s", pk)
        resumed.append(pk)
    return resumed


def _resume_reading(submission: Submission) -> None:
    """Nobody is reading the (locked) submission's file: whoever started is gone, or never
    got the message. Its ranges not yet read are sent again (the last one when all are,
    to put them together); a file not split into ranges is read again from the start."""
    ranges = ReadRange.objects.filter(submission=submission, generation=submission.generation)
    unread = list(ranges.filter(done=False).values_list("index", flat=True))
    if not unread:
        unread = list(ranges.order_by("-index").values_list("index", flat=True)[:1])
    if not unread:
        submission.ingest_started = None
        enqueue_ingest(submission.pk)
    for index in unread:
        enqueue_range(submission.pk, submission.generation, index)


def delete_submission(submission: Submission) -> None:
    """Delete the submission, its uploaded file, runs and results."""
    with transaction.atomic():
        locked = Submission.objects.select_for_update().filter(pk=submission.pk).first()
        if locked is None:
            return
        clear_runs(locked)  # in bulk: the ORM's cascade would load every row first
        locked.chunks.all().delete()
        locked.delete()


def keep_earlier(submission: Submission, next_version: SuiteVersion) -> None:
    """Before the (locked) submission is re-scored against ``next_version``: keep its
    finished result against its current version (counts and every run's report), and drop
    the kept result of ``next_version``, which becomes current. An unfinished scoring is
    not kept: its counts would be a part of the runs."""
    if next_version.pk == submission.version_id:
        return  # scored again against the same version: the new result replaces it
    earlier = EarlierResult.objects.filter(submission=submission)
    earlier.filter(version__in=(next_version, submission.version_id)).delete()
    EarlierScore.objects.filter(
        submission=submission, version__in=(next_version, submission.version_id)
    ).delete()
    if submission.status != Status.DONE:
        return
    EarlierScore.objects.create(
        submission=submission,
        version_id=submission.version_id,
        **{
            name: getattr(submission, name)
            for name in ("total", "scored", "passed", "failed", "errored", "scoring_finished")
        },
    )
    # Copied inside the database: a submission may have 100,000 runs.
    results, kept = Result._meta.db_table, EarlierResult._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {kept} (run_id, submission_id, version_id, verdict, report, signature)"
            f" SELECT run_id, submission_id, %s, verdict, report, signature FROM {results}"
            " WHERE submission_id = %s",
            [submission.version_id, submission.pk],
        )


def clear_results(submission: Submission) -> None:
    """Delete the submission's results and the record of its scored chunks."""
    PredicateResult.objects.filter(result__submission=submission).delete()
    Result.objects.filter(submission=submission).only("pk").delete()
    ScoredChunk.objects.filter(submission=submission).delete()
    submission.scored = submission.passed = submission.failed = submission.errored = 0


def clear_chunk_results(submission: Submission, seqs: tuple[int, int]) -> None:
    """Delete the results of the (locked) submission's runs whose ``seq`` is in ``seqs``
    (first, last), and the record of the chunks that scored them; the counts summed again."""
    results = Result.objects.filter(run__submission=submission, run__seq__range=seqs)
    PredicateResult.objects.filter(result__in=results.values("pk")).delete()
    results.only("pk").delete()
    first, last = ((seq - 1) // submission.chunk_runs for seq in seqs)
    ScoredChunk.objects.filter(submission=submission, index__range=(first, last)).delete()
    update_counts(submission)


def clear_runs(submission: Submission) -> None:
    """Delete everything read from the file, to read it again from the start."""
    clear_results(submission)
    EarlierResult.objects.filter(submission=submission).delete()
    EarlierScore.objects.filter(submission=submission).delete()
    ReviewEvent.objects.filter(run__submission=submission).delete()
    Review.objects.filter(submission=submission).delete()
    submission.runs.only("pk").delete()
    submission.invalid_lines.all().delete()
    submission.read_ranges.all().delete()
    submission.stored_runs = submission.total = submission.invalid = 0
    submission.unknown_cases = {}
    submission.formats_seen = []
    submission.tools_seen = []
    submission.meta_keys = []


def recount_cases(submission: Submission, suite: MatcherSuite) -> None:
    """Set ``total`` and ``unknown_cases`` for the runs stored, against ``suite``."""
    submission.total = 0
    submission.unknown_cases = {}
    runs = submission.runs.order_by("seq").values_list("case_key", "line")
    for case_key, line in runs.iterator(chunk_size=5000):
        if suite.case(case_key) is not None:
            submission.total += 1
        elif case_key:  # a live trace's run that names no case is unassigned, not unknown
            note_unknown_case(submission.unknown_cases, case_key, line)


def note_unknown_case(unknown: dict, case_key: str, line: int) -> None:
    entry = unknown.get(case_key)
    if entry is None:
        if len(unknown) >= CASES_KEPT:
            return
        entry = unknown[case_key] = {"runs": 0, "lines": []}
    entry["runs"] += 1
    if len(entry["lines"]) < UNKNOWN_LINES_KEPT:
        entry["lines"].append(line)


def chunk_indexes(submission: Submission) -> list[int]:
    """The scoring chunks that hold runs. A file read in ranges leaves gaps in ``seq``
    between them (docs/pipeline.md#ranges), so not every index below the last has runs."""
    last = submission.runs.order_by("-seq").values_list("seq", flat=True).first()
    if last == submission.stored_runs:  # no gap: 1, 2, 3, ...
        return list(range(submission.chunk_count))
    chunk = (F("seq") - 1) / submission.chunk_runs
    return list(
        submission.runs.annotate(chunk=chunk)
        .order_by("chunk")
        .values_list("chunk", flat=True)
        .distinct()
    )


def update_counts(submission: Submission) -> None:
    """The verdict counts as the sums of the scored chunks of the current generation."""
    sums = ScoredChunk.objects.filter(
        submission=submission, generation=submission.generation
    ).aggregate(
        scored=Sum("scored", default=0),
        passed=Sum("passed", default=0),
        failed=Sum("failed", default=0),
        errored=Sum("errored", default=0),
    )
    for name, value in sums.items():
        setattr(submission, name, value)


def finish_if_complete(submission: Submission) -> None:
    """Mark the (locked) submission done once its file is read and every run scored.

    A file whose runs are all of cases its version lacks has nothing to score: it ends
    failed, saying which cases the runs name and which the version has, and so never
    stands as a result. Its runs stay, scored by a re-score against a version that has
    their cases. A live submission (traces, ``live_day``) waits for further traces instead."""
    if (
        submission.status != Status.SCORING
        or submission.ingest_finished is None
        or submission.scored < submission.total
    ):
        return
    if not submission.total and submission.stored_runs and submission.live_day is None:
        submission.status = Status.FAILED
        submission.error = nothing_to_score(submission)
        return
    submission.status = Status.DONE
    submission.scoring_finished = timezone.now()


def nothing_to_score(submission: Submission) -> str:
    """Why a submission whose runs are all of cases its version lacks scored nothing."""
    version = SuiteVersion.objects.defer("document", "audit").get(pk=submission.version_id)
    suite_cases = [case.key for case in version.matcher_suite().cases]
    run_cases = list(submission.unknown_cases)
    return no_known_case(
        run_cases,
        submission.stored_runs,
        suite_cases,
        suite=f"version {version.number} of the suite",
        more=len(run_cases) >= CASES_KEPT,
    )


def task_named(name: str) -> Task:
    """The Celery task ``name``. Tasks sit above the services they call
    (docs/architecture.md), so a service names the task it enqueues rather than import it;
    Celery's loader imports the installed apps' ``tasks`` modules when first asked."""
    app = current_app
    if name not in app.tasks:
        # One thread at a time: a second thread would find the tasks module half imported
        # (in sys.modules, its tasks not yet registered) and fail to find the task.
        with _TASK_IMPORT:
            app.loader.import_default_modules()
    return app.tasks[name]


def enqueue_ingest(submission_id: int) -> None:
    _after_commit(task_named(INGEST_TASK), submission_id)


def enqueue_range(submission_id: int, generation: int, index: int) -> None:
    _after_commit(task_named(RANGE_TASK), submission_id, generation, index)


def enqueue_chunks(submission: Submission, indexes) -> None:
    task = task_named(SCORE_CHUNK_TASK)
    for index in indexes:
        _after_commit(task, submission.pk, submission.generation, index)


def _after_commit(task: Task, *args) -> None:
    """Send ``task`` once the current transaction commits. A broker that cannot be reached
    is logged, not raised: the work is in the database, and the sweep sends it again."""

    def send():
        for retries, wait in enumerate((*EAGER_RETRY_WAITS, None)):
            try:
                if retries:
                    task.apply(args, retries=retries, throw=True)
                else:
                    task.delay(*args)
                return
            except Retry:
                # Eager mode (no broker) runs the task here, and Celery does not retry an
                # eager task that raises: wait and run it again, as a worker would after its
                # backoff (SQLite refused a write while another thread of this process read).
                if wait is None:
                    log.error("%s%r still failing; the sweep will retry", task.name, args)
                    return
                log.warning("%s%r failed; trying again in %s s", task.name, args, wait)
                time.sleep(wait)
            except Exception:
                # Also where an eager task's own failure lands; it has already marked the
                # submission failed.
                log.exception("could not run %s%r now; the sweep will retry", task.name, args)
                return

    transaction.on_commit(send)
