"""The porcelain of degradation checks: ``check_head``, ``check_all``, ``check_profiles``, ``install_hook``.

Like :mod:`perun_core.api`, plain functions returning dataclasses; nothing
prints, prompts or exits.  Progress goes to ``on_event`` as the typed events
of :mod:`perun_core.check.events`; ``cancel`` (a :class:`threading.Event`)
stops a check between pairs with :class:`~perun_core.errors.Interrupted`.

Which methods run is decided by the strategy of the configuration (see
:mod:`perun_core.check.strategies`) unless ``methods`` names them (a name,
or ``{"method": name, "params": {...}}`` to give it parameters);
:func:`check_methods` lists the methods with their declared parameters.  Results
of ``check_head`` and ``check_all`` are stored per version (see
:mod:`perun_core.storage.changes`) for ``status``, ``log`` and the TUI;
:func:`stored_check` reads them back.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..check.events import (
    CheckFinished,
    CheckStarted,
    Notice,
    CollectionEvent,
    CollectionFinished,
    CollectionStarted,
    PairChecked,
    VersionFinished,
    VersionStarted,
)
from ..check.pairing import ProfileRef
from ..check.results import Finding, PerformanceChange
from ..errors import Interrupted, NothingInCommon
from ..params import Param
from ..storage.repository import PerunRepository

if TYPE_CHECKING:  # pragma: no cover
    from ..check.data import ProfileData
    from ..check.hook import HookResult
    from ..check.pairing import Pairing, ProfileCache
    from ..check.strategies import Strategy
    from ..vcs import MinorVersion

__all__ = [
    "FAIL_ON",
    "CheckReport",
    "MethodInfo",
    "PairReport",
    "VersionReport",
    "check_all",
    "check_head",
    "check_method",
    "check_methods",
    "check_profiles",
    "install_hook",
    "stored_check",
    "uninstall_hook",
]

#: Values of ``fail_on``: which findings make a check "failed" (exit status 3 in the CLI).
FAIL_ON = ("degradation", "maybe", "never")
#: Older versions of a configuration handed to history-aware methods.
HISTORY_WINDOW = 20


@dataclass(frozen=True, slots=True)
class PairReport:
    """One checked pair of profiles: which methods ran and what they found."""

    baseline: ProfileRef
    target: ProfileRef
    methods: tuple[str, ...]
    findings: tuple[Finding, ...]
    errors: tuple[str, ...] = ()

    @property
    def degradations(self) -> list[Finding]:
        return [f for f in self.findings if f.result.is_degradation and not f.result.is_maybe]

    @property
    def optimizations(self) -> list[Finding]:
        return [f for f in self.findings if f.result.is_optimization and not f.result.is_maybe]

    def to_record(self) -> dict[str, Any]:
        findings = []
        for f in self.findings:
            record = {"method": f.method, **f.to_record()}
            if f.reason:
                record["reason"] = f.reason
            findings.append(record)
        return {"baseline": self.baseline.to_record(), "target": self.target.to_record(),
                "methods": list(self.methods), "findings": findings, "errors": list(self.errors)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> PairReport:
        findings = []
        for item in record.get("findings", []):
            with contextlib.suppress(ValueError, KeyError, TypeError):
                findings.append(Finding.from_record(item))
        return cls(ProfileRef.from_record(record.get("baseline", {})), ProfileRef.from_record(record.get("target", {})),
                   tuple(record.get("methods", [])), tuple(findings), tuple(record.get("errors", [])))


@dataclass(frozen=True, slots=True)
class VersionReport:
    """The pairs checked for one target version (``minor`` None for ``check profiles`` of files).

    ``unpaired`` lists target profiles for which no baseline was found.
    """

    minor: str | None
    version: MinorVersion | None
    pairs: tuple[PairReport, ...]
    unpaired: tuple[ProfileRef, ...] = ()


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Everything one check found; ``errors`` are problems that make the check fail (exit 1)."""

    command: str
    versions: tuple[VersionReport, ...]
    collected: tuple[str, ...] = ()
    errors: tuple[str, ...] = field(default=())

    def findings(self) -> Iterator[tuple[VersionReport, PairReport, Finding]]:
        for version in self.versions:
            for pair in version.pairs:
                for finding in pair.findings:
                    yield version, pair, finding

    def count(self, predicate: Callable[[PerformanceChange], bool]) -> int:
        return sum(1 for _, _, f in self.findings() if predicate(f.result))

    @property
    def degradations(self) -> int:
        return self.count(lambda r: r.is_degradation and not r.is_maybe)

    @property
    def optimizations(self) -> int:
        return self.count(lambda r: r.is_optimization and not r.is_maybe)

    @property
    def pairs(self) -> int:
        return sum(len(v.pairs) for v in self.versions)

    @property
    def pending_pairs(self) -> int:
        """Pairs in which the baseline or the target is a pending profile."""
        return sum(1 for v in self.versions for p in v.pairs if p.baseline.pending or p.target.pending)

    def failed(self, fail_on: str = "degradation") -> bool:
        """Whether a finding crosses ``fail_on``: degradation (certain ones), maybe (also Maybe), never."""
        if fail_on not in FAIL_ON:
            from ..errors import UsageError

            raise UsageError(f"--fail-on '{fail_on}': expected one of {', '.join(FAIL_ON)}")
        if fail_on == "never":
            return False
        if fail_on == "maybe":
            return self.count(lambda r: r.is_degradation) > 0
        return self.degradations > 0


