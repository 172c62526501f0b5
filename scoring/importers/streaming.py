"""Reading one JSON document as a stream with ijson, at a cost bounded by its size
(docs/pipeline.md#limits): the whole-file formats (an array of runs, an Inspect AI log and
the entries of an ``.eval`` archive) and the head of a file being diagnosed."""

from __future__ import annotations

import sys
from typing import BinaryIO

from scoring.matcher import InvalidInput


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

    def __init__(self, inner: BinaryIO, max_bytes: int | None):
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
