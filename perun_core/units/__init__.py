"""Collectors and postprocessors: one protocol, explicit registries.

A *unit* is an object (an instance, a class with class attributes, or a
module) with

* ``name``: the registry key (``time``, ``normalizer``),
* ``summary``: one line for ``--help`` listings (optional ``description``
  for the full help of its command),
* ``params``: a sequence of :class:`~perun_core.params.Param`, the
  single declaration of its options (CLI, YAML ``params``, front-end forms),
* the phase functions.  Collectors have ``collect`` and postprocessors have
  ``postprocess``; both may have ``before`` and ``after``,
* optionally ``requirements()``: a list of
  :class:`~perun_core.units.requirements.Requirement` saying what the unit
  needs from the machine (compilers, profilers, kernel settings) and whether
  it is here; ``perun-core collect NAME --check`` reports them.

Every phase is called as ``phase(ctx, kwargs)`` with a :class:`UnitContext`
and a dict, and returns ``(status, message, kwargs)``, a
:class:`PhaseResult`: status 0 (:attr:`Status.OK`) lets the job go on with the
returned kwargs, anything else fails the job with ``message``.  For
collectors ``kwargs`` holds the converted parameters plus ``cmd``, ``args``,
``workload`` (strings) and ``argv`` (the command line as a list); after
``collect`` (or at the latest ``after``) it must hold ``profile``: a
:class:`~perun_core.profile.model.Profile` or a dict in the documented
form.  Postprocessors get the parameters and ``profile`` and return the new
``profile``; they may also set ``info``, a dict of extra keys for their entry
in the profile's ``postprocessors`` list (the analyses record the models they
had to leave out there, under ``skipped``; ``name`` and ``params`` cannot be
overridden).  A phase may also raise a :class:`~perun_core.errors.PerunError`
(the time collector raises :class:`~perun_core.errors.CollectionError` with
the exit status and stderr of the profiled command).

Built-in units are listed in :data:`collectors` and :data:`postprocessors` by
module path and imported on first use.  A registry may also know aliases
(``regression-analysis``, the original tool's spelling, for
``regression_analysis``): :meth:`Registry.get` accepts them, listings show
only the canonical names.  Third-party packages register units
through the entry-point group ``perun.units``: each entry point names a unit
object (or a class, which is instantiated without arguments); its ``kind``
attribute (``"collector"`` or ``"postprocessor"``), or else whether it has
``collect`` or ``postprocess``, picks the registry.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ..errors import Interrupted, UnitError
from ..params import Param, convert_params
from ..registry import Registry

__all__ = [
    "ENTRY_POINT_GROUP",
    "Collector",
    "Param",
    "PhaseResult",
    "Postprocessor",
    "Registry",
    "Status",
    "UnitContext",
    "call_phase",
    "collectors",
    "convert_params",
    "get_collector",
    "get_postprocessor",
    "ignore_event",
    "postprocessors",
    "registry",
]

ENTRY_POINT_GROUP = "perun.units"

#: kwargs keys the runner fills for collectors; parameters may not use them.
COLLECTOR_RESERVED = frozenset({"cmd", "args", "workload", "argv", "profile"})
POSTPROCESSOR_RESERVED = frozenset({"profile", "info"})


class Status(enum.IntEnum):
    OK = 0
    ERROR = 1


class PhaseResult(NamedTuple):
    """What every phase returns: unpacks like the documented triple."""

    status: int
    message: str
    kwargs: dict[str, Any]

    @classmethod
    def ok(cls, kwargs: dict[str, Any], message: str = "") -> PhaseResult:
        return cls(Status.OK, message, kwargs)

    @classmethod
    def error(cls, message: str, kwargs: dict[str, Any] | None = None) -> PhaseResult:
        return cls(Status.ERROR, message, kwargs if kwargs is not None else {})


def ignore_event(event: Any) -> None:
    """The ``emit`` of a context nobody listens to (the default): see :attr:`UnitContext.listened`."""


@dataclass
class UnitContext:
    """What a phase may use besides its kwargs.

    ``cwd`` is where the job runs (the working-tree root, or the temporary
    worktree of another commit); relative commands and workloads resolve
    there.  ``emit`` reports progress events (:func:`ignore_event` when nobody
    listens: see :attr:`listened`); ``cancelled`` is set when the
    run is being stopped: long phases check it (or call
    :meth:`check_cancelled`) and stop their processes.
    """

    cwd: Path
    emit: Callable[[Any], None] = ignore_event
    cancelled: threading.Event = field(default_factory=threading.Event)
    #: the job's number in the run (from 1), None outside a run
    job: int | None = None
    #: the job as text (collector and command line), for error messages
    label: str = ""
    #: seconds a collector with a ``timeout`` parameter gets when the job does not set one (``execute.timeout``)
    default_timeout: float | None = None

    @property
    def listened(self) -> bool:
        """Whether anyone receives what :attr:`emit` reports.  An event nobody hears need not be made: the
        event classes (:mod:`perun_core.events`) are not even imported by a command that makes none (creating
        the frozen dataclasses costs about 10 ms)."""
        return self.emit is not ignore_event

    def check_cancelled(self) -> None:
        if self.cancelled.is_set():
            raise Interrupted("cancelled")

    def repetition(self, index: int, total: int, *, warmup: bool = False) -> None:
        """Report that run ``index`` (from 1) of ``total`` starts."""
        # lazy: see `listened`
        from ..events import Repetition

        self.emit(Repetition(self.job, index, total, warmup))

    def output(self, stream: str, text: str) -> None:
        """Report one line the profiled program wrote (``stream``: stdout or stderr)."""
        # lazy: see `listened`
        from ..events import OutputLine

        self.emit(OutputLine(self.job, stream, text))


@runtime_checkable
class Collector(Protocol):
    """Structural type of a collector (``before`` and ``after`` are optional)."""

    name: str
    summary: str
    params: Sequence[Param]

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult: ...


@runtime_checkable
class Postprocessor(Protocol):
    """Structural type of a postprocessor (``before`` and ``after`` are optional)."""

    name: str
    summary: str
    params: Sequence[Param]

    def postprocess(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult: ...


def call_phase(unit: Any, phase: str, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult | None:
    """Run ``unit.<phase>`` if the unit has it; None when it does not.

    The result is normalized to a :class:`PhaseResult`; a phase returning
    something else is a :class:`UnitError` naming the unit.
    """
    function = getattr(unit, phase, None)
    if function is None:
        return None
    ctx.check_cancelled()
    result = function(ctx, kwargs)
    if isinstance(result, tuple) and len(result) == 3 and isinstance(result[2], dict):
        status, message, new_kwargs = result
        return PhaseResult(int(status), str(message or ""), new_kwargs)
    raise UnitError(f"{unit.name}.{phase}() returned {type(result).__name__}; expected (status, message, kwargs)")


def _is_collector(unit: Any) -> bool:
    """Whether an entry point's unit is a collector: its ``kind`` says so, or else it has ``collect``."""
    kind = getattr(unit, "kind", None)
    if kind in ("collector", "postprocessor"):
        return kind == "collector"
    return callable(getattr(unit, "collect", None))


