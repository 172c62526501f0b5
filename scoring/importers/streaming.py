"""Reading one JSON document as a stream with ijson, at a cost bounded by its size
(docs/pipeline.md#limits): the whole-file formats (an array of runs, an Inspect AI log and
the entries of an ``.eval`` archive) and the head of a file being diagnosed.

``json_array`` streams a JSON array element by element: the run file reader reads an array of
runs with it, and ``cases.tau_bench`` τ-bench's results file for its tasks."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, Protocol

import ijson

from scoring.matcher import InvalidInput, number_as_parsed

# ijson reads this much at a time: element sizes are measured to within it.
CHUNK = 1 << 16


class Readable(Protocol):
    """What ijson reads a document from: anything with ``read(size)`` giving bytes."""

    def read(self, size: int = -1, /) -> bytes: ...


class BoundedValues:
    """A binary stream for ijson that bounds what one JSON value (a string, a number, a run
    of white space) costs, and keeps from it what would crash it.

    ijson's parser lexes a token again from its start each time a chunk is read, a cost
    quadratic in its length (64 MiB took minutes): while no event comes, each read is as
    large as all the bytes read since the last, so a long value costs time linear in its
    length. A value longer than ``max_bytes`` raises ``InvalidInput``, which ends the
    document (ijson cannot go on after it). Whoever reads the events calls ``event()`` at
    each.

    A number past Python's int digits (``sys.get_int_max_str_digits``) makes ijson's C
    parser fail inside its callback, and read on into a crash of the process: a chunk
    holding that many digits in a row (in a string too: the scan cannot tell) is never
    handed to it, and ends the document instead."""

    def __init__(self, inner: Readable, max_bytes: int | None):
        self.inner = inner
        self.max_bytes = max_bytes
        self.seen = 0  # bytes read so far
        self.last_event = 0  # ``seen`` when the last event was read
        self._digits = b"1" * (sys.get_int_max_str_digits() + 1)
        self._tail = b""  # the last bytes read, as digit marks: a run may span two reads
        self._refused: InvalidInput | None = None  # the digits found, refused at next read

    def event(self) -> None:
        self.last_event = self.seen

    def read(self, size: int = -1) -> bytes:
        if self._refused is not None:
            raise self._refused
        since = self.seen - self.last_event
        if self.max_bytes is not None and since > self.max_bytes:
            raise InvalidInput.single(
                "",
                f"a single value is over {self.max_bytes:,} bytes, the limit; the rest of"
                " the document is not read",
            )
        if size > 0:
            size = max(size, since)
            if self.max_bytes is not None:  # no further than one byte past the limit
                size = min(size, self.max_bytes + 1 - since)
        data = self.inner.read(size)
        start = self.seen  # where ``data`` starts in the document
        self.seen += len(data)
        marks = self._tail + data.translate(_DIGIT_MARKS)
        run = marks.find(self._digits)
        if run >= 0:
            at = start + run - len(self._tail)  # where the digits start
            self._refused = InvalidInput.single(
                "",
                f"more than {len(self._digits) - 1:,} digits in a row (a number too long to"
                f" read) at byte {max(at, 0):,}; the rest of the document is not read",
            )
            # What comes before them is parsed: the runs before the number are read.
            if at <= start:
                raise self._refused
            return data[: at - start]
        self._tail = marks[-len(self._digits) :]
        return data


# Each digit as b"1", every other byte as b"0": runs of digits found with bytes.find.
_DIGIT_MARKS = bytes(0x31 if 0x30 <= b <= 0x39 else 0x30 for b in range(256))


def ijson_message(exc: Exception) -> str:
    """ijson's message without the excerpt it draws below it."""
    message = exc.args[0] if exc.args else exc
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    text = str(message).strip()
    return text.splitlines()[0] if text else "it ends too soon"


def json_array(
    stream: Readable, *, max_item_bytes: int | None = None, max_depth: int | None = None
) -> Iterator[tuple[int, Any]]:
    """(1-based position, element or ``InvalidInput``) for each element of the JSON array
    that is the whole of ``stream``, read one element at a time: memory holds one element,
    however long the array.

    The limits are a line's (``scoring.runfiles.reader.json_lines``), applied to each element
    as it is read: an element past ``max_item_bytes`` (measured to within ``CHUNK``) or
    nested deeper than ``max_depth`` is an ``InvalidInput`` saying so, and is skipped
    without being built.
    Numbers are read as ``parse_json`` reads them: integers exact, a fraction a float
    where the float is the written value, else a ``Decimal``. A document that breaks off
    ends with its problem, and so does one value (a string, say) longer than
    ``value_limit(max_item_bytes)``: ijson cannot skip it, nor read on after refusing it."""
    counted = BoundedValues(stream, value_limit(max_item_bytes))
    # basic_parse builds no prefixes, which would cost as much as the depth per event.
    events = ijson.basic_parse(counted, buf_size=CHUNK, use_float=False)
    position = done = 0  # elements begun, and read to their end
    try:
        next(events)  # the array's start: the file's first byte is "["
        for kind, value in events:
            counted.event()
            if kind == "end_array":  # the document's own array
                break
            position += 1
            if kind == "number":
                element = number_as_parsed(value)
            elif kind in ("start_map", "start_array"):
                element = _element(kind, events, counted, max_item_bytes, max_depth)
            else:
                element = value
            done = position
            yield position, element
        for _ in events:  # ijson finds anything after the array a JSON error
            counted.event()
    except InvalidInput as exc:  # a value too long, a number too long to read
        yield (position if position > done else position + 1), exc
    except ijson.JSONError as exc:
        message = ijson_message(exc)
        if position > done:  # it broke inside this element
            yield position, InvalidInput.single("", f"invalid JSON: {message}")
        else:
            message = f"invalid JSON after element {position}: {message}"
            yield position + 1, InvalidInput.single("", message)


def value_limit(max_item_bytes: int | None) -> int | None:
    """How long one value inside a document may be (``BoundedValues``): longer
    than an element may be, so that an element refused for one long string leaves the rest
    of the array readable, and bounded, since ijson holds the whole value to lex it."""
    return None if max_item_bytes is None else max_item_bytes * 4


def _element(
    kind: str,
    events: Iterator[tuple[str, Any]],
    counted: BoundedValues,
    max_item_bytes: int | None,
    max_depth: int | None,
) -> Any:
    """The element that starts with ``kind``, built from ``events`` up to its end; an
    ``InvalidInput`` (its events read, not built) when it breaks a limit."""
    builder = ijson.ObjectBuilder()
    started = counted.seen
    depth = 0
    refused = None
    value: Any = None  # a container's start has none
    while True:
        if kind == "start_map" or kind == "start_array":
            depth += 1
            if max_depth is not None and depth > max_depth and refused is None:
                refused = f"the JSON is nested more than {max_depth} levels deep"
        elif kind == "end_map" or kind == "end_array":
            depth -= 1
        if refused is None:
            if max_item_bytes is not None and counted.seen - started > max_item_bytes:
                refused = f"the element is over {max_item_bytes:,} bytes, the limit"
            else:
                builder.event(kind, number_as_parsed(value) if kind == "number" else value)
        if depth == 0:
            return builder.value if refused is None else InvalidInput.single("", refused)
        kind, value = next(events)
        counted.event()


class ByteStream:
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
