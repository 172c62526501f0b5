"""Uploaded run files: stored in the database as they arrive, and read back as a stream.

Neither side ever holds the whole file: it goes in and comes out a chunk at a time, so
memory stays flat however large it is. The file is kept gzip-compressed: as it came if it
was sent compressed, else compressed here on the way in (at the fastest level, run files
shrink about eight times, and the database writes and reads a fraction of the bytes). It is
decompressed while it is read, with a cap on what it may expand to. A zip archive (an
Inspect ``.eval`` log) is compressed already, and kept as it came.
"""

from __future__ import annotations

import gzip
import io
from typing import BinaryIO

from django.conf import settings

from scoring.models import UploadChunk

CHUNK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"


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
    chunks = _ChunkWriter(submission_id)
    compressed = data.startswith((GZIP_MAGIC, ZIP_MAGIC))
    sink = chunks if compressed else _compressor(chunks)
    size = 0
    while data:
        size += len(data)
        if size > limit:
            raise UploadTooLarge(limit)
        sink.write(data)
        data = stream.read(CHUNK_BYTES)
    sink.close()
    chunks.finish()
    return size


def _compressor(sink: BinaryIO) -> gzip.GzipFile:
    return gzip.GzipFile(fileobj=sink, mode="wb", compresslevel=1, mtime=0)


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
    """The stored chunks of one upload, read in order, one chunk in memory at a time."""

    def __init__(self, submission_id: int):
        self.submission_id = submission_id
        self.index = 0
        self.pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not self.pending:
            data = (
                UploadChunk.objects.filter(submission_id=self.submission_id, index=self.index)
                .values_list("data", flat=True)
                .first()
            )
            if data is None:
                return 0
            self.index += 1
            self.pending = memoryview(bytes(data))
        n = min(len(buffer), len(self.pending))
        buffer[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n


class _Capped(io.RawIOBase):
    """A stream that refuses to give more than ``limit`` bytes (a gzip bomb stops here)."""

    def __init__(self, inner: BinaryIO, limit: int):
        self.inner = inner
        self.limit = limit
        self.seen = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # One piece at a time (read1): what was decompressed before the data breaks off, or
        # before the cap, is handed on rather than lost with the exception.
        data = self.inner.read1(len(buffer))
        self.seen += len(data)
        if self.seen > self.limit:
            raise UploadRefused(
                f"the file expands to more than {_megabytes(self.limit)} when decompressed"
            )
        buffer[: len(data)] = data
        return len(data)


def open_upload(submission_id: int) -> BinaryIO:
    """The uploaded file as a binary stream, decompressed if it was gzip."""
    raw = io.BufferedReader(_StoredUpload(submission_id), buffer_size=CHUNK_BYTES)
    if raw.peek(2)[:2] == GZIP_MAGIC:
        expanded = gzip.GzipFile(fileobj=raw, mode="rb")
        capped = _Capped(expanded, settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES)
        return io.BufferedReader(capped, buffer_size=CHUNK_BYTES)
    return raw
