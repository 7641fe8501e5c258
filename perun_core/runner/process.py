"""Running one external program: measured, streamed, killable.

:func:`run_process` starts a program without a shell, with stdin from
``/dev/null`` and in a new session (so its process group can be killed as a
whole and a Ctrl-C on the terminal reaches only perun), streams its output
lines to a callback, enforces a timeout, and reaps it with ``os.wait4`` to get
its CPU times and peak memory.  Wall time is measured with
``time.monotonic_ns`` from just before the spawn to the moment the process
exits.

The exit is noticed through a pidfd (Linux 5.3+), so the process stays a
zombie until reaped and its process-group id cannot be reused meanwhile;
without pidfds a helper thread waits for it instead.
"""

from __future__ import annotations

import collections
import contextlib
import os
import select
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Interrupted

__all__ = ["ProcessOutcome", "describe_status", "run_process", "signals_deferred"]

#: How often a wait wakes up to look at the cancel flag.
_CANCEL_POLL = 0.05
#: How long output pipes may stay open after the program exited.
_DRAIN_GRACE = 0.5
#: How long a terminated process group gets before SIGKILL.
_TERM_GRACE = 0.3
_MAX_LINE = 4096


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """How one run ended.  ``exit_status`` < 0 means killed by that signal."""

    exit_status: int
    wall_ns: int
    user_seconds: float
    sys_seconds: float
    max_rss_bytes: int
    timed_out: bool
    stdout_tail: str
    stderr_tail: str


