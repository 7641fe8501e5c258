"""What a fetch or pull takes from a remote: examined whole before anything is stored, then stored all or nothing.

:func:`examine` reads the remote's tree (:func:`~.layout.read_flat` has
refused links, submodules and misplaced entries already) and checks every
part this side would take: each profile object it lacks decompresses,
hashes to its name and holds a valid profile (the same check as every
object read from ``.perun/objects``, :func:`~perun_core.storage.objects.profile_of_object`);
each index decodes, names only objects the remote holds or this side has,
and gives its profiles plain names; each change record is one this perun
reads; and each local index it will be merged into is readable.  The first
fault refuses the whole transfer with one :class:`~perun_core.errors.RemoteError`
naming the remote's file, before a byte is written.

:func:`store` then writes objects first, indexes next, change records
last.  Should a write fail or the transfer be cancelled midway, what it
wrote is taken back (an index only while it still holds what this pull
wrote there; the objects only when every index could be restored), so a
pull lands whole or not at all.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import atomic_write, sync_directories
from ..errors import CorruptObject, PerunError, RemoteError, StorageError
from ..storage.changes import changes_path, parse_record
from ..storage.index import IndexEntry
from ..storage.objects import profile_of_object
from . import layout

__all__ = ["Incoming", "examine", "store"]

Step = Callable[[], None]


@dataclass(slots=True)
class Incoming:
    """The remote's parts this side takes, all checked: git blob ids and decoded entries."""

    objects: dict[str, bytes] = field(default_factory=dict)          # sha -> blob id, only those lacking here
    indexes: dict[str, list[IndexEntry]] = field(default_factory=dict)  # minor -> the remote's entries
    changes: dict[str, bytes] = field(default_factory=dict)          # minor -> the record's bytes
    work: int = 0                                                     # steps of :func:`store`


def _refuse(remote: str, key: bytes, reason: str) -> RemoteError:
    text = key.decode("utf-8", "replace")  # a path of the remote's tree: quoted when it is not printable
    return RemoteError(remote, f"{text if text.isprintable() else layout.shown(text)}: {reason}",
                       hint=layout.REFUSED_HINT)


def _named(flat: layout.Flat, prefix: bytes, remote: str, suffix: str = "") -> dict[str, tuple[bytes, bytes]]:
    """The files under ``prefix`` by the sha their path names; a path naming no sha refuses the transfer."""
    found = {}
    for key, blob_id in flat.items():
        if not key.startswith(prefix):
            continue
        rest = key[len(prefix):].decode("utf-8", "replace")
        fan, _, leaf = rest.partition("/")
        name = fan + leaf.removesuffix(suffix)
        if not (len(fan) == 2 and leaf.endswith(suffix) and layout.is_sha(name)):
            raise _refuse(remote, key, f"names no perun file (expected {prefix.decode()}xx/<38 hex digits>{suffix})")
        found[name] = (key, blob_id)
    return found


def examine(repo: Any, git_store: Any, flat: layout.Flat, remote: str, step: Step) -> Incoming:
    """Check everything of ``flat`` this side would take (see the module docstring); nothing is written."""
    objects = _named(flat, layout.OBJECTS, remote)
    indexes = _named(flat, layout.INDEXES, remote)
    changes = _named(flat, layout.CHANGES, remote, ".json")
    here = set(layout.local_inventory(repo.perun_dir).objects)
    incoming = Incoming()
    for sha, (key, blob_id) in sorted(objects.items()):
        step()
        if sha in here:
            continue  # content-addressed: what this side holds under that name is that content
        data = layout.blob_of(git_store, blob_id, remote, key.decode())
        try:
            profile_of_object(data, sha, f"{remote}:{key.decode()}")
        except CorruptObject as exc:
            raise _refuse(remote, key, exc.reason) from None
        except StorageError as exc:  # an encoding newer than this perun reads
            raise _refuse(remote, key, str(exc)) from None
        incoming.objects[sha] = blob_id
    held = here | set(objects)
    for minor, (key, blob_id) in sorted(indexes.items()):
        step()
        entries = layout.decode_remote_index(layout.blob_of(git_store, blob_id, remote, key.decode()), key, remote)
        for entry in entries:
            _check_entry(entry, held, key, remote)
        _check_local_index(repo, minor, key, remote)
        incoming.indexes[minor] = entries
    for minor, (key, blob_id) in sorted(changes.items()):
        step()
        data = layout.blob_of(git_store, blob_id, remote, key.decode())
        try:
            parse_record(data, f"{remote}:{key.decode()}")
        except StorageError as exc:
            raise _refuse(remote, key, str(exc).replace(f"change record {remote}:{key.decode()}", "change record"))
        incoming.changes[minor] = data
    incoming.work = len(incoming.objects) + len(incoming.indexes) + len(incoming.changes)
    return incoming


