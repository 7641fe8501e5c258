"""What the Python collectors (pytrace, pymemory) share: finding and running the program.

A job's command line names the program the way a user runs it::

    search.py 1000                    a script (relative to the job's directory)
    python3 search.py 1000            the same with an explicit interpreter
    -m mypkg.tool --fast              a module, as ``python -m``
    python3.12 -m mypkg.tool          a module with an explicit interpreter

Without an explicit interpreter the unit's ``python`` parameter names it,
else ``python3`` (or ``python``) on PATH, else the interpreter running perun.
The program is run by the bootstrap script
:mod:`perun_core.collect._bootstrap.pyboot` (started by ``start.py`` next to
it) in that interpreter (it needs only the standard library of Python 3.8+),
which writes its results into a temporary directory that is removed
afterwards.  Its process runs like the time collector's: stdin from
/dev/null, its own session, the whole process group killed on timeout, on
cancel and when it exits.

How a run can end, and what the collector makes of it (``keep_failed``
turns the first two into recorded results, marked in the header):

* the program raised: :class:`~perun_core.errors.CollectionError` "the
  Python program raised ZeroDivisionError: division by zero", exit status 1
  and the traceback's last lines as the hint;
* it exited non-zero (``raise SystemExit(3)``): "exited with status 3";
* it ran longer than ``timeout``: "timed out after N s", its group killed;
  shortly before, the bootstrap had :mod:`faulthandler` write the stack of
  every thread, and the hint shows them (without perun's own frames and
  thread) after the last lines of standard error;
* it ended without the bootstrap writing its results (``os._exit``, killed):
  "ended without leaving results".
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CollectionError, UsageError
from ..runner.process import describe_status, run_process
from ..units import UnitContext
from ..params import MAX_TIMEOUT, Param
from ..units.requirements import Requirement, tool_version

__all__ = ["BOOTSTRAP", "MODULE_HINT", "PythonRun", "PythonTarget", "common_params", "hang_report",
           "python_requirements", "resolve_target", "run_python"]

BOOTSTRAP = Path(__file__).resolve().parent / "_bootstrap" / "start.py"
#: the files whose frames are the bootstrap's, and the function of pymemory's sampling thread
_BOOTSTRAP_FILES = frozenset(str(BOOTSTRAP.parent / name) for name in ("start.py", "pyboot.py"))
_SAMPLER_FUNCTION = "_loop"
_FRAME = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+) in (?P<function>.*)$')
#: How to profile a module from the command line: collect's own -m is --minor-version.
MODULE_HINT = ("To profile a module put '--' before -m (collect has its own -m, --minor-version): "
               "perun-core collect {name} -- -m pkg.tool ARGS.")
_INTERPRETER = re.compile(r"^(?:pypy|python)(?:\d+(?:\.\d+)*)?[a-z]?$")


def common_params() -> tuple[Param, ...]:
    """The parameters every Python collector has (after its own)."""
    return (
        Param("python", "str", None, "Interpreter to run the program with (default: python3 on PATH).",
              flags=("--python",), metavar="PATH"),
        Param("timeout", "float", None, "Kill the program (and fail the job) after this many seconds.",
              flags=("-t", "--timeout"), minimum=0.001, maximum=MAX_TIMEOUT, metavar="SECONDS", unit="s"),
        Param("keep_failed", "bool", False,
              "Keep the results of a program that raised or exited non-zero instead of failing the job.",
              flags=("--keep-failed",)),
    )


def python_requirements() -> list[Any]:
    """What ``--check`` shows for the Python collectors: the default interpreter and its version."""

    interpreter = _default_interpreter()
    version = tool_version([interpreter, "--version"]) or ""
    usable = version.startswith("Python 3.") and int(version.split(".")[1]) >= 8 if version else False
    detail = f"{interpreter}" + (f" ({version})" if version else " (does not run)")
    if version and not usable:
        detail += "; the collectors need Python 3.8 or newer"
    return [Requirement("Python interpreter", usable, detail,
                        "install Python 3.8+ as python3, or name one with --python or in the command")]


@dataclass(frozen=True, slots=True)
class PythonTarget:
    """The interpreter and what it runs: ``[script, args...]`` or ``["-m", module, args...]``."""

    interpreter: str
    target: tuple[str, ...]

    @property
    def is_module(self) -> bool:
        return self.target[0] == "-m"

    @property
    def main_name(self) -> str:
        """How the collectors name the main module in uids: the module, or the script's stem."""
        return self.target[1] if self.is_module else Path(self.target[0]).stem


def _default_interpreter() -> str:
    for name in ("python3", "python"):
        found = shutil.which(name)
        if found:
            return found
    return sys.executable


def resolve_target(argv: list[str], python: str | None, cwd: Path, label: str) -> PythonTarget:
    """The program of a job's command line (see the module docstring).

    Raises CollectionError for a missing interpreter or script and
    UsageError for interpreter options other than ``-m``.
    """
    words = list(argv)
    interpreter = python
    if words and _INTERPRETER.match(Path(words[0]).name):
        interpreter = words.pop(0)
    if not words:
        raise UsageError("no Python program to run; give a script (search.py) or a module (-m package.module)")
    if interpreter is None:
        interpreter = _default_interpreter()
    elif os.sep in interpreter:
        if not Path(cwd, interpreter).is_file():
            raise CollectionError(label, f"Python interpreter not found: {interpreter}")
    elif shutil.which(interpreter) is None:
        raise CollectionError(label, f"Python interpreter not found: {interpreter} (not on PATH)")
    first = words[0]
    if first == "-m":
        if len(words) < 2:
            raise UsageError("-m needs a module name (e.g. '-m mypkg.tool')")
        return PythonTarget(interpreter, tuple(words))
    if first.startswith("-"):
        raise UsageError(f"interpreter option {first} is not supported; give a script or '-m MODULE'")
    if not Path(cwd, first).exists():
        raise CollectionError(label, f"Python script not found: {first} (looked in {cwd})")
    return PythonTarget(interpreter, tuple(words))


