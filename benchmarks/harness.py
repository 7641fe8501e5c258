"""What the benchmark scripts share: a private environment, a work directory, and the one JSON result they print.

A script that prints one JSON object runs its scenarios inside
:func:`session`, which makes the work directory, isolates the environment
(a private HOME and PERUN_CONFIG_DIR, in this process too), starts the
result with the machine's description and load, and on success prints the
result with the load at the end and the total time, removing a temporary
work directory either way.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["Session", "isolate_in", "isolated_env", "load_average", "machine_info", "note", "print_result",
           "repeat_bisects", "session", "venv_bin_with", "work_directory"]


def note(text: str) -> None:
    """A progress line on stderr (stdout holds only the result)."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where /proc/loadavg cannot be read."""
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def machine_info() -> dict:
    """The machine a result was measured on: cores, Python, platform, CPU and the load at the start."""
    info: dict[str, Any] = {
        "nproc": os.cpu_count(),
        "nproc_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    load = load_average()
    if load is not None:
        info["loadavg_start"] = load
    return info


def isolated_env(home: Path, pycache: Path | None) -> dict[str, str]:
    """os.environ without the user's git/perun/pager settings, HOME moved to ``home``.

    With ``pycache`` the subprocesses compile their bytecode once into that
    directory (PYTHONPYCACHEPREFIX, so the source tree is never written to)
    and reuse it, as an installed perun does; even when the calling
    environment sets PYTHONDONTWRITEBYTECODE.  Without it the calling
    environment's bytecode settings are kept.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for name in ("EDITOR", "VISUAL", "PAGER", "XDG_CONFIG_HOME", "NO_COLOR", "FORCE_COLOR", "PYTHONPROFILEIMPORTTIME"):
        env.pop(name, None)
    env["HOME"] = str(home)
    env["PERUN_CONFIG_DIR"] = str(home / "perun-config")
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def venv_bin_with(script: str) -> Path:
    """The directory holding this python and the installed ``script`` (else ./.venv/bin); exits when neither has it."""
    for candidate in (Path(sys.executable).parent, ROOT / ".venv" / "bin"):
        if (candidate / script).exists():
            return candidate
    raise SystemExit(f"{script} not found next to this python or in .venv/bin; install perun first (make test)")


def work_directory(workdir: Path | None, prefix: str, *, keep: bool = False) -> tuple[Path, bool]:
    """``workdir`` (created, kept) or a new temporary directory; returns it and whether to delete it afterwards."""
    if workdir is not None:
        work = workdir.resolve()
        work.mkdir(parents=True, exist_ok=True)
        return work, False
    return Path(tempfile.mkdtemp(prefix=prefix)), not keep


def isolate_in(work: Path, pycache: Path | None) -> dict[str, str]:
    """The isolated environment with a private HOME in ``work``, installed in this process too.

    The in-process setup (init, register) then gets the same isolation as
    the subprocesses it times.
    """
    home = work / "home"
    home.mkdir(exist_ok=True)
    env = isolated_env(home, pycache)
    os.environ.clear()
    os.environ.update(env)
    return env


def print_result(result: dict[str, Any], started: float) -> None:
    """The benchmark's JSON object on stdout, with the load average at the end and the total time."""
    load = load_average()
    if load is not None:
        result["machine"]["loadavg_end"] = load
    result["total_s"] = round(time.perf_counter() - started, 1)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    note(f"done in {result['total_s']} s")


@dataclass
class Session:
    """A benchmark run under way: its work directory, isolated environment and the result it will print."""

    work: Path
    env: dict[str, str]
    result: dict[str, Any] = field(default_factory=dict)


@contextlib.contextmanager
def session(workdir: Path | None, prefix: str, *, keep: bool = False, pycache: bool = True) -> Iterator[Session]:
    """A work directory and an isolated environment for the block; its ``result`` printed when the block succeeds.

    ``result`` starts as ``{"machine": machine_info()}``; the block adds its
    configuration and timings.  The clock of ``total_s`` starts when the
    block does.  A temporary work directory (no ``workdir``, no ``keep``) is
    removed afterwards, also when the block fails, in which case nothing is
    printed.  ``pycache=False`` keeps the caller's bytecode settings.
    """
    work, cleanup = work_directory(workdir, prefix, keep=keep)
    try:
        env = isolate_in(work, work / "pycache" if pycache else None)
        run = Session(work, env, {"machine": machine_info()})
        started = time.perf_counter()
        yield run
        print_result(run.result, started)
    finally:
        if cleanup:
            shutil.rmtree(work, ignore_errors=True)


def repeat_bisects(count: int, what: str, bisect: Callable[[], dict[str, Any]], *,
                   prepare: Callable[[], Any] | None = None, digits: int = 2) -> list[dict[str, Any]]:
    """``bisect()`` run ``count`` times, each run's dict with its wall time and the 1-minute load before it.

    ``prepare`` runs untimed before each bisect (a fresh copy of the
    repository); ``wall_s`` is rounded to ``digits`` decimals.
    """
    runs = []
    for number in range(count):
        note(f"bisect {number + 1}/{count}: {what}")
        if prepare is not None:
            prepare()
        load = (load_average() or [None])[0]
        started = time.perf_counter()
        found = bisect()
        wall = time.perf_counter() - started
        runs.append({**found, "wall_s": round(wall, digits), "load_1m_before": load})
    return runs
