"""The options perun knows: defaults, the table of valid values, key spelling and look-up.

:data:`DEFAULTS` holds the built-in values; :func:`validate` checks a value for
a dotted key against the table of known options (unknown keys pass, so files
of the original Perun or of a newer perun load); :func:`check_known_key`
refuses a typo.  Nothing here reads or writes a file.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError

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
    # written as "not 0 <= value < inf" so that NaN (every comparison false) is refused too
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise _Invalid(f"expected a finite non-negative number, got {_describe(value)}")


def _check_timeout(value: Any) -> None:
    from ..params import MAX_TIMEOUT  # here: reading a configuration need not load the Param machinery

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
    """generators.workload: the workload generators (checked by :mod:`perun_core.config.generators`)."""
    # lazy: keeps `perun-core status`, the TUI's first frame and `perun-core check profiles` light
    from .generators import check_generators

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
