"""``fsck``: check every object and index of the store, clean up after killed writers, repair what is damaged.

What is checked:

* every file under ``.perun/objects``: an index (``pidx`` signature) is
  decoded and its checksum verified; anything else is a profile object,
  decompressed, verified against its SHA-1 and validated as a profile.  An
  index names its commit: a damaged file (or a folder) whose name is a
  commit of the repository is a damaged index (emptied, overwritten), not a
  damaged object;
* every index entry names an object that exists and is sound;
* every sound object is named by an index or a change record; one that is
  not is reported (it is not damage: ``rm`` leaves objects behind);
* pending profiles in ``.perun/jobs`` are valid profiles, and are not
  registered already (a killed ``add`` registers before it removes the
  pending file); they are only reported, and removed by ``--repair`` only
  when the same content is registered.

Temporary files of killed writers anywhere in ``.perun`` (the private git
store aside) are removed, those of writers still running kept; see
:mod:`perun_core.storage.cleanup`.  A temporary file next to an index is
judged only while fsck holds that index's lock (the lock every index writer
holds): while another process holds it, the file is kept.

With ``repair``: a damaged object is moved to ``.perun/quarantine/objects``
and the entries naming it dropped, so the rest of its commit stays usable;
a damaged index is moved to ``.perun/quarantine/indexes`` and rebuilt from
what can still be read: the entries of its intact part whose objects are
sound, the sound objects no index names whose profile carries that commit
as its origin, and, when exactly one index is damaged, every other sound
object no index names (only then is it certain where they belong).  Objects
no index or change record names go once older than ``stale_after`` (a
profile being registered right now is younger); in a store where an index
was damaged they are moved to ``.perun/quarantine/unplaced`` instead, as
that index may have named them.
Every index is rewritten under its lock, from its content read again under
the lock, so a profile registered while fsck runs is neither lost nor taken
for missing.  A repair that did all it had to leaves a report that is ``ok``.
"""

from __future__ import annotations

import contextlib
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import TEMPORARY_NAME
from ..errors import CorruptIndex, CorruptObject, PerunError, ProfileError, StorageError
from ..profile.codec import load_profile_from_file
from ..storage import index as index_module
from ..storage.cleanup import Leftovers, leftover_candidates, names_in_records, quarantine
from ..storage.index import MAGIC, IndexEntry, decode_index, read_index
from ..storage.objects import object_checksums
from ..storage.repository import PerunRepository, meta_of
from ._repo import using as _using

__all__ = ["STALE_AFTER", "FsckProblem", "FsckReport", "fsck"]

#: Age in seconds from which a temporary file whose writer cannot be identified is taken as left behind.
STALE_AFTER = 3600.0

_HEX = re.compile(r"^[0-9a-f]+$")


@dataclass(frozen=True, slots=True)
class FsckProblem:
    """One finding: ``kind`` is object, index, entry, pending, unreferenced, temporary or store; ``path`` the file.

    ``damage`` is False for findings that leave the store sound (an object
    nothing names, a pending profile registered already): they are reported
    and cleaned by ``--repair`` but never make fsck fail.
    """

    kind: str
    path: str
    reason: str
    #: what --repair did about it ("" when nothing, or when not repairing)
    repaired: str = ""
    damage: bool = True

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
    def damage(self) -> list[FsckProblem]:
        """The findings that are damage (see :class:`FsckProblem`)."""
        return [p for p in self.problems if p.damage]

    @property
    def ok(self) -> bool:
        """True when no damage remains (after a repair: none that the repair left)."""
        return all(p.repaired for p in self.damage) if self.repaired else not self.damage


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
        check.quarantine_damaged()
        registered = check.registered()
        check.unreferenced(set(registered))
        _check_pending(r, check, registered)
        for path in leftover_candidates(r.perun_dir):
            check.leftovers.judge(path)
        check.report.removed = check.leftovers.removed
        check.report.kept = check.leftovers.kept
        check.report.problems += [FsckProblem("temporary", path, why) for path, why in check.leftovers.failed]
        return check.report


