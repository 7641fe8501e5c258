"""The pymemory collector: live Python allocations by call trace, over time (tracemalloc).

The program runs under :mod:`tracemalloc` (started by the bootstrap of
:mod:`perun_core.collect.pyprogram` before the program's first line), and a
thread of the program takes snapshots of its live allocations:

* every ``interval`` seconds while snapshots are cheap.  A snapshot walks
  every live block, so with many live objects it takes long (about a
  second per million blocks) and holds the program up: the wait after a
  snapshot is at least ten times as long as the snapshot took, so that
  snapshotting costs at most about a tenth of the run;
* when traced memory reaches a new peak (20 % and 256 KiB above the most
  any snapshot saw, and no longer growing fast), within the same budget,
  so that the program's largest moment is snapshot even if it is brief
  compared with the wait;
* once more when the program's main code ends.

Each snapshot becomes one profile snapshot whose resources are the memory
live at that moment, one per allocation trace, in the memory collector's form (spec 001 §2.1)::

    {"type": "memory", "subtype": "malloc", "amount": 8000056, "allocations": 1,
     "trace": [{"source": "app.py", "function": "build", "line": 12},
               {"source": "app.py", "function": "main", "line": 30}],
     "uid": {"source": "app.py", "function": "build", "line": 12}}

``amount`` is in bytes (header units ``{"memory": "B"}``), ``allocations``
the number of blocks, ``trace`` innermost call first (at most ``frames``
deep) and ``uid`` its innermost frame.  Sources inside the job's directory
are relative to it.  tracemalloc records no function names, so they are
read from the sources (the innermost ``def`` or ``class`` around the line,
``<module>`` outside them, ``?`` when the source cannot be read).  Snapshot
metadata: ``time`` (seconds since the program started), ``traced`` and
``peak`` (bytes, as tracemalloc counts them, without the blocks the
snapshots themselves allocate, on Python 3.9+); only the ``limit`` largest
traces are kept per snapshot, and ``omitted_traces``/``omitted_bytes`` say
what was left out.  The header's ``peak`` is the largest traced peak.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from ..profile.model import Profile, Snapshot
from ..profile.resources import ResourceTable
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

__all__ = ["FunctionNames", "PyMemoryCollector"]


class FunctionNames:
    """The function (qualified name) around a line of a Python source, read with :mod:`ast`."""

    def __init__(self) -> None:
        self._scopes: dict[str, list[tuple[int, int, str]] | None] = {}
        self._cache: dict[tuple[str, int], str] = {}

    def _read(self, filename: str) -> list[tuple[int, int, str]] | None:
        try:
            tree = ast.parse(Path(filename).read_bytes(), filename=filename)
        except (OSError, SyntaxError, ValueError):
            return None
        scopes: list[tuple[int, int, str]] = []

        def visit(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qualname = prefix + child.name
                    scopes.append((child.lineno, child.end_lineno or child.lineno, qualname))
                    inner = qualname + ("." if isinstance(child, ast.ClassDef) else ".<locals>.")
                    visit(child, inner)
                else:
                    visit(child, prefix)

        visit(tree, "")
        return scopes

    def __call__(self, filename: str, line: int) -> str:
        key = (filename, line)
        name = self._cache.get(key)
        if name is None:
            if filename not in self._scopes:
                self._scopes[filename] = None if filename.startswith("<") else self._read(filename)
            scopes = self._scopes[filename]
            if scopes is None:
                name = "?"
            else:
                inside = [scope for scope in scopes if scope[0] <= line <= scope[1]]
                name = max(inside)[2] if inside else "<module>"
            self._cache[key] = name
        return name


class PyMemoryCollector:
    name = "pymemory"
    kind = "collector"
    summary = "Live Python allocations by call trace, snapshot at an interval (tracemalloc)."
    description = (
        "Runs a Python program (SCRIPT [ARGS] or -m MODULE [ARGS], optionally after the interpreter) under "
        "tracemalloc and snapshots its live allocations every INTERVAL seconds (less often when snapshots take "
        "long: they get about a tenth of the run), at new peaks of traced memory and when it ends. Each snapshot "
        "lists the memory allocated by every call trace (source, function, line; innermost first) as memory "
        "resources in bytes, for the flow, bars and flame graph views. "
        + MODULE_HINT.format(name="pymemory")
    )
    params = (
        Param("interval", "float", 0.1, "Seconds between snapshots (at least 10x what the last one took).", flags=("-i", "--interval"),
              minimum=0.001, metavar="SECONDS", unit="s"),
        Param("frames", "int", 16, "Frames kept per allocation trace.", flags=("--frames",), minimum=1,
              maximum=256, metavar="N"),
        Param("limit", "int", 1000, "Largest allocation traces kept per snapshot.", flags=("--limit",),
              minimum=1, maximum=1_000_000, metavar="N"),
        *common_params(),
    )

    def requirements(self) -> list[Any]:
        return python_requirements()

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        kwargs["pymemory_target"] = resolve_target(kwargs["argv"], kwargs.get("python"), Path(ctx.cwd), ctx.label)
        return PhaseResult.ok(kwargs)

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        config = {"mode": "memory", "interval": kwargs["interval"], "frames": kwargs["frames"],
                  "limit": kwargs["limit"]}
        ctx.repetition(1, 1)
        with run_python(ctx, kwargs.pop("pymemory_target"), config, timeout=kwargs.get("timeout"),
                        keep_failed=bool(kwargs.get("keep_failed"))) as run:
            kwargs["pymemory_result"] = (run.meta, failure_header(run))
        return PhaseResult.ok(kwargs)

    def after(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        meta, failed = kwargs.pop("pymemory_result")
        cwd = Path(ctx.cwd)
        files = list(meta.get("files") or [])
        shown = [short_source(name, cwd) for name in files]
        names = FunctionNames()
        snapshots = []
        peak = 0
        for taken in meta.get("snapshots") or []:
            rows = []
            for size, count, frames in taken.get("groups") or []:
                trace = [{"source": shown[f], "function": names(files[f], line), "line": line} for f, line in frames]
                rows.append({"amount": size, "allocations": count, "type": "memory", "subtype": "malloc",
                             "trace": trace, "uid": dict(trace[0])})
            info: dict[str, Any] = {"time": f"{taken.get('time', 0.0):.6f}", "traced": taken.get("current"),
                                    "peak": taken.get("peak")}
            omitted, omitted_bytes = taken.get("omitted") or (0, 0)
            if omitted:
                info.update(omitted_traces=omitted, omitted_bytes=omitted_bytes)
            peak = max(peak, int(taken.get("peak") or 0))
            snapshots.append(Snapshot(ResourceTable(rows), [], info))
        header = {"type": "memory", "units": {"memory": "B"}, "cmd": kwargs["cmd"], "params": kwargs["args"],
                  "workload": kwargs["workload"], "python": meta.get("python"), "peak": peak, **failed}
        kwargs["profile"] = Profile(header=header, snapshots=snapshots)
        return PhaseResult.ok(kwargs)
