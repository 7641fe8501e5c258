"""Build a demo beside its target and rename it into place, or in place under a lock; reuse a finished one by its marker."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...atomic import atomic_write_text, file_lock, remove_lock_file
from ...errors import Interrupted, LockTimeout, StorageError, UsageError

__all__ = ["BUILD_LOCK", "build_in_place", "build_visibly", "marker_of"]

MARKER = "demo.json"
#: in the top directory of a demo while it is being built; its builder holds a lock on it
BUILD_LOCK = ".perun-demo-build.lock"
#: how often a second builder looks again whether the first one is done (or was stopped)
_WAIT_STEP = 0.2


def build_in_place(path: Path | str, marker: dict[str, Any], build: Callable[[Path], None]) -> Path:
    """Build a demo at ``path`` with ``build(staging)``, or return the one built there before.

    ``marker`` identifies what ``build`` makes; it is stored in
    ``.perun/demo.json`` and a directory holding the same marker is reused
    as it is.  ``build`` fills a sibling directory that is renamed to
    ``path`` only when it succeeded, so an interrupted or failed build never
    leaves a half-made demo behind.  Raises :class:`UsageError` when
    ``path`` is a file or a non-empty directory without that marker.
    """
    path = Path(path).expanduser().absolute()
    if path.exists():
        if marker_of(path) == marker:
            return path
        if not path.is_dir() or any(path.iterdir()):
            raise UsageError(f"{path} exists and is not a demo repository built with these settings",
                             hint="remove it or choose another directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.parent / f".{path.name}.building-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        build(staging)
        (staging / ".perun" / MARKER).write_text(json.dumps(marker) + "\n")
        if path.exists():
            path.rmdir()
        try:
            staging.rename(path)
        except OSError:
            if marker_of(path) != marker:
                raise
            # another process built the same demo first: use that one
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return path


def marker_of(path: Path) -> dict[str, Any] | None:
    """The marker stored in the demo at ``path``, or None."""
    try:
        data = json.loads((path / ".perun" / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def build_visibly(path: Path | str, marker: dict[str, Any], build: Callable[[Path], None], *,
                  cancel: threading.Event | None = None, waiting: Callable[[], None] | None = None) -> Path:
    """Build a demo in ``path`` itself, so that it can be opened while it grows, or return the one built there.

    While it is built the directory holds :data:`BUILD_LOCK`, locked by the
    builder; ``marker`` is stored in ``.perun/demo.json`` last, so only a
    complete demo has it (a directory holding it is reused as it is).  A
    second builder waits for the lock (``waiting`` is called once when it
    has to) and then reuses what the first one built, or builds anew if
    that one was stopped.  A directory that has the lock file but no marker
    and whose lock nobody holds is a build that was killed: it is emptied
    and built again.  A build that fails or is interrupted (``cancel`` set,
    Ctrl-C) removes the directory.  Raises :class:`UsageError` when
    ``path`` is a file or a non-empty directory that is neither this demo
    nor a build of one.
    """
    path = Path(path).expanduser().absolute()
    if marker_of(path) == marker:
        return path
    _refuse_foreign(path)
    lock = path / BUILD_LOCK
    held = _claim(lock, cancel, waiting)
    try:
        if marker_of(path) == marker:  # built by the builder this one waited for
            remove_lock_file(lock)
            return path
        for child in path.iterdir():  # what a killed build left
            if child.name != BUILD_LOCK:
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        try:
            build(path)
            atomic_write_text(path / ".perun" / MARKER, json.dumps(marker) + "\n")
            remove_lock_file(lock)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
    finally:
        held.__exit__(None, None, None)
    return path


def _refuse_foreign(path: Path) -> None:
    if not path.exists():
        return
    if not path.is_dir() or (any(path.iterdir()) and not (path / BUILD_LOCK).exists()):
        raise UsageError(f"{path} exists and is not a demo repository built with these settings",
                         hint="remove it or choose another directory")


def _claim(lock: Path, cancel: threading.Event | None, waiting: Callable[[], None] | None) -> Any:
    """Lock ``lock`` (creating its directory); the entered :func:`file_lock` context, to be exited by the caller."""
    told = False
    while True:
        if cancel is not None and cancel.is_set():
            raise Interrupted("building the demo was cancelled")
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            # a stopped build removed the directory between mkdir's two steps (make, else check it is one)
            if lock.parent.exists() and not lock.parent.is_dir():
                raise UsageError(f"{lock.parent} exists and is not a directory",
                                 hint="remove it or choose another directory") from None
            continue
        held = file_lock(lock, timeout=_WAIT_STEP)
        try:
            held.__enter__()
            return held
        except LockTimeout:
            if not told and waiting is not None:
                waiting()
            told = True
        except StorageError:
            if lock.parent.is_dir():
                raise
            # the build waited for was stopped and removed the directory with its lock file: make it again
