"""Reading the logs that perun's native libraries write (``perun_core/native/perun_log.h``).

A run leaves one ``<kind>.<pid>.log`` per process (and a ``.maps`` copy of
its memory map) in the collector's temporary directory.  :func:`read_logs`
returns them as :class:`ProcessLog` objects in the order the processes
started, with the records of every thread and stream joined in the order
they were written.  Blocks that were being set up when a process died are
skipped; the unused tail of each block reads as zeros, which the record
formats treat as "nothing here".
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BLOCK_HEADER_SIZE", "ProcessLog", "read_logs"]

FILE_MAGIC = 0x46474C50
BLOCK_MAGIC = 0x42474C50
_FILE_HEADER = struct.Struct("<IIIIQQQ16sQ")
_BLOCK_HEADER = struct.Struct("<IIQIIQ")
BLOCK_HEADER_SIZE = _BLOCK_HEADER.size


@dataclass
class ProcessLog:
    """The log of one process."""

    path: Path
    pid: int
    ppid: int
    start_ns: int
    resolution_ns: int
    load_bias: int
    kind: str
    block_size: int
    #: (thread id, stream) -> the stream's bytes, blocks joined in order
    streams: dict[tuple[int, int], bytes] = field(default_factory=dict)
    #: thread ids in the order their first block was taken
    threads: list[int] = field(default_factory=list)
    maps_text: str = ""

    @property
    def payload_size(self) -> int:
        """Bytes of records a block can hold (streams are joined from payloads of this size)."""
        return self.block_size - BLOCK_HEADER_SIZE

    def stream(self, tid: int, stream: int) -> bytes:
        return self.streams.get((tid, stream), b"")


def _read_one(path: Path) -> ProcessLog | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < _FILE_HEADER.size:
        return None
    magic, _, pid, ppid, start, block_size, bias, kind, resolution = _FILE_HEADER.unpack_from(data, 0)
    if magic != FILE_MAGIC or block_size < 4096:
        return None
    log = ProcessLog(path, pid, ppid, start, resolution, bias, kind.rstrip(b"\0").decode("ascii", "replace"), block_size)
    pieces: dict[tuple[int, int], list[tuple[int, int]]] = {}
    view = memoryview(data)
    for offset in range(block_size, len(data) - BLOCK_HEADER_SIZE + 1, block_size):
        block_magic, tid, sequence, stream, _, _ = _BLOCK_HEADER.unpack_from(data, offset)
        if block_magic != BLOCK_MAGIC:
            continue
        if tid not in log.threads:
            log.threads.append(tid)
        pieces.setdefault((tid, stream), []).append((sequence, offset))
    for key, blocks in pieces.items():
        blocks.sort()
        log.streams[key] = b"".join(view[o + BLOCK_HEADER_SIZE:o + block_size] for _, o in blocks)
    maps = path.with_suffix(".maps")
    try:
        log.maps_text = maps.read_text(errors="replace")
    except OSError:
        log.maps_text = ""
    return log


def read_logs(directory: Path, kind: str) -> list[ProcessLog]:
    """Every readable ``<kind>.<pid>.log`` in ``directory``, the first started process first."""
    logs = [log for path in sorted(directory.glob(f"{kind}.*.log")) if (log := _read_one(path)) is not None]
    return sorted(logs, key=lambda log: (log.start_ns, log.pid))
