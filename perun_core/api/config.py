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

from ..errors import ConfigError, PerunError, UsageError
from ..storage.repository import PerunRepository

@dataclass(frozen=True, slots=True)
class ConfigValue:
    key: str
    value: Any
    source: str  # "local", "shared" or "default"
    path: Path | None


def _config_location(scope: str, cwd: Path | str | None) -> tuple[Path, str, PerunRepository | None]:
    """(path, kind, repository) of the file a scope names, without reading it."""
    from ..config import shared_config_dir

    if scope not in ("local", "shared", "nearest"):
        raise UsageError(f"unknown config scope '{scope}'; expected local, shared or nearest")
    shared_path = shared_config_dir() / "shared.yml"
    if scope == "shared":
        return shared_path, "shared", None
    try:
        repo = PerunRepository.discover(cwd)
    except PerunError:
        if scope == "local":
            raise
        return shared_path, "shared", None
    return repo.local_config_path, "local", repo


def _config_target(scope: str, cwd: Path | str | None, *, for_write: bool):
    from ..config import Config

    path, kind, repo = _config_location(scope, cwd)
    # Writers may open a file with invalid values: setting a key is how it gets repaired.
    return Config.load(path, kind=kind, validate=not for_write), repo


def config_get(key: str, *, scope: str = "nearest", cwd: Path | str | None = None) -> ConfigValue:
    """Value of ``key``: from one file, or the nearest one that sets it."""
    from ..config import Config, ConfigStack, default, shared_config_dir

    if scope == "nearest":
        shared = Config.load(shared_config_dir() / "shared.yml", kind="shared")
        local = None
        with contextlib.suppress(PerunError):
            repo = PerunRepository.discover(cwd)
            local = Config.load(repo.local_config_path, kind="local")
        stack = ConfigStack(local, shared)
        value = stack.get(key)
        source = stack.source_of(key)
        path = {"local": local.path if local else None, "shared": shared.path}.get(source)
        return ConfigValue(key, value, source, path)
    config, _ = _config_target(scope, cwd, for_write=False)
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
    from ..config import validate

    config, _ = _config_target(scope, cwd, for_write=True)
    validate(key, value, path=config.path)
    config.set(key, value)
    config.save()
    return ConfigValue(key, value, config.kind, config.path)


def config_reset(*, scope: str = "nearest", template: str = "master", cwd: Path | str | None = None) -> Path:
    """Rewrite a configuration file to its template (local) or defaults (shared)."""
    from ..config import Config, reset

    path, kind, _ = _config_location(scope, cwd)
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
    """The file to edit and the editor command ($VISUAL, $EDITOR, then general.editor)."""
    import shlex

    from ..config import Config, default, shared_config_dir

    path, kind, _ = _config_location(scope, cwd)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        # A broken file must still be editable, so the editor lookup may not fail.
        for candidate in (path, shared_config_dir() / "shared.yml"):
            with contextlib.suppress(PerunError, KeyError):
                editor = str(Config.load(candidate, kind="local" if candidate == path and kind == "local" else "shared",
                                         validate=False).get("general.editor"))
                break
        editor = editor or str(default("general.editor"))
    if not path.exists():
        Config(path, kind).save()
    return EditRequest(path, [*shlex.split(editor), str(path)])


def validate_config_file(path: Path | str, kind: str) -> None:
    """Re-read an edited configuration and raise ConfigError if it is unusable."""
    from ..config import Config

    Config.load(Path(path), kind=kind)
