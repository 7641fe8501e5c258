"""The version control layer: git repositories read and changed through dulwich.

Perun links performance profiles to commits ("minor versions") on branches
("major versions").  Everything it needs from git lives here: resolving
revision expressions to full shas, walking history, telling whether the
working tree is dirty, materializing an old commit's tree somewhere else, and
moving HEAD around.  The git binary is never run; all access goes through
dulwich.  The module never prints and never exits: failures are raised as the
:mod:`perun_core.errors` VCS errors.

History walks can be cached on disk (see :class:`GitVcs`): the commits
reachable from a start commit never change, so the cache needs no
invalidation, only an integrity check.
"""

from __future__ import annotations

import binascii
import contextlib
import hashlib
import heapq
import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EmptyRepository, InvalidRevision, NotGitRepository, VcsError
from ..storage.atomic import atomic_write

if TYPE_CHECKING:  # pragma: no cover - typing only
    from dulwich.repo import Repo

__all__ = [
    "GitVcs",
    "MinorVersion",
    "SavedState",
    "find_git_root",
    "init_repository",
]

# git object type numbers, as returned by ``object_store.get_raw``
_COMMIT, _TREE, _BLOB, _TAG = 1, 2, 3, 4
_S_IFGITLINK = 0o160000
_SYMREF = b"ref: "
_HEX40 = re.compile(r"[0-9a-fA-F]{40}")
_HEX_SHORT = re.compile(r"[0-9a-fA-F]{4,39}")
_SUFFIX = re.compile(r"~(\d*)|\^\{([a-z]*)\}|\^(\d*)")
_MIN_SHORT_SHA = 4

HISTORY_CACHE_VERSION = 1
HISTORY_CACHE_LIMIT = 8
_CACHE_HEADER = re.compile(rb'\{"format":(\d{1,6}),"checksum":"([0-9a-f]{40})","start":"([0-9a-f]{40})","commits":')
_CACHE_NAME = re.compile(r"history-([0-9a-f]{40})\.json")

_INIT_PARAMS = ("initial-branch", "description")


# --------------------------------------------------------------------------- data


def _map_pack(pack: Any) -> Any:
    """The pack file mapped into memory, or None (then dulwich reads every object)."""
    import mmap

    path = getattr(pack, "_data_path", None)
    if not isinstance(path, str):
        return None
    try:
        with open(path, "rb") as file:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


class _PackOffsets:
    """Offsets of objects in one pack, by binary SHA-1; raises KeyError for objects it lacks.

    The first lookups go through dulwich's index (a binary search each);
    after ``direct_lookups`` of them the whole version-2 index is read into
    a dict once, which a walk through thousands of commits repays many times.
    """

    def __init__(self, pack: Any, direct_lookups: int = 256) -> None:
        self.pack = pack
        self.left = direct_lookups
        self.table: dict[bytes, int] | None = None

    def of(self, binary: bytes) -> int:
        if self.table is not None:
            return self.table[binary]
        self.left -= 1
        if self.left < 0:
            self.table = _read_index_v2(getattr(self.pack, "_idx_path", None))
            if self.table is not None:
                return self.table[binary]
            self.left = 1 << 62  # not a version-2 index: stay with dulwich
        return self.pack.index.object_offset(binary)


def _read_index_v2(path: Any) -> dict[bytes, int] | None:
    """{binary sha: offset} of a version-2 pack index (git's format); None for anything else."""
    import struct

    if not isinstance(path, str):
        return None
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    if len(data) < 8 + 1024 or data[:8] != b"\377tOc\x00\x00\x00\x02":
        return None
    count = struct.unpack_from(">I", data, 8 + 1020)[0]
    names_at = 8 + 1024
    offsets_at = names_at + 24 * count  # names (20 bytes each), then CRC32s (4 bytes each)
    large_at = offsets_at + 4 * count
    if len(data) < large_at + 40:
        return None
    offsets = struct.unpack_from(f">{count}I", data, offsets_at)
    names = [data[i:i + 20] for i in range(names_at, names_at + 20 * count, 20)]
    table = dict(zip(names, offsets))
    if any(offset & 0x80000000 for offset in offsets):  # packs over 2 GiB: the high offsets live in a second table
        for name, offset in zip(names, offsets):
            if offset & 0x80000000:
                table[name] = struct.unpack_from(">Q", data, large_at + 8 * (offset & 0x7FFFFFFF))[0]
    return table


def _read_whole_object(mapped: Any, offset: int) -> tuple[int, bytes] | None:
    """The (type, content) of the undeltified object at ``offset`` of a mapped pack; None for a delta.

    Commits are almost never stored as deltas, and reading them this way
    skips dulwich's generic unpacking, which costs several times more than
    the inflating itself on a walk through thousands of commits.
    """
    byte = mapped[offset]
    kind = (byte >> 4) & 7
    if kind not in (1, 2, 3, 4):  # commit, tree, blob, tag; 6 and 7 are deltas
        return None
    size = byte & 15
    shift = 4
    position = offset + 1
    while byte & 0x80:
        byte = mapped[position]
        size |= (byte & 0x7F) << shift
        shift += 7
        position += 1
    inflater = zlib.decompressobj()
    # deflate adds at most a few bytes per 16 KiB block to what it cannot shrink
    window = size + 64 + size // 64
    content = inflater.decompress(mapped[position:position + window], size)
    while len(content) < size and not inflater.eof and not inflater.unconsumed_tail:
        position += window
        more = mapped[position:position + window]
        if not more:
            break
        content += inflater.decompress(more, size - len(content))
    if len(content) != size:
        raise KeyError("damaged pack entry")
    return kind, content


