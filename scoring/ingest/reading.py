"""Reading an uploaded run file into stored runs (docs/pipeline.md#ingest).

The file is streamed from the database a chunk at a time and read a line at a time. Valid
runs are written in bulk, one scoring chunk's worth per transaction, and each committed
chunk is scored at once (by its range's own task, or sent to the workers), so runs are
scored while the file is still being read. Invalid lines are recorded with their number
and reason, the first ``CASEBOOK_MAX_STORED_INVALID_LINES`` of them (the rest only
counted, so a file of junk costs no more rows than that); they never stop the valid lines
around them.

A file that gives no valid run at all ends ``failed``, with one message saying what the
file looks like and what to change (``scoring.runfiles.diagnosis``), rather than a list of invalid
lines under a green "done".

Reading again after a lost worker starts from the beginning: everything the earlier attempt
stored is deleted first, under a new generation that makes its stray tasks do nothing.

A JSON-lines file stored in blocks is read in **ranges** (docs/pipeline.md#ranges): the first
task (``ingest``) plans them, each is read by a task of its own (``read_range``), on any
worker, each scoring its chunks as it writes them; the one that finds every range
read puts them together (``settle``): it numbers the trials of the whole file in order
(correcting the few runs, and results, a range could not number), refuses repeats, keeps
the first invalid lines and counts the runs against the version. A file that is one
document of runs is read in one task.
"""

from __future__ import annotations

from array import array
from collections import Counter
from contextlib import closing
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from isal import igzip

from cases.models import Case
from cases.natural import natural_key
from scoring.ingest.bulk import insert_rows, relax_durability, update_rows
from scoring.ingest.chunks import score_runs
from scoring.ingest.pipeline import (
    clear_chunk_results,
    clear_runs,
    enqueue_chunks,
    enqueue_range,
    finish_if_complete,
    note_unknown_case,
    update_counts,
)
from scoring.ingest.prices import USAGE_FIELDS, team_prices, usage_values
from scoring.ingest.uploads import (
    GZIP_ERRORS,
    UploadRefused,
    broken_gzip,
    in_blocks,
    open_upload,
    restore_in_blocks,
)
from scoring.matcher import ERROR, FAIL, PASS, InvalidInput, Problem, TrialNumbering
from scoring.matcher import Run as MatcherRun
from scoring.matcher import Suite as MatcherSuite
from scoring.models import (
    InvalidLine,
    ReadRange,
    Result,
    Run,
    ScoredChunk,
    Status,
    Submission,
    UploadChunk,
)
from scoring.runfiles.diagnosis import FIRST_PROBLEMS, HEAD_BYTES, diagnose
from scoring.runfiles.reader import RunLine, read_lines_from, read_run_lines, reads_line_by_line
from scoring.runfiles.runmeta import meta_values, note_seen, tool_names

RUN_FIELDS = (
    "submission_id", "seq", "line", "case_key", "case_order", "trial", "trial_given", "document",
    "final_text", "tools", "meta_values", *USAGE_FIELDS,
)  # fmt: skip
INVALID_FIELDS = ("submission_id", "line", "reason")
INVALID_BATCH = 1000  # invalid lines stored per write
COUNTED_BATCH = 20_000  # invalid lines only counted (past the stored limit) per write
# A run's case key and trial go into indexed, 32-bit columns; past these a run is refused by
# line rather than failing its whole chunk's insert.
CASE_KEY_LIMIT = Case._meta.get_field("key").max_length  # no suite can have a longer one
TRIAL_LIMIT = 2**31 - 1
# Of the decompressed file, per range: a range is read by one task, in seconds.
RANGE_BYTES = 32 << 20
# The fewest bytes a record of a run takes (``{}``, and a newline or a comma): a range of
# b bytes gives at most b // 2 + 1 runs, so each range's window of ``seq`` is that wide.
MIN_RECORD_BYTES = 2
SEQ_LIMIT = 2**31 - 1  # Run.seq's column


class Superseded(Exception):
    """The submission was started again (or deleted) while this attempt was reading it."""


