"""Uploaded run files: stored in the database as they arrive, and read back as a stream.

Neither side ever holds the whole file: it goes in and comes out a chunk at a time, so
memory stays flat however large it is. The file is kept gzip-compressed: as it came if it
was sent compressed, else compressed here on the way in (at the fastest level, run files
shrink about eight times, and the database writes and reads a fraction of the bytes). It is
decompressed while it is read, with a cap on what it may expand to. A zip archive (an
Inspect ``.eval`` log) is compressed already, and kept as it came.

A file compressed here is stored in **blocks** (docs/pipeline.md#blocks): each chunk is a
gzip member of its own, of about ``BLOCK_BYTES`` of the file cut after a newline, with where
it starts in the decompressed file and how many lines come before it. Reading can then
start at any block, so the file is read in ranges by several workers at once. A file sent
gzip-compressed (one member, often) is stored as it came, and put in blocks by the first
pass of its reading (``restore_in_blocks``).

Compressing and decompressing is done by ISA-L (``isal``), in the gzip format zlib writes:
several times zlib's speed, which is most of the first pass over a large compressed upload
(docs/pipeline.md#blocks).
"""

from __future__ import annotations

import gzip
import io
from typing import BinaryIO

from django.conf import settings
from django.db import transaction
from isal import igzip, isal_zlib

from scoring.models import UploadChunk

CHUNK_BYTES = 1 << 20
# Of the decompressed file, per block (an eighth of that or so once compressed): a few of
# them in memory at a time, while blocks are written, stay far below the line limit.
BLOCK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
# What reading gzip data that is cut off or corrupt raises. (isal's stub declares its
# ``error`` an instance of Exception: it is the class.)
GZIP_ERRORS: tuple[type[Exception], ...] = (EOFError, gzip.BadGzipFile, isal_zlib.error)  # type: ignore[assignment]
GZIP_WBITS = 16 + isal_zlib.MAX_WBITS  # a gzip member, header and trailer checked


class UploadRefused(Exception):
    """The upload cannot be taken (empty, say); the message says why."""


class UploadTooLarge(UploadRefused):
    """The upload is over ``CASEBOOK_MAX_UPLOAD_BYTES``."""

    def __init__(self, limit: int = 0):
        limit = limit or settings.CASEBOOK_MAX_UPLOAD_BYTES
        super().__init__(f"the file is over the {_megabytes(limit)} upload limit")


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MB"


def store_upload(submission_id: int, stream: BinaryIO) -> int:
    """Copy ``stream`` into the submission's chunks, gzip-compressed; returns the number of
    bytes received."""
    limit = settings.CASEBOOK_MAX_UPLOAD_BYTES
    data = stream.read(CHUNK_BYTES)
    compressed = data.startswith((GZIP_MAGIC, ZIP_MAGIC))
    sink = _ChunkWriter(submission_id) if compressed else _BlockWriter(submission_id)
    size = 0
    while data:
        size += len(data)
        if size > limit:
            raise UploadTooLarge(limit)
        sink.write(data)
        data = stream.read(CHUNK_BYTES)
    sink.finish()
    return size


def restore_in_blocks(submission_id: int, *, before_each=lambda: None) -> str:
    """Store the submission's file again in blocks, after its chunks as they are, and
    delete those: the first pass of reading a file that was sent compressed. Returns why
    the file could not be read to its end ("" if it was): what came before is kept, up to
    its last newline (a line cut off is no line). ``before_each`` is called before each
    block is written (to stop, by raising, an attempt that was superseded)."""
    # Blocks a lost attempt wrote go first; the chunks as they came are kept until the end.
    UploadChunk.objects.filter(submission_id=submission_id, offset__isnull=False).delete()
    old = UploadChunk.objects.filter(submission_id=submission_id, offset__isnull=True)
    after = max(old.values_list("index", flat=True), default=-1) + 1
    blocks = _BlockWriter(submission_id, index=after, before_each=before_each)
    stopped = ""
    stream = open_upload(submission_id, 0, after)  # not the blocks written meanwhile
    try:
        while data := stream.read1(CHUNK_BYTES):  # a piece at a time: none lost to an error
            blocks.write(data)
    except UploadRefused as exc:
        stopped = str(exc)
    except GZIP_ERRORS as exc:
        stopped = broken_gzip(exc)
    finally:
        stream.close()
    if stopped:
        blocks.drop_partial_line()
    blocks.finish()
    old.delete()
    return stopped


def broken_gzip(exc: Exception) -> str:
    return f"the gzip data is broken: {exc or 'it ends too soon'}"


def in_blocks(submission_id: int) -> bool:
    """Whether the submission's file is stored in blocks (its first chunk is one)."""
    first = UploadChunk.objects.filter(submission_id=submission_id).order_by("index")
    return first.values_list("offset", flat=True).first() is not None


