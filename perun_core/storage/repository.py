"""One perun instance on disk: the ``.perun`` directory next to a git repository.

Layout (spec 000 "Perun Storage")::

    .perun/jobs/       pending profiles (documented JSON), not linked to a commit yet
    .perun/objects/    profile objects and minor-version indexes, by SHA-1 fan-out
    .perun/logs/       logs of collection runs
    .perun/cache/      derived data that can always be rebuilt
    .perun/local.yml   local configuration (vcs section, job matrix, formats)

A ``.perun`` the original Perun made (it has the original's ``stats/``
directory, or its pending index ``jobs/.index``) is shared with the original:
there perun writes what the original reads, indexes in its layout and
objects holding the documented JSON form (see :attr:`PerunRepository.shared_with_original`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import cachefile
from ..config import Config, ConfigStack, shared_config_dir
from ..errors import CorruptIndex, CorruptObject, InvalidProfile, NotPerunRepository, PerunError, ProfileError
from ..atomic import file_lock
from .index import INDEX, ORIGINAL_LAYOUT, IndexEntry, decode_index, read_index, write_index
from .objects import ObjectStore, object_path

if TYPE_CHECKING:
    from ..profile.model import Profile
    from ..vcs import GitVcs

PERUN_DIR = ".perun"
#: the profile types the original Perun 0.28 reads from its objects
ORIGINAL_TYPES = ("memory", "mixed", "time")
#: version of the listing caches (pending metadata, verified objects): entries of :mod:`perun_core.cachefile`
_LISTING_CACHE_VERSION = 2


@dataclass(frozen=True, slots=True)
class ProfileInfo:
    """What ``status`` shows of one profile, registered or pending."""

    tag: str
    source: str
    time: float
    type: str
    cmd: str
    args: str
    workload: str
    collector: str
    postprocessors: tuple[str, ...]
    registered: bool
    checksum: str | None = None
    path: Path | None = None
    origin: str | None = None
    error: str | None = None

    def sort_value(self, key: str) -> Any:
        if key == "realpath" or key == "source":
            return str(self.path or self.source)
        if key == "checksum":
            return self.checksum or ""
        value = getattr(self, key, "")
        return value if value is not None else ""


def meta_of(profile: Profile) -> dict[str, Any]:
    """The metadata an index entry or the pending cache keeps of a profile."""
    return {
        "type": profile.type,
        "cmd": profile.cmd,
        "args": profile.args,
        "workload": profile.workload,
        "collector": profile.collector,
        "postprocessors": list(profile.postprocessor_names),
        "origin": profile.origin,
        "label": str(profile.header.get("label") or ""),
    }


class PerunRepository:
    """Paths, storage and lazily opened configuration and VCS of one instance."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.perun_dir = self.root / PERUN_DIR
        if not self.perun_dir.is_dir():
            raise NotPerunRepository(self.root)
        self.jobs_dir = self.perun_dir / "jobs"
        self.objects_dir = self.perun_dir / "objects"
        self.logs_dir = self.perun_dir / "logs"
        self.cache_dir = self.perun_dir / "cache"
        self.local_config_path = self.perun_dir / "local.yml"
        self.objects = ObjectStore(self.objects_dir)
        self._objects_prefix = f"{self.objects_dir}{os.sep}"
        self._config: ConfigStack | None = None
        self._vcs: GitVcs | None = None

    # -- discovery and lifetime ---------------------------------------------
    @classmethod
    def discover(cls, start: Path | str | None = None) -> PerunRepository:
        """The nearest instance at or above ``start`` (default: the working directory)."""
        here = Path(start or os.getcwd()).resolve()
        for candidate in (here, *here.parents):
            if (candidate / PERUN_DIR).is_dir():
                return cls(candidate)
        raise NotPerunRepository(here)

    def close(self) -> None:
        if self._vcs is not None:
            self._vcs.close()
            self._vcs = None

    def __enter__(self) -> PerunRepository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- configuration and VCS ----------------------------------------------
    @property
    def config(self) -> ConfigStack:
        if self._config is None:
            local = Config.load(self.local_config_path, kind="local", cache_dir=self.cache_dir)
            shared = Config.load(shared_config_dir() / "shared.yml", kind="shared", cache_dir=self.cache_dir)
            self._config = ConfigStack(local, shared)
        return self._config

    def reload_config(self) -> None:
        self._config = None

    @property
    def vcs_root(self) -> Path:
        url = self.config.get_or("vcs.url", ".")
        root = Path(str(url)).expanduser()
        if not root.is_absolute():
            # relative to the directory holding .perun; the original Perun's (and perun's, since it
            # writes what both read) '..' is relative to .perun itself and names that same directory
            if (self.perun_dir / root).resolve() == self.root and (self.root / ".git").exists():
                return self.root
            return (self.root / root).resolve()
        # The original Perun stores the absolute path it was initialized at; a repository moved or
        # unpacked elsewhere keeps a stale one.  The directory holding .perun wins when it is a
        # git repository itself or the recorded path is not one.
        if root.resolve() != self.root and ((self.root / ".git").exists() or not (root / ".git").exists()):
            return self.root
        return root

    @property
    def vcs(self) -> GitVcs:
        if self._vcs is None:
            # lazy: keeps `perun-core check profiles` light
            from ..vcs import GitVcs

            vcs_type = self.config.get_or("vcs.type", "git")
            if vcs_type == "svs":
                raise PerunError(f"{self.local_config_path}: vcs.type 'svs' (the original Perun's single-version "
                                 "store) is not supported; only 'git' is",
                                 hint="put the project under git, then set vcs.type: git and vcs.url: ..")
            if vcs_type != "git":
                raise PerunError(f"{self.local_config_path}: vcs.type '{vcs_type}' is not supported; only 'git' is")
            self._vcs = GitVcs(self.vcs_root, cache_dir=self.cache_dir)
        return self._vcs

    def resolve_minor(self, revision: str | None) -> str:
        """Full SHA of ``revision`` (default HEAD)."""
        if revision is None or revision.strip() in ("HEAD", "@"):
            # HEAD named is HEAD by default: read from the ref files, without loading git's object store
            return self.vcs.head()
        return self.vcs.massage(revision)

    # -- sharing the repository with the original Perun --------------------
    @property
    def shared_with_original(self) -> bool:
        """Whether the original Perun uses this ``.perun`` too (:func:`shared_with_original`)."""
        return shared_with_original(self.perun_dir)

    @property
    def object_layout(self) -> str:
        """How new objects hold a profile: ``documented`` JSON where the original reads them, else ``columnar``."""
        return "documented" if self.shared_with_original else "columnar"

    def check_storable(self, profile: Profile, source: str) -> None:
        """Raise :class:`InvalidProfile` unless ``profile`` can be registered here.

        It must be valid; where the original Perun shares the repository, it
        must also be of a type the original reads, or the original could not
        list or show the commit any more.
        """
        # lazy: listings (status, log) never validate a profile
        from ..profile.validate import validate_profile

        validate_profile(profile, path=source)
        if not source.isascii():
            try:
                source.encode("utf-8")
            except UnicodeEncodeError:  # bytes of another encoding, kept by the file system as lone surrogates
                raise InvalidProfile(source, None, "has a file name that is not UTF-8 text, which an index cannot "
                                     "hold: rename the file to register it") from None
        if self.shared_with_original and profile.type not in ORIGINAL_TYPES:
            readable = ", ".join(ORIGINAL_TYPES)
            raise InvalidProfile(source, "header.type", f"'{profile.type}' cannot be stored where the original Perun "
                                 f"reads (this repository is shared with it): it reads only {readable}")

    def _write_index(self, minor: str, entries: list[IndexEntry]) -> None:
        # shared: every index in the original's layout (one of ours is converted on its next change);
        # else each index keeps the layout it has, a new one gets ours
        write_index(self.index_path(minor), entries, layout=ORIGINAL_LAYOUT if self.shared_with_original else None)

    def rewrite_index(self, minor: str, entries: list[IndexEntry]) -> None:
        """Write ``minor``'s index anew (fsck's repairs), in the layout every other writer here uses.

        The caller holds :meth:`index_lock`.
        """
        self._write_index(minor, entries)

    # -- indexes -------------------------------------------------------------
    def index_path(self, minor: str) -> Path:
        return object_path(self.objects_dir, minor)

    def has_index(self, minor: str) -> bool:
        # Called once per commit by log: plain string paths are several times faster than pathlib.
        return os.path.isfile(f"{self._objects_prefix}{minor[:2]}/{minor[2:]}")

    def index_tester(self, *, direct_lookups: int = 256) -> Callable[[str], bool]:
        """A ``has_index`` for many lookups in a row (a walk of the history).

        The first ``direct_lookups`` calls test files one by one; past them
        one listing of the object directory answers the rest, which is many
        times cheaper per commit on a long walk and costs little on a short one.
        """
        calls = 0
        names: set[str] | None = None

        def has_index(minor: str) -> bool:
            nonlocal calls, names
            if names is None:
                calls += 1
                if calls <= direct_lookups:
                    return self.has_index(minor)
                names = self._object_names()
            return minor in names

        return has_index

    def _object_names(self) -> set[str]:
        names: set[str] = set()
        try:
            fanout = [entry for entry in os.scandir(self.objects_dir) if len(entry.name) == 2 and entry.is_dir()]
        except FileNotFoundError:
            return names
        for directory in fanout:
            prefix = directory.name
            names.update(prefix + name for name in os.listdir(directory.path))
        return names

    def read_index(self, minor: str) -> list[IndexEntry]:
        return read_index(self.index_path(minor))

    def index_lock_path(self, minor: str) -> Path:
        """The lock file every writer of ``minor``'s index holds while it writes."""
        return self.perun_dir / "locks" / f"{minor}.lock"

    def index_lock(self, minor: str, timeout: float = 30.0) -> contextlib.AbstractContextManager[None]:
        """Hold ``minor``'s index lock (LockTimeout after ``timeout`` seconds; 0 tries once)."""
        return file_lock(self.index_lock_path(minor), timeout=timeout)

    def _index_lock(self, minor: str) -> contextlib.AbstractContextManager[None]:
        return self.index_lock(minor)

    def register(self, minor: str, profile: Profile, source: str, created: float, *,
                 checked: bool = False) -> IndexEntry:
        """Store ``profile`` as an object and append it to ``minor``'s index; idempotent.

        The same object at the same commit is registered once: when
        ``minor``'s index already holds its checksum, that entry is returned
        and nothing is written (two concurrent ``add`` of one file, an
        ``add --keep-profile`` repeated, a run resumed after a kill).  A
        ``source`` name another profile of the index already has gets
        ``-1``, ``-2``, ... before its extension, so registered names stay
        unique even for runs that finish in the same second.  Both are
        decided under the index lock.  ``checked`` says the caller ran
        :meth:`check_storable` on ``profile`` already.
        """

        if not checked:
            self.check_storable(profile, source)
        if profile.origin != minor:
            # the object names the commit it is registered at (fsck puts an object an index lost back by it)
            profile = dataclasses.replace(profile, origin=minor)
        # encoded (the costly part) before the lock, stored under it: an add that cannot take the lock, read
        # the index or write it leaves no object behind that no index names
        checksum, compressed = self.objects.encode_profile(profile, layout=self.object_layout)
        meta = meta_of(profile)
        with self._index_lock(minor):
            entries = self._entries_with_metadata(self.read_index(minor))
            for existing in entries:
                if existing.checksum == checksum:
                    self.objects.write_encoded(checksum, compressed)  # a damaged store may have lost it
                    return existing
            written = self.objects.write_encoded(checksum, compressed)
            try:
                return self._append_entry(minor, entries, checksum, source, created, meta)
            except BaseException:
                if written:  # no other writer of this index could have named it: they wait for the lock
                    with contextlib.suppress(OSError):
                        self.objects.path_of(checksum).unlink()
                raise

    def _append_entry(self, minor: str, entries: list[IndexEntry], checksum: str, source: str, created: float,
                      meta: dict) -> IndexEntry:
        """Add an entry for object ``checksum`` to ``minor``'s index (its lock held)."""
        entry = IndexEntry(
            created,
            checksum,
            _free_name(source, {e.path for e in entries}),
            meta["type"],
            meta["cmd"],
            meta["args"],
            meta["workload"],
            meta["collector"],
            tuple(meta["postprocessors"]),
            meta["label"],
        )
        entries.append(entry)
        self._write_index(minor, entries)
        return entry

    def unregister(self, minor: str, checksums_and_paths: list[tuple[str, str]]) -> list[IndexEntry]:
        """Drop entries matching (checksum, path) pairs from ``minor``'s index; objects stay."""
        wanted = set(checksums_and_paths)
        with self._index_lock(minor):
            entries = self._entries_with_metadata(self.read_index(minor))
            kept = [e for e in entries if (e.checksum, e.path) not in wanted]
            removed = [e for e in entries if (e.checksum, e.path) in wanted]
            if removed:
                self._write_index(minor, kept)
        return removed

    def merge_entries(self, minor: str, entries: list[IndexEntry],
                      on_write: Callable[[Path, bytes | None, bytes], None] | None = None) -> int:
        """Append those of ``entries`` that ``minor``'s index lacks (same object and name); how many were added.

        Used when profiles arrive from a remote: the objects must be stored
        first.  ``on_write(path, old bytes or None, new bytes)`` hears of the
        index written, still under its lock (so a pull can take it back).
        """
        path = self.index_path(minor)
        with self._index_lock(minor):
            try:
                old: bytes | None = path.read_bytes()
            except FileNotFoundError:
                old = None
            except OSError as exc:
                raise CorruptIndex(path, f"cannot be read: {exc.strerror}") from None
            current = self._entries_with_metadata(decode_index(old, path) if old is not None else [])
            have = {(e.checksum, e.path) for e in current}
            added = []
            for entry in entries:
                if (entry.checksum, entry.path) not in have:
                    have.add((entry.checksum, entry.path))
                    added.append(entry)
            if added:
                self._write_index(minor, current + added)
                if on_write is not None:
                    on_write(path, old, path.read_bytes())
        return len(added)

    def entries_with_metadata(self, minor: str) -> list[IndexEntry]:
        """``minor``'s index entries, version-1 ones completed from their objects."""
        return self._entries_with_metadata(self.read_index(minor))

    def with_metadata(self, entries: list[IndexEntry]) -> list[IndexEntry]:
        """``entries`` with version-1 ones completed from their objects (which must be sound)."""
        return self._entries_with_metadata(entries)

    def _entries_with_metadata(self, entries: list[IndexEntry]) -> list[IndexEntry]:
        # Version-1 indexes carry no metadata: the step to version 2 fills it from the objects.
        if all(entry.has_metadata for entry in entries):
            return list(entries)
        return INDEX.upgrade(list(entries), 1, path=self.objects_dir,
                             metadata_of=lambda sha: meta_of(self.objects.read_profile(sha)))

    def registered_infos(self, minor: str, sort_key: str) -> list[ProfileInfo]:
        """Registered profiles of ``minor`` with their ``i@i`` tags, in tag order."""
        infos = []
        for entry in self.read_index(minor):
            if not entry.has_metadata:
                # a version-1 entry takes its metadata from its object; a damaged one is listed without it
                # (the caller marks it by its checksum), never failing the listing of the whole commit
                with contextlib.suppress(CorruptObject):
                    entry = self._entries_with_metadata([entry])[0]
            infos.append(
                ProfileInfo(
                    tag="", source=entry.path, time=entry.time, type=entry.type or "", cmd=entry.cmd or "",
                    args=entry.args or "", workload=entry.workload or "", collector=entry.collector or "",
                    postprocessors=entry.postprocessors, registered=True, checksum=entry.checksum,
                )
            )
        return tagged(infos, sort_key, "i")

    def damaged_objects(self, checksums: list[str]) -> dict[str, str]:
        """Verify objects by checksum; returns {sha: reason} for the damaged ones.

        A verified object is remembered by its file signature in the cache
        (:mod:`perun_core.cachefile`), so a listing re-reads only objects that
        changed on disk since.
        """

        cache = _load_cache(self.cache_dir / "verified.json")
        damaged: dict[str, str] = {}
        fresh = dict(cache)
        for sha in checksums:
            stamp = cachefile.file_signature(self.objects.path_of(sha))
            if stamp is None:
                damaged[sha] = "object is missing"
                continue
            if cache.get(sha) == stamp:
                continue
            try:
                self.objects.read_raw(sha)
            except CorruptObject as exc:
                damaged[sha] = exc.reason
                fresh.pop(sha, None)
                continue
            fresh[sha] = stamp
        if fresh != cache:
            _store_cache(self.cache_dir / "verified.json", fresh)
        return damaged

    # -- pending profiles ------------------------------------------------------
    def pending_paths(self) -> list[Path]:
        try:
            return [
                p for p in self.jobs_dir.iterdir()
                if not p.name.startswith(".") and p.is_file()
            ]
        except FileNotFoundError:
            return []

    def pending_infos(self, sort_key: str) -> list[ProfileInfo]:
        """Every pending profile, tagged ``i@p`` across the whole directory, in tag order.

        Checks group these by origin themselves; what a commit lists, and the
        tags a user types, come from :mod:`.pending` (one list per commit).

        Metadata is cached by name and file signature in ``.perun/cache`` so
        a large pending profile is parsed once, not on every ``status``.
        """
        cache = _load_cache(self.cache_dir / "pending-meta.json")
        fresh: dict[str, Any] = {}
        infos = []
        for path in self.pending_paths():
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue  # registered or deleted by another process since the listing
            stamp = cachefile.signature_of(stat)
            cached = cache.get(path.name)
            if cached and cached[0] == stamp:
                meta, error = cached[1], cached[2]
            else:
                meta, error = _read_pending_meta(path)
                if error is not None and not path.exists():
                    continue
            fresh[path.name] = [stamp, meta, error]
            infos.append(
                ProfileInfo(
                    tag="", source=path.name, time=stat.st_mtime, type=meta.get("type", "") if meta else "",
                    cmd=meta.get("cmd", "") if meta else "", args=meta.get("args", "") if meta else "",
                    workload=meta.get("workload", "") if meta else "",
                    collector=meta.get("collector", "") if meta else "",
                    postprocessors=tuple(meta.get("postprocessors", ())) if meta else (),
                    registered=False, path=path, origin=meta.get("origin") if meta else None, error=error,
                )
            )
        if fresh != cache:
            _store_cache(self.cache_dir / "pending-meta.json", fresh)
        return tagged(infos, sort_key, "p")


