"""YAML text in and out: dumping in the block style of the templates, parsing a configuration file.

PyYAML is imported inside the functions that need it, so importing this module is cheap.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import cachefile
from ..errors import ConfigError, UnsupportedFormatVersion
from ..params import yaml_expansion_problem
from .schema import CONFIG_VERSION, _describe


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


#: File in a repository's ``.perun/cache`` holding the parsed mappings of configuration texts by digest.
PARSED_CACHE = "parsed-config.json"
PARSED_VERSION = 1
#: How many parsed texts it keeps (the local and the shared configuration, and the versions just before).
PARSED_KEPT = 4


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def remembered_mapping(text: str, cache_dir: Path) -> dict[str, Any] | None:
    """The mapping a valid configuration ``text`` was parsed to before, from ``cache_dir``; None if unknown.

    Loading PyYAML costs more than everything else a listing (``status``,
    ``log``) does with the configuration, so the last parses of valid files
    are kept as JSON, keyed by the text's digest alone (the mapping depends
    on nothing else).
    """
    entries = cachefile.read(Path(cache_dir) / PARSED_CACHE, PARSED_VERSION)
    data = entries.get(_digest(text)) if isinstance(entries, dict) else None
    return data if isinstance(data, dict) else None


def remember_mapping(text: str, data: dict[str, Any], cache_dir: Path) -> None:
    """Keep the mapping of a validated ``text`` for :func:`remembered_mapping` once the command has succeeded
    (only what JSON carries unchanged: no dates, no non-string keys)."""
    try:
        if json.loads(json.dumps(data)) != data:
            return
    except (TypeError, ValueError):
        return
    cache_file = Path(cache_dir) / PARSED_CACHE
    entries = cachefile.read(cache_file, PARSED_VERSION)
    if not isinstance(entries, dict):
        entries = {}
    entries.pop(_digest(text), None)
    entries[_digest(text)] = data
    for old in list(entries)[:-PARSED_KEPT]:
        del entries[old]
    cachefile.write(cache_file, cachefile.encode(PARSED_VERSION, entries))


def _parse_text(text: str, path: Path | str | None) -> dict[str, Any]:
    yaml = _yaml()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        from ..params import format_yaml_error  # the Param machinery only for a broken file

        raise ConfigError(path, None, format_yaml_error(exc)) from None
    problem = yaml_expansion_problem(data)
    if problem is not None:
        raise ConfigError(path, None, problem)
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
