"""The schema of workload generators: the ``generators.workload`` option checked and read.

See :mod:`perun_core.runner.generators` for what each generator type produces; this module only
knows which options each type takes, the original Perun's spellings of them, and how many
workloads a generator would make (refused above :data:`MAX_WORKLOADS`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["CONFIG_KEY", "GENERATOR_TYPES", "MAX_STRING", "MAX_WORKLOADS", "Generator", "check_generators",
           "generators_from_config", "planned_count", "steps"]

CONFIG_KEY = "generators.workload"
#: Most workloads one generator may produce.
MAX_WORKLOADS = 10_000
#: Longest generated string (one command-line argument may not exceed 128 KiB on Linux).
MAX_STRING = 100_000

_COMMON = {"id": "text", "type": "text", "profile_for_each_workload": "bool"}
_OPTIONS: dict[str, dict[str, str]] = {
    "singleton": {"value": "value", "size": "number"},
    "integer": {"min": "int", "max": "int", "step": "int"},
    "string": {"min_len": "int", "max_len": "int", "step_len": "int"},
    "textfile": {"min_lines": "int", "max_lines": "int", "step_lines": "int",
                 "min_chars": "int", "max_chars": "int", "step_chars": "int"},
    "external": {"command": "text", "file_format": "text", "timeout": "number", "output_dir": "text",
                 "size_key": "text"},
}
#: The original Perun's spellings of generator options: type -> {its key: ours}; None drops a key
#: that changes nothing here (``randomize_rows``, ``delimiters``).
_ORIGINAL_KEYS: dict[str, dict[str, str | None]] = {
    "integer": {"min_range": "min", "max_range": "max"},
    "string": {"step": "step_len"},
    "textfile": {"step": "step_lines", "randomize_rows": None},
    "external": {"external_generator": "command", "delimiters": None},
}
_REQUIRED = {
    "singleton": ("value",),
    "integer": ("min", "max"),
    "string": ("min_len", "max_len"),
    "textfile": ("min_lines", "max_lines", "min_chars", "max_chars"),
    "external": ("command",),
}
_RANGES = {"integer": [("min", "max", "step")], "string": [("min_len", "max_len", "step_len")],
           "textfile": [("min_lines", "max_lines", "step_lines"), ("min_chars", "max_chars", "step_chars")]}
GENERATOR_TYPES = tuple(_OPTIONS)


@dataclass(frozen=True, slots=True)
class Generator:
    """One configured generator: ``options`` holds its type's keys (see the module docstring)."""

    id: str
    type: str
    options: tuple[tuple[str, Any], ...] = ()
    profile_for_each_workload: bool = False

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)


def steps(low: int, high: int, step: int) -> range:
    """The values from ``low`` to ``high`` (inclusive) in steps of ``step``."""
    return range(low, high + 1, step)


def planned_count(generator: Generator) -> int:
    """How many workloads ``generator`` makes (the external type: one run of its command)."""
    option = generator.option
    if generator.type == "integer":
        return len(steps(option("min"), option("max"), option("step", 1)))
    if generator.type == "string":
        return len(steps(option("min_len"), option("max_len"), option("step_len", 1)))
    if generator.type == "textfile":
        return (len(steps(option("min_lines"), option("max_lines"), option("step_lines", 1)))
                * len(steps(option("min_chars"), option("max_chars"), option("step_chars", 1))))
    return 1


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_value(kind: str, value: Any) -> str | None:
    """What is wrong with ``value`` for an option of ``kind``, or None."""
    if kind == "int":
        return None if _is_int(value) else "an integer"
    if kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return None if ok else "a number"
    if kind == "bool":
        return None if isinstance(value, bool) else "true or false"
    if kind == "text":
        return None if isinstance(value, str) and value.strip() else "a non-empty string"
    ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
    return None if ok else "a string or a number"


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _from_original(item: Mapping) -> Mapping:
    """A generator record as the original Perun writes it, in our spelling (others are returned as they are).

    integer ``min_range``/``max_range``, string and textfile ``step``, external
    ``external_generator`` with a ``file_format`` naming its number ``{n}`` (any one
    ``{field}``: the size is then also recorded under that name, its ``size_key``) and an
    ``output_dir`` the command writes into.  A textfile record
    without ``min_chars``/``max_chars`` gets the original's default line width (80).
    """
    renames = _ORIGINAL_KEYS.get(item.get("type"), {})  # type: ignore[arg-type]
    if not any(key in item for key in renames) and not (item.get("type") == "textfile" and "min_chars" not in item):
        return item
    out: dict = {}
    for key, value in item.items():
        if key in renames and renames[key] not in item:
            if renames[key] is not None:
                out[renames[key]] = value
        else:
            out[key] = value
    if out.get("type") == "textfile":
        width = out.get("max_chars", 80)
        out.setdefault("max_chars", width)
        out.setdefault("min_chars", min(width, out["max_chars"]))
    file_format = out.get("file_format")
    if out.get("type") == "external" and isinstance(file_format, str) and "{size}" not in file_format:
        fields = re.findall(r"\{[A-Za-z_][A-Za-z0-9_]*\}", file_format)
        if len(fields) == 1:
            out["file_format"] = file_format.replace(fields[0], "{size}")
            # the original records the number under the field's name: its postprocessors name it (per_key: n)
            out.setdefault("size_key", fields[0][1:-1])
    return out


