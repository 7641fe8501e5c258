"""Minor-version indexes: which profiles are registered at a commit.

Binary layout, all integers big-endian (spec 000 "Perun Index Specification")::

    b"pidx"  version:u32  count:u32  entry*count  sha1(everything before):20B

    version 1 entry:  time:u32  object-sha:20B  path:NUL-terminated
    version 2 entry:  time:f64  object-sha:20B  path type cmd args workload collector
                      postprocessor-count:u32 postprocessor*   (each string: u32 length + UTF-8)

Version 2 adds the metadata that ``status`` and ``log`` show, so listing a
commit never decompresses objects; its strings are length-prefixed so names
with spaces or NULs survive.  Readers accept both versions and refuse newer
ones; writers always write the newest.  A version-1 index is brought to
version 2 by :data:`INDEX`'s step ``update_to_2`` (the metadata is read from
the objects) when it is next written.

The original Perun (0.28) writes the same magic with its own layout: the
version (1 or 2) and the count as native-order (little-endian) signed 32-bit
integers, no checksum trailer, entries sorted by name, and version-2 entries
of ``mtime:u32le object-sha:20B name\\0`` followed by type, cmd, workload,
label, collector and the space-joined postprocessor names, each ``u32le
length + UTF-8`` (tests/fixtures/original/LAYOUTS.md §2.2).
:func:`decode_index` reads both layouts (:func:`index_layout` tells them
apart) and refuses a newer version of either.  :func:`write_index` writes an
index in the layout the file already has, so an index the original wrote
stays one it can read; a repository shared with the original asks for
:data:`ORIGINAL_LAYOUT` for every index it writes (see
:func:`~perun_core.storage.repository.shared_with_original`).  That
layout cannot hold what ours adds: the arguments (read back as ``""``), the
fraction of the time, and the checksum trailer.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CorruptIndex, UnsupportedFormatVersion
from ..atomic import atomic_write
from ..versions import Versioned

MAGIC = b"pidx"
INDEX_VERSION = 2
_HEADER = struct.Struct(">4sII")
_U32 = struct.Struct(">I")
_V1_ENTRY = struct.Struct(">I20s")
_V2_ENTRY = struct.Struct(">d20s")
_CHECKSUM_SIZE = 20
_LE_HEADER = struct.Struct("<4sii")
_LE_U32 = struct.Struct("<I")
_LE_ENTRY = struct.Struct("<I20s")
_ORIGINAL_VERSION = 2
#: Name of the layout the original Perun writes (see the module docstring).
ORIGINAL_LAYOUT = "original-0.28"
#: Name of our own layout.
PERUN_LAYOUT = "perun"

INDEX = Versioned("index", newest=INDEX_VERSION)


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
    #: the profile's label; only the original's layout keeps it (ours reads it from the profile)
    label: str = ""

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


@INDEX.step(2)
def update_to_2(entries: list[IndexEntry], *, metadata_of: Any) -> list[IndexEntry]:
    """Version-1 entries get the metadata of version 2 from ``metadata_of(checksum)`` (a dict)."""
    upgraded = []
    for entry in entries:
        if not entry.has_metadata:
            meta = metadata_of(entry.checksum)
            entry = IndexEntry(entry.time, entry.checksum, entry.path, meta["type"], meta["cmd"], meta["args"],
                               meta["workload"], meta["collector"], tuple(meta["postprocessors"]),
                               entry.label or meta.get("label", ""))
        upgraded.append(entry)
    return upgraded


def index_layout(data: bytes) -> str:
    """:data:`PERUN_LAYOUT` for ours, :data:`ORIGINAL_LAYOUT` for the original Perun's (by the version field).

    Our version is a small big-endian number, the original's a small
    little-endian one: any version below 65536 read the other way round is
    at least 65536, so the two never meet.
    """
    if len(data) >= 12 and data[:4] == MAGIC:
        (big,) = struct.unpack_from(">I", data, 4)
        (little,) = struct.unpack_from("<i", data, 4)
        if big > INDEX_VERSION and 0 < little < 1 << 16:
            return ORIGINAL_LAYOUT
    return PERUN_LAYOUT


def decode_index(data: bytes, path: Path | str) -> list[IndexEntry]:
    """Parse and verify an index (ours or the original's); any damage raises :class:`CorruptIndex`."""
    if index_layout(data) == ORIGINAL_LAYOUT:
        return decode_original_index(data, path)
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


def file_layout(path: Path) -> str | None:
    """The layout of the index at ``path`` (None when there is none)."""
    try:
        with open(path, "rb") as handle:
            return index_layout(handle.read(12))
    except FileNotFoundError:
        return None


def write_index(path: Path, entries: Iterable[IndexEntry], *, layout: str | None = None) -> None:
    """Write ``entries`` (newest version) in ``layout``; by default in the layout the file at ``path`` has.

    An index the original Perun wrote is thereby written back in its layout
    by every writer (add, rm, pull, fsck repair), so the original keeps
    reading it; a new index is in ours unless ``layout`` says otherwise.
    """
    if layout is None:
        layout = file_layout(path) or PERUN_LAYOUT
    if layout == ORIGINAL_LAYOUT:
        data = encode_original_index(entries)
    elif layout == PERUN_LAYOUT:
        data = encode_index(entries)
    else:
        raise ValueError(f"unknown index layout {layout!r}; expected {PERUN_LAYOUT!r} or {ORIGINAL_LAYOUT!r}")
    atomic_write(path, data)


def decode_original_index(data: bytes, path: Path | str) -> list[IndexEntry]:
    """Entries of an index in the original Perun's layout (versions 1 and 2; a newer one is refused)."""
    if len(data) < _LE_HEADER.size:
        raise CorruptIndex(path, f"truncated ({len(data)} bytes)")
    _magic, version, count = _LE_HEADER.unpack_from(data)
    if version > _ORIGINAL_VERSION:
        raise UnsupportedFormatVersion(path, "original Perun index", version, _ORIGINAL_VERSION)
    if count < 0:
        raise CorruptIndex(path, f"negative entry count {count}")
    reader = _Reader(data, _LE_HEADER.size, path, little=True)
    entries = []
    for number in range(count):
        if len(data) - reader.offset < _LE_ENTRY.size + 1:
            raise CorruptIndex(path, f"holds {number} entries, its header says {count}")
        mtime, sha = reader.unpack(_LE_ENTRY)
        name = reader.cstring()
        if version == 1:
            entries.append(IndexEntry(float(mtime), sha.hex(), name))
            continue
        kind, cmd, workload, label, collector, postprocessors = (reader.string() for _ in range(6))
        entries.append(IndexEntry(float(mtime), sha.hex(), name, kind, cmd, "", workload, collector,
                                  tuple(postprocessors.split()), label))
    if reader.offset != len(data):
        raise CorruptIndex(path, f"{len(data) - reader.offset} bytes after the last of {count} entries")
    return entries


def encode_original_index(entries: Iterable[IndexEntry]) -> bytes:
    """The original Perun's version-2 layout, entries sorted by name as it keeps them.

    Times are whole seconds in its unsigned 32-bit field; a name cannot hold
    the NUL that ends it there (our own layout can), so one with a NUL is
    refused rather than written truncated.
    """
    entries = sorted(entries, key=lambda e: e.path.encode("utf-8"))
    parts = [_LE_HEADER.pack(MAGIC, _ORIGINAL_VERSION, len(entries))]
    for entry in entries:
        if "\0" in entry.path:
            raise ValueError(f"profile name {entry.path!r} holds a NUL, which the original Perun's index cannot")
        seconds = min(max(int(round(entry.time)), 0), 0xFFFFFFFF)
        parts.append(_LE_ENTRY.pack(seconds, bytes.fromhex(entry.checksum)))
        parts.append(entry.path.encode("utf-8") + b"\0")
        texts = (entry.type, entry.cmd, entry.workload, entry.label, entry.collector,
                 " ".join(entry.postprocessors))
        for text in texts:
            raw = (text or "").encode("utf-8")
            parts.append(_LE_U32.pack(len(raw)) + raw)
    return b"".join(parts)


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return _U32.pack(len(raw)) + raw


class _Reader:
    __slots__ = ("data", "offset", "path", "u32")

    def __init__(self, data: bytes, offset: int, path: Path | str, *, little: bool = False) -> None:
        self.data = data
        self.offset = offset
        self.path = path
        self.u32 = _LE_U32 if little else _U32

    def unpack(self, fmt: struct.Struct) -> tuple:
        end = self.offset + fmt.size
        if end > len(self.data):
            raise CorruptIndex(self.path, "entry runs past the end of the index")
        values = fmt.unpack_from(self.data, self.offset)
        self.offset = end
        return values

    def string(self) -> str:
        (length,) = self.unpack(self.u32)
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