@dataclass(frozen=True, slots=True)
class MinorVersion:
    """One commit, as perun sees it."""

    checksum: str
    date: int
    tz_offset: int
    author: str
    email: str
    desc: str
    parents: tuple[str, ...]

    @property
    def short_desc(self) -> str:
        """The first line of the commit message."""
        return self.desc.split("\n", 1)[0]


@dataclass(frozen=True, slots=True)
class SavedState:
    """Where HEAD pointed when :meth:`GitVcs.save_state` ran.

    ``ref`` is the full name of the branch HEAD was attached to (for example
    ``refs/heads/main``), or None when HEAD was detached; ``sha`` is the commit
    HEAD resolved to (None on an unborn branch); ``dirty`` is whether the
    working tree had uncommitted changes to tracked files.
    """

    ref: str | None
    sha: str | None
    dirty: bool

    @property
    def detached(self) -> bool:
        return self.ref is None


# --------------------------------------------------------------------------- helpers


def _tz_seconds(text: bytes) -> int:
    """``+0130`` -> 5400; anything malformed -> 0."""
    try:
        sign = -1 if text[:1] == b"-" else 1
        digits = text.lstrip(b"+-")
        if not digits.isdigit():
            return 0
        hours, minutes = int(digits[:-2] or b"0"), int(digits[-2:])
        return sign * (hours * 3600 + minutes * 60)
    except (ValueError, IndexError):
        return 0


def _split_ident(ident: bytes) -> tuple[bytes, bytes, int, int]:
    """``Name <email> 1700000000 +0100`` -> (name, email, time, tz seconds)."""
    lt = ident.find(b"<")
    gt = ident.rfind(b">")
    if lt < 0 or gt < lt:
        return ident.strip(), b"", 0, 0
    name = ident[:lt].strip()
    email = ident[lt + 1 : gt]
    rest = ident[gt + 1 :].split()
    when = 0
    tz = 0
    if rest:
        try:
            when = int(rest[0])
        except ValueError:
            when = 0
        if len(rest) > 1:
            tz = _tz_seconds(rest[1])
    return name, email, when, tz


def _decode(data: bytes, encoding: str = "utf-8") -> str:
    try:
        return data.decode(encoding, errors="replace")
    except LookupError:  # unknown encoding header
        return data.decode("utf-8", errors="replace")


_SETTERS = None


def _new_minor(
    checksum: str, date: int, tz_offset: int, author: str, email: str, desc: str, parents: tuple[str, ...]
) -> MinorVersion:
    """Build a MinorVersion about 3x faster than its frozen-dataclass ``__init__``.

    Walks and cache loads create tens of thousands of them; setting the slots
    through their descriptors skips ``object.__setattr__`` round trips.  The
    result is indistinguishable from ``MinorVersion(...)``.
    """
    global _SETTERS
    if _SETTERS is None:
        _SETTERS = tuple(
            getattr(MinorVersion, name).__set__
            for name in ("checksum", "date", "tz_offset", "author", "email", "desc", "parents")
        )
    s0, s1, s2, s3, s4, s5, s6 = _SETTERS
    obj = object.__new__(MinorVersion)
    s0(obj, checksum)
    s1(obj, date)
    s2(obj, tz_offset)
    s3(obj, author)
    s4(obj, email)
    s5(obj, desc)
    s6(obj, parents)
    return obj


def _parse_commit(sha: str, raw: bytes) -> tuple[int, MinorVersion]:
    """Parse a raw commit object; returns (committer time, MinorVersion).

    A fast path covers the canonical layout git writes (tree, parents,
    author, committer, no encoding header); anything else takes the general
    path, which gives the same result for canonical commits.
    """
    try:
        sep = raw.find(b"\n\n")
        header = raw[:sep] if sep >= 0 else raw
        a = header.find(b"\nauthor ")
        c = header.find(b"\ncommitter ", a)
        if a >= 0 and c >= 0 and b"\nencoding " not in header:
            lines = header[:a].split(b"\n")
            if all(line.startswith(b"parent ") for line in lines[1:]):
                ident, when, tz = header[a + 8 : c].rsplit(b" ", 2)
                lt = ident.find(b"<")
                if lt > 0 and ident.endswith(b">") and len(tz) == 5 and tz[1:].isdigit():
                    end = header.find(b"\n", c + 1)
                    committer = header[c + 11 :] if end < 0 else header[c + 11 : end]
                    ctime = int(committer.rsplit(b" ", 2)[1])
                    offset = int(tz[1:3]) * 3600 + int(tz[3:5]) * 60
                    message = raw[sep + 2 :].decode("utf-8", "replace").rstrip("\n") if sep >= 0 else ""
                    return ctime, _new_minor(
                        sha,
                        int(when),
                        -offset if tz[:1] == b"-" else offset,
                        ident[:lt].strip().decode("utf-8", "replace"),
                        ident[lt + 1 : -1].decode("utf-8", "replace"),
                        message,
                        tuple([line[7:].strip().decode("ascii") for line in lines[1:]]),
                    )
    except (ValueError, IndexError):
        pass
    return _parse_commit_general(sha, raw)


