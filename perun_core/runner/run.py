"""The engine behind ``collect``, ``run job`` and ``run matrix``.

:func:`execute` plans a run (which commits, where, which jobs), then for
every commit runs ``execute.pre_run`` and every job, writing one pending
profile per successful job into ``.perun/jobs`` (and registering it when
``profiles.register_after_run`` is set).  Everything that can be checked is
checked before anything runs: revisions, units and their parameters, the
name template, the command lines, a dirty working tree.

Where jobs run:

* without ``minor_versions`` and ``crawl_parents``, for the checked-out
  commit (HEAD) in the user's working tree, whose root is the working
  directory; a tree with uncommitted changes to tracked files is refused
  (:class:`~perun_core.errors.DirtyWorkingTree`) unless ``force_dirty``;
* with ``minor_versions`` (and their ancestors with ``crawl_parents``), every
  named commit, HEAD included, in a temporary worktree holding exactly that
  commit's files (:mod:`perun_core.runner.worktree`), which is the working
  directory; the user's checkout is never touched.

Either way, relative commands and workloads resolve against the root of the
tree they run in, and profiles get ``origin`` = the commit they ran for.

A job whose workload is the id of a workload generator (``generators.workload``
in the configuration) is collected once per generated workload, see
:mod:`perun_core.runner.generators`.

A job that fails (its command exits non-zero, a unit reports an error) is
reported with :class:`~perun_core.events.JobFailed` and the run goes
on with the next job; the failures are returned in :class:`RunResult`.  A
failing pre_run command stops the run.  An interrupt (Ctrl-C, SIGTERM or
SIGHUP in the main thread, or the ``cancel`` event from any thread) kills the
profiled process group, removes the temporary worktree and raises
:class:`~perun_core.errors.Interrupted`; profiles are written atomically, so
no partial file is ever left.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import (
    CollectionError,
    DirtyWorkingTree,
    Interrupted,
    PerunError,
    PostprocessError,
    PreRunFailed,
    UsageError,
)
from ..profile.machine import load_average, machine_info
from ..profile.model import Profile
from ..events import (
    JobFailed,
    JobFinished,
    JobStarted,
    MeasurementAdvice,
    OutputLine,
    PhaseStarted,
    ProfileRegistered,
    ProfileWritten,
    RunFinished,
    RunPlanned,
    VersionFinished,
    VersionStarted,
)
from ..units import UnitContext, collectors
from .jobs import Job
from .phases import apply_postprocessor, as_profile, run_phases
from .naming import TEMPLATE_KEY, render_name, validate_template, write_new_profile
from .process import describe_status, run_process
from .worktree import temporary_worktree

__all__ = ["RunOptions", "RunResult", "WrittenProfile", "apply_postprocessor", "collect_job", "execute",
           "parse_shard", "plan_versions", "postprocess_job", "shard_plan"]

EventCallback = Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class RunOptions:
    """For which commits a run goes, and how its profiles are named.

    ``output_template`` None means ``format.output_profile_template``;
    ``execute.pre_run`` and ``profiles.register_after_run`` always come from
    the configuration.
    """

    minor_versions: Sequence[str] = ()
    crawl_parents: bool = False
    force_dirty: bool = False
    output_template: str | None = None
    #: (K, N): run only the K-th of N deterministic slices of commits x jobs (see :func:`shard_plan`)
    shard: tuple[int, int] | None = None
    #: One line of advice for a noisy time profile, or None; emitted as MeasurementAdvice.  The
    #: runner does not judge measurements itself: its callers pass the check engine's judgement
    #: (:func:`perun_core.check.noise.profile_advice`), keeping runner below check.
    advise: Callable[[Profile], str | None] | None = None


#: the most slices ``--shard`` cuts a run into (more CI jobs than this is a typo, not a plan)
MAX_SHARDS = 10_000


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as (K, N) with 1 <= K <= N <= :data:`MAX_SHARDS`; UsageError otherwise (also for an empty text)."""
    import re

    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not match:
        raise UsageError(f"--shard '{text}': expected K/N, e.g. 2/4 for the second of four slices")
    # a digit string of thousands of digits is too long for int(): compare lengths first
    if len(match.group(2).lstrip("0")) > len(str(MAX_SHARDS)) or int(match.group(2)) > MAX_SHARDS:
        raise UsageError(f"--shard '{text}': N must be at most {MAX_SHARDS}")
    n = int(match.group(2))
    k = int(match.group(1)) if len(match.group(1).lstrip("0")) <= len(str(MAX_SHARDS)) else n + 1
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"--shard '{text}': K must be between 1 and N (N at least 1)")
    return k, n


