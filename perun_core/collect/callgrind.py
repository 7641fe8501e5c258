"""The callgrind collector: instructions executed per function, with call edges (valgrind --tool=callgrind).

Valgrind runs the program on a synthetic CPU and counts the instructions
each function executes (the ``Ir`` event).  The counts do not depend on
the machine's load, frequency scaling or caches, so two runs of the same
build give (nearly) the same numbers: this is the collector for
performance checks in CI, where timings are noise.  The price is speed:
programs run 20 to 100 times slower.

The ``callgrind.out`` file of every process is parsed (name compression
``(id) name``, relative positions, ``calls=`` lines with the inclusive cost
of the call on the line after) into resources::

    {"type": "instructions", "subtype": "function", "uid": "middle", "amount": 27038,
     "exclusive": 7, "calls": 1, "object": "/src/app", "source": "/src/app.c", "line": 12}
    {"type": "instructions", "subtype": "call", "uid": "leaf", "caller": "middle",
     "amount": 27024, "every_level": 27024, "calls": 2}

* ``function``: ``amount`` is the inclusive cost (instructions of the
  function and of everything it called), ``exclusive`` its own, ``calls``
  how often it was called, ``source`` and ``line`` where its definition
  starts (the first line of its own file with a cost; programs built
  with ``-g``);
* ``call``: one per caller -> callee edge, ``amount`` the inclusive cost of
  the calls the caller made at its outermost recursion level (once per
  stack: never more than the program's total), ``every_level`` that of
  the calls made at every level (which part of the callee's cost each
  caller carries) and ``calls`` their number.

Recursion levels that callgrind names apart (``fact'2``, its default
``--separate-recs=2``) are merged into one function.  The inclusive cost of
a function that is called is the cost of its calls at the first level
(the name without ``'N``) from other functions: the calls not made from
inside itself, so recursion, direct or through other functions, counts
once (callgrind_annotate adds the deeper calls again and goes past 100%);
a function nobody calls (the entry point) costs its own instructions and
its calls of others.  With ``--separate-recs=1`` callgrind cannot tell the
levels apart and a cycle through several functions counts once per
function on it.  ``process`` numbers the
processes (fork, or exec with ``--trace-children``) when there is more
than one.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CollectionError
from ..profile.model import Profile, Snapshot
from ..profile.resources import ResourceTable
from ..units import PhaseResult, UnitContext
from ..params import Param
from ..units.requirements import Requirement, tool_requirement
from .native_run import COMMON_PARAMS, check_command, check_outcome, run_program

__all__ = ["CallgrindCollector", "CallgrindData", "parse_callgrind", "callgrind_resources"]

HOW_TO_GET_VALGRIND = "install valgrind (Debian/Ubuntu: apt-get install valgrind)"
_RECURSION = re.compile(r"'\d+$")
_COMPRESSED = re.compile(r"^\((\d+)\)(?:\s(.*))?$")


@dataclass
class CallgrindData:
    """One callgrind.out file: costs of the first event per function and per call edge."""

    events: list[str] = field(default_factory=list)
    totals: int | None = None
    pid: int | None = None
    #: (object, function) -> own cost
    own: dict[tuple[str, str], int] = field(default_factory=dict)
    #: (object, function) -> source file
    sources: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (object, function) -> the first line of its source file with a cost (where its definition starts)
    lines: dict[tuple[str, str], int] = field(default_factory=dict)
    #: (caller, callee) -> [calls, inclusive cost of the calls made by the caller's outermost level, inclusive
    #: cost of the calls made at every level]
    edges: dict[tuple[tuple[str, str], tuple[str, str]], list[int]] = field(default_factory=dict)
    #: (object, function) -> inclusive cost of its outermost calls: calls of its first recursion level
    #: (a name without ``'N``) from another function, so none of them runs inside another one of them
    entries: dict[tuple[str, str], int] = field(default_factory=dict)
    #: the number of the first line with a negative cost (none is ever written; the file was altered)
    negative_line: int | None = None


class _Names:
    """Callgrind's name compression: ``(id) name`` defines, ``(id)`` refers."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        text = text.strip()
        match = _COMPRESSED.match(text)
        if match is None:
            return text
        ident, name = match.groups()
        if name is not None:
            self.known[ident] = name
            return name
        return self.known.get(ident, f"({ident})")


def _function_name(name: str) -> str:
    return _RECURSION.sub("", name)


