"""Explaining time changes: which functions made a job slower (or faster).

A check says *that* ``./app [real]`` got 40 % slower; this module says
*where*.  For every certain time Degradation or Optimization between two
commits whose job is in the job matrix, it

1. chooses the best call-level collector for the program and reuses
   registered or pending profiles of that collector and command of both
   commits (:mod:`.explain_collect`);
2. collects the missing ones in temporary worktrees of the commits (built
   once with ``execute.pre_run``, as confirmation does), baseline and
   target interleaved round by round so that load drifts hit both alike;
3. compares them per function (:mod:`.explain_compare`), the functions that
   add up to most of the change first.

The result is an :class:`Explanation` (:mod:`.explain_result`) kept in the
finding's ``details["explanation"]``; :mod:`perun_core.check.output` shows
it and :func:`store_explanations` keeps it with the stored check.  When no
explanation is possible the explanation carries a one-line ``message``
saying why (nothing to install, a build that failed, a run too short).
"""

from __future__ import annotations

import contextlib
import shutil  # tests replace shutil.which through this module
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Interrupted, PerunError, UsageError
from ..profile.codec import load_profile_from_file
from ..runner.jobs import unit_config
from ..runner.worktree import temporary_worktree
from .confirm import rerun_of_pair
from .explain_collect import (CALL_LEVEL, BuildFailed, ExplainRound, no_native_collector, perf_allowed,
                              choose_collector, collect_interleaved, is_python, keep_profile, python_command,
                              stored_profile)
from .explain_cost import (DEFAULT_BUDGET, PERF_PARAMS, Budget, BudgetKilled, Plan, duration_text, expected,
                           native_seconds, plan, reduction_note)
from .explain_compare import MIN_SAMPLES, MIN_SHARE, TOP, explain_profiles, sample_p_value
from .explain_owned import repository_roots
from .explain_result import ExplainedFunction, Explanation, ThroughFunction, relative_text
from .explain_store import kept_profiles
from .explain_store import store_explanations as store
from .pairing import ProfileCache
from .rerun import Rerun, profile_of

if TYPE_CHECKING:  # pragma: no cover
    from ..runner.jobs import Job
    from .report import CheckReport, PairReport
    from .results import Finding

__all__ = ["CALL_LEVEL", "DEFAULT_BUDGET", "MIN_SAMPLES", "MIN_SHARE", "TOP", "ExplainCollecting", "ExplainFinished", "ExplainRound",
           "ExplainStarted", "ExplainedFunction", "Explanation", "ThroughFunction", "choose_collector", "explain_profiles",
           "explain_report", "is_python", "load_explained", "needs_explanation", "relative_text", "sample_p_value",
           "store_explanations"]


@dataclass(frozen=True, slots=True)
class ExplainStarted:
    """Call-level profiles are collected or looked up for ``jobs`` jobs of ``pairs`` pairs of commits."""

    jobs: int
    pairs: int


@dataclass(frozen=True, slots=True)
class ExplainCollecting:
    """``collector`` profiles of ``command`` are collected at ``commits`` (the others are reused); they are
    expected to take ``estimate`` seconds (None: unknown) of the ``left`` seconds left of the budget."""

    command: str
    collector: str
    commits: tuple[str, ...]
    estimate: float | None = None
    left: float | None = None
    notes: tuple[str, ...] = ()

    def cost(self, elapsed: float | None = None) -> str:
        """``about 40 s expected, 200 s left of the explain budget`` (the estimate where known); with
        ``elapsed`` ``about 40 s expected, 12 s elapsed``."""
        parts = [f"about {duration_text(self.estimate)} expected"] if self.estimate is not None else []
        if elapsed is not None:
            parts.append(f"{elapsed:.0f} s elapsed")
        elif self.left is not None:
            parts.append(f"{self.left:.0f} s left of the explain budget")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class ExplainFinished:
    explained: int
    unexplained: int


def needs_explanation(pair: PairReport, finding: Finding) -> bool:
    """Certain time changes."""
    result = finding.result
    return pair.target.type == "time" and result.is_change and not result.is_maybe


