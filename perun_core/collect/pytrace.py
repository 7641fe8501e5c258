"""The pytrace collector: call durations of selected Python functions, or a cProfile run.

Mode ``functions`` (when ``--function`` patterns are given) wraps the
selected functions when the program starts (see
:mod:`perun_core.collect._bootstrap.pyboot`; the program's files are not
edited) and records every call.  A pattern is ``MODULE:QUALNAME`` with shell
globs in both parts (``search:linear_*``, ``mypkg.*:Tree.insert``), optionally
followed by ``=SIZE``, an expression over the call's ``args`` tuple and
``kwargs`` dict (``len(args[0])``) giving the size of the structure the call
works on; ``--size`` sets it for patterns without one.  The main script is
the module ``__main__`` and also goes by its file name without ``.py``; a
pattern without ``MODULE:`` means ``__main__``.  Every call becomes one
resource of the original complexity collector's form (spec 001 §2.1), ready
for regression analysis::

    {"type": "mixed", "subtype": "time delta", "uid": "search:linear_search",
     "amount": 12.5, "structure-unit-size": 1000, "caller": "search:main"}

``amount`` is the call's inclusive time in microseconds (header units
``{"mixed(time delta)": "us"}``): wall time, or with ``clock: cpu`` the CPU
time of the calling thread, which a busy machine does not inflate (a
preempted call's wall time can grow by milliseconds) but which costs about
a microsecond more per call to read; ``caller`` the function it was called from
(``MODULE:QUALNAME``, ``<module>`` for top-level code).  Calls whose size
expression failed lack ``structure-unit-size``; the header's
``size_errors`` counts them per uid with the first error.  Durations include
the wrapper's own cost (well under a microsecond per call) and, once every
262144 calls, the time to write the records out.  For generator and async
functions a call is the creation of the generator or coroutine.

Mode ``cprofile`` (the default without patterns) runs the whole program
under :mod:`cProfile` and gives, per function (uid ``file:line(name)``,
built-ins by their cProfile name), a resource of subtype ``exclusive``
(time in the function itself) and one of subtype ``inclusive`` (with its
callees), both with ``calls`` and ``primitive_calls`` (calls that were not
recursive), and one resource of subtype ``call`` per caller edge: the
callee's ``uid``, its ``caller``, ``amount`` = inclusive and ``exclusive``
time of the calls along that edge and their ``calls``.  Times in seconds,
profile type ``time``.
"""

from __future__ import annotations

import math
import os
import struct
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

from ..advice import CLOCK_CPU
from ..errors import CollectionError, UsageError
from ..events import MeasurementAdvice
from ..profile.machine import load_average
from ..profile.model import Profile, Snapshot
from ..profile.resources import MISSING, ResourceTable
from ..runner.process import preemption_record
from ..units import PhaseResult, UnitContext
from ..params import Param
from .pyprogram import (
    MODULE_HINT,
    common_params,
    failure_header,
    python_requirements,
    resolve_target,
    run_python,
    short_source,
)

__all__ = ["PyTraceCollector", "busy_machine_advice", "parse_function_pattern"]

#: A run preempted at least this many times ...
PREEMPTED_SWITCHES = 10
#: ... that waited at least this share of its wall time (runnable but not running, or blocked) was slowed by
#: other work: its calls' wall times include those waits.
WAITED_SHARE = 0.2

def parse_function_pattern(text: str, default_size: str | None = None) -> tuple[str, str, str | None]:
    """``MODULE:QUALNAME[=SIZE]`` as (module glob, qualname glob, size expression or None).

    Raises ValueError saying what is wrong (an empty part, a size
    expression that does not compile).
    """
    spec, equals, size = text.partition("=")
    spec = spec.strip()
    module, _, qualname = spec.partition(":") if ":" in spec else ("__main__", "", spec)
    module, qualname = module.strip(), qualname.strip()
    if not module or not qualname:
        raise ValueError(f"MODULE:QUALNAME[=SIZE] patterns (e.g. 'search:linear_*=len(args[0])'); "
                         f"'{text}' lacks a {'module' if not module else 'function'} name")
    expression = size.strip() if equals else (default_size or None)
    if equals and not expression:
        raise ValueError(f"a size expression after '=' in '{text}'")
    if expression:
        check_size_expression(expression)
    return module, qualname, expression


def check_size_expression(expression: str) -> str:
    """``expression`` if it compiles as a Python expression over ``args`` and ``kwargs``; ValueError otherwise."""
    try:
        compile(f"lambda args, kwargs: ({expression})", "<size expression>", "eval")
    except SyntaxError as exc:
        raise ValueError(f"a Python expression over args and kwargs (e.g. 'len(args[0])'); "
                         f"'{expression}' does not parse: {exc.msg}") from None
    return expression


def _check_patterns(values: list[str]) -> list[str]:
    for value in values:
        parse_function_pattern(value)
    return values


def _check_size(value: str) -> str:
    return check_size_expression(value.strip())


