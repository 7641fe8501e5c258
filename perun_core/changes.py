"""Performance changes found by checks, recorded per minor version.

``log`` shows them with the ``%changes%`` tag: ``-`` for each degradation,
``+`` for each optimization.  A record is a small JSON file under
``.perun/changes/<sha[:2]>/<sha[2:]>.json`` carrying a format version; the
degradation checks write it, everything else only reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import StorageError, UnsupportedFormatVersion
from .fsutil import atomic_write

if TYPE_CHECKING:
    from .repository import PerunRepository

CHANGES_VERSION = 1
DEGRADATION = "-"
OPTIMIZATION = "+"


def changes_path(repo: PerunRepository, minor: str) -> Path:
    return repo.perun_dir / "changes" / minor[:2] / f"{minor[2:]}.json"


def any_changes(repo: PerunRepository) -> bool:
    """Whether any check ever recorded changes (saves a lookup per commit in ``log``)."""
    return (repo.perun_dir / "changes").is_dir()


def write_changes(repo: PerunRepository, minor: str, marks: Iterable[str]) -> None:
    """Record the marks ('-' or '+') of the findings of the latest check of ``minor``."""
    marks = [m for m in marks if m in (DEGRADATION, OPTIMIZATION)]
    doc = {"version": CHANGES_VERSION, "marks": "".join(marks)}
    atomic_write(changes_path(repo, minor), json.dumps(doc).encode())


def read_changes(repo: PerunRepository, minor: str) -> str:
    """The marks recorded for ``minor``, or '' when it was never checked."""
    path = changes_path(repo, minor)
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        return ""
    except (OSError, ValueError) as exc:
        raise StorageError(f"cannot read change record {path}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("marks"), str):
        raise StorageError(f"cannot read change record {path}: unexpected content")
    if doc.get("version", 1) > CHANGES_VERSION:
        raise UnsupportedFormatVersion(path, "change record", doc["version"], CHANGES_VERSION)
    return doc["marks"]
