"""``fsck``: check every object and index of the store, clean up after killed writers, repair indexes.

What is checked:

* every file under ``.perun/objects``: an index (``pidx`` signature) is
  decoded and its checksum verified; anything else is a profile object,
  decompressed, verified against its SHA-1 and validated as a profile;
* every index entry names an object that exists and is sound;
* pending profiles in ``.perun/jobs`` are valid profiles (they are only
  reported, never touched: they are the user's files).

Temporary files of writers (``.NAME.w<pid>-<tag>.XXXX.tmp`` of the atomic
writes, see :mod:`perun_core.atomic`) in ``.perun/objects`` and
``.perun/jobs`` are removed when their writer is gone: the process named in
the file's name no longer runs, or was started after the file was last
written (its pid was reused).  A file whose writer still runs is kept,
however old.  Where the name cannot tell (files of an older perun, or made
on another machine sharing the store) the file's age decides: it is removed
once older than ``stale_after`` seconds, as a writer still running renews
its file's modification time as it writes.  A temporary file next to an
index is judged only while fsck holds that index's lock (the lock every
index writer holds): while another process holds it, the file is kept.

With ``repair``: a damaged index is rebuilt from what can still be read,
the entries of its intact part whose objects are sound, plus the sound
objects that no index refers to when exactly one index is damaged (only
then is it certain where they belong); entries of sound indexes that name a
missing or damaged object are dropped.  Every index is rewritten under its
lock, from its content read again under the lock, so a profile registered
while fsck runs is neither lost nor taken for missing.  Nothing else is ever
deleted: damaged objects stay where they are for a closer look.
"""

from __future__ import annotations

import os
import re
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import TEMPORARY_NAME, temporary_writer_alive
from ..errors import CorruptIndex, CorruptObject, LockTimeout, PerunError, ProfileError, StorageError
from ..profile.codec import load_profile_from_file
from ..storage import index as index_module
from ..storage.index import MAGIC, IndexEntry, decode_index, read_index, write_index
from ..storage.repository import PerunRepository, meta_of
from ._repo import using as _using

__all__ = ["STALE_AFTER", "FsckProblem", "FsckReport", "fsck"]

#: Age in seconds from which a temporary file whose writer cannot be identified is taken as left behind.
STALE_AFTER = 3600.0

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
    #: temporary files that may belong to a writer still running (left alone)
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
    with _using(repo, cwd) as r:
        check = _Check(r, repair, stale_after)
        check.scan_objects()
        check.check_indexes()
        check.rebuild_broken_indexes()
        _check_pending(r, check.leftovers, check.report)
        return check.report


class _Leftovers:
    """Judges writers' temporary files: removed when their writer is gone, kept while it may be writing."""

    def __init__(self, repo: PerunRepository, stale_after: float, report: FsckReport) -> None:
        self.repo = repo
        self.stale_after = stale_after
        self.report = report
        self.now = time.time()

    def judge(self, path: Path, minor: str | None = None) -> None:
        """Judge ``path``; ``minor`` names the index it may be a new version of (its writers hold that lock)."""
        if minor is None or not self.repo.index_lock_path(minor).exists():
            # no writer of that index ever took its lock, so none is writing it now
            self._judge(path)
            return
        try:
            with self.repo.index_lock(minor, timeout=0):
                self._judge(path)
        except LockTimeout:
            self.report.kept.append(str(path))  # a writer of that index is running: maybe this is its file

    def _judge(self, path: Path) -> None:
        alive = temporary_writer_alive(path)
        if alive is None:
            try:
                alive = self.now - path.stat().st_mtime < self.stale_after
            except FileNotFoundError:
                return  # its writer finished meanwhile
        if alive:
            self.report.kept.append(str(path))
            return
        try:
            path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.report.problems.append(FsckProblem("temporary", str(path), f"cannot be removed: {exc.strerror}"))
            return
        self.report.removed.append(str(path))


