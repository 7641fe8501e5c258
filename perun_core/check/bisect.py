"""Bisect: the first commit between a good and a bad one where a job's profile degrades.

The commits are the first-parent line from BAD back to GOOD.  Each tested
commit needs a profile of every selected job: one registered at it is reused
(its index entry has the job's configuration); otherwise the runner
collects the missing jobs in a temporary worktree of that commit
(``execute.pre_run`` builds it there; the user's checkout is never touched).
The profile is checked against GOOD's with the configured strategy (or the
given methods): a certain degradation (``fail_on`` "maybe": any) makes the
commit bad.  A commit that cannot be profiled -- its build or a job fails --
is skipped, and the nearest untested commit is tried instead.  The search
halves the range each step, so about log2(n) collections for n commits,
fewer when profiles are already stored.

The culprit, the first bad commit, is also checked against its parent when
both have profiles, and reported with its finding against GOOD.  When
skipped commits sit right before it the culprit is ambiguous: the result
names them as ``candidates``.  Collected profiles are registered at their
commits with ``register``; otherwise they are dropped after the bisect.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import CollectionError, Interrupted, PerunError, PreRunFailed, UsageError
from ..profile.codec import load_profile_from_file
from ..runner.run import RunOptions, execute
from .data import ProfileData, config_key
from .engine import check_pair
from .noise import profile_advice
from .results import Finding

__all__ = ["BisectCollecting", "BisectFinished", "BisectResult", "BisectStarted", "BisectStep", "BisectTested",
           "BisectRunEvent", "bisect"]

EventCallback = Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class BisectStarted:
    good: str
    bad: str
    commits: int          # commits on the line, GOOD and BAD included
    jobs: int


@dataclass(frozen=True, slots=True)
class BisectCollecting:
    """Profiles of ``jobs`` jobs are being collected at ``commit`` (a temporary worktree)."""

    commit: str
    jobs: int


@dataclass(frozen=True, slots=True)
class BisectRunEvent:
    """An event of the run collecting at a commit (see :mod:`perun_core.events`)."""

    event: Any


@dataclass(frozen=True, slots=True)
class BisectStep:
    """One tested commit: ``verdict`` good, bad or skipped; ``reused`` when nothing had to be collected."""

    commit: str
    verdict: str
    reused: bool
    reason: str | None = None
    findings: tuple[Finding, ...] = ()


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
    parent_findings: tuple[Finding, ...]   # the culprit against its parent (when both have profiles)
    skipped: tuple[tuple[str, str], ...]   # (commit, why) of commits that could not be profiled
    steps: tuple[BisectStep, ...]
    collections: int                       # runs started (one per commit that lacked profiles)
    commits: int                           # commits on the line from GOOD to BAD
    candidates: tuple[str, ...] = field(default=())   # skipped commits that may be the culprit instead
    registered: int = 0


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


class _Bisector:
    def __init__(self, repo: Any, jobs: Sequence[Any], strategy: Any, register: bool, fail_on: str,
                 emit: EventCallback, cancel: threading.Event | None) -> None:
        self.repo = repo
        self.jobs = list(jobs)
        self.strategy = strategy
        self.register = register
        self.fail_on = fail_on
        self.emit = emit
        self.cancel = cancel
        self.profiles: dict[str, dict[tuple, Any]] = {}
        self.collections = 0
        self.registered = 0

    def stop_if(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Interrupted("bisect cancelled")

    def stored(self, sha: str) -> dict[tuple, Any]:
        wanted = {job_key(job) for job in self.jobs}
        found: dict[tuple, Any] = {}
        for entry in reversed(self.repo.entries_with_metadata(sha)):  # the newest registration wins
            key = config_key(entry)
            if key in wanted and key not in found:
                found[key] = entry.checksum
        return found

    def profiles_of(self, sha: str) -> tuple[dict[tuple, Any], bool]:
        """The selected jobs' profiles at ``sha`` (collecting what is missing); raises _Skip."""
        if sha in self.profiles:
            return self.profiles[sha], True

        stored = self.stored(sha)
        result = {key: self.repo.objects.read_profile(checksum) for key, checksum in stored.items()}
        missing = [job for job in self.jobs if job_key(job) not in result]
        reused = not missing
        if missing:
            self.stop_if()
            self.collections += 1
            self.emit(BisectCollecting(sha, len(missing)))
            try:
                run = execute(self.repo, missing, RunOptions(minor_versions=(sha,), advise=profile_advice),
                              on_event=lambda event: self.emit(BisectRunEvent(event)), cancel=self.cancel)
            except PreRunFailed as exc:
                raise _Skip(exc.message) from None
            except CollectionError as exc:
                raise _Skip(exc.message) from None
            for written in run.profiles:
                result[job_key(written.job)] = self._keep(sha, written)
            if run.failures:
                raise _Skip(run.failures[0].message)
        self.profiles[sha] = result
        return result, reused

    def _keep(self, sha: str, written: Any) -> Any:
        if written.registered:
            return self.repo.objects.read_profile(written.checksum)
        profile = load_profile_from_file(written.path)
        if self.register:
            self.repo.register(sha, profile, written.path.name, time.time())
            self.registered += 1
        with contextlib.suppress(FileNotFoundError):
            written.path.unlink()
        return profile

    def compare(self, baseline: dict[tuple, Any], target: dict[tuple, Any], names: tuple[str, str]) -> list[Finding]:
        findings: list[Finding] = []
        for key, profile in target.items():
            if key not in baseline:
                continue
            outcome = check_pair(ProfileData(baseline[key], label=names[0]), ProfileData(profile, label=names[1]),
                                 self.strategy, baseline_name=names[0], target_name=names[1])
            findings.extend(outcome.findings)
        return findings

    def degraded(self, findings: list[Finding]) -> list[Finding]:
        if self.fail_on == "maybe":
            return [f for f in findings if f.result.is_degradation]
        if self.fail_on == "never":
            return []
        return [f for f in findings if f.result.is_degradation and not f.result.is_maybe]

    def test(self, sha: str, good_profiles: dict[tuple, Any], good: str) -> BisectStep:
        self.stop_if()
        try:
            profiles, reused = self.profiles_of(sha)
        except _Skip as skip:
            return BisectStep(sha, "skipped", False, skip.reason)
        bad = self.degraded(self.compare(good_profiles, profiles, (good[:7], sha[:7])))
        return BisectStep(sha, "bad" if bad else "good", reused, None, tuple(bad))


