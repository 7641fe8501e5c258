"""What the native collectors share: checking the command, running it, judging the outcome.

The profiled program runs through :func:`~perun_core.runner.process.run_process`
(own session, stdin from /dev/null, killed with its whole process group on
timeout or cancel).  Environment variables for it (``LD_PRELOAD`` and the
log directory) are set by running it through ``env``, which replaces
itself with the program, so perun's own environment is never touched and
the program's pid, output and exit status are its own.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import BuildFailed, CollectionError, ExternalToolError
from ..runner.process import ProcessOutcome, describe_status, run_process
from ..units import UnitContext
from ..params import MAX_TIMEOUT, Param
from ..units.requirements import Requirement

__all__ = ["COMMON_PARAMS", "check_command", "check_outcome", "native_library_requirement", "preload",
           "resolve_command", "run_program", "tool_error_as_collection"]

#: Options every native collector has, after its own.
COMMON_PARAMS = (
    Param("timeout", "float", None, "Kill the profiled program (and fail the job) after this many seconds.",
          flags=("-t", "--timeout"), minimum=0.001, maximum=MAX_TIMEOUT, metavar="SECONDS", unit="s"),
    Param("keep_failed", "bool", False,
          "Keep the profile of a run that exits non-zero or crashes (its header records the exit status) "
          "instead of failing the job.", flags=("--keep-failed",)),
)


def resolve_command(ctx: UnitContext, program: str) -> str:
    """The absolute path of ``program`` (relative to the job's directory, or found on PATH).

    Raises CollectionError when it is missing or not executable.
    """
    if os.sep in program:
        path = Path(ctx.cwd, program)
        if not path.exists():
            raise CollectionError(ctx.label, f"command not found: {program} (looked in {ctx.cwd})")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise CollectionError(ctx.label, f"command is not an executable file: {program}")
        return str(path.resolve())
    found = shutil.which(program)
    if found is None:
        raise CollectionError(ctx.label, f"command not found: {program} (not on PATH)")
    return found


def preload(library: str) -> str:
    """The ``LD_PRELOAD`` value putting ``library`` in front of what perun's environment preloads already."""
    existing = os.environ.get("LD_PRELOAD", "").strip()
    return f"{library}:{existing}" if existing else library


def check_command(ctx: UnitContext, kwargs: dict[str, Any]) -> None:
    """Fail early (CollectionError) when the command to profile cannot be run."""
    resolve_command(ctx, kwargs["argv"][0])


def run_program(ctx: UnitContext, argv: Sequence[str], kwargs: Mapping[str, Any], *,
                env: Mapping[str, str] | None = None, tool: str | None = None) -> ProcessOutcome:
    """Run ``argv`` (with ``env`` added to its environment) in the job's directory.

    ``tool`` names the program for messages when ``argv`` starts with a
    profiler (perf, valgrind) rather than the profiled command.  Output lines
    are reported to the context.  Raises CollectionError when it cannot be
    started or times out, Interrupted when the run is cancelled.
    """
    command = list(argv)
    if env:
        command = [shutil.which("env") or "/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), *command]
    try:
        outcome = run_process(command, cwd=ctx.cwd, timeout=kwargs.get("timeout"), cancelled=ctx.cancelled,
                              on_line=ctx.output)
    except OSError as exc:
        what = tool or argv[0]
        raise CollectionError(ctx.label, f"cannot start {what}: {exc.strerror or exc}") from None
    if outcome.timed_out:
        raise CollectionError(ctx.label, f"timed out after {kwargs['timeout']:g} s (the run was killed)",
                              None, outcome.stderr_tail)
    if env and outcome.exit_status == 127 and "env:" in outcome.stderr_tail:
        raise CollectionError(ctx.label, f"command not found: {argv[0]}", 127, outcome.stderr_tail)
    return outcome


def check_outcome(ctx: UnitContext, outcome: ProcessOutcome, kwargs: Mapping[str, Any], *,
                  status: int | None = None) -> None:
    """Fail the job when the program exited non-zero or crashed, unless ``keep_failed``.

    ``status`` overrides the outcome's exit status (when a profiler ran the
    program and reported its status differently).
    """
    code = outcome.exit_status if status is None else status
    if code != 0 and not kwargs.get("keep_failed"):
        raise CollectionError(ctx.label, f"the profiled command {describe_status(code)}", code, outcome.stderr_tail)


def tool_error_as_collection(ctx: UnitContext, function: Any) -> Any:
    """Call ``function``; a missing tool or failed build fails the job with a one-line reason."""
    try:
        return function()
    except ExternalToolError as exc:
        reason = exc.message if not exc.hint else f"{exc.message}; {exc.hint}"
        raise CollectionError(ctx.label, reason) from None
    except BuildFailed as exc:
        raise CollectionError(ctx.label, exc.message, None, exc.output) from None


def native_library_requirement(name: str, library: str, native: Any) -> Requirement:
    """Whether the shipped library ``library`` is built, or can be (it is built now if needed)."""
    try:
        path = native.library(library)
    except ExternalToolError as exc:
        return Requirement(name, False, f"no C compiler to build it ({exc.tool})", exc.hint or "")
    except BuildFailed as exc:
        tail = exc.output.strip().splitlines()[-1:] or [""]
        return Requirement(name, False, f"building it failed: {tail[0]}", "check the C compiler installation")
    return Requirement(name, True, str(path))
