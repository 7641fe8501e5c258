"""The memory profile built from the collector's logs: numpy columns per process, packed per snapshot.

Everything per event is done on numpy columns; Python runs once per
distinct address (to symbolize it), once per distinct symbolized stack (to
build its trace) and once per snapshot.  Resources are written as packed
columns (:class:`~perun_core.profile.resources.PackedColumn`): traces and
uids as codes into the distinct values, numbers in the narrowest width.
"""

from __future__ import annotations

from typing import Any

from ..profile.model import Profile, Snapshot
from ..profile.resources import MISSING, PackedColumn, ResourceTable
from .memory_log import FREE, KINDS, REALLOC, events as read_events
from .memory_stacks import _lookup, _Traces, _Values, stack_classes
from .nativelog import ProcessLog

__all__ = ["profile_from_logs"]


def _by_address(addresses: Any) -> tuple[Any, Any]:
    """Positions of ``addresses`` sorted by address (equal addresses in position order), and the sorted addresses.

    Sorting (address, position) packed into one 64-bit key is several times
    faster than a stable argsort; addresses far apart (the heap and mmap'ed
    blocks) are sorted region by region so that the packed keys fit.
    """
    import numpy as np

    n = len(addresses)
    bits = max(1, (n - 1).bit_length())

    def packed(positions: Any) -> tuple[Any, Any] | None:
        chosen = addresses[positions] if positions is not None else addresses
        low = int(chosen.min())
        if (int(chosen.max()) - low).bit_length() + bits > 64:
            return None
        keys = ((chosen - np.uint64(low)) << np.uint64(bits)) | np.arange(len(chosen), dtype=np.uint64)
        keys.sort()
        order = (keys & np.uint64((1 << bits) - 1)).astype(np.int64)
        keys >>= np.uint64(bits)
        keys += np.uint64(low)
        return (order if positions is None else positions[order]), keys

    if n == 0:
        return np.zeros(0, dtype=np.int64), addresses[:0]
    whole = packed(None)
    if whole is not None:
        return whole
    regions = addresses >> np.uint64(40)
    present = np.flatnonzero(np.bincount(regions.astype(np.int64))) if int(regions.max()) < 1 << 16 else []
    parts = []
    if 0 < len(present) <= 16:
        for region in present.tolist():
            part = packed(np.flatnonzero(regions == np.uint64(region)))
            if part is None:
                break
            parts.append(part)
    if len(parts) != len(present) or not parts:
        order = np.argsort(addresses, kind="stable")
        return order, addresses[order]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _freed_sizes(kinds: Any, addresses: Any, sizes: Any) -> Any:
    """Amounts (numpy): the requested size, or for a free the size of the block it frees (0 if unknown).

    Events are in the order they happened.  A free releases the block most
    recently allocated (or reallocated) at its address: grouping the events
    by address, the size carries forward from each allocation to the frees
    after it.
    """
    import numpy as np

    amounts = sizes.astype(np.int64)
    frees = kinds == FREE
    if not frees.any():
        return amounts
    order, grouped = _by_address(addresses)
    freeing = frees[order]
    # in address order: the latest position (so far) that is not a free
    latest = np.maximum.accumulate(np.where(freeing, -1, np.arange(len(order))))
    at = np.flatnonzero(freeing)
    source = latest[at]
    found = source >= 0
    source = np.maximum(source, 0)
    found &= grouped[source] == grouped[at]
    amounts[order[at]] = np.where(found, amounts[order[source]], 0)
    return amounts


def _process_columns(log: ProcessLog, events: dict[str, Any], params: dict[str, Any], shared: dict[Any, dict],
                     traces: _Values, uids: _Values) -> dict[str, Any]:
    """The kept events of one process as columns (``trace`` and ``uid`` as numbers into ``traces``/``uids``)."""
    import numpy as np

    full = bool(params.get("all"))
    stacks = stack_classes(log)
    sequence_of, sequences, classes = stacks.sequence_of, stacks.sequences, stacks.classes
    sequences.append(())  # events whose stack was never defined (a crash while writing it)
    undefined = len(sequences) - 1
    sequence = _lookup(events["stack"], stacks.ids, sequence_of, undefined)
    kinds = events["kind"].astype(np.int64)
    valid = (kinds >= 1) & (kinds <= 8)
    slots = 9 if full else 1
    keys = sequence * slots + (np.where(valid, kinds, 0) if full else 0)
    used = np.flatnonzero(np.bincount(keys, minlength=len(sequences) * slots))
    trace_of = np.zeros(len(sequences) * slots, dtype=np.int64)
    uid_of = np.zeros(len(sequences) * slots, dtype=np.int64)
    excluded_of = np.ones(len(sequences) * slots, dtype=bool)
    builder = _Traces(classes, full, list(params.get("no_func") or ()), list(params.get("no_source") or ()), shared)
    for key in used.tolist():
        number, kind = divmod(key, slots)
        if full and kind == 0:
            continue  # not an allocator call: left out below
        trace, uid, excluded = builder.get(sequences[number], kind)
        trace_of[key], uid_of[key], excluded_of[key] = traces.number(trace), uids.number(uid), excluded
    amounts = _freed_sizes(kinds, events["address"], events["size"])
    kept = valid & ~excluded_of[keys]
    keep = slice(None) if kept.all() else np.flatnonzero(kept)
    kinds, keys = kinds[keep], keys[keep]
    return {"time": events["time"][keep].view(np.int64), "kind": kinds, "address": events["address"][keep],
            "amount": amounts[keep], "trace": trace_of[keys], "uid": uid_of[keys],
            "old": np.where(kinds == REALLOC, events["old"][keep], np.uint64(0))}


