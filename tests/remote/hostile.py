"""Hand-made remotes for the hostile-remote tests: any tree, any blob, any ref, written with dulwich."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

from perun_core.remote.layout import REF, changes_key, format_document, index_key, object_key
from perun_core.storage.index import IndexEntry, encode_index

BLOB, TREE, LINK, GITLINK = 0o100644, 0o040000, 0o120000, 0o160000


def profile_object(document: dict, profile_type: str = "time") -> tuple[str, bytes]:
    """(sha, stored bytes) of ``document`` as a store object, the way the original tool writes them."""
    content = json.dumps(document).encode()
    raw = b"profile %s %d\0" % (profile_type.encode(), len(content)) + content
    return hashlib.sha1(raw).hexdigest(), zlib.compress(raw)


def entry_of(sha: str, name: str = "hostile.perf", when: float = 1_700_000_000.0) -> IndexEntry:
    return IndexEntry(when, sha, name, "time", "./prog", "", "", "time", ())


def perun_tree(objects: dict[str, bytes], indexes: dict[str, list[IndexEntry]] | None = None,
               changes: dict[str, bytes] | None = None, *, raw_indexes: dict[str, bytes] | None = None
               ) -> dict[bytes, tuple[int, bytes]]:
    """Paths of a remote's tree in perun's layout: path -> (mode, content)."""
    flat: dict[bytes, tuple[int, bytes]] = {b"format": (BLOB, format_document())}
    for sha, data in objects.items():
        flat[object_key(sha)] = (BLOB, data)
    for minor, entries in (indexes or {}).items():
        flat[index_key(minor)] = (BLOB, encode_index(entries))
    for minor, data in (raw_indexes or {}).items():
        flat[index_key(minor)] = (BLOB, data)
    for minor, data in (changes or {}).items():
        flat[changes_key(minor)] = (BLOB, data)
    return flat


def plant(remote: Path, flat: dict[bytes, tuple[int, bytes]]) -> str:
    """Point ``refs/perun/profiles`` of the bare repository ``remote`` at a commit of ``flat``; its id.

    A mode of LINK makes a symbolic link whose target is the content; GITLINK names the
    content (a hex id) as a submodule commit the remote does not have.
    """
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    made: list = []

    def build(items: dict[bytes, tuple[int, bytes]]) -> bytes:
        tree = Tree()
        groups: dict[bytes, dict] = {}
        for path, (mode, content) in items.items():
            head, sep, rest = path.partition(b"/")
            if sep:
                groups.setdefault(head, {})[rest] = (mode, content)
            elif mode == GITLINK:
                tree.add(head, mode, content)
            else:
                blob = Blob.from_string(content)
                made.append(blob)
                tree.add(head, mode, blob.id)
        for name, sub in groups.items():
            tree.add(name, TREE, build(sub))
        made.append(tree)
        return tree.id

    with Repo(str(remote)) as repo:
        commit = Commit()
        commit.tree, commit.parents = build(flat), []
        commit.author = commit.committer = b"Mallory <m@example.com>"
        commit.author_time = commit.commit_time = 1_700_000_000
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"hostile\n"
        for obj in (*made, commit):
            repo.object_store.add_object(obj)
        repo.refs[REF] = commit.id
        return commit.id.decode()


def point_ref(remote: Path, target: bytes | None = None, *, blob: bytes | None = None) -> str:
    """Point the ref at ``target`` (any id, even one the remote lacks) or at a new blob of ``blob``."""
    from dulwich.objects import Blob
    from dulwich.repo import Repo

    with Repo(str(remote)) as repo:
        if blob is not None:
            made = Blob.from_string(blob)
            repo.object_store.add_object(made)
            target = made.id
        assert target is not None
        repo.refs[REF] = target
        return target.decode()