def not_explained_because(pair: PairReport, finding: Finding) -> str | None:
    """Why ``finding`` gets no explanation, in one line that says what would get one; None when it would get one.

    Explaining profiles both commits again at the level of functions and compares their times: only a
    certain change of a time profile has a time to split among functions.
    """
    if needs_explanation(pair, finding):
        return None
    result = finding.result
    if pair.target.type != "time":
        return (f"not explained: only time changes are split among functions, and this is a {pair.target.type} "
                f"profile; a finding of a time profile of the same command can be explained")
    if not result.is_change:
        return "not explained: the check found no change here, so there is nothing to split among functions"
    return ("not explained: the change is only a maybe; check again with confirmation (interleaved runs) and "
            "explain it if they confirm it")


@contextlib.contextmanager
def _concrete(repo: Any, rerun: Rerun) -> Any:
    """The job of ``rerun`` with one concrete workload: its own, the one of a per-workload profile, else the
    largest its generator makes (where a change that grows with the input shows most); and a function
    giving a smaller workload of the same generator (or None without a generator).

    ``smaller(fraction)`` returns ``(job, from label, to label)`` with the largest generated workload at
    most ``fraction`` of the chosen one's size, or None.  A generated file exists while the context lasts.
    Raises PerunError.
    """
    if rerun.generator is None:
        yield rerun.job, None
        return
    # lazy: the runner's generator module is needed only for jobs over generated workloads
    from ..runner.generators import generated_workloads

    with generated_workloads(rerun.generator, Path(repo.root)) as makers:
        chosen = None
        index = len(makers) - 1
        for index, make in enumerate(makers) if rerun.label is not None else [(index, makers[-1])]:
            workload = make()
            if rerun.label is None or workload.label == rerun.label:
                chosen = workload
                break
        if chosen is None:
            raise PerunError(f"generator '{rerun.generator.id}' makes no workload '{rerun.label}'")

        def smaller(fraction: float) -> tuple[Job, str, str] | None:
            for make in reversed(makers[:index]):
                candidate = make()
                if candidate.size <= chosen.size * fraction:
                    return replace(rerun.job, workload=candidate.argument), chosen.label, candidate.label
            return None

        yield replace(rerun.job, workload=chosen.argument), smaller


def _explain_one(repo: Any, base_minor: str, target_minor: str, rerun: Rerun, **keywords: Any) -> Explanation:
    """:func:`_explain_job` on the job of ``rerun`` with one concrete workload."""
    try:
        with _concrete(repo, rerun) as (job, smaller):
            return _explain_job(repo, base_minor, target_minor, job, smaller=smaller, **keywords)
    except Interrupted:
        raise
    except PerunError as exc:
        return Explanation(message=exc.message)


def _plan(repo: Any, target_minor: str, argv: list[str], wanted: str | None, seconds: tuple[Any, Any],
          budget: Budget) -> Plan | str:
    """The collector for the job by its expected cost (:mod:`.explain_cost`), or why there is none."""
    if wanted is not None:
        usable = choose_collector(argv, Path(repo.root), wanted)
        if isinstance(usable, str):
            return usable
    if python_command(argv) or wanted is not None:
        python = python_command(argv)
    else:  # a script's first line says whether it is Python: look at the target commit's file
        with temporary_worktree(repo.vcs, target_minor) as probe:
            python = is_python(argv, probe)
    if python or wanted is not None:
        return plan(python, wanted, seconds[0], budget.left(), False, False)
    valgrind = shutil.which("valgrind") is not None
    perf, detail = perf_allowed()
    return plan(False, None, seconds[0], budget.left(), valgrind, perf, seconds[1]) or no_native_collector(detail)


def _over_budget(chosen: Plan, job: Job, smaller: Any, budget: Budget) -> tuple[Job, Plan] | str:
    """The job within the budget: a smaller generated workload, or why callgrind cannot run."""
    assert chosen.estimate is not None
    left = budget.left()
    reduced = smaller(left / chosen.estimate * 0.8) if smaller is not None and left > 0 else None
    if reduced is None:
        return (f"callgrind would take about {chosen.estimate:.0f} s, more than the {max(left, 0):.0f} s left of "
                f"the explain budget of {budget.seconds:g} s: raise --explain-budget, explain a smaller workload, "
                f"or allow perf sampling")
    job, old, new = reduced
    note = reduction_note(old, new, chosen.estimate, left)
    return job, replace(chosen, estimate=None, notes=(*chosen.notes, note), over=False, reduced=f"{old} to {new}")


