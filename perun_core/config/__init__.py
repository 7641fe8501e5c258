"""Perun configuration: the local ``.perun/local.yml`` and the shared ``shared.yml``.

A :class:`Config` is one YAML file holding a mapping.  Keys are addressed with
dots (``format.status`` is ``status`` inside the ``format`` section).  A
:class:`ConfigStack` answers look-ups the way the options are specified:
*recursive* options come from the nearest configuration that has them (local,
then shared, then :data:`DEFAULTS`), *gathered* options concatenate the lists
of all of them.

Setting a key edits the YAML text in place whenever it safely can, so comments
and the layout written by a user (or by a template) survive ``config set``;
every such edit is checked by parsing the result again, and when the check
fails the whole mapping is dumped instead.

Nothing here prints or exits; every failure is a :class:`ConfigError` (or
:class:`UnsupportedFormatVersion` for a file written by a newer perun).
PyYAML is imported inside the functions that need it, so importing this module
is cheap.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError, UnsupportedFormatVersion
from ..atomic import atomic_write_text

__all__ = [
    "CONFIG_VERSION",
    "DEFAULTS",
    "GATHERED_KEYS",
    "LOCAL_ONLY_KEYS",
    "PAGING_CHOICES",
    "SORT_PROFILES_BY_CHOICES",
    "DEGRADATION_APPLY_CHOICES",
    "VCS_TYPES",
    "Config",
    "ConfigStack",
    "default",
    "dump_yaml",
    "parse_cli_value",
    "reset",
    "shared_config_dir",
    "split_key",
    "unit_params",
    "validate",
    "validate_data",
]

Kind = Literal["local", "shared"]

#: Newest ``config_version`` this perun reads and writes.
CONFIG_VERSION = 1

PAGING_CHOICES = ("always", "only-log", "only-status", "never")
SORT_PROFILES_BY_CHOICES = (
    "realpath", "type", "time", "cmd", "args", "workload", "collector", "checksum", "source",
)
DEGRADATION_APPLY_CHOICES = ("first", "all")
VCS_TYPES = ("git",)

#: Built-in values, used when neither the local nor the shared configuration
#: sets an option.  Shaped like a configuration file (nested sections).
DEFAULTS: dict[str, Any] = {
    "general": {
        "paging": "only-log",
        "editor": "vi",
    },
    "format": {
        "status": "┃ [%type%] ┃ %cmd% ┃ %args% ┃ %workload% ┃ %collector% ┃ %time% ┃",
        "shortlog": "%checksum:6% (%stats%) %desc:50% %changes%",
        "output_profile_template": "%collector%-%cmd%-%args%-%workload%-%date%",
        "sort_profiles_by": "time",
    },
    "degradation": {
        "apply": "first",
        # the default strategy of perun_core.check.default (see README, "Detecting changes")
        "strategies": [{"method": "size_aware_rank_test"}],
    },
    "profiles": {
        "register_after_run": False,
    },
    "execute": {
        "pre_run": [],
        # seconds a profiled program of collect/run may take when its collector's own --timeout is not given; 0: none
        "timeout": 3600,
    },
}

#: Options whose values are concatenated over the whole hierarchy.
GATHERED_KEYS = frozenset({"degradation.strategies"})

#: Options the specification reserves to the local configuration.  Nothing
#: here enforces it; front ends may warn when such a key is set in shared.yml.
LOCAL_ONLY_KEYS = frozenset({
    "vcs", "vcs.type", "vcs.url", "execute.pre_run",
    "cmds", "args", "workloads", "collectors", "postprocessors",
})


# --------------------------------------------------------------------------
# locations and keys


def shared_config_dir() -> Path:
    """Directory of ``shared.yml``: $PERUN_CONFIG_DIR, $XDG_CONFIG_HOME/perun or ~/.config/perun."""
    explicit = os.environ.get("PERUN_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg).expanduser() / "perun"
    return Path.home() / ".config" / "perun"


def split_key(key: str) -> list[str]:
    """Split a dotted key into its parts; ConfigError when a part is empty."""
    if not isinstance(key, str) or not key:
        raise ConfigError(None, str(key), "is not a valid key (expected sections and an option joined by '.')")
    parts = key.split(".")
    if any(not part or part != part.strip() for part in parts):
        raise ConfigError(None, key, "is not a valid key (expected sections and an option joined by '.')")
    return parts


_MISSING = object()


def _lookup(data: Mapping[str, Any], parts: list[str]) -> Any:
    node: Any = data
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def default(key: str) -> Any:
    """The built-in value of ``key`` (a copy); KeyError when there is none."""
    value = _lookup(DEFAULTS, split_key(key))
    if value is _MISSING:
        raise KeyError(key)
    return copy.deepcopy(value)


# --------------------------------------------------------------------------
# validation


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"bool {'true' if value else 'false'}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"str {shown!r}"
    if isinstance(value, (int, float)):
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__


class _Invalid(Exception):
    """Raised by checkers; turned into a ConfigError naming the key."""


def _check_str(value: Any) -> None:
    if not isinstance(value, str):
        raise _Invalid(f"expected a string, got {_describe(value)}")


def _check_nonempty_str(value: Any) -> None:
    _check_str(value)
    if not value.strip():
        raise _Invalid("expected a non-empty string, got an empty one")


def _check_bool(value: Any) -> None:
    # The specification allows "1, true, True, yes, etc."; YAML already turns
    # yes/no/on/off into booleans, so only 0 and 1 need admitting here.
    if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
        return
    raise _Invalid(f"expected a boolean (true or false), got {_describe(value)}")


def _choice(choices: tuple[str, ...]) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        if not isinstance(value, str) or value not in choices:
            raise _Invalid(f"expected one of {', '.join(choices)}, got {_describe(value)}")
    return check


def _check_str_list(value: Any) -> None:
    if not isinstance(value, list):
        raise _Invalid(f"expected a list of strings, got {_describe(value)}")
    for index, item in enumerate(value, 1):
        if not isinstance(item, str):
            hint = f" (quote it: '{item}')" if isinstance(item, (int, float)) and not isinstance(item, bool) else ""
            raise _Invalid(f"expected a list of strings, got {_describe(item)} as item {index}{hint}")


def _check_non_negative(value: Any) -> None:
    # written as "not >= 0" so that NaN (every comparison false) is refused too
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise _Invalid(f"expected a finite non-negative number, got {_describe(value)}")


def _check_timeout(value: Any) -> None:
    from ..params import MAX_TIMEOUT

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TIMEOUT:
        raise _Invalid(f"expected seconds from 0 (no timeout) to {MAX_TIMEOUT:g}, got {_describe(value)}")


def _check_mapping_list(value: Any) -> None:
    if not isinstance(value, list):
        raise _Invalid(f"expected a list of mappings, got {_describe(value)}")
    for index, item in enumerate(value, 1):
        if not isinstance(item, Mapping):
            raise _Invalid(f"expected a list of mappings, got {_describe(item)} as item {index}")
        if "method" in item and not isinstance(item["method"], str):
            raise _Invalid(f"expected a string as 'method' of item {index}, got {_describe(item['method'])}")


def _check_units(value: Any) -> None:
    """collectors / postprocessors: ``[{name: str, params: {..}}, ...]``.

    ``params`` may also be a list of one-key mappings, the form the original
    documentation shows; :func:`unit_params` merges it into one mapping.
    """
    expected = "expected a list of mappings with a 'name' string and optional 'params'"
    if not isinstance(value, list):
        raise _Invalid(f"{expected}, got {_describe(value)}")
    for index, item in enumerate(value, 1):
        if not isinstance(item, Mapping):
            raise _Invalid(f"{expected}, got {_describe(item)} as item {index}")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _Invalid(f"expected a 'name' string in item {index}, got {_describe(name)}")
        unknown = [str(k) for k in item if k not in ("name", "params")]
        if unknown:
            raise _Invalid(f"unknown key '{unknown[0]}' in item {index} ('{name}'); expected name, params")
        params = item.get("params")
        if params is None or isinstance(params, Mapping):
            continue
        if isinstance(params, list) and all(isinstance(p, Mapping) for p in params):
            continue
        raise _Invalid(f"expected 'params' of item {index} ('{name}') to be a mapping, got {_describe(params)}")


def _check_generators(value: Any) -> None:
    """generators.workload: the workload generators (checked by :mod:`perun_core.runner.generators`)."""
    from ..runner.generators import check_generators

    try:
        check_generators(value)
    except ValueError as exc:
        raise _Invalid(str(exc)) from None


def _check_version(value: Any) -> None:
    if type(value) is not int or value < 1:
        raise _Invalid(f"expected a positive integer, got {_describe(value)}")
    if value > CONFIG_VERSION:
        raise _Invalid(f"expected at most {CONFIG_VERSION} (the newest this perun writes), got {value}")


#: Sort keys the original Perun writes (``[time, stem, copy]``) that mean nothing here; accepted, skipped.
ORIGINAL_SORT_KEYS = ("stem", "copy")


def _check_sort_keys(value: Any) -> None:
    """One key, or the original Perun's list of keys (the first one we know is used)."""
    choices = (*SORT_PROFILES_BY_CHOICES, *ORIGINAL_SORT_KEYS)
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, str) or item not in choices:
            raise _Invalid(f"expected one of {', '.join(SORT_PROFILES_BY_CHOICES)} (or a list of them), "
                           f"got {_describe(item)}")
    if isinstance(value, list) and not any(item in SORT_PROFILES_BY_CHOICES for item in value):
        raise _Invalid(f"expected a list holding one of {', '.join(SORT_PROFILES_BY_CHOICES)}, got {value!r}")


