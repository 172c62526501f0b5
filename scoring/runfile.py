"""Streaming a run file, one validated canonical run at a time.

A run file is JSON lines: each line is parsed, converted from its format, validated and
numbered before the next is read, so memory stays flat however long the file is. Bad lines
come out as problems with their line number; they never stop the valid lines around them.

An Inspect AI eval log is instead one JSON document whose ``samples`` are the runs. It is
recognised by its start: a first line that is a lone ``{`` (a pretty-printed document, as
Inspect writes them) is streamed sample by sample; a first line that is a whole log (a
compact one) is split into its samples. Either way only the first line is looked at before
deciding, so a large JSON-lines file is never read whole.

A line past the line limit is never held whole either: it is read in bounded blocks and
dropped up to its newline (``bounded_lines``), so memory stays near the limit whatever the
line (DESIGN.md §5, "Limits hold while reading, not after").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

from scoring.importers import detect_format, inspect_ai, to_canonical
from scoring.importers.common import object_at
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

_BOM = b"\xef\xbb\xbf"
_ZIP = b"PK\x03\x04"

LINE = "line"
SAMPLE = "sample"

_SKIP_BLOCK = 1 << 20  # what is read at a time of a line being skipped


@dataclass(frozen=True, slots=True)
class RunLine:
    """One run of a run file (a non-blank line, or a sample of an Inspect log): its run, or
    why it has none.

    ``line`` is the 1-based position in the file's ``unit``: its line number, or for an
    Inspect log the sample's position among ``samples``. A sample's problems carry no line
    number; their paths start at the sample (``samples[2].messages[1]...``).
    """

    line: int
    run: Run | None = None
    canonical: dict | None = None  # the run as stored: canonical format, unknown fields kept
    problems: tuple[Problem, ...] = ()
    unit: str = LINE
    format: str | None = None  # the run format, when the line was recognised

    def problem(self, path: str, message: str) -> Problem:
        """A further problem with this run (an unknown case, say), located like the others."""
        if self.unit == SAMPLE:
            return _sample_problem(self.line, path, message)
        return Problem(path, message, self.line)


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line past the line limit, dropped as it was read: only its size is kept."""

    size: int


def bounded_lines(
    lines: Iterable[bytes], max_line_bytes: int | None
) -> Iterator[bytes | SkippedLine]:
    """The lines of ``lines``, each a ``SkippedLine`` instead when longer than
    ``max_line_bytes`` (its newline included).

    A readable binary stream is read with ``readline(limit)``, so a longer line is never in
    memory: its first ``max_line_bytes + 1`` bytes tell it is too long, and the rest is read
    and dropped a block at a time up to the next newline. Any other iterable of lines (a
    list, say) is already in memory, and its lines are only measured."""
    readline = getattr(lines, "readline", None)
    if readline is None or max_line_bytes is None:
        for raw in lines:
            if type(raw) is bytes and max_line_bytes is not None and len(raw) > max_line_bytes:
                raw = SkippedLine(len(raw))
            yield raw
        return
    while raw := readline(max_line_bytes + 1):
        if len(raw) <= max_line_bytes:
            yield raw
            continue
        size = len(raw)
        while not raw.endswith(b"\n") and (raw := readline(_SKIP_BLOCK)):
            size += len(raw)
        yield SkippedLine(size)


