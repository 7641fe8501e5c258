"""The memory collector's logs (``perun_core/native/memory.c``) as numpy columns.

Each thread of a process writes events (32 bytes each: kind, stack id,
time, address, size) and call stacks.  A version 2 log (the current one)
defines the stacks as a tree of their suffixes: 16 bytes per node (id,
parent id, return address), a stack being its node's address followed by
its parent's stack.  A version 1 log defined each stack whole (16 bytes: id,
frame count and where its return addresses are, in a third stream).
:func:`events` joins the events of every thread in time order;
:func:`stack_tree` gives the nodes of a version 2 log with their depths, and
:func:`stack_records` every defined stack of either version with its return
addresses, as flat arrays.  Nothing here loops in Python per event or per
stack.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .nativelog import BLOCK_HEADER_SIZE, ProcessLog

__all__ = ["FREE", "KINDS", "REALLOC", "StackTree", "events", "stack_records", "stack_tree"]

#: Record kinds of the log (memory.c) -> subtype; 9 is "realloc from".
KINDS = {1: "malloc", 2: "calloc", 3: "realloc", 4: "free", 5: "posix_memalign", 6: "aligned_alloc",
         7: "memalign", 8: "valloc"}
_REALLOC_FROM = 9
REALLOC = 3
FREE = 4


def _thread_events(log: ProcessLog, tid: int) -> dict[str, Any]:
    """The events of one thread as columns, in the order written, with ``old`` set for reallocs."""
    import numpy as np

    rows = _record_words(log, tid, 0, 4)
    if rows is None:  # blocks that do not hold whole records: join the stream first
        words = log.stream_array(tid, 0, "<u8")
        words = words[:len(words) // 4 * 4].reshape(-1, 4)
        words = words[np.flatnonzero(words[:, 0] & np.uint64(0xFF))]
        head, times, addresses, sizes = words[:, 0], words[:, 1], words[:, 2], words[:, 3]
    else:  # each column gathered straight from the file's words, without copying whole blocks
        file_words = np.frombuffer(log.data, dtype="<u8", count=len(log.data) // 8)
        head = file_words[rows]
        present = np.flatnonzero(head & np.uint64(0xFF))
        rows, head = rows[present], head[present]
        times, addresses, sizes = file_words[rows + 1], file_words[rows + 2], file_words[rows + 3]
    kinds = (head & np.uint64(0xFF)).astype(np.uint8)
    old = np.zeros(len(kinds), dtype=np.uint64)
    froms = np.flatnonzero(kinds == _REALLOC_FROM)
    paired = froms[froms + 1 < len(kinds)]
    paired = paired[kinds[paired + 1] == 3]
    old[paired + 1] = addresses[paired]
    keep = np.flatnonzero(kinds != _REALLOC_FROM) if len(froms) else slice(None)
    return {"kind": kinds[keep], "stack": (head[keep] >> np.uint64(32)).astype(np.int64), "time": times[keep],
            "address": addresses[keep], "size": sizes[keep], "old": old[keep]}


def _record_words(log: ProcessLog, tid: int, stream: int, width: int) -> Any:
    """The file word (uint64) index of every record slot of a stream, in order; None if records straddle blocks.

    A record of ``width`` words never spans two blocks when a block's
    payload holds a whole number of them (true of the layout memory.c writes).
    """
    import numpy as np

    offsets = [offset for _, offset in log.blocks.get((tid, stream), ())]
    payload = log.payload_size
    if payload % (8 * width) or BLOCK_HEADER_SIZE % 8 or (offsets and max(offsets) + log.block_size > len(log.data)):
        return None
    starts = (np.asarray(offsets, dtype=np.int64) + BLOCK_HEADER_SIZE) // 8
    return (starts[:, None] + np.arange(0, payload // 8, width, dtype=np.int64)).reshape(-1)


def events(log: ProcessLog) -> dict[str, Any]:
    """The events of every thread in time order: ``kind``, ``stack``, ``time``, ``address``, ``size``, ``old``."""
    import numpy as np

    parts = [_thread_events(log, tid) for tid in log.threads]
    if not parts:
        return {key: np.zeros(0, dtype=np.uint8 if key == "kind" else np.int64 if key == "stack" else np.uint64)
                for key in ("kind", "stack", "time", "address", "size", "old")}
    events = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    times = events["time"]
    if len(times) > 1 and not (times[1:] >= times[:-1]).all():
        order = np.argsort(times, kind="stable")
        events = {key: values[order] for key, values in events.items()}
    return events


#: The first header version whose stacks are a tree of suffixes.
TREE_VERSION = 2


class StackTree(NamedTuple):
    """The usable nodes of a version 2 log, by increasing id (numpy arrays).

    ``parent`` is the position of the node's parent (-1 for an outermost
    frame and for the empty stack), ``depth`` the number of frames of the
    node's stack (0 for the empty stack, whose ``address`` means nothing).
    Nodes whose chain of parents does not reach an outermost frame (a
    record lost when the program died, or a damaged log) are left out.
    """

    ids: Any
    parent: Any
    address: Any
    depth: Any


def stack_tree(log: ProcessLog) -> StackTree:
    """The stack tree of a version 2 log (see :class:`StackTree`)."""
    import numpy as np

    parts = []
    for tid in log.threads:
        records = log.stream_array(tid, 1, "<u8")
        records = records[:len(records) // 2 * 2].reshape(-1, 2)
        parts.append(records[np.flatnonzero(records[:, 0] & np.uint64(0xFFFFFFFF))])
    records = np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.uint64)
    ids = (records[:, 0] & np.uint64(0xFFFFFFFF)).astype(np.int64)
    if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():  # several threads (or a damaged log)
        order = np.argsort(ids, kind="stable")
        ids, records = ids[order], records[order]
        first = np.concatenate(([True], ids[1:] != ids[:-1]))  # a damaged log: keep the first of each id
        ids, records = ids[first], records[first]
    parents = (records[:, 0] >> np.uint64(32)).astype(np.int64)
    n = len(ids)
    empty = parents == ids
    outermost = parents == 0
    # positions: n is "reached an outermost frame", n + 1 "lost"
    if n and int(ids[-1]) <= 4 * n + 65536:  # ids are numbered from 1: a table of positions by id
        position = np.full(int(ids[-1]) + 1, -1, dtype=np.int64)
        position[ids] = np.arange(n)
        at = position[np.minimum(parents, int(ids[-1]))]
        found = (at >= 0) & (parents < ids)
    else:
        at = np.minimum(np.searchsorted(ids, parents), max(n - 1, 0)) if n else np.zeros(0, dtype=np.int64)
        found = (ids[at] == parents) & (parents < ids) if n else np.zeros(0, dtype=bool)
    parent = np.where(found, at, -1)
    following = np.concatenate((np.where(empty | outermost, n, np.where(found, at, n + 1)), [n, n + 1]))
    rank = np.concatenate((np.where(empty, 0, 1), [0, 0])).astype(np.int64)
    while (following < n).any():  # pointer jumping: about log2(depth) rounds
        rank = rank + rank[following]
        following = following[following]
    usable = following[:n] == n
    if not usable.all():
        renumber = np.cumsum(usable) - 1
        keep = np.flatnonzero(usable)
        ids, records, parent, rank = ids[keep], records[keep], parent[keep], rank[keep]
        parent = np.where(parent >= 0, renumber[np.maximum(parent, 0)], -1)
    return StackTree(ids, parent, records[:, 1].copy(), rank[:len(ids)])


def stack_records(log: ProcessLog) -> tuple[Any, Any, Any]:
    """Stack ids, their frame counts and their return addresses (one flat array, stack after stack)."""
    import numpy as np

    if log.version >= TREE_VERSION:
        tree = stack_tree(log)
        count = tree.depth
        total = int(count.sum())
        top = int(count.max()) if len(count) else 0
        steps = np.zeros((top, len(count)), dtype=np.uint64)
        node = np.arange(len(count))
        for step in range(top):
            steps[step] = tree.address[node]
            node = np.where(tree.parent[node] >= 0, tree.parent[node], node)
        flat = steps.T[np.arange(top)[None, :] < count[:, None]] if total else np.zeros(0, dtype=np.uint64)
        return tree.ids, count, flat
    words = np.frombuffer(log.data, dtype="<u8", count=len(log.data) // 8)
    payload = log.payload_size
    blocks = len(log.data) // log.block_size
    holds_frames = np.zeros(blocks + 1, dtype=bool)  # file blocks of stream 2; the extra one stays False
    for (_, stream), pieces in log.blocks.items():
        if stream == 2:
            holds_frames[[offset // log.block_size for _, offset in pieces if offset // log.block_size < blocks]] = True
    ids, counts, starts = [], [], []
    for tid in log.threads:
        records = log.stream_array(tid, 1, "<u8")
        records = records[:len(records) // 2 * 2].reshape(-1, 2)
        live = np.flatnonzero(records[:, 0] & np.uint64(0xFF))
        if not len(live):
            continue
        head, where = records[live, 0], records[live, 1]
        count = ((head >> np.uint64(8)) & np.uint64(0xFF)).astype(np.int64)
        block = np.minimum((where & np.uint64(0xFFFFFFFF)).astype(np.int64), blocks)
        offset = (where >> np.uint64(32)).astype(np.int64)
        usable = (count == 0) | (holds_frames[block] & (offset % 8 == 0) & (offset + 8 * count <= payload))
        ids.append((head[usable] >> np.uint64(32)).astype(np.int64))
        counts.append(count[usable])
        starts.append((block[usable] * log.block_size + BLOCK_HEADER_SIZE + offset[usable]) // 8)
    if not ids:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.uint64)
    count = np.concatenate(counts)
    first = np.concatenate(starts)
    total = int(count.sum())
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    return np.concatenate(ids), count, words[np.repeat(first, count) + within]
