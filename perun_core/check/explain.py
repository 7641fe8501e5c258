"""Explaining time changes: which functions made a job slower (or faster).

A check says *that* ``./app [real]`` got 40 % slower; this module says
*where*.  For every certain time Degradation or Optimization between two
commits whose job is in the job matrix, it

1. chooses the best call-level collector for the program: pytrace's
   cProfile mode for Python programs, callgrind (exact instruction counts,
   no noise) for native ones when valgrind is installed, else perf
   sampling where the kernel allows it;
2. reuses registered profiles of that collector and command of both
   commits, and collects the missing ones in temporary worktrees of the
   commits (built once with ``execute.pre_run``, as confirmation does);
3. compares them per function with :func:`perun_core.diff.compare`, whose
   ranking by ``contribution`` (a function's change of exclusive cost as a
   share of the whole program's change) puts first the functions that add
   up to most of the change.

The result is an :class:`Explanation` kept in the finding's
``details["explanation"]``; :mod:`perun_core.check.output` shows it.  When
no explanation is possible the explanation carries a one-line ``message``
saying why (nothing to install, a build that failed, a run too short).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Interrupted, PerunError

if TYPE_CHECKING:  # pragma: no cover
    from ..runner.jobs import Job
    from .report import CheckReport, PairReport
    from .results import Finding

__all__ = ["ExplainCollecting", "ExplainFinished", "ExplainStarted", "ExplainedFunction", "Explanation", "explain_report",
           "needs_explanation"]

#: Functions listed per explanation.
TOP = 5
#: Fewer perf samples than this on a side cannot localize anything.
MIN_SAMPLES = 50
#: Functions after the first are listed when they carry at least this share of the change.
MIN_SHARE = 0.01
_BLOCKS = ("<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>", "<lambda>")
CALL_LEVEL = ("callgrind", "pytrace", "perf")
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_LOCATION = re.compile(r"^(?P<file>.+?):(?P<line>\d+)\((?P<name>.*)\)$")


@dataclass(frozen=True, slots=True)
class ExplainStarted:
    """Call-level profiles are collected or looked up for ``jobs`` jobs of ``pairs`` pairs of commits."""

    jobs: int
    pairs: int


@dataclass(frozen=True, slots=True)
class ExplainCollecting:
    """``collector`` profiles of ``command`` are collected at ``commits`` (the others are reused)."""

    command: str
    collector: str
    commits: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExplainFinished:
    explained: int
    unexplained: int


@dataclass(frozen=True, slots=True)
class ExplainedFunction:
    """One function's share of a change."""

    function: str
    file: str | None
    line: int | None
    baseline: float
    target: float
    #: change of exclusive cost / the whole program's change
    share: float
    status: str
    #: for sample counts (perf): the two-sided p-value of "the function's time did not change"; None for exact
    #: counts (callgrind) and single timings (cProfile)
    p_value: float | None = None

    @property
    def change(self) -> float:
        return self.target - self.baseline

    @property
    def relative(self) -> float | None:
        return self.change / self.baseline if self.baseline else None

    def is_block(self) -> bool:
        """A comprehension, generator expression or lambda (a code block inside a function)."""
        return self.function in _BLOCKS and self.line is not None

    def name_is_code(self) -> bool:
        return not self.function.startswith("<") or self.function == "<module>"

    @property
    def where(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or ""

    def to_record(self) -> dict[str, Any]:
        return {"function": self.function, "file": self.file, "line": self.line, "baseline": self.baseline,
                "target": self.target, "change": self.change, "relative": self.relative, "share": self.share,
                "status": self.status, "p_value": self.p_value}

    def text(self, unit: str) -> str:
        """``name (file:line): +42 % own cost, 87 % of the change``."""
        parts = [self.function + (f" ({self.where})" if self.where else "")]
        if self.status == "new":
            parts.append(f"new, {_number(self.target)} {unit}".rstrip())
        elif self.status == "gone":
            parts.append(f"gone, was {_number(self.baseline)} {unit}".rstrip())
        else:
            rel = self.relative
            parts.append(f"{_number(self.baseline)} -> {_number(self.target)} {unit}".rstrip()
                         + (f" ({relative_text(rel)})" if rel is not None else ""))
        parts.append(f"{100 * self.share:.0f} % of the change")
        if self.p_value is not None:
            parts.append(f"p = {self.p_value:.2g}" if self.p_value >= 1e-4 else "p < 0.0001")
        return ": ".join(parts[:1]) + ": " + ", ".join(parts[1:])


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why one job's time changed between two commits (or ``message``: why that is not known)."""

    collector: str = ""
    unit: str = ""
    baseline_total: float = 0.0
    target_total: float = 0.0
    functions: tuple[ExplainedFunction, ...] = ()
    message: str = ""
    #: files written: the difference flame graph, the call-level profiles (pending) or tags of registered ones
    written: tuple[str, ...] = ()
    reused: tuple[str, ...] = field(default=())

    @property
    def explained(self) -> bool:
        return not self.message

    def headline(self) -> str:
        if self.message:
            return f"not explained: {self.message}"
        change = self.target_total - self.baseline_total
        rel = f" ({relative_text(change / self.baseline_total)})" if self.baseline_total else ""
        return (f"explained by ({self.collector}, {_number(self.baseline_total)} -> {_number(self.target_total)} "
                f"{self.unit}{rel}):").replace(" )", ")")

    def to_record(self) -> dict[str, Any]:
        return {"collector": self.collector, "unit": self.unit, "baseline_total": self.baseline_total,
                "target_total": self.target_total, "message": self.message or None,
                "functions": [f.to_record() for f in self.functions], "written": list(self.written),
                "reused": list(self.reused)}


def relative_text(relative: float | None) -> str:
    """``+42 %``, or ``x391`` for changes beyond ten times."""
    if relative is None:
        return ""
    if relative >= 9:
        return f"x{1 + relative:.3g}"
    return f"{100 * relative:+.0f} %"


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}".replace(",", " ")
    return f"{value:.4g}"


