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
invalidation, only an integrity check."""

from __future__ import annotations

import binascii
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotGitRepository, VcsError
from ..atomic import atomic_write
from .constants import _INIT_PARAMS
from .packs import _PackOffsets, _map_pack, _read_whole_object
from .reffiles import RefFiles

from .commits import MinorVersion, SavedState
from .history import HistoryMixin
from .revisions import RevisionsMixin
from .worktrees import WorktreeMixin

if TYPE_CHECKING:  # pragma: no cover - typing only
    from dulwich.repo import Repo

__all__ = [
    "GitVcs",
    "MinorVersion",
    "SavedState",
    "find_git_root",
    "init_repository",
    "is_bare_repository",
]


def _looks_like_repo(path: Path) -> bool:
    if os.path.lexists(path / ".git"):
        return True
    # a bare repository
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def is_bare_repository(path: Path) -> bool:
    """Whether ``path`` is a bare git repository (its objects and refs at the top, no ``.git``, no working tree)."""
    path = Path(path)
    return path.is_dir() and not os.path.lexists(path / ".git") and _looks_like_repo(path)


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


class GitVcs(RevisionsMixin, HistoryMixin, WorktreeMixin):
    """A git repository opened through dulwich.

    Always close it (``with GitVcs(root) as vcs: ...`` or :meth:`close`).  With
    ``cache_dir`` the history walks are cached there, in files named
    ``history-<sha>.json``; at most :data:`HISTORY_CACHE_LIMIT` are kept.
    """

    def __init__(self, root: Path, cache_dir: Path | None = None) -> None:
        self.root = Path(root)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._refs = RefFiles(self.root)
        self._repo: Repo | None = None
        self._open_lock = threading.Lock()
        self._closed = False
        #: commits already parsed (or read from the worktree state cache) by sha; commits never change
        self._minors: dict[str, MinorVersion] = {}
        if self._refs.git_dir is None:
            self._open()  # a layout the ref readers do not know: dulwich decides, and names what is wrong

    def _open(self) -> None:
        """Open the repository through dulwich (on first use: ``status`` and ``log`` often need none of it)."""
        from dulwich.errors import NotGitRepository as DulwichNotGitRepository
        from dulwich.repo import Repo

        try:
            self._repo = Repo(str(self.root))
        except (DulwichNotGitRepository, FileNotFoundError, NotADirectoryError, PermissionError) as exc:
            raise NotGitRepository(self.root) from exc
        self._refresh_packs()

    def _refresh_packs(self) -> None:
        """Let the object store list the pack directory now.

        dulwich fills its pack cache lazily and is not thread-safe while doing so:
        when two threads (the demo's two collection phases, the TUI's workers)
        look up their first object at once, one can see an empty cache, find the
        pack already claimed by the other and report a present commit as
        missing.  Listing the packs here, and again before giving up on an
        object, closes that window.
        """
        try:
            self.repo.object_store.packs  # noqa: B018 - the property rescans the pack directory
        except Exception:  # noqa: BLE001 - a damaged pack is reported by the lookup that meets it
            pass

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._repo is not None:
                self._repo.close()

    def __enter__(self) -> GitVcs:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GitVcs({str(self.root)!r})"

    @property
    def ref_files(self) -> RefFiles:
        """The light readers of HEAD and refs (see :mod:`.reffiles`); closed like the repository."""
        if self._closed:
            raise VcsError(f"the git repository at {self.root} was already closed")
        return self._refs

    @property
    def repo(self) -> Repo:
        if self._closed:
            raise VcsError(f"the git repository at {self.root} was already closed")
        if self._repo is None:
            with self._open_lock:  # the TUI's workers share one instance
                if self._repo is None:
                    self._open()
        assert self._repo is not None
        return self._repo

    @property
    def bare(self) -> bool:
        if self._refs.git_dir is not None:
            return self._refs.bare
        return bool(self.repo.bare)

    def shallow_commits(self) -> list[str]:
        """The commits a shallow clone ends at (their parents are missing); empty for a whole history."""
        return sorted(sha.decode() for sha in self.repo.get_shallow())

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
        for attempt in range(2):
            try:
                return self.repo.object_store.get_raw(sha.encode("ascii"))
            except KeyError:
                if attempt == 0:
                    self._refresh_packs()
            except (AssertionError, ValueError):
                return None
        return None
