"""The porcelain of degradation checks: ``check_head``, ``check_all``, ``check_profiles``, ``install_hook``.

Like :mod:`perun_core.api`, plain functions returning dataclasses; nothing
prints, prompts or exits.  Progress goes to ``on_event`` as the typed events
of :mod:`perun_core.check.events`; ``cancel`` (a :class:`threading.Event`)
stops a check between pairs with :class:`~perun_core.errors.Interrupted`.

Which methods run is decided by the strategy of the configuration (see
:mod:`perun_core.check.strategies`) unless ``methods`` names them.  Results
of ``check_head`` and ``check_all`` are stored per version (see
:mod:`perun_core.storage.changes`) for ``status``, ``log`` and the TUI;
:func:`stored_check` reads them back.

The engine (pairing, strategies, storing) is :mod:`perun_core.check.session`
and the report types :mod:`perun_core.check.report`; this module opens the
repository and hands in how missing profiles are collected.  The report's
forms for a front end (:func:`tree_lines`, :func:`json_records`,
:func:`junit_xml`) are re-exported from :mod:`perun_core.check.output`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from ..check import get_method, method_names, methods_registry
from ..check.output import format_value, json_records, junit_xml, markdown, tree_lines
from ..check.pairing import Pairing
from ..check.report import FAIL_ON, CheckReport, PairReport, VersionReport
from ..check.session import DOUBTFUL, HISTORY_WINDOW, Collect, check_files, confirm_runs_checked, emitter, run_versions
from ..params import Param
from ..storage.lookup import sort_key_of
from ..storage.repository import PerunRepository
from ._repo import using as _using, using_if_any

if TYPE_CHECKING:  # pragma: no cover
    from ..check.hook import HookResult

__all__ = [
    "DOUBTFUL",
    "FAIL_ON",
    "MethodInfo",
    "check_method",
    "check_methods",
    "matrix_commands",
    "HISTORY_WINDOW",
    "CheckReport",
    "PairReport",
    "VersionReport",
    "check_all",
    "check_head",
    "check_profiles",
    "install_hook",
    "json_records",
    "format_value",
    "junit_xml",
    "markdown",
    "stored_check",
    "tree_lines",
    "uninstall_hook",
]


def _collector(repo: PerunRepository) -> Collect:
    """How a check collects missing profiles: the job matrix run for the versions, what it wrote registered."""

    def collect(versions: list[str], on_event: Callable[[Any], None],
                cancel: threading.Event | None) -> tuple[int, list[str]]:
        # lazy: keeps `perun-core check profiles` light
        from .repository import add
        # lazy: keeps `perun-core check profiles` light
        from .run import run_matrix

        result = run_matrix(minor_versions=versions, raise_on_failure=False, on_event=on_event, cancel=cancel,
                            repo=repo)
        for written in result.profiles:
            if not written.registered and written.path.exists():
                add([str(written.path)], minor=written.origin, repo=repo)
        return len(result.profiles), [failure.message for failure in result.failures]

    return collect


# -- the porcelain ---------------------------------------------------------------------

class _CheckKeywords(TypedDict, total=False):
    """The keywords :func:`check_head` and :func:`check_all` take (their defaults: :class:`_CheckCall`)."""

    methods: Sequence[str | Mapping[str, Any]] | None
    compute_missing: bool
    store: bool
    confirm: bool | str | None
    confirm_runs: int
    include_pending: bool
    on_event: Callable[[Any], None] | None
    cancel: threading.Event | None
    repo: PerunRepository | None
    cwd: Path | str | None


@dataclass(frozen=True, slots=True)
class _CheckCall:
    """One call of check_head or check_all: its keywords, with their defaults (unknown ones are a TypeError)."""

    methods: Sequence[str | Mapping[str, Any]] | None = None
    compute_missing: bool = False
    store: bool = True
    confirm: bool | str | None = DOUBTFUL
    confirm_runs: int = 7
    include_pending: bool = True
    on_event: Callable[[Any], None] | None = None
    cancel: threading.Event | None = None
    repo: PerunRepository | None = None
    cwd: Path | str | None = None


def check_head(revision: str | None = None, **keywords: Unpack[_CheckKeywords]) -> CheckReport:
    """Check every profile of ``revision`` (default HEAD) against its baseline (spec §3.2.14).

    Registered profiles and the pending ones made at ``revision`` are
    checked; ``include_pending=False`` keeps to registered ones (see
    :mod:`perun_core.check.pairing` for how pending profiles pair).

    ``methods`` overrides the configured strategy; ``compute_missing`` runs
    the job matrix first for the version and its first parent when they lack
    profiles of it; ``store=False`` keeps the results out of the repository.
    ``confirm=True`` re-runs the jobs of time-based changes interleaved,
    ``confirm_runs`` runs a side (default 7), and keeps only what they repeat
    (see :mod:`perun_core.check.confirm`); ``confirm=None`` does so when the
    job matrix has time jobs (as the TUI does); the default, ``"doubtful"``,
    re-runs only the changes a busy machine made Maybe (so the load does not
    decide a verdict); ``False`` re-runs nothing.  ``on_event``, ``cancel``,
    ``repo`` and ``cwd`` as everywhere in the porcelain.  Raises
    InvalidRevision, ConfigError (bad strategy), UnknownUnit (unknown method),
    IncomparableProfiles, UsageError (bad ``confirm_runs``), Interrupted.
    """
    return _check("head", revision, _CheckCall(**keywords))


def check_all(revision: str | None = None, **keywords: Unpack[_CheckKeywords]) -> CheckReport:
    """Check every version from ``revision`` (default HEAD) back that has profiles (spec §3.2.15).

    Versions come newest first, as ``log`` lists them.  The keywords are those of :func:`check_head`.
    """
    return _check("all", revision, _CheckCall(**keywords))


def _check(kind: str, revision: str | None, call: _CheckCall) -> CheckReport:
    """The set-up both share: open the repository, resolve ``revision``, pair, hand over to the session.

    ``kind`` "head" checks ``revision`` alone (collecting for it and its first parent); "all" checks
    every version of its history that has profiles (collecting for all of them).
    """

    emit = emitter(call.on_event)
    with _using(call.repo, call.cwd) as r:
        start = r.resolve_minor(revision)
        if kind == "head":
            pairing = Pairing(r, sort_key=sort_key_of(r), include_pending=call.include_pending)

            def targets() -> list[str]:
                return [start]

            def collect_for() -> list[str]:
                return [start, *pairing.parents(start)[:1]]
        else:
            history = list(r.vcs.walk_minor_versions(start))
            parents = {v.checksum: tuple(v.parents) for v in history}
            pairing = Pairing(r, parents, sort_key=sort_key_of(r), include_pending=call.include_pending)
            all_versions = [v.checksum for v in history]

            def targets() -> list[str]:
                pending = pairing.versions_with_pending()
                return [minor for minor in all_versions if minor in pending or r.has_index(minor)]

            def collect_for() -> list[str]:
                return all_versions

        return run_versions(kind, r, targets, pairing, call.methods, call.compute_missing, call.store, emit,
                            call.cancel, collect_for, _collector(r), call.confirm,
                            confirm_runs_checked(call.confirm_runs))


def check_profiles(
    baseline: str,
    target: str,
    *,
    minor: str | None = None,
    methods: Sequence[str | Mapping[str, Any]] | None = None,
    workers: int = 1,
    confirm: bool | str = DOUBTFUL,
    confirm_runs: int = 7,
    on_event: Callable[[Any], None] | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> CheckReport:
    """Check two looked-up profiles (``i@i``, ``i@p``, names, paths; spec §3.2.16).

    When both profiles name a commit of the repository (registered there,
    or recording it as their origin), ``confirm`` and ``confirm_runs``
    re-measure time-based changes as :func:`check_head` does, so the same
    pair gets the same verdict whichever way it is checked.

    Plain files work outside a perun repository too (then only the shared
    configuration applies).  ``workers=2`` lets two processes share the work
    for two profile files (it forks: only for single-threaded callers such
    as the command line).  Raises ProfileNotFound, InvalidProfile,
    IncomparableProfiles (e.g. different types), ConfigError, UnknownUnit.
    Profiles without any uid in common give their NotInBaseline /
    NotInTarget findings and a :class:`NothingInCommon` message in
    ``errors``.
    """

    emit = emitter(on_event)
    with using_if_any(repo, cwd) as opened:
        return check_files(opened, baseline, target, minor=minor, methods=methods, workers=workers, emit=emit,
                           confirm=confirm, confirm_runs=confirm_runs_checked(confirm_runs))


def stored_check(
    revision: str | None = None, *, repo: PerunRepository | None = None, cwd: Path | str | None = None
) -> VersionReport | None:
    """The findings the last check of ``revision`` (default HEAD) stored, or None if it was never checked."""
    # lazy: keeps `perun-core check profiles` light
    from ..storage.changes import read_pairs

    with _using(repo, cwd) as r:
        minor = r.resolve_minor(revision)
        records = read_pairs(r, minor)
        if records is None:
            return None
        pairs = tuple(PairReport.from_record(record) for record in records if isinstance(record, dict))
        return VersionReport(minor, r.vcs.minor_info(minor), pairs)


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """A registered check method as front ends list it; ``params`` is its declaration."""

    name: str
    summary: str
    description: str
    aliases: tuple[str, ...]
    params: tuple[Param, ...]
    uses_history: bool


def check_method(name: str) -> MethodInfo:
    """The method ``name`` (full name, short name or alias); UnknownUnit listing the known ones."""
    import sys

    method = get_method(name)
    description = str(getattr(method, "description", "") or "")
    module = type(method).__module__
    if not description and module.startswith("perun_core.check"):
        description = (sys.modules[module].__doc__ or "").strip()
    aliases = tuple(sorted(alias for alias, owner in methods_registry.aliases.items() if owner == method.name))
    return MethodInfo(method.name, str(getattr(method, "summary", "") or ""), description, aliases,
                      tuple(getattr(method, "params", ()) or ()), bool(getattr(method, "uses_history", False)))


def check_methods() -> list[MethodInfo]:
    """Every registered check method, by name."""

    return [check_method(name) for name in method_names()]


def matrix_commands(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> list[str]:
    """Every command line collecting with the job matrix would run: pre_run, external generators, the jobs.

    Shown to the user before they agree to a hook that runs them after each commit.
    """
    # lazy: keeps `perun-core check profiles` light
    from ..runner.generators import generators_from_config
    # lazy: keeps `perun-core check profiles` light
    from ..runner.jobs import matrix_from_config

    with _using(repo, cwd) as r:
        config = r.config
        commands: list[str] = []
        pre_run = config.get_or("execute.pre_run", []) or []
        commands += [str(c) for c in (pre_run if isinstance(pre_run, list) else [pre_run])]
        path = getattr(getattr(config, "local", None), "path", None)
        for generator in generators_from_config(config, path).values():
            if generator.type == "external" and generator.option("command"):
                commands.append(str(generator.option("command")))
        # an empty matrix is allowed here: the hook then collects nothing until 'cmds' is configured
        jobs = matrix_from_config(config, path) if config.get_or("cmds") else []
        for job in jobs:
            if job.command_line not in commands:
                commands.append(job.command_line)
        return commands


def install_hook(
    *, command: str | None = None, repo: PerunRepository | None = None, cwd: Path | str | None = None
) -> HookResult:
    """Install the post-commit hook that collects and checks each new commit (idempotent).

    ``command`` is how the hook calls perun-core (default: this Python with
    the CLI module).  Raises HookError.
    """
    # lazy: keeps `perun-core check profiles` light
    from ..check.hook import install

    with _using(repo, cwd) as r:
        return install(r, command)


def uninstall_hook(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> HookResult:
    """Remove perun's block from the post-commit hook."""
    # lazy: keeps `perun-core check profiles` light
    from ..check.hook import uninstall

    with _using(repo, cwd) as r:
        return uninstall(r)