def _check_orders(value: Any) -> None:
    for item in value if isinstance(value, list) else [value]:
        if item not in ("asc", "desc"):
            raise _Invalid(f"expected asc or desc (or a list of them), got {_describe(item)}")


def sort_key(value: Any) -> str:
    """The profile attribute a ``format.sort_profiles_by`` value sorts by (a list: its first known key)."""
    if isinstance(value, list):
        return next((item for item in value if item in SORT_PROFILES_BY_CHOICES), "time")
    return str(value)


#: Keys this perun reads; others (the original Perun's, a newer perun's) are kept in the files
#: untouched and listed by ``perun-core config`` (:func:`unused_keys`).
KNOWN_KEYS = frozenset({
    "config_version", "general.paging", "general.editor", "format.status", "format.shortlog",
    "format.output_profile_template", "format.sort_profiles_by", "degradation.apply",
    "degradation.strategies", "degradation.collect_before_check", "degradation.log_collect",
    "degradation.cutoff", "degradation.cutoff_abs", "profiles.register_after_run", "execute.pre_run",
    "vcs.type", "vcs.url", "generators.workload", "cmds", "args", "workloads", "collectors", "postprocessors",
})


def unused_keys(data: Mapping[str, Any]) -> list[str]:
    """Dotted keys of ``data`` that this perun does not read (sections reported whole)."""
    found: list[str] = []
    known_sections = {key.split(".")[0] for key in KNOWN_KEYS if "." in key}
    for key, value in data.items():
        name = str(key)
        if name in KNOWN_KEYS:
            continue
        if name in known_sections and isinstance(value, Mapping):
            found.extend(f"{name}.{child}" for child in value
                         if f"{name}.{child}" not in KNOWN_KEYS and not name == "execute")
        else:
            found.append(name)
    return found


