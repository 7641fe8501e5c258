"""Performance changes found by checks, recorded per minor version.

``log`` shows them with the ``%changes%`` tag: ``-`` for each degradation,
``+`` for each optimization; ``status`` lists the findings of HEAD.  A
record is a small JSON file under ``.perun/changes/<sha[:2]>/<sha[2:]>.json``
carrying a format version; the degradation checks write it, everything else
only reads it.

Version 1 holds only the marks: ``{"version": 1, "marks": "-+"}``.
Version 2 adds every checked pair of profiles with its findings::

    {"version": 2, "marks": "-", "checked": 1700000000.0,
     "pairs": [{"baseline": {"source", "minor", "checksum", "config"},
                "target": {...}, "methods": ["size_aware_rank_test"],
                "findings": [{"method", "uid", "result", "type", "from", "to", "delta_abs",
                              "delta_rel", "confidence_type", "confidence_rate", "reason"}]}]}

Version 3 lets a finding carry the explanation ``check --explain`` found
for it (see :mod:`perun_core.check.explain_store`)::

    {"method": ..., "uid": ..., "result": "Degradation", ...,
     "explanation": {"collector": "callgrind", "unit": "Ir", "baseline_total", "target_total",
                     "message": null, "functions": [{"function", "file", "line", "baseline",
                     "target", "change", "relative", "share", "status", "p_value"}],
                     "written": [...], "reused": [...], "profiles": [baseline, target], "rounds": 1}}

Readers accept all three and refuse newer versions (older records are
brought forward by the steps ``update_to_2`` and ``update_to_3`` of
:data:`CHANGES`, the mechanism of :mod:`perun_core.versions`);
writers write version 3.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StorageError, UnsupportedFormatVersion
from ..atomic import atomic_write
from ..versions import Versioned

if TYPE_CHECKING:
    from .repository import PerunRepository

CHANGES_VERSION = 3
CHANGES = Versioned("change record", newest=CHANGES_VERSION)


@CHANGES.step(2)
def update_to_2(doc: dict[str, Any]) -> dict[str, Any]:
    """Version 2 lists the checked pairs; a version-1 record has none (and no time of checking)."""
    doc["version"] = 2
    doc.setdefault("pairs", [])
    doc.setdefault("checked", None)
    return doc


@CHANGES.step(3)
def update_to_3(doc: dict[str, Any]) -> dict[str, Any]:
    """Version 3 may keep an explanation with a finding; the findings of older records have none."""
    doc["version"] = 3
    return doc

DEGRADATION = "-"
OPTIMIZATION = "+"


def changes_path(repo: PerunRepository, minor: str) -> Path:
    return repo.perun_dir / "changes" / minor[:2] / f"{minor[2:]}.json"


def any_changes(repo: PerunRepository) -> bool:
    """Whether any check ever recorded changes (saves a lookup per commit in ``log``)."""
    return (repo.perun_dir / "changes").is_dir()


def write_changes(repo: PerunRepository, minor: str, marks: Iterable[str],
                  pairs: list[dict[str, Any]] | None = None) -> None:
    """Record the latest check of ``minor``: its marks ('-' or '+') and, optionally, its pairs of findings."""
    marks = [m for m in marks if m in (DEGRADATION, OPTIMIZATION)]
    doc: dict[str, Any] = {"version": CHANGES_VERSION, "marks": "".join(marks), "checked": time.time(),
                           "pairs": list(pairs or [])}
    atomic_write(changes_path(repo, minor), json.dumps(doc, allow_nan=False).encode())


def _read(repo: PerunRepository, minor: str) -> dict[str, Any] | None:
    path = changes_path(repo, minor)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot read change record {path}: {exc}") from None
    return parse_record(data, path)


def parse_record(data: bytes, path: Path | str) -> dict[str, Any]:
    """A change record's document, brought to the newest version; StorageError (or a newer version) if it is not one."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise StorageError(f"cannot read change record {path}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("marks"), str):
        raise StorageError(f"cannot read change record {path}: unexpected content")
    version = doc.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise StorageError(f"cannot read change record {path}: invalid version {version!r}")
    if version > CHANGES_VERSION:
        raise UnsupportedFormatVersion(path, "change record", version, CHANGES_VERSION)
    if version >= 2 and not isinstance(doc.get("pairs", []), list):
        raise StorageError(f"cannot read change record {path}: 'pairs' is not a list")
    return CHANGES.upgrade(doc, version, path=path,
                           invalid=lambda reason: StorageError(f"cannot read change record {path}: {reason}"))


def read_changes(repo: PerunRepository, minor: str) -> str:
    """The marks recorded for ``minor``, or '' when it was never checked."""
    doc = _read(repo, minor)
    return doc["marks"] if doc is not None else ""


def read_pairs(repo: PerunRepository, minor: str) -> list[dict[str, Any]] | None:
    """The checked pairs recorded for ``minor`` (see the module docstring).

    None when it was never checked; a version-1 record (marks only) gives [].
    """
    doc = _read(repo, minor)
    if doc is None:
        return None
    return list(doc["pairs"])
