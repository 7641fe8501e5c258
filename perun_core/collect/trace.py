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
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

from ..errors import CollectionError, ToolNotPermitted
from ..profile.model import Profile, Snapshot
from ..profile.resources import MISSING, ResourceTable
from ..units import PhaseResult, UnitContext
from ..params import Param
from ..units.requirements import Requirement, tool_requirement
from .calltree import Calls, calls_of_thread, sample_events
from .native_run import (COMMON_PARAMS, check_outcome, native_library_requirement, preload, resolve_command,
                         run_program, tool_error_as_collection)
from .nativelog import ProcessLog, read_logs
from .perf import HOW_TO_GET_PERF, perf_command
from .symbols import HOW_TO_GET_BINUTILS, ProcessMaps, Symbolizer

__all__ = ["TraceCollector", "instrumentation_flags", "profile_from_calls", "workload_size"]

_CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C")
_EXIT_BIT = 1 << 63
#: Where the kernel offers uprobe events: tracefs, or tracefs inside debugfs on older systems.
UPROBE_EVENTS = (Path("/sys/kernel/tracing/uprobe_events"), Path("/sys/kernel/debug/tracing/uprobe_events"))
#: The share of uprobe events perf may lose before the job fails (fewer are noted in the header).
MAX_LOST_SHARE = 0.01
_LOST = re.compile(r"PERF_RECORD_LOST(_SAMPLES)? lost (\d+)")


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
        from .. import native

        found = [native_library_requirement("trace runtime", "trace", native)]
        flags = instrumentation_flags()
        found.append(Requirement("flags for your own build", True,
                                 f"CFLAGS += {' '.join(flags['cflags'])} (nothing to link: the runtime is preloaded)"))
        found += [tool_requirement(f"{tool} (binutils)", tool, HOW_TO_GET_BINUTILS) for tool in ("nm", "addr2line")]
        found.append(_uprobes_requirement())
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
            from .. import native

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
                threads, outcome, names, lost = _run_uprobes(ctx, kwargs, argv, binary, Path(work))
            else:
                threads, outcome, names = _run_instrumented(ctx, kwargs, argv, binary, Path(work))
        size = kwargs["size"] if kwargs["size"] is not None else workload_size(kwargs["workload"], ctx.cwd)
        profile = profile_from_calls(threads, names, kwargs, size)
        if lost:
            profile.header["lost_events"] = lost
        if outcome.exit_status != 0:
            profile.header["exit_status"] = outcome.exit_status
        kwargs["profile"] = profile
        return PhaseResult.ok(kwargs)


# -- building ---------------------------------------------------------------------------

def _build_target(ctx: UnitContext, kwargs: dict[str, Any], target_dir: Path) -> Path:
    from ..errors import BuildFailed
    from .. import native

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


# -- choosing functions ---------------------------------------------------------------

def _text_symbols(binary: str, *, demangle: bool) -> list[tuple[int, str]]:
    """``(address, name)`` of the functions defined in ``binary`` (from nm)."""
    command = ["nm", "--defined-only", *(["-C"] if demangle else []), binary]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    symbols = []
    for line in done.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in ("T", "t", "W", "w", "i"):
            try:
                symbols.append((int(parts[0], 16), parts[2]))
            except ValueError:
                continue
    return symbols


def _matches(names: tuple[str, ...], patterns: list[str]) -> bool:
    candidates = {n for name in names for n in (name, name.split("(", 1)[0])}
    return any(fnmatch.fnmatchcase(n, p) for n in candidates for p in patterns)


def _functions(binary: str) -> list[tuple[int, str, str]]:
    """``(address, symbol, demangled name)`` of each function of ``binary``, one per address."""
    demangled = dict(_text_symbols(binary, demangle=True))
    found: dict[int, tuple[int, str, str]] = {}
    for address, symbol in _text_symbols(binary, demangle=False):
        found.setdefault(address, (address, symbol, demangled.get(address, symbol)))
    return sorted(found.values())


def _selection(ctx: UnitContext, kwargs: dict[str, Any], binary: str
               ) -> tuple[list[tuple[int, str, str]], dict[int, int]]:
    """Functions the rules select (all of them without rules) and the sampling rate by address of named ones."""
    functions = _functions(binary)
    rules = list(kwargs["rules"])
    if rules:
        chosen = [f for f in functions if _matches(f[1:], rules)]
        if not chosen:
            raise CollectionError(ctx.label, f"no function of {binary} matches the rules {', '.join(rules)}"
                                  + ("" if functions else " (it has no symbol table: was it stripped?)"))
    else:
        chosen = functions
    rates: dict[int, int] = {}
    for item in kwargs["sampling"]:
        pattern, _, count = item.rpartition("=")
        matched = [address for address, *names in functions if _matches(tuple(names), [pattern])]
        if not matched:
            raise CollectionError(ctx.label, f"the sampling pattern {pattern!r} matches no function of {binary}")
        rates.update((address, int(count)) for address in matched)
    return chosen, rates