_LEAVES: dict[str, Callable[[Any], None]] = {
    "config_version": _check_version,
    "general.paging": _choice(PAGING_CHOICES),
    "general.editor": _check_nonempty_str,
    "format.sort_profiles_by": _check_sort_keys,
    "format.sort_profiles_order": _check_orders,
    "format.*": _check_str,
    "profiles.register_after_run": _check_bool,
    "execute.pre_run": _check_str_list,
    "execute.timeout": _check_timeout,
    "execute.*": _check_str_list,
    "cmds": _check_str_list,
    "args": _check_str_list,
    "workloads": _check_str_list,
    "collectors": _check_units,
    "postprocessors": _check_units,
    "degradation.apply": _choice(DEGRADATION_APPLY_CHOICES),
    "degradation.strategies": _check_mapping_list,
    "degradation.collect_before_check": _check_bool,
    "degradation.log_collect": _check_bool,
    "degradation.cutoff": _check_non_negative,
    "degradation.cutoff_abs": _check_non_negative,
    # the original Perun's default, its built-in single-version store: accepted in the file (so a
    # repository made without --vcs-type still loads), refused with a reason when the VCS is opened
    "vcs.type": _choice((*VCS_TYPES, "svs")),
    "vcs.url": _check_nonempty_str,
    "generators.workload": _check_generators,
}
_SECTIONS = frozenset(pattern.split(".")[0] for pattern in _LEAVES if "." in pattern)


#: keys the original Perun writes or reads that we accept without using them
ORIGINAL_TOOL_KEYS = frozenset({"profiles.overwrite", "degradation.strategy", "format.sort_profiles_order",
                                "format.output_show_template"})