_WIDTHS = (("b", "<i1", 2**7), ("h", "<i2", 2**15), ("i", "<i4", 2**31), ("q", "<i8", 2**63))


def _packed_ints(values: Any, absent: Any = None) -> PackedColumn:
    """An int column (numpy) in the narrowest width, ``absent`` row numbers lacking the key."""
    import numpy as np

    low, high = (int(values.min()), int(values.max())) if len(values) else (0, 0)
    typecode, dtype = next((t, d) for t, d, bound in _WIDTHS if -bound <= low and high < bound)
    missing = b"" if absent is None or not len(absent) else absent.astype("<i8").tobytes()
    return PackedColumn("int", typecode, values.astype(dtype).tobytes(), len(values), None, missing)


def _packed_codes(codes: Any, values: list) -> PackedColumn:
    """A column of ``values[code]`` per row, keeping only the values it uses."""
    import numpy as np

    used = np.bincount(codes, minlength=len(values)) > 0 if len(codes) else np.zeros(len(values), dtype=bool)
    if not used.all():
        renumber = np.cumsum(used) - 1
        codes = renumber[codes]
        values = [values[i] for i in np.flatnonzero(used).tolist()]
    typecode, dtype = next((t, d) for t, d, bound in _WIDTHS if len(values) <= bound)
    return PackedColumn("dict", typecode, codes.astype(dtype).tobytes(), len(codes), values)


def profile_from_logs(logs: list[ProcessLog], params: dict[str, Any]) -> Profile:
    """The memory profile of a run from the logs of its processes (see the module docstring)."""
    import numpy as np

    interval_ns = float(params.get("sampling") or 0.025) * 1e9
    # A forked child that calls exec leaves a log of its own before the exec, usually without a
    # single record: such an empty piece is no process of the profile.
    later = {(log.pid, log.piece - 1) for log in logs if log.piece > 0}
    events = [read_events(log) for log in logs]
    pieces = [(log, found) for log, found in zip(logs, events)
              if len(found["time"]) or (log.pid, log.piece) not in later]
    origin = min(log.start_ns for log, _ in pieces)
    shared: dict[Any, dict] = {}
    traces, uids = _Values(), _Values()
    parts = []
    for number, (log, found) in enumerate(pieces, 1):
        columns = _process_columns(log, found, params, shared, traces, uids)
        columns["process"] = np.full(len(columns["time"]), number, dtype=np.int64)
        parts.append(columns)
    arrays = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    if len(parts) > 1:
        order = np.argsort(arrays["time"], kind="stable")
        arrays = {key: values[order] for key, values in arrays.items()}
    count = len(arrays["time"])
    snaps = np.maximum((arrays["time"] - origin) // interval_ns, 0).astype(np.int64)
    names = list(KINDS.values())
    moved = arrays["old"] != 0
    addresses = arrays["address"]
    wide = count > 0 and int(max(addresses.max(), arrays["old"].max())) >= 2**63
    several = len(pieces) > 1
    snapshots = []
    edges = [0, *(np.flatnonzero(snaps[1:] != snaps[:-1]) + 1).tolist(), count] if count else [0]
    for low, high in zip(edges[:-1], edges[1:]):
        part = slice(low, high)
        size = high - low
        keys = ["type", "subtype", "address", "amount", "trace", "uid"]
        columns: list[Any] = [
            PackedColumn("dict", "b", bytes(size), size, ["memory"]),
            _packed_codes(arrays["kind"][part] - 1, names),
            addresses[part].tolist() if wide else _packed_ints(addresses[part]),
            _packed_ints(arrays["amount"][part]),
            _packed_codes(arrays["trace"][part], traces.values),
            _packed_codes(arrays["uid"][part], uids.values),
        ]
        sparse = False
        if moved[part].any():
            keys.append("old_address")
            old = arrays["old"][part]
            if wide:
                columns.append([value if value else MISSING for value in old.tolist()])
            else:
                columns.append(_packed_ints(old, np.flatnonzero(~moved[part])))
            sparse = not moved[part].all()
        if several:
            keys.append("process")
            columns.append(_packed_ints(arrays["process"][part]))
        table = ResourceTable.from_columns(size, keys, columns, sparse=sparse)
        number = int(snaps[low])
        snapshots.append(Snapshot(table, [], {"time": f"{(number + 1) * interval_ns / 1e9:.6f}"}))
    header = {"type": "memory", "units": {"memory": "B"}, "cmd": params.get("cmd", ""),
              "params": params.get("args", ""), "workload": params.get("workload", "")}
    return Profile(header=header, snapshots=snapshots)
