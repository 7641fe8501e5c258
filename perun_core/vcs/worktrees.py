"""The working tree and HEAD: dirtiness, exporting a commit's tree, checkout and restoring state; part of GitVcs."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import EmptyRepository, InvalidRevision, VcsError
from .constants import _BLOB
from .commits import SavedState, _as_ns, _blob_id, _valid_path_element
from .constants import _HEX40, _SYMREF, _S_IFGITLINK
from .statecache import load_state, state_document, store_state


class WorktreeMixin:
    """Working tree, index and HEAD changes; mixed into :class:`~perun_core.vcs.GitVcs`."""

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
        head = self._head_sha()
        key = {"head": head, "index": self.ref_files.stamp("index"), "config": self.ref_files.stamp("config")}
        if self.cache_dir is not None and head is not None:
            known = load_state(self.cache_dir, self.root, key)
            if known is not None:
                self._minors[head] = known[1]
                return known[0]
        started = time.time_ns()
        worktree = self._worktree()
        index = self._open_index()
        dirty = self._has_staged_changes(index) or self._has_unstaged_changes(index, worktree)
        if self.cache_dir is not None and head is not None and self.ref_files.git_dir is not None:
            self._remember_state(key, index, dirty, started)
        return dirty

    def _remember_state(self, key: dict[str, Any], index: Any, dirty: bool, started: int) -> None:
        """Keep the answer of :meth:`is_dirty` for the next run (see :mod:`.statecache`)."""
        from dulwich.index import ConflictedIndexEntry

        paths = []
        for path, entry in index.iteritems():
            if isinstance(entry, ConflictedIndexEntry) or stat.S_IFMT(entry.mode) == _S_IFGITLINK:
                return  # conflicts and submodules: asked afresh every time
            paths.append(path)
        try:
            head = self._commit(key["head"])[1]
        except InvalidRevision:
            return
        document = state_document(self.root, key, paths, dirty, head, started)
        if document is not None:
            store_state(self.cache_dir, document)

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

    def file_at(self, sha: str, path: str) -> bytes:
        """The content of the file ``path`` (relative to the repository's root) in the tree of commit ``sha``.

        Raises InvalidRevision, and VcsError when the commit has no such file
        (or ``path`` names a directory, a submodule or leaves the tree).
        """
        from dulwich.objects import Tree

        commit = self.massage(sha)
        parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
        if not parts or any(not _valid_path_element(os.fsencode(part)) for part in parts):
            raise VcsError(f"{path!r} is no file path inside the repository")
        store = self.repo.object_store
        entry_id, mode = self._commit_tree_id(commit).encode("ascii"), stat.S_IFDIR
        try:
            for part in parts:
                tree = store[entry_id] if stat.S_ISDIR(mode) else None
                if not isinstance(tree, Tree) or os.fsencode(part) not in tree:
                    raise VcsError(f"commit {commit[:12]} has no file {'/'.join(parts)}")
                mode, entry_id = tree[os.fsencode(part)]
            if not stat.S_ISREG(mode):
                raise VcsError(f"{'/'.join(parts)} in commit {commit[:12]} is not a regular file")
            kind, data = store.get_raw(entry_id)
        except KeyError as exc:
            raise VcsError(f"object {exc} of commit {commit[:12]} is missing from the repository") from exc
        if kind != _BLOB:
            raise VcsError(f"object {entry_id.decode()} of commit {commit[:12]} is not a blob")
        return data

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