def is_known_key(key: str) -> bool:
    """Whether ``key`` (dotted) is an option perun knows, its own or the original tool's."""
    parts = split_key(key)
    if _leaf_checker(parts) is not None or ".".join(parts) in ORIGINAL_TOOL_KEYS:
        return True
    return len(parts) == 1 and parts[0] in _SECTIONS


def check_known_key(key: str, *, path: Path | str | None = None) -> None:
    """Refuse an unknown key (a typo such as ``cmdz``), naming the closest known one."""
    if is_known_key(key):
        return
    import difflib

    known = sorted({k for k in _LEAVES if not k.endswith(".*")} | ORIGINAL_TOOL_KEYS | _SECTIONS)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(known)}"
    raise ConfigError(path, key, f"unknown key{hint}")


def _leaf_checker(parts: list[str]) -> Callable[[Any], None] | None:
    exact = _LEAVES.get(".".join(parts))
    if exact is not None:
        return exact
    if len(parts) == 2:
        return _LEAVES.get(f"{parts[0]}.*")
    return None


def validate(key: str, value: Any, *, path: Path | str | None = None) -> None:
    """Check ``value`` for ``key`` against the table of known options.

    Unknown keys pass.  A known section must hold a mapping, whose known
    options are checked in turn.  Raises ``ConfigError(path, key, reason)``
    naming the offending key with a one-line reason.
    """
    parts = split_key(key)
    # Setting below a known option would turn that option into a mapping.
    for depth in range(1, len(parts)):
        checker = _leaf_checker(parts[:depth])
        if checker is not None:
            prefix = ".".join(parts[:depth])
            try:
                checker({parts[depth]: value})
            except _Invalid as exc:
                raise ConfigError(path, prefix, f"{exc}; it has no sub-options") from None
    checker = _leaf_checker(parts)
    if checker is not None:
        try:
            checker(value)
        except _Invalid as exc:
            raise ConfigError(path, key, str(exc)) from None
        return
    if len(parts) == 1 and parts[0] in _SECTIONS:
        if value is None:
            return  # "format:" with nothing under it is an empty section
        if not isinstance(value, Mapping):
            raise ConfigError(path, key, f"expected a section (a mapping), got {_describe(value)}")
        for child, child_value in value.items():
            if isinstance(child, str) and child:
                validate(f"{key}.{child}", child_value, path=path)


def validate_data(data: Mapping[str, Any], *, path: Path | str | None = None) -> None:
    """Validate every known option of a whole configuration mapping."""
    for key, value in data.items():
        if isinstance(key, str) and key and "." not in key:
            validate(key, value, path=path)


