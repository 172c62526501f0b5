"""Reading run lines (docs/pipeline.md#limits): a line past the line limit is dropped as it
streams, so memory stays near the limit whatever the line, and the lines after it are read as
usual; a line naming a key twice in one object is invalid, naming it."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc

import pytest

from scoring.matcher import InvalidInput
from scoring.runfiles.reader import SkippedLine, bounded_lines, json_lines, read_run_lines

LIMIT = 1 << 20
LONG_LINE_BYTES = 20 << 20  # twenty times the limit
RUN = {"case": "greeting", "batches": [], "final_text": "Hello"}
VALID = json.dumps(RUN).encode() + b"\n"


def long_line(size: int = LONG_LINE_BYTES) -> bytes:
    head = b'{"case": "greeting", "batches": [], "final_text": "'
    return head + b"a" * (size - len(head) - 3) + b'"}\n'


def gzip_stream(*lines: bytes) -> gzip.GzipFile:
    return gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(b"".join(lines))))


def traced_peak(read) -> tuple[list, int]:
    """What ``read()`` gives, and the most memory Python held for it on the way."""
    tracemalloc.start()
    try:
        result = read()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_line_is_skipped_as_it_streams_and_the_next_lines_are_read():
    stream = gzip_stream(VALID, long_line(), VALID, VALID.strip())  # the last: no newline

    values, peak = traced_peak(lambda: list(json_lines(stream, max_line_bytes=LIMIT)))

    assert peak < 4 * LIMIT  # a fifth of the line: it was never held whole
    assert [number for number, _ in values] == [1, 2, 3, 4]
    assert [values[i][1] for i in (0, 2, 3)] == [RUN, RUN, RUN]
    problem = values[1][1]
    assert isinstance(problem, InvalidInput)
    assert [(p.line, p.message) for p in problem.problems] == [
        (2, f"the line is {LONG_LINE_BYTES:,} bytes; the limit is {LIMIT:,}")
    ]


def test_a_long_first_line_is_an_invalid_run_line_and_the_runs_after_it_are_read():
    stream = gzip_stream(b"\n", long_line(), VALID)

    items, peak = traced_peak(lambda: list(read_run_lines(stream, max_line_bytes=LIMIT)))

    assert peak < 4 * LIMIT
    assert [(item.line, item.run is not None) for item in items] == [(2, False), (3, True)]
    assert "the limit is 1,048,576" in items[0].problems[0].message


def test_a_long_last_line_without_a_newline_is_measured_to_its_end():
    lines = list(bounded_lines(io.BytesIO(VALID + b"x" * (3 * LIMIT + 5)), LIMIT))
    assert lines == [VALID, SkippedLine(3 * LIMIT + 5)]


@pytest.mark.parametrize("source", [io.BytesIO, lambda data: data.splitlines(keepends=True)])
def test_a_line_at_the_limit_is_read_one_byte_over_is_not(source):
    at_limit = long_line(LIMIT)
    over = long_line(LIMIT + 1)
    lines = list(bounded_lines(source(at_limit + over + VALID), LIMIT))
    assert lines == [at_limit, SkippedLine(LIMIT + 1), VALID]


@pytest.mark.parametrize(
    ("line", "path", "key"),
    [
        (b'{"case": "x", "batches": [], "case": "y"}', "", "case"),
        (
            b'{"case": "x", "batches": [[{"name": "f", "arguments": {"a": 1, "a": 2}}]]}',
            "batches[0][0].arguments",
            "a",
        ),
        (b'{"case": "x", "meta": {"note": "a \\u003a b", "k": 1, "k": 2}}', "meta", "k"),
        (b'{"case" : "x", "case" : "y"}', "", "case"),
        # As json.dumps writes it: spaced, non-ASCII as \u escapes.
        (b'{"case": "x", "final_text": "I don\\u2019t", "meta": {"k": 1, "k": 2}}', "meta", "k"),
        (b'{"case":"\\u00e9","meta":{"k":"\\ud83d\\ude00","k":2}}', "meta", "k"),
    ],
)
def test_a_run_line_naming_a_key_twice_is_invalid_naming_the_key(line, path, key):
    items = list(read_run_lines([VALID, line + b"\n", VALID]))
    assert [(item.line, item.run is not None) for item in items] == [
        (1, True),
        (2, False),
        (3, True),
    ]
    assert [(p.path, p.message, p.line) for p in items[1].problems] == [
        (path, f"duplicate key {key!r}", 2)
    ]


@pytest.mark.parametrize(
    "line",
    [
        b'{"case": "x", "final_text": "key\\": value: \\"case\\": 1"}',
        b'{"case": "x", "final_text": "\\u003a\\u003A", "meta": {"a:b": {"a": ":"}}}',
        b'{"case": "x", "meta": {"case": "y", "n": 123456789012345678901234567890}}',
        b'{"case": "x", "final_text": "I don\\u2019t: \\u00e9 \\ud83d\\ude00", "meta": {}}',
        b'{"case": "\\u2019", "final_text": "caf\xc3\xa9: \\u2019"}',
    ],
)
def test_colons_and_keys_inside_strings_are_no_duplicates(line):
    ((_, value),) = list(json_lines([line]))
    assert not isinstance(value, InvalidInput), value