def _parse_commit_general(sha: str, raw: bytes) -> tuple[int, MinorVersion]:
    sep = raw.find(b"\n\n")
    if sep < 0:
        header, message = raw, b""
    else:
        header, message = raw[:sep], raw[sep + 2 :]
    parents: list[str] = []
    author = committer = b""
    encoding = "utf-8"
    for line in header.split(b"\n"):
        if line.startswith(b"parent "):
            parents.append(line[7:].strip().decode("ascii", errors="replace"))
        elif line.startswith(b"author "):
            author = line[7:]
        elif line.startswith(b"committer "):
            committer = line[10:]
        elif line.startswith(b"encoding "):
            encoding = line[9:].strip().decode("ascii", errors="replace") or "utf-8"
    name, email, date, tz = _split_ident(author)
    commit_time = _split_ident(committer)[2] if committer else date
    info = _new_minor(
        sha,
        date,
        tz,
        _decode(name, encoding),
        _decode(email, encoding),
        _decode(message, encoding).rstrip("\n"),
        tuple(parents),
    )
    return commit_time, info


def _valid_path_element(name: bytes) -> bool:
    """Reject tree entry names that could escape the destination directory."""
    if name in (b"", b".", b".."):
        return False
    if b"/" in name or b"\0" in name:
        return False
    return name.lower() != b".git"


def _blob_id(data: bytes, width: int = 40) -> bytes:
    header = b"blob %d\0" % len(data)
    digest = hashlib.sha256 if width == 64 else hashlib.sha1
    return digest(header + data).hexdigest().encode("ascii")


def _as_ns(value: Any) -> int:
    """An index entry time (tuple, int or float) in nanoseconds."""
    if isinstance(value, tuple):
        return int(value[0]) * 1_000_000_000 + int(value[1])
    return int(value * 1_000_000_000)