def unit_params(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``params`` of a collectors/postprocessors entry as one mapping."""
    params = entry.get("params")
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    merged: dict[str, Any] = {}
    for item in params:
        merged.update(item)
    return merged


# --------------------------------------------------------------------------
# YAML helpers


def _yaml():  # noqa: ANN202 - the yaml module
    import yaml

    return yaml


_DUMPER: list[type] = []


def _dumper_class() -> type:
    if not _DUMPER:
        yaml = _yaml()

        class _IndentedDumper(yaml.SafeDumper):
            """Indents block sequences under their key (``key:\\n  - item``)."""

            def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
                return super().increase_indent(flow, False)

        _DUMPER.append(_IndentedDumper)
    return _DUMPER[0]


def dump_yaml(data: Any, *, indent: int = 2) -> str:
    """Block-style YAML for ``data``, keys in insertion order, never wrapped."""
    yaml = _yaml()
    return yaml.dump(
        data,
        Dumper=_dumper_class(),
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=2**31 - 1,
        indent=max(2, min(indent, 9)),
    )


def _flow_yaml(value: Any) -> str:
    """``value`` as a one-line flow YAML fragment (scalar, [list] or {map})."""
    yaml = _yaml()
    if isinstance(value, (list, dict)):
        text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=2**31 - 1, sort_keys=False)
        return text.rstrip("\n")
    text = yaml.safe_dump([value], default_flow_style=True, allow_unicode=True, width=2**31 - 1)
    return text.rstrip("\n")[1:-1]


def _format_yaml_error(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    context = getattr(exc, "context", None)
    if context and context != problem:
        problem = f"{problem} ({context})"
    problem = " ".join(str(problem).split())
    if mark is not None:
        return f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"invalid YAML: {problem}"


def _parse_text(text: str, path: Path | str | None) -> dict[str, Any]:
    yaml = _yaml()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(path, None, _format_yaml_error(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(path, None, f"expected a mapping of options at the top level, got {_describe(data)}")
    return data


def _check_version_of(data: Mapping[str, Any], path: Path | str) -> None:
    version = data.get("config_version", 1)
    if type(version) is not int or version < 1:
        raise ConfigError(path, "config_version", f"expected a positive integer, got {_describe(version)}")
    if version > CONFIG_VERSION:
        raise UnsupportedFormatVersion(path, "configuration", version, CONFIG_VERSION)


# --------------------------------------------------------------------------
# in-place editing of YAML text


class _NoEdit(Exception):
    """The text cannot be edited in place; dump the whole mapping instead."""


def _find_key(mapping_node: Any, part: str) -> tuple[Any, Any] | None:
    found = None
    for key_node, value_node in mapping_node.value:
        if (
            type(key_node).__name__ == "ScalarNode"
            and key_node.tag == "tag:yaml.org,2002:str"
            and key_node.value == part
        ):
            found = (key_node, value_node)  # the last duplicate wins, as in safe_load
    return found


def _end_index(node: Any) -> int:
    """Index just past the last character belonging to ``node``."""
    kind = type(node).__name__
    if kind in ("MappingNode", "SequenceNode") and not node.flow_style and node.value:
        last = node.value[-1]
        return _end_index(last[1] if kind == "MappingNode" else last)
    return node.end_mark.index


def _line_of(text: str, index: int) -> int:
    """Line number of the last non-blank character before ``index``."""
    return text[:index].rstrip().count("\n")


def _split_lines(text: str) -> list[str]:
    """Lines with their endings, broken at "\\n" only, as YAML marks count them.

    Text with other line breaks YAML knows (a lone CR, NEL, LS, PS) would
    number lines differently, so it is never edited in place.
    """
    if any(mark in text for mark in ("\x85", "\u2028", "\u2029")) or "\r" in text.replace("\r\n", ""):
        raise _NoEdit
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def _is_block_mapping(node: Any) -> bool:
    return type(node).__name__ == "MappingNode" and not node.flow_style


def _key_starts_line(lines: list[str], key_node: Any) -> bool:
    return lines[key_node.start_mark.line][: key_node.start_mark.column].strip() == ""


def _indented(text: str, column: int) -> list[str]:
    pad = " " * column
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    return [(pad + line if line.strip() else line) for line in lines]


def _nest(parts: list[str], value: Any) -> dict[str, Any]:
    nested: Any = value
    for part in reversed(parts):
        nested = {part: nested}
    return nested


def _edit_set(text: str, parts: list[str], value: Any) -> str:
    yaml = _yaml()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        raise _NoEdit from None
    lines = _split_lines(text)
    if root is None:
        # Empty or comment-only file: append the new section at the end.
        prefix = text if not text or text.endswith("\n") else text + "\n"
        return prefix + dump_yaml(_nest(parts, value))
    if not _is_block_mapping(root):
        raise _NoEdit
    node = root
    parent_column = -1
    for depth, part in enumerate(parts):
        found = _find_key(node, part)
        if found is None:
            return _insert_into(text, lines, node, parent_column, parts[depth:], value, at_end=node is root)
        key_node, value_node = found
        if not _key_starts_line(lines, key_node):
            raise _NoEdit
        if depth == len(parts) - 1:
            return _replace_value(text, lines, key_node, value_node, part, value, parent_column)
        if _is_block_mapping(value_node):
            parent_column = key_node.start_mark.column
            node = value_node
            continue
        if type(value_node).__name__ == "ScalarNode" and value_node.tag == "tag:yaml.org,2002:null":
            # "section:" with nothing below: give it the new sub-mapping.
            return _replace_value(text, lines, key_node, value_node, part, _nest(parts[depth + 1:], value), parent_column)
        raise _NoEdit
    raise _NoEdit  # pragma: no cover - the loop always returns


def _indent_step(child_column: int, parent_column: int) -> int:
    step = child_column - parent_column if parent_column >= 0 else 2
    return step if 2 <= step <= 9 else 2


def _insert_into(
    text: str, lines: list[str], node: Any, parent_column: int, parts: list[str], value: Any, *, at_end: bool
) -> str:
    first_key = node.value[0][0]
    column = first_key.start_mark.column
    block = _indented(dump_yaml(_nest(parts, value), indent=_indent_step(column, parent_column)), column)
    if at_end:
        prefix = text if text.endswith("\n") else text + "\n"
        if prefix.strip() and not prefix.endswith("\n\n"):
            prefix += "\n"  # keep new top-level sections apart, like the templates do
        return prefix + "".join(block)
    after = _line_of(text, _end_index(node))
    if not lines[after].endswith("\n"):
        lines[after] += "\n"
    return "".join(lines[: after + 1] + block + lines[after + 1:])


def _replace_value(
    text: str, lines: list[str], key_node: Any, value_node: Any, part: str, value: Any, parent_column: int
) -> str:
    kind = type(value_node).__name__
    start, end = value_node.start_mark.index, value_node.end_mark.index
    # Same line, same shape: swap the characters of the value and keep the
    # rest of the line (a trailing comment in particular).
    inline_old = (kind == "ScalarNode" and value_node.style not in ("|", ">")) or (
        kind != "ScalarNode" and value_node.flow_style
    )
    inline_new = not isinstance(value, (list, dict)) or (kind != "ScalarNode" and value_node.flow_style)
    if inline_old and inline_new and not (kind == "ScalarNode" and start == end):
        return text[:start] + _flow_yaml(value) + text[end:]
    # Otherwise rewrite the lines of the key and its whole value.
    column = key_node.start_mark.column
    first = key_node.start_mark.line
    last = max(first, _line_of(text, _end_index(value_node)))
    if _is_block_mapping(value_node):
        step = _indent_step(value_node.value[0][0].start_mark.column, column)
    else:
        step = _indent_step(column, parent_column)
    block = _indented(dump_yaml({part: value}, indent=step), column)
    if first == last and block[0].rstrip().endswith(":"):
        # "key: old  # note" becoming a block: keep the note on the key line.
        line_end = text.find("\n", end)
        tail = text[end: line_end if line_end >= 0 else len(text)].strip()
        if tail.startswith("#"):
            block[0] = f"{block[0].rstrip()}  {tail}\n"
    return "".join(lines[:first] + block + lines[last + 1:])


def _edit_unset(text: str, parts: list[str]) -> str:
    yaml = _yaml()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        raise _NoEdit from None
    if root is None or not _is_block_mapping(root):
        raise _NoEdit
    lines = _split_lines(text)
    node = root
    for depth, part in enumerate(parts):
        found = _find_key(node, part)
        if found is None:
            raise _NoEdit
        key_node, value_node = found
        if not _key_starts_line(lines, key_node):
            raise _NoEdit
        if depth == len(parts) - 1:
            first = key_node.start_mark.line
            last = max(first, _line_of(text, _end_index(value_node)))
            return "".join(lines[:first] + lines[last + 1:])
        if not _is_block_mapping(value_node):
            raise _NoEdit
        node = value_node
    raise _NoEdit  # pragma: no cover


# --------------------------------------------------------------------------
# one configuration file


class Config:
    """One configuration file: its path, kind (local/shared) and parsed mapping.

    ``data`` is the parsed mapping; change it through :meth:`set` and
    :meth:`unset` so that the YAML text (with its comments) follows.
    """

    def __init__(self, path: Path | str, kind: Kind, data: dict[str, Any] | None = None, text: str | None = None) -> None:
        if kind not in ("local", "shared"):
            raise ConfigError(path, None, f"unknown configuration kind {kind!r} (expected local or shared)")
        self.path = Path(path)
        self.kind: Kind = kind
        self.data: dict[str, Any] = data if data is not None else {}
        self._text = text

    # -- construction ------------------------------------------------------

    @classmethod
    def load(cls, path: Path | str, *, kind: Kind, validate: bool = True) -> "Config":
        """Read ``path``.  A missing shared file is an empty configuration.

        With ``validate`` (the default) every known option is checked; front
        ends that must open a broken file to repair it pass ``validate=False``.
        The ``config_version`` is always checked.
        """
        path = Path(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            if kind == "shared":
                return cls(path, kind)
            raise ConfigError(path, None, "does not exist") from None
        except IsADirectoryError:
            raise ConfigError(path, None, "is a directory, not a configuration file") from None
        except OSError as exc:
            raise ConfigError(path, None, f"cannot be read: {exc.strerror or exc}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(path, None, f"is not UTF-8 text (byte {exc.start})") from None
        return cls.from_text(path, text, kind=kind, validate=validate)

    @classmethod
    def from_text(cls, path: Path | str, text: str, *, kind: Kind, validate: bool = True) -> "Config":
        """A configuration for ``path`` with content ``text`` (nothing is written)."""
        if text.startswith("\ufeff"):
            text = text[1:]
        data = _parse_text(text, path)
        _check_version_of(data, path)
        if validate:
            validate_data(data, path=path)
        return cls(path, kind, data, text)

    # -- reading -----------------------------------------------------------

    def get(self, key: str) -> Any:
        """The value at dotted ``key`` (a copy); KeyError when it is not set."""
        try:
            parts = split_key(key)
        except ConfigError:
            raise KeyError(key) from None
        value = _lookup(self.data, parts)
        if value is _MISSING:
            raise KeyError(key)
        return copy.deepcopy(value)

    def has(self, key: str) -> bool:
        try:
            return _lookup(self.data, split_key(key)) is not _MISSING
        except ConfigError:
            return False

    def keys(self) -> Iterator[str]:
        """Dotted keys of every non-section value, in file order."""

        def walk(prefix: str, node: Mapping[Any, Any]) -> Iterator[str]:
            for key, value in node.items():
                dotted = f"{prefix}{key}"
                if isinstance(value, Mapping) and value:
                    yield from walk(dotted + ".", value)
                else:
                    yield dotted

        return walk("", self.data)

    @property
    def text(self) -> str:
        """The YAML text :meth:`save` would write."""
        if self._text is not None and self._text_matches():
            return self._text
        return dump_yaml(self.data) if self.data else ""

    # -- changing ----------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Set dotted ``key`` to ``value``, creating missing sections.

        The value is validated first.  ConfigError when a section on the way
        holds something other than a mapping.  Not written until :meth:`save`.
        """
        parts = split_key(key)
        validate(key, value, path=self.path)
        intended = copy.deepcopy(self.data)
        node = intended
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part, _MISSING)
            if child is _MISSING or child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                prefix = ".".join(parts[: depth + 1])
                raise ConfigError(self.path, key, f"'{prefix}' holds {_describe(child)}, not a section")
            node = child
        node[parts[-1]] = copy.deepcopy(value)
        self._apply(intended, lambda text: _edit_set(text, parts, value))

    def unset(self, key: str) -> None:
        """Remove dotted ``key``; sections left empty by it go too. KeyError when not set."""
        parts = split_key(key)
        intended = copy.deepcopy(self.data)
        chain: list[dict[str, Any]] = []
        node: Any = intended
        for part in parts:
            if not isinstance(node, dict) or part not in node:
                raise KeyError(key)
            chain.append(node)
            node = node[part]
        del chain[-1][parts[-1]]
        removed = len(parts)
        for depth in range(len(parts) - 1, 0, -1):
            if chain[depth]:
                break
            del chain[depth - 1][parts[depth - 1]]
            removed = depth
        self._apply(intended, lambda text: _edit_unset(text, parts[:removed]))

    def replace(self, data: Mapping[str, Any], text: str | None = None) -> None:
        """Swap the whole content (``text`` must parse to ``data`` to be kept)."""
        self.data = copy.deepcopy(dict(data))
        self._text = text if text is not None and self._parses_to(text, self.data) else None

    def save(self) -> None:
        """Write the file atomically (creating its directory)."""
        atomic_write_text(self.path, self.text)

    # -- internals ---------------------------------------------------------

    def _apply(self, intended: dict[str, Any], edit: Callable[[str], str]) -> None:
        new_text: str | None = None
        if self._text is not None and self._text_matches():
            try:
                candidate = edit(self._text)
            except _NoEdit:
                candidate = None
            if candidate is not None and self._parses_to(candidate, intended):
                new_text = candidate
        elif self._text is None and not self.data:
            candidate = edit("")
            if self._parses_to(candidate, intended):
                new_text = candidate
        self.data = intended
        self._text = new_text if new_text is not None else (dump_yaml(intended) if intended else "")

    def _text_matches(self) -> bool:
        return self._text is not None and self._parses_to(self._text, self.data)

    @staticmethod
    def _parses_to(text: str, expected: Mapping[str, Any]) -> bool:
        yaml = _yaml()
        try:
            parsed = yaml.safe_load(text)
        except yaml.YAMLError:
            return False
        if parsed is None:
            parsed = {}
        return isinstance(parsed, dict) and parsed == expected

    def __repr__(self) -> str:
        return f"Config({str(self.path)!r}, kind={self.kind!r})"


