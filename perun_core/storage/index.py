"""Minor-version indexes: which profiles are registered at a commit.

Binary layout, all integers big-endian (spec 000 "Perun Index Specification")::

    b"pidx"  version:u32  count:u32  entry*count  sha1(everything before):20B

    version 1 entry:  time:u32  object-sha:20B  path:NUL-terminated
    version 2 entry:  time:f64  object-sha:20B  path type cmd args workload collector
                      postprocessor-count:u32 postprocessor*   (each string: u32 length + UTF-8)

Version 2 adds the metadata that ``status`` and ``log`` show, so listing a
commit never decompresses objects; its strings are length-prefixed so names
with spaces or NULs survive.  Readers accept both versions and refuse newer
ones; writers always write the newest.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CorruptIndex, UnsupportedFormatVersion
from ..atomic import atomic_write

MAGIC = b"pidx"
INDEX_VERSION = 2
_HEADER = struct.Struct(">4sII")
_U32 = struct.Struct(">I")
_V1_ENTRY = struct.Struct(">I20s")
_V2_ENTRY = struct.Struct(">d20s")
_CHECKSUM_SIZE = 20


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One registered profile.  Metadata is None only for version-1 entries."""

    time: float
    checksum: str
    path: str
    type: str | None = None
    cmd: str | None = None
    args: str | None = None
    workload: str | None = None
    collector: str | None = None
    postprocessors: tuple[str, ...] = field(default=())

    @property
    def has_metadata(self) -> bool:
        return self.type is not None


def encode_index(entries: Iterable[IndexEntry]) -> bytes:
    """Serialize entries in the newest index version."""
    entries = list(entries)
    parts = [_HEADER.pack(MAGIC, INDEX_VERSION, len(entries))]
    for entry in entries:
        parts.append(_V2_ENTRY.pack(entry.time, bytes.fromhex(entry.checksum)))
        for text in (entry.path, entry.type, entry.cmd, entry.args, entry.workload, entry.collector):
            parts.append(_string(text or ""))
        parts.append(_U32.pack(len(entry.postprocessors)))
        parts.extend(_string(name) for name in entry.postprocessors)
    body = b"".join(parts)
    return body + hashlib.sha1(body).digest()


def decode_index(data: bytes, path: Path | str) -> list[IndexEntry]:
    """Parse and verify an index; any damage raises :class:`CorruptIndex`."""
    if len(data) < _HEADER.size + _CHECKSUM_SIZE:
        raise CorruptIndex(path, f"truncated ({len(data)} bytes)")
    magic, version, count = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CorruptIndex(path, f"bad signature {magic!r}, expected {MAGIC!r}")
    if version > INDEX_VERSION:
        raise UnsupportedFormatVersion(path, "index", version, INDEX_VERSION)
    if version < 1:
        raise CorruptIndex(path, f"invalid version {version}")
    body, checksum = data[:-_CHECKSUM_SIZE], data[-_CHECKSUM_SIZE:]
    if hashlib.sha1(body).digest() != checksum:
        raise CorruptIndex(path, "checksum mismatch (truncated or modified)")
    reader = _Reader(body, _HEADER.size, path)
    entries = [_read_v1(reader) if version == 1 else _read_v2(reader) for _ in range(count)]
    if reader.offset != len(body):
        raise CorruptIndex(path, f"{len(body) - reader.offset} bytes after the last of {count} entries")
    return entries


def read_index(path: Path) -> list[IndexEntry]:
    """Entries of the index at ``path``; an absent index is empty."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise CorruptIndex(path, f"cannot be read: {exc.strerror}") from None
    return decode_index(data, path)


def write_index(path: Path, entries: Iterable[IndexEntry]) -> None:
    atomic_write(path, encode_index(entries))


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return _U32.pack(len(raw)) + raw


class _Reader:
    __slots__ = ("data", "offset", "path")

    def __init__(self, data: bytes, offset: int, path: Path | str) -> None:
        self.data = data
        self.offset = offset
        self.path = path

    def unpack(self, fmt: struct.Struct) -> tuple:
        end = self.offset + fmt.size
        if end > len(self.data):
            raise CorruptIndex(self.path, "entry runs past the end of the index")
        values = fmt.unpack_from(self.data, self.offset)
        self.offset = end
        return values

    def string(self) -> str:
        (length,) = self.unpack(_U32)
        end = self.offset + length
        if end > len(self.data):
            raise CorruptIndex(self.path, "string runs past the end of the index")
        try:
            text = self.data[self.offset : end].decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptIndex(self.path, "string is not UTF-8") from None
        self.offset = end
        return text

    def cstring(self) -> str:
        end = self.data.find(b"\0", self.offset)
        if end < 0:
            raise CorruptIndex(self.path, "unterminated path in a version-1 entry")
        text = self.data[self.offset : end].decode("utf-8", "replace")
        self.offset = end + 1
        return text


def _read_v1(reader: _Reader) -> IndexEntry:
    time, sha = reader.unpack(_V1_ENTRY)
    return IndexEntry(float(time), sha.hex(), reader.cstring())


def _read_v2(reader: _Reader) -> IndexEntry:
    time, sha = reader.unpack(_V2_ENTRY)
    path, kind, cmd, args, workload, collector = (reader.string() for _ in range(6))
    (count,) = reader.unpack(_U32)
    postprocessors = tuple(reader.string() for _ in range(count))
    return IndexEntry(time, sha.hex(), path, kind, cmd, args, workload, collector, postprocessors)


def encode_index_v1(entries: Iterable[IndexEntry]) -> bytes:
    """The original tool's layout; kept so tests can prove old indexes stay readable."""
    entries = list(entries)
    parts = [_HEADER.pack(MAGIC, 1, len(entries))]
    for entry in entries:
        parts.append(_V1_ENTRY.pack(int(entry.time), bytes.fromhex(entry.checksum)))
        parts.append(entry.path.encode("utf-8") + b"\0")
    body = b"".join(parts)
    return body + hashlib.sha1(body).digest()
