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
  allocated (fork, or exec of other programs).

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
import struct
import tempfile
from itertools import chain
from pathlib import Path
from typing import Any

from ..errors import CollectionError
from ..profile.model import Profile, Snapshot
from ..profile.resources import MISSING, ResourceTable
from ..units import PhaseResult, UnitContext
from ..units.params import Param
from ..units.requirements import Requirement, tool_requirement
from .native_run import (COMMON_PARAMS, check_command, check_outcome, native_library_requirement, preload,
                         run_program, tool_error_as_collection)
from .nativelog import ProcessLog, read_logs
from .symbols import HOW_TO_GET_BINUTILS, Frame, ProcessMaps, Symbolizer

__all__ = ["KINDS", "MemoryCollector", "profile_from_logs"]

#: Record kinds of the log (memory.c) -> subtype; 9 is "realloc from".
KINDS = {1: "malloc", 2: "calloc", 3: "realloc", 4: "free", 5: "posix_memalign", 6: "aligned_alloc",
         7: "memalign", 8: "valloc"}
_REALLOC_FROM = 9
#: Frames in objects under these directories (the C library, libstdc++, ...) are left out of
#: default traces, so that a trace starts where the program itself allocated.
SYSTEM_DIRS = ("/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libexec/")
_STACK_RECORD = struct.Struct("<BBHI")


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

