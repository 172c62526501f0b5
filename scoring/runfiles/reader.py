"""Streaming a run file, one validated canonical run at a time.

A run file is JSON lines: each line is parsed, converted from its format, validated and
numbered before the next is read, so memory stays flat however long the file is. Bad lines
come out as problems with their line number; they never stop the valid lines around them.

A run file may instead be one document holding runs, recognised by its start (only the
first line is looked at before deciding, so a large JSON-lines file is never read whole):

- ``[``: a JSON array whose elements are runs in any format (τ-bench's results), streamed
  element by element (``json_array``);
- ``PK``: an Inspect AI ``.eval`` archive, read sample by sample (``inspect_ai.read_eval``);
- a lone ``{`` (a pretty-printed document, as Inspect writes them): an Inspect AI ``.json``
  log, streamed sample by sample; a first line that is a whole log (a compact one) is
  split into its samples.

``case_field`` names where each record (line, element or sample) holds its case key, for
logs that do not call it ``case`` (``scoring.runfiles.casefield``).

A line past the line limit is never held whole either: it is read in bounded blocks and
dropped up to its newline (``bounded_lines``), so memory stays near the limit whatever the
line: limits hold while reading, not after (docs/pipeline.md#limits). Blank lines are
skipped a buffer at a time, counted, never read one by one: a small gzip expands to
millions of them. A document is told by
its first bytes, not its first line, so a compact array on one long line is still read
element by element.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import IO, Any, BinaryIO, TypeGuard, cast, final

from scoring.importers import detect_format, inspect_ai, object_at, to_canonical
from scoring.importers.costs import CATALOGUE, Prices, priced
from scoring.importers.otel import NotARun
from scoring.importers.streaming import CHUNK, ByteStream, Readable, json_array, value_limit
from scoring.matcher import (
    InvalidInput,
    Problem,
    Run,
    TrialNumbering,
    duplicate_key,
    field_path,
    load_run,
    nested_deeper_than,
    parse_json,
)
from scoring.runfiles.casefield import root_field, with_case_from
from scoring.runfiles.otlp_files import is_collector_line, regrouped

logger = logging.getLogger(__name__)

_BOM = b"\xef\xbb\xbf"
_PEEK_BYTES = 4096
_ARRAY, _ARCHIVE = "array", "archive"  # what _document_start finds
_ZIP = b"PK\x03\x04"
# An archive read from a stream that cannot seek (standard input, a stored upload) is
# copied aside first: zip keeps its directory at the end. Small ones stay in memory.
_SPOOL_IN_MEMORY = 8 << 20

LINE = "line"
SAMPLE = "sample"
ITEM = "item"  # an element of a JSON array of runs
_UNIT_PATHS = {SAMPLE: "samples", ITEM: ""}  # where a unit's problems are located

# Nesting read, by default: real runs nest a dozen levels; past this the matcher and the
# importers, which walk values recursively, would spend the stack (CASEBOOK_MAX_JSON_DEPTH).
MAX_DEPTH = 64
_SKIP_BLOCK = 1 << 20  # what is read at a time of a line being skipped

# Open a run file with this buffer (``open(path, "rb", buffering=READ_BUFFER)``): a line
# longer than the buffer is put together from pieces, which cost a 16 KB line (a τ-bench
# trajectory) more than the rest of its parsing: 17 µs a line with the default 8 KB buffer,
# under 3 with this one.
READ_BUFFER = 1 << 20


# Not frozen, as ``Run`` is not: one is made per record, and a frozen dataclass pays an
# object.__setattr__ per field. Treat it as immutable all the same.
@dataclass(slots=True)
class RunLine:
    """One run of a run file (a non-blank line, an element of an array of runs, or a sample
    of an Inspect log): its run, or why it has none.

    ``line`` is the 1-based position in the file's ``unit``: its line number, or for a
    document of runs the element's (or sample's) position. The problems of an element or
    sample carry no line number; their paths start at it (``[17].traj[3]...``,
    ``samples[2].messages[1]...``).
    """

    line: int
    run: Run | None = None
    # The run as stored: canonical format, unknown fields kept.
    canonical: dict[str, Any] | None = None
    problems: tuple[Problem, ...] = ()
    unit: str = LINE
    format: str | None = None  # the run format, when the line was recognised

    def problem(self, path: str, message: str) -> Problem:
        """A further problem with this run (an unknown case, say), located like the others."""
        return _located(self.unit, self.line, Problem(path, message))


@final  # so that a type() check tells it apart from the rest of a RawLine
@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line past the line limit, dropped as it was read: only its size is kept."""

    size: int