class _Check:
    """One fsck: what the scan found, and the repairs."""

    def __init__(self, repo: PerunRepository, repair: bool, stale_after: float) -> None:
        self.repo = repo
        self.report = FsckReport(repaired=repair)
        self.leftovers = _Leftovers(repo, stale_after, self.report)
        self.sound: set[str] = set()
        self.damaged: dict[str, str] = {}
        self.indexes: dict[str, list] = {}
        self.broken: dict[str, tuple[Path, str, bytes]] = {}

    def scan_objects(self) -> None:
        objects_dir = self.repo.objects_dir
        if not objects_dir.is_dir():
            self.report.problems.append(FsckProblem("store", str(objects_dir), "the objects directory is missing",
                                                    _recreate(objects_dir) if self.report.repaired else ""))
        for path in _files(objects_dir):
            temporary = TEMPORARY_NAME.match(path.name)
            if temporary:
                minor = path.parent.name + temporary["target"]
                self.leftovers.judge(path, minor if len(minor) == 40 and _HEX.match(minor) else None)
                continue
            sha = path.parent.name + path.name
            if len(sha) != 40 or not _HEX.match(sha):
                continue  # not ours (a README, an editor's backup): left alone
            try:
                data = path.read_bytes()
            except OSError as exc:
                self.report.problems.append(FsckProblem("object", str(path), f"cannot be read: {exc.strerror}"))
                continue
            if data[:4] == MAGIC:
                self.report.indexes += 1
                try:
                    self.indexes[sha] = decode_index(data, path)
                except StorageError as exc:
                    self.broken[sha] = (path, getattr(exc, "reason", str(exc)), data)
                continue
            self.report.objects += 1
            self._verify(sha, path)

    def _verify(self, sha: str, path: Path) -> bool:
        try:
            self.repo.objects.read_profile(sha)
        except CorruptObject as exc:
            reason = exc.reason
        except PerunError as exc:
            reason = str(exc)
        else:
            self.sound.add(sha)
            return True
        self.damaged[sha] = reason
        self.report.problems.append(FsckProblem("object", str(path), reason))
        return False

    def is_sound(self, sha: str) -> bool:
        """Whether object ``sha`` is sound; one stored after the scan (by a writer meanwhile) is verified now."""
        if sha in self.sound:
            return True
        if sha in self.damaged:
            return False
        path = self.repo.objects.path_of(sha)
        if not path.is_file():
            return False
        self.report.objects += 1
        return self._verify(sha, path)

    def check_indexes(self) -> None:
        for minor, entries in self.indexes.items():
            self.report.entries += len(entries)
            bad = [e for e in entries if not self.is_sound(e.checksum)]
            if not bad:
                continue
            index = self.repo.index_path(minor)
            done = ""
            if self.report.repaired:
                failure = self._drop_unsound(minor)
                if failure:
                    self.report.problems.append(FsckProblem("index", str(index), f"not repaired: {failure}"))
                else:
                    done = "entry dropped"
            for entry in bad:
                reason = self.damaged.get(entry.checksum, "its object is missing")
                self.report.problems.append(FsckProblem("entry", f"{index} ({entry.path})",
                                                        f"object {entry.checksum}: {reason}", done))

    def _drop_unsound(self, minor: str) -> str:
        """Rewrite ``minor``'s index without entries of unsound objects, under its lock; "" or why not."""

        path = self.repo.index_path(minor)
        try:
            with self.repo.index_lock(minor):
                current = read_index(path)  # what a writer may have added since the scan
                kept = [e for e in current if self.is_sound(e.checksum)]
                if len(kept) != len(current):
                    write_index(path, kept)
        except StorageError as exc:
            return str(exc)
        return ""

    def _referenced(self) -> set[str]:
        """Objects the sound indexes name now (read again: profiles may have been registered since the scan)."""

        referenced: set[str] = set()
        for minor, entries in self.indexes.items():
            try:
                entries = read_index(self.repo.index_path(minor))
            except StorageError:
                pass
            referenced.update(e.checksum for e in entries)
        return referenced

    def rebuild_broken_indexes(self) -> None:
        orphans = sorted(self.sound - self._referenced()) if len(self.broken) == 1 else []
        for minor, (path, reason, data) in sorted(self.broken.items()):
            done = ""
            if self.report.repaired:
                try:
                    done = self._rebuild(minor, path, data, orphans)
                except StorageError as exc:
                    reason = f"{reason}; not repaired: {exc}"
            self.report.problems.append(FsckProblem("index", str(path), reason, done))

    def _rebuild(self, minor: str, path: Path, data: bytes, orphans: list[str]) -> str:
        """Write the damaged index ``minor`` anew, under its lock: what can be salvaged, plus ``orphans``."""

        with self.repo.index_lock(minor):
            try:
                current = path.read_bytes()
            except FileNotFoundError:
                current = data
            if current != data:
                try:
                    decode_index(current, path)
                    return "another writer replaced it meanwhile with a sound one"
                except StorageError:
                    data = current
            salvaged = [e for e in _salvage(data) if self.is_sound(e.checksum)]
            have = {e.checksum for e in salvaged}
            salvaged += [_entry_of(self.repo, sha) for sha in orphans if sha not in have]
            entries = _unique(salvaged)
            write_index(path, entries)
        return f"rebuilt with {len(entries)} profile{'s' if len(entries) != 1 else ''}"


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
        elif TEMPORARY_NAME.match(entry.name):
            found.append(Path(entry.path))
    return found


def _check_pending(repo: PerunRepository, leftovers: _Leftovers, report: FsckReport) -> None:
    try:
        names = sorted(os.listdir(repo.jobs_dir))
    except FileNotFoundError:
        return
    except OSError as exc:
        report.problems.append(FsckProblem("pending", str(repo.jobs_dir), f"cannot be listed: {exc.strerror}"))
        return
    for name in names:
        path = repo.jobs_dir / name
        if TEMPORARY_NAME.match(name):
            leftovers.judge(path)
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
