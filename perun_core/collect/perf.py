"""The perf collector: sampled call stacks (``perf record -g``) and hardware/software counters (``perf stat``).

``--mode record`` samples the program's call stacks ``-F`` times a second
(spec 003: perf record, perf script); ``stat`` counts events over the whole
run; ``both`` (the default) runs the program once for each.  Resources::

    {"type": "time", "subtype": "samples", "uid": "hot", "amount": 212, "period": 212000000,
     "trace": [{"function": "hot", "object": "/src/busy"}, {"function": "main", ...}]}
    {"type": "time", "subtype": "function", "uid": "hot", "object": "/src/busy",
     "amount": 212, "exclusive": 212}
    {"type": "counter", "subtype": "instructions", "uid": "./busy", "amount": 7005231102}

* ``samples``: one per distinct call stack, ``amount`` the number of
  samples taken in it, ``period`` the sum of their periods (nanoseconds for
  the ``cpu-clock`` event perf falls back to where hardware counters are
  missing, events otherwise), ``trace`` the stack innermost first: these
  drive flame graphs;
* ``function``: one per function, ``amount`` the samples whose stack
  contains it (inclusive) and ``exclusive`` those taken in the function
  itself; ``source`` and ``line`` of its definition where the object has
  debug information (``-g``) and binutils' nm and addr2line are installed
  (a function perf reports inlined, object ``inlined``, has no definition
  of its own in the object: the line of its body sampled most often);
* ``counter``: one per ``perf stat`` event that this machine can count
  (``unit`` when perf gives one, like ``msec`` for task-clock).  Events
  perf reports as not supported (hardware counters inside most virtual
  machines) are listed in the header's ``unsupported_events``.

When perf is missing, or ``/proc/sys/kernel/perf_event_paranoid`` forbids
this user to profile, the job fails with one line saying which and how to
allow it.  Stacks are walked with frame pointers by default
(``--call-graph fp``): build the program with ``-fno-omit-frame-pointer``
for complete stacks, or use ``--call-graph dwarf``.

A program killed by a signal fails the job in both modes (or, with
``--keep-failed``, gives a profile whose header records the signal),
although ``perf stat`` itself exits 0 then.  perf's build-id cache is kept
in the job's temporary directory (:func:`perf_command`), so profiling
leaves no copies of the program in ``~/.debug``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..errors import CollectionError, ExternalToolError, ToolNotPermitted
from ..profile.model import Profile, Snapshot
from ..profile.resources import ResourceTable
from ..units import PhaseResult, UnitContext
from ..params import Param
from ..units.requirements import Requirement, tool_requirement
from .native_run import COMMON_PARAMS, check_command, check_outcome, run_program
from .symbols import add_function_lines, addr2line, file_offset_to_vaddr

__all__ = ["DEFAULT_EVENTS", "HOW_TO_GET_PERF", "InlineAddresses", "PerfCollector", "add_inline_lines", "base_event",
           "parse_perf_script",
           "parse_perf_stat", "perf_command", "perf_permission", "signal_reported", "stack_resources"]

DEFAULT_EVENTS = ("cycles", "instructions", "cache-misses", "branch-misses", "page-faults", "context-switches")
HOW_TO_GET_PERF = "install perf (Debian: apt-get install linux-perf; Ubuntu: apt-get install linux-tools-generic)"
PARANOID = Path("/proc/sys/kernel/perf_event_paranoid")
HOW_TO_ALLOW = "allow it with 'sudo sysctl kernel.perf_event_paranoid=1' (or run as root)"
_DENIED = ("perf_event_paranoid", "permission denied", "no permission", "access to performance monitoring",
           "not permitted", "operation not permitted")
_SAMPLE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+):\s*(.*)$")
#: The privilege-level modifiers perf adds to an event's name when the user may not count everything.
_LEVEL_MODIFIERS = re.compile(r":[ukh]+$")


def perf_command(work: Path, subcommand: str, *args: str) -> list[str]:
    """The command line of ``perf SUBCOMMAND ARGS`` keeping perf's build-id cache in ``work``.

    perf record and perf probe copy every binary they touch into the
    build-id cache, ``~/.debug`` by default, which nobody cleans up; inside
    the job's temporary directory it goes away with the job.
    """
    return ["perf", "--buildid-dir", str(work / "buildid"), subcommand, *args]


def base_event(name: str) -> str:
    """``cycles`` for ``cycles:u``: an event without the privilege level perf chose for this user."""
    return _LEVEL_MODIFIERS.sub("", name)


@functools.cache
def _signal_descriptions() -> dict[str, int]:
    """Signal numbers by the descriptions psignal(3) prints: in English, and in the user's language."""
    import gettext

    catalog = gettext.translation("libc", "/usr/share/locale", fallback=True)
    found: dict[str, int] = {}
    for number in sorted(signal.valid_signals(), reverse=True):
        description = signal.strsignal(number)
        if description:
            found[catalog.gettext(description)] = found[description] = number
    return found


