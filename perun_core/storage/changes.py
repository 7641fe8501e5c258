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

In a ``.perun`` the original Perun uses too, a commit never checked here shows
what the original's own check recorded: its ``objects/<sha[:2]>/<sha[2:]>.changes``
text (a line per finding: location, ``PerformanceChange.<result>``, type, from,
to, rate, confidence type and rate, relative rate, the baseline's commit and
the command), read by :func:`original_record` as a version-3 record.

Readers accept all three and refuse newer versions (older records are
brought forward by the steps ``update_to_2`` and ``update_to_3`` of
:data:`CHANGES`, the mechanism of :mod:`perun_core.versions`);
writers write version 3.
"""

from __future__ import annotations

import json
import re
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
    """Whether any check ever recorded changes (saves a lookup per commit in ``log``); in a repository
    shared with the original Perun, its records may be there."""
    return (repo.perun_dir / "changes").is_dir() or repo.shared_with_original


#: A line of the original Perun's ``.changes`` file (its location may hold spaces, its command too).
_ORIGINAL_LINE = re.compile(r"(?P<uid>.+) PerformanceChange\.(?P<result>[A-Za-z]+) (?P<type>\S+) (?P<before>\S+) "
                            r"(?P<after>\S+) (?P<rate>\S+) (?P<ctype>\S+) (?P<crate>\S+) (?P<rel>\S+) "
                            r"(?P<minor>[0-9a-f]{40}) (?P<cmd>.*)")
_AMOUNT = re.compile(r"(-?[0-9.]+(?:e[-+]?[0-9]+)?)([A-Za-z]*)")


def _original_value(text: str) -> tuple[Any, str]:
    """``0.07s`` as (0.07, 's'); anything else (a model kind such as ``linear``) as it is."""
    matched = _AMOUNT.fullmatch(text)
    if matched is None:
        return text, ""
    try:
        return float(matched.group(1)), matched.group(2)
    except ValueError:
        return text, ""


def original_record(text: str) -> dict[str, Any]:
    """The original Perun's ``.changes`` text as a change record: marks as its ``log`` counts them (its
    optimizations, then its degradations) and a pair per baseline commit and command."""
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    counts = {"Optimization": 0, "Degradation": 0}
    for line in text.splitlines():
        matched = _ORIGINAL_LINE.fullmatch(line.strip())
        if matched is None:
            continue  # the original skips a line it cannot parse too
        result = matched.group("result")
        if result in counts:
            counts[result] += 1
        before, unit = _original_value(matched.group("before"))
        after, _unit = _original_value(matched.group("after"))
        try:
            confidence = float(matched.group("crate"))
        except ValueError:
            confidence = 0.0
        finding = {"method": "original Perun", "uid": matched.group("uid"), "result": result, "type": matched.group("type"),
                   "from": before, "to": after, "delta_abs": None, "delta_rel": None,
                   "confidence_type": matched.group("ctype"), "confidence_rate": confidence, "unit": unit,
                   "reason": f"recorded by the original Perun (rate {matched.group('rate')})"}
        key = (matched.group("minor"), matched.group("cmd"))
        pair = pairs.setdefault(key, {"baseline": {"source": "", "kind": "index", "minor": key[0]},
                                      "target": {"source": key[1], "kind": "index", "config": f"cmd: '$ {key[1]}'"},
                                      "methods": [], "findings": []})
        pair["findings"].append(finding)
    marks = OPTIMIZATION * counts["Optimization"] + DEGRADATION * counts["Degradation"]
    return {"version": CHANGES_VERSION, "marks": marks, "checked": None, "pairs": list(pairs.values())}


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
        return _read_original(repo, minor)
    except OSError as exc:
        raise StorageError(f"cannot read change record {path}: {exc}") from None
    return parse_record(data, path)


def _read_original(repo: PerunRepository, minor: str) -> dict[str, Any] | None:
    """What the original Perun's check recorded for ``minor`` (None where it recorded nothing)."""
    if not repo.shared_with_original or len(minor) < 3:
        return None
    path = repo.perun_dir / "objects" / minor[:2] / f"{minor[2:]}.changes"
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise StorageError(f"cannot read the original Perun's change record {path}: {exc}") from None
    return original_record(text) if text.strip() else None


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