def _first_cost(fields: list[str], positions: int) -> int:
    if len(fields) <= positions:
        return 0
    try:
        return int(fields[positions])
    except ValueError:
        try:
            return int(float(fields[positions]))
        except ValueError:
            return 0


def parse_callgrind(text: str) -> CallgrindData:
    """Parse the text of a callgrind.out file (format version 1).

    It is long because it is one loop over the lines with the parser's state in local variables, which is
    what keeps parsing files of millions of lines fast.
    """
    data = CallgrindData()
    files, objects, functions = _Names(), _Names(), _Names()
    positions = 1
    line_field: int | None = 0  # which position is the source line (None: no line positions)
    last = [0]
    current_object = ""
    current_file = ""
    cost_file = ""  # the file of the cost lines: the function's, or an inlined one's (fi=, fe=)
    current: tuple[str, str] | None = None
    current_outermost = True  # the current function is named without a recursion level: not inside itself
    callee_object: str | None = None
    callee: tuple[str, str] | None = None
    outermost = False  # the callee is named without a recursion level ('N): not called from inside itself
    pending_calls: int | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head = line[0]
        if head.isdigit() or head in "+-*" or line.startswith("0x"):
            fields = line.split()
            cost = _first_cost(fields, positions)
            if data.negative_line is None and any(f.startswith("-") for f in fields[positions:]):
                data.negative_line = number
            _positions(fields, last)
            if (pending_calls is None and current is not None and line_field is not None and last[line_field] > 0
                    and cost_file and cost_file == data.sources.get(current)):
                known = data.lines.get(current)
                data.lines[current] = last[line_field] if known is None else min(known, last[line_field])
            if pending_calls is not None and current is not None and callee is not None:
                _add_call(data, current, callee, pending_calls, cost, (current_outermost, outermost))
                pending_calls = None
                callee = None
            elif current is not None:
                data.own[current] = data.own.get(current, 0) + cost
            continue
        key, sep, value = line.partition("=")
        if not sep:
            key, sep, value = line.partition(":")
            key = key.strip()
            if key == "events":
                data.events = value.split()
            elif key == "positions":
                names = value.split()
                positions = max(len(names), 1)
                line_field = names.index("line") if "line" in names else None
                last = [0] * positions
            elif key in ("totals", "summary") and value.split():
                data.totals = _first_cost(value.split(), 0)
            elif key == "pid" and value.strip().isdigit():
                data.pid = int(value)
            continue
        if key == "ob":
            current_object = objects(value)
        elif key == "fl":
            current_file = cost_file = files(value)
        elif key in ("fi", "fe"):
            cost_file = files(value)  # inlined code of another file, or back to the function's
        elif key == "fn":
            name = functions(value)
            current = (current_object, _function_name(name))
            current_outermost = _RECURSION.search(name) is None
            cost_file = current_file
            if current_file and current_file != "???":
                data.sources.setdefault(current, current_file)
            callee_object = None
        elif key == "cob":
            callee_object = objects(value)
        elif key in ("cfi", "cfl"):
            files(value)
        elif key == "cfn":
            obj = callee_object if callee_object is not None else current_object
            name = functions(value)
            callee = (obj, _function_name(name))
            outermost = _RECURSION.search(name) is None
            callee_object = None
        elif key == "calls":
            parts = value.split()
            pending_calls = int(parts[0]) if parts and parts[0].isdigit() else 0
    return data


def _add_call(data: CallgrindData, caller: tuple[str, str], callee: tuple[str, str], calls: int, cost: int,
              outermost: tuple[bool, bool]) -> None:
    """Count the calls of one ``calls=`` line and their cost: the edge's when the caller is at its outermost
    level (no other call of the same edge is below it on the stack), the callee's when the callee is."""
    edge = data.edges.setdefault((caller, callee), [0, 0, 0])
    edge[0] += calls
    edge[1] += cost if outermost[0] else 0
    edge[2] += cost
    if outermost[1] and callee != caller:
        data.entries[callee] = data.entries.get(callee, 0) + cost


def _positions(fields: list[str], last: list[int]) -> None:
    """Update ``last`` from the positions of a cost line: absolute, ``+N`` / ``-N`` relative, ``*`` the same."""
    for index in range(min(len(last), len(fields))):
        text = fields[index]
        if text == "*":
            continue
        sign = {"+": 1, "-": -1}.get(text[0], 0)
        digits = text[1:] if sign else text
        try:
            value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
        except ValueError:
            continue
        last[index] = last[index] + sign * value if sign else value


