"""Reading git pack files directly: the fast path of long history walks (no dulwich object per lookup)."""

from __future__ import annotations

import zlib
from typing import Any


def _map_pack(pack: Any) -> Any:
    """The pack file mapped into memory, or None (then dulwich reads every object)."""
    import mmap

    path = getattr(pack, "_data_path", None)
    if not isinstance(path, str):
        return None
    try:
        with open(path, "rb") as file:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


class _PackOffsets:
    """Offsets of objects in one pack, by binary SHA-1; raises KeyError for objects it lacks.

    The first lookups go through dulwich's index (a binary search each);
    after ``direct_lookups`` of them the whole version-2 index is read into
    a dict once, which a walk through thousands of commits repays many times.
    """

    def __init__(self, pack: Any, direct_lookups: int = 256) -> None:
        self.pack = pack
        self.left = direct_lookups
        self.table: dict[bytes, int] | None = None

    def of(self, binary: bytes) -> int:
        if self.table is not None:
            return self.table[binary]
        self.left -= 1
        if self.left < 0:
            self.table = _read_index_v2(getattr(self.pack, "_idx_path", None))
            if self.table is not None:
                return self.table[binary]
            self.left = 1 << 62  # not a version-2 index: stay with dulwich
        return self.pack.index.object_offset(binary)


def _read_index_v2(path: Any) -> dict[bytes, int] | None:
    """{binary sha: offset} of a version-2 pack index (git's format); None for anything else."""
    import struct

    if not isinstance(path, str):
        return None
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    if len(data) < 8 + 1024 or data[:8] != b"\377tOc\x00\x00\x00\x02":
        return None
    count = struct.unpack_from(">I", data, 8 + 1020)[0]
    names_at = 8 + 1024
    offsets_at = names_at + 24 * count  # names (20 bytes each), then CRC32s (4 bytes each)
    large_at = offsets_at + 4 * count
    if len(data) < large_at + 40:
        return None
    offsets = struct.unpack_from(f">{count}I", data, offsets_at)
    names = [data[i:i + 20] for i in range(names_at, names_at + 20 * count, 20)]
    table = dict(zip(names, offsets))
    if any(offset & 0x80000000 for offset in offsets):  # packs over 2 GiB: the high offsets live in a second table
        for name, offset in zip(names, offsets):
            if offset & 0x80000000:
                table[name] = struct.unpack_from(">Q", data, large_at + 8 * (offset & 0x7FFFFFFF))[0]
    return table


def _read_whole_object(mapped: Any, offset: int) -> tuple[int, bytes] | None:
    """The (type, content) of the undeltified object at ``offset`` of a mapped pack; None for a delta.

    Commits are almost never stored as deltas, and reading them this way
    skips dulwich's generic unpacking, which costs several times more than
    the inflating itself on a walk through thousands of commits.
    """
    byte = mapped[offset]
    kind = (byte >> 4) & 7
    if kind not in (1, 2, 3, 4):  # commit, tree, blob, tag; 6 and 7 are deltas
        return None
    size = byte & 15
    shift = 4
    position = offset + 1
    while byte & 0x80:
        byte = mapped[position]
        size |= (byte & 0x7F) << shift
        shift += 7
        position += 1
    inflater = zlib.decompressobj()
    # deflate adds at most a few bytes per 16 KiB block to what it cannot shrink
    window = size + 64 + size // 64
    content = inflater.decompress(mapped[position:position + window], size)
    while len(content) < size and not inflater.eof and not inflater.unconsumed_tail:
        position += window
        more = mapped[position:position + window]
        if not more:
            break
        content += inflater.decompress(more, size - len(content))
    if len(content) != size:
        raise KeyError("damaged pack entry")
    return kind, content
