"""The trace profile: one resource per recorded call, with its caller, depth and call stack.

The resources are described in :mod:`perun_core.collect.trace`.
"""

from __future__ import annotations

from typing import Any

from ..profile.model import Profile, Snapshot
from ..profile.resources import MISSING, ResourceTable
from .calltree import Calls

__all__ = ["MAX_TRACE", "profile_from_calls", "stack_ids"]

#: Frames kept in a resource's trace (the innermost ones), so deep recursions stay bounded.
MAX_TRACE = 128


def stack_ids(function: Any, depth: Any, parent: Any) -> tuple[Any, list[int], list[int]]:
    """A stack id per call (equal call paths share one) and each stack's function and parent stack."""
    import numpy as np

    stack = np.full(len(function), -1, dtype=np.int64)
    stack_function: list[int] = []
    stack_parent: list[int] = []
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max()) + 2 if len(depth) else 1))
    width = int(function.max()) + 1 if len(function) else 1
    for level in range(len(bounds) - 1):
        members = by_depth[bounds[level]:bounds[level + 1]]
        if not len(members):
            continue
        above = np.where(parent[members] >= 0, stack[np.maximum(parent[members], 0)], -1)
        keys = (above + 1) * width + function[members]
        unique, inverse = np.unique(keys, return_inverse=True)
        stack[members] = inverse + len(stack_function)
        stack_function += (unique % width).tolist()
        stack_parent += (unique // width - 1).tolist()
    return stack, stack_function, stack_parent


def profile_from_calls(threads: list[tuple[int, int, Calls]], names: dict[tuple[int, int], str],
                       params: dict[str, Any], size: int | None) -> Profile:
    """The trace profile of calls per (process, thread); see the module docstring for the resources."""
    import numpy as np

    several = len({process for process, _, _ in threads}) > 1
    labels = sorted(set(names.values()))
    label_id = {label: i for i, label in enumerate(labels)}
    parts: dict[str, list] = {key: [] for key in ("function", "start", "end", "depth", "parent", "exclusive",
                                                  "complete", "thread", "process")}
    offset = 0
    for process, thread, calls in threads:
        count = len(calls)
        known = np.array([label_id[names[(process, f)]] for f in range(int(calls.function.max()) + 1)]
                         if count else [], dtype=np.int64)
        parts["function"].append(known[calls.function] if count else calls.function)
        for key in ("start", "end", "depth", "exclusive", "complete"):
            parts[key].append(getattr(calls, key))
        parts["parent"].append(np.where(calls.parent >= 0, calls.parent + offset, -1))
        parts["thread"].append(np.full(count, thread, dtype=np.int64))
        parts["process"].append(np.full(count, process, dtype=np.int64))
        offset += count
    if offset:
        arrays = {key: np.concatenate(values) for key, values in parts.items()}
    else:
        arrays = {key: np.zeros(0, dtype=bool if key == "complete" else np.int64) for key in parts}
    stack, stack_function, stack_parent = stack_ids(arrays["function"], arrays["depth"], arrays["parent"])
    frames = [{"function": label} for label in labels]
    traces = np.empty(len(stack_function), dtype=object)
    for ident, (function, above) in enumerate(zip(stack_function, stack_parent)):
        trace = [frames[function]]
        if above >= 0:
            trace += traces[above][:MAX_TRACE - 1]
        traces[ident] = trace
    order = np.argsort(arrays["start"], kind="stable")
    count = len(order)
    uid_of = np.array(labels + [None], dtype=object)
    parent = arrays["parent"][order]
    caller = uid_of[np.where(parent >= 0, arrays["function"][np.maximum(parent, 0)], len(labels))]
    caller[parent < 0] = MISSING
    keys = ["type", "subtype", "uid", "amount", "exclusive", "caller", "depth", "thread", "call-order", "trace"]
    table_columns: list[list] = [
        ["mixed"] * count, ["time delta"] * count, uid_of[arrays["function"][order]].tolist(),
        (arrays["end"] - arrays["start"])[order].tolist(), arrays["exclusive"][order].tolist(), caller.tolist(),
        arrays["depth"][order].tolist(), arrays["thread"][order].tolist(), list(range(1, count + 1)),
        traces[stack[order]].tolist() if count else [],
    ]
    if size is not None:
        keys.append("structure-unit-size")
        table_columns.append([size] * count)
    complete = arrays["complete"][order]
    if count and not complete.all():
        keys.append("incomplete")
        flags = np.full(count, MISSING, dtype=object)
        flags[~complete] = True
        table_columns.append(flags.tolist())
    if several:
        keys.append("process")
        table_columns.append(arrays["process"][order].tolist())
    sparse = bool(count) and ((parent < 0).any() or "incomplete" in keys)
    table = ResourceTable.from_columns(count, keys, table_columns, sparse=sparse)
    header = {"type": "mixed", "units": {"mixed(time delta)": "ns", "exclusive": "ns"},
              "cmd": params.get("cmd", ""), "params": params.get("args", ""), "workload": params.get("workload", ""),
              "engine": params.get("engine", "instrument")}
    roots = arrays["depth"] == 0
    total = int((arrays["end"][roots] - arrays["start"][roots]).sum())
    return Profile(header=header, global_region=Snapshot(table, [], {"time": f"{total / 1e9:.6f}s"}))