def _explain_job(repo: Any, base_minor: str, target_minor: str, job: Job, *, directory: Path | None,
                 register: bool, cancel: threading.Event, counter: list[int], wanted: str | None,
                 emit: Callable[[Any], None], seconds: tuple[Any, Any], budget: Budget,
                 smaller: Any) -> Explanation:
    """Choose the collector, reuse or collect the call-level profiles of both commits and compare them.

    Callgrind killed by the budget gives way to perf sampling where the
    kernel allows it (:func:`_instead`); a note says so.
    """
    try:
        argv = job.argv()
    except PerunError as exc:
        return Explanation(message=exc.message)
    chosen = _plan(repo, target_minor, argv, wanted, seconds, budget)
    if isinstance(chosen, str):
        return Explanation(message=chosen)
    sides = (base_minor, target_minor)
    kept = kept_profiles(repo, sides)
    full = job
    while True:
        chosen, got = _profiles(repo, sides, full, chosen, kept, register=register, cancel=cancel, counter=counter,
                                emit=emit, budget=budget, smaller=smaller)
        if not isinstance(got, BudgetKilled):
            break
        instead = _instead(got, chosen, seconds, budget)
        if isinstance(instead, str):
            return Explanation(collector=chosen.collector, message=instead, notes=chosen.notes)
        chosen = instead
    if isinstance(got, Explanation):
        return got
    job, profiles, names, sources, written, reused, collected = got
    rounds = max(int((p.header or {}).get("rounds", 1) or 1) for p in profiles)
    return explain_profiles(chosen.collector, profiles[0], profiles[1], base_minor, target_minor, job.command_line,
                            directory=directory, written=tuple(written), reused=reused, profiles=tuple(names),
                            rounds=rounds, sources=tuple(sources), roots=repository_roots(repo),
                            notes=chosen.notes if collected else ())


#: The end of the note saying perf sampled what callgrind could not within the budget.
_INSTEAD = "; sampled with perf instead"


def _instead(stopped: BudgetKilled, chosen: Plan, seconds: tuple[Any, Any], budget: Budget) -> Plan | str:
    """perf sampling of the whole workload in place of callgrind killed by the budget, or why nothing fits:
    what stopped it and what had been reduced."""
    perf = perf_allowed()[0]
    if stopped.collector == "callgrind" and budget.left() > 0 and perf:
        estimate = expected("perf", seconds[0]) if seconds[0] else None
        notes = tuple(note for note in chosen.notes if not note.startswith("workload reduced "))
        return Plan("perf", dict(PERF_PARAMS), estimate, (*notes, stopped.message + _INSTEAD))
    tried = [note.removesuffix(_INSTEAD) for note in chosen.notes if note.endswith(_INSTEAD)]
    what = f"with the workload reduced from {chosen.reduced}" if chosen.reduced else "on the whole workload"
    return (f"{'; '.join([*tried, stopped.message])}, {what}: raise --explain-budget or explain a smaller workload"
            + ("" if perf else ", or allow perf sampling"))