collectors: Registry[Any] = Registry("collector", "collect", COLLECTOR_RESERVED, {
    "time": "perun_core.collect.time:TimeCollector",
    "memory": "perun_core.collect.memory:MemoryCollector",
    "trace": "perun_core.collect.trace:TraceCollector",
    "perf": "perun_core.collect.perf:PerfCollector",
    "callgrind": "perun_core.collect.callgrind:CallgrindCollector",
    "pytrace": "perun_core.collect.pytrace:PyTraceCollector",
    "pymemory": "perun_core.collect.pymemory:PyMemoryCollector",
    "regex": "perun_core.collect.regex:RegexCollector",
}, group=ENTRY_POINT_GROUP, selects=_is_collector)
postprocessors: Registry[Any] = Registry("postprocessor", "postprocess", POSTPROCESSOR_RESERVED, {
    "normalizer": "perun_core.postprocess.normalizer:Normalizer",
    "regression_analysis": "perun_core.postprocess.regression_analysis:RegressionAnalysis",
    "clusterizer": "perun_core.postprocess.clusterizer:Clusterizer",
    "filter": "perun_core.postprocess.filter:Filter",
    "regressogram": "perun_core.postprocess.regressogram:Regressogram",
    "moving_average": "perun_core.postprocess.moving_average:MovingAverage",
    "kernel_regression": "perun_core.postprocess.kernel_regression:KernelRegression",
}, aliases={
    "regression-analysis": "regression_analysis",
    "moving-average": "moving_average",
    "kernel-regression": "kernel_regression",
}, group=ENTRY_POINT_GROUP, selects=lambda unit: not _is_collector(unit))

_REGISTRIES = {"collector": collectors, "postprocessor": postprocessors}


def registry(kind: str) -> Registry:
    """The registry of ``kind`` ("collector" or "postprocessor")."""
    try:
        return _REGISTRIES[kind]
    except KeyError:
        raise UnitError(f"unknown kind of unit '{kind}'; expected collector or postprocessor") from None


def get_collector(name: str) -> Any:
    return collectors.get(name)


def get_postprocessor(name: str) -> Any:
    return postprocessors.get(name)


def load_entry_points(*, force: bool = False) -> None:
    """Register the units of the ``perun.units`` entry-point group (once; again with ``force``).

    A unit that fails to import is recorded in both registries'
    ``load_errors``, one that fails to register in its own, instead of
    breaking the listing of the others.
    """
    for reg in _REGISTRIES.values():
        reg.load_entry_points(force=force)
