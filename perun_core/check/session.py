"""Running a degradation check over versions of a repository or over two profiles.

The porcelain (:mod:`perun_core.api.check`) opens the repository and hands
in how missing profiles are collected (``collect``: the job matrix run and
its profiles registered); this module pairs profiles with their baselines,
applies the strategy, reports progress as the events of
:mod:`perun_core.check.events` and stores the findings per version.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import atomic_write_text
from ..config import Config, ConfigStack, shared_config_dir
from ..errors import Interrupted, NothingInCommon, PerunError, UsageError
from ..storage.lookup import find_profile
from ..storage.repository import PerunRepository
from .data import ProfileData, config_key, describe_config
from .engine import check_pair
from .events import (
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
from .pairing import ProfileCache, ProfileRef, profile_key, ref_of_info
from .report import CheckReport, PairReport, VersionReport
from .strategies import Strategy, load_strategy, settings_notes

if TYPE_CHECKING:  # pragma: no cover
    from .pairing import Pairing

__all__ = ["DOUBTFUL", "HISTORY_WINDOW", "Collect", "check_files", "config_for", "emitter", "run_versions"]

#: Older versions of a configuration handed to history-aware methods.
HISTORY_WINDOW = 20

#: ``collect(versions, on_event, cancel)`` runs the job matrix for ``versions`` and registers what it wrote;
#: returns how many profiles were written and the failures (as messages)
Collect = Callable[[list[str], Callable[[Any], None], "threading.Event | None"], tuple[int, list[str]]]


def emitter(on_event: Callable[[Any], None] | None) -> Callable[[Any], None]:
    return on_event or (lambda event: None)


def _stop_if(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Interrupted("check cancelled")


def _strategy(config: Any, methods: Sequence[str | Mapping[str, Any]] | None) -> Strategy:
    strategy = load_strategy(config)
    if methods:
        return Strategy.of_methods(list(methods), cutoff=strategy.cutoff, cutoff_abs=strategy.cutoff_abs,
                                   collect_before_check=strategy.collect_before_check,
                                   log_collect=strategy.log_collect,
                                   notes=settings_notes(config, ("degradation.cutoff", "degradation.cutoff_abs")))
    return strategy


def _finish(emit: Callable[[Any], None], report: CheckReport | None, started: float, status: str) -> None:
    if report is None:
        emit(CheckFinished(status, 0, 0, 0, time.monotonic() - started))
    else:
        emit(CheckFinished(status, report.pairs, report.degradations, report.optimizations,
                           time.monotonic() - started))


def _matrix_configs(repo: PerunRepository) -> set[tuple]:
    # lazy: keeps `perun-core check profiles` light
    from ..runner.jobs import matrix_from_config

    jobs = matrix_from_config(repo.config, repo.local_config_path)
    return {(j.cmd, j.args, j.workload, j.collector.name, tuple(p.name for p in j.postprocessors)) for j in jobs}


def _log_line(event: Any) -> str | None:
    """A line of the precollect log for a run event (None: not worth a line)."""
    # lazy: keeps `perun-core check profiles` light
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


def _collect_missing(repo: PerunRepository, pairing: Pairing, versions: Sequence[str], collect: Collect, *, log: bool,
                     emit: Callable[[Any], None], cancel: threading.Event | None) -> tuple[tuple[str, ...], list[str]]:
    """Run the job matrix (through ``collect``) for the versions that lack one of its profiles.

    Returns the versions profiled and the failures of the run (as messages).
    """
    # lazy: keeps `perun-core check profiles` light
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

    written, failures = collect(missing, forward, cancel)
    if log:
        for minor, lines in logs.items():
            atomic_write_text(repo.logs_dir / f"{minor}-precollect.log", "\n".join(lines) + "\n")
    emit(CollectionFinished(written, len(failures)))
    for minor in missing:
        pairing.forget(minor)
    return tuple(missing), [f"collecting missing profiles: {failure}" for failure in failures]


def _check_version(repo: PerunRepository, minor: str, pairing: Pairing, cache: ProfileCache, strategy: Strategy,
                   emit: Callable[[Any], None], cancel: threading.Event | None) -> VersionReport:
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
        pair = PairReport(base_ref, target_ref, tuple(outcome.methods), tuple(outcome.findings), tuple(outcome.errors),
                          tuple(outcome.notes))
        pairs.append(pair)
        emit(PairChecked(minor, pair, len(pairs), len(infos)))
    return VersionReport(minor, repo.vcs.minor_info(minor), tuple(pairs), tuple(unpaired),
                         tuple(pairing.superseded_lines(minor)))


def _store(repo: PerunRepository, report: VersionReport) -> None:
    # lazy: keeps `perun-core check profiles` light
    from ..storage.changes import write_changes

    if report.minor is None:
        return
    marks = [f.result.mark for p in report.pairs for f in p.findings if f.result.mark]
    write_changes(repo, report.minor, marks, [p.to_record() for p in report.pairs])


def _version_done(repo: PerunRepository, version: VersionReport, pairing: Pairing, store: bool,
                  emit: Callable[[Any], None], index: int, count: int) -> VersionReport:
    """Store the version's findings (keeping the explanations the previous check found for the same ones)."""
    # lazy: keeps `perun-core check profiles` light
    from .explain_store import carry_explanations

    version = carry_explanations(repo, version)
    if store and (version.pairs or pairing.infos(version.minor)):
        _store(repo, version)
    degradations = sum(len(p.degradations) for p in version.pairs)
    optimizations = sum(len(p.optimizations) for p in version.pairs)
    emit(VersionFinished(version.minor, index, count, degradations, optimizations))
    return version


