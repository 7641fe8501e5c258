"""Confirming time-based changes by interleaved re-runs of the baseline and the target.

A Degradation or Optimization of a time profile (or of per-call times a
tracer measured) rests on runs made at one
moment for the baseline and at another for the target; a machine that got
busier in between makes the later side slower.  Confirmation re-measures
both sides *alternately*: the commits of the baseline and of the target are
each exported to a temporary worktree and built once (``execute.pre_run``),
then the job that made the profile runs A B B A A B ... (``runs`` measured
runs a side, one run per turn).  A drift of the machine's load then hits both
sides alike.  The interleaved runs are checked with the same strategy, and

* a finding they repeat (same location, same direction, certain) is
  *confirmed*: its result stays, and its reason shows the first and the
  confirming measurement;
* a finding they do not repeat is *not confirmed*: it becomes a Maybe of
  the same direction whose reason says so and shows both measurements, so
  it is listed, not dropped;
* a finding whose job is not in the job matrix, or whose re-runs failed,
  keeps its result with a reason saying why it could not be confirmed.

This is how asv's ``continuous`` compares two commits.  The re-runs are
not stored; the stored check results are the confirmed ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..amounts import unit_family
from ..check.data import ProfileData
from ..errors import Interrupted, PerunError, PreRunFailed
from ..profile.model import Profile, Snapshot
from ..profile.resources import ResourceTable
from ..runner.process import describe_status, run_process
from ..runner.run import _split_commands
from ..runner.worktree import temporary_worktree
from ..units import UnitContext
from .engine import check_pair
from .noise import CONFIRM_ADVICE
from .rerun import Rerun, measure, one_run, profile_of, rerun_of
from .results import Finding, PerformanceChange

if TYPE_CHECKING:  # pragma: no cover
    from .report import PairReport, VersionReport
    from .pairing import ProfileCache
    from .strategies import Strategy

__all__ = ["DEFAULT_RUNS", "ConfirmationFinished", "ConfirmationStarted", "alternate", "built_worktree",
           "confirm_versions", "merge_runs", "needs_confirmation"]

#: Measured runs a side: with seven a side the rank test can reach p < 0.001 when the sides do not overlap.
DEFAULT_RUNS = 7


@dataclass(frozen=True, slots=True)
class ConfirmationStarted:
    """Interleaved re-runs begin for ``findings`` findings of ``pairs`` pairs of commits.

    ``commits`` names the pairs, (baseline, target) full hashes, so a
    front end can say which versions the wait is for.
    """

    findings: int
    pairs: int
    runs: int
    commits: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ConfirmationFinished:
    confirmed: int
    not_confirmed: int
    unchecked: int
    #: the (baseline, target) pairs of commits re-run, as in :class:`ConfirmationStarted`
    commits: tuple[tuple[str, str], ...] = ()


def needs_confirmation(pair: PairReport, finding: Finding, *, doubtful_only: bool = False) -> bool:
    """Time-based changes between two commits: certain ones, and those a busy machine made Maybe.

    ``doubtful_only``: only those a busy machine made Maybe (what ``check``
    settles by default).

    Time-based: of a time profile, or amounts in a unit of time (per-call
    times of the trace collector or pytrace, which the machine's load
    stretches just the same).  A change the busy-machine rules made
    uncertain (it keeps its ``first_result``) is exactly what interleaved
    runs can settle.
    """
    result = finding.result
    tempered = result.is_maybe and "first_result" in finding.details and "confirmation" not in finding.details
    timed = pair.target.type == "time" or unit_family(finding.unit) == "time"
    wanted = tempered if doubtful_only else (not result.is_maybe or tempered)
    return (timed and result.is_change and wanted
            and pair.baseline.minor is not None and pair.target.minor is not None)


def _ratio_text(finding: Finding) -> str:
    base, new = finding.from_, finding.to
    if isinstance(base, (int, float)) and isinstance(new, (int, float)) and base > 0 and new > 0:
        return f"x{new / base:.3g}"
    if finding.delta_rel is not None:
        return f"{finding.delta_rel:+.3g} %"
    return finding.result.value


def merge_runs(profiles: list[Any]) -> Any:
    """One profile of all the runs of one side (orders renumbered, the highest load kept).

    The resources of every region (a time profile's global one, a trace's
    snapshots) go into one; the postprocessors the first run went through
    are kept, so the strategy's rules match the merged profile as they
    matched the runs.
    """

    rows: list[dict] = []
    base = 0
    loads: list[float] = []
    for profile in profiles:
        own = [dict(row) for _name, region in profile.regions() for row in region.resources.rows()]
        top = 0
        for row in own:
            if isinstance(row.get("order"), int):
                top = max(top, row["order"])
                row["order"] = row["order"] + base
        base += top
        rows += own
        machine = profile.header.get("machine") or {}
        loads += [v for k, v in machine.items() if k.startswith("load_") and isinstance(v, (int, float))]
    header = dict(profiles[0].header)
    machine = dict(header.get("machine") or {})
    if loads:
        machine["load_before"] = machine["load_after"] = max(loads)
    header["machine"] = machine
    total = sum(float(r["amount"]) for r in rows if r.get("subtype") == "real")
    merged = Profile(header=header, global_region=Snapshot(ResourceTable(rows), [], {"timestamp": total}),
                     postprocessors=list(profiles[0].postprocessors))
    merged.collector_info = profiles[0].collector_info
    return merged


def _pre_run(commands: list[tuple[str, list[str]]], workdir: Path, cancel: threading.Event) -> None:
    for text, argv in commands:
        try:
            outcome = run_process(argv, cwd=workdir, merge_stderr=True, kill_leftovers=False, cancelled=cancel,
                                  tail_lines=30)
        except OSError as exc:
            raise PreRunFailed(text, f"cannot run: {exc.strerror or exc}") from None
        if outcome.exit_status != 0:
            raise PreRunFailed(text, describe_status(outcome.exit_status), outcome.exit_status, outcome.stdout_tail)


def built_worktree(stack: Any, repo: Any, minor: str, cancel: threading.Event) -> Path:
    """A temporary worktree of ``minor`` (removed when ``stack`` closes) with ``execute.pre_run`` run in it.

    Raises PreRunFailed or Interrupted.
    """
    commands = _split_commands(repo.config.get_or("execute.pre_run") or [])
    workdir = stack.enter_context(temporary_worktree(repo.vcs, minor))
    _pre_run(commands, workdir, cancel)
    return workdir


def alternate(sides: Sequence[tuple[str, Path]], reruns: Sequence[Rerun], runs: int,
              cancel: threading.Event) -> list[list[Any]]:
    """Run the jobs of ``reruns`` in built worktrees, one run a side per turn, ``runs`` turns; merged
    profiles [job][side].

    ``sides`` are (commit, worktree).  The turns go forth and back (A B C,
    C B A, A B C ...): a load that rises or falls steadily during the turns
    then weighs on every side alike, not most on the side measured last.  A
    job over generated workloads runs each of its workloads once a turn.
    Raises CollectionError or Interrupted.
    """
    collected: list[list[list[Any]]] = [[[] for _side in sides] for _rerun in reruns]
    for turn in range(runs):
        order = list(enumerate(sides))
        if turn % 2:
            order.reverse()
        for side, (minor, workdir) in order:
            for number, rerun in enumerate(reruns):
                if cancel.is_set():
                    raise Interrupted("cancelled")
                ctx = UnitContext(workdir, lambda event: None, cancel, 0, rerun.job.label)
                profile = measure(rerun, one_run(rerun.job, turn == 0), ctx, minor)
                collected[number][side].append(profile)
    return [[merge_runs(profiles) for profiles in per_side] for per_side in collected]


def interleave(repo: Any, base_minor: str, target_minor: str, reruns: Sequence[Rerun], runs: int,
               cancel: threading.Event) -> list[tuple[Any, Any]]:
    """Run the jobs of ``reruns`` A B B A ... ``runs`` times a side in two worktrees; the merged
    (baseline, target) profiles, one pair per rerun in their order.

    Raises PreRunFailed, CollectionError or Interrupted.
    """
    import contextlib

    with contextlib.ExitStack() as stack:
        base_dir = built_worktree(stack, repo, base_minor, cancel)
        target_dir = built_worktree(stack, repo, target_minor, cancel)
        measured = alternate(((base_minor, base_dir), (target_minor, target_dir)), reruns, runs, cancel)
    return [(base, target) for base, target in measured]


def rerun_of_pair(repo: Any, cache: ProfileCache | None, pair: PairReport, *,
                  any_collector: bool = False) -> Rerun | str:
    """How to measure the target of ``pair`` again (registered or pending), or why it cannot be."""
    try:
        if cache is not None and pair.target.checksum:
            profile = cache.get(pair.target.checksum).profile
        else:
            profile = profile_of(repo, pair.target)
        return rerun_of(repo, profile, any_collector=any_collector)
    except (PerunError, OSError) as exc:
        return f"its profile cannot be read: {getattr(exc, 'message', None) or exc}"


def _verdict(first: Finding, second: Finding | None, runs: int) -> Finding:
    shown = f"first {_ratio_text(first)}"
    if second is not None and second.result.is_change and not second.result.is_maybe and \
            second.result.is_degradation == first.result.is_degradation:
        # a change the busy-machine rules made uncertain gets its first verdict back
        result = PerformanceChange(first.details.get("first_result", first.result.value))
        confirmed = f"confirmed by {runs} interleaved runs a side: {shown}, re-run {_ratio_text(second)}"
        return replace(first, result=result, reason=_join(_decided(first.reason), confirmed),
                       details={**first.details, "confirmation": "confirmed"})
    again = "no measurement" if second is None else f"re-run {_ratio_text(second)} ({second.result.value})"
    maybe = (PerformanceChange.MAYBE_DEGRADATION if first.result.is_degradation
             else PerformanceChange.MAYBE_OPTIMIZATION)
    return replace(first, result=maybe,
                   reason=_join(_decided(first.reason),
                                f"not confirmed by {runs} interleaved runs a side: {shown}, {again}"),
                   details={**first.details, "confirmation": "not confirmed", "first_result": first.result.value})


def _join(old: str, new: str) -> str:
    return f"{old}; {new}" if old else new


def _decided(reason: str) -> str:
    """``reason`` without the advice to confirm: interleaved re-runs have decided."""
    return reason.replace(f"; {CONFIRM_ADVICE}", "")


def _unchecked(finding: Finding, why: str) -> Finding:
    return replace(finding, reason=_join(finding.reason, f"could not be confirmed: {why}"),
                   details={**finding.details, "confirmation": "unchecked"})


def confirm_versions(repo: Any, versions: Sequence[VersionReport], cache: ProfileCache, strategy: Strategy,
                     runs: int = DEFAULT_RUNS, *, emit: Callable[[Any], None] | None = None,
                     cancel: threading.Event | None = None, doubtful_only: bool = False) -> list[VersionReport]:
    """The versions with each time-based change confirmed or not by interleaved re-runs (see the module).

    ``doubtful_only``: only the changes a busy machine made Maybe (see :func:`needs_confirmation`).
    """

    def wanted(pair: PairReport, finding: Finding) -> bool:
        return needs_confirmation(pair, finding, doubtful_only=doubtful_only)

    emit = emit or (lambda event: None)
    cancel = cancel or threading.Event()
    work: dict[tuple[str, str], list[tuple[int, int, Rerun]]] = {}
    replaced: dict[tuple[int, int, int], Finding] = {}
    count = 0
    for v, version in enumerate(versions):
        for p, pair in enumerate(version.pairs):
            wanted_here = [i for i, f in enumerate(pair.findings) if wanted(pair, f)]
            if not wanted_here:
                continue
            job = rerun_of_pair(repo, cache, pair, any_collector=True)
            if isinstance(job, str):
                if doubtful_only:  # a Maybe nobody asked to confirm stays as it is, its reason unchanged
                    continue
                for i in wanted_here:
                    replaced[(v, p, i)] = _unchecked(pair.findings[i], job)
                continue
            count += len(wanted_here)
            work.setdefault((pair.baseline.minor, pair.target.minor), []).append((v, p, job))  # type: ignore[arg-type]
    if work:
        emit(ConfirmationStarted(count, len(work), runs, tuple(work)))
    for (base_minor, target_minor), items in work.items():
        jobs: list[Rerun] = []
        for _v, _p, job in items:
            if job not in jobs:
                jobs.append(job)
        try:
            measured = interleave(repo, base_minor, target_minor, jobs, runs, cancel)
        except Interrupted:
            raise
        except PerunError as exc:
            for v, p, _job in items:
                pair = versions[v].pairs[p]
                for i, f in enumerate(pair.findings):
                    if wanted(pair, f):
                        replaced[(v, p, i)] = _unchecked(f, f"the re-runs failed: {exc.message}")
            continue
        for v, p, job in items:
            pair = versions[v].pairs[p]
            base_profile, target_profile = measured[jobs.index(job)]
            # interleaved runs share whatever load there was: the busy-machine rules are for runs made apart
            outcome = check_pair(ProfileData(base_profile), ProfileData(target_profile), strategy, temper=False)
            again = {(f.method, f.location): f for f in outcome.findings}
            for i, f in enumerate(pair.findings):
                if wanted(pair, f):
                    replaced[(v, p, i)] = _verdict(f, again.get((f.method, f.location)), runs)
    confirmed = sum(1 for f in replaced.values() if f.details.get("confirmation") == "confirmed")
    failed = sum(1 for f in replaced.values() if f.details.get("confirmation") == "not confirmed")
    if work:
        emit(ConfirmationFinished(confirmed, failed, len(replaced) - confirmed - failed, tuple(work)))
    out = []
    for v, version in enumerate(versions):
        pairs = []
        for p, pair in enumerate(version.pairs):
            findings = tuple(replaced.get((v, p, i), f) for i, f in enumerate(pair.findings))
            pairs.append(replace(pair, findings=findings))
        out.append(replace(version, pairs=tuple(pairs)))
    return out