def signal_reported(stderr: str, program: str) -> int:
    """The signal that killed ``program`` under ``perf stat`` (0 when it was not killed).

    perf stat exits 0 when the program dies by a signal; it only reports
    the signal with psignal(3), ``PROGRAM: Segmentation fault`` in the
    user's language, after the program ended: the last line of ``stderr``.
    perf 6.1 loses both now and then for a program that ends before perf
    waits for it (its SIGCHLD handler forgets the child): it exits 0 and
    prints nothing, and perun cannot tell such a run from a clean one.
    """
    lines = [line for line in stderr.splitlines() if line.strip()]
    prefix = f"{program}: "
    if not lines or not lines[-1].startswith(prefix):
        return 0
    return _signal_descriptions().get(lines[-1][len(prefix):].strip(), 0)


def paranoid_level() -> int | None:
    """The kernel's perf_event_paranoid setting, None when unknown."""
    try:
        return int(PARANOID.read_text().strip())
    except (OSError, ValueError):
        return None


def _denied_reason() -> str:
    level = paranoid_level()
    if level is None:
        return "the kernel refused to open perf events"
    return f"{PARANOID} is {level}, which forbids it for this user"


def perf_permission(timeout: float = 20) -> tuple[bool, str, list[str]]:
    """Whether perf may count events here: ``(allowed, detail, unsupported default events)``.

    Runs ``perf stat`` of the default events on ``true``.
    """
    try:
        done = subprocess.run(["perf", "stat", "-x", ",", "-e", ",".join(DEFAULT_EVENTS), "true"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"perf stat failed: {exc}", []
    text = done.stderr.lower()
    if done.returncode != 0 and any(word in text for word in _DENIED):
        return False, _denied_reason(), []
    if done.returncode != 0:
        first = next((line for line in done.stderr.splitlines() if line.strip()), "no message")
        return False, f"perf stat failed: {first.strip()}", []
    counters, unsupported = parse_perf_stat(done.stderr)
    level = paranoid_level()
    who = "root" if os.geteuid() == 0 else "this user"
    detail = f"perf_event_paranoid = {level}; {who} may profile" if level is not None else f"{who} may profile"
    return True, detail, unsupported


def parse_perf_stat(text: str) -> tuple[list[dict], list[str]]:
    """``perf stat -x,`` output as counter resources (without uid) and the unsupported event names."""
    counters: list[dict] = []
    unsupported: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        value, unit, event = fields[0].strip(), fields[1].strip(), fields[2].strip()
        if not event:
            continue
        if value.startswith("<"):
            unsupported.append(event)
            continue
        try:
            amount: int | float = int(value)
        except ValueError:
            try:
                amount = float(value)
            except ValueError:
                continue
        row: dict[str, Any] = {"type": "counter", "subtype": event, "amount": amount}
        if unit:
            row["unit"] = unit
        counters.append(row)
    return counters, unsupported


def parse_perf_script(text: str, inlined: InlineAddresses | None = None
                      ) -> dict[tuple[tuple[str, str], ...], list[int]]:
    """Samples of ``perf script -F tid,period,event,ip,sym,dso`` output.

    Returns ``{stack: [samples, period sum]}`` where a stack is a tuple of
    ``(function, object)`` frames, innermost first.  With ``inlined``, the
    addresses of the frames perf reports inlined are added to it (see
    :class:`InlineAddresses`).
    """
    stacks: dict[tuple[tuple[str, str], ...], list[int]] = {}
    frames: list[tuple[str, str, str]] = []
    period = 0
    started = False

    def flush() -> None:
        nonlocal frames, started
        if started and frames:
            key = tuple((function, obj) for function, obj, _ in frames)
            entry = stacks.setdefault(key, [0, 0])
            entry[0] += 1
            entry[1] += period
            if inlined is not None:
                inlined.add(frames)
        frames = []
        started = False

    for line in text.splitlines():
        if not line.strip():
            flush()
            continue
        if line.startswith("\t"):
            if started:
                frames.append(_frame(line))
            continue
        match = _SAMPLE.match(line)
        if match is None:
            continue
        flush()
        started = True
        period = int(match.group(2))
        rest = match.group(4).strip()
        if rest:
            frames.append(_frame(rest))
    flush()
    return stacks


def _frame(text: str) -> tuple[str, str, str]:
    """``(function, object, address)`` of one frame line of perf script."""
    body = text.strip()
    address, _, body = body.partition(" ")
    symbol, sep, obj = body.rpartition(" (")
    if not sep:
        return body.strip() or "[unknown]", "", address
    return symbol.strip() or "[unknown]", obj.rstrip(")"), address


class InlineAddresses:
    """Where the frames perf reports inlined were sampled, to give each inlined function a source line.

    perf names a function inlined into another (``checksum (inlined)``) but
    no object or line for it: its code lies in the object of the next frame
    out that has the same address.  perf prints addresses as offsets into
    the object's file; a caller's address is where its call returns to, so
    the call itself is the byte before.  ``addr2line -i`` turns such an
    address into the chain of functions inlined there, innermost first,
    with the line each was at; the inlined frames of perf's stack are that
    chain's first entries.
    """

    def __init__(self) -> None:
        #: (object, file offset, position in the chain, function) -> samples
        self.seen: dict[tuple[str, int, int, str], int] = {}

    def add(self, frames: list[tuple[str, str, str]]) -> None:
        """One sample's stack of ``(function, object, address)``, innermost first."""
        for index, (_, obj, address) in enumerate(frames):
            if obj == "inlined" or not obj.startswith("/"):
                continue
            start = index
            while start > 0 and frames[start - 1][1] == "inlined" and frames[start - 1][2] == address:
                start -= 1
            try:
                offset = int(address, 16) - (1 if start else 0)
            except ValueError:
                continue
            for position in range(start, index):
                key = (obj, offset, position - start, frames[position][0])
                self.seen[key] = self.seen.get(key, 0) + 1

    def lines(self) -> dict[str, tuple[str, int]]:
        """function -> (source file, line) of the inlined functions: the line of its body sampled most often.

        A function inlined everywhere has no code, and so no first line, of
        its own.  Objects without debug information and a missing addr2line
        give nothing.
        """
        by_object: dict[str, set[int]] = {}
        for obj, offset, _, _ in self.seen:
            by_object.setdefault(obj, set()).add(offset)
        chains: dict[tuple[str, int], list] = {}
        for obj, offsets in by_object.items():
            vaddrs = {offset: file_offset_to_vaddr(obj, offset) for offset in offsets}
            try:
                answers = addr2line(obj, sorted(set(vaddrs.values())), inlines=True)
            except ExternalToolError:
                return {}
            for offset, vaddr in vaddrs.items():
                chains[(obj, offset)] = answers.get(vaddr, [])
        votes: dict[str, dict[tuple[str, int], int]] = {}
        for (obj, offset, position, function), samples in self.seen.items():
            chain = chains.get((obj, offset), [])
            found = chain[position] if position < len(chain) - 1 else None
            if found is None or not _same_function(function, found[0]):  # they disagree: find it by its name
                found = next((entry for entry in chain[:-1] if _same_function(function, entry[0])), None)
            if found is not None and found[1] and found[2] > 0:
                where = (str(found[1]), int(found[2]))
                votes.setdefault(function, {})[where] = votes.get(function, {}).get(where, 0) + samples
        return {function: max(counts, key=lambda where: (counts[where], where)) for function, counts in votes.items()}


def _same_function(name: str, found: str | None) -> bool:
    """Whether addr2line's ``found`` names perf's ``name``: addr2line adds a C++ function's parameters
    (``peg::Trie::match(char const*, unsigned long) const``) and a template's return type."""
    if not found:
        return False
    return found == name or found.startswith(name + "(") or f" {name}(" in found


def add_inline_lines(rows: list[dict], inlined: InlineAddresses) -> None:
    """Give the ``function`` rows of inlined frames (object ``inlined``) a ``source`` and ``line``
    (:meth:`InlineAddresses.lines`)."""
    if not inlined.seen:
        return
    found = inlined.lines()
    for row in rows:
        where = found.get(str(row.get("uid"))) if row.get("subtype") == "function" and row.get("object") == "inlined" \
            else None
        if where is not None:
            row["source"], row["line"] = where


def stack_resources(stacks: dict[tuple[tuple[str, str], ...], list[int]]) -> list[dict]:
    """Resources of the sampled stacks and of every function (inclusive and exclusive samples)."""
    frames: dict[tuple[str, str], dict] = {}
    rows: list[dict] = []
    inclusive: dict[tuple[str, str], int] = {}
    exclusive: dict[tuple[str, str], int] = {}
    for stack, (count, period) in sorted(stacks.items(), key=lambda item: -item[1][0]):
        trace = []
        for function, obj in stack:
            frame = frames.get((function, obj))
            if frame is None:
                frame = frames[(function, obj)] = {"function": function, "object": obj}
            trace.append(frame)
        rows.append({"type": "time", "subtype": "samples", "uid": stack[0][0], "amount": count, "period": period,
                     "trace": trace})
        for key in set(stack):
            inclusive[key] = inclusive.get(key, 0) + count
        exclusive[stack[0]] = exclusive.get(stack[0], 0) + count
    for key, count in sorted(inclusive.items(), key=lambda item: (-item[1], item[0])):
        rows.append({"type": "time", "subtype": "function", "uid": key[0], "object": key[1], "amount": count,
                     "exclusive": exclusive.get(key, 0)})
    return rows


def _check_events(value: list[str]) -> list[str]:
    events = [v for v in value if v]
    for event in events:
        if not re.fullmatch(r"[A-Za-z0-9_.:/=\-]+", event):
            raise ValueError("perf event names such as cycles, instructions or cache-misses")
    return events


class PerfCollector:
    name = "perf"
    kind = "collector"
    summary = "Sampled call stacks (perf record -g) and event counters (perf stat) of any program."
    description = (
        "Samples call stacks with 'perf record -g' (flame-graph ready, with inclusive and exclusive samples per "
        "function) and counts events with 'perf stat' (cycles, instructions, cache and branch misses, page "
        "faults, context switches). Needs perf and a perf_event_paranoid setting that lets this user profile."
    )
    params = (
        Param("mode", "choice", "both", "Sample stacks (record), count events (stat), or both (two runs).",
              choices=("record", "stat", "both"), flags=("--mode",)),
        Param("frequency", "int", 999, "Samples per second (perf record -F).", flags=("-F", "--frequency"),
              minimum=1, maximum=100000, metavar="HZ"),
        Param("call_graph", "choice", "fp", "How perf record walks stacks.", choices=("fp", "dwarf", "lbr"),
              flags=("--call-graph",)),
        Param("events", "list", DEFAULT_EVENTS, "Events perf stat counts (repeatable).", flags=("-e", "--events"),
              metavar="EVENT", check=_check_events),
        *COMMON_PARAMS,
    )

    def requirements(self) -> list[Requirement]:
        found = [tool_requirement("perf", "perf", HOW_TO_GET_PERF)]
        if not found[0].ok:
            return found
        allowed, detail, unsupported = perf_permission()
        found.append(Requirement("permission to profile", allowed, detail, HOW_TO_ALLOW if not allowed else ""))
        if allowed:
            missing = {base_event(e) for e in unsupported}
            supported = [e for e in DEFAULT_EVENTS if e not in missing]
            found.append(Requirement("hardware counters", not unsupported,
                                     f"countable: {', '.join(supported) or 'none'}"
                                     + (f"; not supported here: {', '.join(unsupported)} (stacks are sampled with "
                                        "cpu-clock instead)" if unsupported else ""),
                                     "a machine (or VM) exposing its PMU", optional=True))
        return found

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        check_command(ctx, kwargs)
        if shutil.which("perf") is None:
            raise CollectionError(ctx.label, f"'perf' is required but was not found; {HOW_TO_GET_PERF}")
        return PhaseResult.ok(kwargs)

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        rows: list[dict] = []
        header: dict[str, Any] = {"cmd": kwargs["cmd"], "params": kwargs["args"], "workload": kwargs["workload"]}
        status = 0
        with tempfile.TemporaryDirectory(prefix="perun-perf-", ignore_cleanup_errors=True) as work:
            if kwargs["mode"] in ("record", "both"):
                inlined = InlineAddresses()
                stacks, status, event = self._record(ctx, kwargs, Path(work), inlined)
                sampled = stack_resources(stacks)
                add_function_lines(sampled)  # where the program was built with -g; else the bare names
                add_inline_lines(sampled, inlined)
                rows += sampled
                header["event"] = event
            if kwargs["mode"] in ("stat", "both"):
                counters, unsupported, stat_status = self._stat(ctx, kwargs, Path(work))
                status = status or stat_status
                rows += [{**row, "uid": kwargs["cmd"]} for row in counters]
                header["unsupported_events"] = unsupported
        header["type"] = "time" if kwargs["mode"] == "record" else "mixed"
        header["units"] = {"time": "samples", "counter": "events"}
        if status:
            header["exit_status"] = status
        kwargs["profile"] = Profile(header=header, global_region=Snapshot(ResourceTable(rows), [], {}))
        return PhaseResult.ok(kwargs)

    def _refused(self, ctx: UnitContext, outcome: Any) -> None:
        """Fail with the reason when perf itself could not start profiling."""
        text = outcome.stderr_tail.lower()
        if outcome.exit_status != 0 and any(word in text for word in _DENIED):
            raise CollectionError(ctx.label, ToolNotPermitted("perf", _denied_reason(), HOW_TO_ALLOW).message)
        if "is not installed" in text or "not found for kernel" in text:
            raise CollectionError(ctx.label, f"perf for the running kernel ({os.uname().release}) is not installed; "
                                  f"{HOW_TO_GET_PERF}")

    def _record(self, ctx: UnitContext, kwargs: dict[str, Any], work: Path,
                inlined: InlineAddresses) -> tuple[dict, int, str]:
        data = work / "perf.data"
        command = perf_command(work, "record", "-q", "--no-buildid-cache", "-F", str(kwargs["frequency"]),
                               "--call-graph", kwargs["call_graph"], "-o", str(data), "--", *kwargs["argv"])
        outcome = run_program(ctx, command, kwargs, tool="perf record")
        script = None
        if data.exists() and data.stat().st_size > 0:
            try:
                script = subprocess.run(perf_command(work, "script", "-i", str(data), "-F",
                                                     "tid,period,event,ip,sym,dso"),
                                        cwd=ctx.cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                        errors="replace", timeout=600, check=False)
            except (OSError, subprocess.SubprocessError) as exc:
                raise CollectionError(ctx.label, f"perf script failed: {exc}") from None
        stacks = parse_perf_script(script.stdout, inlined) if script is not None else {}
        if not stacks:
            self._refused(ctx, outcome)
        if script is None:
            raise CollectionError(ctx.label, "perf record collected nothing", outcome.exit_status,
                                  outcome.stderr_tail)
        check_outcome(ctx, outcome, kwargs)
        match = next((m for m in map(_SAMPLE.match, script.stdout.splitlines()) if m), None)
        return stacks, outcome.exit_status, match.group(3) if match else ""

    def _stat(self, ctx: UnitContext, kwargs: dict[str, Any], work: Path) -> tuple[list[dict], list[str], int]:
        output = work / "stat.csv"
        command = perf_command(work, "stat", "-x", ",", "-e", ",".join(kwargs["events"]), "-o", str(output), "--",
                               *kwargs["argv"])
        outcome = run_program(ctx, command, kwargs, tool="perf stat")
        text = output.read_text(errors="replace") if output.exists() else ""
        counters, unsupported = parse_perf_stat(text)
        if not counters and not unsupported:
            self._refused(ctx, outcome)
            if "event syntax error" in outcome.stderr_tail or "parser error" in outcome.stderr_tail:
                raise CollectionError(ctx.label, f"perf stat does not know the events {', '.join(kwargs['events'])} "
                                      "(see 'perf list')", None, outcome.stderr_tail)
            raise CollectionError(ctx.label, "perf stat counted nothing", outcome.exit_status, outcome.stderr_tail)
        status = outcome.exit_status
        if status == 0 and (number := signal_reported(outcome.stderr_tail, kwargs["argv"][0])):
            status = -number
        check_outcome(ctx, outcome, kwargs, status=status)
        return counters, unsupported, status
