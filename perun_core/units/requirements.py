"""What a unit needs from the machine, and whether this machine has it.

A unit may have a ``requirements()`` method returning a list of
:class:`Requirement`: each names one thing (a compiler, a profiler, a kernel
setting), says whether it is here (``ok``), what was found or what is wrong
(``detail``) and how to get it when it is missing (``how_to_get``).
``optional`` requirements are needed only by some options (the uprobes
engine of the trace collector); missing ones do not make the unit unusable.
Checks may run quick commands (``perf stat true``) but never the profiled
program.  ``perun-core collect NAME --check`` shows them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from . import registry

__all__ = ["Requirement", "UnitCheck", "check_unit", "tool_requirement", "tool_version"]


@dataclass(frozen=True, slots=True)
class Requirement:
    name: str
    ok: bool
    detail: str
    how_to_get: str = ""
    optional: bool = False


@dataclass(frozen=True, slots=True)
class UnitCheck:
    """The requirements of one unit; ``usable`` unless a non-optional one is missing."""

    unit: str
    kind: str
    requirements: tuple[Requirement, ...]

    @property
    def usable(self) -> bool:
        return all(r.ok or r.optional for r in self.requirements)


def check_unit(kind: str, name: str) -> UnitCheck:
    """Check the requirements of the unit ``name`` of ``kind`` (collector or postprocessor).

    Units without a ``requirements`` method need nothing beyond perun.
    Raises :class:`~perun_core.errors.UnknownUnit` for unknown names.
    """

    unit = registry(kind).get(name)
    declared = getattr(unit, "requirements", None)
    found: Sequence[Requirement] = declared() if callable(declared) else ()
    return UnitCheck(name, kind, tuple(found))


def tool_version(argv: Sequence[str], timeout: float = 10) -> str | None:
    """The first line ``argv`` prints (``perf --version``), or None when it cannot run."""
    try:
        done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else ""


def tool_requirement(name: str, tool: str, how_to_get: str, *, version_flag: str = "--version",
                     optional: bool = False) -> Requirement:
    """``tool`` on PATH, with its version as the detail."""
    path = shutil.which(tool)
    if path is None:
        return Requirement(name, False, f"'{tool}' not found on PATH", how_to_get, optional)
    version = tool_version([path, version_flag]) or ""
    return Requirement(name, True, f"{path}" + (f" ({version})" if version else ""), how_to_get, optional)