def describe_status(status: int) -> str:
    """``exited with status 2`` / ``was killed by SIGSEGV``."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back (main thread only) while cleaning up.

    A second Ctrl-C must not cut a cleanup short; the held signal arrives
    when the block ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _Waiter:
    """A readable file descriptor that signals the exit of ``pid``, and its reaping."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._result: list[tuple[int, Any]] = []
        self._thread: threading.Thread | None = None
        self._write_end: int | None = None
        try:
            self.fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            read_end, self._write_end = os.pipe()
            self.fd = read_end
            self._thread = threading.Thread(target=self._wait, name="perun-wait", daemon=True)
            self._thread.start()

    def _wait(self) -> None:
        _, status, usage = os.wait4(self.pid, 0)
        self._result.append((status, usage))
        assert self._write_end is not None
        os.write(self._write_end, b"x")

    @property
    def zombie_guarded(self) -> bool:
        """True while the exited process is still unreaped (its group id is then safe to signal)."""
        return self._thread is None

    def reap(self) -> tuple[int, Any]:
        if self._thread is None:
            _, status, usage = os.wait4(self.pid, 0)
            return status, usage
        self._thread.join()
        return self._result[0]

    def close(self) -> None:
        for fd in (self.fd, self._write_end):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    timeout: float | None = None,
    on_line: Callable[[str, str], None] | None = None,
    cancelled: threading.Event | None = None,
    merge_stderr: bool = False,
    kill_leftovers: bool = True,
    tail_lines: int = 20,
    helper: Path | None = None,
) -> ProcessOutcome:
    """Run ``argv`` in ``cwd`` to completion and measure it.

    ``on_line(stream, text)`` gets every output line ("stdout" or "stderr";
    only "stdout" with ``merge_stderr``).  After ``timeout`` seconds the
    process group is killed and ``timed_out`` is set.  When ``cancelled`` is
    set, or the call is interrupted (KeyboardInterrupt), the process group is
    terminated and reaped before :class:`Interrupted` (or the
    KeyboardInterrupt) propagates.  With ``kill_leftovers`` processes the
    program left running in its group are killed when it exits.

    With ``helper`` (see :mod:`perun_core.runner.helper`) the program is
    started and measured by that small C process, which makes peak memory
    exact and wall time free of Python's spawning cost.

    Spawning errors (missing program, no permission) propagate as OSError.
    """
    report_read = report_write = -1
    if helper is not None:
        report_read, report_write = os.pipe()
        argv = [str(helper), str(report_write), *argv]
    start = time.monotonic_ns()
    try:
        process = subprocess.Popen(
            list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, start_new_session=True,
            pass_fds=(report_write,) if helper is not None else (),
        )
    except BaseException:
        for fd in (report_read, report_write):
            if fd >= 0:
                os.close(fd)
        raise
    if report_write >= 0:
        os.close(report_write)
    selector = selectors.DefaultSelector()
    pipes = {process.stdout.fileno(): "stdout"} if process.stdout else {}
    if process.stderr is not None:
        pipes[process.stderr.fileno()] = "stderr"
    partial = {name: b"" for name in pipes.values()}
    tails: dict[str, collections.deque[str]] = {name: collections.deque(maxlen=tail_lines) for name in ("stdout", "stderr")}
    waiter: _Waiter | None = None
    reaped = False
    timed_out = False
    exited_at: int | None = None

    def emit(stream: str, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")[:_MAX_LINE]
        tails[stream].append(text)
        if on_line is not None:
            on_line(stream, text)

    def consume(fd: int) -> None:
        stream = pipes[fd]
        data = os.read(fd, 65536)
        if not data:
            selector.unregister(fd)
            if partial[stream]:
                emit(stream, partial[stream])
                partial[stream] = b""
            return
        lines = (partial[stream] + data).split(b"\n")
        partial[stream] = lines.pop()
        for line in lines:
            emit(stream, line)

    try:
        waiter = _Waiter(process.pid)
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        selector.register(waiter.fd, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout if timeout else None
        drain_until: float | None = None
        while True:
            now = time.monotonic()
            waits = [max(0.0, limit - now) for limit in (deadline, drain_until) if limit is not None]
            if cancelled is not None:
                waits.append(_CANCEL_POLL)
            for key, _ in selector.select(min(waits) if waits else None):
                if key.fd == waiter.fd:
                    exited_at = time.monotonic_ns()
                    selector.unregister(waiter.fd)
                    if kill_leftovers and waiter.zombie_guarded:
                        _signal_group(process.pid, signal.SIGKILL)
                    deadline = None
                    drain_until = time.monotonic() + _DRAIN_GRACE
                else:
                    consume(key.fd)
            if drain_until is not None and (not selector.get_map() or time.monotonic() >= drain_until):
                break
            if cancelled is not None and cancelled.is_set():
                raise Interrupted("cancelled")
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                _signal_group(process.pid, signal.SIGKILL)
                deadline = None
        status, usage = waiter.reap()
        reaped = True
        process.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if not reaped:
            with signals_deferred():
                _signal_group(process.pid, signal.SIGTERM)
                if waiter is None:
                    _signal_group(process.pid, signal.SIGKILL)
                    process.wait()
                else:
                    if exited_at is None:
                        select.select([waiter.fd], [], [], _TERM_GRACE)
                    _signal_group(process.pid, signal.SIGKILL)
                    status, _ = waiter.reap()
                    process.returncode = os.waitstatus_to_exitcode(status)
        selector.close()
        if waiter is not None:
            waiter.close()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        report = b""
        if report_read >= 0:
            if reaped:
                report = _read_all(report_read)
            os.close(report_read)
    for stream, rest in partial.items():
        if rest:
            emit(stream, rest)
    assert exited_at is not None
    exit_status, wall_ns = process.returncode, exited_at - start
    user, system, max_rss = usage.ru_utime, usage.ru_stime, usage.ru_maxrss * 1024
    if helper is not None and not timed_out:
        exit_status, wall_ns, user, system, max_rss = _parse_report(report, process.returncode, argv[2])
    return ProcessOutcome(
        exit_status=exit_status,
        wall_ns=wall_ns,
        user_seconds=user,
        sys_seconds=system,
        max_rss_bytes=max_rss,
        timed_out=timed_out,
        stdout_tail="\n".join(tails["stdout"]),
        stderr_tail="\n".join(tails["stderr"]),
    )


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _parse_report(report: bytes, helper_status: int, program: str) -> tuple[int, int, float, float, int]:
    """(exit status, wall ns, user s, sys s, max rss bytes) from the helper's line; OSError for exec errors."""
    fields = report.split()
    if fields[:1] == [b"exec"] and len(fields) == 2:
        code = int(fields[1])
        raise OSError(code, os.strerror(code), program)
    if fields[:1] != [b"ran"] or len(fields) != 6:
        raise OSError(f"the spawn helper failed ({describe_status(helper_status)}) without a report")
    status, wall, user, system, rss = (int(x) for x in fields[1:])
    return os.waitstatus_to_exitcode(status), wall, user / 1e6, system / 1e6, rss * 1024
