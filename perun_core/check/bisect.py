"""Bisect: the first commit between a good and a bad one where a job's profile degrades.

The commits are the first-parent line from BAD back to GOOD.  GOOD and BAD
are checked first with the configured strategy (or the given methods): the
locations it finds degraded (``fail_on`` "maybe": also uncertain ones) are
what the search follows; none, and there is nothing to bisect.

A tested commit is *placed* between GOOD and BAD, location by location, on
a log scale (see :func:`place`): it is bad when its measurements sit
significantly above the middle of GOOD's and BAD's levels, good when
significantly below, and undecided otherwise.  The threshold is thus half of
the change being hunted, not a fixed percentage.  The measurements come from
one *window*: the job runs in built temporary worktrees of GOOD, the
commit and BAD in turns (G C B B C G G C B ..., see
:func:`~perun_core.check.confirm.alternate`), so a machine that gets busier
slows all three alike.  An undecided commit gets another window (pooled with
the first), up to :data:`MAX_WINDOWS` (:data:`RECHECK_WINDOWS` in the
re-check below); still undecided, it is set aside like
a commit that cannot be built and the nearest untested commit is tried.

Profiles stored at a commit for every selected job (registered, or pending
with the commit as origin) are used instead of measuring; the commit is then
placed against GOOD's and BAD's stored profiles, and measured only if that
leaves it undecided.  Finally the boundary, the first bad commit and its
parent, is measured again in a fresh window of its own; a parent the search
set aside that measures bad there becomes the first bad commit, and its own
parent is measured again.  The result is ``certain`` only if the re-check
agrees and no set-aside commit lies between them.  Measured profiles are registered at their commits with
``register`` (the first window's, one per job); otherwise nothing is kept.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import CollectionError, Interrupted, PerunError, PreRunFailed, UsageError
from .confirm import DEFAULT_RUNS, alternate, built_worktree, merge_runs
from .rerun import rerun_for_job
from .data import ProfileData, config_key
from .engine import check_pair
from .pairing import Pairing, ProfileCache
from .results import Finding

__all__ = ["ALPHA", "MAX_WINDOWS", "RECHECK_WINDOWS", "BisectCollecting",
           "BisectFinished", "BisectResult", "BisectRunEvent",
           "BisectStarted", "BisectStep", "BisectTested", "bisect", "place"]

EventCallback = Callable[[Any], None]

#: The rank test's level for calling a commit good or bad (split among the followed locations).
ALPHA = 0.01
#: Windows a commit is measured in at most before it is called undecided.
MAX_WINDOWS = 3
#: The same for the re-check of the boundary: an undecided re-check makes the whole answer uncertain (and costs
#: the user a bisect of their own), where an undecided search step is only set aside, so it gets more runs
#: before giving up (a busy machine can need 30 runs a side to place a commit a sixth of the way to BAD).
RECHECK_WINDOWS = 5


@dataclass(frozen=True, slots=True)
class BisectStarted:
    good: str
    bad: str
    commits: int          # commits on the line, GOOD and BAD included
    jobs: int


@dataclass(frozen=True, slots=True)
class BisectCollecting:
    """``jobs`` jobs are being measured at ``commit``, in turns with GOOD and BAD (temporary worktrees)."""

    commit: str
    jobs: int


@dataclass(frozen=True, slots=True)
class BisectRunEvent:
    """An event of a run collecting at a commit (see :mod:`perun_core.events`)."""

    event: Any


@dataclass(frozen=True, slots=True)
class BisectStep:
    """One tested commit: ``verdict`` good, bad, undecided or skipped.

    ``reused``: placed by stored profiles, nothing measured.  ``position``:
    where the commit sits between GOOD (0) and BAD (1) at ``location``,
    with the rank test's ``p_value``; ``runs`` a side were measured.
    ``recheck``: the boundary's second measurement.
    """

    commit: str
    verdict: str
    reused: bool
    reason: str | None = None
    findings: tuple[Finding, ...] = ()
    position: float | None = None
    p_value: float | None = None
    location: str | None = None
    runs: int = 0
    recheck: bool = False


@dataclass(frozen=True, slots=True)
class BisectTested:
    step: BisectStep
    remaining: int        # commits still between the last good and the first bad one


@dataclass(frozen=True, slots=True)
class BisectFinished:
    culprit: str | None
    collections: int
    seconds: float


@dataclass(frozen=True, slots=True)
class BisectResult:
    good: str
    bad: str
    culprit: str | None                    # None: BAD is not degraded against GOOD
    findings: tuple[Finding, ...]          # the culprit's degradations against GOOD
    parent_findings: tuple[Finding, ...]   # the culprit against its parent
    skipped: tuple[tuple[str, str], ...]   # (commit, why) of commits that could not be profiled or placed
    steps: tuple[BisectStep, ...]
    collections: int                       # measurement windows run
    commits: int                           # commits on the line from GOOD to BAD
    candidates: tuple[str, ...] = field(default=())   # set-aside commits that may be the culprit instead
    registered: int = 0
    certain: bool = False                  # the re-check agreed and no set-aside commit is a candidate
    doubt: str | None = None               # why the culprit is not certain
    #: whether ``findings`` / ``parent_findings`` compare profiles this bisect measured (in turns, just now)
    #: rather than stored ones: such figures differ from what ``check`` reports of the stored profiles
    findings_measured: bool = False
    parent_measured: bool = False
    #: what the stored profiles say of the same pairs (``check``'s verdict), where the figures above were
    #: measured and both commits have stored profiles; empty otherwise
    stored_findings: tuple[Finding, ...] = ()
    stored_parent_findings: tuple[Finding, ...] = ()


class _Skip(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def job_key(job: Any) -> tuple:
    return (job.cmd, job.args, job.workload, job.collector.name, tuple(p.name for p in job.postprocessors))


def first_parent_line(vcs: Any, good: str, bad: str) -> list[str]:
    """Commits from ``good`` to ``bad`` along first parents, oldest first; UsageError if GOOD is not on it."""
    line = [bad]
    seen = {bad}
    current = bad
    while current != good:
        parents = vcs.minor_info(current).parents
        if not parents:
            raise UsageError(f"{good[:7]} is not an ancestor of {bad[:7]} on its first-parent line",
                             hint="give GOOD older than BAD, e.g. 'perun-core bisect v1.0 HEAD'")
        current = parents[0]
        if current in seen:
            break
        seen.add(current)
        line.append(current)
    line.reverse()
    return line


@dataclass(frozen=True, slots=True)
class Placement:
    verdict: str           # good, bad or undecided
    position: float        # 0 at GOOD's level, 1 at BAD's (log scale when every value is positive)
    p_value: float


def place(good: Any, candidate: Any, bad: Any, alpha: float = ALPHA) -> Placement:
    """Where ``candidate``'s values sit between ``good``'s and ``bad``'s (1-D arrays).

    The shift from GOOD to BAD is their Hodges-Lehmann estimate (of the
    logarithms when all values are positive: a ratio is what a slow-down
    is).  The middle is represented by GOOD's values shifted up and BAD's
    shifted down by half of it; a two-sided rank test of the candidate
    against that middle says bad (above, p < ``alpha``), good (below) or
    undecided.  Without a shift there is nothing to place against.
    """
    import numpy as np

    # lazy: stats imports numpy, which 'perun-core bisect --help' does not need
    from .stats import hodges_lehmann, mann_whitney

    values = [np.asarray(v, dtype=float) for v in (good, candidate, bad)]
    if all((v > 0).all() for v in values):
        values = [np.log(v) for v in values]
    g, c, b = values
    shift = hodges_lehmann(g, b)
    if not shift or not math.isfinite(shift):
        return Placement("undecided", math.nan, 1.0)
    sign = 1.0 if shift > 0 else -1.0  # towards BAD is up
    g, c, b, shift = g * sign, c * sign, b * sign, abs(shift)
    middle = np.concatenate((g + shift / 2, b - shift / 2))
    test = mann_whitney(middle, c)
    position = hodges_lehmann(g, c) / shift
    if test.p < alpha:
        return Placement("bad" if test.z > 0 else "good", position, test.p)
    return Placement("undecided", position, test.p)


Profiles = dict[tuple, ProfileData]


class _Bisector:
    """The search's state: followed locations, built worktrees, measured and stored profiles."""

    def __init__(self, repo: Any, jobs: Sequence[Any], strategy: Any, register: bool, fail_on: str,
                 emit: EventCallback, cancel: threading.Event, stack: contextlib.ExitStack, runs: int) -> None:
        self.repo = repo
        self.jobs = list(jobs)
        self.reruns = [rerun_for_job(repo, job) for job in self.jobs]
        self.strategy = strategy
        self.register = register
        self.fail_on = fail_on
        self.emit = emit
        self.cancel = cancel
        self.stack = stack
        self.runs = runs
        self.cache = ProfileCache(repo)
        self.pairing = Pairing(repo)
        self.worktrees: dict[str, Path] = {}
        self.followed: dict[tuple, list[str]] = {}      # job key -> degraded locations of GOOD -> BAD
        self.reference: tuple[Profiles, Profiles] | None = None   # GOOD's and BAD's profiles stored commits meet
        self.ends_stored = False
        self.last: dict[str, Profiles] = {}             # the latest profiles of each tested commit
        self.measured: set[str] = set()                 # commits whose latest profiles this bisect measured
        self.kept: set[str] = set()
        self.collections = 0
        self.registered = 0

    def stop_if(self) -> None:
        if self.cancel.is_set():
            raise Interrupted("bisect cancelled")

    def stored(self, sha: str) -> Profiles | None:
        """Stored profiles of every selected job at ``sha`` (the newest of each), or None if one is missing."""
        wanted = {job_key(job) for job in self.jobs}
        found: Profiles = {}
        for entry in reversed(self.repo.entries_with_metadata(sha)):
            key = config_key(entry)
            if key in wanted and key not in found:
                found[key] = self.cache.get(entry.checksum, sha[:7])
        for info in self.pairing.pending_of(sha):
            key = config_key(info)
            if key in wanted and key not in found:
                found[key] = self.cache.get_info(info, sha[:7])
        return found if len(found) == len(wanted) else None

    def worktree(self, sha: str) -> Path:
        """The built worktree of ``sha`` (kept until the bisect ends); raises _Skip when pre_run fails."""
        if sha not in self.worktrees:
            self.stop_if()
            try:
                self.worktrees[sha] = built_worktree(self.stack, self.repo, sha, self.cancel)
            except PreRunFailed as exc:
                raise _Skip(exc.message) from None
        return self.worktrees[sha]

    def window(self, shas: Sequence[str]) -> list[dict[tuple, list[Any]]]:
        """One window: the jobs in turns at ``shas``; the merged profiles of each. Raises _Skip."""
        sides = [(sha, self.worktree(sha)) for sha in shas]
        for sha in shas[1:-1] or shas[-1:]:
            self.emit(BisectCollecting(sha, len(self.jobs)))
        self.collections += 1
        try:
            measured = alternate(sides, self.reruns, self.runs, self.cancel)
        except CollectionError as exc:
            raise _Skip(exc.message) from None
        out: list[dict[tuple, list[Any]]] = [{} for _sha in shas]
        for job, per_side in zip(self.jobs, measured):
            for side, profile in enumerate(per_side):
                out[side][job_key(job)] = [profile]
        self._keep(shas, measured)
        return out

    def _keep(self, shas: Sequence[str], measured: list[list[Any]]) -> None:
        if not self.register:
            return
        for side, sha in enumerate(shas):
            if sha in self.kept or self.stored(sha) is not None:
                continue
            self.kept.add(sha)
            for number, per_side in enumerate(measured):
                self.repo.register(sha, per_side[side], f"bisect-{sha[:7]}-{number + 1}.perf", time.time())
                self.registered += 1

    def compare(self, baseline: Profiles, target: Profiles, names: tuple[str, str],
                interleaved: bool = False) -> list[tuple[tuple, Finding]]:
        """Findings of ``target`` against ``baseline``; runs made ``interleaved`` share whatever load there
        was, so the busy-machine rules (for runs made apart) do not apply to them."""
        found: list[tuple[tuple, Finding]] = []
        for key, data in target.items():
            if key in baseline:
                outcome = check_pair(baseline[key], data, self.strategy, baseline_name=names[0], target_name=names[1],
                                     temper=not interleaved)
                found.extend((key, finding) for finding in outcome.findings)
        return found

    def degraded(self, findings: list[tuple[tuple, Finding]]) -> list[tuple[tuple, Finding]]:
        if self.fail_on == "never":
            return []
        maybe_too = self.fail_on == "maybe"
        return [(k, f) for k, f in findings if f.result.is_degradation and (maybe_too or not f.result.is_maybe)]

    def placed(self, good: Profiles, candidate: Profiles, bad: Profiles) -> tuple[str, Placement, str]:
        """The commit's verdict over the followed locations, with the deciding placement and its location.

        Locations measure the same runs with different noise (a busy machine
        stretches the real time far more than the CPU time): the most
        significant placement decides unless another contradicts it.
        """
        spots = [(key, location) for key, locations in self.followed.items() for location in locations]
        alpha = ALPHA / max(1, len(spots))
        placements: list[tuple[Placement, str]] = []
        for key, location in spots:
            sides = [profiles[key].samples().get(location) for profiles in (good, candidate, bad)]
            if any(sample is None for sample in sides):
                continue
            values = [sample.y for sample in sides]  # type: ignore[union-attr]
            placements.append((place(*values, alpha=alpha), location))
        if not placements:
            return "undecided", Placement("undecided", math.nan, 1.0), ""
        decided = [p for p in placements if p[0].verdict != "undecided"]
        if not decided:
            return "undecided", *min(placements, key=lambda p: p[0].p_value)
        best = min(decided, key=lambda p: p[0].p_value)
        if any(p[0].verdict != best[0].verdict for p in decided):
            return "undecided", *best  # one place says good, another bad: no honest verdict
        return best[0].verdict, *best

    def step(self, sha: str, good: Profiles, data: Profiles, bad: Profiles, reused: bool, runs: int,
             recheck: bool = False) -> BisectStep:
        verdict, placement, location = self.placed(good, data, bad)
        findings = tuple(f for _k, f in self.degraded(self.compare(good, data, (self.good[:7], sha[:7]),
                                                                   interleaved=not reused)))
        reason = None
        if verdict == "undecided":
            where = "" if math.isnan(placement.position) else f" at {placement.position:.2f} of the way to BAD"
            reason = (f"cannot tell GOOD's level from BAD's{where} after {runs or 'stored'} runs a side "
                      f"(p={placement.p_value:.2g})")
        return BisectStep(sha, verdict, reused, reason, findings if verdict == "bad" else (), placement.position,
                          placement.p_value, location or None, runs, recheck)

    def test(self, shas: Sequence[str], *, use_stored: bool = True, recheck: bool = False) -> dict[str, BisectStep]:
        """Place each of ``shas`` (see the module docstring); skipped ones have the reason."""
        steps: dict[str, BisectStep] = {}
        from_stored: dict[str, BisectStep] = {}
        if use_stored and self.reference is not None:
            for sha in shas:
                data = self.stored(sha)
                if data is not None:
                    step = self.step(sha, self.reference[0], data, self.reference[1], True, 0, recheck)
                    self.last[sha] = data
                    self.measured.discard(sha)
                    if step.verdict != "undecided":
                        steps[sha] = step
                    from_stored[sha] = step

        def unmeasured(sha: str, why: str) -> BisectStep:
            # a commit its stored profiles left undecided stays undecided, with both reasons
            if sha in from_stored:
                return replace(from_stored[sha], reason=f"{from_stored[sha].reason}; measuring it failed: {why}")
            return BisectStep(sha, "skipped", False, why, recheck=recheck)

        pending = [sha for sha in shas if sha not in steps]
        pooled: dict[str, dict[tuple, list[Any]]] = {}
        windows = RECHECK_WINDOWS if recheck else MAX_WINDOWS
        for number in range(windows):
            if not pending:
                break
            self.stop_if()
            try:
                for sha in pending:
                    self.worktree(sha)
            except _Skip as skip:
                bad_sha = next(s for s in pending if s not in self.worktrees)
                steps[bad_sha] = unmeasured(bad_sha, skip.reason)
                pending.remove(bad_sha)
                continue
            order = [self.good, *pending, self.bad]
            try:
                measured = self.window(order)
            except _Skip as skip:
                for sha in pending:
                    steps[sha] = unmeasured(sha, skip.reason)
                break
            for sha, profiles in zip(order, measured):
                for key, runs in profiles.items():
                    pooled.setdefault(sha, {}).setdefault(key, []).extend(runs)
            merged = {sha: {key: ProfileData(merge_runs(runs), label=sha[:7]) for key, runs in by_key.items()}
                      for sha, by_key in pooled.items()}
            for sha in list(pending):
                step = self.step(sha, merged[self.good], merged[sha], merged[self.bad], False,
                                 self.runs * (number + 1), recheck)
                self.last[sha] = merged[sha]
                self.measured.add(sha)
                if step.verdict != "undecided" or number == windows - 1:
                    steps[sha] = step
                    pending.remove(sha)
        return steps

    def start(self, good: str, bad: str) -> list[Finding]:
        """Check BAD against GOOD and fix the followed locations; the degradations found."""
        self.good, self.bad = good, bad
        stored = (self.stored(good), self.stored(bad))
        if stored[0] is not None and stored[1] is not None:
            self.reference = (stored[0], stored[1])
            self.ends_stored = True
            found = self.degraded(self.compare(stored[0], stored[1], (good[:7], bad[:7])))
            self.last.update({good: stored[0], bad: stored[1]})
            self.measured -= {good, bad}
        else:
            found = []
            pooled: list[list[Any]] = [[], []]
            for side_name, sha in (("GOOD", good), ("BAD", bad)):
                try:
                    self.worktree(sha)
                except _Skip as skip:
                    raise PerunError(f"{side_name} {sha[:7]} cannot be profiled: {skip.reason}") from None
            for number in range(MAX_WINDOWS):
                try:
                    measured = self.window([good, bad])
                except _Skip as skip:
                    raise PerunError(f"GOOD {good[:7]} or BAD {bad[:7]} cannot be profiled: {skip.reason}") from None
                for side in (0, 1):
                    pooled[side].append(measured[side])
                both = [{key: ProfileData(merge_runs([p for window in pooled[side] for p in window[key]]))
                         for key in measured[side]} for side in (0, 1)]
                findings = self.compare(both[0], both[1], (good[:7], bad[:7]), interleaved=True)
                found = self.degraded(findings)
                self.last.update({good: both[0], bad: both[1]})
                self.measured |= {good, bad}
                self.reference = (both[0], both[1])
                # another window only when the strategy saw a change it was not sure of
                if found or not any(f.result.is_degradation for _k, f in findings):
                    break
        for key, finding in found:
            if finding.location not in self.followed.setdefault(key, []):
                self.followed[key].append(finding.location)
        return [f for _k, f in found]


