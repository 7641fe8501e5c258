"""The trace collector: every call of chosen C/C++ functions, with its duration and caller.

Two engines record the entry and exit of functions (spec 004 II.a, the
TRACER workflow):

``instrument`` (default)
    The program is compiled with ``-finstrument-functions`` and run with
    perun's trace runtime (``perun_core/native/trace.c``, built on first
    use) preloaded; no link flags are needed (without the runtime the C
    library's empty hooks run).  With ``--source`` the collector builds the
    command itself from the given sources into ``--target-dir`` (a
    temporary directory when not given), like the original complexity
    collector; otherwise the command must have been built with the flags
    :func:`instrumentation_flags` returns (``perun-core collect trace
    --check`` shows them).  Rules and sampling are applied inside the
    runtime, so skipped calls cost little.

``uprobes``
    ``perf probe`` puts uprobes on the entry and return of each function
    the rules select, in any binary with a symbol table (no rebuild);
    ``perf record`` collects them.  It needs root (or a kernel that lets the
    user write ``/sys/kernel/tracing/uprobe_events``); when it is not
    allowed the job fails with one line saying what is missing.  Sampling
    is applied after the run.  perf drops events when the program makes
    them faster than it can save them (busy threads): the number dropped is
    the header's ``lost_events`` and is said in the job's output, and the
    job fails when more than :data:`MAX_LOST_SHARE` of the events are lost,
    since the call tree would be wrong.

``-r/--rules`` selects functions by name or glob (``SLLList_*``; C++
functions match by their demangled name with or without the parameter
list); without rules the instrument engine records every instrumented
function.  ``-s/--sampling FUNCTION=N`` records only every N-th call of
FUNCTION (the 1st, the N+1-th, ...; the item is split at its last ``=``,
so C++ names work: ``SLL::search=2``; ``FUNCTION:N`` is accepted when there
is no ``=``), ``-g/--global-sampling N`` that of every other function; a
sampling pattern that matches no function is an error.  Rules pick
functions of the main executable only.

Every recorded call becomes one resource (spec 001 §4.1.1, plus the call
tree)::

    {"type": "mixed", "subtype": "time delta", "uid": "fib", "amount": 5210,
     "exclusive": 1830, "caller": "main", "depth": 1, "thread": 1,
     "call-order": 2, "trace": [{"function": "fib"}, {"function": "main"}],
     "structure-unit-size": 30}

``amount`` is the inclusive duration and ``exclusive`` the duration minus
that of the recorded calls it made, both in nanoseconds; ``caller`` is the
nearest recorded caller (absent for roots), ``depth`` the number of recorded
callers, ``thread`` numbers the threads of a process in the order they first
called a recorded function, ``call-order`` numbers all calls by their
start, ``trace`` is the recorded call stack, innermost first.
``structure-unit-size`` is present when the workload has a size: ``--size``,
else the workload itself when it is a whole number, else the size in bytes
of the file it names.  ``incomplete: true`` marks calls whose return was
not seen (the program exited or crashed inside them; they end at the last
event of their thread); ``process`` numbers processes in start order when
more than one recorded calls.  The flame graph of a trace profile is drawn
from ``exclusive`` (``to_flame_graph_format(profile, of="exclusive")``),
since inclusive durations of nested calls would be counted twice.

This module holds the collector, the ``--source`` build and the instrument
engine; the rules are matched in :mod:`~perun_core.collect.trace_selection`,
the uprobes engine is :mod:`~perun_core.collect.uprobes` and the resources
are made in :mod:`~perun_core.collect.trace_profile`.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .. import native
from ..errors import BuildFailed, CollectionError
from ..units import PhaseResult, UnitContext
from ..params import Param
from ..runner.process import preemption_record
from ..units.requirements import Requirement, tool_requirement
from .calltree import Calls, calls_of_thread
from .native_run import (COMMON_PARAMS, check_outcome, native_library_requirement, preload, resolve_command,
                         run_program, tool_error_as_collection)
from .nativelog import ProcessLog, read_logs
from .perf import HOW_TO_GET_PERF
from .symbols import HOW_TO_GET_BINUTILS, ProcessMaps, Symbolizer
from .trace_profile import profile_from_calls
from .trace_selection import selection
from .uprobes import run_uprobes, uprobes_requirement

__all__ = ["TraceCollector", "instrumentation_flags", "workload_size"]

_CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C")
_EXIT_BIT = 1 << 63


def _sampling_rules(value: list[str]) -> list[str]:
    """``FUNCTION=N`` items, split at the last ``=`` (C++ names contain colons); ``FUNCTION:N`` without one."""
    rules = []
    for item in value:
        text = str(item)
        function, sep, count = text.rpartition("=" if "=" in text else ":")
        if not sep or not function.strip() or not count.strip().isdigit() or int(count) < 1:
            raise ValueError("FUNCTION=N items with N >= 1 (e.g. 'SLLList_insert=10')")
        rules.append(f"{function.strip()}={int(count)}")
    return rules


def instrumentation_flags() -> dict[str, list[str]]:
    """Compiler and linker flags that make a program traceable by the instrument engine.

    ``{"cflags": [...], "ldflags": [...]}``.  The runtime is preloaded when
    the program runs, so the link needs nothing extra; ``-g`` gives the
    functions' source files to the profile.
    """
    return {"cflags": ["-finstrument-functions", "-g"], "ldflags": []}


def workload_size(workload: str, cwd: Path) -> int | None:
    """The structure-unit-size a workload stands for: a whole number, or a file's size in bytes."""
    text = workload.strip()
    if not text:
        return None
    if re.fullmatch(r"\d+", text):
        return int(text)
    path = Path(cwd, text)
    return path.stat().st_size if path.is_file() else None