def _one_generator(item: Any, index: int) -> Generator:
    if not isinstance(item, Mapping):
        raise ValueError(f"expected a mapping as item {index}, got {type(item).__name__}")
    item = _from_original(item)
    ident = item.get("id")
    where = f"item {index}" + (f" ('{ident}')" if isinstance(ident, str) else "")
    kind = item.get("type")
    if kind not in _OPTIONS:
        raise ValueError(f"{where}: expected 'type' to be one of {', '.join(GENERATOR_TYPES)}, got {kind!r}")
    allowed = {**_COMMON, **_OPTIONS[kind]}
    for key, value in item.items():
        if key not in allowed:
            raise ValueError(f"{where}: unknown key '{key}' for {_a(kind)} generator; "
                             f"expected {', '.join(allowed)}")
        problem = _check_value(allowed[key], value)
        if problem:
            raise ValueError(f"{where}: expected '{key}' to be {problem}, got {value!r}")
    for key in ("id", *_REQUIRED[kind]):
        if key not in item:
            raise ValueError(f"{where}: {_a(kind)} generator needs '{key}'")
    for low, high, step in _RANGES.get(kind, ()):
        if item[low] < 0:
            raise ValueError(f"{where}: '{low}' must be >= 0, got {item[low]}")
        if item[high] < item[low]:
            raise ValueError(f"{where}: '{high}' ({item[high]}) is less than '{low}' ({item[low]})")
        if item.get(step, 1) < 1:
            raise ValueError(f"{where}: '{step}' must be >= 1, got {item[step]}")
    generator = Generator(ident, kind, tuple((k, v) for k, v in item.items() if k in _OPTIONS[kind]),
                          bool(item.get("profile_for_each_workload", False)))
    count = planned_count(generator)
    if count > MAX_WORKLOADS:
        raise ValueError(f"{where}: would generate {count} workloads; at most {MAX_WORKLOADS} are allowed "
                         "(use a larger step)")
    if kind == "string" and item["max_len"] > MAX_STRING:
        raise ValueError(f"{where}: 'max_len' may be at most {MAX_STRING} (strings are passed as one argument)")
    if kind == "external" and item.get("timeout") is not None and item["timeout"] <= 0:
        raise ValueError(f"{where}: 'timeout' must be positive, got {item['timeout']}")
    if kind == "external" and "file_format" in item and item["file_format"].count("{size}") != 1:
        raise ValueError(f"{where}: 'file_format' must contain '{{size}}' once, e.g. 'input-{{size}}.txt'")
    return generator


def check_generators(value: Any) -> list[Generator]:
    """The generators of a ``generators.workload`` value; ValueError saying what is wrong."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"expected a list of generators (mappings with id and type), got {type(value).__name__}")
    generators = [_one_generator(item, index) for index, item in enumerate(value, 1)]
    seen: set[str] = set()
    for generator in generators:
        if generator.id in seen:
            raise ValueError(f"generator id '{generator.id}' is used twice")
        seen.add(generator.id)
    return generators


def generator_spec(generator: Generator) -> dict[str, Any]:
    """The configuration item of ``generator``, as a profile records it (``header.generator``).

    A profile that carries it can be measured again over the very workloads
    it was made with, whatever the configuration says by then.
    """
    return {"id": generator.id, "type": generator.type, **dict(generator.options),
            "profile_for_each_workload": generator.profile_for_each_workload}


def generator_from_spec(value: Any) -> Generator | None:
    """The generator a profile's ``header.generator`` records in full, or None (only ``id``/``type``, or invalid)."""
    if not isinstance(value, Mapping) or set(value) <= {"id", "type"}:
        return None
    try:
        return _one_generator(value, 1)
    except ValueError:
        return None


def generators_from_config(config: Any, path: Path | str | None = None) -> dict[str, Generator]:
    """The configured generators by id; ConfigError naming ``path`` for an invalid section."""
    value = config.get_or(CONFIG_KEY) if config is not None else None
    try:
        return {g.id: g for g in check_generators(value)}
    except ValueError as exc:
        raise ConfigError(path, CONFIG_KEY, str(exc)) from None
