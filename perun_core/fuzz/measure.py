"""Running the fuzzed program on candidate inputs, cheaply and in parallel.

Every worker owns one input file (in a private temporary directory) and one
:class:`~perun_core.runner.process.RepeatedRuns`: the command line never
changes, only the file's content does, so a single spawn helper per worker
makes all of that worker's runs (a fraction of a millisecond each instead of
a ``subprocess.Popen``) and the wall and CPU times come from the run's own
``wait4`` rusage.  With ``stdin`` the command is wrapped in ``sh -c`` which
redirects the file to the program's standard input.

The cost of a run is one of three measures (:func:`resolve_metric`):
``instructions``, the user-space instructions the program retired, counted by
``perf stat -e instructions:u`` wrapped around it (nearly free of noise, where
the kernel lets perf count them); ``cpu``, the child's user+system seconds
from its rusage (the fallback); ``wall``, only when asked for.

:class:`Coverage` is the optional gcov pre-filter: for a program built with
``--coverage`` it removes the ``.gcda`` files before a run and sums the
executed-line counts ``gcov`` reports after it.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..errors import FuzzError
from ..runner.helper import spawn_helper
from ..runner.process import RepeatedRuns, describe_status

__all__ = ["COST_UNITS", "LONG_RUN", "Coverage", "Executor", "Measurement", "available_cores", "calibration_run",
           "perf_counts_instructions", "stop_at", "resolve_metric"]

#: the unit of each cost measure, for reports
COST_UNITS = {"instructions": "instructions", "cpu": "s CPU", "wall": "s wall"}
#: a run at least this long (wall seconds) is not repeated at once: a burst of load stretches it far less than a short one
LONG_RUN = 0.25
_PERF_EVENT = "instructions:u"


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _perf_count(text: str) -> int | None:
    """The instruction count in ``perf stat -x,`` output, None when perf could not count."""
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) >= 3 and _PERF_EVENT in fields[2]:
            return int(fields[0]) if fields[0].isdigit() else None
    return None


def perf_counts_instructions() -> tuple[bool, str]:
    """Whether ``perf stat -e instructions:u`` counts here, and why not when it does not."""
    perf = shutil.which("perf")
    if perf is None:
        return False, "perf is not installed"
    true = shutil.which("true") or "/bin/true"
    try:
        done = subprocess.run([perf, "stat", "-x,", "-e", _PERF_EVENT, "--", true], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"perf does not run: {exc}"
    count = _perf_count(done.stderr.decode("utf-8", "replace"))
    if done.returncode != 0 or not count:
        paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
        level = paranoid.read_text().strip() if paranoid.is_file() else "?"
        return False, f"the kernel does not let perf count instructions:u (perf_event_paranoid {level}, " \
                      "or no hardware counters, as in many virtual machines)"
    return True, ""


def resolve_metric(metric: str) -> tuple[str, str]:
    """The cost measure to use for ``metric`` (auto: instructions where perf counts them, else cpu) and a note."""
    if metric != "auto" and metric != "instructions":
        return metric, ""
    usable, why = perf_counts_instructions()
    if usable:
        return "instructions", ""
    if metric == "instructions":
        return "cpu", f"instructions cannot be counted ({why}); measuring CPU time instead"
    return "cpu", f"CPU time of the child (instructions cannot be counted: {why})"


@dataclass(frozen=True, slots=True)
class Measurement:
    """One run: CPU (user+sys) and wall seconds, retired instructions when counted, how it ended."""

    cpu: float
    wall: float
    exit_status: int
    hang: bool
    stderr_tail: str = ""
    coverage: int | None = None
    instructions: int | None = None

    def value(self, metric: str) -> float:
        if metric == "instructions" and self.instructions is not None:
            return float(self.instructions)
        return self.wall if metric == "wall" else self.cpu


class _Slot:
    def __init__(self, directory: Path, name: str, argv: list[str], stdin: bool, cwd: Path, helper: Path | None,
                 timeout: float, cancelled: threading.Event | None, count_instructions: bool) -> None:
        directory.mkdir()
        self.path = directory / name
        self.path.write_bytes(b"")
        self.counts: Path | None = directory / "perf.out" if count_instructions else None
        if stdin:
            command = ["/bin/sh", "-c", 'f=$1; shift; exec "$@" < "$f"', "sh", str(self.path), *argv]
        else:
            command = [*argv, str(self.path)]
        if self.counts is not None:
            command = [shutil.which("perf") or "perf", "stat", "-x,", "-e", _PERF_EVENT, "-o", str(self.counts),
                       "--", *command]
        self.runs = RepeatedRuns(command, cwd=cwd, helper=helper, timeout=timeout, cancelled=cancelled, tail_lines=5)


class Executor:
    """``jobs`` workers running ``argv`` (plus the input) in ``cwd``; use as a context manager."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, jobs: int, hang_timeout: float, stdin: bool = False,
                 input_name: str = "input", cancelled: threading.Event | None = None,
                 coverage: Coverage | None = None, count_instructions: bool = False) -> None:
        self.jobs = 1 if coverage is not None else jobs
        self.argv = list(argv)
        self.coverage = coverage
        self._tmp = Path(tempfile.mkdtemp(prefix="perun-fuzz-"))
        helper = spawn_helper()
        self._slots: queue.SimpleQueue[_Slot] = queue.SimpleQueue()
        self._all = [_Slot(self._tmp / f"w{i}", input_name, list(argv), stdin, cwd, helper, hang_timeout, cancelled,
                           count_instructions) for i in range(self.jobs)]
        for slot in self._all:
            self._slots.put(slot)
        self._pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="perun-fuzz") if self.jobs > 1 else None
        self.executions = 0
        self._lock = threading.Lock()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def hang_timeout(self) -> float:
        """Wall seconds after which the runs started now are killed."""
        return self._all[0].runs.timeout

    def set_hang_timeout(self, seconds: float) -> None:
        """Kill the runs started from now on after ``seconds`` of wall time."""
        for slot in self._all:
            slot.runs.timeout = seconds

    def measure(self, data: bytes) -> Measurement:
        """Run the program once on ``data``.  OSError when it cannot be started, Interrupted when cancelled."""
        slot = self._slots.get()
        try:
            slot.path.write_bytes(data)
            if self.coverage is not None:
                self.coverage.reset()
            outcome = slot.runs.run()
            covered = self.coverage.total() if self.coverage is not None else None
            counted = None
            if slot.counts is not None:
                try:
                    counted = _perf_count(slot.counts.read_text("utf-8", "replace"))
                except OSError:
                    counted = None
        finally:
            self._slots.put(slot)
        with self._lock:
            self.executions += 1
        return Measurement(outcome.user_seconds + outcome.sys_seconds, outcome.wall_ns / 1e9, outcome.exit_status,
                           outcome.timed_out, outcome.stderr_tail, covered, counted)

    def measure_all(self, inputs: Sequence[bytes]) -> list[Measurement]:
        """Measure every input, ``jobs`` at a time; results in the order of ``inputs``."""
        if self._pool is None or len(inputs) < 2:
            return [self.measure(data) for data in inputs]
        return list(self._pool.map(self.measure, inputs))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        for slot in self._all:
            slot.runs.close()
        shutil.rmtree(self._tmp, ignore_errors=True)