def json_lines(
    lines: Iterable[bytes | SkippedLine],
    *,
    max_line_bytes: int | None = None,
    max_depth: int | None = None,
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value or ``InvalidInput``) for each non-blank line, in order.

    ``lines`` is a binary stream or an iterable of lines, ``SkippedLine`` among them. A
    line longer than ``max_line_bytes``, or nested deeper than ``max_depth`` arrays and
    objects, is an ``InvalidInput`` saying so."""
    for number, raw in enumerate(bounded_lines(lines, max_line_bytes), start=1):
        if type(raw) is SkippedLine:
            message = f"the line is {raw.size:,} bytes; the limit is {max_line_bytes:,}"
            yield number, InvalidInput([Problem("", message, number)])
            continue
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if not raw.strip():
            continue
        try:
            value = parse_json(raw)
        except InvalidInput as exc:
            yield number, exc.at_line(number)
            continue
        duplicate = duplicate_key(raw, value)
        if duplicate is not None:
            path, key = duplicate
            yield number, InvalidInput([Problem(path, f"duplicate key {key!r}", number)])
            continue
        if max_depth is not None and nested_deeper_than(raw, max_depth):
            message = f"the JSON is nested more than {max_depth} levels deep"
            yield number, InvalidInput([Problem("", message, number)])
            continue
        yield number, value


def read_run_lines(
    lines: Iterable[bytes],
    *,
    format_name: str | None = None,
    max_line_bytes: int | None = None,
    max_depth: int | None = None,
) -> Iterator[RunLine]:
    """The runs of a run file (``lines``: an iterable of byte lines, such as a binary file),
    in order; blank lines are skipped. A file that is an Inspect AI eval log gives a run per
    sample. The limits are those of ``json_lines``."""
    rest = iter(lines)  # a file is its own iterator: what ``bounded`` leaves is read on
    bounded = bounded_lines(rest, max_line_bytes)
    head = []  # the lines read to tell what the file is: blank ones, then the first other
    for raw in bounded:
        head.append(raw)
        if type(raw) is SkippedLine or raw.strip():
            break
    first = head[-1] if head else b""
    first = first.removeprefix(_BOM).strip() if type(first) is bytes else b""
    if first.startswith(_ZIP):
        message = "an Inspect .eval archive: convert it with `inspect log convert --to json`"
        yield RunLine(1, problems=(Problem("", message, 1),))
    elif first == b"{":
        samples = inspect_ai.read_log(_ByteStream(b"".join(head).removeprefix(_BOM), rest))
        yield from _sample_runs(samples, format_name, TrialNumbering())
    else:
        limits = {"max_line_bytes": max_line_bytes, "max_depth": max_depth}
        yield from _line_runs(json_lines(chain(head, bounded), **limits), format_name)


def _line_runs(values: Iterable[tuple[int, Any]], format_name: str | None) -> Iterator[RunLine]:
    numbering = TrialNumbering()
    for number, value in values:
        if inspect_ai.is_log(value):  # a whole log written compactly, on one line
            yield from _sample_runs(inspect_ai.log_samples(value), format_name, numbering)
            continue
        name = format_name
        try:
            if isinstance(value, InvalidInput):
                raise value
            if name is None and isinstance(value, Mapping):
                name = detect_format(value)
            canonical = to_canonical(value, name)
            run = numbering.number(load_run(canonical))
        except InvalidInput as exc:
            yield RunLine(number, problems=exc.at_line(number).problems, format=name)
            continue
        yield RunLine(number, run=run, canonical=canonical, format=name)


def _sample_runs(
    samples: Iterator[tuple[Any, str | None]], format_name: str | None, numbering: TrialNumbering
) -> Iterator[RunLine]:
    """A run per sample of an Inspect log; a log that breaks off ends with its problem."""
    if format_name not in (None, inspect_ai.NAME):
        message = f"the file is an Inspect AI eval log, not JSON lines in the {format_name} format"
        yield RunLine(1, problems=(Problem("", message, 1),))
        return
    position = 0
    try:
        for position, (sample, model) in enumerate(samples, start=1):
            try:
                canonical = inspect_ai.convert(object_at(sample, ""), model=model)
                run = numbering.number(load_run(canonical))
            except InvalidInput as exc:
                yield RunLine(position, problems=_in_sample(exc, position), unit=SAMPLE)
                continue
            yield RunLine(
                position, run=run, canonical=canonical, unit=SAMPLE, format=inspect_ai.NAME
            )
    except InvalidInput as exc:  # the document itself is broken (or has no samples)
        yield RunLine(position + 1, problems=exc.problems, unit=SAMPLE)


def _in_sample(exc: InvalidInput, position: int) -> tuple[Problem, ...]:
    return tuple(_sample_problem(position, p.path, p.message) for p in exc.problems)


def _sample_problem(position: int, path: str, message: str) -> Problem:
    """A problem with the sample at ``position``; its path starts at the sample."""
    where = f"samples[{position - 1}]"
    return Problem(field_path(where, path) if path else where, message)


class _ByteStream:
    """A readable binary stream of ``head`` and then the rest of the file: the document whose
    first line was already read to recognise it."""

    def __init__(self, head: bytes, rest: Iterator[bytes]):
        self._pending = bytearray(head)
        # A file reads on in chunks; other iterables of lines are taken a line at a time.
        self._read_more = rest.read if hasattr(rest, "read") else lambda _size: next(rest, b"")

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._pending) < size:
            more = self._read_more(max(size - len(self._pending), 1 << 16))
            if not more:
                break
            self._pending.extend(more)
        data = bytes(self._pending if size < 0 else self._pending[:size])
        del self._pending[: len(data)]
        return data
