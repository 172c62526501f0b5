"""Reading an uploaded run file into stored runs (docs/pipeline.md#ingest).

The file is streamed from the database a chunk at a time and read a line at a time. Valid
runs are written in bulk, one scoring chunk's worth per transaction, and each committed
chunk is enqueued for scoring at once, so workers score while the file is still being
read. Invalid lines are recorded with their number and reason, the first
``CASEBOOK_MAX_STORED_INVALID_LINES`` of them (the rest only counted, so a file of junk
costs no more rows than that); they never stop the valid lines around them.

A file that gives no valid run at all ends ``failed``, with one message saying what the
file looks like and what to change (``scoring.runfiles.diagnosis``), rather than a list of invalid
lines under a green "done".

Reading again after a lost worker starts from the beginning: everything the earlier attempt
stored is deleted first, under a new generation that makes its stray tasks do nothing.
"""

from __future__ import annotations

import gzip
import zlib
from contextlib import closing
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from cases.models import Case
from cases.natural import natural_key
from scoring.ingest.bulk import insert_rows, relax_durability
from scoring.ingest.pipeline import (
    clear_runs,
    enqueue_chunks,
    finish_if_complete,
    note_unknown_case,
)
from scoring.ingest.uploads import UploadRefused, open_upload
from scoring.matcher import Problem
from scoring.matcher import Suite as MatcherSuite
from scoring.models import InvalidLine, Run, Status, Submission
from scoring.runfiles.diagnosis import FIRST_PROBLEMS, HEAD_BYTES, diagnose
from scoring.runfiles.reader import RunLine, read_run_lines
from scoring.runfiles.runmeta import meta_values, note_seen, tool_names

RUN_FIELDS = (
    "submission_id", "seq", "line", "case_key", "case_order", "trial", "document", "final_text",
    "tools", "meta_values",
)  # fmt: skip
INVALID_FIELDS = ("submission_id", "line", "reason")
INVALID_BATCH = 1000  # invalid lines stored per write
COUNTED_BATCH = 20_000  # invalid lines only counted (past the stored limit) per write
# A run's case key and trial go into indexed, 32-bit columns; past these a run is refused by
# line rather than failing its whole chunk's insert.
CASE_KEY_LIMIT = Case._meta.get_field("key").max_length  # no suite can have a longer one
TRIAL_LIMIT = 2**31 - 1


class Superseded(Exception):
    """The submission was started again (or deleted) while this attempt was reading it."""


def ingest(submission_id: int, *, take_over: bool = False) -> None:
    """Read the submission's file into runs; a no-op if another attempt is at it or done.

    ``take_over``: the attempt before this one is known to have died (its task is being
    retried after losing the database), so its recent progress is no reason to wait."""
    generation = _claim(submission_id, take_over=take_over)
    if generation is None:
        return
    submission = (
        Submission.objects.select_related("version")
        .defer("version__document")
        .get(pk=submission_id)
    )
    batch = _Batch(submission, generation, submission.version.matcher_suite())
    try:
        with closing(open_upload(submission_id)) as stream:
            lines = read_run_lines(
                stream,
                format_name=submission.format or None,
                case_field=submission.case_field or None,
                max_line_bytes=settings.CASEBOOK_MAX_LINE_BYTES,
                max_depth=settings.CASEBOOK_MAX_JSON_DEPTH,
                max_uncompressed_bytes=settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES,
            )
            for item in lines:
                batch.add(item)
    except UploadRefused as exc:
        batch.stop(str(exc))
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        batch.stop(f"the gzip data is broken: {exc or 'it ends too soon'}")
    except Superseded:
        return
    try:
        batch.flush(final=True)
    except Superseded:
        return


def _claim(submission_id: int, *, take_over: bool) -> int | None:
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
        submission.save()
        return submission.generation


def tools_text(run) -> str:
    """``Run.tools`` for a run: the names it called, one a line."""
    names = sorted({call.name for batch in run.batches for call in batch})
    return "".join(f"\n{name}" for name in names) + "\n" if names else ""