class PyTraceCollector:
    name = "pytrace"
    kind = "collector"
    summary = "Call durations of selected Python functions (with sizes), or a whole-program cProfile run."
    description = (
        "Runs a Python program (SCRIPT [ARGS] or -m MODULE [ARGS], optionally after the interpreter). With "
        "--function MODULE:QUALNAME[=SIZE] patterns (globs allowed; the main script is __main__ or its file "
        "name) the selected functions are wrapped at start-up and every call is recorded as a mixed resource: "
        "its duration in microseconds, its caller and, with a size expression over args and kwargs such as "
        "len(args[0]), its structure-unit-size, ready for regression analysis. Without patterns the whole "
        "program runs under cProfile: call counts, exclusive and inclusive times per function, and caller edges. "
        + MODULE_HINT.format(name="pytrace")
    )
    params = (
        Param("functions", "list", (), "Function to record: MODULE:QUALNAME[=SIZE], globs allowed (repeatable).",
              flags=("-F", "--function"), item="str", metavar="PATTERN", check=_check_patterns),
        Param("size", "str", None, "Size expression for patterns without '=SIZE', e.g. 'len(args[0])'.",
              flags=("-s", "--size"), metavar="EXPR", check=_check_size),
        Param("clock", "choice", "wall", "wall: elapsed time of each call; cpu: the CPU time of its thread "
              "(not inflated when the machine is busy, but about a microsecond dearer per call).",
              flags=("--clock",), choices=("wall", "cpu")),
        Param("mode", "choice", None, "functions (needs --function) or cprofile; default: functions when "
              "patterns are given.", flags=("--mode",), choices=("functions", "cprofile")),
        *common_params(),
    )

    def requirements(self) -> list[Any]:
        return python_requirements()

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        patterns = list(kwargs.get("functions") or ())
        mode = kwargs.get("mode") or ("functions" if patterns else "cprofile")
        if mode == "functions" and not patterns:
            raise UsageError("pytrace mode 'functions' needs patterns: --function MODULE:QUALNAME[=SIZE]")
        if mode == "cprofile" and (patterns or kwargs.get("size")):
            raise UsageError("pytrace mode 'cprofile' profiles every function; --function and --size "
                             "need mode 'functions'")
        kwargs["pytrace_mode"] = mode
        kwargs["pytrace_load_before"] = load_average()
        kwargs["pytrace_target"] = resolve_target(kwargs["argv"], kwargs.get("python"), Path(ctx.cwd), ctx.label)
        return PhaseResult.ok(kwargs)

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        mode = kwargs["pytrace_mode"]
        config: dict[str, Any] = {"mode": mode}
        if mode == "functions":
            config["functions"] = [list(parse_function_pattern(p, kwargs.get("size"))) for p in kwargs["functions"]]
            config["clock"] = kwargs.get("clock") or "wall"
        ctx.repetition(1, 1)
        with run_python(ctx, kwargs["pytrace_target"], config, timeout=kwargs.get("timeout"),
                        keep_failed=bool(kwargs.get("keep_failed"))) as run:
            if mode == "functions":
                kwargs["pytrace_result"] = (run.meta, read_calls(run.out / "calls.bin"), failure_header(run))
                if config["clock"] == "wall":
                    kwargs["pytrace_preemption"] = preemption_record(run.wall_seconds, run.cpu_seconds,
                                                                     run.involuntary_switches)
                    kwargs["pytrace_advice"] = busy_machine_advice(
                        run.wall_seconds, run.cpu_seconds, run.involuntary_switches,
                        [kwargs.get("pytrace_load_before"), load_average()], os.cpu_count())
            else:
                kwargs["pytrace_result"] = (run.meta, None, failure_header(run))
        return PhaseResult.ok(kwargs)

    def after(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        meta, calls, failed = kwargs.pop("pytrace_result")
        target = kwargs.pop("pytrace_target")
        mode = kwargs.pop("pytrace_mode")
        kwargs.pop("pytrace_load_before", None)
        advice = kwargs.pop("pytrace_advice", None)
        preemption = kwargs.pop("pytrace_preemption", None)
        if mode == "functions":
            header: dict[str, Any] = {"type": "mixed", "units": {"mixed(time delta)": "us"}}
        else:
            header = {"type": "time", "units": {"time": "s"}}
        header.update(cmd=kwargs["cmd"], params=kwargs["args"], workload=kwargs["workload"], python=meta.get("python"),
                      **failed)
        elapsed = (meta.get("elapsed_ns") or 0) / 1e9
        if mode == "functions":
            table = self._call_table(ctx, meta, calls, target.main_name)
            header["calls"] = len(table)
            errors = self._size_errors(meta)
            if errors:
                header["size_errors"] = errors
            if meta.get("unmatched"):
                header["unmatched_functions"] = list(meta["unmatched"])
            if preemption:
                header["preemption"] = preemption
            if advice:
                header["advice"] = advice
                ctx.emit(MeasurementAdvice(ctx.job, advice))
        else:
            table = ResourceTable(cprofile_rows(meta.get("cprofile") or [], Path(ctx.cwd)))
        kwargs["profile"] = Profile(header=header, global_region=Snapshot(table, [], {"timestamp": elapsed}))
        return PhaseResult.ok(kwargs)

    def _call_table(self, ctx: UnitContext, meta: dict, calls: tuple, main_name: str) -> ResourceTable:
        functions = list(meta.get("functions") or [])
        if not functions:
            unmatched = ", ".join(meta.get("unmatched") or []) or "(none)"
            raise CollectionError(ctx.label, f"no function matched the patterns {unmatched}; name them "
                                  f"MODULE:QUALNAME (the main script is __main__ or {main_name})")
        fids, callers, durations, sizes = calls
        count = len(fids)
        caller_names = list(meta.get("callers") or [])
        columns: dict[str, list] = {
            "amount": [ns / 1000 for ns in durations],
            "type": ["mixed"] * count,
            "subtype": ["time delta"] * count,
            "uid": list(map(functions.__getitem__, fids)),
        }
        sparse = False
        if any(not math.isnan(size) for size in sizes):
            column = [MISSING if math.isnan(s) else (int(s) if s.is_integer() else s) for s in sizes]
            sparse = MISSING in column
            columns["structure-unit-size"] = column
        columns["caller"] = list(map(caller_names.__getitem__, callers))
        per_function = Counter(fids)
        for uid, (failed, message) in self._size_errors_raw(meta).items():
            if failed >= per_function[functions.index(uid)]:
                raise CollectionError(ctx.label, f"the size expression of {uid} failed on every call: {message}")
        return ResourceTable.from_columns(count, list(columns), list(columns.values()), sparse=sparse)

    @staticmethod
    def _size_errors_raw(meta: dict) -> dict[str, tuple[int, str]]:
        functions = list(meta.get("functions") or [])
        out = {}
        for fid, (count, message) in (meta.get("size_errors") or {}).items():
            out[functions[int(fid)]] = (int(count), str(message))
        return out

    def _size_errors(self, meta: dict) -> dict[str, dict[str, Any]]:
        return {uid: {"calls": n, "error": message} for uid, (n, message) in self._size_errors_raw(meta).items()}


def busy_machine_advice(wall_seconds: float, cpu_seconds: float, involuntary_switches: int | None,
                        loads: list[float | None], cores: int | None) -> str | None:
    """One line advising ``--clock cpu`` when a wall-clock run was slowed by other work, else None.

    The run counts as preempted when the kernel switched it out at least
    :data:`PREEMPTED_SWITCHES` times against its will and it spent at least
    :data:`WAITED_SHARE` of its wall time off the CPU; the machine as busy
    when the load average before or after the run exceeded its cores.
    """
    why = []
    waited = wall_seconds - cpu_seconds
    if (involuntary_switches is not None and involuntary_switches >= PREEMPTED_SWITCHES and wall_seconds > 0
            and waited >= WAITED_SHARE * wall_seconds):
        why.append(f"the program was preempted {involuntary_switches} times and spent "
                   f"{waited / wall_seconds * 100:.0f} % of its run off the CPU")
    known = [load for load in loads if load is not None]
    if known and cores and max(known) > cores:
        why.append(f"the machine was busy (load {max(known):.1f} on {cores} cores)")
    if not why:
        return None
    return ("advice: " + " and ".join(why) + ": the calls' wall times include waits for the CPU; "
            f"collect again with {CLOCK_CPU.cli}")


def read_calls(path: Path) -> tuple[list[int], list[int], list[float], list[float]]:
    """The call records of ``calls.bin`` (see the bootstrap): function ids, caller ids, ns, sizes (NaN: none)."""
    records = array("d")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    position = 0
    while position + 4 <= len(data):
        (count,) = struct.unpack_from("<I", data, position)
        end = position + 4 + count * 32
        if end > len(data):
            raise CollectionError("pytrace", f"{path}: truncated call records")
        records.frombytes(data[position + 4:end])
        position = end
    return (list(map(int, records[0::4])), list(map(int, records[1::4])), records[2::4].tolist(),
            records[3::4].tolist())


def cprofile_rows(entries: list, cwd: Path) -> list[dict]:
    """Resources of a cProfile run (see the module docstring) from the bootstrap's entries."""
    uids = []
    for source, line, name, *_ in entries:
        uids.append(name if source == "~" else f"{short_source(source, cwd)}:{line}({name})")
    rows: list[dict] = []
    for uid, (source, line, name, primitive, calls, exclusive, inclusive, edges) in zip(uids, entries):
        where = {} if source == "~" else {"source": short_source(source, cwd), "line": line}
        for subtype, amount in (("exclusive", exclusive), ("inclusive", inclusive)):
            rows.append({"amount": amount, "type": "time", "subtype": subtype, "uid": uid, "calls": calls,
                         "primitive_calls": primitive, "function": name, **where})
        for caller, edge_calls, edge_primitive, edge_exclusive, edge_inclusive in edges:
            rows.append({"amount": edge_inclusive, "type": "time", "subtype": "call", "uid": uid,
                         "caller": uids[caller], "exclusive": edge_exclusive, "calls": edge_calls,
                         "primitive_calls": edge_primitive})
    return rows
