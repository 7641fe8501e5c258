"""Build real git repositories for tests, with dulwich only (never the git binary).

``make_repo`` creates a repository with a described history whose working
tree and index match the last commit (so ``is_dirty`` is False);
``commit_files`` adds one commit on the current branch; ``fast_linear_history``
writes many commits straight into a pack for benchmarks.  Every ``Repo``
opened here is closed before returning.
"""

from __future__ import annotations

import os
import stat
import time as _time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dulwich.index import Index, index_entry_from_stat
from dulwich.objects import Blob, Commit, Tag, Tree
from dulwich.repo import Repo

DEFAULT_AUTHOR = "Perun Tester <tester@example.com>"
BASE_TIME = 1_700_000_000
TIME_STEP = 60

FileContent = bytes | str | None
# a file spec value may also be ("symlink", target) or ("exec", content)


def _encode(content: Any) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else bytes(content)


def _entry_for(content: Any) -> tuple[int, bytes]:
    """(git mode, blob data) for one file spec value."""
    if isinstance(content, tuple):
        kind, value = content
        if kind == "symlink":
            return 0o120000, _encode(value)
        if kind == "exec":
            return 0o100755, _encode(value)
        raise ValueError(f"unknown file kind {kind!r}")
    return 0o100644, _encode(content)


def _open_or_init(path: Path, branch: str) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    if (path / ".git").exists():
        return Repo(str(path))
    return Repo.init(str(path), default_branch=branch.encode("utf-8"))


def _commit_time(repo: Repo, parents: list[bytes]) -> int:
    times = [repo[p].commit_time for p in parents]
    return max(times) + TIME_STEP if times else BASE_TIME


def _head_files(repo: Repo, commit_id: bytes | None) -> dict[str, tuple[int, bytes]]:
    """path -> (mode, data) of everything in a commit's tree."""
    if commit_id is None:
        return {}
    result: dict[str, tuple[int, bytes]] = {}
    for entry in repo.object_store.iter_tree_contents(repo[commit_id].tree):
        result[entry.path.decode("utf-8")] = (entry.mode, repo.object_store[entry.sha].as_raw_string())
    return result


def _write_worktree_file(root: Path, relpath: str, mode: int, data: bytes) -> os.stat_result:
    target = root / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    if stat.S_ISLNK(mode):
        os.symlink(data, target)
    else:
        target.write_bytes(data)
        target.chmod(0o755 if mode & 0o100 else 0o644)
    return os.lstat(target)


def _remove_worktree_file(root: Path, relpath: str) -> None:
    target = root / relpath
    if target.is_symlink() or target.is_file():
        target.unlink()
    parent = target.parent
    while parent != root:
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def _store_tree(repo: Repo, files: Mapping[str, tuple[int, bytes]]) -> tuple[bytes, dict[str, bytes]]:
    """Add blobs and trees for ``files``; returns (tree id, path -> blob id)."""
    objects: list[Any] = []
    blob_ids: dict[str, bytes] = {}
    trees: dict[str, Tree] = {"": Tree()}
    for relpath in sorted(files):
        mode, data = files[relpath]
        blob = Blob.from_string(data)
        objects.append(blob)
        blob_ids[relpath] = blob.id
        parts = relpath.split("/")
        for depth in range(1, len(parts)):
            trees.setdefault("/".join(parts[:depth]), Tree())
        trees["/".join(parts[:-1])].add(parts[-1].encode("utf-8"), mode, blob.id)
    # deepest directories first, so a subtree's id is final before its parent uses it
    for directory in sorted(trees, key=lambda d: d.count("/") + (1 if d else 0), reverse=True):
        if not directory:
            continue
        objects.append(trees[directory])
        parent, _, name = directory.rpartition("/")
        trees[parent].add(name.encode("utf-8"), stat.S_IFDIR, trees[directory].id)
    objects.append(trees[""])
    _add_objects(repo, objects)
    return trees[""].id, blob_ids


def _add_objects(repo: Repo, objects: list[Any]) -> None:
    """Loose objects for small commits; one pack when there are many (file creation is slow)."""
    if len(objects) > 64:
        repo.object_store.add_objects([(obj, None) for obj in objects])
    else:
        for obj in objects:
            repo.object_store.add_object(obj)