class _Batch:
    """The runs and invalid lines read since the last write."""

    def __init__(self, submission: Submission, generation: int, suite: MatcherSuite):
        self.submission_id = submission.pk
        self.chunk_runs = submission.chunk_runs
        self.generation = generation
        self.suite = suite
        self.seq = 0  # runs stored, and the last one's seq
        self.last_line = 0
        self.runs: list[tuple] = []
        self.known = 0
        self.invalid: list[tuple] = []  # the invalid lines to store
        self.invalid_read = 0  # the invalid lines read since the last write, stored or not
        self.invalid_room = settings.CASEBOOK_MAX_STORED_INVALID_LINES
        self.unknown: list[tuple[str, int]] = []
        self.formats: set[str] = set()
        self.tools_seen: set[str] = set()
        self.meta_keys: set[str] = set()
        self.first_problems: list[str] = []  # for the diagnosis of a file with no valid run

    def add(self, item: RunLine) -> None:
        self.last_line = item.line
        if item.format:
            self.formats.add(item.format)
        problems = item.problems or unstorable(item)
        if problems:
            if len(self.first_problems) < FIRST_PROBLEMS:
                self.first_problems.append(str(problems[0]))
            self.invalid_read += 1
            if self.invalid_room:
                self.invalid_room -= 1
                self.invalid.append((self.submission_id, item.line, describe(problems)))
            # The count, and the heartbeat, move on as the lines are read.
            if len(self.invalid) >= INVALID_BATCH or self.invalid_read >= COUNTED_BATCH:
                self.flush(runs=False)
            return
        run = item.run
        canonical = item.canonical
        canonical["trial"] = run.trial  # as numbered: stored runs are complete
        if self.suite.case(run.case) is None:
            self.unknown.append((run.case, item.line))
        else:
            self.known += 1
        self.seq += 1
        tools, meta = tools_text(run), meta_values(run.meta)
        note_seen(self.tools_seen, tool_names(tools))
        note_seen(self.meta_keys, meta)
        self.runs.append(
            (self.submission_id, self.seq, item.line, run.case, natural_key(run.case),
             run.trial, canonical, run.final_text, tools, meta)
        )  # fmt: skip
        if len(self.runs) == self.chunk_runs:
            self.flush()

    def stop(self, reason: str) -> None:
        """The file cannot be read past here; what was read is kept, and why it stopped is
        stored past the limit on invalid lines too."""
        self.first_problems.append(reason)
        self.invalid_read += 1
        self.invalid.append((self.submission_id, self.last_line + 1, reason))

    def flush(self, *, runs: bool = True, final: bool = False) -> None:
        """Write what was read, in one transaction with the submission's counts.

        Runs are written a whole scoring chunk at a time (or the last, partial one), so
        each chunk is enqueued once, when all its runs are there."""
        with transaction.atomic():
            relax_durability()  # runs can be read again from the stored upload
            submission = Submission.objects.select_for_update().filter(pk=self.submission_id)
            submission = submission.first()
            if submission is None or submission.generation != self.generation:
                raise Superseded
            if runs and self.runs:
                insert_rows(Run, RUN_FIELDS, self.runs)
                submission.stored_runs = self.runs[-1][1]
                submission.total += self.known
                for case_key, line in self.unknown:
                    note_unknown_case(submission.unknown_cases, case_key, line)
                enqueue_chunks(submission, [(submission.stored_runs - 1) // self.chunk_runs])
                self.runs, self.unknown, self.known = [], [], 0
            insert_rows(InvalidLine, INVALID_FIELDS, self.invalid)
            submission.invalid += self.invalid_read
            submission.formats_seen = sorted(self.formats)
            submission.tools_seen = sorted(self.tools_seen)
            submission.meta_keys = sorted(self.meta_keys)
            if final:
                submission.ingest_finished = timezone.now()
                if submission.stored_runs:
                    submission.status = Status.SCORING
                    finish_if_complete(submission)
                else:
                    submission.status = Status.FAILED
                    submission.error = self.diagnosis(submission.invalid)
            submission.save()
        self.invalid, self.invalid_read = [], 0

    def diagnosis(self, invalid: int) -> str:
        """What the file that gave no valid run looks like, and what to change."""
        try:
            with closing(open_upload(self.submission_id)) as stream:
                head = stream.read(HEAD_BYTES)
        except (UploadRefused, EOFError, gzip.BadGzipFile, zlib.error):
            head = b""
        return diagnose(head, self.first_problems, invalid=invalid)


def unstorable(item: RunLine) -> tuple[Problem, ...]:
    """What keeps a valid run out of the database: a case key longer than any case's (the
    index over runs could not hold a very long one), or a trial past the column's range."""
    problems = []
    if len(item.run.case) > CASE_KEY_LIMIT:
        length = len(item.run.case)
        message = f"at most {CASE_KEY_LIMIT} characters, as a case's key (this is {length:,})"
        problems.append(item.problem("case", message))
    if item.run.trial > TRIAL_LIMIT:
        problems.append(item.problem("trial", f"at most {TRIAL_LIMIT:,}"))
    return tuple(problems)


def describe(problems: tuple[Problem, ...]) -> str:
    """An invalid line's reason: each problem, with the field it is about."""
    return "; ".join(f"{p.path}: {p.message}" if p.path else p.message for p in problems)
