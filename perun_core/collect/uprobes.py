"""The uprobes engine of the trace collector: ``perf probe`` on function entries and returns.

See :mod:`perun_core.collect.trace` for what it records and when it fails.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

from ..errors import CollectionError, ToolNotPermitted
from ..units import UnitContext
from ..units.requirements import Requirement
from .calltree import calls_of_thread, sample_events
from .native_run import check_outcome, run_program
from .perf import HOW_TO_GET_PERF, perf_command
from .trace_selection import selection

__all__ = ["MAX_LOST_SHARE", "UPROBE_EVENTS", "run_uprobes", "uprobes_requirement"]

#: Where the kernel offers uprobe events: tracefs, or tracefs inside debugfs on older systems.
UPROBE_EVENTS = (Path("/sys/kernel/tracing/uprobe_events"), Path("/sys/kernel/debug/tracing/uprobe_events"))
#: The share of uprobe events perf may lose before the job fails (fewer are noted in the header).
MAX_LOST_SHARE = 0.01
_LOST = re.compile(r"PERF_RECORD_LOST(_SAMPLES)? lost (\d+)")


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


def uprobes_requirement() -> Requirement:
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


def run_uprobes(ctx: UnitContext, kwargs: dict[str, Any], argv: list[str], binary: str, work: Path
                 ) -> tuple[list, Any, dict, int]:
    """Calls per thread, the outcome, function names and the number of events perf lost."""
    import numpy as np

    requirement = uprobes_requirement()
    if not requirement.ok:
        raise CollectionError(ctx.label, f"the uprobes engine cannot run here: {requirement.detail}; "
                              f"{requirement.how_to_get}")
    chosen, rates_by_address = selection(ctx, kwargs, binary)
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
