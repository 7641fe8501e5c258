"""Keeping explanations with the stored check results (``.perun/changes``, format version 3).

``check --explain`` explains after the check stored its findings:
:func:`store_explanations` adds each finding's explanation record to the
stored record of its pair (a check that stored nothing, like ``check
profiles``, gets nothing stored).  A later check of the same pairs of
profiles finds the same changes: :func:`carry_explanations` keeps the
explanations the previous record holds for them, in the new record and in
the report, so ``check`` output, the TUI and pushed change records show
them without collecting anything again.  A finding matches a stored one
with the same method, uid and result, in a pair of the same two profiles.
"""

from __future__ import annotations

import json
from dataclasses import replace
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import PerunError

from ..storage.changes import read_changes, read_pairs, write_changes

from .explain_result import Explanation

if TYPE_CHECKING:  # pragma: no cover
    from ..storage.repository import PerunRepository
    from .report import CheckReport, PairReport, VersionReport

__all__ = ["carry_explanations", "kept_profiles", "store_explanations"]


def _pair_key(record: dict[str, Any]) -> tuple:
    sides = []
    for side in ("baseline", "target"):
        ref = record.get(side) or {}
        sides.append((ref.get("checksum") or ref.get("source"), ref.get("minor")) if isinstance(ref, dict) else None)
    return tuple(sides)


def _finding_key(record: dict[str, Any]) -> tuple:
    return record.get("method"), record.get("uid"), record.get("result")


def _explained(pairs: list[Any]) -> dict[tuple, dict[tuple, dict[str, Any]]]:
    """pair key -> finding key -> explanation record, of stored pair records."""
    found: dict[tuple, dict[tuple, dict[str, Any]]] = {}
    for pair in pairs:
        if not isinstance(pair, dict):
            continue
        for finding in pair.get("findings") or ():
            if isinstance(finding, dict) and isinstance(finding.get("explanation"), dict):
                found.setdefault(_pair_key(pair), {})[_finding_key(finding)] = finding["explanation"]
    return found


def store_explanations(repo: PerunRepository | None, report: CheckReport) -> int:
    """Add the report's explanations to the stored records of its versions; how many findings got one."""

    if repo is None:
        return 0
    stored_count = 0
    for version in report.versions:
        if version.minor is None:
            continue
        fresh = _explained([pair.to_record() for pair in version.pairs])
        if not fresh:
            continue
        records = read_pairs(repo, version.minor)
        if records is None:
            continue
        changed = False
        for record in records:
            wanted = fresh.get(_pair_key(record)) if isinstance(record, dict) else None
            for finding in (record.get("findings") or ()) if wanted else ():
                explanation = wanted.get(_finding_key(finding)) if isinstance(finding, dict) else None  # type: ignore[union-attr]
                if explanation is not None:
                    finding["explanation"] = explanation
                    changed = True
                    stored_count += 1
        if changed:
            write_changes(repo, version.minor, read_changes(repo, version.minor), records)
    return stored_count


def carry_explanations(repo: PerunRepository, version: VersionReport) -> VersionReport:
    """``version`` with the explanations its minor's stored record holds for the same findings."""

    if version.minor is None:
        return version
    try:
        previous = _explained(read_pairs(repo, version.minor) or [])
    except PerunError:
        return version
    if not previous:
        return version
    pairs: list[PairReport] = []
    for pair in version.pairs:
        kept = previous.get(_pair_key({"baseline": pair.baseline.to_record(), "target": pair.target.to_record()}))
        if not kept:
            pairs.append(pair)
            continue
        made: dict[str, Any] = {}
        findings = []
        for finding in pair.findings:
            record = kept.get((finding.method, finding.location, finding.result.value))
            if record is not None and "explanation" not in finding.details:
                try:
                    key = json.dumps(record, sort_keys=True)
                    # what that earlier run reused or wrote is history now; the profiles it compared are kept
                    explanation = made[key] if key in made else made.setdefault(
                        key, replace(Explanation.from_record(record), written=(), reused=()))
                except (KeyError, TypeError, ValueError):
                    explanation = None
                if explanation is not None:
                    finding = replace(finding, details={**finding.details, "explanation": explanation})
            findings.append(finding)
        pairs.append(replace(pair, findings=tuple(findings)))
    return replace(version, pairs=tuple(pairs))


def kept_profiles(repo: PerunRepository, minors: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """Per commit, the (name, checksum) of call-level profiles kept with the explanations stored at ``minors``.

    An explanation names the objects it compared in ``sources`` (baseline,
    target); each side belongs to the commit of that side of its pair.  A
    later explanation of the same commits reuses them instead of collecting.
    """
    found: dict[str, list[tuple[str, str]]] = {}
    for minor in dict.fromkeys(minors):
        try:
            pairs = read_pairs(repo, minor) or []
        except PerunError:
            continue
        for pair in pairs:
            if not isinstance(pair, dict):
                continue
            sides = [ref.get("minor") if isinstance(ref, dict) else None
                     for ref in (pair.get("baseline"), pair.get("target"))]
            for finding in pair.get("findings") or ():
                record = finding.get("explanation") if isinstance(finding, dict) else None
                if not isinstance(record, dict):
                    continue
                sources, names = record.get("sources") or [], record.get("profiles") or []
                for side, source in enumerate(sources[:2] if isinstance(sources, list) else ()):
                    if isinstance(source, str) and source.startswith("object:") and isinstance(sides[side], str):
                        name = str(names[side]) if isinstance(names, list) and side < len(names) else source
                        if (name, source[7:]) not in found.get(sides[side], ()):
                            found.setdefault(sides[side], []).append((name, source[7:]))
    return found