def _check_entry(entry: IndexEntry, held: set[str], key: bytes, remote: str) -> None:
    name = entry.path
    if entry.checksum not in held:
        raise _refuse(remote, key, f"profile {layout.shown(name)} names object {entry.checksum}, which the remote "
                                   "does not hold")
    if not name or name in (".", "..") or any(c in name for c in "/\\\0") or len(name.encode()) > 255:
        raise _refuse(remote, key, f"profile name {name!r} is not a plain file name")
    if not math.isfinite(entry.time):
        raise _refuse(remote, key, f"profile {layout.shown(name)} has the time {entry.time}, expected a finite number")


def _check_local_index(repo: Any, minor: str, key: bytes, remote: str) -> None:
    try:
        repo.read_index(minor)
    except StorageError as exc:
        raise RemoteError(remote, f"{key.decode()} would be merged into {exc}",
                          hint="run 'perun-core fsck --repair' first; nothing was stored") from None


# -- storing -----------------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Journal:
    """What :func:`store` wrote, to take it back should it fail midway."""

    objects: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)  # fan-out folders made for them
    indexes: list[tuple[str, Path, bytes | None, bytes]] = field(default_factory=list)
    changes: list[tuple[Path, bytes | None, bytes]] = field(default_factory=list)

    def undo(self, repo: Any) -> None:
        restored = True
        for minor, path, old, new in reversed(self.indexes):
            try:
                with repo.index_lock(minor):
                    restored &= _put_back(path, old, new)
            except PerunError:  # its lock stayed taken: another writer has it, and may have changed it
                restored = False
        for path, old, new in reversed(self.changes):
            _put_back(path, old, new)
        if restored:  # else an index another writer changed since may name them
            for path in self.objects:
                with contextlib.suppress(OSError):
                    path.unlink()
            for folder in reversed(self.folders):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only while empty


def _put_back(path: Path, old: bytes | None, new: bytes) -> bool:
    """``path`` as it was before ``new`` was written, unless someone wrote it since; whether it is."""
    with contextlib.suppress(OSError):
        if path.read_bytes() != new:
            return False
        if old is None:
            path.unlink()
        else:
            atomic_write(path, old)
        return True
    return False


def store(repo: Any, git_store: Any, incoming: Incoming, step: Step) -> tuple[int, int, int]:
    """Write what :func:`examine` passed: (objects stored, index entries added, change records taken)."""
    journal = _Journal()
    try:
        return _store(repo, git_store, incoming, step, journal)
    except BaseException:
        journal.undo(repo)
        raise


def _store(repo: Any, git_store: Any, incoming: Incoming, step: Step, journal: _Journal) -> tuple[int, int, int]:
    written: set[Path] = set()
    stored = 0
    try:
        for sha, blob_id in sorted(incoming.objects.items()):  # objects first: an index never names one not here
            step()
            path = repo.objects.path_of(sha)
            if path.exists():
                continue  # stored meanwhile by another writer: the same content
            if not path.parent.is_dir():
                journal.folders.append(path.parent)
            atomic_write(path, git_store[blob_id].data, sync_dir=False)
            journal.objects.append(path)
            written.add(path.parent)
            stored += 1
    finally:
        sync_directories(written)  # one fsync per directory, before any index names these objects
    entries = 0
    for minor, theirs in sorted(incoming.indexes.items()):
        step()
        entries += repo.merge_entries(minor, theirs, on_write=lambda path, old, new, minor=minor:
                                      journal.indexes.append((minor, path, old, new)))
    taken = 0
    for minor, theirs in sorted(incoming.changes.items()):
        step()
        path = changes_path(repo, minor)
        try:
            mine = path.read_bytes()
        except FileNotFoundError:
            mine = None
        if mine == theirs or (mine is not None and layout.newer_changes(mine, theirs) is mine):
            continue
        atomic_write(path, theirs)
        journal.changes.append((path, mine, theirs))
        taken += 1
    return stored, entries, taken


def would_take(repo: Any, incoming: Incoming) -> tuple[int, int, int]:
    """What :func:`store` would write, writing nothing (a dry run)."""
    entries = sum(len(layout.missing_entries(repo.read_index(minor), theirs))
                  for minor, theirs in incoming.indexes.items())
    taken = 0
    for minor, theirs in incoming.changes.items():
        try:
            mine = changes_path(repo, minor).read_bytes()
        except FileNotFoundError:
            mine = None
        if mine != theirs and (mine is None or layout.newer_changes(mine, theirs) is not mine):
            taken += 1
    return len(incoming.objects), entries, taken
