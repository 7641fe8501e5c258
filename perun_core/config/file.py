"""One configuration file (:class:`Config`): read, look up, change keeping comments, save; :func:`reset`."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_text
from ..errors import ConfigError
from .schema import _MISSING, Kind, _describe, _lookup, split_key, validate, validate_data
from .yamltext import _check_version_of, _parse_text, _yaml, dump_yaml, remember_mapping, remembered_mapping

__all__ = ["Config", "reset"]


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
    def load(cls, path: Path | str, *, kind: Kind, validate: bool = True, cache_dir: Path | None = None) -> "Config":
        """Read ``path``.  A missing shared file is an empty configuration.

        With ``validate`` (the default) every known option is checked; front
        ends that must open a broken file to repair it pass ``validate=False``.
        The ``config_version`` is always checked.  With ``cache_dir`` (a
        repository's ``.perun/cache``) the parsed text is remembered there.
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
        return cls.from_text(path, text, kind=kind, validate=validate, cache_dir=cache_dir)

    @classmethod
    def from_text(cls, path: Path | str, text: str, *, kind: Kind, validate: bool = True,
                  cache_dir: Path | None = None) -> "Config":
        """A configuration for ``path`` with content ``text`` (nothing is written but the parse cache)."""
        if text.startswith("\ufeff"):
            text = text[1:]
        data = remembered_mapping(text, cache_dir) if cache_dir is not None and validate else None
        if data is not None:
            return cls(path, kind, data, text)
        data = _parse_text(text, path)
        _check_version_of(data, path)
        if validate:
            validate_data(data, path=path)
        if validate and cache_dir is not None:
            remember_mapping(text, data, cache_dir)
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
        from .edits import _edit_set  # only a change needs the editing code

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
        # lazy: keeps `perun-core status`, the TUI's first frame and `perun-core check profiles` light
        from .edits import _edit_unset

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
        # lazy: keeps `perun-core status`, the TUI's first frame and `perun-core check profiles` light
        from .edits import _NoEdit

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


def reset(config: Config, template: str = "master") -> None:
    """Rewrite ``config`` to a sane state and save it.

    A local configuration is rendered from ``template`` again (see
    :mod:`perun_core.config.templates`), keeping its whole ``vcs`` section and
    assuming the project root is the parent of the ``.perun`` directory; a
    shared configuration gets the built-in defaults.
    """
    # lazy: keeps `perun-core status`, the TUI's first frame and `perun-core check profiles` light
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