def bisect(repo: Any, good: str, bad: str, jobs: Sequence[Any], strategy: Any, *, register: bool = False,
           fail_on: str = "degradation", on_event: EventCallback | None = None,
           cancel: threading.Event | None = None, runs: int = DEFAULT_RUNS) -> BisectResult:
    """Find the first commit from ``good`` to ``bad`` (full shas) whose profiles degrade; see the module docstring.

    ``runs``: measured runs a side in one window.
    """
    emit = on_event or (lambda event: None)
    started = time.monotonic()
    if not jobs:
        raise UsageError("there are no jobs to bisect with")
    line = first_parent_line(repo.vcs, good, bad)
    if len(line) < 2:
        raise UsageError("GOOD and BAD are the same commit: nothing to bisect")
    culprit: str | None = None
    worker: _Bisector | None = None
    try:
        with contextlib.ExitStack() as stack:
            worker = _Bisector(repo, jobs, strategy, register, fail_on, emit, cancel or threading.Event(), stack, runs)
            emit(BisectStarted(good, bad, len(line), len(jobs)))
            degradations = worker.start(good, bad)
            first = BisectStep(bad, "bad" if degradations else "good", worker.ends_stored,
                               findings=tuple(degradations), position=1.0, runs=0 if worker.ends_stored else runs)
            emit(BisectTested(first, len(line) - 2 if degradations else 0))
            if not degradations:
                return _result(worker, None, (), (), [first], line, (), certain=True)
            result = _search(worker, line, first)
            culprit = result.culprit
            return result
    finally:
        emit(BisectFinished(culprit, worker.collections if worker else 0, time.monotonic() - started))


