"""Streaming a run file (JSON lines), one validated canonical run at a time.

Each line is parsed, converted from its format, validated and numbered before the next is
read, so memory stays flat however long the file is. Bad lines come out as problems with
their line number; they never stop the valid lines around them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from scoring.importers import to_canonical
from scoring.matcher import InvalidInput, Problem, Run, TrialNumbering, load_run, parse_json

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class RunLine:
    """One non-blank line of a run file: its run, or why it has none."""

    line: int
    run: Run | None = None
    canonical: dict | None = None  # the run as stored: canonical format, unknown fields kept
    problems: tuple[Problem, ...] = ()


def json_lines(
    lines: Iterable[bytes], *, max_line_bytes: int | None = None
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value or ``InvalidInput``) for each non-blank line, in order."""
    for number, raw in enumerate(lines, start=1):
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if not raw.strip():
            continue
        if max_line_bytes is not None and len(raw) > max_line_bytes:
            message = f"the line is {len(raw):,} bytes; the limit is {max_line_bytes:,}"
            yield number, InvalidInput([Problem("", message, number)])
            continue
        try:
            yield number, parse_json(raw)
        except InvalidInput as exc:
            yield number, exc.at_line(number)


def read_run_lines(
    lines: Iterable[bytes], *, format_name: str | None = None, max_line_bytes: int | None = None
) -> Iterator[RunLine]:
    """The runs of a JSON-lines file, in order; blank lines are skipped."""
    numbering = TrialNumbering()
    for number, value in json_lines(lines, max_line_bytes=max_line_bytes):
        try:
            if isinstance(value, InvalidInput):
                raise value
            canonical = to_canonical(value, format_name)
            run = numbering.number(load_run(canonical))
        except InvalidInput as exc:
            yield RunLine(number, problems=exc.at_line(number).problems)
            continue
        yield RunLine(number, run=run, canonical=canonical)