class TraceCollector:
    name = "trace"
    kind = "collector"
    summary = "Duration, caller and depth of every call of chosen C/C++ functions (instrumentation or uprobes)."
    description = (
        "Records the entry and exit of functions: in programs built with -finstrument-functions, run with "
        "perun's runtime preloaded (--source builds them), or with uprobes through 'perf probe' (--engine "
        "uprobes, needs root). Resources carry the "
        "inclusive (amount) and exclusive duration in ns, the caller, depth, thread and call order."
    )
    profile_type = "mixed"
    params = (
        Param("engine", "choice", "instrument", "How calls are recorded.", choices=("instrument", "uprobes"),
              flags=("-e", "--engine")),
        Param("rules", "list", (), "Functions to record, by name or glob (repeatable); all instrumented "
              "functions when none are given.", flags=("-r", "--rules"), metavar="FUNCTION"),
        Param("sampling", "list", (), "Record only every N-th call of FUNCTION (repeatable).",
              flags=("-s", "--sampling"), metavar="FUNCTION=N", check=_sampling_rules),
        Param("global_sampling", "int", 1, "Record only every N-th call of the other functions.",
              flags=("-g", "--global-sampling"), minimum=1, metavar="N"),
        Param("files", "list", (), "Build the command from these C/C++ sources, instrumented (repeatable).",
              flags=("--source",), metavar="FILE"),
        Param("target_dir", "str", None, "Directory for the --source build (default: a temporary one).",
              flags=("--target-dir",), metavar="DIR"),
        Param("cflags", "list", ("-O2",), "Compiler flags of the --source build.", flags=("--cflags",),
              metavar="FLAGS"),
        Param("size", "int", None, "structure-unit-size of the calls (default: from the workload).",
              flags=("--size",), minimum=0, metavar="N"),
        *COMMON_PARAMS,
    )

    def requirements(self) -> list[Requirement]:
        found = [native_library_requirement("trace runtime", "trace", native)]
        flags = instrumentation_flags()
        found.append(Requirement("flags for your own build", True,
                                 f"CFLAGS += {' '.join(flags['cflags'])} (nothing to link: the runtime is preloaded)"))
        found += [tool_requirement(f"{tool} (binutils)", tool, HOW_TO_GET_BINUTILS) for tool in ("nm", "addr2line")]
        found.append(uprobes_requirement())
        return found

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        for tool in ("nm", "addr2line"):
            if shutil.which(tool) is None:
                raise CollectionError(ctx.label, f"'{tool}' is required but was not found; {HOW_TO_GET_BINUTILS}")
        if kwargs["engine"] == "uprobes":
            if kwargs["files"]:
                raise CollectionError(ctx.label, "--source builds are for the instrument engine; the uprobes "
                                      "engine probes the command as it is")
            if not kwargs["rules"]:
                raise CollectionError(ctx.label, "the uprobes engine needs -r/--rules naming the functions to probe")
            if shutil.which("perf") is None:
                raise CollectionError(ctx.label, f"'perf' is required but was not found; {HOW_TO_GET_PERF}")
        else:
            kwargs["runtime"] = str(tool_error_as_collection(ctx, lambda: native.library("trace")))
        return PhaseResult.ok(kwargs)

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        with tempfile.TemporaryDirectory(prefix="perun-trace-", ignore_cleanup_errors=True) as work:
            argv = list(kwargs["argv"])
            if kwargs["files"]:
                target = Path(kwargs["target_dir"]) if kwargs["target_dir"] else Path(work, "build")
                argv[0] = str(_build_target(ctx, kwargs, Path(ctx.cwd, target)))
            binary = resolve_command(ctx, argv[0])
            lost = 0
            if kwargs["engine"] == "uprobes":
                threads, outcome, names, lost = run_uprobes(ctx, kwargs, argv, binary, Path(work))
            else:
                threads, outcome, names = _run_instrumented(ctx, kwargs, argv, binary, Path(work))
        size = kwargs["size"] if kwargs["size"] is not None else workload_size(kwargs["workload"], ctx.cwd)
        profile = profile_from_calls(threads, names, kwargs, size)
        if lost:
            profile.header["lost_events"] = lost
        if outcome.exit_status != 0:
            profile.header["exit_status"] = outcome.exit_status
        # the calls are timed by the wall clock: how often the run waited for a core, for the checks
        preemption = preemption_record(outcome.wall_ns / 1e9, outcome.user_seconds + outcome.sys_seconds,
                                       outcome.involuntary_switches)
        if preemption:
            profile.header["preemption"] = preemption
        kwargs["profile"] = profile
        return PhaseResult.ok(kwargs)