_GCOV_LINE = re.compile(rb"^\s*(\d+)\*?:\s*\d+:", re.MULTILINE)


class Coverage:
    """Executed-line counts of a gcov-instrumented program (see :meth:`usable`)."""

    def __init__(self, source_path: Path, gcno_path: Path, gcov: str) -> None:
        self.source_path = source_path
        self.gcno_path = gcno_path
        self.gcov = gcov

    @classmethod
    def usable(cls, source_path: str | None, gcno_path: str | None) -> tuple[Coverage | None, str]:
        """A Coverage, or None and why the pre-filter is skipped."""
        if not source_path or not gcno_path:
            return None, "no --source-path and --gcno-path given"
        gcov = shutil.which("gcov")
        if gcov is None:
            return None, "gcov is not installed"
        source, gcno = Path(source_path).expanduser(), Path(gcno_path).expanduser()
        if not source.is_dir():
            return None, f"source path {source} is not a directory"
        if not gcno.is_dir() or not any(gcno.glob("*.gcno")):
            return None, f"no .gcno files in {gcno} (build the program with --coverage)"
        return cls(source.resolve(), gcno.resolve(), gcov), ""

    def reset(self) -> None:
        for stale in self.gcno_path.glob("*.gcda"):
            stale.unlink(missing_ok=True)

    def total(self) -> int:
        """Sum of the execution counts of every line, from the .gcda files the last run left."""
        data = sorted(str(p) for p in self.gcno_path.glob("*.gcda"))
        if not data:
            return 0
        done = subprocess.run([self.gcov, "-t", "-o", str(self.gcno_path), *data], cwd=self.source_path,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        return sum(int(m.group(1)) for m in _GCOV_LINE.finditer(done.stdout))


def calibration_run(executor: Executor, data: bytes, path: Path, hang_timeout: float, budget: float) -> Measurement:
    """One run of a seed before the search; FuzzError when the program cannot run, fails on it, or the hang
    timeout or the time budget is too short for it."""
    started = time.monotonic()
    try:
        run = executor.measure(data)
    except OSError as exc:
        raise FuzzError(f"cannot run {executor.argv[0]}: {exc.strerror or exc}") from None
    took = time.monotonic() - started
    if run.hang:
        raise FuzzError(f"the hang timeout {hang_timeout:g} s (-ht) is too short: the program did not finish on "
                        f"seed {path} within it", hint="raise -ht")
    if run.exit_status != 0:
        tail = run.stderr_tail.strip().splitlines()[-1:] or [""]
        detail = f": {tail[0]}" if tail[0] else ""
        raise FuzzError(f"the program fails on seed {path}: it {describe_status(run.exit_status)}{detail}",
                        hint="the seeds must be inputs the program accepts")
    if took > budget:
        raise FuzzError(f"the time budget {budget:g} s (-t) is too short: one run on seed {path} took {took:.3g} s",
                        hint="raise -t")
    return run


def stop_at(cancel: threading.Event, deadline: float) -> threading.Event:
    """An event set when ``cancel`` is or at ``deadline`` (monotonic seconds), whichever comes first: runs
    watching it are killed then, so the analysis ends within the time budget."""
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(min(0.05, max(0.0, deadline - time.monotonic()))):
            if cancel.is_set() or time.monotonic() >= deadline:
                stop.set()

    threading.Thread(target=watch, name="perun-fuzz-deadline", daemon=True).start()
    return stop