def _search(worker: _Bisector, line: list[str], first: BisectStep) -> BisectResult:
    """Halve the range down to the first bad commit, then re-check the boundary."""
    steps = [first]
    lo, hi = 0, len(line) - 1
    findings, measured_findings = first.findings, not first.reused
    aside: set[int] = set()
    while True:
        untried = [i for i in range(lo + 1, hi) if i not in aside]
        if not untried:
            break
        middle = (lo + hi) / 2
        index = min(untried, key=lambda i: (abs(i - middle), i))
        step = worker.test([line[index]])[line[index]]
        steps.append(step)
        if step.verdict in ("skipped", "undecided"):
            aside.add(index)
        elif step.verdict == "bad":
            hi, findings, measured_findings = index, step.findings, not step.reused
        else:
            lo = index
        worker.emit(BisectTested(step, len([i for i in range(lo + 1, hi) if i not in aside])))
    measured = {s.commit for s in steps if not s.reused}
    rechecked: dict[str, BisectStep] = {}
    while True:
        culprit, parent = line[hi], line[hi - 1]
        again = [sha for sha in (parent, culprit)
                 if sha not in (worker.good, worker.bad) and sha in measured and sha not in rechecked]
        if again:
            for sha, step in _ordered(worker.test(again, use_stored=False, recheck=True), again):
                rechecked[sha] = step
                steps.append(step)
                worker.emit(BisectTested(step, 0))
        # a parent the search set aside (undecided, e.g. on a busy machine) and bad on re-check is the first bad
        # commit as far as the boundary shows: the boundary moves back to it and its own parent is re-checked
        if hi - 1 in aside and parent in rechecked and rechecked[parent].verdict == "bad":
            aside.discard(hi - 1)
            hi, findings, measured_findings = hi - 1, rechecked[parent].findings, True
            continue
        break
    candidates = tuple(line[i] for i in range(lo + 1, hi) if i in aside)
    expected = {parent: "good", culprit: "bad"}
    doubts = [f"{sha[:7]} was {rechecked[sha].verdict} on re-check (expected {expected[sha]})"
              for sha in (parent, culprit) if sha in rechecked and rechecked[sha].verdict != expected[sha]]
    if parent in rechecked and rechecked[parent].verdict == "good":
        # the culprit's parent measured good: a commit set aside before it cannot be the first bad one
        # (a parent left undecided by the search and good on re-check listed itself as a doubt)
        candidates = ()
    if candidates:
        doubts.append("commits set aside lie before it: " + ", ".join(c[:7] for c in candidates))
    parent_findings: tuple[Finding, ...] = ()
    parent_measured = False
    if parent in worker.last and culprit in worker.last:
        parent_measured = bool({parent, culprit} & worker.measured)
        parent_findings = tuple(f for _k, f in worker.compare(worker.last[parent], worker.last[culprit],
                                                               (parent[:7], culprit[:7])))
    result = _result(worker, culprit, findings, parent_findings, steps, line, candidates, certain=not doubts,
                     doubt="; ".join(doubts) or None)
    # figures measured just now sit beside what check reports of the stored profiles of the same pair: both are
    # given, each marked, so that two numbers of one change do not read as a contradiction
    return replace(result, findings_measured=measured_findings, parent_measured=parent_measured,
                   stored_findings=_stored_findings(worker, worker.good, culprit) if measured_findings else (),
                   stored_parent_findings=_stored_findings(worker, parent, culprit) if parent_measured else ())