def _profiles(repo: Any, sides: tuple[str, str], job: Job, chosen: Plan, kept: dict, *, register: bool,
              cancel: threading.Event, counter: list[int], emit: Callable[[Any], None], budget: Budget,
              smaller: Any) -> tuple[Plan, tuple | Explanation | BudgetKilled]:
    """The two profiles of ``chosen``'s collector: stored ones, else collected (within the budget).

    Returns the plan (with a smaller workload where callgrind's estimate
    is over the budget) and ``(job, profiles, names, sources, written,
    reused, collected)``, an Explanation saying why there are none, or the
    BudgetKilled that stopped the collection.  It is long because each step has an error path
    that ends the explanation with its reason.
    """
    name = chosen.collector

    def lookup(job: Job) -> tuple[Job, list[Any]]:
        call_job = replace(job, collector=unit_config("collector", name, chosen.params), postprocessors=())
        return call_job, [stored_profile(repo, minor, call_job, name, kept.get(minor, ())) for minor in sides]

    try:
        call_job, stored = lookup(job)
        if chosen.over and not all(stored):
            within = _over_budget(chosen, job, smaller, budget)
            if isinstance(within, str):
                return chosen, Explanation(collector=name, message=within)
            job, chosen = within
            call_job, stored = lookup(job)
    except PerunError as exc:
        return chosen, Explanation(collector=name, message=exc.message)
    reused = tuple(f"{minor[:7]}: {found[1]}" for minor, found in zip(sides, stored) if found)
    profiles = [found[0] if found else None for found in stored]
    names = [found[2] if found else "" for found in stored]
    sources = [found[3] if found else "" for found in stored]
    missing = [minor for minor, p in zip(sides, profiles) if p is None]
    written: list[str] = []
    if missing:
        emit(ExplainCollecting(job.command_line, name, tuple(minor[:7] for minor in missing), chosen.estimate,
                               max(budget.left(), 0.0), chosen.notes))
        try:
            collected = collect_interleaved(repo, call_job, missing, name, cancel, emit, budget=budget)
        except BudgetKilled as stopped:
            return chosen, stopped
        except BuildFailed as exc:
            return chosen, Explanation(collector=name, message=exc.message)
        except Interrupted:
            raise
        except PerunError as exc:
            return chosen, Explanation(collector=name, message=f"collecting with {name} failed: {exc.message}")
        for minor, profile in zip(missing, collected):
            side = sides.index(minor)
            profiles[side] = profile
            counter[0] += 1
            with contextlib.suppress(PerunError, OSError):
                what, names[side], sources[side] = keep_profile(repo, profile, minor, register, counter[0])
                written.append(what)
    return chosen, (job, profiles, names, sources, written, reused, bool(missing))

def _where(ref: Any) -> str:
    """Where a report's reference is, as :attr:`Explanation.sources` says it."""
    if ref.checksum:
        return f"object:{ref.checksum}"
    if ref.kind == "pending":
        return f"pending:{Path(ref.source).name}"
    return f"file:{Path(ref.name).expanduser().resolve()}"


def load_explained(repo: Any, explanation: Explanation) -> tuple[Any, Any] | None:
    """The two call-level profiles an explanation compared, or None where one is gone (or never kept)."""

    if len(explanation.sources) != 2:
        return None
    loaded = []
    for source in explanation.sources:
        kind, _, value = source.partition(":")
        try:
            if kind == "object" and repo is not None:
                loaded.append(repo.objects.read_profile(value))
            elif kind == "pending" and repo is not None and value and "/" not in value:
                loaded.append(load_profile_from_file(repo.jobs_dir / value))
            elif kind == "file" and value:
                loaded.append(load_profile_from_file(Path(value)))
            else:
                return None
        except (PerunError, OSError, ValueError):
            return None
    return loaded[0], loaded[1]


def _direct(repo: Any, pair: PairReport, directory: Path | None) -> Explanation | None:
    """A pair of call-level profiles explains itself: their comparison, or None for other pairs."""
    try:
        target = profile_of(repo, pair.target)
        name = (target.collector_info or {}).get("name")
        if name not in CALL_LEVEL:
            return None
        base = profile_of(repo, pair.baseline)
    except (PerunError, OSError, ValueError):
        return None
    return explain_profiles(str(name), base, target, pair.baseline.minor or pair.baseline.name,
                            pair.target.minor or pair.target.name, str(target.header.get("cmd") or pair.target.name),
                            directory=directory, profiles=(pair.baseline.name, pair.target.name),
                            sources=(_where(pair.baseline), _where(pair.target)), roots=repository_roots(repo))


def _seconds(repo: Any, pair: PairReport) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The wall time and the user-mode CPU time of one plain run of the baseline and of the target, from the
    pair's time profiles (None: unknown)."""
    try:
        profiles = (profile_of(repo, pair.baseline), profile_of(repo, pair.target))
    except (PerunError, OSError, ValueError):
        return None, None
    found = []
    for subtype in ("real", "user"):
        base, target = (native_seconds(profile, subtype) for profile in profiles)
        found.append((base, target) if base is not None and target is not None else None)
    return found[0], found[1]


