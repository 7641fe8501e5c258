"""The porcelain of performance fuzzing and delta debugging: ``run_fuzzing``, ``deltadebug``.

:func:`run_fuzzing` checks everything it was given (the values of
:data:`FUZZ_PARAMS`, the seeds, the program, the output directory, the
collector and postprocessors of the profiles, the repository when
``register`` or ``add_to_matrix`` need one) before the program first runs,
then searches (:mod:`perun_core.fuzz.search`), reporting
:class:`~perun_core.fuzz.findings.FuzzStarted`, ``InputKept``, ``FuzzProgress``
and ``FuzzFinished`` to ``on_event``; setting ``cancel`` ends the search
early with the results so far (it does not raise).  Afterwards the best
inputs are profiled as pending profiles of the nearest perun repository
(:class:`ProfilesCollected`), registered with ``register``, and added to the
job matrix's workloads with ``add_to_matrix``.
"""

from __future__ import annotations

import contextlib
import shlex
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import ensure_writable_directory
from ..config import Config
from ..errors import NotPerunRepository, UsageError
from ..fuzz.deltadebug import DeltaResult, DeltaStep, deltadebug as shrink
from ..fuzz.options import DELTA_PARAMS, FUZZ_PARAMS
from ..fuzz.findings import (Finding, FindingAnalysed, FuzzFinished, FuzzProgress, FuzzResult, FuzzStarted,
                              InputKept, Verdict, compact_rules, format_cost)
from ..fuzz.output import growth_text, write_results
from ..fuzz.rules import rules
from ..fuzz.search import fuzz as search
from ..fuzz.setup import NEEDED, FuzzSettings, settings_from
from ..params import Param, convert_params
from ..runner.jobs import expand, unit_config
from ..runner.run import RunOptions, execute
from ..storage.repository import PerunRepository
from ..views.base import Series
from ..views.plotting import DEFAULT_THEME, render_lines
from .repository import add

__all__ = [
    "DELTA_PARAMS", "DeltaResult", "DeltaStep", "FUZZ_PARAMS", "Finding", "FindingAnalysed", "FuzzFinished",
    "FuzzForm", "FuzzProgress", "FuzzResult", "FuzzSettings", "FuzzStarted", "InputKept", "ProfilesCollected",
    "RuleInfo", "Verdict", "compact_rules", "deltadebug", "format_cost", "fuzz_form", "fuzz_rules", "growth_text", "run_fuzzing",
    "slowdown_plot",
]


@dataclass(frozen=True, slots=True)
class FuzzForm:
    """What a front end needs to build the fuzz form: the declaration of every field, and the names of those
    the search cannot start without (``needed``, in form order)."""

    name: str
    summary: str
    params: tuple[Param, ...]
    needed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RuleInfo:
    name: str
    kind: str
    summary: str
    params: tuple[Param, ...]


@dataclass(frozen=True, slots=True)
class ProfilesCollected:
    """Profiles of the best inputs were written (``paths``), and registered at ``registered`` commits."""

    paths: tuple[str, ...]
    registered: tuple[str, ...]
    minor: str | None


def fuzz_form() -> FuzzForm:
    return FuzzForm("fuzz", "Find inputs that make a program slow", FUZZ_PARAMS, tuple(name for name, _flag in NEEDED))


def fuzz_rules() -> list[RuleInfo]:
    """Every mutation rule, by name."""

    found = []
    for name in rules.names():
        rule = rules.get(name)
        found.append(RuleInfo(name, getattr(rule, "kind", "text"), str(getattr(rule, "summary", "")),
                              tuple(getattr(rule, "params", ()))))
    return found


def slowdown_plot(result: FuzzResult, *, width: int = 80, height: int = 15, theme: Any = None) -> str:
    """The best slow-down over fuzzing time as a terminal plot (ANSI text).

    The plotted values are the search's own measurements (each input against an ordinary one of its size, once):
    the title and axis say so, as the reported findings' ratios are re-measured side by side and differ.
    """

    steps_x: list[float] = []
    steps_y: list[float] = []
    for t, value in result.timeline:
        if steps_y:
            steps_x.append(t)
            steps_y.append(steps_y[-1])
        steps_x.append(t)
        steps_y.append(value)
    return render_lines([Series("best slow-down", steps_x, steps_y)], width=width, height=height,
                        theme=theme or DEFAULT_THEME, title="best slow-down over time, at equal size in the search",
                        xlabel="seconds", ylabel="x in the search")


def _stdin_command(cmd: str, args: str | None) -> str:
    """A command line reading the workload (its last argument) on standard input."""
    inner = f"{cmd} {args or ''}".strip() + ' < "$0"'
    return f"/bin/sh -c {shlex.quote('exec ' + inner)}"


