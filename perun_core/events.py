"""Typed progress events of a run, and an iterator over them from a worker thread.

A run reports, in this order (``*`` repeats, ``?`` is optional)::

    RunPlanned
    ( VersionStarted
      PhaseStarted(pre_run)*  OutputLine*
      ( JobStarted
        PhaseStarted(before|collect|after|postprocess, ...)  Repetition*  OutputLine*
        ( ProfileWritten ProfileRegistered?  JobFinished  |  JobFailed )
      )*
      VersionFinished
    )*
    RunFinished

A job whose workload names a workload generator
(:mod:`perun_core.runner.generators`) repeats its collection per generated
workload, each announced by ``WorkloadStarted`` (before its ``before``
phase).  Its postprocessors then run once, on the merged profile, followed by
its ``ProfileWritten`` (``ProfileRegistered``); or, when every workload gets
a profile of its own, after each workload's collection, each profile
followed by its ``ProfileWritten``.  ``JobFinished`` comes after the last.

``RunFinished`` always comes last, also when the run fails or is
interrupted (its ``status`` says which).  Job numbers count from 1 over the
whole run, so ``JobStarted.job`` of ``JobStarted.total`` drives a progress
bar.  Events are frozen dataclasses; callbacks get them on the thread that
runs the jobs.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runner.jobs import Job

__all__ = [
    "Event",
    "EventStream",
    "JobFailed",
    "JobFinished",
    "JobStarted",
    "MeasurementAdvice",
    "OutputLine",
    "PhaseStarted",
    "ProfileRegistered",
    "ProfileWritten",
    "Repetition",
    "RunFinished",
    "RunPlanned",
    "VersionFinished",
    "VersionStarted",
    "WorkloadStarted",
]


@dataclass(frozen=True, slots=True)
class RunPlanned:
    """``jobs`` jobs per version, for each of ``versions`` (full shas): ``total`` in all.

    ``in_place`` is True when the only version is profiled in the user's
    checkout rather than in a temporary worktree.
    """

    jobs: int
    versions: tuple[str, ...]
    total: int
    in_place: bool


@dataclass(frozen=True, slots=True)
class VersionStarted:
    version: str
    index: int
    count: int
    workdir: Path
    worktree: bool


@dataclass(frozen=True, slots=True)
class VersionFinished:
    version: str
    index: int
    count: int


@dataclass(frozen=True, slots=True)
class PhaseStarted:
    """A phase begins: ``pre_run`` (``detail`` is the command), ``before``,
    ``collect``, ``after`` or ``postprocess`` of ``unit`` in ``job``."""

    phase: str
    unit: str | None
    job: int | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class JobStarted:
    job: int
    total: int
    version: str
    spec: Job


@dataclass(frozen=True, slots=True)
class Repetition:
    """Run ``index`` (from 1) of ``total`` starts; warm-ups are counted separately."""

    job: int | None
    index: int
    total: int
    warmup: bool


@dataclass(frozen=True, slots=True)
class WorkloadStarted:
    """Workload ``index`` (from 1) of ``total`` made by generator ``generator`` starts.

    ``workload`` is its short label (``4000``, ``100x80``, a file name) and
    ``size`` its size (what becomes ``structure-unit-size``).
    """

    job: int | None
    index: int
    total: int
    generator: str
    workload: str
    size: int | float


@dataclass(frozen=True, slots=True)
class OutputLine:
    """A line written by a pre_run command or a profiled program (without its newline)."""

    job: int | None
    stream: str
    text: str


@dataclass(frozen=True, slots=True)
class ProfileWritten:
    job: int | None
    path: Path
    origin: str


@dataclass(frozen=True, slots=True)
class ProfileRegistered:
    job: int | None
    source: str
    minor: str
    checksum: str


@dataclass(frozen=True, slots=True)
class JobFinished:
    job: int
    total: int
    seconds: float


@dataclass(frozen=True, slots=True)
class JobFailed:
    job: int
    total: int
    reason: str
    exit_status: int | None = None


@dataclass(frozen=True, slots=True)
class MeasurementAdvice:
    """The runs of a time job varied a lot or the machine was busy: ``text`` says what to do (one line)."""

    job: int | None
    text: str


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The last event: ``status`` is ok, failed (some jobs failed), error or interrupted."""

    status: str
    written: int
    failed: int
    seconds: float


Event = (
    RunPlanned | VersionStarted | VersionFinished | PhaseStarted | JobStarted | Repetition | OutputLine
    | ProfileWritten | ProfileRegistered | JobFinished | JobFailed | RunFinished | WorkloadStarted
    | MeasurementAdvice
)

_DONE = object()


class EventStream:
    """Run ``call(*args, on_event=..., cancel=..., **kwargs)`` in a thread; iterate its events.

    Iterating yields every event and ends after the run; then :attr:`result`
    holds what ``call`` returned, or the exception it raised is re-raised.
    :meth:`cancel` asks the run to stop (its processes are killed, its
    worktrees removed) and makes it raise :class:`~perun_core.errors.Interrupted`.
    """

    def __init__(self, call: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._cancel = threading.Event()
        self._call = call
        self._args = args
        self._kwargs = kwargs
        self._thread: threading.Thread | None = None
        self.result: Any = None
        self.error: BaseException | None = None

    def start(self) -> EventStream:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="perun-run", daemon=True)
            self._thread.start()
        return self

    def _work(self) -> None:
        try:
            self.result = self._call(*self._args, on_event=self._queue.put, cancel=self._cancel, **self._kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the iterating thread
            self.error = exc
        finally:
            self._queue.put(_DONE)

    def __iter__(self) -> Iterator[Any]:
        self.start()
        while True:
            item = self._queue.get()
            if item is _DONE:
                break
            yield item
        if self.error is not None:
            raise self.error

    def cancel(self) -> None:
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