def explain_report(repo: Any, report: CheckReport, *, directory: Path | None = None, register: bool = False,
                   collector: str | None = None, emit: Callable[[Any], None] | None = None,
                   cancel: threading.Event | None = None, budget: float | None = None) -> CheckReport:
    """``report`` with an :class:`Explanation` in the details of every certain time change.

    ``repo`` may be None (profile files outside a repository): then only
    pairs of call-level profiles are explained.  ``budget`` bounds the
    seconds spent collecting (default :data:`DEFAULT_BUDGET`; see
    :mod:`.explain_cost`).  Raises UsageError for an unknown collector or
    a budget that is not a positive number.
    """

    if collector is not None and collector not in CALL_LEVEL:
        raise UsageError(f"--explain-with '{collector}': expected one of {', '.join(CALL_LEVEL)}")
    if budget is not None and not budget > 0:
        raise UsageError(f"--explain-budget {budget}: expected a positive number of seconds")
    limit = Budget(DEFAULT_BUDGET if budget is None else float(budget))
    seconds: dict[tuple[str, str, int], tuple[Any, Any]] = {}
    emit = emit or (lambda event: None)
    cancel = cancel or threading.Event()
    cache = ProfileCache(repo)
    jobs: list[Rerun] = []
    work: dict[tuple[str, str, int], list[tuple[int, int, int]]] = {}
    done: dict[tuple[int, int, int], Explanation] = {}
    for v, version in enumerate(report.versions):
        for p, pair in enumerate(version.pairs):
            wanted = [i for i, f in enumerate(pair.findings) if needs_explanation(pair, f)]
            if not wanted:
                continue
            direct = _direct(repo, pair, directory)
            if direct is None and (repo is None or pair.baseline.minor is None or pair.target.minor is None):
                direct = Explanation(message="these profiles are not registered at two commits, so there is no "
                                             "program to profile again; check two call-level profiles (callgrind, "
                                             "perf, pytrace) of the program instead")
            if direct is not None:
                for i in wanted:
                    done[(v, p, i)] = direct
                continue
            job = rerun_of_pair(repo, cache, pair)
            for i in wanted:
                if isinstance(job, str):
                    done[(v, p, i)] = Explanation(message=f"cannot be profiled again: {job}")
                else:
                    if job not in jobs:
                        jobs.append(job)
                    key = (pair.baseline.minor, pair.target.minor, jobs.index(job))
                    work.setdefault(key, []).append((v, p, i))  # type: ignore[arg-type]
                    if key not in seconds:
                        seconds[key] = _seconds(repo, pair)  # type: ignore[index]
    if work:
        emit(ExplainStarted(len(work), len({(b, t) for b, t, _ in work})))
    counter = [0]
    for (base_minor, target_minor, number), places in work.items():
        job = jobs[number]
        if cancel.is_set():
            raise Interrupted("cancelled")
        explanation = _explain_one(repo, base_minor, target_minor, job, directory=directory,
                                   register=register, cancel=cancel, counter=counter, wanted=collector,
                                   emit=emit, seconds=seconds.get((base_minor, target_minor, number), (None, None)),
                                   budget=limit)
        for place in places:
            done[place] = explanation
    if work:
        good = sum(1 for e in done.values() if e.explained)
        emit(ExplainFinished(good, len(done) - good))
    versions = []
    for v, version in enumerate(report.versions):
        pairs = []
        for p, pair in enumerate(version.pairs):
            findings = tuple(replace(f, details={**f.details, "explanation": done[(v, p, i)]})
                             if (v, p, i) in done else f for i, f in enumerate(pair.findings))
            pairs.append(replace(pair, findings=findings))
        versions.append(replace(version, pairs=tuple(pairs)))
    return replace(report, versions=tuple(versions))


def store_explanations(repo: Any, report: CheckReport) -> int:
    """Keep the report's explanations with its stored check results (see :mod:`.explain_store`)."""

    return store(repo, report)
