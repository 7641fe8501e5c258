"""``fsck``: check every object and index of the store, clean up after killed writers, repair indexes.

What is checked:

* every file under ``.perun/objects``: an index (``pidx`` signature) is
  decoded and its checksum verified; anything else is a profile object,
  decompressed, verified against its SHA-1 and validated as a profile;
* every index entry names an object that exists and is sound;
* pending profiles in ``.perun/jobs`` are valid profiles (they are only
  reported, never touched: they are the user's files).

Temporary files of writers (``.NAME.XXXX.tmp`` of the atomic writes) in
``.perun/objects`` and ``.perun/jobs`` that are older than ``stale_after``
seconds are removed: a writer still running renews its file's modification
time as it writes, and writes of an object or an index take seconds, not an
hour.

With ``repair``: a damaged index is rebuilt from what can still be read,
the entries of its intact part whose objects are sound, plus the sound
objects that no index refers to when exactly one index is damaged (only
then is it certain where they belong); entries of sound indexes that name a
missing or damaged object are dropped.  Nothing else is ever deleted:
damaged objects stay where they are for a closer look.
"""

from __future__ import annotations

import os
import re
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CorruptIndex, CorruptObject, PerunError, StorageError
from ..storage.repository import PerunRepository
from ._repo import using as _using

__all__ = ["STALE_AFTER", "FsckProblem", "FsckReport", "fsck"]

#: Age in seconds from which a writer's temporary file is taken as left behind by a killed process.
STALE_AFTER = 3600.0

_TEMPORARY = re.compile(r"^\..+\.[A-Za-z0-9_]+\.tmp$")
_HEX = re.compile(r"^[0-9a-f]+$")


@dataclass(frozen=True, slots=True)
class FsckProblem:
    """One damage found: ``kind`` is object, index, entry or pending; ``path`` the file; ``reason`` what is wrong."""

    kind: str
    path: str
    reason: str
    #: what --repair did about it ("" when nothing, or when not repairing)
    repaired: str = ""

    def __str__(self) -> str:
        done = f" ({self.repaired})" if self.repaired else ""
        return f"{self.kind} {self.path}: {self.reason}{done}"


@dataclass(slots=True)
class FsckReport:
    objects: int = 0
    indexes: int = 0
    entries: int = 0
    pending: int = 0
    problems: list[FsckProblem] = field(default_factory=list)
    #: temporary files of killed writers that were removed
    removed: list[str] = field(default_factory=list)
    #: temporary files young enough to belong to a writer still running (left alone)
    kept: list[str] = field(default_factory=list)
    repaired: bool = False

    @property
    def ok(self) -> bool:
        """True when no damage remains (after a repair: none that the repair left)."""
        return all(p.repaired for p in self.problems) if self.repaired else not self.problems