#: Collectors whose amounts are times a busy machine stretches, and whose changes --confirm re-measures.
TIMED_COLLECTORS = ("time", "trace", "pytrace")


def _has_timed_jobs(repo: PerunRepository) -> bool:
    # lazy: keeps `perun-core check profiles` light
    from ..runner.jobs import matrix_from_config

    try:
        jobs = matrix_from_config(repo.config, repo.local_config_path)
    except PerunError:
        return False
    return any(job.collector.name in TIMED_COLLECTORS for job in jobs)


#: ``confirm`` of :func:`run_versions` that re-measures only the changes a busy machine made Maybe: the default
#: of ``check head`` and ``check all``, so a verdict the machine's load put in doubt is settled by interleaved runs
#: rather than left to the reader.
DOUBTFUL = "doubtful"


def _settle_doubts(repo: PerunRepository, version: VersionReport, cache: ProfileCache, strategy: Strategy,
                   runs: int, emit: Callable[[Any], None], cancel: threading.Event | None) -> VersionReport:
    """``version`` with the time-based changes a busy machine made Maybe re-measured interleaved, if any."""
    # lazy: keeps `perun-core check profiles` light
    from .confirm import confirm_versions, needs_confirmation

    if not any(needs_confirmation(p, f, doubtful_only=True) for p in version.pairs for f in p.findings):
        return version
    return confirm_versions(repo, [version], cache, strategy, runs, emit=emit, cancel=cancel, doubtful_only=True)[0]


def _commit_of(repo: PerunRepository, ref: ProfileRef, data: ProfileData) -> str | None:
    """The commit a checked profile was measured at: its index's, else the origin it records, if the repository has it."""
    if ref.minor is not None:
        return ref.minor
    origin = data.profile.origin
    if not isinstance(origin, str) or not origin:
        return None
    try:
        return repo.resolve_minor(origin)
    except PerunError:
        return None


def _confirm_pair(repo: PerunRepository, pair: PairReport, datas: tuple[ProfileData, ProfileData], strategy: Strategy,
                  confirm: bool | str, runs: int, emit: Callable[[Any], None]) -> PairReport:
    """``check profiles``: the pair's time-based changes re-measured as ``check head`` would (``confirm`` as there),
    when both profiles name a commit of the repository; the pair as it was otherwise."""
    if not any(f.result.is_change for f in pair.findings):
        return pair  # nothing to re-measure: no commit looked up, nothing more imported
    # lazy: keeps `perun-core check profiles` light
    from .confirm import confirm_versions, needs_confirmation

    doubtful = confirm == DOUBTFUL
    # which findings would be re-run is decided first (any commit will do for that), the commits looked up after
    anywhere = replace(pair, baseline=replace(pair.baseline, minor=""), target=replace(pair.target, minor=""))
    if not any(needs_confirmation(anywhere, f, doubtful_only=doubtful) for f in pair.findings):
        return pair
    if doubtful and not _has_timed_jobs(repo):
        return pair
    commits = [_commit_of(repo, ref, data) for ref, data in zip((pair.baseline, pair.target), datas)]
    if commits[0] is None or commits[1] is None:
        return pair
    located = replace(pair, baseline=replace(pair.baseline, minor=commits[0]),
                      target=replace(pair.target, minor=commits[1]))
    version = confirm_versions(repo, [VersionReport(None, None, (located,))], ProfileCache(repo), strategy, runs,
                               emit=emit, doubtful_only=doubtful)[0]
    return replace(pair, findings=version.pairs[0].findings)


