"""The TUI's one door to perun_core: an open repository and a lock around it.

Every call into :mod:`perun_core.api` made by the TUI goes through a
:class:`Core`.  Workers run on threads, and the repository (its dulwich
object store above all) is not safe for concurrent use, so each call holds
``lock``; a history walk takes it once per chunk, so an action by the user
never waits behind the whole walk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from perun_core import api
from perun_core.repository import PerunRepository, ProfileInfo


class Core:
    """An open perun repository shared by the app's workers."""

    def __init__(self, repo: PerunRepository) -> None:
        self.repo = repo
        self.lock = threading.RLock()

    @classmethod
    def open(cls, path: Path | str | None = None) -> Core:
        """The nearest perun repository at or above ``path``; raises PerunError if none."""
        return cls(api.open_repository(path))

    @property
    def root(self) -> Path:
        return self.repo.root

    def close(self) -> None:
        with self.lock:
            self.repo.close()

    # -- reading -----------------------------------------------------------------
    def status(self) -> api.StatusReport:
        with self.lock:
            return api.status(repo=self.repo)

    def history(self, first_chunk: int = 200, chunk: int = 1000) -> Iterator[list[api.LogEntry]]:
        """Log entries from HEAD back, in lists: a small first one, then bigger ones."""
        with self.lock:
            entries = api.log(None, with_profiles=True, repo=self.repo)
        size = first_chunk
        while True:
            batch: list[api.LogEntry] = []
            with self.lock:
                for entry in entries:
                    batch.append(entry)
                    if len(batch) >= size:
                        break
            if batch:
                yield batch
            if len(batch) < size:
                return
            size = chunk

    def entry(self, minor: str) -> api.LogEntry:
        """The log entry (with profiles) of one commit."""
        with self.lock:
            return next(iter(api.log(minor, with_profiles=True, repo=self.repo)))

    def load(self, info: ProfileInfo, minor: str | None) -> api.LoadedProfile:
        with self.lock:
            return api.load_profile(info.tag, minor=None if not info.registered else minor, repo=self.repo)

    # -- changing ----------------------------------------------------------------
    def register(self, info: ProfileInfo) -> list[api.AddedProfile]:
        """Register a pending profile at the commit it was collected for."""
        with self.lock:
            return api.add([info.tag], minor=info.origin, repo=self.repo)

    def remove(self, info: ProfileInfo, minor: str | None) -> list[api.RemovedProfile]:
        """Unlink a registered profile from ``minor``, or delete a pending one."""
        with self.lock:
            return api.remove([info.tag], minor=minor if info.registered else None, repo=self.repo)