def shard_plan(versions: Sequence[str], jobs: Sequence[Job], shard: tuple[int, int] | None) -> list[tuple[str, list[Job]]]:
    """The (commit, jobs) of one shard, in run order.

    All pairs commit x job are listed commit by commit, in history order and
    matrix order, and cut into N contiguous slices whose sizes differ by at
    most one; shard K runs the K-th.  Contiguous slices keep each commit on
    as few shards as possible, so its build (``execute.pre_run``) runs on few
    machines.  The same commits and matrix give every CI job the same split,
    and the N slices together are exactly the whole run.
    """
    if shard is None:
        return [(version, list(jobs)) for version in versions]
    k, n = shard
    total = len(versions) * len(jobs)
    start, end = (k - 1) * total // n, k * total // n
    plan: list[tuple[str, list[Job]]] = []
    for position in range(start, end):
        version, job = versions[position // len(jobs)], jobs[position % len(jobs)]
        if plan and plan[-1][0] == version:
            plan[-1][1].append(job)
        else:
            plan.append((version, [job]))
    return plan


@dataclass(frozen=True, slots=True)
class WrittenProfile:
    """A profile a run produced.  ``path`` is gone once it was registered."""

    path: Path
    origin: str
    job: Job
    registered: bool = False
    checksum: str | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    versions: tuple[str, ...]
    jobs: int
    profiles: tuple[WrittenProfile, ...] = ()
    failures: tuple[CollectionError, ...] = field(default=())

    @property
    def total(self) -> int:
        return self.jobs * len(self.versions)


def plan_versions(repo: Any, minor_versions: Sequence[str], crawl_parents: bool) -> tuple[list[str], bool]:
    """(commits to profile, whether in the user's checkout); InvalidRevision for a bad one.

    ``crawl_parents`` adds every ancestor of each named commit (of HEAD when
    none is named), in history order, each commit once.
    """
    vcs = repo.vcs
    if not minor_versions and not crawl_parents:
        return [vcs.head()], not vcs.bare
    starts = [vcs.massage(rev) for rev in (minor_versions or ["HEAD"])]
    versions: list[str] = []
    seen: set[str] = set()
    for start in starts:
        chain = [info.checksum for info in vcs.walk_minor_versions(start)] if crawl_parents else [start]
        for sha in chain:
            if sha not in seen:
                seen.add(sha)
                versions.append(sha)
    return versions, False


def _split_commands(commands: Sequence[str]) -> list[tuple[str, list[str]]]:
    import shlex

    split = []
    for command in commands:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(f"cannot split the pre_run command {command!r}: {exc}") from None
        if argv:
            split.append((command, argv))
    return split


@contextlib.contextmanager
def _termination_as_interrupt() -> Iterator[None]:
    """In the main thread, SIGTERM and SIGHUP raise KeyboardInterrupt, so cleanups run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            previous[signum] = signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def execute(
    repo: Any,
    jobs: Sequence[Job],
    options: RunOptions = RunOptions(),
    *,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run ``jobs`` for the commits ``options`` select; see the module docstring."""
    # lazy: perun_core.runner.generators imports this module back at load (circular)
    from .generators import generators_from_config

    emit = on_event or (lambda event: None)
    cancel = cancel or threading.Event()
    if not jobs:
        raise UsageError("there are no jobs to run")
    for job in jobs:
        job.argv()
    template = options.output_template or str(repo.config.get(TEMPLATE_KEY))
    validate_template(template)
    # The configuration was validated when it was loaded.
    commands = _split_commands(repo.config.get_or("execute.pre_run") or [])
    register = bool(repo.config.get_or("profiles.register_after_run", False))
    generators = generators_from_config(repo.config, getattr(repo, "local_config_path", None))
    versions, in_place = plan_versions(repo, options.minor_versions, options.crawl_parents)
    if in_place and not options.force_dirty and repo.vcs.is_dirty():
        raise DirtyWorkingTree(repo.vcs.root)

    plan = shard_plan(versions, list(jobs), options.shard)
    run = _Run(repo, list(jobs), [version for version, _ in plan], in_place, commands, template, register, emit,
               cancel)
    run.advise = options.advise
    run.plan = dict(plan)
    run.total = sum(len(selected) for _, selected in plan)
    run.generators = generators
    run.default_timeout = float(repo.config.get_or("execute.timeout", 0) or 0) or None
    return run.go()


class _Run:
    """State of one run: counters, results and the event callback."""

    def __init__(self, repo: Any, jobs: list[Job], versions: list[str], in_place: bool,
                 commands: list[tuple[str, list[str]]], template: str, register: bool,
                 emit: EventCallback, cancel: threading.Event) -> None:
        self.repo = repo
        self.jobs = jobs
        self.versions = versions
        self.in_place = in_place
        self.commands = commands
        self.template = template
        self.register = register
        self.emit = emit
        self.cancel = cancel
        self.total = len(jobs) * len(versions)
        self.number = 0
        self.counter = 0
        self.written: list[WrittenProfile] = []
        self.failures: list[CollectionError] = []
        #: workload generators by id (see :mod:`perun_core.runner.generators`)
        self.generators: dict[str, Any] = {}
        #: the jobs to run per commit, when a shard runs only some of them
        self.plan: dict[str, list[Job]] = {}
        #: ``execute.timeout``: the timeout of collectors whose job sets none
        self.default_timeout: float | None = None
        #: :attr:`RunOptions.advise`
        self.advise: Callable[[Profile], str | None] | None = None

    def go(self) -> RunResult:
        started = time.monotonic()
        self.emit(RunPlanned(len(self.jobs), tuple(self.versions), self.total, self.in_place))
        status = "error"
        try:
            with _termination_as_interrupt():
                try:
                    for index, version in enumerate(self.versions, 1):
                        self._version(version, index)
                except KeyboardInterrupt:
                    raise Interrupted() from None
            status = "failed" if self.failures else "ok"
        except Interrupted:
            status = "interrupted"
            raise
        finally:
            self.emit(RunFinished(status, len(self.written), len(self.failures), time.monotonic() - started))
        return RunResult(tuple(self.versions), len(self.jobs), tuple(self.written), tuple(self.failures))

    def _version(self, version: str, index: int) -> None:
        if self.in_place:
            workdir_context: contextlib.AbstractContextManager[Path] = contextlib.nullcontext(Path(self.repo.vcs.root))
        else:
            workdir_context = temporary_worktree(self.repo.vcs, version)
        with workdir_context as workdir:
            self.emit(VersionStarted(version, index, len(self.versions), workdir, not self.in_place))
            for text, argv in self.commands:
                self._pre_run(text, argv, workdir)
            for job in self.plan.get(version, self.jobs):
                self._job(job, version, workdir)
            self.emit(VersionFinished(version, index, len(self.versions)))

    def _pre_run(self, text: str, argv: list[str], workdir: Path) -> None:
        if self.cancel.is_set():
            raise Interrupted("cancelled")
        self.emit(PhaseStarted("pre_run", None, None, text))
        try:
            outcome = run_process(
                argv, cwd=workdir, merge_stderr=True, kill_leftovers=False, cancelled=self.cancel, tail_lines=30,
                on_line=lambda stream, line: self.emit(OutputLine(None, stream, line)),
            )
        except FileNotFoundError:
            raise PreRunFailed(text, f"cannot run: '{argv[0]}' was not found") from None
        except OSError as exc:
            raise PreRunFailed(text, f"cannot run: {exc.strerror or exc}") from None
        if outcome.exit_status != 0:
            raise PreRunFailed(text, describe_status(outcome.exit_status), outcome.exit_status, outcome.stdout_tail)

    def _job(self, job: Job, version: str, workdir: Path) -> None:
        self.number += 1
        number = self.number
        if self.cancel.is_set():
            raise Interrupted("cancelled")
        self.emit(JobStarted(number, self.total, version, job))
        started = time.monotonic()
        ctx = UnitContext(workdir, self.emit, self.cancel, number, job.label, self.default_timeout)
        generator = self.generators.get(job.workload)
        try:
            if generator is not None:
                # lazy: perun_core.runner.generators imports this module back at load (circular)
                from .generators import collect_generated

                collect_generated(job, generator, ctx, version,
                                  lambda profile: self.written.append(self._store(profile, job, version, number)))
            else:
                profile = collect_job(job, ctx, version)
                self.written.append(self._store(profile, job, version, number))
        except Interrupted:
            raise
        except CollectionError as exc:
            self._failed(number, exc)
            return
        except PerunError as exc:
            self._failed(number, CollectionError(job.label, exc.message))
            return
        self.emit(JobFinished(number, self.total, time.monotonic() - started))

    def _failed(self, number: int, error: CollectionError) -> None:
        self.failures.append(error)
        self.emit(JobFailed(number, self.total, error.message, error.exit_status))

    def _store(self, profile: Profile, job: Job, version: str, number: int) -> WrittenProfile:
        now = time.time()
        name = render_name(profile, self.template, counter=self.counter, when=now)
        self.counter += 1
        if self.advise is not None and profile.header.get("type") == "time":
            advice = self.advise(profile)
            if advice is not None:
                self.emit(MeasurementAdvice(number, advice))
        if not self.register:
            path = write_new_profile(profile, self.repo.jobs_dir, name)
            self.emit(ProfileWritten(number, path, version))
            return WrittenProfile(path, version, job)
        # Registered straight away, never written as pending first: a kill at any moment leaves the
        # profile either registered or not collected, never both registered and pending.
        entry = self.repo.register(version, profile, name, now)
        self.emit(ProfileRegistered(number, entry.path, version, entry.checksum))
        return WrittenProfile(self.repo.jobs_dir / entry.path, version, job, True, entry.checksum)


def collect_job(job: Job, ctx: Any, origin: str, *, postprocess: bool = True) -> Profile:
    """Collect ``job`` and pass the profile through its postprocessors (unless not ``postprocess``).

    The profile gets the job's header fields where the collector left them
    out, the ``machine`` provenance, ``collector_info`` and ``origin``.
    Raises :class:`CollectionError` when a phase fails.
    """

    collector = collectors.get(job.collector.name)
    kwargs: dict[str, Any] = {
        **job.collector.params, "cmd": job.cmd, "args": job.args, "workload": job.workload, "argv": job.argv(),
    }
    load_before = load_average()
    default_timeout = getattr(ctx, "default_timeout", None)
    if default_timeout and "timeout" in kwargs and kwargs["timeout"] is None:
        kwargs["timeout"] = default_timeout  # execute.timeout: no collect runs for ever unless asked to
    kwargs = run_phases(
        collector, "collect", ctx, kwargs,
        lambda phase, message: CollectionError(job.label, f"collector '{collector.name}' failed in {phase}(): {message}"),
    )
    profile = as_profile(kwargs.get("profile"), f"collector '{collector.name}'", lambda r: CollectionError(job.label, r))
    header = dict(profile.header)
    header.setdefault("cmd", job.cmd)
    if "params" not in header and "args" not in header:
        header["params"] = job.args
    header.setdefault("workload", job.workload)
    header["machine"] = {**machine_info(), "load_before": load_before, "load_after": load_average()}
    profile.header = header
    profile.collector_info = job.collector.as_info()
    profile.origin = origin
    return postprocess_job(job, profile, ctx) if postprocess else profile


def postprocess_job(job: Job, profile: Profile, ctx: Any) -> Profile:
    """``profile`` through the postprocessors of ``job``; CollectionError when one fails."""
    for config in job.postprocessors:
        try:
            profile = apply_postprocessor(config, profile, ctx)
        except PostprocessError as exc:
            raise CollectionError(job.label, exc.message) from None
    return profile