def callgrind_resources(data: CallgrindData, process: int | None = None) -> list[dict]:
    """Function and call-edge resources of one parsed file (see the module docstring)."""
    keys = set(data.own) | {caller for caller, _ in data.edges} | {callee for _, callee in data.edges}
    inclusive = {key: data.own.get(key, 0) for key in keys}
    calls: dict[tuple[str, str], int] = {}
    for (caller, callee), (count, cost, _) in data.edges.items():
        if caller != callee:
            inclusive[caller] += cost
        calls[callee] = calls.get(callee, 0) + count
    inclusive.update(data.entries)  # called functions: what their outermost calls cost
    extra = {"process": process} if process is not None else {}
    rows = []
    for key in sorted(keys, key=lambda k: (-inclusive[k], k[1], k[0])):
        row = {"type": "instructions", "subtype": "function", "uid": key[1], "amount": inclusive[key],
               "exclusive": data.own.get(key, 0), "calls": calls.get(key, 0), "object": key[0]}
        if key in data.sources:
            row["source"] = data.sources[key]
            if key in data.lines:
                row["line"] = data.lines[key]
        rows.append({**row, **extra})
    for (caller, callee), (count, cost, every) in sorted(data.edges.items(), key=lambda item: (-item[1][1], item[0])):
        rows.append({"type": "instructions", "subtype": "call", "uid": callee[1], "caller": caller[1],
                     "amount": cost, "every_level": every, "calls": count, **extra})
    return rows


class CallgrindCollector:
    name = "callgrind"
    kind = "collector"
    summary = "Instructions per function and call edge under valgrind's callgrind (noise-free; for CI checks)."
    description = (
        "Runs the command under 'valgrind --tool=callgrind' and records, per function, the instructions it "
        "executed itself (exclusive) and with its callees (amount, inclusive), and per call edge the calls and "
        "their cost. Instruction counts do not depend on machine noise, which makes this the collector for "
        "performance checks in CI; the program runs 20-100x slower."
    )
    params = (
        Param("trace_children", "bool", False, "Also profile programs the command executes (shell scripts).",
              flags=("--trace-children",)),
        *COMMON_PARAMS,
    )

    def requirements(self) -> list[Requirement]:
        return [tool_requirement("valgrind", "valgrind", HOW_TO_GET_VALGRIND)]

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        check_command(ctx, kwargs)
        if shutil.which("valgrind") is None:
            raise CollectionError(ctx.label, f"'valgrind' is required but was not found; {HOW_TO_GET_VALGRIND}")
        return PhaseResult.ok(kwargs)

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        with tempfile.TemporaryDirectory(prefix="perun-callgrind-", ignore_cleanup_errors=True) as work:
            # --vgdb=no: valgrind's gdb server makes FIFOs in $TMPDIR that a killed (timed-out) run leaves behind
            command = ["valgrind", "-q", "--tool=callgrind", "--vgdb=no", "--dump-line=yes",
                       f"--callgrind-out-file={work}/callgrind.out.%p",
                       f"--trace-children={'yes' if kwargs['trace_children'] else 'no'}", "--", *kwargs["argv"]]
            outcome = run_program(ctx, command, kwargs, tool="valgrind")
            outputs = sorted(Path(work).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:] or 0)
                             if p.suffix[1:].isdigit() else 0)
            if not outputs:
                raise CollectionError(ctx.label, "valgrind wrote no callgrind output", outcome.exit_status,
                                      outcome.stderr_tail)
            check_outcome(ctx, outcome, kwargs)
            parsed = [parse_callgrind(path.read_text(errors="replace")) for path in outputs]
        several = len(parsed) > 1
        rows = [row for number, data in enumerate(parsed, 1)
                for row in callgrind_resources(data, number if several else None)]
        events = parsed[0].events[:1] or ["Ir"]
        header = {"type": "mixed", "units": {"instructions": events[0]}, "cmd": kwargs["cmd"],
                  "params": kwargs["args"], "workload": kwargs["workload"],
                  "total_instructions": sum(d.totals or 0 for d in parsed)}
        if outcome.exit_status != 0:
            header["exit_status"] = outcome.exit_status
        kwargs["profile"] = Profile(header=header, global_region=Snapshot(ResourceTable(rows), [], {}))
        return PhaseResult.ok(kwargs)