def shared_with_original(perun_dir: Path) -> bool:
    """Whether the original Perun uses the ``.perun`` at ``perun_dir`` too.

    It does when the directory has what only the original makes: its
    ``stats/`` directory (made by its ``init``, and by ``perun-core init
    --compat``) or its pending index ``jobs/.index`` (made by any of its
    commands that list pending profiles).  Asked again on every write, so
    the original starting to use a repository is noticed at once.
    """
    return (perun_dir / "stats").is_dir() or (perun_dir / "jobs" / ".index").is_file()


def pending_layout(jobs_dir: Path) -> str:
    """The layout a new pending profile in ``jobs_dir`` gets: documented JSON where the original lists
    pending profiles too (it cannot read the compact one), else compact."""
    return "documented" if shared_with_original(Path(jobs_dir).parent) else "compact"


def _free_name(name: str, taken: set[str]) -> str:
    """``name``, or ``stem-N.ext`` with the smallest N that is not in ``taken``."""
    if name not in taken:
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem:
        stem, extension = name, ""
    suffix = f".{extension}" if extension else ""
    number = 1
    while f"{stem}-{number}{suffix}" in taken:
        number += 1
    return f"{stem}-{number}{suffix}"


def _load_cache(path: Path) -> dict[str, Any]:
    """A listing cache's entries by name, or {} if it is missing, damaged or of another version."""
    entries = cachefile.read(path, _LISTING_CACHE_VERSION)
    return entries if isinstance(entries, dict) else {}


def _store_cache(path: Path, entries: dict[str, Any]) -> None:
    cachefile.write(path, cachefile.encode(_LISTING_CACHE_VERSION, entries))


def _read_pending_meta(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    # lazy: a listing parses a pending profile only when the metadata cache does not know it yet
    from ..profile.codec import load_profile_head

    try:
        return meta_of(load_profile_head(path)), None
    except ProfileError as exc:
        reason = exc.reason if isinstance(exc, InvalidProfile) else str(exc)
        key = f"{exc.key}: " if isinstance(exc, InvalidProfile) and exc.key else ""
        return None, f"invalid profile: {key}{reason}"


def tagged(infos: list[ProfileInfo], sort_key: str, suffix: str) -> list[ProfileInfo]:
    """``infos`` in the order of ``sort_key`` (then time, then name), tagged ``0@SUFFIX`` onwards."""
    from dataclasses import replace

    ordered = sorted(infos, key=lambda info: (_sortable(info.sort_value(sort_key)), info.time, info.source))
    return [replace(info, tag=f"{i}@{suffix}") for i, info in enumerate(ordered)]


def _sortable(value: Any) -> tuple[int, Any]:
    # Numbers before strings, never a TypeError between the two.
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))
