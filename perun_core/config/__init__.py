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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and editors; at run time __getattr__ loads them
    from ..params import unit_params
    from .file import Config, reset
    from .schema import (
        CONFIG_VERSION, DEFAULTS, DEGRADATION_APPLY_CHOICES, GATHERED_KEYS, KNOWN_KEYS, LOCAL_ONLY_KEYS,
        ORIGINAL_SORT_KEYS, ORIGINAL_TOOL_KEYS, PAGING_CHOICES, SORT_PROFILES_BY_CHOICES, VCS_TYPES, Kind,
        check_known_key, default, is_known_key, shared_config_dir, sort_key, split_key, unused_keys, validate,
        validate_data,
    )
    from .stack import ConfigStack
    from .values import parse_cli_value
    from .yamltext import dump_yaml

#: Where each public name lives; a module is imported on first use of one of its names, so a
#: caller that only reads configurations never loads the editing or command-line value code.
_WHERE: dict[str, str] = {
    **dict.fromkeys(("Config", "reset"), "file"),
    "ConfigStack": "stack",
    "parse_cli_value": "values",
    "dump_yaml": "yamltext",
    **dict.fromkeys((
        "CONFIG_VERSION", "DEFAULTS", "DEGRADATION_APPLY_CHOICES", "GATHERED_KEYS", "KNOWN_KEYS", "LOCAL_ONLY_KEYS",
        "ORIGINAL_SORT_KEYS", "ORIGINAL_TOOL_KEYS", "PAGING_CHOICES", "SORT_PROFILES_BY_CHOICES", "VCS_TYPES",
        "Kind", "check_known_key", "default", "is_known_key", "shared_config_dir", "sort_key", "split_key",
        "unused_keys", "validate", "validate_data",
    ), "schema"),
}


def __getattr__(name: str) -> Any:
    if name == "unit_params":
        # lazy: keeps the TUI's first frame light
        from ..params import unit_params

        return unit_params
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'perun_core.config' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "CONFIG_VERSION",
    "DEFAULTS",
    "GATHERED_KEYS",
    "LOCAL_ONLY_KEYS",
    "PAGING_CHOICES",
    "SORT_PROFILES_BY_CHOICES",
    "DEGRADATION_APPLY_CHOICES",
    "VCS_TYPES",
    "KNOWN_KEYS",
    "ORIGINAL_SORT_KEYS",
    "ORIGINAL_TOOL_KEYS",
    "Kind",
    "check_known_key",
    "is_known_key",
    "sort_key",
    "unused_keys",
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