def needs_explanation(pair: PairReport, finding: Finding) -> bool:
    """Certain time changes."""
    result = finding.result
    return pair.target.type == "time" and result.is_change and not result.is_maybe


# -- choosing a collector -----------------------------------------------------------------------

def is_python(argv: Sequence[str], workdir: Path) -> bool:
    """A Python interpreter, a ``.py`` script or a script whose first line names python."""
    if not argv:
        return False
    if _PYTHON.match(Path(argv[0]).name) or argv[0].endswith(".py"):
        return True
    path = Path(workdir, argv[0])
    with contextlib.suppress(OSError):
        if path.is_file():
            with path.open("rb") as handle:
                first = handle.readline(200)
            return first.startswith(b"#!") and b"python" in first
    return False


def _perf_allowed() -> tuple[bool, str]:
    if shutil.which("perf") is None:
        return False, "perf is not installed"
    from ..collect.perf import perf_permission

    allowed, detail, _unsupported = perf_permission()
    return allowed, detail


def _no_native_collector(detail: str) -> str:
    from ..collect.callgrind import HOW_TO_GET_VALGRIND
    from ..collect.perf import HOW_TO_ALLOW

    perf = "install perf (linux-perf)" if shutil.which("perf") is None else f"{detail}; {HOW_TO_ALLOW}"
    return f"no call-level collector for a native program: {HOW_TO_GET_VALGRIND}, or {perf}"