def run_fuzzing(values: Mapping[str, Any] | FuzzSettings, *, on_event: Callable[[Any], None] | None = None,
         cancel: threading.Event | None = None, cwd: Path | str | None = None, repo: Any = None) -> FuzzResult:
    """Fuzz a program for slow inputs (see the module's docstring); the results, also written to the output dir.

    Raises FuzzError, InvalidParameter, UnknownUnit and, with ``register`` or
    ``add_to_matrix`` outside a perun repository, NotPerunRepository, all
    before the program runs.
    """

    settings = values if isinstance(values, FuzzSettings) else settings_from(values, cwd)
    emit = on_event or (lambda event: None)
    where = Path(cwd) if cwd is not None else Path.cwd()
    collector = unit_config("collector", settings.collector, None) if settings.profiles else None
    postprocessors = [unit_config("postprocessor", name, None) for name in settings.postprocessors]
    opened = None
    if repo is None and (settings.profiles or settings.register or settings.add_to_matrix):
        try:
            opened = repo = PerunRepository.discover(where)
        except NotPerunRepository:
            if settings.register or settings.add_to_matrix:
                raise
            repo = None
    try:
        _check_before_running(settings, repo)
        result = search(settings, cwd=where, on_event=emit, cancel=cancel)
        if repo is None and settings.profiles:
            result.notes.append("no perun repository here: the best inputs were not profiled")
        best = [f for f in result.best if not f.hang][:max(settings.profiles, 3)]
        if repo is not None and collector is not None and best and not (cancel is not None and cancel.is_set()):
            _profile(result, best[:settings.profiles], collector, postprocessors, repo, emit, cancel)
        if settings.add_to_matrix and best:
            _add_to_matrix(result, best, repo)
        write_results(result)
        return result
    finally:
        if opened is not None:
            opened.close()


def _writable_output_dir(output_dir: str | Path, cwd: Path | str | None) -> None:
    """An output directory that cannot be made is refused before the program runs, not after the work is done."""

    ensure_writable_directory((Path(cwd) if cwd is not None else Path.cwd()) / Path(output_dir).expanduser())


def _check_before_running(settings: FuzzSettings, repo: Any) -> None:
    """What is used only after fuzzing (the commit of the profiles, the job matrix) is checked before it starts."""
    _writable_output_dir(settings.output_dir, None)
    if repo is None:
        return
    if settings.minor:
        repo.resolve_minor(settings.minor)
    if settings.add_to_matrix:
        with contextlib.suppress(KeyError):  # a bad value is refused by loading, a missing one is no matrix yet
            Config.load(repo.local_config_path, kind="local").get("workloads")


def _profile(result: FuzzResult, best: list[Finding], collector: Any, postprocessors: list[Any], repo: Any,
             emit: Callable[[Any], None], cancel: threading.Event | None) -> None:
    s = result.settings
    cmd = _stdin_command(s.cmd, s.args) if s.stdin else s.cmd
    args = [] if s.stdin or not s.args else [s.args]
    workloads = [str(s.output_dir / f.file) for f in best]
    jobs = expand([cmd], args, workloads, [collector], postprocessors)
    options = RunOptions((s.minor,) if s.minor else (), False, True, None)
    run = execute(repo, jobs, options, cancel=cancel)
    result.profiles = [str(p.path) for p in run.profiles if not p.registered]
    for failure in run.failures:
        result.notes.append(f"profiling failed: {failure.message}")
    registered: list[str] = []
    if s.register and result.profiles:
        added = add(result.profiles, minor=s.minor, repo=repo)
        registered = sorted({a.minor for a in added})
        result.registered = [f"{a.source} at {a.minor[:7]}" for a in added]
    emit(ProfilesCollected(tuple(result.profiles), tuple(registered), s.minor))


def _add_to_matrix(result: FuzzResult, best: list[Finding], repo: Any) -> None:
    config = Config.load(repo.local_config_path, kind="local")
    try:
        existing = list(config.get("workloads") or [])
    except KeyError:
        existing = []
    root = Path(repo.root) if hasattr(repo, "root") else None
    added = []
    for finding in best:
        path = result.settings.output_dir / finding.file
        text = str(path)
        if root is not None:
            with contextlib.suppress(ValueError):
                text = str(path.relative_to(root))
        if text not in existing:
            existing.append(text)
            added.append(text)
    config.set("workloads", existing)
    config.save()
    result.matrix_workloads = added


def deltadebug(cmd: str, input_path: str | Path, values: Mapping[str, Any] | None = None, *,
               on_event: Callable[[Any], None] | None = None, cancel: threading.Event | None = None,
               cwd: Path | str | None = None) -> DeltaResult:
    """Shrink a slow input (ddmin over lines, then characters); ``values`` are those of :data:`DELTA_PARAMS`.

    Reports every accepted :class:`DeltaStep` to ``on_event``.  Raises
    FuzzError (missing input or output directory, program failing on the
    input) or InvalidParameter.
    """

    given = {k: v for k, v in (values or {}).items() if v is not None and v != ()}
    params = convert_params("deltadebugging", DELTA_PARAMS, given)
    if not params["output_dir"]:
        raise UsageError("deltadebugging: -o/--output-dir is required")
    _writable_output_dir(params["output_dir"], cwd)
    return shrink(cmd, input_path, params["output_dir"], args=params["args"], timeout=params["timeout"],
                  stdin=params["stdin"], metric=params["metric"], keep=params["keep"],
                  tolerance=params["tolerance"], cwd=cwd, on_event=on_event, cancel=cancel)