def _sync_worktree(repo: Repo, files: Mapping[str, tuple[int, bytes]], blob_ids: Mapping[str, bytes]) -> None:
    """Make the working tree and index hold exactly ``files`` (untracked files stay)."""
    root = Path(repo.path)
    index = repo.open_index() if repo.has_index() else Index(repo.index_path(), read=False)
    for name in list(index):
        relpath = name.decode("utf-8")
        if relpath not in files:
            _remove_worktree_file(root, relpath)
            del index[name]
    for relpath, (mode, data) in sorted(files.items()):
        st = _write_worktree_file(root, relpath, mode, data)
        index[relpath.encode("utf-8")] = index_entry_from_stat(st, blob_ids[relpath], mode)
    index.write()


def _make_commit(
    repo: Repo,
    tree: bytes,
    parents: list[bytes],
    message: str,
    author: str,
    when: int,
    tz: int = 0,
) -> bytes:
    commit = Commit()
    commit.tree = tree
    commit.parents = parents
    commit.author = commit.committer = author.encode("utf-8")
    commit.author_time = commit.commit_time = when
    commit.author_timezone = commit.commit_timezone = tz
    commit.message = message.encode("utf-8") if message.endswith("\n") else (message + "\n").encode("utf-8")
    repo.object_store.add_object(commit)
    return commit.id


def _current_branch_ref(repo: Repo) -> bytes | None:
    contents = repo.refs.read_ref(b"HEAD") or b""
    if contents.startswith(b"ref: "):
        return contents[5:].strip()
    return None


def _advance_head(repo: Repo, sha: bytes) -> None:
    ref = _current_branch_ref(repo)
    if ref is not None:
        repo.refs[ref] = sha
    else:
        with open(os.path.join(repo.controldir(), "HEAD"), "wb") as handle:
            handle.write(sha + b"\n")


def make_repo(path: Path, commits: list[dict] | int = 1, branch: str = "main") -> list[str]:
    """Create (or extend) a repository at ``path``; returns the new commit shas in order.

    Each commit spec may hold:

    * ``files``: ``{relpath: content}``, the complete tree of the commit.
      Content is bytes or str; ``("exec", content)`` makes an executable
      file, ``("symlink", target)`` a symlink.  Without ``files`` the tree of
      the first parent is reused with ``file.txt`` changed.
    * ``message`` (default ``commit <i>``), ``author`` (``"Name <email>"``),
      ``time`` (epoch seconds, default 60 s after the newest parent),
      ``tz`` (seconds east of UTC).
    * ``parents``: indexes into the commits made by this call (for merges and
      side branches); default: the previous commit (or the current HEAD).
    * ``branch``: also point ``refs/heads/<branch>`` at this commit;
      ``tag``: lightweight tag; ``annotated_tag``: annotated tag.

    ``branch`` (the argument) is checked out and ends at the last commit; the
    working tree and index match it.  An int ``n`` means ``n`` simple commits.
    """
    path = Path(path)
    specs: list[dict] = [{} for _ in range(commits)] if isinstance(commits, int) else list(commits)
    shas: list[bytes] = []
    with _open_or_init(path, branch) as repo:
        try:
            previous: bytes | None = repo.refs[b"HEAD"]
        except KeyError:
            previous = None
        last_files: dict[str, tuple[int, bytes]] = {}
        last_blobs: dict[str, bytes] = {}
        for number, spec in enumerate(specs):
            if "parents" in spec:
                parents = [shas[i] for i in spec["parents"]]
            else:
                parents = [previous] if previous is not None else []
            if "files" in spec:
                files = {name: _entry_for(content) for name, content in spec["files"].items() if content is not None}
            else:
                files = _head_files(repo, parents[0] if parents else None)
                files["file.txt"] = (0o100644, f"content of commit {len(shas)} ({number})\n".encode())
            tree, blob_ids = _store_tree(repo, files)
            when = spec.get("time", _commit_time(repo, parents))
            sha = _make_commit(
                repo,
                tree,
                parents,
                spec.get("message", f"commit {number}"),
                spec.get("author", DEFAULT_AUTHOR),
                when,
                spec.get("tz", 0),
            )
            shas.append(sha)
            previous = sha
            last_files = files
            last_blobs = blob_ids
            if "branch" in spec:
                repo.refs[b"refs/heads/" + spec["branch"].encode()] = sha
            if "tag" in spec:
                repo.refs[b"refs/tags/" + spec["tag"].encode()] = sha
            if "annotated_tag" in spec:
                tag = Tag()
                tag.name = spec["annotated_tag"].encode()
                tag.object = (Commit, sha)
                tag.tagger = DEFAULT_AUTHOR.encode()
                tag.tag_time = when
                tag.tag_timezone = 0
                tag.message = b"annotated tag\n"
                repo.object_store.add_object(tag)
                repo.refs[b"refs/tags/" + tag.name] = tag.id
        if shas:
            repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/" + branch.encode("utf-8"))
            repo.refs[b"refs/heads/" + branch.encode("utf-8")] = shas[-1]
            _sync_worktree(repo, last_files, last_blobs)
    return [s.decode("ascii") for s in shas]