def _stored_findings(worker: _Bisector, baseline: str, target: str) -> tuple[Finding, ...]:
    """The findings of ``target``'s stored profiles against ``baseline``'s (as ``check`` gives them); () when
    either commit has none stored before the bisect."""
    if {baseline, target} & worker.kept:  # registered by this bisect (--register): its own runs, not check's
        return ()
    before, after = worker.stored(baseline), worker.stored(target)
    if before is None or after is None:
        return ()
    return tuple(f for _k, f in worker.compare(before, after, (baseline[:7], target[:7])))


def _ordered(steps: dict[str, BisectStep], shas: Sequence[str]) -> list[tuple[str, BisectStep]]:
    """``steps`` in the order of ``shas`` (the order they were measured in)."""
    return [(sha, steps[sha]) for sha in shas if sha in steps]


def _result(worker: _Bisector, culprit: str | None, findings: Sequence[Finding],
            parent_findings: Sequence[Finding], steps: list[BisectStep], line: list[str],
            candidates: tuple[str, ...], *, certain: bool, doubt: str | None = None) -> BisectResult:
    # a commit the search set aside but its re-check placed is no longer skipped
    placed = {s.commit for s in steps if s.recheck and s.verdict in ("good", "bad")}
    skipped = tuple((s.commit, s.reason or "") for s in steps
                    if s.verdict in ("skipped", "undecided") and not s.recheck and s.commit not in placed)
    return BisectResult(worker.good, worker.bad, culprit, tuple(findings), tuple(parent_findings), skipped,
                        tuple(steps), worker.collections, len(line), candidates, worker.registered, certain, doubt)