@dataclass(frozen=True, slots=True)
class PythonRun:
    """What a finished run left: the bootstrap's ``meta.json`` and its output directory."""

    meta: dict[str, Any]
    out: Path
    exit_status: int
    stderr_tail: str
    #: wall time of the whole run (interpreter start-up included), its CPU time (user + system) and how often
    #: the kernel preempted it (None where not counted): together they tell a busy machine
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    involuntary_switches: int | None = None

    @property
    def failed(self) -> bool:
        return self.exit_status != 0


@contextlib.contextmanager
def run_python(ctx: UnitContext, target: PythonTarget, config: dict[str, Any], *, timeout: float | None,
               keep_failed: bool) -> Iterator[PythonRun]:
    """Run ``target`` under the bootstrap with ``config`` (its ``out`` is filled in); yield the results.

    The temporary directory is removed when the block ends.  Raises
    :class:`CollectionError` as the module docstring describes.
    """
    label = ctx.label
    out = Path(tempfile.mkdtemp(prefix="perun-python-"))
    try:
        config_path = out / "config.json"
        argv = [target.interpreter, str(BOOTSTRAP), str(config_path), "--", *target.target]
        if timeout:     # when run_process will kill the program: the bootstrap dumps its stacks before
            config = {**config, "timeout": timeout, "deadline": time.time() + timeout}
        config_path.write_text(json.dumps({**config, "out": str(out)}), encoding="utf-8")
        try:
            outcome = run_process(argv, cwd=ctx.cwd, timeout=timeout, cancelled=ctx.cancelled, on_line=ctx.output,
                                  tail_lines=30)
        except FileNotFoundError:
            raise CollectionError(label, f"Python interpreter not found: {target.interpreter}") from None
        except OSError as exc:
            raise CollectionError(label, f"the Python interpreter cannot be started: {exc.strerror or exc}") from None
        if outcome.timed_out:
            stacks = hang_report(out / "hang.txt", Path(ctx.cwd))
            tail = "\n".join(part for part in (outcome.stderr_tail, stacks) if part)
            raise CollectionError(label, f"timed out after {timeout:g} s (the program was killed)", None, tail)
        meta = _read_meta(out / "meta.json")
        status = outcome.exit_status
        if meta is None:
            raise CollectionError(label, f"the Python program {describe_status(status)} and ended without leaving "
                                  "results (os._exit() or a signal?)", status, outcome.stderr_tail)
        if status != 0 and not keep_failed:
            if meta.get("status") == "raised":
                reason = f"the Python program raised {meta.get('exception')}"
            elif meta.get("status") == "not started":
                reason = f"the Python program could not be started ({describe_status(status)})"
            else:
                reason = f"the Python program {describe_status(status)}"
            raise CollectionError(label, reason, status, outcome.stderr_tail)
        yield PythonRun(meta, out, status, outcome.stderr_tail, outcome.wall_ns / 1e9,
                        outcome.user_seconds + outcome.sys_seconds, outcome.involuntary_switches)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def hang_report(path: Path, cwd: Path) -> str:
    """The stacks faulthandler wrote before a timeout, without the bootstrap's frames and thread.

    Sources inside ``cwd`` are shown relative to it.  Empty when there is
    no report (the program ended or was killed before it was written).
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    threads: list[list[str]] = []      # a header line ("Thread 0x... (most recent call first):"), then frames
    perun_threads = set()
    for line in text.splitlines():
        if not line.strip() or line.startswith("Timeout ("):
            continue
        if not line[0].isspace() or not threads:
            threads.append([line])
            continue
        frame = _FRAME.match(line)
        if frame is None:
            threads[-1].append(line)        # "  <no Python frame>", "  ..."
        elif frame["file"] not in _BOOTSTRAP_FILES:
            source = short_source(frame["file"], cwd)
            threads[-1].append(f'  File "{source}", line {frame["line"]} in {frame["function"]}')
        elif frame["function"] == _SAMPLER_FUNCTION:
            perun_threads.add(len(threads) - 1)
    kept = [lines for number, lines in enumerate(threads) if number not in perun_threads and len(lines) > 1]
    if not kept:
        return ""
    if len(kept) == 1:
        kept[0][0] = "Stack of the program shortly before it was killed (most recent call first):"
    else:
        kept.insert(0, ["Stacks of the program's threads shortly before it was killed:"])
    return "\n".join(line for lines in kept for line in lines)


def _read_meta(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def failure_header(run: PythonRun) -> dict[str, Any]:
    """Header keys describing a failed run that was kept (``keep_failed``)."""
    if not run.failed:
        return {}
    info: dict[str, Any] = {"exit_status": run.exit_status}
    if run.meta.get("exception"):
        info["exception"] = run.meta["exception"]
    return {"failed_run": info}


def short_source(filename: str, cwd: Path) -> str:
    """``filename`` relative to the job's directory when it lies inside it, else unchanged."""
    if filename.startswith("<") or not os.path.isabs(filename):
        return filename
    try:
        return os.path.relpath(filename, cwd) if Path(filename).is_relative_to(cwd) else filename
    except ValueError:
        return filename