def bisect(repo: Any, good: str, bad: str, jobs: Sequence[Any], strategy: Any, *, register: bool = False,
           fail_on: str = "degradation", on_event: EventCallback | None = None,
           cancel: threading.Event | None = None) -> BisectResult:
    """Find the first commit from ``good`` to ``bad`` (full shas) whose profiles degrade; see the module docstring."""
    emit = on_event or (lambda event: None)
    started = time.monotonic()
    if not jobs:
        raise UsageError("there are no jobs to bisect with")
    line = first_parent_line(repo.vcs, good, bad)
    if len(line) < 2:
        raise UsageError("GOOD and BAD are the same commit: nothing to bisect")
    worker = _Bisector(repo, jobs, strategy, register, fail_on, emit, cancel)
    emit(BisectStarted(good, bad, len(line), len(jobs)))
    culprit: str | None = None
    try:
        try:
            good_profiles, _ = worker.profiles_of(good)
        except _Skip as skip:
            raise PerunError(f"GOOD {good[:7]} cannot be profiled: {skip.reason}") from None
        steps: list[BisectStep] = []
        last = worker.test(bad, good_profiles, good)
        steps.append(last)
        if last.verdict == "skipped":
            raise PerunError(f"BAD {bad[:7]} cannot be profiled: {last.reason}")
        emit(BisectTested(last, len(line) - 2))
        if last.verdict == "good":
            return _result(worker, good, bad, None, (), (), steps, line, ())
        lo, hi = 0, len(line) - 1
        findings = last.findings
        skipped: set[int] = set()
        while True:
            untried = [i for i in range(lo + 1, hi) if i not in skipped]
            if not untried:
                break
            middle = (lo + hi) / 2
            index = min(untried, key=lambda i: (abs(i - middle), i))
            step = worker.test(line[index], good_profiles, good)
            steps.append(step)
            if step.verdict == "skipped":
                skipped.add(index)
            elif step.verdict == "bad":
                hi, findings = index, step.findings
            else:
                lo = index
            emit(BisectTested(step, len([i for i in range(lo + 1, hi) if i not in skipped])))
        culprit = line[hi]
        candidates = tuple(line[i] for i in range(lo + 1, hi))
        parent_findings: tuple[Finding, ...] = ()
        parent = line[hi - 1]
        if parent in worker.profiles and culprit in worker.profiles:
            parent_findings = tuple(worker.compare(worker.profiles[parent], worker.profiles[culprit],
                                                   (parent[:7], culprit[:7])))
        return _result(worker, good, bad, culprit, findings, parent_findings, steps, line, candidates)
    finally:
        emit(BisectFinished(culprit, worker.collections, time.monotonic() - started))


def _result(worker: _Bisector, good: str, bad: str, culprit: str | None, findings: Sequence[Finding],
            parent_findings: Sequence[Finding], steps: list[BisectStep], line: list[str],
            candidates: tuple[str, ...]) -> BisectResult:
    skipped = tuple((s.commit, s.reason or "") for s in steps if s.verdict == "skipped")
    return BisectResult(good, bad, culprit, tuple(findings), tuple(parent_findings), skipped, tuple(steps),
                        worker.collections, len(line), candidates, worker.registered)
