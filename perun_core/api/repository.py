"""The porcelain of the repository: ``init``, ``add``, ``remove``, ``status``, ``log``.

The configuration commands are in :mod:`.config`, looking profiles up and
loading them in :mod:`.profiles`.  Nothing here prints, prompts or exits;
failures raise :class:`perun_core.errors.PerunError` subclasses.

Every function takes an optional ``repo`` (an open
:class:`~perun_core.storage.repository.PerunRepository`, as the TUI keeps one) or
finds the nearest instance from ``cwd``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import atomic_write_text
from ..errors import (
    ConfigError,
    CorruptObject,
    InvalidProfile,
    OriginMismatch,
    PerunError,
    ProfileNotFound,
    StorageError,
    UsageError,
    VcsError,
)
from ..storage.changes import any_changes, read_changes, read_pairs
from ..storage.index import ORIGINAL_LAYOUT, write_index
from ..storage.lookup import FoundProfile, find_profile, sort_key_of
from ..storage.pending import PendingByCommit
from ..storage.repository import PERUN_DIR, PerunRepository, ProfileInfo
from ..vcs import init_repository, is_bare_repository
from ._repo import open_repository, using as _using

__all__ = ["SORT_KEYS", "open_repository", "InitResult", "init", "AddedProfile", "add", "RemovedProfile", "remove",
           "StatusReport", "status", "ProfileCounts", "LogEntry", "log", "log_format", "shallow_commits", "SourceFile",
           "source_at"]

if TYPE_CHECKING:
    from ..profile.model import Profile
    from ..vcs import MinorVersion

SORT_KEYS = ("realpath", "type", "time", "cmd", "args", "workload", "collector", "checksum", "source")


# -- init ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class InitResult:
    root: Path
    vcs_root: Path
    git_created: bool
    reinitialized: bool
    template: str
    config_path: Path
    #: whether the instance is shared with the original Perun (``compat``, or made by the original)
    shared_with_original: bool = False


def init(
    path: Path | str | None = None,
    *,
    vcs_type: str = "git",
    vcs_path: Path | str | None = None,
    vcs_params: dict[str, str] | None = None,
    vcs_flags: tuple[str, ...] = (),
    template: str = "master",
    compat: bool = False,
) -> InitResult:
    """Create (or re-create) ``.perun`` at ``path`` and a git repository if missing.

    ``compat`` makes an instance the original Perun (0.28) can open and use
    beside perun: the directories its ``init`` makes (``stats/``, ``tmp/``)
    and its empty pending index ``jobs/.index``, which tell perun to write
    indexes and objects the original reads (see
    :attr:`~perun_core.storage.repository.PerunRepository.shared_with_original`).
    """
    # lazy: keeps `perun-core status` and the TUI's first frame light
    from ..config.templates import render_local_config

    if vcs_type != "git":
        raise UsageError(f"--vcs-type '{vcs_type}' is not supported; only 'git' is")
    unknown_flags = [f for f in vcs_flags if f != "bare"]
    if unknown_flags:
        raise UsageError(f"--vcs-flag '{unknown_flags[0]}' is not supported; known: bare")
    # perun profiles a working tree and finds its repository by .git: in a bare repository every
    # later command would fail, so init refuses to make one or to settle in one
    if "bare" in vcs_flags:
        raise UsageError("--vcs-flag bare: a bare git repository has no working tree to profile; "
                         "perun needs an ordinary one (or a clone of the bare one)")
    root = Path(path or os.getcwd()).expanduser().resolve()
    vcs_root = Path(vcs_path).expanduser().resolve() if vcs_path else root
    if is_bare_repository(vcs_root):
        raise VcsError(f"{vcs_root} is a bare git repository: it has no working tree to profile",
                       hint="clone it ('git clone <bare> <dir>') and run 'perun-core init' in the clone")
    # Render first: a bad template must not leave a half-made instance behind.
    # The original Perun joins vcs.url to the .perun directory, perun to the directory holding
    # it: '..' for the usual layout means the same to both, any other place is written absolute.
    vcs_url = ".." if vcs_root == root else str(vcs_root)
    config_text = render_local_config(template, project_root=root, vcs_type=vcs_type, vcs_url=vcs_url)
    root.mkdir(parents=True, exist_ok=True)
    git_created = init_repository(vcs_root, bare="bare" in vcs_flags, params=vcs_params or {})
    perun_dir = root / PERUN_DIR
    reinitialized = perun_dir.is_dir()
    for sub in ("jobs", "objects", "logs", "cache", *(("stats", "tmp") if compat else ())):
        (perun_dir / sub).mkdir(parents=True, exist_ok=True)
    pending_index = perun_dir / "jobs" / ".index"
    if compat and not pending_index.exists():
        write_index(pending_index, [], layout=ORIGINAL_LAYOUT)
    config_path = perun_dir / "local.yml"
    if not config_path.exists():
        atomic_write_text(config_path, config_text)
    with PerunRepository(root) as repo:
        shared = repo.shared_with_original
    return InitResult(root, vcs_root, git_created, reinitialized, template, config_path, shared)


# -- add / rm ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class AddedProfile:
    source: str
    minor: str
    checksum: str
    type: str
    kept: bool


def add(
    specs: list[str],
    *,
    minor: str | None = None,
    keep_profile: bool = False,
    force: bool = False,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> list[AddedProfile]:
    """Register pending or file profiles at ``minor`` (default HEAD).

    Every profile is checked (lookup, format, origin) before any is
    registered, so a bad one leaves the store unchanged, and pending files
    are removed only after all are registered.  ``force`` accepts a profile
    whose origin is missing or names another commit.
    """
    if not specs:
        raise UsageError("add needs at least one profile")
    with _using(repo, cwd) as r:
        target = r.resolve_minor(minor)
        found = [find_profile(r, spec, target, allow=("pending", "file")) for spec in specs]
        seen: set[Path] = set()
        loaded: list[tuple[FoundProfile, Profile, float]] = []
        for item in found:
            assert item.path is not None
            resolved = item.path.resolve()
            if resolved in seen:
                raise UsageError(f"'{item.spec}' names {item.path.name}, which is already in this add")
            seen.add(resolved)
            profile = item.load(r)
            _check_origin(r, item.path, profile, target, force)
            r.check_storable(profile, item.path.name)
            loaded.append((item, profile, item.path.stat().st_mtime))
        added = []
        for item, profile, created in loaded:
            assert item.path is not None
            entry = r.register(target, profile, item.path.name, created, checked=True)
            added.append(AddedProfile(item.path.name, target, entry.checksum, profile.type, keep_profile))
        # the pending files go only once every profile is registered: an add stopped half-way (killed,
        # interrupted, a full disk) leaves each tag naming the profile it named, and the same add run again
        # registers the rest (registering is idempotent), instead of tags that moved onto other profiles
        if not keep_profile:
            for item, _profile, _created in loaded:
                with contextlib.suppress(FileNotFoundError):
                    item.path.unlink()  # type: ignore[union-attr]
        return added


def _check_origin(repo: PerunRepository, path: Path, profile: Profile, target: str, force: bool) -> None:
    origin = profile.origin
    if force:
        return
    if origin and (origin == target or (len(origin) >= 7 and target.startswith(origin))):
        return
    if origin:
        raise OriginMismatch(path, origin, target)
    raise InvalidProfile(path, "origin", f"is missing, so it cannot be checked against {target}; pass --force to register it anyway")


@dataclass(frozen=True, slots=True)
class RemovedProfile:
    source: str
    minor: str | None
    checksum: str | None
    pending: bool


def remove(
    specs: list[str],
    *,
    minor: str | None = None,
    remove_all: bool = False,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> list[RemovedProfile]:
    """Unlink registered profiles from ``minor``'s index (objects are kept).

    A pending tag ``i@p`` deletes that pending profile file instead.  With
    ``remove_all`` every index entry of a matching name goes, else the first.
    """
    if not specs:
        raise UsageError("rm needs at least one profile")
    with _using(repo, cwd) as r:
        target = r.resolve_minor(minor)
        registered = r.registered_infos(target, sort_key_of(r))
        to_unlink: list[ProfileInfo] = []
        to_delete: list[ProfileInfo] = []
        for spec in specs:
            if spec.endswith("@p"):
                item = find_profile(r, spec, target, allow=("pending",))
                assert item.info is not None
                to_delete.append(item.info)
                continue
            matches = _index_matches(registered, spec, target, r)
            to_unlink.extend(matches if remove_all else matches[:1])
        removed = []
        if to_unlink:
            pairs = [(i.checksum or "", i.source) for i in to_unlink]
            for entry in r.unregister(target, pairs):
                removed.append(RemovedProfile(entry.path, target, entry.checksum, False))
        for info in to_delete:
            assert info.path is not None
            with contextlib.suppress(FileNotFoundError):
                info.path.unlink()
            removed.append(RemovedProfile(info.source, None, None, True))
        return removed


def _index_matches(registered: list[ProfileInfo], spec: str, target: str, repo: PerunRepository) -> list[ProfileInfo]:
    if spec.endswith("@i"):
        item = find_profile(repo, spec, target, allow=("index",))
        assert item.info is not None
        return [item.info]
    name = Path(spec).name
    matches = [i for i in registered if spec in (i.source, i.checksum) or name == Path(i.source).name]
    if not matches:
        raise ProfileNotFound(spec, f"in the index of {target[:7]}")
    return matches


# -- status ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StatusReport:
    head: MinorVersion
    major: str
    dirty: bool
    registered: list[ProfileInfo]
    pending: list[ProfileInfo]
    status_format: str
    sort_key: str
    #: registered profiles whose objects failed verification, as CorruptObject errors
    damaged: list[PerunError] = field(default_factory=list)
    #: findings of the last degradation check of HEAD (stored records of perun_core.storage.changes), None if never checked
    checks: list[dict[str, Any]] | None = None
    #: pending profiles of other commits (listed under those by ``log``), not in ``pending``
    pending_elsewhere: int = 0


def status(
    *, sort_by: str | None = None, repo: PerunRepository | None = None, cwd: Path | str | None = None
) -> StatusReport:
    """HEAD, its registered profiles and its pending ones (see :mod:`perun_core.storage.pending`).

    Tags always follow ``format.sort_profiles_by`` so that ``0@p`` names the
    same profile in every command; ``sort_by`` only reorders the listing.
    """
    if sort_by is not None and sort_by not in SORT_KEYS:
        raise UsageError(f"--sort-by '{sort_by}' is not a profile attribute; expected one of {', '.join(SORT_KEYS)}")
    with _using(repo, cwd) as r:
        status_format = str(r.config.get("format.status"))
        tag_key = sort_key_of(r)
        if tag_key not in SORT_KEYS:
            raise ConfigError(r.local_config_path, "format.sort_profiles_by", f"'{tag_key}' is not one of {', '.join(SORT_KEYS)}")
        head_sha = r.vcs.head()
        # asked first: a remembered answer brings HEAD's commit along, so git's objects need not be read
        dirty = r.vcs.is_dirty()
        head = r.vcs.minor_info(head_sha)
        problems: list[PerunError] = []
        if not r.objects_dir.is_dir():
            # Not "no tracked profiles": the store lost its objects (and indexes) and must say so.
            problems.append(StorageError(f"{r.objects_dir} is missing: the registered profiles cannot be listed",
                                         hint="run 'perun-core fsck' to check the store"))
        try:
            registered = r.registered_infos(head_sha, tag_key)
        except StorageError as exc:  # a damaged index: the pending profiles are still worth listing
            registered = []
            problems.append(exc)
        every_pending = r.pending_infos(tag_key)
        pending = PendingByCommit(every_pending, tag_key, head_sha).of(head_sha)
        damaged = _mark_damaged(r, registered)
        if damaged:
            registered = [replace(i, error=f"corrupt object: {damaged[i.checksum].reason}") if i.checksum in damaged else i
                          for i in registered]
        if sort_by and sort_by != tag_key:
            registered = sorted(registered, key=lambda i: _order(i, sort_by))
            pending = sorted(pending, key=lambda i: _order(i, sort_by))
        return StatusReport(head, r.vcs.major_version(), dirty, registered, pending, status_format,
                            sort_by or tag_key, [*problems, *damaged.values()], _check_findings(r, head_sha),
                            len(every_pending) - len(pending))


def _check_findings(repo: PerunRepository, minor: str) -> list[dict[str, Any]] | None:
    """The changes the last check of ``minor`` found, one record per finding (with the target's source)."""

    if not any_changes(repo):
        return None
    pairs = read_pairs(repo, minor)
    if pairs is None:
        return None
    found = []
    for pair in pairs:
        source = str((pair.get("target") or {}).get("source", "")) if isinstance(pair, dict) else ""
        for record in pair.get("findings", []) if isinstance(pair, dict) else []:
            if isinstance(record, dict) and record.get("result") not in (None, "NoChange"):
                found.append({**record, "source": source})
    return found


def _mark_damaged(repo: PerunRepository, infos: list[ProfileInfo]) -> dict[str, CorruptObject]:
    checksums = [i.checksum for i in infos if i.checksum]
    return {sha: CorruptObject(sha, repo.objects.path_of(sha), reason)
            for sha, reason in repo.damaged_objects(checksums).items()}


def _order(info: ProfileInfo, key: str) -> tuple:
    value = info.sort_value(key)
    return ((0, value) if isinstance(value, (int, float)) else (1, str(value)), info.time)


# -- log -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ProfileCounts:
    total: int = 0
    memory: int = 0
    mixed: int = 0
    time: int = 0


@dataclass(frozen=True, slots=True)
class LogEntry:
    version: MinorVersion
    counts: ProfileCounts
    profiles: list[ProfileInfo] = field(default_factory=list)
    #: degradation results recorded by checks: ("-" degradation / "+" optimization) per finding
    changes: str = ""
    #: why this version's profiles could not be listed (a damaged index), None when they could
    error: str | None = None
    #: the pending profiles listed under this version (with_profiles only), tagged 0@p onwards
    pending: list[ProfileInfo] = field(default_factory=list)


def log(
    revision: str | None = None,
    *,
    with_profiles: bool = False,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> Iterator[LogEntry]:
    """Minor versions from ``revision`` (default HEAD) back, with their profiles.

    A generator: the walk and index reads happen as entries are consumed.
    ``with_profiles`` also lists each version's pending profiles.
    """
    with _using(repo, cwd) as r:
        start = r.resolve_minor(revision)
        sort_key = sort_key_of(r) if with_profiles else "time"
        pending = None
        if with_profiles:
            head = start if revision is None else r.resolve_minor(None)
            pending = PendingByCommit(r.pending_infos(sort_key), sort_key, head)

        checked = any_changes(r)
        has_index = r.index_tester()
        for version in r.vcs.walk_minor_versions(start):
            changes = read_changes(r, version.checksum) if checked else ""
            waiting = pending.of(version.checksum) if pending is not None else []
            if not has_index(version.checksum):
                yield LogEntry(version, ProfileCounts(), [], changes, pending=waiting)
                continue
            try:
                infos = r.registered_infos(version.checksum, sort_key)
            except StorageError as exc:  # one damaged index must not hide the rest of the history
                yield LogEntry(version, ProfileCounts(), [], changes, str(exc), waiting)
                continue
            yield LogEntry(version, _count(infos), infos if with_profiles else [], changes, pending=waiting)


def _count(infos: list[ProfileInfo]) -> ProfileCounts:
    kinds = [i.type for i in infos]
    return ProfileCounts(len(infos), kinds.count("memory"), kinds.count("mixed"), kinds.count("time"))


def shallow_commits(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> list[str]:
    """The commits the history of a shallow clone ends at (older ones are not there to check); empty if none."""
    with _using(repo, cwd) as r:
        return r.vcs.shallow_commits()


def log_format(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> str:
    with _using(repo, cwd) as r:
        return str(r.config.get("format.shortlog"))


# -- sources at a commit ----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file as it was at a commit: ``path`` relative to the git repository's root, ``text`` decoded as UTF-8."""

    commit: str
    path: str
    text: str


def source_at(rev: str, path: Path | str, *, repo: PerunRepository | None = None,
              cwd: Path | str | None = None) -> SourceFile:
    """The file ``path`` as it was at commit ``rev`` (read from git, not from the working tree).

    ``path`` is relative to the git repository's root, or absolute inside
    it (as profilers record source files).  Bytes that are no UTF-8 are
    replaced.  Raises InvalidRevision, and VcsError when the path is outside
    the repository or the commit has no such file.
    """
    with _using(repo, cwd) as r:
        vcs = r.vcs
        root = Path(vcs.root).resolve()
        given = Path(path)
        if given.is_absolute():
            inside = Path(os.path.normpath(given))
            if not inside.is_relative_to(root):
                inside = given.resolve()  # a symlinked checkout: the profiler may have recorded the real path
            if not inside.is_relative_to(root):
                raise VcsError(f"{path} is not a file of the repository at {root}")
            relative = inside.relative_to(root).as_posix()
        else:
            relative = Path(os.path.normpath(given)).as_posix()
        commit = vcs.massage(rev)
        data = vcs.file_at(commit, relative)
        return SourceFile(commit, relative, data.decode("utf-8", "replace"))
