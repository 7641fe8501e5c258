"""Write a whole git history from planned commits (trees given in full), with dulwich."""

from __future__ import annotations

import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AUTHORS", "GitCommit", "write_history"]

#: The people who write the demo projects: name, e-mail, time-zone offset in seconds.
AUTHORS = (
    ("Alena Horvathova", "alena@sll.example", 3600),
    ("Marek Dvorak", "marek@sll.example", 3600),
    ("Priya Raman", "priya@sll.example", 19800),
    ("Tom Ellis", "tom@sll.example", -18000),
)


@dataclass(frozen=True)
class GitCommit:
    """One commit to write: its whole tree, message, author and parents (indexes of earlier commits)."""

    files: dict[str, bytes]
    message: str
    author: tuple[str, str, int]
    when: int
    parents: list[int]


def write_history(root: Path, commits: Sequence[GitCommit], branches: dict[str, int],
                  progress: Callable[[str], None] | None = None) -> list[str]:
    """Write ``commits`` into a new repository at ``root``; returns their shas.

    ``branches`` maps branch names to the index of their tip; ``main`` must
    be one of them: HEAD points to it and its tree is checked out.  Author
    and committer are the same, so equal input gives equal commit ids.
    """
    from dulwich.index import build_index_from_tree
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    shas: list[bytes] = []
    objects: dict[bytes, Any] = {}

    def tree_of(files: dict[str, bytes]) -> bytes:
        subdirs: dict[str, dict[str, bytes]] = {}
        tree = Tree()
        for name, data in files.items():
            head, sep, rest = name.partition("/")
            if sep:
                subdirs.setdefault(head, {})[rest] = data
                continue
            blob = Blob.from_string(data)
            objects[blob.id] = blob
            tree.add(name.encode(), 0o100644, blob.id)
        for name, sub in subdirs.items():
            tree.add(name.encode(), stat.S_IFDIR, tree_of(sub))
        objects[tree.id] = tree
        return tree.id

    root.mkdir(parents=True, exist_ok=True)
    with Repo.init(str(root), default_branch=b"main") as repo:
        for number, planned in enumerate(commits, 1):
            if progress is not None:
                progress(f"building commit {number}/{len(commits)}")
            name, email, tz = planned.author
            commit = Commit()
            commit.tree = tree_of(planned.files)
            commit.parents = [shas[p] for p in planned.parents]
            commit.author = commit.committer = f"{name} <{email}>".encode()
            commit.author_time = commit.commit_time = planned.when
            commit.author_timezone = commit.commit_timezone = tz
            commit.message = planned.message.encode()
            objects[commit.id] = commit
            shas.append(commit.id)
        repo.object_store.add_objects([(obj, None) for obj in objects.values()])
        for branch, tip in branches.items():
            repo.refs[f"refs/heads/{branch}".encode()] = shas[tip]
        repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
        head_tree = repo[shas[branches["main"]]].tree
        build_index_from_tree(str(root), repo.index_path(), repo.object_store, head_tree)
    return [sha.decode("ascii") for sha in shas]
