"""Build a demo beside its target and rename it into place; reuse a finished one by its marker."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import UsageError

__all__ = ["build_in_place", "marker_of"]

MARKER = "demo.json"


def build_in_place(path: Path | str, marker: dict[str, Any], build: Callable[[Path], None]) -> Path:
    """Build a demo at ``path`` with ``build(staging)``, or return the one built there before.

    ``marker`` identifies what ``build`` makes; it is stored in
    ``.perun/demo.json`` and a directory holding the same marker is reused
    as it is.  ``build`` fills a sibling directory that is renamed to
    ``path`` only when it succeeded, so an interrupted or failed build never
    leaves a half-made demo behind.  Raises :class:`UsageError` when
    ``path`` is a file or a non-empty directory without that marker.
    """
    path = Path(path).expanduser().absolute()
    if path.exists():
        if marker_of(path) == marker:
            return path
        if not path.is_dir() or any(path.iterdir()):
            raise UsageError(f"{path} exists and is not a demo repository built with these settings",
                             hint="remove it or choose another directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.parent / f".{path.name}.building-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        build(staging)
        (staging / ".perun" / MARKER).write_text(json.dumps(marker) + "\n")
        if path.exists():
            path.rmdir()
        try:
            staging.rename(path)
        except OSError:
            if marker_of(path) != marker:
                raise
            # another process built the same demo first: use that one
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return path


def marker_of(path: Path) -> dict[str, Any] | None:
    """The marker stored in the demo at ``path``, or None."""
    try:
        data = json.loads((path / ".perun" / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
