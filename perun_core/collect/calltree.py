"""Calls from a stream of function entries and exits: inclusive and exclusive time, caller, depth.

The tracer engines record, per thread, a sequence of ``(function, time,
is_exit)`` events.  :func:`calls_of_thread` pairs every entry with its exit
and finds each call's parent, vectorized with numpy: an event's *level* is
the nesting depth before an entry or after an exit, so sorting the events
stably by level puts every entry right before its exit.  Streams that are
not well nested (longjmp, exits without entries) are repaired first by a
plain walk with a stack.  Calls still open when the stream ends (the
program called ``exit`` inside them, or crashed) end at the thread's last
event and are marked incomplete.

Exclusive time is the inclusive time minus that of the recorded children:
time spent in calls that were not recorded (not selected by the rules, or
skipped by sampling) counts as the caller's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Calls", "calls_of_thread", "sample_events"]


@dataclass
class Calls:
    """Parallel numpy arrays, one item per call, ordered by (depth, entry)."""

    function: Any    # int64 function index
    start: Any       # int64 ns
    end: Any         # int64 ns
    depth: Any       # int64, 0 for calls without a recorded caller
    parent: Any      # int64 index into these arrays, -1 for roots
    exclusive: Any   # int64 ns
    complete: Any    # bool, False when the exit was not recorded

    def __len__(self) -> int:
        return len(self.function)


def _repair(functions: Any, stamps: Any, exits: Any) -> tuple[Any, Any, Any, Any]:
    """A well-nested copy of the stream and which of its exits are made up."""
    import numpy as np

    events: list[tuple[int, int, bool, bool]] = []  # function, stamp, is exit, made up
    stack: list[int] = []
    for function, stamp, is_exit in zip(functions.tolist(), stamps.tolist(), exits.tolist()):
        if not is_exit:
            stack.append(function)
            events.append((function, stamp, False, False))
            continue
        if function not in stack:
            continue  # an exit whose entry was never seen
        while stack[-1] != function:  # skipped by longjmp or an exception: they end here
            events.append((stack.pop(), stamp, True, True))
        stack.pop()
        events.append((function, stamp, True, False))
    columns = list(zip(*events)) or [(), (), (), ()]
    return (np.array(columns[0], dtype=np.int64), np.array(columns[1], dtype=np.int64),
            np.array(columns[2], dtype=bool), np.array(columns[3], dtype=bool))


def _close_open(functions: Any, stamps: Any, exits: Any, made: Any) -> tuple[Any, Any, Any, Any]:
    """Append made-up exits (at the last time) for the calls still open at the end."""
    import numpy as np

    delta = np.where(exits, -1, 1)
    depth_after = np.cumsum(delta)
    open_count = int(depth_after[-1]) if len(depth_after) else 0
    if open_count <= 0:
        return functions, stamps, exits, made
    level = np.where(exits, depth_after, depth_after - 1)
    enters = np.flatnonzero(~exits)
    levels = level[enters]
    inside = levels < open_count
    latest = np.full(open_count, -1, dtype=np.int64)
    np.maximum.at(latest, levels[inside], enters[inside])
    closing = functions[latest[::-1]].tolist()
    last = stamps[-1]
    count = len(closing)
    return (np.concatenate([functions, np.array(closing, dtype=np.int64)]),
            np.concatenate([stamps, np.full(count, last, dtype=np.int64)]),
            np.concatenate([exits, np.ones(count, dtype=bool)]),
            np.concatenate([made, np.ones(count, dtype=bool)]))


def _pair(functions: Any, exits: Any) -> tuple[Any, Any, Any] | None:
    """(entry positions, exit positions, levels) of every call, or None when the stream is not well nested."""
    import numpy as np

    delta = np.where(exits, -1, 1)
    depth_after = np.cumsum(delta)
    if len(depth_after) and (depth_after.min() < 0 or depth_after[-1] != 0):
        return None
    level = np.where(exits, depth_after, depth_after - 1)
    order = np.argsort(level, kind="stable")
    if len(order) % 2:
        return None
    entries, leaves = order[0::2], order[1::2]
    if (exits[entries].any() or not exits[leaves].all() or (level[entries] != level[leaves]).any()
            or (functions[entries] != functions[leaves]).any()):
        return None
    return entries, leaves, level[entries]


def calls_of_thread(functions: Any, stamps: Any, exits: Any) -> Calls:
    """The calls of one thread's event stream (numpy arrays: function index, ns, exit flag)."""
    import numpy as np

    functions = np.asarray(functions, dtype=np.int64)
    stamps = np.asarray(stamps, dtype=np.int64)
    exits = np.asarray(exits, dtype=bool)
    made = np.zeros(len(exits), dtype=bool)
    if len(exits) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Calls(empty, empty, empty, empty, empty, empty, np.zeros(0, dtype=bool))
    paired = None
    if np.cumsum(np.where(exits, -1, 1)).min() >= 0:
        closed = _close_open(functions, stamps, exits, made)
        paired = _pair(closed[0], closed[2])
    if paired is None:
        closed = _close_open(*_repair(functions, stamps, exits))
        paired = _pair(closed[0], closed[2])
        assert paired is not None, "a repaired stream is well nested"
    functions, stamps, exits, made = closed
    entries, leaves, level = paired
    count = len(entries)
    # parents: the latest entry one level up before this entry (calls are sorted by level, then entry)
    keys = level * (len(functions) + 1) + entries
    parent = np.full(count, -1, dtype=np.int64)
    nested = level > 0
    probe = np.searchsorted(keys, (level[nested] - 1) * (len(functions) + 1) + entries[nested]) - 1
    parent[nested] = probe
    start, end = stamps[entries], stamps[leaves]
    inclusive = end - start
    children = np.bincount(parent[nested], weights=inclusive[nested].astype(np.float64), minlength=count)
    exclusive = inclusive - np.rint(children).astype(np.int64)
    return Calls(functions[entries], start, end, level.astype(np.int64), parent, exclusive, ~made[leaves])


def sample_events(functions: Any, exits: Any, rates: dict[int, int], default: int) -> Any:
    """Mask keeping every n-th call of each function (1st, n+1-th, ...) with its exit.

    ``rates`` maps function index -> n; others use ``default``.  Used where
    the engine itself cannot sample (uprobes).  Counting is per function over
    the stream given.
    """
    import numpy as np

    keep = np.ones(len(exits), dtype=bool)
    if default <= 1 and all(rate <= 1 for rate in rates.values()):
        return keep
    counts: dict[int, int] = {}
    stack: list[bool] = []
    for index, (function, is_exit) in enumerate(zip(functions.tolist(), exits.tolist())):
        if is_exit:
            keep[index] = stack.pop() if stack else False
            continue
        seen = counts.get(function, 0)
        counts[function] = seen + 1
        wanted = seen % max(rates.get(function, default), 1) == 0
        stack.append(wanted)
        keep[index] = wanted
    return keep
