"""The conductor of a submission's way through the pipeline (docs/pipeline.md): it creates
the submission, starts (and restarts) reading its file, plans the file's ranges, settles
them, finishes the submission, re-scores it and resumes what a lost worker or broker left
unfinished (docs/pipeline.md#the-sweep).

Every step that changes a submission's state takes its row lock first, so a web request,
the reading and scoring tasks and the sweep never act on a stale view of it. It sends no
task: a step that leaves work to the workers returns it (``Work``), and its caller, the
task that called it or ``scoring.ingest.pipeline``, sends it once the step has committed.
"""

from __future__ import annotations

import logging
from array import array
from collections import Counter
from contextlib import closing
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, BinaryIO, cast

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from isal import igzip

from cases.models import Suite, SuiteVersion
from scoring.ingest.bulk import relax_durability, update_rows
from scoring.ingest.store import (
    Superseded,
    clear_chunk_results,
    clear_results,
    clear_runs,
    count_run,
    current,
    describe,
    finish_if_complete,
    finish_reading,
    recount_cases,
    update_counts,
    write_invalid,
)
from scoring.ingest.uploads import (
    GZIP_ERRORS,
    UploadRefused,
    in_blocks,
    open_upload,
    restore_in_blocks,
    store_upload,
)
from scoring.matcher import ERROR, FAIL, PASS, InvalidInput, TrialNumbering
from scoring.matcher import Suite as MatcherSuite
from scoring.models import (
    EarlierResult,
    EarlierScore,
    InvalidLine,
    ReadRange,
    Result,
    Run,
    ScoredChunk,
    Status,
    Submission,
    UploadChunk,
)
from scoring.results import failures
from scoring.runfiles.diagnosis import FIRST_PROBLEMS
from scoring.runfiles.reader import RunLine, reads_line_by_line
from scoring.runfiles.runmeta import note_seen

log = logging.getLogger(__name__)


# Of the decompressed file, per range: a range is read by one task, in seconds.
RANGE_BYTES = 32 << 20


# The fewest bytes a record of a run takes (``{}``, and a newline or a comma): a range of
# b bytes gives at most b // 2 + 1 runs, so each range's window of ``seq`` is that wide.
MIN_RECORD_BYTES = 2


SEQ_LIMIT = 2**31 - 1  # Run.seq's column
RENUMBER_BATCH = 1000  # runs given their settled trial per statement


class NotReady(Exception):
    """The submission is not in a state that allows this; the message says why."""


@dataclass(frozen=True)
class Work:
    """What a step leaves to the workers, to be sent once it commits: the submission's file
    to read (from the start), ranges of it to read, chunks of it to score."""

    submission_id: int
    generation: int = 0
    read: bool = False
    ranges: tuple[int, ...] = ()
    chunks: tuple[int, ...] = ()


def create(
    suite: Suite,
    uploader,
    stream: BinaryIO,
    *,
    filename: str = "",
    label: str = "",
    format_name: str = "",
    case_field: str = "",
) -> Submission:
    """Store an uploaded run file as a new submission against the suite's current version;
    its file is then to be read (``Work.read``). Raises ``UploadRefused`` (and keeps
    nothing) when the file breaks a limit or is empty."""
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
    return submission


def rescore(submission: Submission, version: SuiteVersion) -> Work:
    """Start scoring the submission's runs again, against ``version`` of its suite; returns
    the chunks to score."""
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
        return Work(locked.pk, locked.generation, chunks=tuple(chunk_indexes(locked)))


def retry(submission: Submission) -> Work:
    """Start a failed submission again from where it failed: reading, or scoring; returns
    what is to be done."""
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
            return Work(locked.pk, read=True)
    return rescore(submission, submission.version)


def mark_failed(submission_id: int, reason: str) -> None:
    Submission.objects.filter(pk=submission_id).exclude(status=Status.DONE).update(
        status=Status.FAILED, error=reason, heartbeat=timezone.now()
    )


def resume_stalled() -> list[Work]:
    """Pick up every unfinished submission that has made no progress for
    ``CASEBOOK_STALL_SECONDS``: returns, for each, what is to be sent again (its reading,
    the ranges not yet read, or the chunks not yet scored). Run periodically (the sweep)."""
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
                work = _resume_reading(submission)
            else:
                done = set(
                    ScoredChunk.objects.filter(
                        submission=submission, generation=submission.generation
                    ).values_list("index", flat=True)
                )
                missing = [i for i in chunk_indexes(submission) if i not in done]
                work = Work(pk, submission.generation, chunks=tuple(missing))
                finish_if_complete(submission)
            # Touched, so that it is not sent again before the workers have had a go.
            submission.save()
        log.info("resumed stalled submission %s", pk)
        resumed.append(work)
    return resumed


