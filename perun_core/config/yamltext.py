"""YAML text in and out: dumping in the block style of the templates, parsing a configuration file.

PyYAML is imported inside the functions that need it, so importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..atomic import atomic_write
from ..errors import ConfigError, UnsupportedFormatVersion
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


#: File in a repository's ``.perun/cache`` holding the parsed mapping of each configuration file by path.
PARSED_CACHE = "parsed-config.json"


def _parse_text(text: str, path: Path | str | None, cache_dir: Path | None = None) -> dict[str, Any]:
    """The mapping ``text`` holds; with ``cache_dir`` remembered there by the text's digest.

    Loading PyYAML costs more than everything else a listing (``status``,
    ``log``) does with the configuration, so the last parse of each file is
    kept as JSON and used while the text is byte for byte the same.  Only
    mappings JSON carries unchanged are kept (no dates, no non-string keys).
    """
    if cache_dir is None or path is None:
        return _parse_yaml(text, path)
    cache_file = Path(cache_dir) / PARSED_CACHE
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    try:
        entries = json.loads(cache_file.read_bytes())
        digest_seen, data = entries[str(path)]
        if digest_seen == digest and isinstance(data, dict):
            return data
    except (OSError, ValueError, KeyError, TypeError):
        entries = {}
    data = _parse_yaml(text, path)
    try:
        kept = json.loads(json.dumps(data)) == data
    except (TypeError, ValueError):
        kept = False
    if kept and isinstance(entries, dict):
        entries[str(path)] = [digest, data]
        with contextlib.suppress(OSError):  # a cache that cannot be written is only a missed speed-up
            atomic_write(cache_file, json.dumps(entries).encode())
    return data


def _parse_yaml(text: str, path: Path | str | None) -> dict[str, Any]:
    yaml = _yaml()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        from ..params import format_yaml_error  # the Param machinery only for a broken file

        raise ConfigError(path, None, format_yaml_error(exc)) from None
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
