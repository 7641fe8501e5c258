"""Whether the working tree is dirty, and the commit HEAD names, remembered between runs.

Answering ``is_dirty`` means loading dulwich, reading the git index and
comparing it with HEAD's tree and the files; ``status`` asks it every time.
The answer can only change when HEAD moves, the index or ``.git/config``
(``core.filemode``) is rewritten, or a tracked file changes, so it is kept in
``.perun/cache`` (a :mod:`perun_core.cachefile` document) with HEAD and the
:func:`~perun_core.cachefile.file_signature` of those two files and of every
path the index lists, and reused while all of them are the same.  As git does for its index, an answer is not
kept when any of those files changed less than :data:`RACY_NS` before it was
computed: a change within the same timestamp tick would go unseen.
Submodules (whose state is their own HEAD) are never cached.  An answer is
written when the command that asked ends well (:func:`~perun_core.atomic.write_when_done`):
one failing on bad input leaves every file as it was.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from .. import cachefile
from .commits import MinorVersion

STATE_FILE = "worktree-state.json"
STATE_VERSION = 2
#: files changed this recently (nanoseconds) make an answer too young to keep
RACY_NS = 2_000_000_000


def path_stamp(path: bytes) -> list[int] | None:
    """The signature of ``path`` itself (a tracked symlink is a link: not followed), None when it is missing."""
    return cachefile.file_signature(path, follow_symlinks=False)


def load_state(cache_dir: Path, worktree: Path, key: dict[str, Any]) -> tuple[bool, MinorVersion] | None:
    """(dirty, HEAD's commit) as remembered for ``key``, when every tracked path is as it was; else None."""
    try:
        doc = cachefile.read(cache_dir / STATE_FILE, STATE_VERSION)
        if doc is None or doc.get("key") != key:
            return None
        base = os.fsencode(worktree)
        for name, stamp in doc["files"]:
            if path_stamp(os.path.join(base, os.fsencode(name))) != stamp:
                return None
        row = doc["head"]
        head = MinorVersion(row[0], row[1], row[2], row[3], row[4], row[5], tuple(row[6]))
        if head.checksum != key.get("head"):
            return None
        return bool(doc["dirty"]), head
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None  # a cache is only a shortcut: anything odd means asking git again


def state_document(worktree: Path, key: dict[str, Any], paths: list[bytes], dirty: bool, head: MinorVersion,
                   started_ns: int) -> dict[str, Any] | None:
    """What :func:`store_state` writes for an answer computed from ``started_ns`` on; None when it is too young."""
    base = os.fsencode(worktree)
    files = []
    young = started_ns - RACY_NS
    for stamp in (key.get("index"), key.get("config")):
        if stamp is not None and stamp[1] > young:
            return None
    for path in paths:
        stamp = path_stamp(os.path.join(base, path))
        if stamp is not None and stamp[1] > young:
            return None
        files.append([os.fsdecode(path), stamp])
    row = [head.checksum, head.date, head.tz_offset, head.author, head.email, head.desc, list(head.parents)]
    return {"key": key, "dirty": dirty, "head": row, "files": files, "written": time.time()}


def store_state(cache_dir: Path, document: dict[str, Any]) -> None:
    """Write a :func:`state_document` once the command that asked has succeeded."""
    cachefile.write(cache_dir / STATE_FILE, cachefile.encode(STATE_VERSION, document))