# -- building ---------------------------------------------------------------------------

def _build_target(ctx: UnitContext, kwargs: dict[str, Any], target_dir: Path) -> Path:
    sources = [Path(ctx.cwd, f) for f in kwargs["files"]]
    missing = [str(s) for s in sources if not s.is_file()]
    if missing:
        raise CollectionError(ctx.label, f"source file not found: {missing[0]}")
    cpp = any(s.suffix in _CPP_SUFFIXES for s in sources)
    compiler = (shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")) if cpp else native.compiler()
    if compiler is None:
        raise CollectionError(ctx.label, f"no {'C++' if cpp else 'C'} compiler found; {native.HOW_TO_GET_CC}")
    flags = instrumentation_flags()
    target_dir.mkdir(parents=True, exist_ok=True)
    output = target_dir / Path(kwargs["argv"][0]).name
    cflags = [word for item in kwargs["cflags"] for word in shlex.split(item)]
    command = [compiler, *cflags, *flags["cflags"], *map(str, sources), "-o", str(output), *flags["ldflags"]]
    try:
        done = subprocess.run(command, cwd=ctx.cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=600, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CollectionError(ctx.label, f"cannot run the compiler: {exc}") from None
    if done.returncode != 0:
        error = BuildFailed(f"the instrumented {output.name}", shlex.join(command), done.stderr or done.stdout)
        raise CollectionError(ctx.label, error.message, None, "\n".join(error.output.splitlines()[-12:]))
    return output


# -- the instrument engine ---------------------------------------------------------------------

def _run_instrumented(ctx: UnitContext, kwargs: dict[str, Any], argv: list[str], binary: str, work: Path
                      ) -> tuple[list, Any, dict]:
    env = {"LD_PRELOAD": preload(kwargs.pop("runtime")), "PERUN_TRACE_DIR": str(work)}
    if kwargs["rules"] or kwargs["sampling"]:
        chosen, rates = selection(ctx, kwargs, binary)
        lines = {address: kwargs["global_sampling"] for address, _, _ in chosen} if kwargs["rules"] else {}
        lines.update((a, r) for a, r in rates.items() if a in lines or not kwargs["rules"])
        filter_file = work / "filter"
        filter_file.write_text("".join(f"{a:x} {n}\n" for a, n in lines.items()))
        env["PERUN_TRACE_FILTER"] = str(filter_file)
        if not kwargs["rules"]:
            env["PERUN_TRACE_ALL"] = "1"
    if kwargs["global_sampling"] > 1:
        env["PERUN_TRACE_SAMPLE"] = str(kwargs["global_sampling"])
    outcome = run_program(ctx, argv, kwargs, env=env)
    check_outcome(ctx, outcome, kwargs)
    logs = read_logs(work, "trace")
    if not logs:
        raise CollectionError(ctx.label, "no calls were recorded: build the program with -finstrument-functions "
                              "(and not statically linked), or give its sources with --source")
    threads, names = tool_error_as_collection(ctx, lambda: _threads_of_logs(logs))
    return threads, outcome, names


def _threads_of_logs(logs: list[ProcessLog]) -> tuple[list[tuple[int, int, Calls]], dict[tuple[int, int], str]]:
    """Calls per (process, thread) and function names per (process, function index)."""
    import numpy as np

    dtype = np.dtype([("function", "<u8"), ("stamp", "<u8")])
    threads = []
    names: dict[tuple[int, int], str] = {}
    for number, log in enumerate(logs, 1):
        streams = []
        for tid in log.threads:
            data = log.stream(tid, 0)
            events = np.frombuffer(data[:len(data) - len(data) % 16], dtype=dtype)
            streams.append(events[events["stamp"] != 0])
        if not streams:
            continue
        addresses, inverse = np.unique(np.concatenate([s["function"] for s in streams]), return_inverse=True)
        symbolizer = Symbolizer(ProcessMaps.from_text(log.maps_text), inlines=False)
        frames = symbolizer.resolve(addresses.tolist(), return_addresses=False)
        for index, address in enumerate(addresses.tolist()):
            names[(number, index)] = frames[address][0].function
        offset = 0
        for thread, events in enumerate(streams, 1):
            count = len(events)
            stamps = events["stamp"]
            exits = (stamps & np.uint64(_EXIT_BIT)) != 0
            times = (stamps & np.uint64(_EXIT_BIT - 1)).astype(np.int64)
            calls = calls_of_thread(inverse[offset:offset + count], times, exits)
            offset += count
            threads.append((number, thread, calls))
    return threads, names