class _BlockWriter:
    """Writes the decompressed bytes it is given as blocks, each a gzip member cut after
    the last newline in its ``BLOCK_BYTES`` (or at them, inside a longer line)."""

    def __init__(self, submission_id: int, *, index: int = 0, before_each=lambda: None):
        self.submission_id = submission_id
        self.index = index
        self.before_each = before_each
        self.pending = bytearray()
        self.offset = 0
        self.lines = 0
        self.starts_line = True

    def write(self, data) -> None:
        self.pending += data
        while len(self.pending) >= BLOCK_BYTES:
            self._store(self.pending.rfind(b"\n", 0, BLOCK_BYTES) + 1 or BLOCK_BYTES)

    def drop_partial_line(self) -> None:
        del self.pending[self.pending.rfind(b"\n") + 1 :]

    def finish(self) -> None:
        if self.pending:
            self._store(len(self.pending))

    def _store(self, size: int) -> None:
        """Write the first ``size`` pending bytes as a block (compressed from where they
        are: no copy of them is made)."""
        with memoryview(self.pending) as view:
            packed = igzip.compress(view[:size], compresslevel=1, mtime=0)
        with transaction.atomic():
            self.before_each()
            UploadChunk.objects.create(
                submission_id=self.submission_id,
                index=self.index,
                data=packed,
                offset=self.offset,
                lines_before=self.lines,
                starts_line=self.starts_line,
            )
        self.index += 1
        self.offset += size
        self.lines += self.pending.count(b"\n", 0, size)
        self.starts_line = self.pending[size - 1] == ord("\n")
        del self.pending[:size]


class _ChunkWriter(io.RawIOBase):
    """Writes what it is given as the submission's chunks, ``CHUNK_BYTES`` each. The last,
    short chunk is written by ``finish``, never by ``close``: a writer dropped half way (the
    upload broke a limit) is closed by the garbage collector, after its transaction has
    rolled back, and must not write then."""

    def __init__(self, submission_id: int):
        self.submission_id = submission_id
        self.index = 0
        self.pending = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.pending += data
        while len(self.pending) >= CHUNK_BYTES:
            self._store(self.pending[:CHUNK_BYTES])
            del self.pending[:CHUNK_BYTES]
        return len(data)

    def finish(self) -> None:
        if self.pending:
            self._store(self.pending)
            self.pending = bytearray()

    def _store(self, data) -> None:
        UploadChunk.objects.create(
            submission_id=self.submission_id, index=self.index, data=bytes(data)
        )
        self.index += 1


class _StoredUpload(io.RawIOBase):
    """The stored chunks of one upload, read in order of their index from ``first`` up to
    ``end`` (excluded; None: the last), one chunk in memory at a time."""

    def __init__(self, submission_id: int, first: int = 0, end: int | None = None):
        self.submission_id = submission_id
        self.index = first
        self.end = end
        self.pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not self.pending:
            if self.end is not None and self.index >= self.end:
                return 0
            found = (
                UploadChunk.objects.filter(submission_id=self.submission_id, index__gte=self.index)
                .order_by("index")
                .values_list("index", "data")
                .first()
            )
            if found is None:
                return 0
            self.index = found[0] + 1
            self.pending = memoryview(bytes(found[1]))
        n = min(len(buffer), len(self.pending))
        buffer[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n


class _Gunzip(io.RawIOBase):
    """The decompressed bytes of a stream of gzip members, a piece at a time. Data that is
    cut off or corrupt raises only once what came before it was given: ISA-L's own reader
    drops that."""

    def __init__(self, inner: BinaryIO):
        self.inner = inner
        # The inflater of the member being read; None between members.
        self.inflater: isal_zlib.Decompress | None = None
        self.pending = b""  # input not yet decompressed

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not len(buffer):
            return 0  # a limit of 0 would decompress without one
        while True:
            if len(self.pending) < len(GZIP_MAGIC):
                more = self.inner.read(CHUNK_BYTES)
                if not more and not self.pending:
                    if self.inflater is not None:
                        raise EOFError(
                            "Compressed file ended before the end-of-stream marker was reached"
                        )
                    return 0
                self.pending += more
                if more:
                    continue
            if self.inflater is None:
                self.pending = self.pending.lstrip(b"\x00")  # padding between members
                if not self.pending:
                    continue
                if self.pending[:2] != GZIP_MAGIC:
                    raise gzip.BadGzipFile(f"Not a gzipped file ({self.pending[:2]!r})")
                self.inflater = isal_zlib.decompressobj(GZIP_WBITS)
            data = self.inflater.decompress(self.pending, len(buffer))
            if self.inflater.eof:
                self.pending = self.inflater.unused_data
                self.inflater = None
            else:
                self.pending = self.inflater.unconsumed_tail
            if data:
                buffer[: len(data)] = data
                return len(data)


class _Capped(io.RawIOBase):
    """A stream that refuses to give more than ``limit`` bytes (a gzip bomb stops here)."""

    def __init__(self, inner: io.RawIOBase, limit: int):
        self.inner = inner
        self.limit = limit
        self.seen = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # One piece at a time: what was decompressed before the data breaks off, or
        # before the cap, is handed on rather than lost with the exception.
        data = self.inner.read(len(buffer))
        self.seen += len(data)
        if self.seen > self.limit:
            raise UploadRefused(
                f"the file expands to more than {_megabytes(self.limit)} when decompressed"
            )
        buffer[: len(data)] = data
        return len(data)


def open_upload(submission_id: int, first: int = 0, end: int | None = None) -> io.BufferedReader:
    """The uploaded file as a binary stream, decompressed if it was gzip; or of a file in
    blocks, the blocks from ``first`` up to ``end`` (excluded)."""
    stored = _StoredUpload(submission_id, first, end)
    raw: io.BufferedReader = io.BufferedReader(stored, buffer_size=CHUNK_BYTES)
    if raw.peek(2)[:2] == GZIP_MAGIC:
        expanded = _Gunzip(raw)
        capped = _Capped(expanded, settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES)
        return io.BufferedReader(capped, buffer_size=CHUNK_BYTES)
    return raw
