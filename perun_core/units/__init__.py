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
import importlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ..errors import Interrupted, UnitError, UnknownUnit
from ..params import Param, convert_params

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


@dataclass
class UnitContext:
    """What a phase may use besides its kwargs.

    ``cwd`` is where the job runs (the working-tree root, or the temporary
    worktree of another commit); relative commands and workloads resolve
    there.  ``emit`` reports progress events; ``cancelled`` is set when the
    run is being stopped: long phases check it (or call
    :meth:`check_cancelled`) and stop their processes.
    """

    cwd: Path
    emit: Callable[[Any], None] = lambda event: None
    cancelled: threading.Event = field(default_factory=threading.Event)
    #: the job's number in the run (from 1), None outside a run
    job: int | None = None
    #: the job as text (collector and command line), for error messages
    label: str = ""
    #: seconds a collector with a ``timeout`` parameter gets when the job does not set one (``execute.timeout``)
    default_timeout: float | None = None

    def check_cancelled(self) -> None:
        if self.cancelled.is_set():
            raise Interrupted("cancelled")

    def repetition(self, index: int, total: int, *, warmup: bool = False) -> None:
        """Report that run ``index`` (from 1) of ``total`` starts."""
        from ..runner.events import Repetition

        self.emit(Repetition(self.job, index, total, warmup))

    def output(self, stream: str, text: str) -> None:
        """Report one line the profiled program wrote (``stream``: stdout or stderr)."""
        from ..runner.events import OutputLine

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


class Registry:
    """Units of one kind (collector or postprocessor) by name."""

    def __init__(self, kind: str, phase: str, reserved: frozenset[str], builtins: Mapping[str, str],
                 aliases: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self.phase = phase
        self.reserved = reserved
        self._lazy: dict[str, str] = dict(builtins)
        #: other spellings of registered names (alias -> name)
        self.aliases: dict[str, str] = dict(aliases or {})
        self._units: dict[str, Any] = {}
        #: entry-point names that failed to load, with the reason
        self.load_errors: dict[str, str] = {}
        self._lock = threading.RLock()

    def register(self, unit: Any, *, replace: bool = False) -> Any:
        """Add ``unit``; UnitError if it does not look like a unit of this kind or its name is taken."""
        name = getattr(unit, "name", None)
        if not isinstance(name, str) or not name or name != name.strip() or " " in name:
            raise UnitError(f"cannot register {unit!r} as a {self.kind}: it needs a 'name' without spaces")
        if not callable(getattr(unit, self.phase, None)):
            raise UnitError(f"cannot register {self.kind} '{name}': it has no {self.phase}() phase")
        params = getattr(unit, "params", ())
        if not all(isinstance(p, Param) for p in params):
            raise UnitError(f"cannot register {self.kind} '{name}': 'params' must be a sequence of Param")
        clashes = sorted({p.name for p in params} & self.reserved)
        if clashes:
            raise UnitError(f"cannot register {self.kind} '{name}': parameter name '{clashes[0]}' is reserved")
        with self._lock:
            if not replace and (name in self._units or name in self._lazy):
                raise UnitError(f"a {self.kind} named '{name}' is already registered")
            self._lazy.pop(name, None)
            self._units[name] = unit
        return unit

    def unregister(self, name: str) -> None:
        with self._lock:
            self._units.pop(name, None)
            self._lazy.pop(name, None)

    def names(self) -> list[str]:
        """Every registered name, sorted (third-party entry points included)."""
        load_entry_points()
        with self._lock:
            return sorted({*self._lazy, *self._units})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.names() or self.aliases.get(name) in self.names())

    def get(self, name: str) -> Any:
        """The unit called ``name`` (or an alias of it); :class:`UnknownUnit` listing the known ones otherwise."""
        with self._lock:
            if name not in self._units and name not in self._lazy and name in self.aliases:
                name = self.aliases[name]
            if name in self._units:
                return self._units[name]
            target = self._lazy.get(name)
        if target is None:
            load_entry_points()
            with self._lock:
                if name in self._units:
                    return self._units[name]
            if name in self.load_errors:
                raise UnitError(f"{self.kind} '{name}' could not be loaded: {self.load_errors[name]}")
            raise UnknownUnit(self.kind, name, self.names())
        module_name, _, attribute = target.partition(":")
        unit = _instantiate(getattr(importlib.import_module(module_name), attribute))
        with self._lock:
            if name in self._lazy:
                self._lazy.pop(name)
                self._units[name] = unit
            return self._units.get(name, unit)


def _instantiate(obj: Any) -> Any:
    return obj() if isinstance(obj, type) else obj


collectors = Registry("collector", "collect", COLLECTOR_RESERVED, {
    "time": "perun_core.collect.time:TimeCollector",
    "memory": "perun_core.collect.memory:MemoryCollector",
    "trace": "perun_core.collect.trace:TraceCollector",
    "perf": "perun_core.collect.perf:PerfCollector",
    "callgrind": "perun_core.collect.callgrind:CallgrindCollector",
    "pytrace": "perun_core.collect.pytrace:PyTraceCollector",
    "pymemory": "perun_core.collect.pymemory:PyMemoryCollector",
    "regex": "perun_core.collect.regex:RegexCollector",
})
postprocessors = Registry("postprocessor", "postprocess", POSTPROCESSOR_RESERVED, {
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
})

_REGISTRIES = {"collector": collectors, "postprocessor": postprocessors}
_entry_points_state = {"loaded": False}
_entry_points_lock = threading.Lock()


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
    """Register the units of the ``perun.units`` entry-point group (once).

    A unit that fails to import or register is recorded in its registry's
    ``load_errors`` (or, when its kind is unknown, in both) instead of
    breaking the listing of the others.
    """
    with _entry_points_lock:
        if _entry_points_state["loaded"] and not force:
            return
        _entry_points_state["loaded"] = True
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            unit = _instantiate(point.load())
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break the others
            for reg in _REGISTRIES.values():
                reg.load_errors[point.name] = f"{type(exc).__name__}: {exc}"
            continue
        kind = getattr(unit, "kind", None)
        if kind not in _REGISTRIES:
            kind = "collector" if callable(getattr(unit, "collect", None)) else "postprocessor"
        reg = _REGISTRIES[kind]
        if getattr(unit, "name", None) in reg._units:
            continue  # registered already (by a forced reload or explicitly)
        try:
            reg.register(unit)
        except UnitError as exc:
            reg.load_errors[point.name] = exc.message