# -- the instrument engine ---------------------------------------------------------------------

def _run_instrumented(ctx: UnitContext, kwargs: dict[str, Any], argv: list[str], binary: str, work: Path
                      ) -> tuple[list, Any, dict]:
    env = {"LD_PRELOAD": preload(kwargs.pop("runtime")), "PERUN_TRACE_DIR": str(work)}
    if kwargs["rules"] or kwargs["sampling"]:
        chosen, rates = _selection(ctx, kwargs, binary)
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


# -- the uprobes engine ---------------------------------------------------------------------------

def _uprobe_events() -> Path | None:
    """The kernel's uprobe_events file, None when there is none.

    Raises OSError when tracefs may not be looked into (it is readable by
    root only on most systems).
    """
    for path in UPROBE_EVENTS:
        try:
            path.stat()
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                continue
            raise
        return path
    return None


def _uprobes_requirement() -> Requirement:
    name = "uprobes through perf (--engine uprobes)"
    if shutil.which("perf") is None:
        return Requirement(name, False, "'perf' not found on PATH", HOW_TO_GET_PERF, optional=True)
    try:
        events = _uprobe_events()
    except OSError:
        return Requirement(name, False, "tracefs is not readable by this user",
                           "run as root (or use the instrument engine)", optional=True)
    if events is None:
        return Requirement(name, False, "the kernel offers no uprobe_events (CONFIG_UPROBE_EVENTS, tracefs "
                           "mounted at /sys/kernel/tracing)", "use a kernel with uprobes and mount tracefs",
                           optional=True)
    if not os.access(events, os.W_OK):
        return Requirement(name, False, f"{events} is not writable by this user",
                           "run as root (or grant write access to tracefs)", optional=True)
    return Requirement(name, True, f"{events} is writable", optional=True)