def _resume_reading(submission: Submission) -> Work:
    """Nobody is reading the (locked) submission's file: whoever started is gone, or never
    got the message. Its ranges not yet read are sent again (the last one when all are,
    to put them together); a file not split into ranges is read again from the start."""
    ranges = ReadRange.objects.filter(submission=submission, generation=submission.generation)
    unread = list(ranges.filter(done=False).values_list("index", flat=True))
    if not unread:
        unread = list(ranges.order_by("-index").values_list("index", flat=True)[:1])
    if not unread:
        submission.ingest_started = None
        return Work(submission.pk, read=True)
    return Work(submission.pk, submission.generation, ranges=tuple(unread))


def delete(submission: Submission) -> None:
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


# --- reading a file ----------------------------------------------------------------------


def claim(submission_id: int, *, take_over: bool) -> int | None:
    """Start a new attempt at reading the file, and return its generation; None when the
    file is read already or another attempt is making progress (unless ``take_over``: then
    that attempt, if it still runs, is superseded and stops at its next write)."""
    with transaction.atomic():
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None or submission.status != Status.INGESTING:
            return None
        busy_since = timezone.now() - timedelta(seconds=settings.CASEBOOK_STALL_SECONDS)
        busy = submission.ingest_started is not None and submission.heartbeat >= busy_since
        if busy and not take_over:
            return None
        if submission.generation:
            clear_runs(submission)  # what an earlier, lost attempt had stored
        submission.generation += 1
        submission.ingest_started = timezone.now()
        submission.ingest_finished = None  # until this attempt settles its ranges
        submission.save()
        return submission.generation


def plan_ranges(submission_id: int, generation: int) -> tuple[int, ...] | None:
    """Plan the ranges of a JSON-lines file, returning their indexes, to be read; none
    (nothing done) for a file to read in one task: a document of runs, or one too large
    for the windows of ``seq``; None when the attempt was superseded meanwhile. A file sent
    compressed is first stored again in blocks."""
    pk = submission_id
    try:
        with closing(open_upload(pk)) as stream:
            apart = reads_line_by_line(stream, max_line_bytes=settings.CASEBOOK_MAX_LINE_BYTES)
    except (UploadRefused, *GZIP_ERRORS):  # type: ignore[misc]
        apart = False  # read in one task, which says why the file breaks off
    if not apart:
        return ()
    stopped = ""
    if not in_blocks(pk):
        try:
            stopped = restore_in_blocks(pk, before_each=lambda: _touch(pk, generation))
        except Superseded:
            return None
    chunk_runs = Submission.objects.values_list("chunk_runs", flat=True).get(pk=pk)
    ranges = plan(pk, chunk_runs)
    if ranges is None:
        return ()
    with transaction.atomic():
        try:
            locked = current(pk, generation)
        except Superseded:
            return None
        for span in ranges:
            span.generation = generation
        ranges[-1].stop_reason = stopped
        ReadRange.objects.bulk_create(ranges)
        locked.save(update_fields=["heartbeat"])
    return tuple(span.index for span in ranges)