def ingest(submission_id: int, *, take_over: bool = False) -> None:
    """Read the submission's file into runs, or plan its ranges and send them to be read;
    a no-op if another attempt is at it or done.

    ``take_over``: the attempt before this one is known to have died (its task is being
    retried after losing the database), so its recent progress is no reason to wait."""
    generation = _claim(submission_id, take_over=take_over)
    if generation is None:
        return
    submission = (
        Submission.objects.select_related("version")
        .defer("version__document", "version__audit")
        .get(pk=submission_id)
    )
    try:
        if _plan_ranges(submission, generation):
            return
    except Superseded:
        return
    batch = _Batch(submission, generation, submission.version.matcher_suite())
    arguments = {"numbered": False, "prices": team_prices(submission.suite.team_id)}
    _read(batch, lambda: open_upload(submission_id), read_run_lines, arguments)


def read_range(submission_id: int, generation: int, index: int, *, take_over=False) -> None:
    """Read range ``index`` of the submission's file (a no-op if it is read, or being read
    by an attempt that makes progress); the task that reads the last range settles them."""
    span = _claim_range(submission_id, generation, index, take_over=take_over)
    if span is not None:
        submission = (
            Submission.objects.select_related("version")
            .defer("version__document", "version__audit")
            .get(pk=submission_id)
        )
        ranges = ReadRange.objects.filter(submission_id=submission_id, generation=generation)
        batch = _Batch(
            submission,
            generation,
            submission.version.matcher_suite(),
            span=span,
            scores_own_chunks=ranges.count() > 1,
        )
        opened = lambda: open_upload(submission_id, span.first_chunk, span.end_chunk)  # noqa: E731
        arguments = {"first_line": span.first_line, "prices": team_prices(submission.suite.team_id)}
        if not _read(batch, opened, read_lines_from, arguments):
            return
    settle(submission_id, generation)


def _read(batch: _Batch, opened, reader, arguments: dict) -> bool:
    """Read what ``opened()`` gives with ``reader`` into ``batch``, and write the last of it;
    False when the attempt was superseded meanwhile."""
    submission = batch.submission
    try:
        with closing(opened()) as stream:
            lines = reader(
                stream,
                format_name=submission.format or None,
                case_field=submission.case_field or None,
                max_line_bytes=settings.CASEBOOK_MAX_LINE_BYTES,
                max_depth=settings.CASEBOOK_MAX_JSON_DEPTH,
                max_uncompressed_bytes=settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES,
                **arguments,
            )
            for item in lines:
                batch.add(item)
    except UploadRefused as exc:
        batch.stop(str(exc))
    except GZIP_ERRORS as exc:
        batch.stop(broken_gzip(exc))
    except Superseded:
        return False
    try:
        batch.flush(final=True)
    except Superseded:
        return False
    return True


def _plan_ranges(submission: Submission, generation: int) -> bool:
    """Plan the ranges of a JSON-lines file and send them to be read; False (nothing done)
    for a file to read in one task: a document of runs, or one too large for the windows
    of ``seq``. A file sent compressed is first stored again in blocks."""
    pk = submission.pk
    try:
        with closing(open_upload(pk)) as stream:
            apart = reads_line_by_line(stream, max_line_bytes=settings.CASEBOOK_MAX_LINE_BYTES)
    except (UploadRefused, *GZIP_ERRORS):
        apart = False  # read in one task, which says why the file breaks off
    if not apart:
        return False
    stopped = ""
    if not in_blocks(pk):
        stopped = restore_in_blocks(pk, before_each=lambda: _touch(pk, generation))
    ranges = plan(pk, submission.chunk_runs)
    if ranges is None:
        return False
    with transaction.atomic():
        locked = _still_current(pk, generation)
        for span in ranges:
            span.generation = generation
        ranges[-1].stop_reason = stopped
        ReadRange.objects.bulk_create(ranges)
        locked.save(update_fields=["heartbeat"])
        for span in ranges:
            enqueue_range(pk, generation, span.index)
    return True