@final
@dataclass(frozen=True, slots=True)
class BlankLines:
    """Blank lines (white space alone) skipped together as they were read: their count."""

    count: int


# A line of a run file as ``bounded_lines`` gives it.
RawLine = bytes | SkippedLine | BlankLines

# What a blank line may hold (``bytes.isspace``).
_WHITE_SPACE = b" \t\n\r\x0b\x0c"


def lines_in(raw: RawLine) -> int:
    """How many lines of the file an item of ``bounded_lines`` stands for."""
    return raw.count if type(raw) is BlankLines else 1


def _skip_blank_lines(stream: Any, max_line_bytes: int | None) -> int:
    """Consume the whole blank lines at the stream's position, a buffer at a time (``peek``,
    no further than ``max_line_bytes``: a longer line of white space is left to
    ``readline``, and to the limit); returns how many."""
    most = _SKIP_BLOCK if max_line_bytes is None else max_line_bytes
    count = 0
    while True:
        ahead: bytes = stream.peek(most)[:most]
        blank = len(ahead) - len(ahead.lstrip(_WHITE_SPACE))
        end = ahead.rfind(b"\n", 0, blank) + 1  # past the last newline of the white space
        if not end:
            return count
        count += ahead.count(b"\n", 0, end)
        stream.read(end)
        if end < len(ahead):
            return count  # a line of something else starts here


def bounded_lines(lines: Iterable[RawLine], max_line_bytes: int | None) -> Iterator[RawLine]:
    """The lines of ``lines``, each a ``SkippedLine`` instead when longer than
    ``max_line_bytes`` (its newline included), and the blank lines after a blank line as
    one ``BlankLines`` (``lines_in`` says how many lines an item stands for).

    A readable binary stream is read with ``readline(limit)``, so a longer line is never in
    memory: its first ``max_line_bytes + 1`` bytes tell it is too long, and the rest is read
    and dropped a block at a time up to the next newline. After a blank line, the blank
    lines that follow are skipped from the stream's buffer, when it has one (``peek``). Any
    other iterable of lines (a list, say) is already in memory, and its lines are only
    measured."""
    readline = getattr(lines, "readline", None)
    if readline is None:
        for raw in lines:
            if type(raw) is bytes and max_line_bytes is not None and len(raw) > max_line_bytes:
                raw = SkippedLine(len(raw))
            yield raw
        return
    limit = -1 if max_line_bytes is None else max_line_bytes + 1
    peeks = hasattr(lines, "peek")
    while raw := readline(limit):
        if max_line_bytes is None or len(raw) <= max_line_bytes:
            yield raw
            if peeks and raw.isspace() and (blank := _skip_blank_lines(lines, max_line_bytes)):
                yield BlankLines(blank)
            continue
        size = len(raw)
        while not raw.endswith(b"\n") and (raw := readline(_SKIP_BLOCK)):
            size += len(raw)
        yield SkippedLine(size)