def plan(submission_id: int, chunk_runs: int) -> list[ReadRange] | None:
    """The ranges of a file in blocks: each starts at a block where a line starts, after
    ``RANGE_BYTES`` or more of the one before, so no line is split; each has a window of
    ``seq`` of its own, starting at a multiple of ``chunk_runs`` so no scoring chunk holds
    runs of two ranges. None when the windows would pass ``SEQ_LIMIT`` (a file of gigabytes)."""
    # Set on every block (``in_blocks``).
    blocks = cast(
        list[tuple[int, int, int, bool]],
        list(
            UploadChunk.objects.filter(submission_id=submission_id)
            .order_by("index")
            .values_list("index", "offset", "lines_before", "starts_line")
        ),
    )
    if not blocks:
        return None  # nothing could be read: read whole, to say so
    last = UploadChunk.objects.filter(submission_id=submission_id, index=blocks[-1][0])
    end = blocks[-1][1] + len(igzip.decompress(bytes(last.values_list("data", flat=True)[0])))
    starts = [0]
    for i, (_, offset, _, starts_line) in enumerate(blocks):
        if i and starts_line and offset - blocks[starts[-1]][1] >= RANGE_BYTES:
            starts.append(i)
    ranges, first_seq = [], 0
    for n, i in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(blocks)
        size = (blocks[stop][1] if stop < len(blocks) else end) - blocks[i][1]
        ranges.append(
            ReadRange(
                submission_id=submission_id,
                index=n,
                first_chunk=blocks[i][0],
                end_chunk=blocks[stop][0] if stop < len(blocks) else blocks[-1][0] + 1,
                first_line=blocks[i][2] + 1,
                first_seq=first_seq,
            )
        )
        window = size // MIN_RECORD_BYTES + 1
        first_seq = -(-(first_seq + window) // chunk_runs) * chunk_runs
    return ranges if first_seq <= SEQ_LIMIT else None


def _touch(submission_id: int, generation: int) -> None:
    """Show progress (the sweep leaves a submission that makes some), if still current."""
    current(submission_id, generation).save(update_fields=["heartbeat"])


def claim_range(
    submission_id: int, generation: int, index: int, *, take_over: bool
) -> ReadRange | None:
    """Start a new attempt at reading a range, deleting what an earlier one stored; None
    when it is read, superseded, or being read by an attempt making progress."""
    with transaction.atomic():
        try:
            submission = current(submission_id, generation)
        except Superseded:
            return None
        span = (
            ReadRange.objects.select_for_update()
            .filter(submission_id=submission_id, generation=generation, index=index)
            .first()
        )
        if span is None or span.done:
            return None
        busy_since = timezone.now() - timedelta(seconds=settings.CASEBOOK_STALL_SECONDS)
        if span.attempt and span.heartbeat >= busy_since and not take_over:
            return None
        if span.attempt:  # an earlier attempt was lost: what it stored goes
            stored = (span.first_seq + 1, span.first_seq + span.runs)
            clear_chunk_results(submission, stored)  # its chunks were being scored
            submission.runs.filter(seq__range=stored).only("pk").delete()
            lines = submission.invalid_lines.filter(line__gte=span.first_line)
            following = ReadRange.objects.filter(
                submission_id=submission_id, generation=generation, index=index + 1
            ).values_list("first_line", flat=True)
            if following:
                lines = lines.filter(line__lt=following[0])
            lines.delete()
            submission.stored_runs -= span.runs
            submission.invalid -= span.invalid
            submission.save()
            span.runs = span.invalid = span.last_line = 0
        span.attempt += 1
        span.save()
        return span


def settle(submission_id: int, generation: int) -> None:
    """Once every range of the file is read, put them together, as reading the file whole
    would have (docs/pipeline.md#ranges): number the trials in the file's order (a run
    repeating a trial its case has is invalid, and goes), keep the first invalid lines up
    to the limit (and why the file broke off, past it), and count the runs against the
    version. The chunks were sent to be scored as they were written. A no-op until then,
    and once done."""
    with transaction.atomic():
        relax_durability()
        try:
            submission = current(submission_id, generation)
        except Superseded:
            return
        ranges = list(ReadRange.objects.filter(submission=submission, generation=generation))
        if submission.ingest_finished or not ranges or not all(r.done for r in ranges):
            return
        first_problems = [p for r in ranges for p in r.first_problems][:FIRST_PROBLEMS]
        repeats = _settle_runs(submission, submission.version.matcher_suite())
        submission.invalid = sum(r.invalid for r in ranges) + len(repeats)
        if repeats:
            write_invalid(repeats)
        _keep_first_invalid(submission)
        stopped = ranges[-1].stop_reason
        if stopped:
            last_line = max(r.last_line for r in ranges)
            InvalidLine.objects.create(submission=submission, line=last_line + 1, reason=stopped)
            submission.invalid += 1
            first_problems.append(stopped)
        submission.stored_runs = sum(r.runs for r in ranges) - len(repeats)
        formats: set[str] = set()
        tools: set[str] = set()
        meta: set[str] = set()
        for r in ranges:
            formats.update(r.formats_seen)
            note_seen(tools, r.tools_seen)
            note_seen(meta, r.meta_keys)
        submission.formats_seen = sorted(formats)
        submission.tools_seen = sorted(tools)
        submission.meta_keys = sorted(meta)
        finish_reading(submission, first_problems)
        submission.save()


def _settle_runs(submission: Submission, suite: MatcherSuite) -> list[tuple]:
    """In one pass over the (locked) submission's runs in file order: number their trials
    as ``TrialNumbering`` does while a file is read whole, and count them against ``suite``
    (``total``, the unknown cases). A run whose range numbered it otherwise is corrected,
    with its result if it was scored already; a run that repeats a trial its case has is
    deleted, with its result, and returned as an invalid line."""
    numbering = TrialNumbering()
    repeats: list[tuple[int, int, str]] = []
    # Few, unless the runs leave their trials to number and cases span ranges: 16 bytes a run.
    renumbered, trials = array("q"), array("q")
    submission.total = 0
    submission.unknown_cases = {}
    runs = submission.runs.order_by("seq").values_list(
        "pk", "line", "case_key", "trial", "trial_given"
    )
    for pk, line, case_key, trial, given in runs.iterator(chunk_size=5000):
        try:
            numbered = numbering.trial(case_key, trial if given else None)
        except InvalidInput as exc:
            reason = describe(tuple(RunLine(line).problem(p.path, p.message) for p in exc.problems))
            repeats.append((pk, line, reason))
            continue
        if numbered != trial:
            renumbered.append(pk)
            trials.append(numbered)
        count_run(submission, suite, case_key, line)
    for start in range(0, len(renumbered), RENUMBER_BATCH):
        end = start + RENUMBER_BATCH
        _renumber(dict(zip(renumbered[start:end], trials[start:end], strict=True)))
    if repeats:
        _delete_repeats(submission, [pk for pk, _, _ in repeats])
    return [(submission.pk, line, reason) for _, line, reason in repeats]


def _renumber(trials: dict[int, int]) -> None:
    """Give the runs ``trials`` (by id) their trial: in the row, the document, and the
    report of their result if they were scored already."""
    runs = Run.objects.filter(pk__in=list(trials)).values_list("pk", "document")
    rows = [(pk, trials[pk], _with_trial(document, trials[pk])) for pk, document in runs]
    update_rows(Run, ("trial", "document"), rows)
    results = Result.objects.filter(run_id__in=list(trials)).values_list("pk", "report")
    reports = [(pk, _with_trial(report, trials[pk])) for pk, report in results]
    update_rows(Result, ("report",), reports)


def _with_trial(document: Any, trial: int) -> dict:
    document["trial"] = trial
    return document


def _delete_repeats(submission: Submission, run_ids: list[int]) -> None:
    """Delete the (locked) submission's runs ``run_ids``, refused when the ranges were
    settled; their results, if scored, leave their chunks' tallies and the counts."""
    scored = Result.objects.filter(run_id__in=run_ids).values_list("run__seq", "verdict")
    taken_back: dict[int, Counter] = {}
    for seq, verdict in scored:
        taken_back.setdefault((seq - 1) // submission.chunk_runs, Counter())[verdict] += 1
    Run.objects.filter(pk__in=run_ids).delete()  # with their results
    chunks = ScoredChunk.objects.filter(
        submission=submission, generation=submission.generation, index__in=taken_back
    )
    for chunk in chunks:
        tally = taken_back[chunk.index]
        first, last = submission.chunk_bounds(chunk.index)
        if not submission.runs.filter(seq__range=(first, last)).exists():
            chunk.delete()  # no run of it is left: no chunk
            continue
        chunk.scored -= tally.total()
        chunk.passed -= tally[PASS]
        chunk.failed -= tally[FAIL]
        chunk.errored -= tally[ERROR]
        chunk.save()
    update_counts(submission)


def _keep_first_invalid(submission: Submission) -> None:
    """Of the invalid lines the ranges stored (each up to the limit), keep the file's first
    ``CASEBOOK_MAX_STORED_INVALID_LINES``."""
    limit = settings.CASEBOOK_MAX_STORED_INVALID_LINES
    lines = submission.invalid_lines.order_by("line", "pk")
    past = lines.values_list("line", "pk")[limit : limit + 1]
    if past:
        line, pk = past[0]
        lines.filter(line__gt=line).delete()
        lines.filter(line=line, pk__gte=pk).delete()


def finish(submission_id: int) -> None:
    """After each step: once the submission is done, store the summaries its pages read
    (docs/pipeline.md#summaries), for an upload and a live submission alike."""
    failures.summarize_when_scored(submission_id)