# --------------------------------------------------------------------------
# the hierarchy


class ConfigStack:
    """Local (optional) over shared over :data:`DEFAULTS`."""

    def __init__(self, local: Config | None, shared: Config) -> None:
        self.local = local
        self.shared = shared

    def _layers(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        if self.local is not None:
            yield "local", self.local.data
        yield "shared", self.shared.data
        yield "default", DEFAULTS

    def _find(self, key: str) -> tuple[str, Any]:
        parts = split_key(key)
        for name, data in self._layers():
            value = _lookup(data, parts)
            if value is not _MISSING:
                return name, value
        raise ConfigError(None, key, "is not set")

    def get(self, key: str) -> Any:
        """Value from the nearest configuration that has ``key`` (a copy)."""
        return copy.deepcopy(self._find(key)[1])

    def get_or(self, key: str, default: Any = None) -> Any:
        try:
            return self.get(key)
        except ConfigError:
            return default

    def source_of(self, key: str) -> str:
        """Where :meth:`get` finds ``key``: "local", "shared" or "default"."""
        return self._find(key)[0]

    def gather(self, key: str) -> list[Any]:
        """Concatenated values of ``key`` from local, shared and defaults.

        List values contribute their items, any other set value itself.  An
        item equal to one already gathered is skipped, so a shared
        configuration that repeats the defaults does not list them twice.
        """
        parts = split_key(key)
        gathered: list[Any] = []
        for _name, data in self._layers():
            value = _lookup(data, parts)
            if value is _MISSING or value is None:
                continue
            for item in value if isinstance(value, list) else [value]:
                if item not in gathered:
                    gathered.append(copy.deepcopy(item))
        return gathered

    def __repr__(self) -> str:
        return f"ConfigStack(local={self.local!r}, shared={self.shared!r})"


# --------------------------------------------------------------------------
# command-line values and resets


_NULL_SPELLINGS = frozenset({"null", "Null", "NULL", "~"})


def parse_cli_value(text: str) -> Any:
    """Turn the VALUE of ``config set KEY VALUE`` into a configuration value.

    Follows ``yaml.safe_load`` for scalars (``true`` -> True, ``3`` -> 3,
    ``'x'`` -> "x", ``null`` -> None) and for flow collections (``[a, b]``,
    ``{name: time}``), but keeps the text as typed whenever YAML would read
    it as something else: block scalars (``|``), ``a: b`` mappings, ``- a``
    lists, comments, directives, dates and plain text whose spacing YAML would
    fold.  So ``"| %source% | %collector% |"`` stays that string.
    """
    if not isinstance(text, str):
        return text
    stripped = text.strip()
    if not stripped:
        return text
    if stripped[0] in "|>#%&*!-?:@`,":
        # block scalars, comments, directives, anchors, aliases, tags, block
        # lists, complex keys, reserved characters: plain text on a command line
        if not _looks_numeric(stripped):
            return text
    yaml = _yaml()
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if value is None:
        return None if stripped in _NULL_SPELLINGS else text
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if stripped[0] in "'\"":
            return value  # explicitly quoted: YAML's reading is what was meant
        return text
    if isinstance(value, list):
        return value if stripped.startswith("[") else text
    if isinstance(value, dict):
        return value if stripped.startswith("{") else text
    return text  # dates, timestamps, binary: keep what was typed


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def reset(config: Config, template: str = "master") -> None:
    """Rewrite ``config`` to a sane state and save it.

    A local configuration is rendered from ``template`` again (see
    :mod:`perun_core.config.templates`), keeping its whole ``vcs`` section and
    assuming the project root is the parent of the ``.perun`` directory; a
    shared configuration gets the built-in defaults.
    """
    from . import templates

    if config.kind == "shared":
        text = templates.render_shared_config()
        fresh = Config.from_text(config.path, text, kind="shared")
        config.replace(fresh.data, text)
        config.save()
        return
    vcs = config.data.get("vcs") if isinstance(config.data.get("vcs"), dict) else {}
    vcs_type = vcs.get("type") if isinstance(vcs.get("type"), str) else "git"
    vcs_url = vcs.get("url") if isinstance(vcs.get("url"), str) else "."
    project_root = config.path.resolve().parent.parent
    text = templates.render_local_config(template, project_root=project_root, vcs_type=vcs_type, vcs_url=vcs_url)
    fresh = Config.from_text(config.path, text, kind="local", validate=False)
    for key, value in vcs.items():
        if isinstance(key, str) and key and "." not in key and key not in ("type", "url"):
            fresh.set(f"vcs.{key}", value)
    config.replace(fresh.data, fresh.text)
    config.save()
