"""Reading a zip archive's entries one at a time, within bounds, zstd ones included.

Inspect AI's ``.eval`` logs are zip archives whose entries are compressed with zstd (zip
method 93), which Python 3.11's ``zipfile`` cannot decompress (3.14's can). ``zipfile``
still reads the archive's directory; an entry's compressed bytes are found from its local
header and decompressed with ``zstandard``, the library zstd's own Python binding is. Stored
and deflated entries go through ``zipfile`` itself.

An archive is untrusted: before the directory is read its entry count is checked, every
entry gives out no more than its header declares (nor less, and with its checksum), and all
the entries read share one budget of uncompressed bytes, so a zip bomb stops at the limit.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from typing import IO, TYPE_CHECKING, BinaryIO

import zstandard

from scoring.matcher import InvalidInput

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

ZSTD = 93
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # zipfile's structFileHeader
_LOCAL_SIGNATURE = b"PK\x03\x04"


def open_archive(file: IO[bytes], *, max_entries: int) -> zipfile.ZipFile:
    """The archive in ``file`` (which must seek); ``InvalidInput`` when it is not a zip
    archive, or holds more than ``max_entries`` entries (each costs memory once listed)."""
    try:
        # zipfile's own reader of the end record (private, unchanged since Python 2.6).
        end = zipfile._EndRecData(file)  # type: ignore[attr-defined]
        if end is None:
            raise zipfile.BadZipFile("no end of central directory record")
        entries = end[zipfile._ECD_ENTRIES_TOTAL]  # type: ignore[attr-defined]
        if entries > max_entries:
            message = f"the archive holds {entries:,} entries; the limit is {max_entries:,}"
            raise InvalidInput.single("", message)
        file.seek(0)
        return zipfile.ZipFile(file)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as exc:
        raise InvalidInput.single("", f"not a readable zip archive: {exc}") from None


class Budget:
    """The uncompressed bytes the entries of one archive may still give out."""

    def __init__(self, limit: int | None):
        self.limit = self.left = limit

    def take(self, size: int) -> None:
        if self.left is None:
            return
        self.left -= size
        if self.left < 0:
            message = f"the archive expands to more than {self.limit:,} bytes, the limit"
            raise InvalidInput.single("", message)


def open_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget) -> BinaryIO:
    """A stream of the entry's uncompressed bytes. Raises ``InvalidInput`` (its message
    naming the entry) when it declares more than the budget left, or, while it is read,
    when it gives more or less than it declares or its checksum is wrong."""
    if budget.left is not None and info.file_size > budget.left:
        message = f"declares {info.file_size:,} bytes, past the archive's limit ({budget.limit:,})"
        raise InvalidInput.single("", f"{info.filename}: {message}")
    try:
        if info.compress_type == ZSTD:
            if archive.fp is None:
                raise ValueError("Attempt to use ZIP archive that was already closed")
            # zstandard reads any object with read(); its stubs ask for an IO[bytes].
            inner: IO[bytes] = zstandard.ZstdDecompressor().stream_reader(
                _RawEntry(archive.fp, info),  # type: ignore[arg-type]
                read_across_frames=True,
            )
        else:
            inner = archive.open(info)
    except (NotImplementedError, zipfile.BadZipFile, OSError) as exc:
        raise InvalidInput.single("", f"{info.filename}: cannot be read: {exc}") from None
    return io.BufferedReader(_Checked(inner, info, budget), buffer_size=1 << 16)


class _RawEntry(io.RawIOBase):
    """The compressed bytes of one entry, read from where its local header says they are."""

    def __init__(self, file: IO[bytes], info: zipfile.ZipInfo):
        file.seek(info.header_offset)
        header = file.read(_LOCAL_HEADER.size)
        fields = _LOCAL_HEADER.unpack(header) if len(header) == _LOCAL_HEADER.size else None
        if fields is None or fields[0] != _LOCAL_SIGNATURE:
            raise zipfile.BadZipFile(f"{info.filename}: bad local header")
        name_length, extra_length = fields[-2:]
        self.file = file
        self.at = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        self.left = info.compress_size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        size = min(len(view), self.left)
        if size <= 0:
            return 0
        self.file.seek(self.at)  # other entries' reads may have moved it
        data = self.file.read(size)
        self.at += len(data)
        self.left -= len(data)
        view[: len(data)] = data
        return len(data)


class _Checked(io.RawIOBase):
    """An entry's uncompressed bytes, held to its declared size and checksum and to the
    archive's budget."""

    def __init__(self, inner: IO[bytes], info: zipfile.ZipInfo, budget: Budget):
        self.inner = inner
        self.info = info
        self.budget = budget
        self.seen = 0
        self.crc = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        try:
            data = self.inner.read(len(view))
        except (zstandard.ZstdError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise self._broken(f"cannot be decompressed: {exc}") from None
        self.seen += len(data)
        if self.seen > self.info.file_size:
            raise self._broken(f"holds more than the {self.info.file_size:,} bytes it declares")
        self.budget.take(len(data))
        if not data:
            if self.seen < self.info.file_size:
                raise self._broken(f"ends before the {self.info.file_size:,} bytes it declares")
            if self.crc != self.info.CRC:
                raise self._broken("its checksum is wrong (the archive is damaged)")
            return 0
        self.crc = zlib.crc32(data, self.crc)
        view[: len(data)] = data
        return len(data)

    def _broken(self, message: str) -> InvalidInput:
        return InvalidInput.single("", f"{self.info.filename}: {message}")

    def close(self) -> None:
        self.inner.close()
        super().close()
