"""The porcelain of the job matrix: read, check and save the keys of ``local.yml`` that define it.

The matrix is ``cmds`` x ``args`` x ``workloads`` run under each of
``collectors`` (then ``postprocessors``); a front end edits those keys as a
plain dict (:func:`read_matrix`), asks which jobs they expand to
(:func:`validate_matrix`) and writes them back (:func:`save_matrix`),
leaving every other key and the comments of the file as they were.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config, validate
from ._repo import using

if TYPE_CHECKING:  # pragma: no cover
    from ..runner.jobs import Job
    from ..storage.repository import PerunRepository

__all__ = ["MATRIX_KEYS", "check_local_config", "read_matrix", "save_matrix", "validate_matrix"]

#: the keys of local.yml that make the job matrix
MATRIX_KEYS = ("cmds", "args", "workloads", "collectors", "postprocessors")


def _local_config(repo: PerunRepository, *, validate: bool) -> Any:
    return Config.load(repo.local_config_path, kind="local", validate=validate)


def read_matrix(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> dict[str, Any]:
    """The matrix keys of ``.perun/local.yml`` as they are on disk (None: not set), unvalidated.

    Unvalidated so that a broken file can be repaired; raises ConfigError
    only when the file cannot be read or parsed.
    """
    with using(repo, cwd) as r:
        config = _local_config(r, validate=False)
        return {key: config.get(key) if config.has(key) else None for key in MATRIX_KEYS}


def check_local_config(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> None:
    """Read local.yml validating every known key (after an outside edit); raises ConfigError."""
    with using(repo, cwd) as r:
        _local_config(r, validate=True)


def validate_matrix(values: dict[str, Any], *, repo: PerunRepository | None = None,
                    cwd: Path | str | None = None) -> tuple[list[Job], str]:
    """The jobs the matrix ``values`` expand to, and a warning when it cannot run yet.

    Raises ConfigError (a value of the wrong type), UnknownUnit or
    InvalidParameter; a matrix without commands or collectors is no error
    here (it can be saved) but expands to no jobs and a warning.
    """
    # lazy: keeps the TUI's first frame light
    from ..runner.jobs import matrix_from_config, unit_configs

    with using(repo, cwd) as r:
        path = r.local_config_path
    for key in MATRIX_KEYS:
        if values.get(key):
            validate(key, values[key], path=path)
    unit_configs("collector", values.get("collectors") or [])
    unit_configs("postprocessor", values.get("postprocessors") or [])
    if not values.get("cmds"):
        return [], "no commands yet: the matrix runs nothing"
    if not values.get("collectors"):
        return [], "no collectors yet: the matrix runs nothing"
    return matrix_from_config(_Values(values), path), ""


def save_matrix(values: dict[str, Any], keys: tuple[str, ...] = MATRIX_KEYS, *, repo: PerunRepository | None = None,
                cwd: Path | str | None = None) -> Path:
    """Write the matrix ``keys`` into local.yml (empty ones are removed), keeping everything else; the file.

    The file is read again first, so changes made meanwhile to other keys
    survive; comments survive wherever the configuration can be edited in
    place.  An open ``repo`` forgets its cached configuration.  Raises
    ConfigError (an invalid value, an unreadable file).
    """
    with using(repo, cwd) as r:
        config = _local_config(r, validate=False)
        for key in keys:
            value = values.get(key)
            if value:
                if not config.has(key) or config.get(key) != value:
                    config.set(key, value)
            elif config.has(key):
                config.unset(key)
        config.save()
        r.reload_config()
        return config.path


class _Values:
    """The ``get_or`` of a configuration over a plain mapping (the values being edited)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def get_or(self, key: str, default: Any = None) -> Any:
        value = self.values.get(key)
        return default if value is None else value
