"""Reading the logs that perun's native libraries write (``perun_core/native/perun_log.h``).

A run leaves one ``<kind>.<pid>.log`` per process image (and a ``.maps``
copy of its memory map) in the collector's temporary directory; an image
started by exec without fork finds its pid's name taken and writes
``<kind>.<pid>.<n>.log`` instead.  :func:`read_logs` returns them all as
:class:`ProcessLog` objects in the order the images started, with the
records of every thread and stream joined in the order they were written.
Blocks that were being set up when a process died are skipped; the unused
tail of each block reads as zeros, which the record formats treat as
"nothing here".

Streams are joined only when asked for (:meth:`ProcessLog.stream`);
:meth:`ProcessLog.stream_array` gives one as a numpy array without the
intermediate bytes, and :attr:`ProcessLog.blocks` tells where each block of
a stream lies in the file, for records that point into another stream by
(file block, offset).
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["BLOCK_HEADER_SIZE", "ProcessLog", "read_logs"]

FILE_MAGIC = 0x46474C50
BLOCK_MAGIC = 0x42474C50
_FILE_HEADER = struct.Struct("<IIIIQQQ16sQ")
_BLOCK_HEADER = struct.Struct("<IIQIIQ")
BLOCK_HEADER_SIZE = _BLOCK_HEADER.size


@dataclass
class ProcessLog:
    """The log of one process image."""

    path: Path
    pid: int
    ppid: int
    start_ns: int
    resolution_ns: int
    load_bias: int
    kind: str
    block_size: int
    #: thread ids in the order their first block was taken
    threads: list[int] = field(default_factory=list)
    maps_text: str = ""
    #: the whole file as read (mapped read-only)
    data: bytes | mmap.mmap = field(default=b"", repr=False)
    #: (thread id, stream) -> (sequence number, file offset) of its blocks, in sequence order
    blocks: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict, repr=False)
    #: 0 for ``<kind>.<pid>.log``, n for ``<kind>.<pid>.<n>.log`` (a later image of the same pid)
    piece: int = 0
    #: the record layout's version, from the file header (each collector numbers its own)
    version: int = 1

    @property
    def payload_size(self) -> int:
        """Bytes of records a block can hold (streams are joined from payloads of this size)."""
        return self.block_size - BLOCK_HEADER_SIZE

    @property
    def streams(self) -> dict[tuple[int, int], bytes]:
        """(thread id, stream) -> the stream's bytes, blocks joined in order."""
        return {key: self.stream(*key) for key in self.blocks}

    def stream(self, tid: int, stream: int) -> bytes:
        """The records of one stream of one thread, blocks joined in order (empty if it has none)."""
        view = memoryview(self.data)
        size = self.block_size
        return b"".join(view[o + BLOCK_HEADER_SIZE:o + size] for _, o in self.blocks.get((tid, stream), ()))

    def stream_array(self, tid: int, stream: int, dtype: Any = "<u8") -> Any:
        """:meth:`stream` as a numpy array of ``dtype``, copied once from the file's bytes."""
        import numpy as np

        dtype = np.dtype(dtype)
        offsets = [o for _, o in self.blocks.get((tid, stream), ())]
        size = self.block_size
        if offsets and self.payload_size % dtype.itemsize == 0 and max(offsets) + size <= len(self.data):
            whole = np.frombuffer(self.data, dtype=np.uint8, count=len(self.data) // size * size).reshape(-1, size)
            return whole[np.asarray(offsets) // size, BLOCK_HEADER_SIZE:].reshape(-1).view(dtype)
        joined = self.stream(tid, stream)
        return np.frombuffer(joined, dtype=dtype, count=len(joined) // dtype.itemsize)


def _read_one(path: Path, piece: int) -> ProcessLog | None:
    data = _map_file(path)
    if data is None:
        return None
    if len(data) < _FILE_HEADER.size:
        return None
    magic, version, pid, ppid, start, block_size, bias, kind, resolution = _FILE_HEADER.unpack_from(data, 0)
    if magic != FILE_MAGIC or block_size < 4096 or block_size % 64:
        return None
    log = ProcessLog(path, pid, ppid, start, resolution, bias, kind.rstrip(b"\0").decode("ascii", "replace"),
                     block_size, data=data, piece=piece, version=version)
    pieces: dict[tuple[int, int], list[tuple[int, int]]] = {}
    seen: set[int] = set()
    for offset in range(block_size, len(data) - BLOCK_HEADER_SIZE + 1, block_size):
        block_magic, tid, sequence, stream, _, _ = _BLOCK_HEADER.unpack_from(data, offset)
        if block_magic != BLOCK_MAGIC:
            continue
        if tid not in seen:
            seen.add(tid)
            log.threads.append(tid)
        pieces.setdefault((tid, stream), []).append((sequence, offset))
    for key, blocks in pieces.items():
        blocks.sort()
        log.blocks[key] = blocks
    maps = path.with_suffix(".maps")
    try:
        log.maps_text = maps.read_text(errors="replace")
    except OSError:
        log.maps_text = ""
    return log


def _map_file(path: Path) -> bytes | mmap.mmap | None:
    """The file's bytes, mapped read-only (no copy of a log of hundreds of megabytes); None when unreadable."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < _FILE_HEADER.size:
                return handle.read()
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def read_logs(directory: Path, kind: str) -> list[ProcessLog]:
    """Every readable ``<kind>.<pid>.log`` and ``<kind>.<pid>.<n>.log`` in ``directory``, first started first.

    The images of one pid (before and after an exec) come in the order they
    started, which is also the order of their numbers n.
    """
    name = re.compile(rf"{re.escape(kind)}\.(\d+)(?:\.(\d+))?\.log")
    logs = []
    for path in directory.glob(f"{kind}.*.log"):
        match = name.fullmatch(path.name)
        if match is None:
            continue
        log = _read_one(path, int(match.group(2) or 0))
        if log is not None:
            logs.append(log)
    return sorted(logs, key=lambda log: (log.start_ns, log.pid, log.piece))