def plan(submission_id: int, chunk_runs: int) -> list[ReadRange] | None:
    """The ranges of a file in blocks: each starts at a block where a line starts, after
    ``RANGE_BYTES`` or more of the one before, so no line is split; each has a window of
    ``seq`` of its own, starting at a multiple of ``chunk_runs`` so no scoring chunk holds
    runs of two ranges. None when the windows would pass ``SEQ_LIMIT`` (a file of gigabytes)."""
    blocks = list(
        UploadChunk.objects.filter(submission_id=submission_id)
        .order_by("index")
        .values_list("index", "offset", "lines_before", "starts_line")
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


def _still_current(submission_id: int, generation: int) -> Submission:
    """The submission, locked; raises ``Superseded`` if it moved on past ``generation``, or
    is no longer reading its file (a range failed on a bug: the others stop)."""
    submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
    if (
        submission is None
        or submission.generation != generation
        or submission.status != Status.INGESTING
    ):
        raise Superseded
    return submission


def _touch(submission_id: int, generation: int) -> None:
    """Show progress (the sweep leaves a submission that makes some), if still current."""
    _still_current(submission_id, generation).save(update_fields=["heartbeat"])


def _claim_range(
    submission_id: int, generation: int, index: int, *, take_over: bool
) -> ReadRange | None:
    """Start a new attempt at reading a range, deleting what an earlier one stored; None
    when it is read, superseded, or being read by an attempt making progress."""
    with transaction.atomic():
        try:
            submission = _still_current(submission_id, generation)
        except Superseded:
            return None
        span = ReadRange.objects.select_for_update().filter(
            submission_id=submission_id, generation=generation, index=index
        )
        span = span.first()
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
        submission.ingest_finished = None  # until this attempt settles its ranges
        submission.save()
        return submission.generation


def tools_text(run) -> str:
    """``Run.tools`` for a run: the names it called, one a line."""
    names = sorted({call.name for batch in run.batches for call in batch})
    return "".join(f"\n{name}" for name in names) + "\n" if names else ""


class _Batch:
    """The runs and invalid lines read since the last write: of the whole file, or of one
    range of it (``span``)."""

    def __init__(
        self,
        submission: Submission,
        generation: int,
        suite: MatcherSuite,
        *,
        span: ReadRange | None = None,
        scores_own_chunks: bool = False,
    ):
        self.submission = submission
        self.submission_id = submission.pk
        self.chunk_runs = submission.chunk_runs
        self.generation = generation
        self.suite = suite
        self.span = span
        self.first_seq = span.first_seq if span else 0
        self.seq = self.first_seq  # the last stored run's seq
        # Read from the file's start (the whole file, or the first range), its runs are
        # final as they are read: trials numbered and counted against the version. A later
        # range's trials are as given, or numbered within the range, and its runs counted,
        # until ``settle`` does it in the file's order. Either way, each chunk is scored
        # as soon as it is written.
        self.from_start = span is None or span.index == 0
        self.numbering = TrialNumbering()
        self.seen_in_range: dict[str, int] = {}
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
        # The reader of one of several ranges scores each chunk it writes itself, from the
        # runs it parsed: the other workers are reading the other ranges, and reading the
        # runs back would cost as much again. A file read by one task sends its chunks to
        # the other workers instead (docs/pipeline.md#ranges).
        self.scores_own_chunks = scores_own_chunks
        self.parsed: list[MatcherRun] = []

    def add(self, item: RunLine) -> None:
        self.last_line = item.line
        if item.format:
            self.formats.add(item.format)
        problems = item.problems or unstorable(item)
        given = not problems and item.run.trial is not None
        problems = problems or self._number(item)
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
        if not self.from_start:
            pass  # counted against the version when the ranges are settled
        elif self.suite.case(run.case) is None:
            self.unknown.append((run.case, item.line))
        else:
            self.known += 1
        self.seq += 1
        tools, meta = tools_text(run), meta_values(run.meta)
        note_seen(self.tools_seen, tool_names(tools))
        note_seen(self.meta_keys, meta)
        self.runs.append(
            (self.submission_id, self.seq, item.line, run.case, natural_key(run.case),
             run.trial, given, canonical, run.final_text, tools, meta, *usage_values(run))
        )  # fmt: skip
        if self.scores_own_chunks:
            self.parsed.append(run)
        if len(self.runs) == self.chunk_runs:
            self.flush()

    def _number(self, item: RunLine) -> tuple[Problem, ...]:
        """Give the run its trial; the problem if its case already has that trial."""
        run = item.run
        if not self.from_start:
            if run.trial is None:
                run.trial = self.seen_in_range.get(run.case, 0)
            self.seen_in_range[run.case] = self.seen_in_range.get(run.case, 0) + 1
            return ()
        try:
            run.trial = self.numbering.trial(run.case, run.trial)
        except InvalidInput as exc:
            return tuple(item.problem(p.path, p.message) for p in exc.problems)
        return ()

    def stop(self, reason: str) -> None:
        """The file cannot be read past here; what was read is kept, and why it stopped is
        stored past the limit on invalid lines too."""
        self.first_problems.append(reason)
        self.invalid_read += 1
        self.invalid.append((self.submission_id, self.last_line + 1, reason))

    def flush(self, *, runs: bool = True, final: bool = False) -> None:
        """Write what was read, in one transaction with the submission's counts.

        Runs are written a whole scoring chunk at a time (or the last, partial one), so
        each chunk is scored once, when all its runs are there: here, once committed, by
        the reader of one of several ranges; else by a ``score_chunk`` task sent on the
        commit."""
        try:
            written = self._write(runs=runs, final=final)
        except IntegrityError:
            # Another attempt wrote the same ``seq`` first: this one was superseded (it
            # raises so), unless something else is wrong.
            with transaction.atomic():
                _still_current(self.submission_id, self.generation)
                self._locked_span()
            raise
        self.invalid, self.invalid_read = [], 0
        if written is not None:
            index, read = written
            score_runs(self.submission_id, self.generation, [index], read)

    def _write(self, *, runs: bool, final: bool) -> tuple[int, list] | None:
        """Write in one transaction; the chunk written for this reader to score once it
        commits, as ``(index, [(id, seq, run)])``, if it scores its own."""
        written = None
        with transaction.atomic():
            relax_durability()  # runs can be read again from the stored upload
            # The runs are copied before the locks are taken: the submission's lock is held
            # to the commit, and copying a chunk of runs is most of the write, so the other
            # workers write meanwhile. Superseded, this attempt rolls them back below.
            if runs and self.runs:
                insert_rows(Run, RUN_FIELDS, self.runs)
            submission = _still_current(self.submission_id, self.generation)
            span = self._locked_span()
            if runs and self.runs:
                submission.stored_runs += len(self.runs)
                submission.total += self.known
                for case_key, line in self.unknown:
                    note_unknown_case(submission.unknown_cases, case_key, line)
                if span is not None:
                    span.runs = self.seq - self.first_seq
                index = (self.seq - 1) // self.chunk_runs
                if self.scores_own_chunks:
                    written = (index, self._with_ids())
                else:
                    enqueue_chunks(submission, [index])
                self.runs, self.parsed, self.unknown, self.known = [], [], [], 0
            insert_rows(InvalidLine, INVALID_FIELDS, self.invalid)
            submission.invalid += self.invalid_read
            if span is None:
                submission.formats_seen = sorted(self.formats)
                submission.tools_seen = sorted(self.tools_seen)
                submission.meta_keys = sorted(self.meta_keys)
            else:
                span.invalid += self.invalid_read
                span.last_line = self.last_line
                span.done = final
                span.first_problems = self.first_problems
                span.formats_seen = sorted(self.formats)
                span.tools_seen = sorted(self.tools_seen)
                span.meta_keys = sorted(self.meta_keys)
                span.save()
            if span is None and final:
                _finish_reading(submission, self.first_problems)
            submission.save()
        return written

    def _with_ids(self) -> list[tuple[int, int, MatcherRun]]:
        """The runs just copied in, as ``(id, seq, run)``."""
        first = self.seq - len(self.parsed) + 1
        ids = Run.objects.filter(submission_id=self.submission_id, seq__range=(first, self.seq))
        ids = ids.order_by("seq").values_list("pk", flat=True)
        return list(zip(ids, range(first, self.seq + 1), self.parsed, strict=True))

    def _locked_span(self) -> ReadRange | None:
        """The range being read, locked; raises ``Superseded`` if another attempt took it."""
        if self.span is None:
            return None
        span = ReadRange.objects.select_for_update().get(pk=self.span.pk)
        if span.attempt != self.span.attempt:
            raise Superseded
        return span


def _finish_reading(submission: Submission, first_problems: list[str]) -> None:
    """The (locked) submission's file is read: on to scoring, or failed if it gave no run."""
    submission.ingest_finished = timezone.now()
    if submission.stored_runs:
        submission.status = Status.SCORING
        finish_if_complete(submission)
    else:
        submission.status = Status.FAILED
        submission.error = diagnosis(submission.pk, first_problems, submission.invalid)


def diagnosis(submission_id: int, first_problems: list[str], invalid: int) -> str:
    """What the file that gave no valid run looks like, and what to change."""
    try:
        with closing(open_upload(submission_id)) as stream:
            head = stream.read(HEAD_BYTES)
    except (UploadRefused, *GZIP_ERRORS):
        head = b""
    return diagnose(head, first_problems, invalid=invalid)


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
            submission = _still_current(submission_id, generation)
        except Superseded:
            return
        ranges = list(ReadRange.objects.filter(submission=submission, generation=generation))
        if submission.ingest_finished or not ranges or not all(r.done for r in ranges):
            return
        first_problems = [p for r in ranges for p in r.first_problems][:FIRST_PROBLEMS]
        repeats = _settle_runs(submission, submission.version.matcher_suite())
        submission.invalid = sum(r.invalid for r in ranges) + len(repeats)
        if repeats:
            insert_rows(InvalidLine, INVALID_FIELDS, repeats)
        _keep_first_invalid(submission)
        stopped = ranges[-1].stop_reason
        if stopped:
            last_line = max(r.last_line for r in ranges)
            InvalidLine.objects.create(submission=submission, line=last_line + 1, reason=stopped)
            submission.invalid += 1
            first_problems.append(stopped)
        submission.stored_runs = sum(r.runs for r in ranges) - len(repeats)
        formats, tools, meta = set(), set(), set()
        for r in ranges:
            formats.update(r.formats_seen)
            note_seen(tools, r.tools_seen)
            note_seen(meta, r.meta_keys)
        submission.formats_seen = sorted(formats)
        submission.tools_seen = sorted(tools)
        submission.meta_keys = sorted(meta)
        _finish_reading(submission, first_problems)
        submission.save()


def _settle_runs(submission: Submission, suite: MatcherSuite) -> list[tuple]:
    """In one pass over the (locked) submission's runs in file order: number their trials
    as ``TrialNumbering`` does while a file is read whole, and count them against ``suite``
    (``total``, the unknown cases). A run whose range numbered it otherwise is corrected,
    with its result if it was scored already; a run that repeats a trial its case has is
    deleted, with its result, and returned as an invalid line."""
    numbering = TrialNumbering()
    repeats = []
    # Few, unless the runs leave their trials to number and cases span ranges: 16 bytes a run.
    renumbered, trials = array("q"), array("q")
    submission.total = 0
    submission.unknown_cases = {}
    runs = submission.runs.order_by("seq")
    runs = runs.values_list("pk", "line", "case_key", "trial", "trial_given")
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
        if suite.case(case_key) is not None:
            submission.total += 1
        else:
            note_unknown_case(submission.unknown_cases, case_key, line)
    for start in range(0, len(renumbered), INVALID_BATCH):
        end = start + INVALID_BATCH
        _renumber(dict(zip(renumbered[start:end], trials[start:end], strict=True)))
    if repeats:
        _delete_repeats(submission, [pk for pk, _, _ in repeats])
    return [(submission.pk, line, reason) for _, line, reason in repeats]


def _renumber(trials: dict[int, int]) -> None:
    """Give the runs ``trials`` (by id) their trial: in the row, the document, and the
    report of their result if they were scored already."""
    runs = Run.objects.filter(pk__in=list(trials)).values_list("pk", "document")
    rows = []
    for pk, document in runs:
        document["trial"] = trials[pk]
        rows.append((pk, trials[pk], document))
    update_rows(Run, ("trial", "document"), rows)
    results = Result.objects.filter(run_id__in=list(trials)).values_list("pk", "report")
    rows = []
    for pk, report in results:
        report["trial"] = trials[pk]
        rows.append((pk, report))
    update_rows(Result, ("report",), rows)


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


def unstorable(item: RunLine) -> tuple[Problem, ...]:
    """What keeps a valid run out of the database: a case key holding NUL (no case key may,
    and PostgreSQL's text and jsonb cannot: read without it, it would be another key), a
    case key longer than any case's (the index over runs could not hold a very long one),
    or a trial past the column's range."""
    problems = []
    if "\x00" in item.run.case:
        problems.append(
            item.problem("case", "holds the NUL character (U+0000), which no case key may hold")
        )
    if len(item.run.case) > CASE_KEY_LIMIT:
        length = len(item.run.case)
        message = f"at most {CASE_KEY_LIMIT} characters, as a case's key (this is {length:,})"
        problems.append(item.problem("case", message))
    if item.run.trial is not None and item.run.trial > TRIAL_LIMIT:
        problems.append(item.problem("trial", f"at most {TRIAL_LIMIT:,}"))
    return tuple(problems)


def describe(problems: tuple[Problem, ...]) -> str:
    """An invalid line's reason: each problem, with the field it is about."""
    return "; ".join(f"{p.path}: {p.message}" if p.path else p.message for p in problems)
