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

:class:`RepeatedRuns` runs one program many times in a row (the time
collector's warm-ups and repetitions).  With the spawn helper
(:mod:`perun_core.runner.helper`) a single helper process makes every run,
one per :meth:`RepeatedRuns.run` call: the caller hands it a ``g`` byte and
reads back one report line, which costs a fraction of a millisecond instead of
the few milliseconds of a ``subprocess.Popen`` per run.  The calls are in
lock step (a run starts only when asked for, and its output is read to the
last byte before ``run`` returns), so whatever the caller reports between
calls is exactly ordered with the run's output lines.
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

__all__ = ["ProcessOutcome", "RepeatedRuns", "describe_status", "preemption_record", "run_process", "signals_deferred"]

#: How often a wait wakes up to look at the cancel flag.
_CANCEL_POLL = 0.05
#: How long output pipes may stay open after the program exited.
_DRAIN_GRACE = 0.5
#: How long a terminated process group gets before SIGKILL.
_TERM_GRACE = 0.3
_MAX_LINE = 4096
#: How much one :meth:`_Output.drain` reads at most before the caller looks at its cancel flag again.
_DRAIN_LIMIT = 65536


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
    #: how often the run was preempted (``ru_nivcsw``); None where it cannot be counted
    involuntary_switches: int | None = None


def preemption_record(wall_seconds: float, cpu_seconds: float, involuntary_switches: int | None) -> dict | None:
    """How often the kernel switched a wall-clock run out against its will and how long it spent off the CPU
    (``{"count": N, "wait_seconds": S}``), kept in the header so that a check can tell whether a call's
    change is no larger than what waiting for a core adds to it; None where the switches were not counted."""
    if involuntary_switches is None or wall_seconds <= 0:
        return None
    return {"count": int(involuntary_switches), "wait_seconds": round(max(0.0, wall_seconds - cpu_seconds), 6)}


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


class _Output:
    """Splits the output pipes of a process into lines for ``on_line`` and keeps their tails."""

    def __init__(self, pipes: dict[int, str], on_line: Callable[[str, str], None] | None, tail_lines: int) -> None:
        self.pipes = pipes
        self._on_line = on_line
        self._partial = {fd: b"" for fd in pipes}
        self._tails: dict[str, collections.deque[str]] = {
            name: collections.deque(maxlen=tail_lines) for name in ("stdout", "stderr")}

    def _emit(self, stream: str, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")[:_MAX_LINE]
        self._tails[stream].append(text)
        if self._on_line is not None:
            self._on_line(stream, text)

    def consume(self, fd: int) -> int:
        """Read what ``fd`` has (one read) and emit its complete lines; the bytes read, 0 at end of file."""
        data = os.read(fd, 65536)
        if not data:
            self.flush(fd)
            return 0
        lines = (self._partial[fd] + data).split(b"\n")
        self._partial[fd] = lines.pop()
        for line in lines:
            self._emit(self.pipes[fd], line)
        return len(data)

    def drain(self, fd: int, limit: int | None = None) -> bool:
        """Read a non-blocking ``fd`` until it is empty (or ``limit`` bytes were read); False at end of file.

        A program that writes faster than its lines are handled keeps its
        pipe full for as long as it runs, so "until it is empty" may never
        come: while the program runs, callers pass a ``limit`` and look at
        their cancel flag between calls.
        """
        read = 0
        while limit is None or read < limit:
            try:
                got = self.consume(fd)
            except BlockingIOError:
                return True
            if not got:
                return False
            read += got
        return True

    def flush(self, fd: int | None = None) -> None:
        """Emit an unfinished last line (of ``fd``, or of every pipe) as a line."""
        for each in self.pipes if fd is None else (fd,):
            if self._partial.get(each):
                self._emit(self.pipes[each], self._partial[each])
                self._partial[each] = b""

    def tail(self, stream: str) -> str:
        return "\n".join(self._tails[stream])

    def clear_tails(self) -> None:
        for tail in self._tails.values():
            tail.clear()


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
    exact and wall time free of Python's spawning cost; leftovers are then
    always killed (see :class:`RepeatedRuns`).

    Spawning errors (missing program, no permission) propagate as OSError.
    """
    if helper is not None:
        with RepeatedRuns(argv, cwd=cwd, helper=helper, timeout=timeout, on_line=on_line, cancelled=cancelled,
                          merge_stderr=merge_stderr, tail_lines=tail_lines) as runs:
            return runs.run()
    start = time.monotonic_ns()
    process = subprocess.Popen(
        list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, start_new_session=True,
    )
    selector = selectors.DefaultSelector()
    pipes = {process.stdout.fileno(): "stdout"} if process.stdout else {}
    if process.stderr is not None:
        pipes[process.stderr.fileno()] = "stderr"
    output = _Output(pipes, on_line, tail_lines)
    waiter: _Waiter | None = None
    watch = _Watch()
    try:
        waiter = _Waiter(process.pid)
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        selector.register(waiter.fd, selectors.EVENT_READ)
        _watch(process.pid, selector, waiter, output, watch, timeout, cancelled, kill_leftovers)
        status, usage = waiter.reap()
        watch.reaped = True
        process.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if not watch.reaped:
            _stop(process, waiter, watch.exited_at)
        selector.close()
        if waiter is not None:
            waiter.close()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    output.flush()
    assert watch.exited_at is not None
    return ProcessOutcome(
        exit_status=process.returncode,
        wall_ns=watch.exited_at - start,
        user_seconds=usage.ru_utime,
        sys_seconds=usage.ru_stime,
        max_rss_bytes=usage.ru_maxrss * 1024,
        timed_out=watch.timed_out,
        stdout_tail=output.tail("stdout"),
        stderr_tail=output.tail("stderr"),
        involuntary_switches=getattr(usage, "ru_nivcsw", None),
    )


@dataclass(slots=True)
class _Watch:
    """What :func:`_watch` saw of one process: when it exited, whether it timed out, whether it was reaped."""

    exited_at: int | None = None
    timed_out: bool = False
    reaped: bool = False


def _watch(pid: int, selector: selectors.BaseSelector, waiter: _Waiter, output: _Output, watch: _Watch,
           timeout: float | None, cancelled: threading.Event | None, kill_leftovers: bool) -> None:
    """Pass output on until the process exited and its pipes are drained (or a grace period passed).

    Kills the process group at ``timeout``; raises Interrupted when ``cancelled`` is set.
    """
    deadline = time.monotonic() + timeout if timeout else None
    drain_until: float | None = None
    while True:
        now = time.monotonic()
        waits = [max(0.0, limit - now) for limit in (deadline, drain_until) if limit is not None]
        if cancelled is not None:
            waits.append(_CANCEL_POLL)
        for key, _ in selector.select(min(waits) if waits else None):
            if key.fd == waiter.fd:
                watch.exited_at = time.monotonic_ns()
                selector.unregister(waiter.fd)
                if kill_leftovers and waiter.zombie_guarded:
                    _signal_group(pid, signal.SIGKILL)
                deadline = None
                drain_until = time.monotonic() + _DRAIN_GRACE
            elif not output.consume(key.fd):
                selector.unregister(key.fd)
        if drain_until is not None and (not selector.get_map() or time.monotonic() >= drain_until):
            return
        if cancelled is not None and cancelled.is_set():
            raise Interrupted("cancelled")
        if deadline is not None and time.monotonic() >= deadline:
            watch.timed_out = True
            _signal_group(pid, signal.SIGKILL)
            deadline = None


def _stop(process: subprocess.Popen, waiter: _Waiter | None, exited_at: int | None) -> None:
    """Terminate (then kill) the process group of a run that did not end normally, and reap it."""
    with signals_deferred():
        _signal_group(process.pid, signal.SIGTERM)
        if waiter is None:
            _signal_group(process.pid, signal.SIGKILL)
            process.wait()
            return
        if exited_at is None:
            select.select([waiter.fd], [], [], _TERM_GRACE)
        _signal_group(process.pid, signal.SIGKILL)
        status, _ = waiter.reap()
        process.returncode = os.waitstatus_to_exitcode(status)


class RepeatedRuns:
    """Runs one program again and again, one measured run per :meth:`run`; use as a context manager.

    The arguments are those of :func:`run_process`.  With ``helper`` one
    spawn-helper process (started at the first run) makes every run; each
    run is in a process group of its own, and whatever it leaves running (in
    its group, or started with ``setsid``) is killed when it ends.  Without
    ``helper`` every run is a :func:`run_process` of its own.

    :meth:`run` returns when the run has ended and its output has been read
    and handed to ``on_line``; the tails in its outcome are that run's.
    Exec errors propagate as OSError, cancellation as :class:`Interrupted`.
    :meth:`close` ends the helper: at once when no run is going on;
    otherwise (an exception inside :meth:`run`) by SIGTERM, on which the
    helper kills the run's process group and descendants and exits, and
    after a grace period by SIGKILL.  When the helper ended abnormally, the
    process groups left in its session are killed.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | str,
        helper: Path | None,
        timeout: float | None = None,
        on_line: Callable[[str, str], None] | None = None,
        cancelled: threading.Event | None = None,
        merge_stderr: bool = False,
        tail_lines: int = 20,
    ) -> None:
        self._argv = list(argv)
        self._cwd = cwd
        self._helper = helper
        self._timeout = timeout
        self._on_line = on_line
        self._cancelled = cancelled
        self._merge_stderr = merge_stderr
        self._tail_lines = tail_lines
        self._process: subprocess.Popen[bytes] | None = None
        self._selector: selectors.BaseSelector | None = None
        self._output: _Output | None = None
        self._report = self._control = -1
        self._running = False
        #: the timeout the running helper applies (it is told a new one before the next run)
        self._helper_timeout: float | None = None

    @property
    def timeout(self) -> float | None:
        """Seconds after which a run is killed (None: never); a new value holds from the next run on."""
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: float | None) -> None:
        self._timeout = seconds

    def __enter__(self) -> RepeatedRuns:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self) -> ProcessOutcome:
        """Run the program once more and measure it."""
        if self._cancelled is not None and self._cancelled.is_set():
            raise Interrupted("cancelled")
        if self._helper is None:
            return run_process(self._argv, cwd=self._cwd, timeout=self._timeout, on_line=self._on_line,
                               cancelled=self._cancelled, merge_stderr=self._merge_stderr,
                               tail_lines=self._tail_lines)
        if self._process is None:
            self._start(self._helper)
        assert self._selector is not None and self._output is not None
        output = self._output
        output.clear_tails()
        self._running = True
        command = b"g"
        if self._timeout != self._helper_timeout:
            command = b"t%d\n" % _timeout_ns(self._timeout) + command
            self._helper_timeout = self._timeout
        try:
            os.write(self._control, command)
        except BrokenPipeError:
            pass  # the helper is gone: its report pipe is at end of file, which the loop below notices
        report = b""
        while not report.endswith(b"\n"):
            for key, _ in self._selector.select(_CANCEL_POLL if self._cancelled is not None else None):
                if key.fd == self._report:
                    chunk = os.read(self._report, 256)
                    if not chunk:
                        self._running = False
                        status = describe_status(self._end_helper(sweep=True))
                        raise OSError(f"the spawn helper failed (it {status})")
                    report += chunk
                elif not output.drain(key.fd, _DRAIN_LIMIT):
                    self._selector.unregister(key.fd)
            if self._cancelled is not None and self._cancelled.is_set():
                raise Interrupted("cancelled")
        # The run and everything it started are gone: its output is all in the pipes.
        for fd in list(self._selector.get_map()):
            if fd != self._report and not output.drain(fd):
                self._selector.unregister(fd)
        output.flush()
        self._running = False
        kind, exit_status, wall_ns, user, system, max_rss, switches = _parse_report(report, self._argv[0])
        return ProcessOutcome(
            exit_status=exit_status,
            wall_ns=wall_ns,
            user_seconds=user,
            sys_seconds=system,
            max_rss_bytes=max_rss,
            timed_out=kind == "timeout",
            stdout_tail=output.tail("stdout"),
            stderr_tail=output.tail("stderr"),
            involuntary_switches=switches,
        )

    def _start(self, helper: Path) -> None:
        report_read, report_write = os.pipe()
        control_read, control_write = os.pipe()
        timeout_ns = _timeout_ns(self._timeout)
        self._helper_timeout = self._timeout
        try:
            self._process = subprocess.Popen(
                [str(helper), str(report_write), str(control_read), str(timeout_ns), *self._argv], cwd=self._cwd,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if self._merge_stderr else subprocess.PIPE,
                start_new_session=True, pass_fds=(report_write, control_read),
            )
        except BaseException:
            for fd in (report_read, control_write):
                os.close(fd)
            raise
        finally:
            for fd in (report_write, control_read):
                os.close(fd)
        self._report, self._control = report_read, control_write
        pipes = {stream.fileno(): name for stream, name in ((self._process.stdout, "stdout"),
                                                            (self._process.stderr, "stderr")) if stream is not None}
        self._output = _Output(pipes, self._on_line, self._tail_lines)
        self._selector = selectors.DefaultSelector()
        for fd in (*pipes, report_read):
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)

    def _end_helper(self, *, sweep: bool) -> int:
        """Wait for the helper to exit, SIGKILL it after a grace period; its exit status.

        With ``sweep``, and after a SIGKILL, whatever is left in the helper's
        session (a run it could not kill) is killed too.
        """
        assert self._process is not None
        pid = self._process.pid
        # Its report pipe reaches end of file when it exits: a prompt wake-up, unlike Popen.wait's polling.
        deadline = time.monotonic() + _TERM_GRACE
        exited = False
        while not exited and (left := deadline - time.monotonic()) > 0:
            if select.select([self._report], [], [], left)[0]:
                with contextlib.suppress(BlockingIOError):
                    exited = not os.read(self._report, 256)
        if not exited:
            _signal_group(pid, signal.SIGKILL)
            sweep = True
        if sweep:
            # before reaping the helper: until then its pid, the session id, cannot be reused
            _kill_session(pid)
        return self._process.wait()

    def close(self) -> None:
        """End the helper (killing a run that is going on) and release its pipes."""
        process = self._process
        if process is None:
            return
        with signals_deferred():
            if self._running:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGTERM)
            os.close(self._control)
            if process.returncode is None:
                self._end_helper(sweep=self._running)
            self._process = None
            self._running = False
            if self._selector is not None:
                self._selector.close()
            os.close(self._report)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


def _timeout_ns(seconds: float | None) -> int:
    """A timeout as the helper takes it: nanoseconds, at least one, 0 for none."""
    return max(1, round(seconds * 1e9)) if seconds else 0


def _kill_session(session: int) -> None:
    """SIGKILL every process group in ``session`` (found through /proc)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    # after the command name: state, ppid, process group, session
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session:
                _signal_group(int(fields[2]), signal.SIGKILL)


def _parse_report(report: bytes, program: str) -> tuple[str, int, int, float, float, int, int]:
    """(kind, exit status, wall ns, user s, sys s, max rss bytes, involuntary switches) from a report line.

    OSError for exec errors.
    """
    fields = report.split()
    if fields[:1] == [b"exec"] and len(fields) == 2:
        code = int(fields[1])
        raise OSError(code, os.strerror(code), program)
    if fields[:1] not in ([b"ran"], [b"timeout"]) or len(fields) != 7:
        raise OSError(f"the spawn helper sent an unexpected report: {report[:100]!r}")
    status, wall, user, system, rss, switches = (int(x) for x in fields[1:])
    return (fields[0].decode(), os.waitstatus_to_exitcode(status), wall, user / 1e6, system / 1e6, rss * 1024,
            switches)
