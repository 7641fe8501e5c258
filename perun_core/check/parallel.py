"""Checking two profile files with two processes: a speed-up for ``check profiles`` on big files.

Parsing JSON is most of the time of checking two large profile files, and
one process can parse only one at a time.  :func:`check_files` forks a
worker that parses the baseline while this process parses the target; when
every applied method looks at one location at a time, the worker then also
checks half of the locations.  The worker sends back plain data (numpy
arrays, findings) through a pipe and ends with ``os._exit``.

Only for command-line use: forking a process that runs other threads (a
TUI) is not safe, so the API uses it only when asked (``workers=2``).  Any
trouble in the worker makes this process do the work itself, so errors are
reported exactly as without it.
"""

from __future__ import annotations

import os
import pickle
import struct
from collections.abc import Callable
from typing import Any

from .data import ProfileData
from .engine import PairOutcome, check_pair
from .results import Finding
from .strategies import Strategy

__all__ = ["available", "check_files"]

#: Methods that judge each location on its own, so their work can be split by location.
PER_LOCATION = frozenset({
    "size_aware_rank_test", "rank_sum_test", "average_amount_threshold", "best_model_order_equality",
    "fast_check", "integral_comparison", "linear_regression", "polynomial_regression", "local_statistics",
})
_LENGTH = struct.Struct(">Q")


def available() -> bool:
    return hasattr(os, "fork") and (os.cpu_count() or 1) > 1


def _send(fd: int, payload: Any) -> None:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _tell(fd: int, payload: Any) -> bool:
    """Send ``payload`` to the worker; False when it is gone (it ended after a failure: the pipe is broken).

    The worker exits as soon as it has reported a failure, so a "stop" may find
    no reader; that must never surface as a BrokenPipeError of its own.
    """
    try:
        _send(fd, payload)
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


def _ask(fd: int) -> Any:
    """The worker's next message, or ("failed", None) when it ended without one."""
    try:
        return _receive(fd)
    except (EOFError, OSError, pickle.UnpicklingError):
        return ("failed", None)


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError("the worker ended early")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _receive(fd: int) -> Any:
    (size,) = _LENGTH.unpack(_read_exactly(fd, _LENGTH.size))
    return pickle.loads(_read_exactly(fd, size))


def _splittable(strategy: Strategy, target_profile: Any) -> bool:
    if getattr(target_profile, "type", None) == "time":
        return False  # small, and a wall-time finding is weighed against the CPU times of its command
    rules = strategy.rules_for(target_profile)
    return bool(rules) and all(rule.method.name in PER_LOCATION for rule in rules)


def _worker(load: Callable[[], ProfileData], strategy: Strategy, names: tuple[str, str], to_parent: int,
            from_parent: int) -> None:
    try:
        data = load()
        if not _tell(to_parent, ("data", data.light())):
            return
    except BaseException:  # noqa: BLE001 - the parent redoes the work and reports the error itself
        _tell(to_parent, ("failed", None))
        return
    try:
        message = _receive(from_parent)
    except (EOFError, OSError):
        return  # the parent stopped (its own profile was invalid)
    if message[0] != "work":
        return
    _kind, target, locations = message
    try:
        wanted = set(locations)
        outcome = check_pair(data.subset(wanted), target.subset(wanted), strategy,
                             baseline_name=names[0], target_name=names[1])
        _tell(to_parent, ("done", outcome))
    except BaseException:  # noqa: BLE001
        _tell(to_parent, ("failed", None))


def check_files(load_baseline: Callable[[], ProfileData], load_target: Callable[[], ProfileData],
                strategy: Strategy, names: tuple[str, str]) -> tuple[ProfileData, ProfileData, PairOutcome]:
    """Load both profiles (the baseline in a worker process) and check them; returns both and the outcome."""
    # both processes need numpy: imported after the fork it would be imported twice, at the same
    # wall-clock cost but twice the CPU, which a busy machine turns into time
    import numpy  # noqa: F401

    up_read, up_write = os.pipe()
    down_read, down_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(up_read)
        os.close(down_write)
        try:
            _worker(load_baseline, strategy, names, up_write, down_read)
        finally:
            os._exit(0)
    os.close(up_write)
    os.close(down_read)
    try:
        target = load_target()
        # grouped now, not after the worker reports: whichever process finishes loading first
        # should not then wait for the other to do work it could have done already
        target.samples()
        kind, baseline = _ask(up_read)
        if kind != "data":
            _tell(down_write, ("stop",))
            baseline = load_baseline()
            return baseline, target, check_pair(baseline, target, strategy, baseline_name=names[0],
                                                target_name=names[1])
        baseline.label = names[0]
        if baseline.type != target.type or not _splittable(strategy, target.profile):
            _tell(down_write, ("stop",))
            return baseline, target, check_pair(baseline, target, strategy, baseline_name=names[0],
                                                target_name=names[1])
        order = list(dict.fromkeys([*baseline.samples(), *target.samples()]))
        mine, theirs = set(order[: len(order) // 2]), order[len(order) // 2:]
        theirs_set = set(theirs)
        shipped = target.light().subset(theirs_set)
        if not _tell(down_write, ("work", shipped, theirs)):
            return baseline, target, check_pair(baseline, target, strategy, baseline_name=names[0],
                                                target_name=names[1])
        own = check_pair(baseline.subset(mine), target.subset(mine), strategy, baseline_name=names[0],
                         target_name=names[1])
        reply = _ask(up_read)
        if reply[0] != "done":
            return baseline, target, check_pair(baseline, target, strategy, baseline_name=names[0],
                                                target_name=names[1])
        return baseline, target, _merge(own, reply[1], order)
    finally:
        for fd in (up_read, down_write):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _merge(first: PairOutcome, second: PairOutcome, order: list[str]) -> PairOutcome:
    """Findings of both halves in the order one process would have produced them."""
    rank = {location: i for i, location in enumerate(order)}
    methods = list(dict.fromkeys([*first.methods, *second.methods]))
    by_method: dict[str, list[Finding]] = {m: [] for m in methods}
    for finding in [*first.findings, *second.findings]:
        by_method.setdefault(finding.method, []).append(finding)
    findings = []
    for method in by_method:
        findings += sorted(by_method[method], key=lambda f: rank.get(f.location, len(rank)))
    return PairOutcome(methods, findings, [*first.errors, *second.errors],
                       list(dict.fromkeys([*first.notes, *second.notes])))
