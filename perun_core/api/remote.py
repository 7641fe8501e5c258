"""The porcelain of sharing profiles: ``push``, ``fetch``, ``pull`` and ``remote_status``.

Profiles, index entries and recorded findings travel through the project's
own git remotes (a bare repository by path or ``file://``, ssh, https,
``git://``) under the ref ``refs/perun/profiles``; see
:mod:`perun_core.remote.layout` for the layout and the merge, and
:mod:`perun_core.remote.sync` for what is (never) touched.  ``remote`` is
the name of a git remote (default ``origin``) or a URL or path.

Progress goes to ``on_event`` as the events of
:mod:`perun_core.remote.events`; ``cancel`` (a :class:`threading.Event`)
stops a transfer with :class:`~perun_core.errors.Interrupted`, leaving
both sides as they were before it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..remote import sync
from ..remote.events import PushRetried, RemoteContacted, TransferProgress, TransferStarted
from ..remote.sync import FetchResult, PullResult, PushResult, RemoteState
from ..storage.repository import PerunRepository
from ._repo import using as _using
from .remote_state import remote_status

__all__ = ["FetchResult", "PullResult", "PushResult", "PushRetried", "RemoteContacted", "RemoteState",
           "TransferProgress", "TransferStarted", "fetch", "pull", "push", "remote_status"]


def push(remote: str | None = None, *, dry_run: bool = False, on_event: Callable[[Any], None] | None = None,
         cancel: threading.Event | None = None, repo: PerunRepository | None = None,
         cwd: Path | str | None = None) -> PushResult:
    """Send what the remote lacks; a push beaten by another is merged and retried, never forced.

    ``dry_run`` tells what would be sent and sends nothing.  Raises
    RemoteError, RemoteFormatTooNew, Interrupted.
    """

    with _using(repo, cwd) as r:
        return sync.push(r, remote, dry_run=dry_run, on_event=on_event, cancel=cancel)


def fetch(remote: str | None = None, *, on_event: Callable[[Any], None] | None = None,
          cancel: threading.Event | None = None, repo: PerunRepository | None = None,
          cwd: Path | str | None = None) -> FetchResult:
    """Receive the remote's profiles without merging them; ``remote_status`` then counts against them."""

    with _using(repo, cwd) as r:
        return sync.fetch(r, remote, on_event=on_event, cancel=cancel)


def pull(remote: str | None = None, *, dry_run: bool = False, on_event: Callable[[Any], None] | None = None,
         cancel: threading.Event | None = None, repo: PerunRepository | None = None,
         cwd: Path | str | None = None) -> PullResult:
    """Fetch, then merge: store the remote's profiles, unite the indexes, take newer findings."""

    with _using(repo, cwd) as r:
        return sync.pull(r, remote, dry_run=dry_run, on_event=on_event, cancel=cancel)
