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

The collector is split by job: :mod:`.memory_log` reads the logs into numpy
columns, :mod:`.memory_stacks` symbolizes the call stacks and builds the
traces, :mod:`.memory_profile` builds the profile.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from .. import native
from ..errors import CollectionError
from ..params import Param
from ..units import PhaseResult, UnitContext
from ..units.requirements import Requirement, tool_requirement
from .memory_log import KINDS
from .memory_profile import profile_from_logs as build
from .native_run import (COMMON_PARAMS, check_command, check_outcome, native_library_requirement, preload,
                         run_program, tool_error_as_collection)
from .nativelog import read_logs
from .symbols import HOW_TO_GET_BINUTILS

__all__ = ["KINDS", "MemoryCollector", "profile_from_logs"]


def profile_from_logs(logs: list, params: dict[str, Any]) -> Any:
    """The memory profile of a run from the logs of its processes (see the module docstring)."""

    return build(logs, params)


def _warm_up() -> None:
    """Import what building and storing the profile needs, while the program runs.

    The main thread only waits for the program then; importing numpy and
    the profile modules here takes them off the time after the run.  An
    import that fails is left for the main thread to report.
    """
    try:
        import numpy  # noqa: F401
        import numpy.ma  # noqa: F401  (numpy.unique imports it on first use)

        from ..profile import codec, validate  # noqa: F401
        from . import memory_profile  # noqa: F401
    except Exception:  # pragma: no cover - reported again where it is needed
        pass


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
              flags=("-s", "--sampling"), minimum=0.001, metavar="SECONDS", unit="s"),
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
        return [native_library_requirement("preload library", "memory", native), tool_requirement(
            "addr2line (binutils)", "addr2line", HOW_TO_GET_BINUTILS)]

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        check_command(ctx, kwargs)

        kwargs["library"] = str(tool_error_as_collection(ctx, lambda: native.library("memory")))
        if shutil.which("addr2line") is None:
            raise CollectionError(ctx.label, f"'addr2line' is required but was not found; {HOW_TO_GET_BINUTILS}")
        return PhaseResult.ok(kwargs)

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        library = kwargs.pop("library")
        with tempfile.TemporaryDirectory(prefix="perun-memory-", ignore_cleanup_errors=True) as work:
            env = {"LD_PRELOAD": preload(library), "PERUN_MEMORY_DIR": work, "PERUN_MEMORY_UNWIND": kwargs["unwind"],
                   "PERUN_MEMORY_DEPTH": str(kwargs["depth"])}
            warming = threading.Thread(target=_warm_up, name="perun-memory-warm-up", daemon=True)
            warming.start()
            try:
                outcome = run_program(ctx, kwargs["argv"], kwargs, env=env)
            finally:
                warming.join()
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

