"""perun's private git store, ``.perun/remote``: the git objects of every remote and what was last seen there.

The user's repository never receives these objects.  Per remote, the
commit last seen there is the ref ``refs/heads/<key>`` and the time in
``tracking.json``; one transfer at a time holds ``locks/remote.lock``
(:func:`session`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..atomic import atomic_write
from .rollback import undone_on_failure
from ..errors import StorageError
from . import PRIVATE_DIR, TRACKING_FILE
from .transport import Remote

__all__ = ["PRIVATE_DIR", "TRACKING_FILE", "PrivateStore", "session"]



class PrivateStore:
    """The bare repository under ``.perun/remote`` holding the git objects of every remote."""

    def __init__(self, repo: Any) -> None:
        from dulwich.repo import Repo

        self.perun_dir = Path(repo.perun_dir)
        self.path = self.perun_dir / PRIVATE_DIR
        from dulwich.errors import NotGitRepository

        try:
            if not (self.path / "objects").is_dir():
                self.path.mkdir(parents=True, exist_ok=True)
                Repo.init_bare(str(self.path))
            self.git = Repo(str(self.path))
        except (OSError, NotGitRepository) as exc:
            raise StorageError(f"cannot open perun's git store {self.path}: {exc}",
                               hint=f"it only holds copies: delete {self.path} and transfer again") from None
        # profile objects are zlib streams already: compressing them again gains nothing
        self.git.object_store.pack_compression_level = 0

    @property
    def store(self) -> Any:
        return self.git.object_store

    def close(self) -> None:
        self.git.close()

    def tracking_ref(self, remote: Remote) -> bytes:
        # under refs/heads: dulwich tells a remote what we have from these, so fetches are incremental
        return f"refs/heads/{remote.key}".encode()

    def tracked(self, remote: Remote) -> bytes | None:
        try:
            return self.git.refs[self.tracking_ref(remote)]
        except KeyError:
            return None

    def track(self, remote: Remote, commit: bytes) -> None:
        self.git.refs[self.tracking_ref(remote)] = commit
        info = self.tracking_info()
        info[remote.key] = {"name": remote.name, "url": remote.url, "seen": time.time()}
        atomic_write(self.path / TRACKING_FILE, json.dumps(info, indent=1, sort_keys=True).encode())

    def tracking_info(self) -> dict[str, Any]:
        try:
            doc = json.loads((self.path / TRACKING_FILE).read_bytes())
            return doc if isinstance(doc, dict) else {}
        except (OSError, ValueError):
            return {}


@contextlib.contextmanager
def session(repo: Any) -> Iterator[PrivateStore]:
    # one transfer at a time per .perun: two would race on the tracking refs, not on the remote
    with undone_on_failure(Path(repo.perun_dir) / PRIVATE_DIR, Path(repo.perun_dir) / "locks" / "remote.lock"):
        private = PrivateStore(repo)
        try:
            yield private
        finally:
            private.close()
