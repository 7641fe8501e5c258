"""Getting call-level profiles of two commits for an explanation: the collector, stored ones, new ones.

:func:`choose_collector` picks pytrace's cProfile mode for Python programs,
callgrind (exact instruction counts, no noise) for native ones when
valgrind is installed, else perf sampling where the kernel allows it.
:func:`stored_profile` finds a registered or pending profile of that
collector and command at a commit.  :func:`collect_interleaved` collects
the missing sides in temporary worktrees, each built once, and runs them
interleaved -- baseline, target, baseline, target ... -- so that a drift of
the machine's load hits both sides alike; the rounds of a side are merged
into one profile (:func:`merge_rounds`: perf sample counts add up, cProfile
times take the per-function median).  Callgrind counts instructions
exactly, so one round a side suffices.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..collect.callgrind import HOW_TO_GET_VALGRIND
from ..collect.perf import HOW_TO_ALLOW, perf_permission
from ..errors import CollectionError, Interrupted, PerunError
from ..profile.codec import load_profile_from_file
from ..profile.model import Snapshot
from ..profile.resources import ResourceTable
from ..runner.naming import TEMPLATE_KEY, render_name
from ..runner.run import _split_commands, collect_job
from ..runner.worktree import temporary_worktree
from ..storage.lookup import sort_key_of
from ..units import UnitContext
from .confirm import _pre_run
from .explain_cost import Budget, BudgetKilled

if TYPE_CHECKING:  # pragma: no cover
    from ..runner.jobs import Job

__all__ = ["CALL_LEVEL", "ROUNDS", "BuildFailed", "ExplainRound", "choose_collector", "collect_interleaved",
           "is_python", "keep_profile", "merge_rounds", "no_native_collector", "perf_allowed", "stored_profile"]

CALL_LEVEL = ("callgrind", "pytrace", "perf")
#: Runs of each side, interleaved, per collector; the rounds of a side are merged by ``MERGE``.
ROUNDS = {"callgrind": 1, "perf": 3, "pytrace": 3}
MERGE = {"callgrind": "sum", "perf": "sum", "pytrace": "median"}
#: The numbers of a resource that rounds combine; every other key identifies the resource.
_COMBINED = ("amount", "exclusive", "calls", "primitive_calls", "period", "every_level")
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


@dataclass(frozen=True, slots=True)
class ExplainRound:
    """Round ``round`` of ``rounds``: ``collector`` runs ``command`` at ``commit`` (sides alternate)."""

    command: str
    collector: str
    commit: str
    round: int
    rounds: int


def python_command(argv: Sequence[str]) -> bool:
    """Whether the command line itself names a Python interpreter or script."""
    return bool(argv) and bool(_PYTHON.match(Path(argv[0]).name) or argv[0].endswith(".py"))


def is_python(argv: Sequence[str], workdir: Path) -> bool:
    """A Python interpreter, a ``.py`` script or a script whose first line names python."""
    if not argv:
        return False
    if python_command(argv):
        return True
    path = Path(workdir, argv[0])
    with contextlib.suppress(OSError):
        if path.is_file():
            with path.open("rb") as handle:
                first = handle.readline(200)
            return first.startswith(b"#!") and b"python" in first
    return False


def perf_allowed() -> tuple[bool, str]:
    if shutil.which("perf") is None:
        return False, "perf is not installed"

    allowed, detail, _unsupported = perf_permission()
    return allowed, detail


def no_native_collector(detail: str) -> str:
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
        return f"callgrind needs valgrind: {HOW_TO_GET_VALGRIND}"
    allowed, detail = perf_allowed()
    if allowed:
        return "perf", {"mode": "record"}
    if wanted == "perf":
        return ("perf is not installed: install linux-perf" if shutil.which("perf") is None
                else f"perf may not profile here ({detail}): {HOW_TO_ALLOW}")
    return no_native_collector(detail)


# -- profiles ---------------------------------------------------------------------------------------

def stored_profile(repo: Any, minor: str, job: Job, collector: str,
                   kept: Sequence[tuple[str, str]] = ()) -> tuple[Any, str, str, str] | None:
    """The newest registered (else pending, else kept) profile of ``collector`` for the job's command at ``minor``.

    ``kept`` are the (name, checksum) of the profiles earlier explanations
    kept at ``minor`` (:func:`.explain_store.kept_profiles`).  Returns the
    profile, its tag (``i@i``, or the file name), its name and where it is
    (``object:<checksum>`` or ``pending:<file name>``).
    """

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
            where = f"object:{info.checksum}" if registered else f"pending:{Path(info.path).name}"
            return profile, info.tag or info.source, info.source, where
    for name, checksum in kept:
        try:
            profile = repo.objects.read_profile(checksum)
        except (PerunError, OSError, ValueError):
            continue
        same = (profile.collector == collector and profile.cmd == job.cmd and profile.args == job.args
                and profile.workload == job.workload)
        if same and (collector != "pytrace" or (profile.collector_info or {}).get("params", {}).get("mode")
                     in (None, "cprofile")):
            return profile, name, name, f"object:{checksum}"
    return None


class BuildFailed(Exception):
    """The program does not build at one of the commits (``message`` says which and why)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def collect_interleaved(repo: Any, job: Job, sides: Sequence[str], collector: str, cancel: threading.Event,
                        emit: Callable[[Any], None], rounds: int | None = None,
                        budget: Budget | None = None) -> list[Any]:
    """One profile of ``job`` per commit of ``sides``, collected interleaved in temporary worktrees.

    Each side is checked out and built (``execute.pre_run``) once; then
    every round runs each side in turn, in the order of ``sides`` (baseline
    first), emitting an :class:`ExplainRound` before each run.  The rounds
    of a side are merged with :func:`merge_rounds`.  With a ``budget``,
    each run may take its share of the time left of it and is killed after
    that.  Raises BuildFailed, Interrupted, BudgetKilled (a run killed at
    its share of the budget), PerunError (a collection that failed, or the
    budget spent).
    """

    count = rounds if rounds is not None else ROUNDS.get(collector, 1)
    commands = _split_commands(repo.config.get_or("execute.pre_run") or [])
    runs: list[list[Any]] = [[] for _ in sides]
    with contextlib.ExitStack() as stack:
        dirs = [stack.enter_context(temporary_worktree(repo.vcs, minor)) for minor in sides]
        for minor, workdir in zip(sides, dirs):
            try:
                _pre_run(commands, workdir, cancel)
            except PerunError as exc:
                raise BuildFailed(f"the program does not build at {minor[:7]}: {exc.message}") from None
        for number in range(1, count + 1):
            for side, (minor, workdir) in enumerate(zip(sides, dirs)):
                if cancel.is_set():
                    raise Interrupted("cancelled")
                emit(ExplainRound(job.command_line, collector, minor[:7], number, count))
                ctx = UnitContext(workdir, lambda event: None, cancel, 0, job.label)
                if budget is None:
                    runs[side].append(collect_job(job, ctx, minor, postprocess=False))
                    continue
                with budget.run((count - number + 1) * len(sides) - side) as share:
                    began = time.monotonic()
                    try:
                        runs[side].append(collect_job(_within(job, share), ctx, minor, postprocess=False))
                    except CollectionError:
                        if time.monotonic() - began >= share:  # killed at its share: the budget stopped it
                            raise BudgetKilled(collector, share, budget.seconds) from None
                        raise
    return [merge_rounds(profiles, MERGE.get(collector, "sum")) for profiles in runs]


