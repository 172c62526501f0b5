"""Streaming a run file (JSON lines), one validated canonical run at a time.

Each line is parsed, converted from its format, validated and numbered before the next is
read, so memory stays flat however long the file is. Bad lines come out as problems with
their line number; they never stop the valid lines around them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

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


def read_run_lines(
    lines: Iterable[bytes], *, format_name: str | None = None, max_line_bytes: int | None = None
) -> Iterator[RunLine]:
    """The runs of a JSON-lines file, in order; blank lines are skipped."""
    numbering = TrialNumbering()
    for number, raw in enumerate(lines, start=1):
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if not raw.strip():
            continue
        if max_line_bytes is not None and len(raw) > max_line_bytes:
            message = f"the line is {len(raw):,} bytes; the limit is {max_line_bytes:,}"
            yield RunLine(number, problems=(Problem("", message, number),))
            continue
        try:
            canonical = to_canonical(parse_json(raw), format_name)
            run = numbering.number(load_run(canonical))
        except InvalidInput as exc:
            yield RunLine(number, problems=exc.at_line(number).problems)
            continue
        yield RunLine(number, run=run, canonical=canonical)
