"""The memory collector: every allocation and free of a C/C++ program, with its call stack.

The program runs with a small LD_PRELOAD library (``perun_core/native/memory.c``,
compiled on first use) that logs each successful call of malloc, calloc,
realloc, free, posix_memalign, aligned_alloc, memalign and valloc with its
time, address, size and call stack, into a crash-safe binary log per
process.  After the run the return addresses are symbolized with addr2line
from the recorded memory map, and every call becomes one resource (spec 001
§3.3.2)::

    {"type": "memory", "subtype": "malloc", "address": 94613423387296, "amount": 4,
     "trace": [{"function": "main", "source": "/src/test.c", "line": 22}, ...],
     "uid": {"function": "main", "source": "/src/test.c", "line": 22}}

* ``subtype`` is the function called (``free`` for free, and for
  ``realloc(p, 0)``, which frees ``p``);
* ``amount`` is the number of bytes requested (calloc: count x size); for a
  free it is the size of the block it freed (0 when that block was allocated
  before the library was loaded);
* ``trace`` lists the callers, innermost first.  By default it keeps the
  frames with line information outside the system's library directories
  (the program's own code when built with ``-g``: allocations made inside
  ``strdup`` or ``operator new`` start at the program's call of them);
  failing that, all frames with line information, and failing that, all
  frames.  With ``-a/--all`` it is the full stack, headed by the allocator
  itself, and frames without line information read ``{"source":
  "unreachable", "line": 0}``;
* ``uid`` is the first frame of the default trace: where the program
  allocated;
* ``old_address`` (realloc only) is the block that was resized;
* ``process`` numbers the processes in start order (1 is the profiled
  command) and is present only when the program started more than one that
  allocated (fork, or exec of other programs).  A program image started by
  exec without fork counts as a process of its own (same pid, its own
  memory map): the records made before the exec are kept.  A forked child
  that calls exec before recording anything is one process, not two.

Resources are grouped into snapshots of ``-s/--sampling`` seconds by the
time of the call; a snapshot's ``time`` is the end of its interval.  Within
and across snapshots resources are in the order the calls happened, also
across threads (a free is timed before the block is released, an
allocation after it was obtained).

Call stacks are found in one of two ways.  Walking frame pointers is cheap
and exact for code built with ``-fno-omit-frame-pointer`` (or ``-O0``); in
code without them the walk stops early.  The unwind tables (backtrace(3))
are exact for any code but about ten times slower.  ``--unwind auto`` (the
default) walks frame pointers when the program's own code called the
allocator and uses the unwind tables when a library did (``strdup``, C++'s
``operator new``): library code has no frame pointers, and a walk through it
would miss the program's frame that called it.  ``--unwind fp`` and
``--unwind dwarf`` force one way.  Statically linked programs
cannot be profiled (nothing can be preloaded into them): the job fails with
that reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from itertools import chain
from pathlib import Path
from typing import Any

from ..errors import CollectionError
from ..profile.model import Profile, Snapshot
from ..profile.resources import MISSING, PackedColumn, ResourceTable
from ..units import PhaseResult, UnitContext
from ..params import Param
from ..units.requirements import Requirement, tool_requirement
from .native_run import (COMMON_PARAMS, check_command, check_outcome, native_library_requirement, preload,
                         run_program, tool_error_as_collection)
from .nativelog import BLOCK_HEADER_SIZE, ProcessLog, read_logs
from .symbols import HOW_TO_GET_BINUTILS, Frame, ProcessMaps, Symbolizer

__all__ = ["KINDS", "MemoryCollector", "profile_from_logs"]

#: Record kinds of the log (memory.c) -> subtype; 9 is "realloc from".
KINDS = {1: "malloc", 2: "calloc", 3: "realloc", 4: "free", 5: "posix_memalign", 6: "aligned_alloc",
         7: "memalign", 8: "valloc"}
_REALLOC_FROM = 9
#: Frames in objects under these directories (the C library, libstdc++, ...) are left out of
#: default traces, so that a trace starts where the program itself allocated.
SYSTEM_DIRS = ("/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libexec/")


def _positive_patterns(value: list[str]) -> list[str]:
    return [v for v in value if v]


class MemoryCollector:
    name = "memory"
    kind = "collector"
    summary = "Allocations and frees of a C/C++ program with their call stacks (LD_PRELOAD)."
    description = (
        "Preloads a small library (built with the system C compiler on first use) that logs every call of "
        "malloc, calloc, realloc, free, posix_memalign, aligned_alloc, memalign and valloc with its size, "
        "address and call stack; addr2line turns the stacks into functions, files and lines. Build the "
        "program with -g (and -fno-omit-frame-pointer, or use --unwind dwarf) for exact traces."
    )
    profile_type = "memory"
    params = (
        Param("sampling", "float", 0.025, "Snapshot interval: allocations are grouped by this many seconds.",
              flags=("-s", "--sampling"), minimum=0.001, metavar="SECONDS"),
        Param("no_source", "list", (), "Leave out allocations with a frame in this source file (repeatable).",
              flags=("--no-source",), metavar="FILE", check=_positive_patterns),
        Param("no_func", "list", (), "Leave out allocations with a frame in this function (repeatable).",
              flags=("--no-func",), metavar="FUNCTION", check=_positive_patterns),
        Param("all", "bool", False, "Keep full traces: the allocator itself and frames without line information.",
              flags=("-a", "--all")),
        Param("unwind", "choice", "auto", "How call stacks are found: frame pointers (fp: fast), unwind tables "
              "(dwarf: exact for any code, slower), or fp from the program's own code and dwarf from libraries "
              "(auto).", choices=("auto", "fp", "dwarf"), flags=("--unwind",)),
        Param("depth", "int", 32, "Most frames recorded per call stack.", flags=("--depth",), minimum=1,
              maximum=250, metavar="N"),
        *COMMON_PARAMS,
    )

    def requirements(self) -> list[Requirement]:
        from .. import native

        return [native_library_requirement("preload library", "memory", native), tool_requirement(
            "addr2line (binutils)", "addr2line", HOW_TO_GET_BINUTILS)]

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        check_command(ctx, kwargs)
        from .. import native

        kwargs["library"] = str(tool_error_as_collection(ctx, lambda: native.library("memory")))
        if shutil.which("addr2line") is None:
            raise CollectionError(ctx.label, f"'addr2line' is required but was not found; {HOW_TO_GET_BINUTILS}")
        return PhaseResult.ok(kwargs)

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        library = kwargs.pop("library")
        with tempfile.TemporaryDirectory(prefix="perun-memory-", ignore_cleanup_errors=True) as work:
            env = {"LD_PRELOAD": preload(library), "PERUN_MEMORY_DIR": work, "PERUN_MEMORY_UNWIND": kwargs["unwind"],
                   "PERUN_MEMORY_DEPTH": str(kwargs["depth"])}
            outcome = run_program(ctx, kwargs["argv"], kwargs, env=env)
            check_outcome(ctx, outcome, kwargs)
            logs = read_logs(Path(work), "memory")
            if not logs:
                raise CollectionError(ctx.label, "the program did not load the memory library (is it statically "
                                      "linked or setuid?), so nothing was recorded")
            profile = tool_error_as_collection(ctx, lambda: profile_from_logs(logs, kwargs))
        if outcome.exit_status != 0:
            profile.header["exit_status"] = outcome.exit_status
        kwargs["profile"] = profile
        return PhaseResult.ok(kwargs)


# -- turning the logs into a profile ------------------------------------------------------
#
# Everything per event is done on numpy columns; Python runs once per distinct address (to
# symbolize it), once per distinct symbolized stack (to build its trace) and once per snapshot.
# Call stacks are first reduced to sequences of "frame classes" (addresses with the same frames
# and the same system-library flag build the same trace), so the recursion of a tree walk,
# whose return addresses differ on every path, still has only as many traces as depths.


def _thread_events(log: ProcessLog, tid: int) -> dict[str, Any]:
    """The events of one thread as columns, in the order written, with ``old`` set for reallocs."""
    import numpy as np

    words = log.stream_array(tid, 0, "<u8")
    words = words[:len(words) // 4 * 4].reshape(-1, 4)
    present = np.flatnonzero(words[:, 0] & np.uint64(0xFF))
    words = words[present]
    head = words[:, 0]
    kinds = (head & np.uint64(0xFF)).astype(np.uint8)
    addresses = words[:, 2]
    old = np.zeros(len(kinds), dtype=np.uint64)
    froms = np.flatnonzero(kinds == _REALLOC_FROM)
    paired = froms[froms + 1 < len(kinds)]
    paired = paired[kinds[paired + 1] == 3]
    old[paired + 1] = addresses[paired]
    keep = np.flatnonzero(kinds != _REALLOC_FROM) if len(froms) else slice(None)
    return {"kind": kinds[keep], "stack": (head[keep] >> np.uint64(32)).astype(np.int64), "time": words[keep, 1],
            "address": addresses[keep], "size": words[keep, 3], "old": old[keep]}


def _events(log: ProcessLog) -> dict[str, Any]:
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


def _stack_records(log: ProcessLog) -> tuple[Any, Any, Any]:
    """Stack ids, their frame counts and their return addresses (one flat array, stack after stack)."""
    import numpy as np

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


def _distinct_sequences(classes: Any, counts: Any) -> tuple[Any, list[tuple[int, ...]]]:
    """Per stack record, the number of its class sequence; and the distinct sequences.

    ``classes`` is flat (record after record, ``counts`` entries each).
    Records are grouped by a 64-bit hash of their sequence, and every record
    is then compared with the first of its group, so a hash collision is
    noticed (and the exact but slower grouping by content used instead).
    """
    import numpy as np

    n = len(counts)
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    begins = np.cumsum(counts) - counts
    within = np.arange(len(classes), dtype=np.int64) - np.repeat(begins, counts)
    mixed = (classes.astype(np.uint64) + np.uint64(1)) * _position_multipliers()[within]
    hashes = counts.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    filled = np.flatnonzero(counts)
    if len(filled):
        hashes[filled] += np.add.reduceat(mixed, begins[filled])
    distinct = np.unique(hashes)
    group = np.searchsorted(distinct, hashes)
    order = np.argsort(group, kind="stable")
    first = order[np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1]])]
    representative = first[group]
    same = (counts[representative] == counts).all() and (
        classes == classes[np.repeat(begins[representative], counts) + within]).all()
    if not same:  # pragma: no cover - a 64-bit hash collision
        return _distinct_sequences_exactly(classes, counts)
    sequences = [tuple(classes[b:b + c].tolist()) for b, c in zip(begins[first].tolist(), counts[first].tolist())]
    return group.astype(np.int64), sequences


def _position_multipliers() -> Any:
    """Odd 64-bit multipliers per frame position (fixed, so runs are repeatable)."""
    import numpy as np

    return np.random.default_rng(0x5EED).integers(0, 2**63, 256, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def _distinct_sequences_exactly(classes: Any, counts: Any) -> tuple[Any, list[tuple[int, ...]]]:
    """:func:`_distinct_sequences` by comparing the sequences themselves, records of one length at a time."""
    import numpy as np

    sequence_of = np.zeros(len(counts), dtype=np.int64)
    sequences: list[tuple[int, ...]] = []
    begins = np.cumsum(counts) - counts
    order = np.argsort(counts, kind="stable")
    ordered = counts[order]
    edges = [0, *(np.flatnonzero(ordered[1:] != ordered[:-1]) + 1).tolist(), len(order)]
    for low, high in zip(edges[:-1], edges[1:]):
        records = order[low:high]
        width = int(ordered[low])
        if width == 0:
            sequence_of[records] = len(sequences)
            sequences.append(())
            continue
        matrix = np.ascontiguousarray(classes[begins[records][:, None] + np.arange(width)])
        rows = matrix.view(np.dtype((np.void, matrix.itemsize * width))).ravel()
        _, firsts, inverse = np.unique(rows, return_index=True, return_inverse=True)
        sequence_of[records] = len(sequences) + inverse.reshape(-1)
        sequences.extend(map(tuple, matrix[firsts].tolist()))
    return sequence_of, sequences


def _lookup(keys: Any, known: Any, values: Any, missing: int) -> Any:
    """``values[i]`` where ``keys == known[i]``, ``missing`` where a key is not known (known >= 0)."""
    import numpy as np

    if not len(known):
        return np.full(len(keys), missing, dtype=np.int64)
    top = int(known.max())
    if top <= 4 * len(known) + 65536:
        dense = np.full(top + 2, missing, dtype=np.int64)
        dense[known] = values
        return dense[np.clip(keys, 0, top + 1)] if len(keys) else np.zeros(0, dtype=np.int64)
    order = np.argsort(known, kind="stable")
    ordered = known[order]
    at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    return np.where(ordered[at] == keys, values[order][at], missing)


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
    frees = kinds == 4
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


def _matches_source(source: str, patterns: list[str]) -> bool:
    return any(source == p or os.path.basename(source) == p or source.endswith("/" + p.lstrip("/"))
               for p in patterns)


_UNKNOWN_UID = {"function": "?", "source": "unreachable", "line": 0}


class _Traces:
    """Traces and uids per (frame class sequence, kind).

    A frame class stands for every address with the same frames (and the
    same system-library flag), so its trace pieces are built once.  Frame
    dicts are shared through ``shared`` (by frame), so equal traces hold
    the same dicts.
    """

    def __init__(self, classes: list[tuple[tuple[Frame, ...], bool]], full: bool, no_func: list[str],
                 no_source: list[str], shared: dict[Any, dict]) -> None:
        self.full = full
        #: per class: all its frames, those with line information, those of them outside system
        #: libraries, and whether a filter excludes it
        self.all_of: list[list[dict]] = []
        self.sourced_of: list[list[dict]] = []
        self.lined_of: list[list[dict]] = []
        self.excluded_of: list[bool] = []
        self.shared = shared
        functions = set(no_func)
        for frames, system in classes:
            dicts = [shared.setdefault(f, f.as_dict()) for f in frames]
            sourced = [d for f, d in zip(frames, dicts) if f.source is not None]
            self.all_of.append(dicts)
            self.sourced_of.append(sourced)
            self.lined_of.append([] if system else sourced)
            self.excluded_of.append(any(
                f.function in functions or (bool(no_source) and f.source is not None
                                            and _matches_source(f.source, no_source)) for f in frames))
        self.filtering = bool(functions or no_source)

    def get(self, sequence: tuple[int, ...], kind: int) -> tuple[list, dict, bool]:
        """(trace, uid, excluded) of events with this class sequence and kind."""
        lined = list(chain.from_iterable(map(self.lined_of.__getitem__, sequence)))
        if not lined:
            lined = list(chain.from_iterable(map(self.sourced_of.__getitem__, sequence)))
        frames = list(chain.from_iterable(map(self.all_of.__getitem__, sequence))) if self.full or not lined else []
        with_lines = lined or frames
        # frames without line information only count for the filters when none has it
        kept = {id(d) for d in with_lines}
        excluded = self.filtering and any(self.excluded_of[c] for c in sequence
                                          if any(id(d) in kept for d in self.all_of[c]))
        uid = with_lines[0] if with_lines else _UNKNOWN_UID
        if self.full:
            name = KINDS.get(kind, "?")
            head = self.shared.setdefault(("allocator", name), {"function": name, "source": "unreachable", "line": 0})
            trace = [head, *frames]
        else:
            trace = with_lines
        return trace, uid, excluded


class _Values:
    """Distinct traces or uids of a profile, numbered; equal ones (built from the same dicts) share a number."""

    def __init__(self) -> None:
        self.values: list = []
        self._number: dict[Any, int] = {}

    def number(self, value: Any) -> int:
        key = tuple(map(id, value)) if isinstance(value, list) else id(value)
        found = self._number.get(key)
        if found is None:
            found = self._number[key] = len(self.values)
            self.values.append(value)
        return found


def _process_columns(log: ProcessLog, events: dict[str, Any], params: dict[str, Any], shared: dict[Any, dict],
                     traces: _Values, uids: _Values) -> dict[str, Any]:
    """The kept events of one process as columns (``trace`` and ``uid`` as numbers into ``traces``/``uids``)."""
    import numpy as np

    full = bool(params.get("all"))
    ids, counts, flat = _stack_records(log)
    addresses = np.unique(flat)  # few distinct ones: sorting values and searching beats argsort
    inverse = np.searchsorted(addresses, flat)
    symbolizer = Symbolizer(ProcessMaps.from_text(log.maps_text))
    resolved = symbolizer.resolve(addresses.tolist())
    class_of: dict[tuple, int] = {}
    classes = []
    numbers = []
    for address in addresses.tolist():
        where = symbolizer.maps.locate(address)
        key = (resolved[address], where is not None and where[0].startswith(SYSTEM_DIRS))
        number = class_of.get(key)
        if number is None:
            number = class_of[key] = len(classes)
            classes.append(key)
        numbers.append(number)
    flat_classes = np.asarray(numbers, dtype=np.int32)[inverse] if numbers else np.zeros(0, dtype=np.int32)
    sequence_of, sequences = _distinct_sequences(flat_classes, counts)
    sequences.append(())  # events whose stack was never defined (a crash while writing it)
    undefined = len(sequences) - 1
    sequence = _lookup(events["stack"], ids, sequence_of, undefined)
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
            "old": np.where(kinds == 3, events["old"][keep], np.uint64(0))}


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
    events = [_events(log) for log in logs]
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