def _looks_like_repo(path: Path) -> bool:
    if os.path.lexists(path / ".git"):
        return True
    # a bare repository
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def find_git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that contains ``.git``.

    ``.git`` may be a directory or a gitfile (worktrees, submodules).  Returns
    None when there is none up to the filesystem root.
    """
    current = Path(start).absolute()
    if current.exists() and not current.is_dir():
        current = current.parent
    for candidate in (current, *current.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def init_repository(path: Path, *, bare: bool = False, params: dict[str, str] | None = None) -> bool:
    """Create a git repository at ``path`` (created as needed).

    Returns True when a repository was created and False when one already
    existed there (which is left untouched).  Known ``params``:
    ``initial-branch`` (name of the unborn branch HEAD points to) and
    ``description`` (text of the ``description`` file).  Any other key raises
    :class:`VcsError`.
    """
    from dulwich.repo import Repo

    params = dict(params or {})
    for key in params:
        if key not in _INIT_PARAMS:
            raise VcsError(
                f"unknown git init parameter '{key}'",
                hint=f"known parameters: {', '.join(_INIT_PARAMS)}",
            )
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise VcsError(f"cannot create a git repository at {path}: it is not a directory")
    if path.is_dir() and _looks_like_repo(path):
        return False
    branch = params.get("initial-branch")
    default_branch = branch.encode("utf-8") if branch else None
    if default_branch is not None:
        from dulwich.refs import check_ref_format

        if not check_ref_format(b"refs/heads/" + default_branch):
            raise VcsError(f"invalid initial branch name '{branch}'")
    try:
        path.mkdir(parents=True, exist_ok=True)
        if bare:
            repo = Repo.init_bare(str(path), default_branch=default_branch)
        else:
            repo = Repo.init(str(path), default_branch=default_branch)
        try:
            if "description" in params:
                control = Path(repo.controldir())
                atomic_write(control / "description", params["description"].rstrip("\n").encode() + b"\n")
        finally:
            repo.close()
    except OSError as exc:
        raise VcsError(f"cannot create a git repository at {path}: {exc.strerror or exc}") from exc
    return True


# --------------------------------------------------------------------------- the repository


class GitVcs:
    """A git repository opened through dulwich.

    Always close it (``with GitVcs(root) as vcs: ...`` or :meth:`close`).  With
    ``cache_dir`` the history walks are cached there, in files named
    ``history-<sha>.json``; at most :data:`HISTORY_CACHE_LIMIT` are kept.
    """

    def __init__(self, root: Path, cache_dir: Path | None = None) -> None:
        from dulwich.errors import NotGitRepository as DulwichNotGitRepository
        from dulwich.repo import Repo

        self.root = Path(root)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        try:
            self._repo: Repo | None = Repo(str(self.root))
        except (DulwichNotGitRepository, FileNotFoundError, NotADirectoryError, PermissionError) as exc:
            raise NotGitRepository(self.root) from exc
        self._closed = False

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        if not self._closed and self._repo is not None:
            self._closed = True
            self._repo.close()

    def __enter__(self) -> GitVcs:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GitVcs({str(self.root)!r})"

    @property
    def repo(self) -> Repo:
        if self._closed or self._repo is None:
            raise VcsError(f"the git repository at {self.root} was already closed")
        return self._repo

    @property
    def bare(self) -> bool:
        return bool(self.repo.bare)

    # ------------------------------------------------------------------ objects

    def _reader(self) -> Any:
        """A ``read(hex_sha: str) -> (type_num, bytes)`` that raises KeyError when missing.

        It asks the currently known packs directly and falls back to the
        object store (loose objects, alternates, packs that appeared since):
        the object store's own lookup re-checks the multi-pack index and the
        pack directory on every call, which dominates a long history walk.
        """
        store = self.repo.object_store
        fallback = store.get_raw
        try:
            packs = [(pack, _PackOffsets(pack), _map_pack(pack)) for pack in store.packs]
        except Exception:  # noqa: BLE001 - any trouble: the slow path still works
            packs = []
        unhexlify = binascii.unhexlify

        def read(sha: str) -> tuple[int, bytes]:
            if packs:
                try:
                    binary = unhexlify(sha)
                except (ValueError, binascii.Error):
                    raise KeyError(sha) from None
                for pack, offsets, mapped in packs:
                    try:
                        if mapped is not None:
                            found = _read_whole_object(mapped, offsets.of(binary))
                            if found is not None:
                                return found
                        return pack.get_raw(binary)
                    except KeyError:
                        continue
                    except Exception:  # noqa: BLE001 - a pack vanished (gc): let the store rescan
                        break
            return fallback(sha.encode("ascii"))

        return read

    def _raw(self, sha: str) -> tuple[int, bytes] | None:
        try:
            return self.repo.object_store.get_raw(sha.encode("ascii"))
        except (KeyError, AssertionError, ValueError):
            return None

    def _peel(self, sha: str, revision: str) -> str:
        """Follow annotated tags to the commit they name."""
        for _ in range(64):
            raw = self._raw(sha)
            if raw is None:
                raise InvalidRevision(revision)
            kind, data = raw
            if kind == _COMMIT:
                return sha
            if kind != _TAG:
                raise InvalidRevision(revision, "does not name a commit")
            target = None
            for line in data.split(b"\n"):
                if line.startswith(b"object "):
                    target = line[7:].strip().decode("ascii")
                    break
                if not line:
                    break
            if target is None:
                raise InvalidRevision(revision, "points at a malformed tag")
            sha = target
        raise InvalidRevision(revision, "is a chain of too many nested tags")

    def _commit(self, sha: str, revision: str | None = None) -> tuple[int, MinorVersion]:
        raw = self._raw(sha)
        if raw is None or raw[0] != _COMMIT:
            raise InvalidRevision(revision or sha)
        return _parse_commit(sha, raw[1])

    def _commit_tree_id(self, sha: str) -> str:
        raw = self._raw(sha)
        if raw is None or raw[0] != _COMMIT:
            raise InvalidRevision(sha)
        first = raw[1].split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            raise VcsError(f"commit {sha} is malformed: it names no tree")
        return first[5:].strip().decode("ascii")

    # ------------------------------------------------------------------ refs

    def _head_contents(self) -> bytes | None:
        return self.repo.refs.read_ref(b"HEAD")

    def _head_sha(self) -> str | None:
        try:
            return self.repo.refs[b"HEAD"].decode("ascii")
        except KeyError:
            return None

    def head(self) -> str:
        """Full sha of the commit HEAD points to."""
        sha = self._head_sha()
        if sha is None:
            raise EmptyRepository(self.root)
        return sha

    def major_version(self) -> str:
        """The current branch's short name, or ``HEAD`` when detached."""
        contents = self._head_contents() or b""
        if contents.startswith(_SYMREF):
            target = contents[len(_SYMREF) :].strip()
            if target.startswith(b"refs/heads/"):
                return target[len(b"refs/heads/") :].decode("utf-8", errors="replace")
            return target.decode("utf-8", errors="replace")
        return "HEAD"

    def walk_major_versions(self) -> Iterator[str]:
        """Names of the local branches, sorted."""
        names = self.repo.refs.keys(base=b"refs/heads/")
        yield from sorted(name.decode("utf-8", errors="replace") for name in names)

    def _lookup_ref(self, name: str) -> str | None:
        from dulwich.refs import check_ref_format

        if not name or any(ch in name for ch in " ~^:?*[\\") or ".." in name or "@{" in name:
            return None
        encoded = name.encode("utf-8")
        candidates: list[bytes] = []
        if name == "HEAD" or re.fullmatch(r"[A-Z_]+", name) or name.startswith("refs/"):
            candidates.append(encoded)
        for pattern in (b"refs/%s", b"refs/tags/%s", b"refs/heads/%s", b"refs/remotes/%s", b"refs/remotes/%s/HEAD"):
            candidates.append(pattern % encoded)
        for ref in candidates:
            if ref != b"HEAD" and ref.startswith(b"refs/") and not check_ref_format(ref):
                continue
            try:
                sha = self.repo.refs[ref]
            except (KeyError, ValueError, OSError):
                continue
            text = sha.decode("ascii", errors="replace")
            if _HEX40.fullmatch(text):
                return text.lower()
        return None

    def _resolve_short(self, prefix: str, revision: str) -> str:
        store = self.repo.object_store
        matches = {m.decode("ascii") for m in store.iter_prefix(prefix.lower().encode("ascii"))}
        if not matches:
            raise InvalidRevision(revision)
        commits: set[str] = set()
        for sha in matches:
            with contextlib.suppress(InvalidRevision):
                commits.add(self._peel(sha, revision))
        if not commits:
            raise InvalidRevision(revision, "does not name a commit")
        if len(commits) > 1:
            shown = ", ".join(sorted(c[:12] for c in commits)[:5])
            raise InvalidRevision(
                revision, f"is ambiguous: it matches {len(commits)} commits ({shown}); use more characters"
            )
        return commits.pop()

    def _resolve_base(self, base: str, revision: str) -> str:
        if base == "@":
            base = "HEAD"
        if _HEX40.fullmatch(base):
            sha = base.lower()
            if self._raw(sha) is None:
                raise InvalidRevision(revision)
            return self._peel(sha, revision)
        sha = self._lookup_ref(base)
        if sha is not None:
            return self._peel(sha, revision)
        if base == "HEAD":
            raise EmptyRepository(self.root)
        if len(base) >= _MIN_SHORT_SHA and _HEX_SHORT.fullmatch(base):
            return self._resolve_short(base, revision)
        raise InvalidRevision(revision)

    def massage(self, revision: str) -> str:
        """Resolve a revision expression to the full sha of a commit.

        Supports ``HEAD`` (and ``@``), branch, tag and remote names, full
        refnames, full and unique short shas (at least 4 hex digits), each
        followed by any chain of ``~N``, ``~``, ``^N``, ``^`` and ``^{}`` /
        ``^{commit}``.
        """
        if not isinstance(revision, str):
            raise InvalidRevision(str(revision))
        text = revision.strip()
        if not text:
            raise InvalidRevision(revision)
        cut = len(text)
        for marker in ("~", "^"):
            pos = text.find(marker)
            if pos >= 0:
                cut = min(cut, pos)
        base, suffixes = text[:cut], text[cut:]
        if not base:
            raise InvalidRevision(revision)
        steps: list[tuple[str, str]] = []
        pos = 0
        while pos < len(suffixes):
            match = _SUFFIX.match(suffixes, pos)
            if match is None:
                raise InvalidRevision(revision)
            if match.group(1) is not None:
                steps.append(("~", match.group(1)))
            elif match.group(2) is not None:
                steps.append(("{", match.group(2)))
            else:
                steps.append(("^", match.group(3)))
            pos = match.end()

        sha = self._resolve_base(base, revision)
        for kind, value in steps:
            if kind == "{":
                if value not in ("", "commit"):
                    raise InvalidRevision(revision, "does not name a commit")
                continue
            count = int(value) if value else 1
            if kind == "~":
                for _ in range(count):
                    parents = self._commit(sha, revision)[1].parents
                    if not parents:
                        raise InvalidRevision(revision, "reaches beyond the root commit")
                    sha = parents[0]
            elif count:
                parents = self._commit(sha, revision)[1].parents
                if count > len(parents):
                    have = f"{len(parents)} parent{'' if len(parents) == 1 else 's'}"
                    raise InvalidRevision(revision, f"asks for parent {count} of a commit with {have}")
                sha = parents[count - 1]
        # make sure the result exists and is a commit (parents may be missing in shallow clones)
        self._commit(sha, revision)
        return sha

    def check_minor_version_validity(self, revision: str) -> None:
        """Raise :class:`InvalidRevision` unless ``revision`` names a commit."""
        self.massage(revision)

    def minor_info(self, sha: str) -> MinorVersion:
        """Everything perun keeps about one commit (any revision is accepted)."""
        if isinstance(sha, str) and _HEX40.fullmatch(sha):
            raw = self._raw(sha.lower())
            if raw is not None and raw[0] == _COMMIT:
                return _parse_commit(sha.lower(), raw[1])[1]
        return self._commit(self.massage(sha), sha)[1]

    # ------------------------------------------------------------------ history

    def walk_minor_versions(self, start: str) -> Iterator[MinorVersion]:
        """``start`` and all its ancestors, each once, in ``git log`` order.

        That is the order of a priority queue keyed by committer time (newest
        first, ties in discovery order) in which a commit enters the queue when
        its first child leaves it.  With ``cache_dir`` the result is stored and
        reused, also for walks from descendants of a cached start.
        """
        return self._walk_from(self.massage(start))

    def _walk_from(self, head: str) -> Iterator[MinorVersion]:
        cached_names = self._cached_starts()
        if head in cached_names:
            cached = self._load_history(head)
            if cached is not None:
                yield from cached
                return
        result: list[MinorVersion] | None = [] if self.cache_dir is not None else None
        for info in self._walk(head, cached_names):
            if result is not None:
                result.append(info)
            yield info
        if result is not None:
            self._store_history(head, result)

    def _walk(self, head: str, cached_names: set[str]) -> Iterator[MinorVersion]:
        read = self._reader()
        heappush, heappop = heapq.heappush, heapq.heappop
        raw = self._raw(head)
        if raw is None or raw[0] != _COMMIT:
            raise InvalidRevision(head)
        ctime, info = _parse_commit(head, raw[1])
        pending: dict[str, MinorVersion] = {head: info}
        seen: set[str] = {head}
        heap: list[tuple[int, int, str]] = [(-ctime, 0, head)]
        counter = 1
        while heap:
            if len(heap) == 1 and counter > 1 and heap[0][2] in cached_names:
                # Everything left is the history of one commit that was cached:
                # nothing seen so far is its ancestor, so the rest of the walk is
                # exactly its cached walk.
                cached = self._load_history(heap[0][2])
                if cached is not None and not any(c.checksum in seen for c in cached[1:]):
                    yield from cached
                    return
            _, _, sha = heappop(heap)
            info = pending.pop(sha)
            yield info
            for parent in info.parents:
                if parent in seen:
                    continue
                seen.add(parent)
                try:
                    kind, data = read(parent)
                except (KeyError, AssertionError):
                    continue  # missing parent: shallow clone boundary
                if kind != _COMMIT:
                    continue
                ptime, pinfo = _parse_commit(parent, data)
                pending[parent] = pinfo
                heappush(heap, (-ptime, counter, parent))
                counter += 1

    # -------------------------------------------------------------- history cache

    def _cache_file(self, sha: str) -> Path:
        assert self.cache_dir is not None
        return self.cache_dir / f"history-{sha}.json"

    def _cached_starts(self) -> set[str]:
        if self.cache_dir is None:
            return set()
        try:
            names = os.listdir(self.cache_dir)
        except OSError:
            return set()
        found = set()
        for name in names:
            match = _CACHE_NAME.fullmatch(name)
            if match:
                found.add(match.group(1))
        return found

    def _load_history(self, sha: str) -> list[MinorVersion] | None:
        """The cached walk from ``sha``, or None if missing, damaged or of another format."""
        path = self._cache_file(sha)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        header = _CACHE_HEADER.match(data)
        if header is None or int(header.group(1)) != HISTORY_CACHE_VERSION or not data.endswith(b"}"):
            return None
        if header.group(3).decode("ascii") != sha:
            return None
        commits = data[header.end() : -1]
        if hashlib.sha1(commits).hexdigest().encode("ascii") != header.group(2):
            return None
        try:
            rows = json.loads(commits)
            result = [_new_minor(r[0], r[1], r[2], r[3], r[4], r[5], tuple(r[6])) for r in rows]
        except (ValueError, KeyError, TypeError, IndexError):
            return None
        if not result or result[0].checksum != sha:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # most recently used
        return result

    def _store_history(self, sha: str, history: list[MinorVersion]) -> None:
        """Write the walk from ``sha`` as one JSON document.

        Layout (a single line of JSON)::

            {"format":1,"checksum":"<sha1 of the commits array>","start":"<sha>","commits":[...]}

        with one ``[sha, date, tz_offset, author, email, desc, [parents]]``
        row per commit in walk order.  The checksum covers the exact bytes of
        the ``commits`` array, so it can be verified before parsing.
        """
        if self.cache_dir is None:
            return
        rows = [[m.checksum, m.date, m.tz_offset, m.author, m.email, m.desc, m.parents] for m in history]
        commits = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        checksum = hashlib.sha1(commits).hexdigest()
        head = f'{{"format":{HISTORY_CACHE_VERSION},"checksum":"{checksum}","start":"{sha}","commits":'
        try:
            atomic_write(self._cache_file(sha), head.encode("ascii") + commits + b"}")
        except OSError:
            return  # a cache that cannot be written is only a missed speed-up
        self._prune_cache()

    def _prune_cache(self) -> None:
        assert self.cache_dir is not None
        entries = []
        for sha in self._cached_starts():
            path = self._cache_file(sha)
            with contextlib.suppress(OSError):
                entries.append((path.stat().st_mtime_ns, str(path)))
        entries.sort(reverse=True)
        for _, path in entries[HISTORY_CACHE_LIMIT:]:
            with contextlib.suppress(OSError):
                os.unlink(path)

    # ------------------------------------------------------------------ work tree

    def _worktree(self) -> bytes:
        if self.bare:
            raise VcsError(f"the git repository at {self.root} is bare: it has no working tree")
        return os.fsencode(self.repo.path)

    def _open_index(self) -> Any:
        from dulwich.errors import NoIndexPresent
        from dulwich.index import Index

        repo = self.repo
        try:
            return repo.open_index()
        except NoIndexPresent:
            return Index(repo.index_path(), read=False)
        except (OSError, ValueError, AssertionError) as exc:
            raise VcsError(f"cannot read the git index of {self.root}: {exc}") from exc

    def _filemode(self) -> bool:
        try:
            return self.repo.get_config().get_boolean(b"core", b"filemode", True)
        except (KeyError, ValueError):
            return True

    def _tree_of_entries(self, entries: Iterable[tuple[bytes, bytes, int]]) -> bytes:
        """The id the tree of these (path, sha, mode) entries would have, computed in memory."""
        from dulwich.index import commit_tree
        from dulwich.object_store import MemoryObjectStore

        return commit_tree(MemoryObjectStore(), entries)

    def _flatten_tree(self, tree_id: bytes | None) -> dict[bytes, tuple[int, bytes]]:
        """path -> (mode, sha) of every non-tree entry below ``tree_id``."""
        from dulwich.objects import Tree

        result: dict[bytes, tuple[int, bytes]] = {}
        if tree_id is None:
            return result
        store = self.repo.object_store
        stack: list[tuple[bytes, bytes]] = [(b"", tree_id)]
        while stack:
            prefix, tid = stack.pop()
            tree = store[tid]
            if not isinstance(tree, Tree):
                raise VcsError(f"object {tid.decode()} is not a tree")
            for name, mode, sha in tree.iteritems():
                if not _valid_path_element(name):
                    raise VcsError(f"tree {tid.decode()} contains an unsafe path {(prefix + name)!r}")
                path = prefix + name
                if stat.S_ISDIR(mode):
                    stack.append((path + b"/", sha))
                else:
                    result[path] = (mode, sha)
        return result

    def _has_staged_changes(self, index: Any) -> bool:
        from dulwich.index import ConflictedIndexEntry, cleanup_mode

        entries = []
        for path, entry in index.iteritems():
            if isinstance(entry, ConflictedIndexEntry):
                return True
            entries.append((path, entry.sha, cleanup_mode(entry.mode)))
        head = self._head_sha()
        if head is None:
            return bool(entries)
        head_tree = self._commit_tree_id(head).encode("ascii")
        return self._tree_of_entries(entries) != head_tree

    def _has_unstaged_changes(self, index: Any, worktree: bytes) -> bool:
        from dulwich.index import ConflictedIndexEntry, read_submodule_head

        filemode = self._filemode()
        try:
            index_mtime = os.stat(index.path).st_mtime_ns
        except OSError:
            index_mtime = 0
        for path, entry in index.iteritems():
            if isinstance(entry, ConflictedIndexEntry):
                return True
            if entry.skip_worktree:
                continue
            full = os.path.join(worktree, path)
            try:
                st = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                return True  # deleted
            mode = entry.mode
            if stat.S_IFMT(mode) == _S_IFGITLINK:
                if not stat.S_ISDIR(st.st_mode):
                    return True
                sub_head = read_submodule_head(full)
                if sub_head is not None and sub_head != entry.sha:
                    return True
                continue
            if stat.S_ISLNK(mode):
                if not stat.S_ISLNK(st.st_mode):
                    return True
            else:
                if not stat.S_ISREG(st.st_mode):
                    return True
                if filemode and bool(mode & 0o100) != bool(st.st_mode & 0o100):
                    return True
            if st.st_size != entry.size and entry.size != 0:
                return True
            entry_mtime = _as_ns(entry.mtime)
            if (
                st.st_size == entry.size
                and st.st_mtime_ns == entry_mtime
                and st.st_ctime_ns == _as_ns(entry.ctime)
                and entry_mtime < index_mtime
            ):
                continue  # stat data unchanged and not racily clean
            try:
                if stat.S_ISLNK(st.st_mode):
                    data = os.fsencode(os.readlink(full))
                else:
                    with open(full, "rb") as handle:
                        data = handle.read()
            except OSError:
                return True
            if _blob_id(data, len(entry.sha)) != entry.sha:
                return True
        return False

    def is_dirty(self) -> bool:
        """True when tracked files have staged or unstaged changes.

        Untracked files do not count.  A bare repository is never dirty.
        Content filters (autocrlf, smudge/clean) are not applied.
        """
        if self.bare:
            return False
        worktree = self._worktree()
        index = self._open_index()
        return self._has_staged_changes(index) or self._has_unstaged_changes(index, worktree)

    def export_tree(self, sha: str, dest: Path) -> None:
        """Write the tree of commit ``sha`` into the empty (or missing) directory ``dest``.

        Regular files keep their executable bit, symlinks are recreated,
        submodules become empty directories.  The repository itself (working
        tree, index, refs, stash) is not touched.
        """
        from dulwich.objects import Tree

        commit = self.massage(sha)
        tree_id = self._commit_tree_id(commit).encode("ascii")
        dest = Path(dest)
        if dest.exists() or dest.is_symlink():
            if not dest.is_dir() or dest.is_symlink():
                raise VcsError(f"cannot export {commit[:12]} to {dest}: it is not a directory")
            if any(dest.iterdir()):
                raise VcsError(f"cannot export {commit[:12]} to {dest}: the directory is not empty")
        else:
            dest.mkdir(parents=True)
        store = self.repo.object_store
        stack: list[tuple[bytes, bytes]] = [(os.fsencode(dest), tree_id)]
        try:
            while stack:
                directory, tid = stack.pop()
                tree = store[tid]
                if not isinstance(tree, Tree):
                    raise VcsError(f"object {tid.decode()} is not a tree")
                for name, mode, entry_sha in tree.iteritems():
                    if not _valid_path_element(name):
                        raise VcsError(f"commit {commit[:12]} contains an unsafe path {name!r}")
                    target = os.path.join(directory, name)
                    if stat.S_ISDIR(mode):
                        os.mkdir(target)
                        stack.append((target, entry_sha))
                    elif stat.S_IFMT(mode) == _S_IFGITLINK:
                        os.mkdir(target)
                    elif stat.S_ISLNK(mode):
                        os.symlink(store.get_raw(entry_sha)[1], target)
                    else:
                        self._write_blob(target, entry_sha, mode)
        except KeyError as exc:
            raise VcsError(f"cannot export {commit[:12]}: object {exc} is missing from the repository") from exc
        except OSError as exc:
            raise VcsError(f"cannot export {commit[:12]} to {dest}: {exc}") from exc

    def _write_blob(self, target: bytes, blob_sha: bytes, mode: int) -> None:
        kind, data = self.repo.object_store.get_raw(blob_sha)
        if kind != _BLOB:
            raise VcsError(f"object {blob_sha.decode()} is not a blob")
        perm = 0o777 if mode & 0o100 else 0o666
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), perm)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)

    # ------------------------------------------------------------------ HEAD

    def _detach_head(self, sha: str) -> None:
        from dulwich.file import GitFile

        with GitFile(os.path.join(self.repo.controldir(), "HEAD"), "wb") as handle:
            handle.write(sha.encode("ascii") + b"\n")

    def save_state(self) -> SavedState:
        """Remember where HEAD points (and whether the tree is dirty)."""
        contents = (self._head_contents() or b"").strip()
        dirty = self.is_dirty()
        if contents.startswith(_SYMREF):
            ref = contents[len(_SYMREF) :].strip().decode("utf-8")
            return SavedState(ref=ref, sha=self._head_sha(), dirty=dirty)
        if not contents:
            raise EmptyRepository(self.root)
        return SavedState(ref=None, sha=contents.decode("ascii"), dirty=dirty)

    def restore_state(self, state: SavedState) -> None:
        """Point HEAD back where ``state`` recorded; files are never touched."""
        try:
            if state.ref is not None:
                self.repo.refs.set_symbolic_ref(b"HEAD", state.ref.encode("utf-8"))
            elif state.sha is not None:
                if not _HEX40.fullmatch(state.sha):
                    raise InvalidRevision(state.sha)
                self._detach_head(state.sha.lower())
            else:
                raise VcsError("the saved state records neither a branch nor a commit")
        except (OSError, ValueError) as exc:
            raise VcsError(f"cannot point HEAD back to {state.ref or state.sha}: {exc}") from exc

    def checkout(self, sha: str) -> None:
        """Check out commit ``sha`` with a detached HEAD.

        The working tree and index are updated; untracked files are never
        deleted or overwritten (the checkout is refused instead), and a dirty
        working tree is refused.
        """
        from dulwich.index import (
            ResolveUndoExtension,
            TreeExtension,
            UntrackedExtension,
            index_entry_from_stat,
        )

        target = self.massage(sha)
        worktree = self._worktree()
        if self.is_dirty():
            raise VcsError(
                f"cannot check out {target[:12]}: the working tree has uncommitted changes",
                hint="commit or stash them first",
            )
        head = self._head_sha()
        old = self._flatten_tree(self._commit_tree_id(head).encode("ascii") if head else None)
        new = self._flatten_tree(self._commit_tree_id(target).encode("ascii"))
        to_remove = sorted(p for p in old if p not in new)
        to_write = sorted(p for p, value in new.items() if old.get(p) != value)
        self._check_overwrites(worktree, old, new, to_write, target)

        def full(path: bytes) -> bytes:
            return os.path.join(worktree, path)

        try:
            for path in to_remove:
                fpath = full(path)
                if stat.S_IFMT(old[path][0]) == _S_IFGITLINK:
                    with contextlib.suppress(OSError):
                        os.rmdir(fpath)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(fpath)
                self._prune_empty_dirs(worktree, path)
            for path in to_write:
                mode, blob_sha = new[path]
                fpath = full(path)
                parent = os.path.dirname(fpath)
                if parent:
                    os.makedirs(parent, exist_ok=True)
                if stat.S_IFMT(mode) == _S_IFGITLINK:
                    if os.path.lexists(fpath) and not os.path.isdir(fpath):
                        os.unlink(fpath)
                    os.makedirs(fpath, exist_ok=True)
                    continue
                if os.path.lexists(fpath):
                    os.unlink(fpath)
                if stat.S_ISLNK(mode):
                    os.symlink(self.repo.object_store.get_raw(blob_sha)[1], fpath)
                else:
                    self._write_blob(fpath, blob_sha, mode)
        except OSError as exc:
            raise VcsError(f"cannot check out {target[:12]}: {exc}") from exc

        index = self._open_index()
        for path in to_remove:
            with contextlib.suppress(KeyError):
                del index[path]
        for path in to_write:
            mode, blob_sha = new[path]
            st = os.lstat(full(path))
            index[path] = index_entry_from_stat(st, blob_sha, mode)
        # cached trees, undo and untracked caches describe the old index: drop them
        index._extensions = [
            ext
            for ext in getattr(index, "_extensions", [])
            if not isinstance(ext, (TreeExtension, ResolveUndoExtension, UntrackedExtension))
        ]
        try:
            index.write()
            self._detach_head(target)
        except OSError as exc:
            raise VcsError(f"cannot check out {target[:12]}: {exc}") from exc

    def _check_overwrites(
        self,
        worktree: bytes,
        old: dict[bytes, tuple[int, bytes]],
        new: dict[bytes, tuple[int, bytes]],
        to_write: list[bytes],
        target: str,
    ) -> None:
        """Refuse a checkout that would clobber untracked files."""
        blocked: list[bytes] = []
        old_dirs = {p[: i] for p in old for i in range(len(p)) if p[i : i + 1] == b"/"}
        for path in to_write:
            if path not in old:
                fpath = os.path.join(worktree, path)
                if os.path.lexists(fpath):
                    if path in old_dirs and os.path.isdir(fpath) and not os.path.islink(fpath):
                        blocked.extend(self._untracked_below(worktree, path, old))
                    elif not (stat.S_IFMT(new[path][0]) == _S_IFGITLINK and os.path.isdir(fpath)):
                        blocked.append(path)
            parts = path.split(b"/")
            for depth in range(1, len(parts)):
                prefix = b"/".join(parts[:depth])
                fprefix = os.path.join(worktree, prefix)
                is_non_dir = os.path.lexists(fprefix) and (os.path.islink(fprefix) or not os.path.isdir(fprefix))
                # a file in the way is fine only when it is tracked and goes away with this checkout
                if is_non_dir and not (prefix in old and prefix not in new):
                    blocked.append(prefix)
        if blocked:
            shown = ", ".join(sorted({os.fsdecode(b) for b in blocked})[:5])
            raise VcsError(
                f"cannot check out {target[:12]}: untracked files would be overwritten: {shown}",
                hint="move or remove them first",
            )

    @staticmethod
    def _untracked_below(worktree: bytes, directory: bytes, tracked: dict[bytes, Any]) -> list[bytes]:
        found = []
        base = os.path.join(worktree, directory)
        for current, dirs, files in os.walk(base):
            rel_dir = os.path.relpath(current, worktree)
            for name in files + [d for d in dirs if os.path.islink(os.path.join(current, d))]:
                rel = os.path.join(rel_dir, name)
                if rel not in tracked:
                    found.append(rel)
        return found

    @staticmethod
    def _prune_empty_dirs(worktree: bytes, path: bytes) -> None:
        parent = os.path.dirname(path)
        while parent:
            try:
                os.rmdir(os.path.join(worktree, parent))
            except OSError:
                return
            parent = os.path.dirname(parent)