def choose_collector(argv: Sequence[str], workdir: Path, wanted: str | None = None
                     ) -> tuple[str, dict[str, Any]] | str:
    """``(collector, params)`` for the program, or a one-line message saying what to install.

    ``wanted`` (callgrind, perf or pytrace) forces a collector; a message
    says why it cannot be used here.
    """
    if wanted == "pytrace" or (wanted is None and is_python(argv, workdir)):
        return "pytrace", {"mode": "cprofile"}
    if wanted in (None, "callgrind") and shutil.which("valgrind") is not None:
        return "callgrind", {}
    if wanted == "callgrind":
        from ..collect.callgrind import HOW_TO_GET_VALGRIND

        return f"callgrind needs valgrind: {HOW_TO_GET_VALGRIND}"
    allowed, detail = _perf_allowed()
    if allowed:
        return "perf", {"mode": "record"}
    if wanted == "perf":
        from ..collect.perf import HOW_TO_ALLOW

        return ("perf is not installed: install linux-perf" if shutil.which("perf") is None
                else f"perf may not profile here ({detail}): {HOW_TO_ALLOW}")
    return _no_native_collector(detail)


# -- profiles ---------------------------------------------------------------------------------------

def _stored(repo: Any, minor: str, job: Job, collector: str) -> tuple[Any, str] | None:
    """The newest registered (else pending) profile of ``collector`` for the job's command at ``minor``.

    Returns the profile and how it is named (``i@i`` tag or pending file name).
    """
    from ..profile.codec import load_profile_from_file
    from ..storage.lookup import sort_key_of

    def fits(info: Any) -> bool:
        return (info.collector == collector and info.cmd == job.cmd and info.args == job.args
                and info.workload == job.workload and not info.error)

    key = sort_key_of(repo)
    candidates = [(info, True) for info in repo.registered_infos(minor, key) if fits(info) and info.checksum]
    candidates += [(info, False) for info in repo.pending_infos(key)
                   if fits(info) and info.origin == minor and info.path is not None]
    candidates.sort(key=lambda item: (item[1], item[0].time), reverse=True)
    for info, registered in candidates:
        try:
            profile = (repo.objects.read_profile(info.checksum) if registered
                       else load_profile_from_file(info.path))
        except (PerunError, OSError, ValueError):
            continue
        mode = (profile.collector_info or {}).get("params", {}).get("mode")
        if collector != "pytrace" or mode in (None, "cprofile"):
            return profile, info.tag or info.source
    return None


def _collect_sides(repo: Any, job: Job, sides: Sequence[str], cancel: threading.Event) -> list[Any]:
    """Collect ``job`` at each commit of ``sides`` in temporary worktrees (built once each)."""
    from ..runner.run import _split_commands, collect_job
    from ..runner.worktree import temporary_worktree
    from ..units import UnitContext
    from .confirm import _pre_run

    commands = _split_commands(repo.config.get_or("execute.pre_run") or [])
    out = []
    with contextlib.ExitStack() as stack:
        dirs = [stack.enter_context(temporary_worktree(repo.vcs, minor)) for minor in sides]
        for minor, workdir in zip(sides, dirs):
            try:
                _pre_run(commands, workdir, cancel)
            except PerunError as exc:
                raise _BuildFailed(f"the program does not build at {minor[:7]}: {exc.message}") from None
        for minor, workdir in zip(sides, dirs):
            if cancel.is_set():
                raise Interrupted("cancelled")
            ctx = UnitContext(workdir, lambda event: None, cancel, 0, job.label)
            out.append(collect_job(job, ctx, minor, postprocess=False))
    return out


