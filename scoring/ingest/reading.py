"""Reading an uploaded run file into stored runs (docs/pipeline.md#ingest).

The file is streamed from the database a chunk at a time and read a line at a time. Valid
runs are written through the run store (``scoring.ingest.store``) in bulk, one scoring
chunk's worth per transaction, and each committed chunk is scored at once: by its range's
own task, or yielded to the task reading, which sends it to the workers; so runs are
scored while the file is still being read. Invalid lines are recorded with their number
and reason, the first ``CASEBOOK_MAX_STORED_INVALID_LINES`` of them (the rest only
counted, so a file of junk costs no more rows than that); they never stop the valid lines
around them.

A file that gives no valid run at all ends ``failed``, with one message saying what the
file looks like and what to change (``scoring.runfiles.diagnosis``), rather than a list of
invalid lines under a green "done".

The attempt reading is claimed by the conductor (``scoring.ingest.conductor``), which also
plans a JSON-lines file's **ranges** (docs/pipeline.md#ranges) and settles them once all
are read. Here a file is read whole (``read_whole``: a document of runs, or a file too
large for ranges) or one range at a time (``read_range``), each write under the submission's
lock and only while its generation and range attempt hold (``store.current``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import closing

from django.conf import settings
from django.db import IntegrityError, transaction

from scoring.ingest.bulk import relax_durability
from scoring.ingest.chunks import score_run, score_runs
from scoring.ingest.garbage import chunk_done
from scoring.ingest.prices import team_prices
from scoring.ingest.store import (
    META_VALUES,
    TOOLS,
    Scored,
    Superseded,
    count_run,
    current,
    describe,
    finish_reading,
    run_row,
    unstorable,
    write_invalid,
    write_runs,
)
from scoring.ingest.uploads import GZIP_ERRORS, UploadRefused, broken_gzip, open_upload
from scoring.matcher import InvalidInput, Problem, TrialNumbering
from scoring.matcher import Suite as MatcherSuite
from scoring.models import ReadRange, Run, Submission
from scoring.runfiles.diagnosis import FIRST_PROBLEMS
from scoring.runfiles.reader import RunLine, read_lines_from, read_run_lines
from scoring.runfiles.runmeta import note_seen, tool_names

INVALID_BATCH = 1000  # invalid lines stored per write
COUNTED_BATCH = 20_000  # invalid lines only counted (past the stored limit) per write


def read_whole(submission_id: int, generation: int) -> Iterator[int]:
    """Read the submission's file in this task, as attempt ``generation`` (claimed by the
    conductor), yielding each chunk written once it is committed, for the workers to score."""
    submission = _submission(submission_id)
    batch = _Batch(submission, generation, submission.version.matcher_suite())
    opened = lambda: open_upload(submission_id)  # noqa: E731
    arguments = {"numbered": False, "prices": team_prices(submission.suite.team_id)}
    yield from _read(batch, opened, read_run_lines, arguments)


def read_range(submission_id: int, generation: int, span: ReadRange) -> Iterator[int]:
    """Read the range ``span`` of the submission's file (claimed by the conductor). In a
    file of several ranges, its task scores each chunk as it writes it; in a file of one,
    the chunks written are yielded once committed, for the workers to score."""
    submission = _submission(submission_id)
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
    yield from _read(batch, opened, read_lines_from, arguments)


def _submission(submission_id: int) -> Submission:
    return (
        Submission.objects.select_related("version", "suite")
        .defer("version__document", "version__audit")
        .get(pk=submission_id)
    )


def _read(batch: _Batch, opened, reader, arguments: dict) -> Generator[int, None, None]:
    """Read what ``opened()`` gives with ``reader`` into ``batch``, and write the last of it,
    yielding each chunk written that is left to the workers; it stops when the attempt was
    superseded meanwhile."""
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
                yield from batch.left()
    except UploadRefused as exc:
        batch.stop(str(exc))
    except GZIP_ERRORS as exc:
        batch.stop(broken_gzip(exc))
    except Superseded:
        return
    try:
        batch.flush(final=True)
    except Superseded:
        return
    yield from batch.left()


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
        self.counted: list[tuple[str, int]] = []  # (case, line) of runs to count against it
        self.invalid: list[tuple] = []  # the invalid lines to store
        self.invalid_read = 0  # the invalid lines read since the last write, stored or not
        self.invalid_room = settings.CASEBOOK_MAX_STORED_INVALID_LINES
        self.formats: set[str] = set()
        self.tools_seen: set[str] = set()
        self.meta_keys: set[str] = set()
        self.first_problems: list[str] = []  # for the diagnosis of a file with no valid run
        # The reader of one of several ranges scores each run as it parses it, and each
        # chunk it writes is written with their reports: the other workers are reading the
        # other ranges, and reading the runs back would cost as much again. A file read by
        # one task sends its chunks to the other workers instead (docs/pipeline.md#ranges).
        self.scores_own_chunks = scores_own_chunks
        self.scored: list[tuple[int, Scored]] = []  # (seq, its report) of runs of a case
        self.to_score: list[int] = []  # chunks written and committed, for the workers

    def left(self) -> Iterator[int]:
        """The chunks written since the last call that are left to the workers to score."""
        left, self.to_score = self.to_score, []
        yield from left

    def add(self, item: RunLine) -> None:
        self.last_line = item.line
        if item.format:
            self.formats.add(item.format)
        problems = item.problems or unstorable(item)
        given = not problems and item.run is not None and item.run.trial is not None
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
        run, canonical = item.run, item.canonical
        # A valid line's, its trial numbered (``_number``), as ``unstorable`` has it.
        assert run is not None
        assert canonical is not None
        assert run.trial is not None
        if self.from_start:  # else counted when the ranges are settled
            self.counted.append((run.case, item.line))
        self.seq += 1
        # Stored as numbered: a stored run is complete.
        row = run_row(
            self.submission_id, self.seq, item.line, run.case, run.trial, run, canonical, given
        )
        note_seen(self.tools_seen, tool_names(row[TOOLS]))
        note_seen(self.meta_keys, row[META_VALUES])
        self.runs.append(row)
        if self.scores_own_chunks and (case := self.suite.case(run.case)) is not None:
            self.scored.append((self.seq, score_run(case, run)))
        if len(self.runs) == self.chunk_runs:
            self.flush()

    def _number(self, item: RunLine) -> tuple[Problem, ...]:
        """Give the run its trial; the problem if its case already has that trial."""
        run = item.run
        assert run is not None  # a valid line's
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
        the reader of one of several ranges; else by a task, sent by the reader's own task
        (``left``)."""
        try:
            written = self._write(runs=runs, final=final)
        except IntegrityError:
            # Another attempt wrote the same ``seq`` first: this one was superseded (it
            # raises so), unless something else is wrong.
            with transaction.atomic():
                current(self.submission_id, self.generation)
                self._locked_span()
            raise
        self.invalid, self.invalid_read = [], 0
        if written is None:
            return
        self._pass_on(*written)
        del written  # the chunk's runs, dropped before collecting what they leave
        chunk_done()

    def _pass_on(self, index: int, read: list | None) -> None:
        """Write the reports of the chunk just written, or leave it to the workers."""
        if read is None:
            self.to_score.append(index)
        else:
            score_runs(self.submission_id, self.generation, [index], read)

    def _write(self, *, runs: bool, final: bool) -> tuple[int, list | None] | None:
        """Write in one transaction; the chunk written, as ``(index, [(id, seq, run)])`` for
        this reader to score once it commits if it scores its own, else ``(index, None)``."""
        written = None
        with transaction.atomic():
            relax_durability()  # runs can be read again from the stored upload
            # The runs are copied before the locks are taken: the submission's lock is held
            # to the commit, and copying a chunk of runs is most of the write, so the other
            # workers write meanwhile. Superseded, this attempt rolls them back below.
            if runs and self.runs:
                write_runs(self.runs)
            submission = current(self.submission_id, self.generation)
            span = self._locked_span()
            if runs and self.runs:
                submission.stored_runs += len(self.runs)
                for case_key, line in self.counted:
                    count_run(submission, self.suite, case_key, line)
                if span is not None:
                    span.runs = self.seq - self.first_seq
                index = (self.seq - 1) // self.chunk_runs
                written = (index, self._with_ids() if self.scores_own_chunks else None)
                self.runs, self.scored, self.counted = [], [], []
            write_invalid(self.invalid)
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
                finish_reading(submission, self.first_problems)
            submission.save()
        return written

    def _with_ids(self) -> list[tuple[int, int, Scored]]:
        """The reports of the runs just copied in, as ``(id, seq, scored)``."""
        first = self.seq - len(self.runs) + 1
        stored = Run.objects.filter(submission_id=self.submission_id, seq__range=(first, self.seq))
        ids = dict(stored.order_by().values_list("seq", "pk"))
        return [(ids[seq], seq, scored) for seq, scored in self.scored]

    def _locked_span(self) -> ReadRange | None:
        """The range being read, locked; raises ``Superseded`` if another attempt took it."""
        if self.span is None:
            return None
        span = ReadRange.objects.select_for_update().get(pk=self.span.pk)
        if span.attempt != self.span.attempt:
            raise Superseded
        return span
