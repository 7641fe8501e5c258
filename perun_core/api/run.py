"""The porcelain of collecting and postprocessing: ``collect``, ``run_job``,
``run_matrix``, ``postprocess``.

Like :mod:`perun_core.api`, these are plain functions returning dataclasses;
nothing prints, prompts or exits.  Progress is reported as typed events
(:mod:`perun_core.events`) to ``on_event``; to consume them as an
iterator from another thread wrap a call in :func:`stream`.  ``cancel`` (a
:class:`threading.Event`) stops a run from another thread: the profiled
process group is killed, the temporary worktree removed and
:class:`~perun_core.errors.Interrupted` raised.

By default a run whose jobs failed raises after all jobs ran: the single
job's :class:`~perun_core.errors.CollectionError`, or
:class:`~perun_core.errors.JobsFailed`; the exception's ``result`` holds the
:class:`~perun_core.runner.run.RunResult` with the profiles that were
written.  Pass ``raise_on_failure=False`` to get the result instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

from ..check.noise import profile_advice
from ..units import registry
from ._repo import using as _using
from ..errors import JobsFailed, PerunError
from ..storage.repository import PerunRepository
from ..events import EventStream
from ..runner.jobs import Job, UnitConfig, expand, matrix_from_config, unit_config, unit_configs
from ..runner.run import RunOptions, RunResult, WrittenProfile, execute, parse_shard
from ..params import Param
from .postprocessing import PostprocessResult, postprocess  # re-exported: postprocessby lives there

__all__ = [
    "EventStream",
    "PostprocessResult",
    "RunResult",
    "UnitInfo",
    "WrittenProfile",
    "collect",
    "postprocess",
    "run_job",
    "run_matrix",
    "stream",
    "units",
]

UnitEntry = str | tuple[str, Mapping[str, Any] | None] | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class UnitInfo:
    """A registered unit as front ends list it; ``params`` is its declaration."""

    name: str
    kind: str
    summary: str
    description: str
    params: tuple[Param, ...]


def units(kind: str) -> list[UnitInfo]:
    """Every registered collector (``kind="collector"``) or postprocessor, by name."""

    found = []
    reg = registry(kind)
    for name in reg.names():
        unit = reg.get(name)
        summary = str(getattr(unit, "summary", "") or "")
        found.append(UnitInfo(name, kind, summary, str(getattr(unit, "description", "") or summary),
                              tuple(getattr(unit, "params", ()))))
    return found


def stream(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> EventStream:
    """Run ``function(*args, **kwargs)`` (one of this module's) in a thread; iterate its events."""
    return EventStream(function, *args, **kwargs)


def _options(minor_versions: Sequence[str], crawl_parents: bool, force_dirty: bool, output_template: str | None,
             shard: str | tuple[int, int] | None = None) -> RunOptions:
    if shard is None:
        split = None
    else:
        split = parse_shard(shard if isinstance(shard, str) else f"{shard[0]}/{shard[1]}")
    return RunOptions(tuple(minor_versions), crawl_parents, force_dirty, output_template, split, profile_advice)


def _finish(result: RunResult, raise_on_failure: bool) -> RunResult:
    if result.failures and raise_on_failure:
        error: PerunError = result.failures[0] if len(result.failures) == 1 else JobsFailed(result.failures, result.total)
        error.result = result  # type: ignore[attr-defined]
        raise error
    return result


class _RunKeywords(TypedDict, total=False):
    """The keywords :func:`collect`, :func:`run_job` and :func:`run_matrix` take (defaults: :class:`_RunCall`)."""

    minor_versions: Sequence[str]
    crawl_parents: bool
    force_dirty: bool
    output_template: str | None
    shard: str | tuple[int, int] | None
    raise_on_failure: bool
    on_event: Callable[[Any], None] | None
    cancel: threading.Event | None
    repo: PerunRepository | None
    cwd: Path | str | None


@dataclass(frozen=True, slots=True)
class _RunCall:
    """One call of collect, run_job or run_matrix: its keywords with their defaults (unknown ones: TypeError)."""

    minor_versions: Sequence[str] = ()
    crawl_parents: bool = False
    force_dirty: bool = False
    output_template: str | None = None
    shard: str | tuple[int, int] | None = None
    raise_on_failure: bool = True
    on_event: Callable[[Any], None] | None = None
    cancel: threading.Event | None = None
    repo: PerunRepository | None = None
    cwd: Path | str | None = None


def _execute(make_jobs: Callable[[PerunRepository], list[Job]], keywords: _RunKeywords) -> RunResult:
    """The set-up the three share: check the keywords, open the repository, make the jobs, run them."""
    call = _RunCall(**keywords)
    options = _options(call.minor_versions, call.crawl_parents, call.force_dirty, call.output_template, call.shard)
    with _using(call.repo, call.cwd) as r:
        result = execute(r, make_jobs(r), options, on_event=call.on_event, cancel=call.cancel)
    return _finish(result, call.raise_on_failure)


def collect(
    collector: str,
    cmds: Sequence[str],
    args: Sequence[str] = (),
    workloads: Sequence[str] = (),
    params: Mapping[str, Any] | None = None,
    **keywords: Unpack[_RunKeywords],
) -> RunResult:
    """Collect profiles of ``cmds x args x workloads`` with one collector (spec §3.3.1).

    ``params`` are the collector's parameters (YAML-like values, converted
    and checked against its declaration).  No postprocessing.  The keywords
    are those of :func:`run_matrix`.  Raises UnknownUnit, InvalidParameter,
    InvalidRevision, DirtyWorkingTree, PreRunFailed, CollectionError /
    JobsFailed, Interrupted.
    """
    config = unit_config("collector", collector, params)
    return _execute(lambda r: expand(cmds, args, workloads, [config]), keywords)


def run_job(
    cmds: Sequence[str],
    args: Sequence[str] = (),
    workloads: Sequence[str] = (),
    collectors: Sequence[UnitEntry] = (),
    postprocessors: Sequence[UnitEntry] = (),
    **keywords: Unpack[_RunKeywords],
) -> RunResult:
    """Run one batch of jobs given explicitly (spec §3.2.11).

    Units are names, ``(name, params)`` pairs or ``{name, params}`` mappings.
    The keywords are those of :func:`run_matrix`.
    """
    collector_configs = unit_configs("collector", collectors)
    postprocessor_configs = unit_configs("postprocessor", postprocessors)
    return _execute(lambda r: expand(cmds, args, workloads, collector_configs, postprocessor_configs), keywords)


def run_matrix(**keywords: Unpack[_RunKeywords]) -> RunResult:
    """Run the job matrix of the configuration (spec §3.2.12, §7.3).

    ``minor_versions`` (default HEAD, or the working tree) and
    ``crawl_parents`` choose the commits; ``force_dirty`` runs in a dirty
    working tree; ``output_template`` names the profiles (default
    ``format.output_profile_template``).  ``shard`` ("K/N" or (K, N)) runs
    only the K-th of N deterministic, contiguous slices of commits x jobs,
    for N CI jobs sharing one run; the N slices together are the whole run.
    ``raise_on_failure=False`` returns the failures in the result instead of
    raising them.  ``on_event``, ``cancel``, ``repo`` and ``cwd`` as
    everywhere in the porcelain.
    """
    return _execute(lambda r: matrix_from_config(r.config, r.local_config_path), keywords)
