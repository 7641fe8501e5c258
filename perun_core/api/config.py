"""The porcelain of configuration: read, set, reset and edit ``local.yml`` and ``shared.yml``.

``scope`` names the file: ``local`` (the instance's ``.perun/local.yml``),
``shared`` (the user's ``shared.yml``) or ``nearest`` (local inside an
instance, else shared; for reading, the nearest file that sets the key).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config, ConfigStack, check_known_key, default, parse_cli_value, reset, shared_config_dir, validate
from ..errors import ConfigError, PerunError, UsageError
from ..storage.repository import PerunRepository

__all__ = ["ConfigValue", "EditRequest", "config_edit_request", "config_get", "config_reset", "config_set",
           "editor_command", "parse_config_value", "validate_config_file"]


@dataclass(frozen=True, slots=True)
class ConfigValue:
    key: str
    value: Any
    source: str  # "local", "shared" or "default"
    path: Path | None


def _config_location(scope: str, cwd: Path | str | None) -> tuple[Path, str]:
    """(path, kind) of the file a scope names, without reading it."""

    if scope not in ("local", "shared", "nearest"):
        raise UsageError(f"unknown config scope '{scope}'; expected local, shared or nearest")
    shared_path = shared_config_dir() / "shared.yml"
    if scope == "shared":
        return shared_path, "shared"
    try:
        repo = PerunRepository.discover(cwd)
    except PerunError:
        if scope == "local":
            raise
        return shared_path, "shared"
    with repo:
        return repo.local_config_path, "local"


def _config_target(scope: str, cwd: Path | str | None, *, for_write: bool) -> Any:
    path, kind = _config_location(scope, cwd)
    # Writers may open a file with invalid values: setting a key is how it gets repaired.
    return Config.load(path, kind=kind, validate=not for_write)


def config_get(key: str, *, scope: str = "nearest", cwd: Path | str | None = None) -> ConfigValue:
    """Value of ``key``: from one file, or the nearest one that sets it."""

    if scope == "nearest":
        shared = Config.load(shared_config_dir() / "shared.yml", kind="shared")
        repo = None
        with contextlib.suppress(PerunError):  # outside a perun repository: the shared configuration alone
            repo = PerunRepository.discover(cwd)
        # a local.yml that cannot be read is an error, not a file that sets nothing
        local = Config.load(repo.local_config_path, kind="local") if repo is not None else None
        stack = ConfigStack(local, shared)
        value = stack.get(key)
        source = stack.source_of(key)
        path = {"local": local.path if local else None, "shared": shared.path}.get(source)
        return ConfigValue(key, value, source, path)
    config = _config_target(scope, cwd, for_write=False)
    try:
        return ConfigValue(key, config.get(key), scope, config.path)
    except KeyError:
        try:
            fallback = f" (default: {default(key)!r})"
        except (KeyError, ConfigError):
            fallback = ""
        raise ConfigError(config.path, key, f"is not set in the {scope} configuration{fallback}") from None


def config_set(key: str, value: Any, *, scope: str = "nearest", cwd: Path | str | None = None) -> ConfigValue:
    """Set ``key`` in the local (nearest) or shared configuration and save it atomically."""

    config = _config_target(scope, cwd, for_write=True)
    check_known_key(key, path=config.path)
    if not _is_text(value):
        raise ConfigError(config.path, key, "holds bytes that are not UTF-8 text (given on the command line as "
                          "such); expected text")
    validate(key, value, path=config.path)
    config.set(key, value)
    config.save()
    return ConfigValue(key, value, config.kind, config.path)


def _is_text(value: Any) -> bool:
    """Whether every string in ``value`` (and its lists and mappings) is text UTF-8 can hold: no lone surrogates."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return False
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def config_reset(*, scope: str = "nearest", template: str = "master", cwd: Path | str | None = None) -> Path:
    """Rewrite a configuration file to its template (local) or defaults (shared)."""

    path, kind = _config_location(scope, cwd)
    try:
        config = Config.load(path, kind=kind, validate=False)
    except ConfigError:
        # Reset is the way out of a file that no longer parses: start afresh.
        config = Config(path, kind)
    reset(config, template)
    return config.path


@dataclass(frozen=True, slots=True)
class EditRequest:
    path: Path
    command: list[str]


def config_edit_request(*, scope: str = "nearest", cwd: Path | str | None = None) -> EditRequest:
    """The file to edit and the editor command (see :func:`editor_command`); creates a missing file."""
    import shlex

    path, kind = _config_location(scope, cwd)
    editor = _editor_for(path, kind)
    if not path.exists():
        Config(path, kind).save()
    return EditRequest(path, [*shlex.split(editor), str(path)])


def editor_command(*, scope: str = "nearest", cwd: Path | str | None = None, fallback: bool = True) -> str:
    """The command line of the user's editor: $VISUAL, $EDITOR, then ``general.editor``.

    ``general.editor`` is read from the file ``scope`` names, then from
    shared.yml, then its default; a broken file is skipped, so that the
    editor that is to repair it can still be found.  Without ``fallback``
    the default is not used: "" when the user configured no editor.
    """
    path, kind = _config_location(scope, cwd)
    return _editor_for(path, kind, fallback)


def _editor_for(path: Path, kind: str, fallback: bool = True) -> str:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if editor:
        return editor
    for candidate in (path, shared_config_dir() / "shared.yml"):
        with contextlib.suppress(PerunError, KeyError):
            editor = str(Config.load(candidate, kind="local" if candidate == path and kind == "local" else "shared",
                                     validate=False).get("general.editor"))
            break
    return editor or (str(default("general.editor")) if fallback else "")


def validate_config_file(path: Path | str, kind: str) -> None:
    """Re-read an edited configuration and raise ConfigError if it is unusable."""

    Config.load(Path(path), kind=kind)


def parse_config_value(text: str) -> Any:
    """A value given on the command line (``config set KEY VALUE``), read as YAML: true, 3, [a, b] ..."""

    return parse_cli_value(text)