# -- helpers ----------------------------------------------------------------------

@contextlib.contextmanager
def _using(repo: PerunRepository | None, cwd: Path | str | None = None) -> Iterator[PerunRepository]:
    # perun_core.api is a large module that ``check profiles`` of two files never needs
    from .repository import _using as using

    with using(repo, cwd) as opened:
        yield opened


def _emitter(on_event: Callable[[Any], None] | None) -> Callable[[Any], None]:
    return on_event or (lambda event: None)


def _stop_if(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Interrupted("check cancelled")


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

    from ..check import get_method, methods_registry

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
    from ..check import method_names

    return [check_method(name) for name in method_names()]


def _strategy(config: Any, methods: Sequence[str | Mapping[str, Any]] | None) -> Strategy:
    from ..check.strategies import Strategy, load_strategy

    strategy = load_strategy(config)
    if methods:
        return Strategy.of_methods(list(methods), cutoff=strategy.cutoff, cutoff_abs=strategy.cutoff_abs,
                                   collect_before_check=strategy.collect_before_check,
                                   log_collect=strategy.log_collect)
    return strategy


def _finish(emit: Callable[[Any], None], report: CheckReport | None, started: float, status: str) -> None:
    if report is None:
        emit(CheckFinished(status, 0, 0, 0, time.monotonic() - started))
    else:
        emit(CheckFinished(status, report.pairs, report.degradations, report.optimizations,
                           time.monotonic() - started))


def _matrix_configs(repo: PerunRepository) -> set[tuple]:
    from ..runner.jobs import matrix_from_config

    jobs = matrix_from_config(repo.config, repo.local_config_path)
    return {(j.cmd, j.args, j.workload, j.collector.name, tuple(p.name for p in j.postprocessors)) for j in jobs}


def _log_line(event: Any) -> str | None:
    """A line of the precollect log for a run event (None: not worth a line)."""
    from .. import events as run

    if isinstance(event, run.OutputLine):
        return f"  | {event.text}"
    if isinstance(event, run.PhaseStarted) and event.phase == "pre_run":
        return f"$ {event.detail}"
    if isinstance(event, run.JobStarted):
        return f"[{event.job}/{event.total}] {event.spec.label}"
    if isinstance(event, run.ProfileWritten):
        return f"  wrote {event.path.name}"
    if isinstance(event, run.JobFailed):
        return f"  failed: {event.reason}"
    return None


def _collect_missing(repo: PerunRepository, pairing: Pairing, versions: Sequence[str], *, log: bool,
                     emit: Callable[[Any], None], cancel: threading.Event | None) -> tuple[tuple[str, ...], list[str]]:
    """Run the job matrix for the versions that lack one of its profiles; register what it wrote.

    Returns the versions profiled and the failures of the run (as messages).
    """
    from . import repository as api
    from . import run as api_run
    from ..check.data import config_key
    from ..events import VersionStarted as RunVersionStarted

    wanted = _matrix_configs(repo)
    missing = [v for v in dict.fromkeys(versions) if not wanted <= {config_key(i) for i in pairing.infos(v)}]
    if not missing:
        return (), []
    emit(CollectionStarted(tuple(missing)))
    logs: dict[str, list[str]] = {}
    current: list[str | None] = [None]

    def forward(event: Any) -> None:
        emit(CollectionEvent(event))
        if not log:
            return
        if isinstance(event, RunVersionStarted):
            current[0] = event.version
        elif current[0] is not None:
            line = _log_line(event)
            if line is not None:
                logs.setdefault(current[0], []).append(line)

    result = api_run.run_matrix(minor_versions=missing, raise_on_failure=False, on_event=forward,
                                cancel=cancel, repo=repo)
    for written in result.profiles:
        if not written.registered and written.path.exists():
            api.add([str(written.path)], minor=written.origin, repo=repo)
    if log:
        from ..atomic import atomic_write_text

        for minor, lines in logs.items():
            atomic_write_text(repo.logs_dir / f"{minor}-precollect.log", "\n".join(lines) + "\n")
    emit(CollectionFinished(len(result.profiles), len(result.failures)))
    for minor in missing:
        pairing.forget(minor)
    return tuple(missing), [f"collecting missing profiles: {failure.message}" for failure in result.failures]


def _check_version(repo: PerunRepository, minor: str, pairing: Pairing, cache: ProfileCache, strategy: Strategy,
                   emit: Callable[[Any], None], cancel: threading.Event | None) -> VersionReport:
    from ..check.engine import check_pair
    from ..check.pairing import profile_key, ref_of_info

    infos = pairing.infos(minor)
    pairs: list[PairReport] = []
    unpaired: list[ProfileRef] = []
    needs_history = any(getattr(rule.method, "uses_history", False) for rule in strategy.rules)
    for info in infos:
        _stop_if(cancel)
        found = pairing.baseline_of(minor, info)
        target_ref = ref_of_info(info, minor)
        if found is None or profile_key(info) is None or profile_key(found[1]) is None:
            unpaired.append(target_ref)
            continue
        base_minor, base_info = found
        base_ref = ref_of_info(base_info, base_minor, pairing.desc(base_minor))
        history = None
        if needs_history:
            chain = pairing.chain(base_minor, base_info, HISTORY_WINDOW - 2)
            history = [cache.get_info(i) for _m, i in chain if profile_key(i)] + [cache.get_info(base_info)]
        outcome = check_pair(cache.get_info(base_info), cache.get_info(info), strategy,
                             baseline_name=base_ref.name, target_name=target_ref.name, history=history)
        pair = PairReport(base_ref, target_ref, tuple(outcome.methods), tuple(outcome.findings), tuple(outcome.errors))
        pairs.append(pair)
        emit(PairChecked(minor, pair, len(pairs), len(infos)))
    return VersionReport(minor, repo.vcs.minor_info(minor), tuple(pairs), tuple(unpaired))


def _store(repo: PerunRepository, report: VersionReport) -> None:
    from ..storage.changes import write_changes

    if report.minor is None:
        return
    marks = [f.result.mark for p in report.pairs for f in p.findings if f.result.mark]
    write_changes(repo, report.minor, marks, [p.to_record() for p in report.pairs])


def _run_versions(command: str, repo: PerunRepository, targets: Callable[[], list[str]], pairing: Pairing,
                  methods: Sequence[str | Mapping[str, Any]] | None, compute_missing: bool, store: bool,
                  emit: Callable[[Any], None], cancel: threading.Event | None,
                  collect_for: Callable[[], list[str]]) -> CheckReport:
    """Collect what is missing (when asked), then check the versions ``targets()`` names."""
    from ..check.pairing import ProfileCache

    started = time.monotonic()
    strategy = _strategy(repo.config, methods)
    report: CheckReport | None = None
    try:
        planned = targets()
        emit(CheckStarted(command, len(planned)))
        if strategy.ignored_local_collect and not compute_missing:
            emit(Notice("degradation.collect_before_check in the repository's local.yml is ignored, since it would "
                        "run the job matrix's commands on a plain check; pass -c, or set it in your shared "
                        "configuration"))
        collected: tuple[str, ...] = ()
        errors: list[str] = []
        if compute_missing or strategy.collect_before_check:
            collected, errors = _collect_missing(repo, pairing, collect_for(), log=strategy.log_collect, emit=emit,
                                                 cancel=cancel)
            if collected:
                planned = targets()
        cache = ProfileCache(repo)
        versions = []
        for index, minor in enumerate(planned, 1):
            _stop_if(cancel)
            emit(VersionStarted(minor, index, len(planned)))
            version = _check_version(repo, minor, pairing, cache, strategy, emit, cancel)
            versions.append(version)
            errors += [e for p in version.pairs for e in p.errors]
            if store and (version.pairs or pairing.infos(minor)):
                _store(repo, version)
            degradations = sum(len(p.degradations) for p in version.pairs)
            optimizations = sum(len(p.optimizations) for p in version.pairs)
            emit(VersionFinished(minor, index, len(planned), degradations, optimizations))
        report = CheckReport(command, tuple(versions), collected, tuple(errors))
    except Interrupted:
        _finish(emit, report, started, "interrupted")
        raise
    except BaseException:
        _finish(emit, report, started, "error")
        raise
    _finish(emit, report, started, "error" if report.errors else "degraded" if report.failed() else "ok")
    return report


# -- the porcelain ---------------------------------------------------------------------

def check_head(
    revision: str | None = None,
    *,
    methods: Sequence[str | Mapping[str, Any]] | None = None,
    compute_missing: bool = False,
    store: bool = True,
    include_pending: bool = True,
    on_event: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> CheckReport:
    """Check every profile of ``revision`` (default HEAD) against its baseline (spec §3.2.14).

    Registered profiles and the pending ones made at ``revision`` are
    checked; ``include_pending=False`` keeps to registered ones (see
    :mod:`perun_core.check.pairing` for how pending profiles pair).

    ``methods`` overrides the configured strategy; ``compute_missing`` runs
    the job matrix first for the version and its first parent when they lack
    profiles of it.  Raises InvalidRevision, ConfigError (bad strategy),
    UnknownUnit (unknown method), IncomparableProfiles, Interrupted.
    """
    from ..check.pairing import Pairing
    from ..storage.lookup import sort_key_of

    emit = _emitter(on_event)
    with _using(repo, cwd) as r:
        target = r.resolve_minor(revision)
        pairing = Pairing(r, sort_key=sort_key_of(r), include_pending=include_pending)

        def collect_for() -> list[str]:
            return [target, *pairing.parents(target)[:1]]

        return _run_versions("head", r, lambda: [target], pairing, methods, compute_missing, store, emit, cancel,
                             collect_for)


def check_all(
    revision: str | None = None,
    *,
    methods: Sequence[str | Mapping[str, Any]] | None = None,
    compute_missing: bool = False,
    store: bool = True,
    include_pending: bool = True,
    on_event: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> CheckReport:
    """Check every version from ``revision`` (default HEAD) back that has profiles (spec §3.2.15).

    Versions come newest first, as ``log`` lists them.  See :func:`check_head`.
    """
    from ..check.pairing import Pairing
    from ..storage.lookup import sort_key_of

    emit = _emitter(on_event)
    with _using(repo, cwd) as r:
        start = r.resolve_minor(revision)
        history = list(r.vcs.walk_minor_versions(start))
        parents = {v.checksum: tuple(v.parents) for v in history}
        pairing = Pairing(r, parents, sort_key=sort_key_of(r), include_pending=include_pending)
        all_versions = [v.checksum for v in history]

        def targets() -> list[str]:
            pending = pairing.versions_with_pending()
            return [minor for minor in all_versions if minor in pending or r.has_index(minor)]

        return _run_versions("all", r, targets, pairing, methods, compute_missing, store, emit, cancel,
                             lambda: all_versions)


def _config_for(repo: PerunRepository | None) -> Any:
    if repo is not None:
        return repo.config
    from ..config import Config, ConfigStack, shared_config_dir

    return ConfigStack(None, Config.load(shared_config_dir() / "shared.yml", kind="shared"))


def check_profiles(
    baseline: str,
    target: str,
    *,
    minor: str | None = None,
    methods: Sequence[str | Mapping[str, Any]] | None = None,
    workers: int = 1,
    on_event: Callable[[Any], None] | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> CheckReport:
    """Check two looked-up profiles (``i@i``, ``i@p``, names, paths; spec §3.2.16).

    Plain files work outside a perun repository too (then only the shared
    configuration applies).  ``workers=2`` lets two processes share the work
    for two profile files (it forks: only for single-threaded callers such
    as the command line).  Raises ProfileNotFound, InvalidProfile,
    IncomparableProfiles (e.g. different types), ConfigError, UnknownUnit.
    Profiles without any uid in common give their NotInBaseline /
    NotInTarget findings and a :class:`NothingInCommon` message in
    ``errors``.
    """
    from ..check.data import ProfileData, describe_config
    from ..errors import NotPerunRepository
    from ..storage.lookup import find_profile

    emit = _emitter(on_event)
    started = time.monotonic()
    opened: PerunRepository | None = repo
    own = False
    if opened is None:
        with contextlib.suppress(NotPerunRepository):
            opened = PerunRepository.discover(cwd)
            own = True
    try:
        emit(CheckStarted("profiles", 1))
        strategy = _strategy(_config_for(opened), methods)
        found = []
        for spec in (baseline, target):
            if opened is None:
                found.append(find_profile(None, spec, None, allow=("file",)))
            else:
                needs_index = minor is not None or not Path(spec).expanduser().is_file()
                at = opened.resolve_minor(minor) if needs_index else None
                found.append(find_profile(opened, spec, at))
        names = tuple(spec if item.kind == "file" else item.source for spec, item in zip((baseline, target), found))
        loaders = [lambda item=item, name=name: ProfileData(item.load(opened), label=name)
                   for item, name in zip(found, names)]
        emit(VersionStarted(None, 1, 1))
        if workers > 1 and all(item.kind == "file" for item in found):
            from ..check import parallel

            if parallel.available():
                base_data, target_data, outcome = parallel.check_files(loaders[0], loaders[1], strategy,
                                                                       (names[0], names[1]))
            else:
                base_data, target_data = loaders[0](), loaders[1]()
                outcome = _pair_outcome(base_data, target_data, strategy, names)
        else:
            base_data, target_data = loaders[0](), loaders[1]()
            outcome = _pair_outcome(base_data, target_data, strategy, names)
        refs = [ProfileRef(name, item.kind, item.minor, item.info.checksum if item.info else None, data.type,
                           describe_config(data.profile))
                for name, item, data in zip(names, found, (base_data, target_data))]
        pair = PairReport(refs[0], refs[1], tuple(outcome.methods), tuple(outcome.findings), tuple(outcome.errors))
        emit(PairChecked(None, pair, 1, 1))
        errors = list(outcome.errors)
        base_locations, target_locations = base_data.samples(), target_data.samples()
        if not base_locations or not target_locations:
            empty = refs[0].name if not base_locations else refs[1].name
            errors.append(f"{empty} has no resources with a uid and a numeric amount: nothing to compare")
        elif not set(base_locations) & set(target_locations):
            errors.append(NothingInCommon(refs[0].name, refs[1].name).message)
        version = VersionReport(None, None, (pair,))
        emit(VersionFinished(None, 1, 1, len(pair.degradations), len(pair.optimizations)))
        report = CheckReport("profiles", (version,), (), tuple(errors))
    except BaseException as exc:
        emit(CheckFinished("interrupted" if isinstance(exc, Interrupted) else "error", 0, 0, 0,
                           time.monotonic() - started))
        raise
    finally:
        if own and opened is not None:
            opened.close()
    _finish(emit, report, started, "error" if report.errors else "degraded" if report.failed() else "ok")
    return report


def _pair_outcome(baseline: ProfileData, target: ProfileData, strategy: Strategy, names: Sequence[str]) -> Any:
    from ..check.engine import check_pair

    return check_pair(baseline, target, strategy, baseline_name=names[0], target_name=names[1])


def stored_check(
    revision: str | None = None, *, repo: PerunRepository | None = None, cwd: Path | str | None = None
) -> VersionReport | None:
    """The findings the last check of ``revision`` (default HEAD) stored, or None if it was never checked."""
    from ..storage.changes import read_pairs

    with _using(repo, cwd) as r:
        minor = r.resolve_minor(revision)
        records = read_pairs(r, minor)
        if records is None:
            return None
        pairs = tuple(PairReport.from_record(record) for record in records if isinstance(record, dict))
        return VersionReport(minor, r.vcs.minor_info(minor), pairs)


def matrix_commands(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> list[str]:
    """Every command line collecting with the job matrix would run: pre_run, external generators, the jobs.

    Shown to the user before they agree to a hook that runs them after each commit.
    """
    from ..runner.generators import generators_from_config
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
    from ..check.hook import install

    with _using(repo, cwd) as r:
        return install(r, command)


def uninstall_hook(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> HookResult:
    """Remove perun's block from the post-commit hook."""
    from ..check.hook import uninstall

    with _using(repo, cwd) as r:
        return uninstall(r)