def fsck(
    *,
    repair: bool = False,
    stale_after: float = STALE_AFTER,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> FsckReport:
    """Check the store; see the module docstring.  Raises only when the store cannot be listed at all."""
    from ..storage.index import MAGIC, decode_index, write_index

    with _using(repo, cwd) as r:
        report = FsckReport(repaired=repair)
        now = time.time()
        objects_dir = r.objects_dir
        if not objects_dir.is_dir():
            report.problems.append(FsckProblem("store", str(objects_dir), "the objects directory is missing",
                                               _recreate(objects_dir) if repair else ""))
        sound: set[str] = set()
        damaged_objects: dict[str, str] = {}
        indexes: dict[str, list] = {}
        broken_indexes: dict[str, tuple[Path, str, bytes]] = {}
        for path in _files(objects_dir):
            name = path.name
            if _TEMPORARY.match(name):
                _stale(path, now, stale_after, report)
                continue
            sha = path.parent.name + name
            if len(sha) != 40 or not _HEX.match(sha):
                continue  # not ours (a README, an editor's backup): left alone
            try:
                data = path.read_bytes()
            except OSError as exc:
                report.problems.append(FsckProblem("object", str(path), f"cannot be read: {exc.strerror}"))
                continue
            if data[:4] == MAGIC:
                report.indexes += 1
                try:
                    indexes[sha] = decode_index(data, path)
                except StorageError as exc:
                    broken_indexes[sha] = (path, getattr(exc, "reason", str(exc)), data)
                continue
            report.objects += 1
            try:
                r.objects.read_profile(sha)
            except CorruptObject as exc:
                damaged_objects[sha] = exc.reason
                report.problems.append(FsckProblem("object", str(path), exc.reason))
                continue
            except PerunError as exc:
                damaged_objects[sha] = str(exc)
                report.problems.append(FsckProblem("object", str(path), str(exc)))
                continue
            sound.add(sha)
        referenced: set[str] = set()
        for minor, entries in indexes.items():
            report.entries += len(entries)
            kept = []
            for entry in entries:
                referenced.add(entry.checksum)
                if entry.checksum in sound:
                    kept.append(entry)
                    continue
                reason = damaged_objects.get(entry.checksum, "its object is missing")
                report.problems.append(FsckProblem(
                    "entry", f"{r.index_path(minor)} ({entry.path})", f"object {entry.checksum}: {reason}",
                    "entry dropped" if repair else ""))
            if repair and len(kept) != len(entries):
                write_index(r.index_path(minor), kept)
        orphans = sorted(sound - referenced)
        for minor, (path, reason, data) in sorted(broken_indexes.items()):
            salvaged = [e for e in _salvage(data) if e.checksum in sound]
            if len(broken_indexes) == 1:
                have = {e.checksum for e in salvaged}
                salvaged += [_entry_of(r, sha) for sha in orphans if sha not in have]
            done = ""
            if repair:
                write_index(path, _unique(salvaged))
                done = f"rebuilt with {len(_unique(salvaged))} profile{'s' if len(_unique(salvaged)) != 1 else ''}"
            report.problems.append(FsckProblem("index", str(path), reason, done))
        _check_pending(r, now, stale_after, report)
        return report


def _recreate(directory: Path) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    return "recreated empty; profiles registered before are lost unless restored from a backup"


def _files(directory: Path) -> list[Path]:
    found: list[Path] = []
    try:
        fanout = sorted(os.scandir(directory), key=lambda e: e.name)
    except FileNotFoundError:
        return found
    for entry in fanout:
        if entry.is_dir(follow_symlinks=False):
            found.extend(sorted((Path(entry.path) / name for name in os.listdir(entry.path)), key=str))
        elif _TEMPORARY.match(entry.name):
            found.append(Path(entry.path))
    return found


def _stale(path: Path, now: float, stale_after: float, report: FsckReport) -> None:
    try:
        age = now - path.stat().st_mtime
    except FileNotFoundError:
        return  # its writer finished meanwhile
    if age < stale_after:
        report.kept.append(str(path))
        return
    try:
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        report.problems.append(FsckProblem("temporary", str(path), f"cannot be removed: {exc.strerror}"))
        return
    report.removed.append(str(path))


def _check_pending(repo: PerunRepository, now: float, stale_after: float, report: FsckReport) -> None:
    from ..errors import ProfileError
    from ..profile.codec import load_profile_from_file

    try:
        names = sorted(os.listdir(repo.jobs_dir))
    except FileNotFoundError:
        return
    except OSError as exc:
        report.problems.append(FsckProblem("pending", str(repo.jobs_dir), f"cannot be listed: {exc.strerror}"))
        return
    for name in names:
        path = repo.jobs_dir / name
        if _TEMPORARY.match(name):
            _stale(path, now, stale_after, report)
            continue
        if name.startswith(".") or not path.is_file():
            continue
        report.pending += 1
        try:
            load_profile_from_file(path)
        except ProfileError as exc:
            report.problems.append(FsckProblem("pending", str(path), getattr(exc, "reason", str(exc)),
                                               "left alone: remove it with 'perun-core rm'" if report.repaired else ""))


def _salvage(data: bytes) -> list:
    """The entries that can still be parsed from the front of a damaged index (its checksum ignored)."""
    from ..storage import index as index_module

    entries = []
    try:
        magic, version, count = struct.unpack_from(">4sII", data)
    except struct.error:
        return entries
    if magic != index_module.MAGIC or version not in (1, 2):
        return entries
    body = data[:-20] if len(data) > 20 else data
    reader = index_module._Reader(body, 12, "<salvage>")
    read = index_module._read_v1 if version == 1 else index_module._read_v2
    for _ in range(min(count, 1 << 20)):
        try:
            entries.append(read(reader))
        except (CorruptIndex, struct.error, ValueError, UnicodeDecodeError, IndexError):
            break
    return entries


def _entry_of(repo: PerunRepository, sha: str):
    from ..storage.index import IndexEntry
    from ..storage.repository import meta_of

    profile = repo.objects.read_profile(sha)
    meta = meta_of(profile)
    stamp = repo.objects.path_of(sha).stat().st_mtime
    return IndexEntry(stamp, sha, f"recovered-{sha[:12]}.perf", meta["type"], meta["cmd"], meta["args"],
                      meta["workload"], meta["collector"], tuple(meta["postprocessors"]))


def _unique(entries: list) -> list:
    seen: set[str] = set()
    out = []
    for entry in entries:
        if entry.checksum not in seen:
            seen.add(entry.checksum)
            out.append(entry)
    return out