class _Check:
    """One fsck: what the scan found, and the repairs."""

    def __init__(self, repo: PerunRepository, repair: bool, stale_after: float) -> None:
        self.repo = repo
        self.report = FsckReport(repaired=repair)
        self.leftovers = Leftovers(repo, stale_after)
        self.sound: set[str] = set()
        self.origins: dict[str, str] = {}
        self.damaged: dict[str, str] = {}
        self.damaged_problems: dict[str, int] = {}
        self.indexes: dict[str, list] = {}
        #: damaged indexes: minor -> (path, reason, bytes, or None for a folder in its place)
        self.broken: dict[str, tuple[Path, str, bytes | None]] = {}
        #: objects no sound index names that a damaged index's rebuild takes (or would take)
        self.absorbed: set[str] = set()
        self._commits: dict[str, bool] = {}

    def is_commit(self, sha: str) -> bool:
        """Whether ``sha`` names a commit of the repository: the name an index has."""
        if sha not in self._commits:
            try:
                self.repo.vcs.check_minor_version_validity(sha)
                self._commits[sha] = True
            except PerunError:
                self._commits[sha] = False  # no commit, or no readable repository: taken for an object
        return self._commits[sha]

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
            self._scan(sha, path)

    def _scan(self, sha: str, path: Path) -> None:
        if path.is_dir() and not path.is_symlink():
            if self.is_commit(sha):
                self.report.indexes += 1
                self.broken[sha] = (path, "is a folder, not an index file", None)
            else:
                self._damaged(sha, path, "is a folder, not an object file")
            return
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.report.problems.append(FsckProblem("object", str(path), f"cannot be read: {exc.strerror}"))
            return
        if data[:4] == MAGIC:
            self.report.indexes += 1
            try:
                self.indexes[sha] = decode_index(data, path)
            except StorageError as exc:
                self.broken[sha] = (path, getattr(exc, "reason", str(exc)), data)
            return
        if self._verify(sha, path, report=False):
            self.report.objects += 1
        elif self.is_commit(sha):  # an index emptied or overwritten: its name is its commit's
            self.report.indexes += 1
            try:
                decode_index(data, path)
                reason = "unreadable"
            except StorageError as exc:
                reason = getattr(exc, "reason", str(exc))
            self.damaged.pop(sha, None)
            self.broken[sha] = (path, f"not an index: {reason}", data)
        else:
            self.report.objects += 1
            self._damaged(sha, path, self.damaged[sha])

    def _damaged(self, sha: str, path: Path, reason: str) -> None:
        self.damaged[sha] = reason
        self.damaged_problems[sha] = len(self.report.problems)
        self.report.problems.append(FsckProblem("object", str(path), reason))

    def _verify(self, sha: str, path: Path, *, report: bool = True) -> bool:
        try:
            profile = self.repo.objects.read_profile(sha)
        except CorruptObject as exc:
            reason = exc.reason
        except PerunError as exc:
            reason = str(exc)
        else:
            self.sound.add(sha)
            if isinstance(profile.origin, str):
                self.origins[sha] = profile.origin
            return True
        self.damaged[sha] = reason
        if report:
            self._damaged(sha, path, reason)
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
                    self.repo.rewrite_index(minor, self.repo.with_metadata(kept))
        except StorageError as exc:
            return str(exc)
        return ""

    def quarantine_damaged(self) -> None:
        """With repair, move each damaged object out of the way (its entries were dropped already)."""
        if not self.report.repaired:
            return
        for sha, number in sorted(self.damaged_problems.items()):
            problem = self.report.problems[number]
            try:
                moved = quarantine(self.repo, self.repo.objects.path_of(sha), "objects")
            except FileNotFoundError:
                done = "gone meanwhile"
            except OSError as exc:
                self.report.problems[number] = FsckProblem(problem.kind, problem.path,
                                                           f"{problem.reason}; not moved away: {exc.strerror}")
                continue
            else:
                done = f"moved to {moved.relative_to(self.repo.perun_dir.parent)}"
            self.report.problems[number] = FsckProblem(problem.kind, problem.path, problem.reason, done)

    def _referenced(self) -> set[str]:
        """Objects the sound indexes name now (read again: profiles may have been registered since the scan)."""

        referenced: set[str] = set()
        for minor, entries in self.indexes.items():
            with contextlib.suppress(StorageError):
                entries = read_index(self.repo.index_path(minor))
            referenced.update(e.checksum for e in entries)
        return referenced

    def rebuild_broken_indexes(self) -> None:
        orphans = sorted(self.sound - self._referenced()
                         - {e.checksum for _, _, data in self.broken.values() for e in _salvage(data or b"")})
        by_origin = {minor: [sha for sha in orphans if self.origins.get(sha) == minor] for minor in self.broken}
        if len(self.broken) == 1:
            [minor] = self.broken
            by_origin[minor] = orphans
        self.absorbed = {sha for shas in by_origin.values() for sha in shas}
        for minor, (path, reason, data) in sorted(self.broken.items()):
            done = ""
            if self.report.repaired:
                try:
                    done = self._rebuild(minor, path, data, by_origin[minor])
                except (StorageError, OSError) as exc:
                    reason = f"{reason}; not repaired: {exc}"
            self.report.problems.append(FsckProblem("index", str(path), reason, done))

    def _rebuild(self, minor: str, path: Path, data: bytes | None, orphans: list[str]) -> str:
        """Write the damaged index ``minor`` anew, under its lock: what can be salvaged, plus ``orphans``."""

        with self.repo.index_lock(minor):
            if data is not None:
                try:
                    current = path.read_bytes()
                except (FileNotFoundError, IsADirectoryError):
                    current = data
                if current != data:
                    try:
                        decode_index(current, path)
                        return "another writer replaced it meanwhile with a sound one"
                    except StorageError:
                        data = current
            salvaged = self.repo.with_metadata([e for e in _salvage(data or b"") if self.is_sound(e.checksum)])
            have = {e.checksum for e in salvaged}
            salvaged += [_entry_of(self.repo, sha) for sha in orphans if sha not in have]
            entries = _unique(salvaged)
            moved = quarantine(self.repo, path, "indexes") if path.exists() or path.is_symlink() else None
            if entries:
                self.repo.rewrite_index(minor, entries)
        kept = f"the damaged one moved to {moved.relative_to(self.repo.perun_dir.parent)}" if moved else ""
        if not entries:
            return f"no profile of it could be recovered; {kept or 'nothing left to move'}"
        return f"rebuilt with {len(entries)} profile{'s' if len(entries) != 1 else ''}" + (f", {kept}" if kept else "")

    def registered(self) -> dict[str, tuple[str, str]]:
        """Every object an index names now, with (commit, name) of one entry naming it."""
        named: dict[str, tuple[str, str]] = {}
        for minor in (*self.indexes, *self.broken):
            with contextlib.suppress(StorageError):
                for entry in read_index(self.repo.index_path(minor)):
                    named.setdefault(entry.checksum, (minor, entry.path))
        return named

    def unreferenced(self, registered: set[str]) -> None:
        """Report sound objects nothing names; with repair remove those old enough (see the module docstring)."""
        named = registered | names_in_records(self.repo) | self.absorbed
        for sha in sorted(self.sound - named):
            path = self.repo.objects.path_of(sha)
            done = ""
            if self.report.repaired:
                done = self._remove_unreferenced(path)
            self.report.problems.append(FsckProblem("unreferenced", str(path), "no index or change record names "
                                                    "this object", done, damage=False))

    def _remove_unreferenced(self, path: Path) -> str:
        old = self.leftovers.old_enough(path)
        if old is None:
            return "gone meanwhile"
        if not old:
            return "kept: younger than --stale-after, it may be being registered"
        try:
            if self.broken:  # a damaged index may have named it, and nothing tells which: kept aside, not lost
                moved = quarantine(self.repo, path, "unplaced")
                return f"moved to {moved.relative_to(self.repo.perun_dir.parent)}: a damaged index may have named it"
            path.unlink()
        except FileNotFoundError:
            return "gone meanwhile"
        except OSError as exc:
            return f"kept: cannot be removed: {exc.strerror}"
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty
        return "removed"


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


def _check_pending(repo: PerunRepository, check: _Check, registered: dict[str, tuple[str, str]]) -> None:
    report = check.report
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
            check.leftovers.judge(path)
            continue
        if name.startswith(".") or not path.is_file():
            continue
        report.pending += 1
        try:
            profile = load_profile_from_file(path)
        except ProfileError as exc:
            # the user's file, never moved or removed by a repair: damage that remains until they remove it
            left = "; left alone: remove it with 'perun-core rm'" if report.repaired else ""
            report.problems.append(FsckProblem("pending", str(path), getattr(exc, "reason", str(exc)) + left))
            continue
        where = next((registered[sha] for sha in object_checksums(profile) if sha in registered), None)
        if where is None:
            continue
        done = ""
        if report.repaired:
            try:
                path.unlink()
                done = "pending copy removed"
            except FileNotFoundError:
                done = "gone meanwhile"
            except OSError as exc:
                done = f"kept: cannot be removed: {exc.strerror}"
        report.problems.append(FsckProblem("pending", str(path), f"is registered already at {where[0][:7]} as "
                                           f"{where[1]} (an add that did not finish, or --keep-profile)", done,
                                           damage=False))


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
