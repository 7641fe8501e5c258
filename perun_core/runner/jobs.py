"""Jobs: one command line collected by one collector, then postprocessed in order.

A job matrix (spec 001 §7.3) is the cartesian product
``cmds x args x workloads x collectors``; every job carries the same ordered
postprocessors.  Missing ``args`` or ``workloads`` count as one empty string.
The command line of a job is ``cmd``, ``args`` and ``workload`` each split
like a POSIX shell would (:func:`shlex.split`) and joined, but run without a
shell: redirections and pipes are not interpreted.
"""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import unit_params
from ..errors import ConfigError, UsageError
from ..units import convert_params, registry

__all__ = ["Job", "UnitConfig", "expand", "matrix_from_config", "unit_config", "unit_configs"]


@dataclass(frozen=True, slots=True)
class UnitConfig:
    """A unit by name with its complete, converted parameters."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def as_info(self) -> dict[str, Any]:
        """The ``collector_info`` / ``postprocessors[i]`` entry of a profile."""
        return {"name": self.name, "params": dict(self.params)}


@dataclass(frozen=True, slots=True)
class Job:
    cmd: str
    args: str
    workload: str
    collector: UnitConfig
    postprocessors: tuple[UnitConfig, ...] = ()

    def argv(self) -> list[str]:
        """The command line to execute; UsageError for unbalanced quotes or an empty command."""
        words: list[str] = []
        for what, text in (("command", self.cmd), ("arguments", self.args), ("workload", self.workload)):
            try:
                words += shlex.split(text)
            except ValueError as exc:
                raise UsageError(f"cannot split the {what} {text!r}: {exc}") from None
            if what == "command" and not words:
                raise UsageError("a job needs a non-empty command")
        return words

    @property
    def command_line(self) -> str:
        return " ".join(part for part in (self.cmd, self.args, self.workload) if part)

    @property
    def label(self) -> str:
        """``collector: command line`` (+ `` | postprocessors``), for messages."""
        text = f"{self.collector.name}: {self.command_line}"
        if self.postprocessors:
            text += " | " + " | ".join(p.name for p in self.postprocessors)
        return text


def unit_config(kind: str, name: str, params: Mapping[str, Any] | None = None) -> UnitConfig:
    """Look ``name`` up in the ``kind`` registry and convert ``params`` against its declaration.

    Raises UnknownUnit (listing the known names) or InvalidParameter.
    """

    unit = registry(kind).get(name)
    # an alias (regression-analysis) is recorded under the unit's own name
    canonical = getattr(unit, "name", name) or name
    return UnitConfig(canonical, convert_params(canonical, getattr(unit, "params", ()), params))


def unit_configs(kind: str, entries: Sequence[Mapping[str, Any] | tuple[str, Mapping[str, Any] | None] | str]) -> list[UnitConfig]:
    """Unit configs from ``{name, params}`` mappings (as in local.yml), pairs or bare names."""

    configs = []
    for entry in entries:
        if isinstance(entry, str):
            configs.append(unit_config(kind, entry))
        elif isinstance(entry, Mapping):
            configs.append(unit_config(kind, str(entry.get("name", "")), unit_params(entry)))
        else:
            name, params = entry
            configs.append(unit_config(kind, name, params))
    return configs


def expand(
    cmds: Sequence[str],
    args: Sequence[str],
    workloads: Sequence[str],
    collectors: Sequence[UnitConfig],
    postprocessors: Sequence[UnitConfig] = (),
) -> list[Job]:
    """Every job of the product, ordered by command, then arguments, workload, collector."""
    if not cmds:
        raise UsageError("no command to profile", hint="give one with -c/--cmd (or -b for 'run job')")
    if not collectors:
        raise UsageError("no collector given", hint="name one with -c/--collector")
    chain = tuple(postprocessors)
    return [
        Job(cmd, arg, workload, collector, chain)
        for cmd, arg, workload, collector in itertools.product(cmds, list(args) or [""], list(workloads) or [""], collectors)
    ]


def matrix_from_config(config: Any, path: Path | None) -> list[Job]:
    """The job matrix of a :class:`~perun_core.config.ConfigStack` (keys of spec §7.3).

    Raises ConfigError naming ``path`` when ``cmds`` or ``collectors`` is
    missing or empty, UnknownUnit / InvalidParameter for bad units.
    """
    cmds = config.get_or("cmds") or []
    if not cmds:
        raise _matrix_error(path, "cmds", "the job matrix lists no commands to profile", "cmds: [./build/app]")
    collectors = config.get_or("collectors") or []
    if not collectors:
        raise _matrix_error(path, "collectors", "the job matrix lists no collectors", "collectors: [{name: time}]")
    return expand(
        cmds,
        config.get_or("args") or [],
        config.get_or("workloads") or [],
        unit_configs("collector", collectors),
        unit_configs("postprocessor", config.get_or("postprocessors") or []),
    )


def _matrix_error(path: Path | None, key: str, reason: str, example: str) -> ConfigError:
    error = ConfigError(path, key, reason)
    error.hint = f"add e.g. '{example}' to the local configuration ('perun-core config edit')"
    return error