def _stacks(log: ProcessLog) -> dict[int, tuple[int, ...]]:
    """Stack id -> return addresses, from the stack streams of every thread."""
    stacks: dict[int, tuple[int, ...]] = {}
    payload = log.payload_size
    for (tid, stream), data in log.streams.items():
        if stream != 1:
            continue
        position, end = 0, len(data)
        while position + 8 <= end:
            kind, count, _, ident = _STACK_RECORD.unpack_from(data, position)
            if kind == 0:
                position = (position // payload + 1) * payload  # the rest of this block is unused
                continue
            stacks[ident] = struct.unpack_from(f"<{count}Q", data, position + 8)
            position += 8 + 8 * count
    return stacks


def _events(log: ProcessLog) -> Any:
    """The events of every thread (numpy structured array) with ``old`` set for reallocs, in time order."""
    import numpy as np

    dtype = np.dtype([("kind", "u1"), ("pad", "V3"), ("stack", "<u4"), ("time", "<u8"), ("address", "<u8"),
                      ("size", "<u8")])
    parts = []
    for tid in log.threads:
        data = log.stream(tid, 0)
        usable = len(data) - len(data) % dtype.itemsize
        events = np.frombuffer(data[:usable], dtype=dtype)
        events = events[events["kind"] != 0]
        old = np.zeros(len(events), dtype="<u8")
        froms = np.flatnonzero(events["kind"] == _REALLOC_FROM)
        paired = froms[(froms + 1 < len(events))]
        paired = paired[events["kind"][paired + 1] == 3]
        old[paired + 1] = events["address"][paired]
        keep = events["kind"] != _REALLOC_FROM
        parts.append((events[keep], old[keep]))
    if not parts:
        return np.zeros(0, dtype=dtype), np.zeros(0, dtype="<u8")
    events = np.concatenate([p[0] for p in parts])
    old = np.concatenate([p[1] for p in parts])
    order = np.argsort(events["time"], kind="stable")
    return events[order], old[order]


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
    order = np.argsort(addresses, kind="stable")
    grouped = addresses[order]
    positions = np.arange(len(order))
    latest = np.maximum.accumulate(np.where(~frees[order], positions, -1))
    valid = (latest >= 0) & (grouped[np.maximum(latest, 0)] == grouped)
    carried = np.where(valid, amounts[order][np.maximum(latest, 0)], 0)
    result = amounts.copy()
    result[order[frees[order]]] = carried[frees[order]]
    return result


def _matches_source(source: str, patterns: list[str]) -> bool:
    return any(source == p or os.path.basename(source) == p or source.endswith("/" + p.lstrip("/"))
               for p in patterns)


class _Traces:
    """Traces and uids per (stack, kind), built once and shared by every resource using them."""

    def __init__(self, stacks: dict[int, tuple[int, ...]], symbolizer: Symbolizer, full: bool,
                 no_func: list[str], no_source: list[str]) -> None:
        self.stacks = stacks
        self.full = full
        resolved = symbolizer.resolve({a for frames in stacks.values() for a in frames})
        shared: dict[Frame, dict] = {}
        #: per address: all its frames, those with line information, those of them outside system
        #: libraries, and whether a filter excludes it
        self.all_of: dict[int, list[dict]] = {}
        self.sourced_of: dict[int, list[dict]] = {}
        self.lined_of: dict[int, list[dict]] = {}
        self.excluded_of: dict[int, bool] = {}
        functions = set(no_func)
        for address, frames in resolved.items():
            dicts = [shared.setdefault(f, f.as_dict()) for f in frames]
            where = symbolizer.maps.locate(address)
            system = where is not None and where[0].startswith(SYSTEM_DIRS)
            self.all_of[address] = dicts
            self.sourced_of[address] = [d for f, d in zip(frames, dicts) if f.source is not None]
            self.lined_of[address] = [] if system else self.sourced_of[address]
            self.excluded_of[address] = any(
                f.function in functions or (bool(no_source) and f.source is not None
                                            and _matches_source(f.source, no_source)) for f in frames)
        self.filtering = bool(functions or no_source)
        self._cache: dict[tuple[int, int], tuple[list, dict, bool]] = {}

    def get(self, stack: int, kind: int) -> tuple[list, dict, bool]:
        """(trace, uid, excluded) of events with this stack and kind."""
        key = (stack, kind if self.full else 0)
        found = self._cache.get(key)
        if found is not None:
            return found
        addresses = self.stacks.get(stack, ())
        lined = list(chain.from_iterable(map(self.lined_of.__getitem__, addresses)))
        if not lined:
            lined = list(chain.from_iterable(map(self.sourced_of.__getitem__, addresses)))
        frames = list(chain.from_iterable(map(self.all_of.__getitem__, addresses))) if self.full or not lined else []
        with_lines = lined or frames
        # frames without line information only count for the filters when none has it
        kept = {id(d) for d in with_lines}
        excluded = self.filtering and any(self.excluded_of[a] for a in addresses
                                          if any(id(d) in kept for d in self.all_of[a]))
        uid = with_lines[0] if with_lines else {"function": "?", "source": "unreachable", "line": 0}
        if self.full:
            trace = [{"function": KINDS.get(kind, "?"), "source": "unreachable", "line": 0}, *frames]
        else:
            trace = with_lines
        found = self._cache[key] = (trace, uid, excluded)
        return found


def profile_from_logs(logs: list[ProcessLog], params: dict[str, Any]) -> Profile:
    """The memory profile of a run from the logs of its processes (see the module docstring)."""
    import numpy as np

    interval_ns = float(params.get("sampling") or 0.025) * 1e9
    origin = min(log.start_ns for log in logs)
    parts: dict[str, list] = {key: [] for key in ("time", "kind", "address", "amount", "trace", "uid", "old",
                                                  "process")}
    for number, log in enumerate(logs, 1):
        events, olds = _events(log)
        traces = _Traces(_stacks(log), Symbolizer(ProcessMaps.from_text(log.maps_text)), bool(params.get("all")),
                         list(params.get("no_func") or ()), list(params.get("no_source") or ()))
        kinds = events["kind"].astype(np.int64)
        keys = events["stack"].astype(np.int64) * 16 + kinds
        unique, inverse = np.unique(keys, return_inverse=True)
        found = [traces.get(int(key) // 16, int(key) % 16) for key in unique.tolist()]
        unique_traces = np.empty(len(found), dtype=object)
        unique_uids = np.empty(len(found), dtype=object)
        for index, (trace, uid, _) in enumerate(found):
            unique_traces[index], unique_uids[index] = trace, uid
        excluded = np.array([item[2] for item in found], dtype=bool)
        keep = (kinds >= 1) & (kinds <= 8) & ~excluded[inverse]
        amounts = _freed_sizes(kinds, events["address"], events["size"])
        parts["time"].append(events["time"][keep].astype(np.int64))
        parts["kind"].append(kinds[keep])
        parts["address"].append(events["address"][keep])
        parts["amount"].append(amounts[keep])
        parts["trace"].append(unique_traces[inverse[keep]])
        parts["uid"].append(unique_uids[inverse[keep]])
        parts["old"].append(np.where(kinds[keep] == 3, olds[keep], 0))
        parts["process"].append(np.full(int(keep.sum()), number, dtype=np.int64))
    arrays = {key: np.concatenate(values) for key, values in parts.items()}
    order = np.argsort(arrays["time"], kind="stable")
    arrays = {key: values[order] for key, values in arrays.items()}
    snaps = np.maximum((arrays["time"] - origin) // interval_ns, 0).astype(np.int64)
    names = np.array(["", *KINDS.values()], dtype=object)
    olds = np.full(len(order), MISSING, dtype=object)
    moved = arrays["old"] != 0
    olds[moved] = arrays["old"][moved].tolist()
    several = len(logs) > 1
    snapshots = []
    numbers, starts = np.unique(snaps, return_index=True)
    for number, low, high in zip(numbers.tolist(), starts.tolist(), [*starts[1:].tolist(), len(order)]):
        part = slice(low, high)
        keys = ["type", "subtype", "address", "amount", "trace", "uid"]
        columns: list[list] = [["memory"] * (high - low), names[arrays["kind"][part]].tolist(),
                               arrays["address"][part].tolist(), arrays["amount"][part].tolist(),
                               arrays["trace"][part].tolist(), arrays["uid"][part].tolist()]
        sparse = False
        if moved[part].any():
            keys.append("old_address")
            columns.append(olds[part].tolist())
            sparse = not moved[part].all()
        if several:
            keys.append("process")
            columns.append(arrays["process"][part].tolist())
        table = ResourceTable.from_columns(high - low, keys, columns, sparse=sparse)
        snapshots.append(Snapshot(table, [], {"time": f"{(number + 1) * interval_ns / 1e9:.6f}"}))
    header = {"type": "memory", "units": {"memory": "B"}, "cmd": params.get("cmd", ""),
              "params": params.get("args", ""), "workload": params.get("workload", "")}
    return Profile(header=header, snapshots=snapshots)