def _within(job: Job, seconds: float) -> Job:
    """``job`` whose run is killed after ``seconds``."""
    params = dict(job.collector.params)
    params["timeout"] = min(seconds, params["timeout"]) if params.get("timeout") else seconds
    return replace(job, collector=replace(job.collector, params=params))


def merge_rounds(profiles: Sequence[Any], how: str = "sum") -> Any:
    """One profile of several runs of one program: per resource, its numbers summed or their median.

    Resources are the same resource across runs when every key but the
    numbers of :data:`_COMBINED` is equal; a resource missing from a run
    counts 0 there.  The first run's header, models and region metadata
    are kept; the header records ``rounds``.
    """

    if len(profiles) == 1:
        return profiles[0]
    first = profiles[0]
    regions = []
    for index, region in first.regions():
        groups: dict[str, tuple[dict, list[list[float]]]] = {}
        for run, profile in enumerate(profiles):
            other = dict(profile.regions()).get(index)
            for row in other.resources if other is not None else ():
                identity = {k: v for k, v in row.items() if k not in _COMBINED}
                key = json.dumps(identity, sort_keys=True, default=str)
                entry = groups.setdefault(key, (identity, []))
                entry[1].append([run] + [_number(row.get(k)) for k in _COMBINED])
        rows = [_combined(identity, values, len(profiles), how) for identity, values in groups.values()]
        regions.append(Snapshot(ResourceTable(rows), list(region.models), dict(region.meta), region.has_models_key))
    has_global = first.global_region is not None
    return replace(first, header={**first.header, "rounds": len(profiles)},
                   snapshots=regions[:-1] if has_global else regions,
                   global_region=regions[-1] if has_global else None)


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _combined(identity: dict, values: list[list[Any]], runs: int, how: str) -> dict:
    row = dict(identity)
    for column, key in enumerate(_COMBINED, 1):
        present = [v[column] for v in values if v[column] is not None]
        if not present:
            continue
        per_run = present + [0] * (runs - len(values))
        total = statistics.median(per_run) if how == "median" else sum(per_run)
        row[key] = int(total) if all(isinstance(v, int) for v in present) and total == int(total) else total
    return row


def keep_profile(repo: Any, profile: Any, minor: str, register: bool, counter: int) -> tuple[str, str, str]:
    """Keep a collected profile with the explanation (or register it): what was written, the profile's name
    and where it is (``object:<checksum>``).

    Kept means stored as an object that no index names: the explanation's
    record names it (``fsck`` keeps it while one does), so it is neither a
    pending profile under every commit nor a profile the next check pairs.
    """

    now = time.time()
    name = render_name(profile, str(repo.config.get(TEMPLATE_KEY)), counter=counter, when=now)
    if minor[:7] not in name:
        # the baseline's and the target's profiles are made within a second of each other: the commit tells
        # their names apart ('compared perf-app-...-14-02-07.perf -> perf-app-...-14-02-07.perf' said nothing)
        name = f"{name.removesuffix('.perf')}-{minor[:7]}.perf"
    if register:
        entry = repo.register(minor, profile, name, now)
        return f"registered {name} at {minor[:7]} ({entry.checksum[:7]})", name, f"object:{entry.checksum}"
    checksum = repo.objects.write_profile(profile, layout=repo.object_layout)
    return f"{name} (object {checksum[:7]}, kept with the explanation)", name, f"object:{checksum}"