def commit_files(
    path: Path, files: dict, message: str, *, author: str = DEFAULT_AUTHOR, when: int | None = None
) -> str:
    """Write ``files`` into the working tree, stage them and commit on the current branch.

    Other tracked files stay as they are in HEAD; a value of None deletes a
    file.  Returns the new commit's sha.
    """
    path = Path(path)
    with Repo(str(path)) as repo:
        try:
            head: bytes | None = repo.refs[b"HEAD"]
        except KeyError:
            head = None
        current = _head_files(repo, head)
        for name, content in files.items():
            if content is None:
                current.pop(name, None)
            else:
                current[name] = _entry_for(content)
        tree, blob_ids = _store_tree(repo, current)
        parents = [head] if head is not None else []
        if when is None:
            when = max(_commit_time(repo, parents), int(_time.time()))
        sha = _make_commit(repo, tree, parents, message, author, when)
        _advance_head(repo, sha)
        _sync_worktree(repo, current, blob_ids)
    return sha.decode("ascii")


def stage_files(path: Path, files: dict) -> None:
    """Write ``files`` into the working tree and stage them, without committing.

    A value of None removes the file from the working tree and the index.
    """
    path = Path(path)
    with Repo(str(path)) as repo:
        index = repo.open_index() if repo.has_index() else Index(repo.index_path(), read=False)
        for name, content in files.items():
            key = name.encode("utf-8")
            if content is None:
                _remove_worktree_file(path, name)
                if key in index:
                    del index[key]
                continue
            mode, data = _entry_for(content)
            blob = Blob.from_string(data)
            repo.object_store.add_object(blob)
            st = _write_worktree_file(path, name, mode, data)
            index[key] = index_entry_from_stat(st, blob.id, mode)
        index.write()


def fast_linear_history(path: Path, n: int) -> list[str]:
    """``n`` linear commits on ``main``, written as one pack (fast; for benchmarks).

    All commits share one tree with one file; the working tree and index
    match it, so the checkout is clean.  Returns the shas, oldest first.
    """
    path = Path(path)
    with _open_or_init(path, "main") as repo:
        blob = Blob.from_string(b"benchmark\n")
        tree = Tree()
        tree.add(b"bench.txt", 0o100644, blob.id)
        objects: list[tuple[Any, None]] = [(blob, None), (tree, None)]
        shas: list[bytes] = []
        parent: bytes | None = None
        author = DEFAULT_AUTHOR.encode()
        for i in range(n):
            commit = Commit()
            commit.tree = tree.id
            commit.parents = [parent] if parent is not None else []
            commit.author = commit.committer = author
            commit.author_time = commit.commit_time = BASE_TIME + i
            commit.author_timezone = commit.commit_timezone = 0
            commit.message = f"benchmark commit {i}\n".encode()
            objects.append((commit, None))
            parent = commit.id
            shas.append(parent)
        repo.object_store.add_objects(objects)
        if shas:
            repo.refs[b"refs/heads/main"] = shas[-1]
            repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
            _sync_worktree(repo, {"bench.txt": (0o100644, b"benchmark\n")}, {"bench.txt": blob.id})
    return [s.decode("ascii") for s in shas]


__all__ = ["BASE_TIME", "DEFAULT_AUTHOR", "commit_files", "fast_linear_history", "make_repo", "stage_files"]
