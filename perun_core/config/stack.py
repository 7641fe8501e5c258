"""The hierarchy of configurations: local (optional) over shared over the built-in defaults."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .file import Config
from .schema import _MISSING, DEFAULTS, _lookup, split_key

__all__ = ["ConfigStack"]


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

    def foreign_setting(self, key: str, *, gathered: bool = False) -> Path | None:
        """The shared configuration file when it sets ``key`` to something other than the built-in default
        and that value takes effect (always for a ``gathered`` key; for others when no local value hides it)."""
        parts = split_key(key)
        value = _lookup(self.shared.data, parts)
        if value is _MISSING or value is None or value == _lookup(DEFAULTS, parts):
            return None
        if not gathered and self.local is not None and _lookup(self.local.data, parts) is not _MISSING:
            return None
        return self.shared.path

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
