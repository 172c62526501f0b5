"""Uploaded run files: stored in the database as they arrive, and read back as a stream.

Neither side ever holds the whole file: it goes in and comes out a chunk at a time, so
memory stays flat however large it is. A gzip-compressed upload is decompressed while it is
read, with a cap on what it may expand to.
"""

from __future__ import annotations

import gzip
import io
from typing import BinaryIO

from django.conf import settings

from .models import UploadChunk

CHUNK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


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
    """Copy ``stream`` into the submission's chunks; returns the number of bytes."""
    limit = settings.CASEBOOK_MAX_UPLOAD_BYTES
    size = index = 0
    while data := stream.read(CHUNK_BYTES):
        size += len(data)
        if size > limit:
            raise UploadTooLarge(limit)
        UploadChunk.objects.create(submission_id=submission_id, index=index, data=data)
        index += 1
    return size


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
        data = self.inner.read(len(buffer))
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