def confirm_runs_checked(value: Any) -> int:
    """``--confirm-runs``: runs a side, 2 to 1000; UsageError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 1000:
        raise UsageError(f"--confirm-runs {value!r}: expected a whole number from 2 to 1000")
    return value


def run_versions(command: str, repo: PerunRepository, targets: Callable[[], list[str]], pairing: Pairing,
                 methods: Sequence[str | Mapping[str, Any]] | None, compute_missing: bool, store: bool,
                 emit: Callable[[Any], None], cancel: threading.Event | None,
                 collect_for: Callable[[], list[str]], collect: Collect, confirm: bool | str | None = DOUBTFUL,
                 confirm_runs: int = 7) -> CheckReport:
    """Collect what is missing (when asked), check the versions ``targets()`` names, confirm time changes.

    ``confirm``: True re-measures every time-based change interleaved, None
    does so when the job matrix has timed jobs (the TUI), :data:`DOUBTFUL`
    only the changes a busy machine made Maybe, version by version, and
    False none.
    """

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
            collected, errors = _collect_missing(repo, pairing, collect_for(), collect, log=strategy.log_collect,
                                                 emit=emit, cancel=cancel)
            if collected:
                planned = targets()
        cache = ProfileCache(repo)
        if confirm is None:
            confirm = _has_timed_jobs(repo)
        elif confirm == DOUBTFUL and not _has_timed_jobs(repo):
            confirm = False  # nothing to re-run: a Maybe the load made stays one
        versions = []
        for index, minor in enumerate(planned, 1):
            _stop_if(cancel)
            emit(VersionStarted(minor, index, len(planned)))
            version = _check_version(repo, minor, pairing, cache, strategy, emit, cancel)
            errors += [e for p in version.pairs for e in p.errors]
            if confirm == DOUBTFUL:
                version = _settle_doubts(repo, version, cache, strategy, confirm_runs, emit, cancel)
            if confirm is not True:  # confirmed versions are done once all are re-measured, below
                version = _version_done(repo, version, pairing, store, emit, index, len(planned))
            versions.append(version)
        if confirm is True:
            # lazy: keeps `perun-core check profiles` light
            from .confirm import confirm_versions

            versions = confirm_versions(repo, versions, cache, strategy, confirm_runs, emit=emit, cancel=cancel)
            versions = [_version_done(repo, version, pairing, store, emit, index, len(planned))
                        for index, version in enumerate(versions, 1)]
        report = CheckReport(command, tuple(versions), collected, tuple(errors))
    except Interrupted:
        _finish(emit, report, started, "interrupted")
        raise
    except BaseException:
        _finish(emit, report, started, "error")
        raise
    _finish(emit, report, started, "error" if report.errors else "degraded" if report.failed() else "ok")
    return report


def _pair_outcome(baseline: ProfileData, target: ProfileData, strategy: Strategy, names: Sequence[str]) -> Any:
    return check_pair(baseline, target, strategy, baseline_name=names[0], target_name=names[1])


def config_for(repo: PerunRepository | None) -> Any:
    if repo is not None:
        return repo.config

    return ConfigStack(None, Config.load(shared_config_dir() / "shared.yml", kind="shared"))


def check_files(opened: PerunRepository | None, baseline: str, target: str, *, minor: str | None,
                methods: Sequence[str | Mapping[str, Any]] | None, workers: int, emit: Callable[[Any], None],
                confirm: bool | str = DOUBTFUL, confirm_runs: int = 7) -> CheckReport:
    """Check two looked-up profiles (in ``opened``, or plain files when it is None); see api.check_profiles."""

    started = time.monotonic()
    try:
        emit(CheckStarted("profiles", 1))
        strategy = _strategy(config_for(opened), methods)
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
            # lazy: keeps `perun-core check profiles` light
            from . import parallel

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
        pair = PairReport(refs[0], refs[1], tuple(outcome.methods), tuple(outcome.findings), tuple(outcome.errors),
                          tuple(outcome.notes))
        if confirm and opened is not None:
            pair = _confirm_pair(opened, pair, (base_data, target_data), strategy, confirm, confirm_runs, emit)
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
    _finish(emit, report, started, "error" if report.errors else "degraded" if report.failed() else "ok")
    return report