def json_lines(
    lines: Iterable[RawLine],
    *,
    max_line_bytes: int | None = None,
    max_depth: int | None = None,
    start: int = 1,
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value or ``InvalidInput``) for each non-blank line, in order.

    ``lines`` is a binary stream or an iterable of lines, ``SkippedLine`` and ``BlankLines``
    among them; its first is line ``start`` of the file (a batch of a file's lines starts
    further on). A line longer than ``max_line_bytes``, or nested deeper than ``max_depth``
    arrays and objects, is an ``InvalidInput`` saying so."""
    number = start - 1
    for raw in bounded_lines(lines, max_line_bytes):
        if type(raw) is BlankLines:
            number += raw.count
            continue
        number += 1
        if type(raw) is SkippedLine:
            message = f"the line is {raw.size:,} bytes; the limit is {max_line_bytes:,}"
            yield number, InvalidInput([Problem("", message, number)])
            continue
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if not raw or raw.isspace():  # blank; stops at the first other byte, copying none
            continue
        try:
            value = parse_json(raw)
        except InvalidInput as exc:
            yield number, exc.at_line(number)
            continue
        # Before anything walks the value (the duplicate-key check, the importers): a line
        # nested deeper than that would cost them recursion, not a problem of its own.
        if max_depth is not None and nested_deeper_than(raw, max_depth):
            message = f"the JSON is nested more than {max_depth} levels deep"
            yield number, InvalidInput([Problem("", message, number)])
            continue
        duplicate = duplicate_key(raw, value)
        if duplicate is not None:
            path, key = duplicate
            yield number, InvalidInput([Problem(path, f"duplicate key {key!r}", number)])
            continue
        yield number, value


def read_run_lines(
    lines: Iterable[bytes],
    *,
    format_name: str | None = None,
    case_field: str | None = None,
    max_line_bytes: int | None = None,
    max_depth: int = MAX_DEPTH,
    max_uncompressed_bytes: int | None = None,
    numbered: bool = True,
    prices: Prices = CATALOGUE,
) -> Iterator[RunLine]:
    """The runs of a run file (``lines``: an iterable of byte lines, such as a binary file),
    in order; blank lines are skipped. A file that is one document of runs (an array, an
    Inspect AI log) gives a run per element or sample. The limits are those of
    ``json_lines`` (every kind of file is read no deeper than ``max_depth``), and for an
    ``.eval`` archive what its entries may expand to. Unless ``numbered``, a run's trial is
    its own (None when it gives none), for the caller to number. Each run is costed at
    ``prices`` (docs/formats.md#cost)."""
    rest = iter(lines)  # a file is its own iterator: what ``bounded`` leaves is read on
    records = RecordReader(format_name, case_field, numbered=numbered, prices=prices)
    # Told before any line is read: an array or an archive may hold no newline for long.
    starts = _document_start(rest)
    if starts == _ARRAY:  # found only in a stream (``_document_start``): ``rest`` is one
        stream = cast(Readable, rest)
        items = json_array(stream, max_item_bytes=max_line_bytes, max_depth=max_depth)
        yield from records.runs(items, ITEM)
        return
    head: bytes | SkippedLine = b""
    blank = 0
    if starts != _ARCHIVE:
        bounded = bounded_lines(rest, max_line_bytes)
        blank, head = _head(bounded)
    first = _stripped(head)
    text = head if type(head) is bytes else b""  # a line too long starts no document
    if starts == _ARCHIVE or first.startswith(_ZIP):
        archive = _seekable(lines, text, rest)
        try:
            samples = inspect_ai.read_eval(
                archive,
                max_uncompressed_bytes=max_uncompressed_bytes,
                keep=root_field(case_field),
                max_depth=max_depth,
                max_value_bytes=value_limit(max_line_bytes),
            )
            yield from records.samples(samples)
        finally:
            if archive is not lines:
                archive.close()
    elif first.startswith(b"["):
        stream = ByteStream(text.removeprefix(_BOM), rest)
        items = json_array(stream, max_item_bytes=max_line_bytes, max_depth=max_depth)
        yield from records.runs(items, ITEM)
    elif first == b"{":
        stream = ByteStream(text.removeprefix(_BOM), rest)
        log = inspect_ai.read_log(
            stream,
            keep=root_field(case_field),
            max_depth=max_depth,
            max_value_bytes=value_limit(max_line_bytes),
        )
        yield from records.samples(log)
    else:
        values = json_lines(
            chain([head], bounded),
            max_line_bytes=max_line_bytes,
            max_depth=max_depth,
            start=blank + 1,
        )
        yield from records.runs(values, LINE)


def read_lines_from(
    stream: BinaryIO,
    *,
    first_line: int,
    format_name: str | None = None,
    case_field: str | None = None,
    max_line_bytes: int | None = None,
    max_depth: int = MAX_DEPTH,
    max_uncompressed_bytes: int | None = None,  # a stretch expands to no more than its blocks
    prices: Prices = CATALOGUE,
) -> Iterator[RunLine]:
    """The runs of a stretch of a JSON-lines file read apart from the rest (a range of its
    blocks, docs/pipeline.md#ranges), whose first line is line ``first_line`` of the file:
    as ``read_run_lines`` reads them, each line alone, but their trials left unnumbered
    (their own, or None) for whoever puts the stretches together."""
    records = RecordReader(format_name, case_field, numbered=False, prices=prices)
    values = json_lines(
        stream, max_line_bytes=max_line_bytes, max_depth=max_depth, start=first_line
    )
    yield from records.runs(values, LINE)


def line_batches(
    stream: BinaryIO, *, max_line_bytes: int | None, batch_lines: int, batch_bytes: int
) -> Iterator[tuple[int, list[RawLine]]] | None:
    """A JSON-lines file (a binary stream) as batches of its raw lines, each with
    the number of its first line (at most ``batch_lines`` lines, ending at the one that
    takes it to ``batch_bytes``), for workers to read with ``json_lines(batch, start=…)``
    and ``RecordReader``; lines past ``max_line_bytes`` come as ``SkippedLine``. None (the
    stream sought back to where it was) when the file is one document of runs (an array, an
    Inspect log), or a stream that cannot seek back (a named pipe): ``read_run_lines``
    reads those in one process."""
    if not stream.seekable():
        return None
    at = stream.tell()
    if _document_start(stream):
        stream.seek(at)
        return None
    bounded = bounded_lines(stream, max_line_bytes)
    blank, head = _head(bounded)
    if not _lines_apart(head):
        stream.seek(at)
        return None
    return _batched(chain([head], bounded), batch_lines, batch_bytes, start=blank + 1)


def reads_line_by_line(stream: BinaryIO, *, max_line_bytes: int | None) -> bool:
    """Whether a run file (a binary stream, read from its start and left part read) is
    JSON lines whose lines may be read apart, in any stretches (docs/pipeline.md#ranges):
    not a document of runs (an array, an Inspect log) nor the Collector's lines."""
    if _document_start(stream):
        return False
    return _lines_apart(_head(bounded_lines(stream, max_line_bytes))[1])


def _lines_apart(head: bytes | SkippedLine) -> bool:
    first = _stripped(head)
    return not (first.startswith((_ZIP, b"[")) or first == b"{" or _is_collector_line(first))


def _batched(
    lines: Iterator[RawLine], max_lines: int, max_bytes: int, *, start: int
) -> Iterator[tuple[int, list[RawLine]]]:
    batch: list[RawLine] = []
    size = 0
    for raw in lines:
        batch.append(raw)
        size += len(raw) if type(raw) is bytes else 0
        if len(batch) == max_lines or size >= max_bytes:
            yield start, batch
            start += sum(map(lines_in, batch))
            batch, size = [], 0
    if batch:
        yield start, batch


def _is_collector_line(line: bytes) -> bool:
    """A line of the Collector's file exporter, whose traces may run over any lines: read
    in one process, to be regrouped (``otlp_files``)."""
    if b'"resource' not in line:
        return False
    try:
        return is_collector_line(parse_json(line))
    except InvalidInput:
        return False


def _head(bounded: Iterator[RawLine]) -> tuple[int, bytes | SkippedLine]:
    """How many blank lines a file starts with, and the first other line, which tells what
    the file is (``b""`` when there is none). The blank lines are counted, not kept: a
    small gzip expands to millions of them."""
    blank = 0
    for raw in bounded:
        if type(raw) is BlankLines:
            blank += raw.count
        elif type(raw) is SkippedLine or raw.strip():
            return blank, raw
        else:
            blank += 1
    return blank, b""


def _stripped(head: bytes | SkippedLine) -> bytes:
    """The first line, as ``_head`` gives it, stripped (empty when it was too long)."""
    return head.removeprefix(_BOM).strip() if type(head) is bytes else b""


def _document_start(stream: Any) -> str:
    """``_ARRAY`` when a binary stream's first bytes, past a byte-order mark and white
    space, open a JSON array (the byte-order mark is then consumed); ``_ARCHIVE`` when they
    are a zip archive's signature; else ``""``. Nothing else is consumed: the bytes are
    peeked at (a buffered stream) or read and sought back (a seekable one). Other iterables
    of lines give ``""``: their first line tells."""
    if hasattr(stream, "peek"):
        start = stream.peek(_PEEK_BYTES)[:_PEEK_BYTES]
    elif getattr(stream, "seekable", lambda: False)():
        at = stream.tell()
        start = stream.read(_PEEK_BYTES)
        stream.seek(at)
    else:
        return ""
    if start.startswith(_ZIP):
        return _ARCHIVE
    if not start.removeprefix(_BOM).lstrip().startswith(b"["):
        return ""
    if start.startswith(_BOM):
        stream.read(len(_BOM))
    return _ARRAY


class RecordReader:
    """Turns the records of a run file (lines, elements, samples) into runs, numbering the
    trials of each case across the whole file."""

    def __init__(
        self,
        format_name: str | None,
        case_field: str | None,
        *,
        numbered: bool = True,
        prices: Prices = CATALOGUE,
    ):
        self.format_name = format_name
        self.prices = prices
        self.case_field = case_field
        # Traces that are no run (docs/formats.md#collector-files): skipped, counted.
        self.not_runs = 0
        # Unnumbered, for a worker reading one batch of a file: the trials are numbered in
        # file order by whoever puts the batches back together (``TrialNumbering.trial``).
        self.numbering = TrialNumbering() if numbered else None

    def _load(self, canonical: dict[str, Any]) -> Run:
        priced(canonical, self.prices)  # before scoring: a case may bound the cost
        run = load_run(canonical)
        if self.numbering is not None:  # numbered in place: the run is new, none holds it
            run.trial = self.numbering.trial(run.case, run.trial)
        return run

    def runs(self, records: Iterable[tuple[int, Any]], unit: str) -> Iterator[RunLine]:
        if unit == LINE:
            records = regrouped(records)
        for number, value in records:
            if unit == LINE and inspect_ai.is_log(value):  # a whole log, compact, on a line
                yield from self.samples(inspect_ai.log_samples(value))
                continue
            name = self.format_name
            try:
                if isinstance(value, InvalidInput):
                    raise value
                if self.case_field:
                    value = with_case_from(value, self.case_field)
                if name is None and (type(value) is dict or isinstance(value, Mapping)):
                    name = detect_format(value)
                canonical = to_canonical(value, name)
                run = self._load(canonical)
            except NotARun:
                self.not_runs += 1
                continue
            except Exception as exc:  # see _problems_of
                problems = _problems_of(exc, unit, number)
                yield RunLine(number, problems=problems, unit=unit, format=name)
                continue
            yield RunLine(number, run=run, canonical=canonical, unit=unit, format=name)

    def samples(self, samples: Iterator[tuple[Any, str | None]]) -> Iterator[RunLine]:
        """A run per sample of an Inspect log; a log that breaks off ends with its problem."""
        if self.format_name not in (None, inspect_ai.NAME):
            message = (
                f"the file is an Inspect AI eval log, not JSON lines in the {self.format_name}"
                " format"
            )
            yield RunLine(1, problems=(Problem("", message, 1),))
            return
        position = 0
        try:
            for position, (sample, model) in enumerate(samples, start=1):
                try:
                    if isinstance(sample, InvalidInput):  # an .eval entry that cannot be read
                        raise sample
                    if self.case_field:
                        sample = with_case_from(sample, self.case_field)
                    canonical = inspect_ai.convert(object_at(sample, ""), model=model)
                    run = self._load(canonical)
                except Exception as exc:  # see _problems_of
                    problems = _problems_of(exc, SAMPLE, position)
                    yield RunLine(position, problems=problems, unit=SAMPLE)
                    continue
                yield RunLine(
                    position, run=run, canonical=canonical, unit=SAMPLE, format=inspect_ai.NAME
                )
        except InvalidInput as exc:  # the document itself is broken (or has no samples)
            yield RunLine(position + 1, problems=exc.problems, unit=SAMPLE)


def _problems_of(exc: Exception, unit: str, position: int) -> tuple[Problem, ...]:
    """The problems of the record at ``position`` that raised ``exc``. An importer raises
    only ``InvalidInput`` (the fuzz tests hold them to it); anything else is a bug, logged,
    and still that record's problem alone: the rest of the file is read."""
    if not isinstance(exc, InvalidInput):
        logger.exception("reading %s %d of a run file", unit, position)
        exc = InvalidInput.single("", "Casebook could not read this record (a bug, logged)")
    return tuple(_located(unit, position, p) for p in exc.problems)


def _located(unit: str, position: int, problem: Problem) -> Problem:
    """``problem`` of the record at ``position``: on its line, or under the element's (or
    sample's) path."""
    if unit == LINE:
        return Problem(problem.path, problem.message, position)
    where = f"{_UNIT_PATHS[unit]}[{position - 1}]"
    return Problem(field_path(where, problem.path) if problem.path else where, problem.message)


def _seekable(lines: Iterable[bytes], head: bytes, rest: Iterator[bytes]) -> IO[bytes]:
    """The whole file as a stream that can seek: ``lines`` itself when it is a file that
    can, else a copy of it (``head`` and then ``rest``) in a temporary file."""
    if _is_seekable_file(lines):
        lines.seek(0)
        return lines
    copy = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)  # noqa: SIM115
    shutil.copyfileobj(ByteStream(head, rest), copy, CHUNK)
    copy.seek(0)
    return copy


def _is_seekable_file(lines: Iterable[bytes]) -> TypeGuard[IO[bytes]]:
    """Whether ``lines`` is a binary file (any object with its methods) that can seek."""
    return hasattr(lines, "seekable") and bool(lines.seekable())