class _BuildFailed(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _keep(repo: Any, profile: Any, minor: str, register: bool, counter: int) -> str:
    """Write a collected profile as pending (or register it); what was written."""
    from ..runner.naming import TEMPLATE_KEY, render_name, write_new_profile

    now = time.time()
    name = render_name(profile, str(repo.config.get(TEMPLATE_KEY)), counter=counter, when=now)
    if register:
        entry = repo.register(minor, profile, name, now)
        return f"registered {name} at {minor[:7]} ({entry.checksum[:7]})"
    return str(write_new_profile(profile, repo.jobs_dir, name))


def _samples(profile: Any) -> int:
    """The stack samples of a perf profile."""
    total = 0
    for _, region in profile.regions():
        table = region.resources
        if not len(table) or "subtype" not in table.columns()[0]:
            continue
        for subtype, amount in zip(table.column("subtype"), table.column("amount")):
            if subtype == "samples" and isinstance(amount, (int, float)):
                total += int(amount)
    return total


def sample_p_value(baseline: float, target: float) -> float:
    """Two-sided p-value that two sample counts of equally long sampling come from one rate.

    Samples taken at a fixed frequency are Poisson counts of the time spent;
    given their sum, the target's count is binomial with p = 1/2 when the
    time did not change (normal approximation, continuity-corrected).
    """
    import math

    total = baseline + target
    if total <= 0:
        return 1.0
    z = max(abs(target - baseline) - 1.0, 0.0) / math.sqrt(total)
    return math.erfc(z / math.sqrt(2.0))


def _enclosing(anonymous: ExplainedFunction, named: list[ExplainedFunction]) -> ExplainedFunction | None:
    """The function whose body holds a comprehension, generator expression or lambda: the nearest one
    defined at or above its line in the same file."""
    best = None
    for candidate in named:
        if (candidate.file == anonymous.file and candidate.line is not None and anonymous.line is not None
                and candidate.line <= anonymous.line and (best is None or candidate.line > best.line)):  # type: ignore[operator]
            best = candidate
    return best


def _functions(comparison: Any, top: int) -> tuple[ExplainedFunction, ...]:
    """The functions carrying the change, largest share first.

    The code blocks Python runs as functions of their own (comprehensions,
    generator expressions, lambdas) count towards the function they are
    written in: a list scan in ``lookup`` is ``lookup``'s change.
    """
    every = []
    for change in comparison.functions or ():
        file = line = None
        name = change.function
        match = _LOCATION.match(name)
        if match:
            file, line, name = match["file"], int(match["line"]), match["name"]
        elif change.object and change.object != "???":
            file = _in_repository(change.object)
        every.append(ExplainedFunction(name, file, line, change.baseline_exclusive, change.target_exclusive,
                                       change.contribution, change.status))
    named = [f for f in every if f.name_is_code() and f.line is not None]
    merged: dict[int, ExplainedFunction] = {}
    for function in every:
        owner = _enclosing(function, named) if function.is_block() else None
        into = owner if owner is not None else function
        # a function's own row is the starting point, whether it or one of its blocks comes first
        merged.setdefault(id(into), into)
        if owner is not None:
            was = merged[id(into)]
            merged[id(into)] = replace(was, baseline=was.baseline + function.baseline,
                                       target=was.target + function.target, share=was.share + function.share)
    ranked = sorted((f for f in merged.values() if f.change != 0 and f.share > 0), key=lambda f: -f.share)[:top]
    if comparison.function_unit == "samples":
        ranked = [replace(f, p_value=sample_p_value(f.baseline, f.target)) for f in ranked]
    # functions that moved less than 1 % of the change are noise next to the ones that did
    return tuple(f for n, f in enumerate(ranked) if n == 0 or f.share >= MIN_SHARE)


def _in_repository(path: str) -> str:
    """A source path inside a temporary worktree as a path relative to the repository."""
    from ..runner.worktree import WORKTREE_PREFIX

    parts = Path(path).parts
    for index, part in enumerate(parts):
        if part.startswith(WORKTREE_PREFIX) and index + 1 < len(parts):
            return str(Path(*parts[index + 1:]))
    return path


def _source_lines(profile: Any) -> dict[str, tuple[str, int | None]]:
    """function -> (source file, line) where the profile's function rows say so (callgrind, perf)."""
    from ..profile.resources import MISSING

    found: dict[str, tuple[str, int | None]] = {}
    for _, region in profile.regions():
        table = region.resources
        if not len(table):
            continue
        keys = table.columns()[0]
        if "source" not in keys or "uid" not in keys:
            continue
        lines = table.column("line") if "line" in keys else [MISSING] * len(table)
        for uid, source, line in zip(table.column("uid"), table.column("source"), lines):
            if source is MISSING or not isinstance(uid, str) or uid in found:
                continue
            found[uid] = (_in_repository(str(source)), line if isinstance(line, int) else None)
    return found


def _explain_one(repo: Any, base_minor: str, target_minor: str, job: Job, *, directory: Path | None,
                 register: bool, cancel: threading.Event, counter: list[int], wanted: str | None,
                 emit: Callable[[Any], None]) -> Explanation:
    from ..diff import compare
    from ..runner.jobs import unit_config
    from ..runner.worktree import temporary_worktree

    try:
        argv = job.argv()
    except PerunError as exc:
        return Explanation(message=exc.message)
    if wanted is not None or (argv and (_PYTHON.match(Path(argv[0]).name) or argv[0].endswith(".py"))):
        chosen = choose_collector(argv, Path(repo.root), wanted)
    else:  # a script's first line says whether it is Python: look at the target commit's file
        with temporary_worktree(repo.vcs, target_minor) as probe:
            chosen = choose_collector(argv, probe, wanted)
    if isinstance(chosen, str):
        return Explanation(message=chosen)
    name, params = chosen
    try:
        call_job = replace(job, collector=unit_config("collector", name, params), postprocessors=())
    except PerunError as exc:
        return Explanation(collector=name, message=exc.message)
    stored = [_stored(repo, minor, call_job, name) for minor in (base_minor, target_minor)]
    reused = tuple(f"{minor[:7]}: {found[1]}" for minor, found in zip((base_minor, target_minor), stored) if found)
    profiles = [found[0] if found else None for found in stored]
    missing = [minor for minor, p in zip((base_minor, target_minor), profiles) if p is None]
    written: list[str] = []
    if missing:
        emit(ExplainCollecting(job.command_line, name, tuple(minor[:7] for minor in missing)))
        try:
            collected = _collect_sides(repo, call_job, missing, cancel)
        except _BuildFailed as exc:
            return Explanation(collector=name, message=exc.message)
        except Interrupted:
            raise
        except PerunError as exc:
            return Explanation(collector=name, message=f"collecting with {name} failed: {exc.message}")
        for minor, profile in zip(missing, collected):
            profiles[(base_minor, target_minor).index(minor)] = profile
            counter[0] += 1
            with contextlib.suppress(PerunError, OSError):
                written.append(_keep(repo, profile, minor, register, counter[0]))
    return explain_profiles(name, profiles[0], profiles[1], base_minor, target_minor, job.command_line,
                            directory=directory, written=tuple(written), reused=reused)


def explain_profiles(name: str, base: Any, target: Any, base_name: str, target_name: str, label: str, *,
                     directory: Path | None = None, written: tuple[str, ...] = (),
                     reused: tuple[str, ...] = ()) -> Explanation:
    """Compare two call-level profiles of collector ``name`` per function (see the module docstring)."""
    from ..diff import compare

    if name == "perf":
        fewest = min(_samples(base), _samples(target))
        if fewest < MIN_SAMPLES:
            how = ("explain with callgrind (--explain-with callgrind), which counts every instruction"
                   if shutil.which("valgrind") else "install valgrind to count its instructions with callgrind")
            return Explanation(collector=name, written=written,
                               message=f"the program is too short to sample ({fewest} perf samples, "
                                       f"{MIN_SAMPLES} needed); {how}")
    try:
        comparison = compare(base, target, baseline_name=base_name[:7], target_name=target_name[:7])
    except PerunError as exc:
        return Explanation(collector=name, written=written, message=exc.message)
    if not comparison.functions or comparison.total_change == 0:
        return Explanation(collector=name, written=written,
                           message=f"the {name} profiles show no change per function"
                                   + (" (the program may be too short to measure)" if name == "pytrace" else ""))
    functions = _functions(comparison, TOP)
    where = {**_source_lines(base), **_source_lines(target)}
    functions = tuple(replace(f, file=where[f.function][0], line=where[f.function][1] or f.line)
                      if f.function in where else f for f in functions)
    if directory is not None:
        written += tuple(_write_views(comparison, directory, label, base_name, target_name))
    return Explanation(name, comparison.function_unit, comparison.baseline_total, comparison.target_total,
                       functions, "", written, reused)


def _write_views(comparison: Any, directory: Path, label: str, base_minor: str, target_minor: str) -> list[str]:
    """The difference flame graph (SVG and folded) where the profiles have call stacks, the HTML report
    of the difference (table, functions, bars and the flame graph where it can be drawn), and the
    per-function listing as text."""
    from ..atomic import atomic_write_text as write_text_atomic
    from ..diff.render import build_flame, render, render_flame

    directory.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", label)[:60].strip("_") or "job"
    stem = f"explain-{base_minor[:7]}-{target_minor[:7]}-{stem}"
    written = []
    if comparison.has_stacks:
        flame = build_flame(comparison)
        for fmt, suffix in (("svg", ".svg"), ("folded", ".folded")):
            path = directory / f"{stem}{suffix}"
            write_text_atomic(path, render_flame(flame, fmt))
            written.append(str(path))
    page = directory / f"{stem}.html"
    write_text_atomic(page, render(comparison, "report"))
    written.append(str(page))
    report = directory / f"{stem}.txt"
    write_text_atomic(report, render(comparison, "short", width=120))
    written.append(str(report))
    return written


def _read(repo: Any, ref: Any) -> Any:
    """The profile a report's reference names: registered, pending or a file.  Raises PerunError, OSError."""
    from ..profile.codec import load_profile_from_file

    if ref.checksum and repo is not None:
        return repo.objects.read_profile(ref.checksum)
    if ref.kind == "pending" and repo is not None:
        return load_profile_from_file(repo.jobs_dir / Path(ref.source).name)
    return load_profile_from_file(Path(ref.name).expanduser())


def _direct(repo: Any, pair: PairReport, directory: Path | None) -> Explanation | None:
    """A pair of call-level profiles explains itself: their comparison, or None for other pairs."""
    try:
        target = _read(repo, pair.target)
        name = (target.collector_info or {}).get("name")
        if name not in CALL_LEVEL:
            return None
        base = _read(repo, pair.baseline)
    except (PerunError, OSError, ValueError):
        return None
    return explain_profiles(str(name), base, target, pair.baseline.minor or pair.baseline.name,
                            pair.target.minor or pair.target.name, str(target.header.get("cmd") or pair.target.name),
                            directory=directory)


def explain_report(repo: Any, report: CheckReport, *, directory: Path | None = None, register: bool = False,
                   collector: str | None = None, emit: Callable[[Any], None] | None = None,
                   cancel: threading.Event | None = None) -> CheckReport:
    """``report`` with an :class:`Explanation` in the details of every certain time change.

    ``repo`` may be None (profile files outside a repository): then only
    pairs of call-level profiles are explained.
    """
    from .confirm import _job_for
    from .pairing import ProfileCache

    if collector is not None and collector not in CALL_LEVEL:
        from ..errors import UsageError

        raise UsageError(f"--explain-with '{collector}': expected one of {', '.join(CALL_LEVEL)}")
    emit = emit or (lambda event: None)
    cancel = cancel or threading.Event()
    cache = ProfileCache(repo)
    jobs: list[Job] = []
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
            job = None
            with contextlib.suppress(PerunError):
                job = _job_for(repo, cache.get(pair.target.checksum)) if pair.target.checksum else None
            for i in wanted:
                if job is None:
                    done[(v, p, i)] = Explanation(message="no time job of the job matrix makes this profile")
                else:
                    if job not in jobs:
                        jobs.append(job)
                    key = (pair.baseline.minor, pair.target.minor, jobs.index(job))
                    work.setdefault(key, []).append((v, p, i))  # type: ignore[arg-type]
    if work:
        emit(ExplainStarted(len(work), len({(b, t) for b, t, _ in work})))
    counter = [0]
    for (base_minor, target_minor, number), places in work.items():
        job = jobs[number]
        if cancel.is_set():
            raise Interrupted("cancelled")
        explanation = _explain_one(repo, base_minor, target_minor, job, directory=directory,
                                   register=register, cancel=cancel, counter=counter, wanted=collector,
                                   emit=emit)
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