def _perf_probe(ctx: UnitContext, work: Path, args: list[str]) -> subprocess.CompletedProcess:
    """Run ``perf probe`` (not quiet: -q hides its error messages too)."""
    try:
        return subprocess.run(perf_command(work, "probe", *args), cwd=ctx.cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CollectionError(ctx.label, f"perf probe failed: {exc}") from None


def _probe_failure(ctx: UnitContext, done: subprocess.CompletedProcess) -> CollectionError:
    text = (done.stderr or done.stdout).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = next((line for line in lines if line.lower().startswith("error")), lines[0] if lines else "no message")
    if any(word in text.lower() for word in ("permission", "not permitted", "privilege", "read-only")):
        error = ToolNotPermitted("perf probe", f"placing uprobes needs root ({first})",
                                 "run perun as root, or use the instrument engine")
        return CollectionError(ctx.label, error.message)
    if "uprobe_events" in text or "tracefs" in text.lower() or "debugfs" in text.lower():
        return CollectionError(ctx.label, f"perf probe cannot place uprobes: the kernel offers no uprobe_events "
                               f"({first})")
    return CollectionError(ctx.label, f"perf probe failed: {first}")


def _ring_buffer() -> str | None:
    """perf record's buffer per CPU (-m) for uprobes: 16 MiB, less with many CPUs (256 MiB in all at most).

    perf's default (512 KiB) loses a good share of the events of a few busy
    threads.  None (perf's default) for users other than root, whom the
    kernel allows much less locked memory.
    """
    if os.geteuid() != 0:
        return None
    cpus = os.cpu_count() or 1
    size = 16
    while size > 1 and size * cpus > 256:
        size //= 2
    return f"{size}M"


def _run_uprobes(ctx: UnitContext, kwargs: dict[str, Any], argv: list[str], binary: str, work: Path
                 ) -> tuple[list, Any, dict, int]:
    """Calls per thread, the outcome, function names and the number of events perf lost."""
    import numpy as np

    requirement = _uprobes_requirement()
    if not requirement.ok:
        raise CollectionError(ctx.label, f"the uprobes engine cannot run here: {requirement.detail}; "
                              f"{requirement.how_to_get}")
    chosen, rates_by_address = _selection(ctx, kwargs, binary)
    chosen = [f for f in chosen if "." not in f[1]]  # compiler-made clones (fib.constprop.0) cannot be probed
    if not chosen:
        raise CollectionError(ctx.label, "the rules select only compiler-made clones of functions, which "
                              "perf probe cannot probe")
    # perf probe refuses an event name that another group already uses (e0 of a concurrent job): unique ones
    token = uuid.uuid4().hex[:12]
    group = f"perun_{token}"
    specs = []
    for index, (_, symbol, _) in enumerate(chosen):
        specs += ["-a", f"{group}:e{index}_{token}={symbol}", "-a", f"{group}:x{index}_{token}={symbol}%return"]
    done = _perf_probe(ctx, work, ["-x", binary, *specs])
    buffer = _ring_buffer()
    try:
        if done.returncode != 0:
            raise _probe_failure(ctx, done)
        data = work / "perf.data"
        command = perf_command(work, "record", "--no-buildid-cache", *(["-m", buffer] if buffer else []),
                               "-e", f"{group}:*", "-o", str(data), "--", *argv)
        outcome = run_program(ctx, command, kwargs, tool="perf record")
        if not data.exists():
            raise CollectionError(ctx.label, "perf record wrote no data", outcome.exit_status, outcome.stderr_tail)
        check_outcome(ctx, outcome, kwargs)
        try:
            script = subprocess.run(perf_command(work, "script", "-i", str(data), "-F", "tid,time,event", "--ns",
                                                 "--show-lost-events"),
                                    cwd=ctx.cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                    errors="replace", timeout=600, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CollectionError(ctx.label, f"perf script failed: {exc}") from None
    finally:
        _perf_probe(ctx, work, ["-d", f"{group}:*"])
    pattern = re.compile(rf"^\s*(\d+)\s+(\d+)\.(\d+):\s+{group}:([ex])(\d+)_{token}(?:__return)?:")
    per_thread: dict[int, list[tuple[int, int, bool]]] = {}
    lost = {"chunks": 0, "samples": 0}
    for line in script.stdout.splitlines():
        match = pattern.match(line)
        if match:
            tid, seconds, fraction, kind, index = match.groups()
            stamp = int(seconds) * 1_000_000_000 + int(fraction.ljust(9, "0")[:9])
            per_thread.setdefault(int(tid), []).append((int(index), stamp, kind == "x"))
        elif (loss := _LOST.search(line)) is not None:
            lost["samples" if loss.group(1) else "chunks"] += int(loss.group(2))
    # perf may report one loss twice: as lost ring-buffer records and as lost samples of an event
    lost_events = max(lost.values())
    if lost_events:
        _judge_losses(ctx, lost_events, sum(map(len, per_thread.values())), buffer)
    names = {(1, index): name for index, (_, _, name) in enumerate(chosen)}
    rates = {index: rates_by_address[address] for index, (address, _, _) in enumerate(chosen)
             if address in rates_by_address}
    threads = []
    for thread, events in enumerate(per_thread.values(), 1):
        functions = np.array([e[0] for e in events], dtype=np.int64)
        stamps = np.array([e[1] for e in events], dtype=np.int64)
        exits = np.array([e[2] for e in events], dtype=bool)
        keep = sample_events(functions, exits, rates, kwargs["global_sampling"])
        threads.append((1, thread, calls_of_thread(functions[keep], stamps[keep], exits[keep])))
    return threads, outcome, names, lost_events


def _judge_losses(ctx: UnitContext, lost: int, recorded: int, buffer: str | None) -> None:
    """Fail when perf lost more than MAX_LOST_SHARE of the events; say so in the job's output otherwise.

    A lost entry or exit makes the calls around it wrong (merged with the
    next call, or ending late), so a profile with losses must never pass
    for a complete one.
    """
    share = lost / (lost + recorded)
    message = (f"perf lost {lost} of {lost + recorded} uprobe events ({share:.1%}) with a buffer of "
               f"{buffer or 'its default size'} per CPU")
    if share > MAX_LOST_SHARE:
        raise CollectionError(ctx.label, f"{message}: the call tree would be wrong; probe fewer or less often "
                              "called functions (-r), or use the instrument engine")
    ctx.output("stderr", f"perun: {message}; calls around the losses may be wrong (the profile's header "
               "records lost_events)")


# -- the profile --------------------------------------------------------------------------------

#: Frames kept in a resource's trace (the innermost ones), so deep recursions stay bounded.
MAX_TRACE = 128


def _stack_ids(function: Any, depth: Any, parent: Any) -> tuple[Any, list[int], list[int]]:
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
    stack, stack_function, stack_parent = _stack_ids(arrays["function"], arrays["depth"], arrays["parent"])
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
