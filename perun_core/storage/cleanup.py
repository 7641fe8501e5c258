"""What ``fsck`` clears away: writers' leftover temporary files, damaged files put aside, objects nothing names.

Temporary files of writers (``.NAME.w<pid>-<tag>.XXXX.tmp`` of the atomic
writes, see :mod:`perun_core.atomic`) anywhere in ``.perun`` but the private
git store are judged by :class:`Leftovers`: removed when their writer is
gone (the process named in the file's name no longer runs, or was started
after the file was last written), kept while it may still be writing.
Where the name cannot tell (files of an older perun, or of another machine
sharing the store) the file's age decides against ``stale_after``.

Damaged objects and indexes are not deleted but moved to
``.perun/quarantine/{objects,indexes}/<sha>`` (:func:`quarantine`), out of
the way of every reader and still there for a closer look.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..atomic import TEMPORARY_NAME, temporary_writer_alive
from ..errors import LockTimeout
from .repository import PerunRepository

__all__ = ["QUARANTINE_DIR", "Leftovers", "leftover_candidates", "names_in_records", "quarantine"]

QUARANTINE_DIR = "quarantine"
#: parts of .perun whose temporary files are judged elsewhere (objects, jobs) or are not perun's (git's own)
_JUDGED_ELSEWHERE = {"objects", "jobs", "remote", QUARANTINE_DIR}
_SHA = re.compile(r"[0-9a-f]{40}")


class Leftovers:
    """Judges writers' temporary files: removed when their writer is gone, kept while it may be writing.

    ``removed``, ``kept`` and ``failed`` (path, why) collect the verdicts.
    """

    def __init__(self, repo: PerunRepository, stale_after: float) -> None:
        self.repo = repo
        self.stale_after = stale_after
        self.now = time.time()
        self.removed: list[str] = []
        self.kept: list[str] = []
        self.failed: list[tuple[str, str]] = []

    def judge(self, path: Path, minor: str | None = None) -> None:
        """Judge ``path``; ``minor`` names the index it may be a new version of (its writers hold that lock)."""
        if minor is None or not self.repo.index_lock_path(minor).exists():
            # no writer of that index ever took its lock, so none is writing it now
            self._judge(path)
            return
        try:
            with self.repo.index_lock(minor, timeout=0):
                self._judge(path)
        except LockTimeout:
            self.kept.append(str(path))  # a writer of that index is running: maybe this is its file

    def old_enough(self, path: Path) -> bool | None:
        """Whether ``path`` was last written at least ``stale_after`` seconds ago (None: it is gone)."""
        try:
            return self.now - path.stat().st_mtime >= self.stale_after
        except FileNotFoundError:
            return None

    def _judge(self, path: Path) -> None:
        alive = temporary_writer_alive(path)
        if alive is None:
            old = self.old_enough(path)
            if old is None:
                return  # its writer finished meanwhile
            alive = not old
        if alive:
            self.kept.append(str(path))
            return
        try:
            path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.failed.append((str(path), f"cannot be removed: {exc.strerror}"))
            return
        self.removed.append(str(path))


def leftover_candidates(perun_dir: Path) -> Iterator[Path]:
    """Temporary files of writers in ``.perun`` outside objects, jobs, the private git store and the quarantine."""
    for folder, dirs, names in os.walk(perun_dir):
        here = Path(folder)
        if here == perun_dir:
            dirs[:] = [d for d in dirs if d not in _JUDGED_ELSEWHERE]
        dirs.sort()
        for name in sorted(names):
            if TEMPORARY_NAME.match(name):
                yield here / name


def quarantine(repo: PerunRepository, path: Path, kind: str) -> Path:
    """Move the damaged file or folder ``path`` to ``.perun/quarantine/<kind>/``; where it went."""
    target_dir = repo.perun_dir / QUARANTINE_DIR / kind
    made = [folder for folder in (target_dir.parent, target_dir) if not folder.is_dir()]
    name = path.parent.name + path.name
    target = target_dir / name
    number = 0
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        while target.exists() or target.is_symlink():
            number += 1
            target = target_dir / f"{name}.{number}"
        os.rename(path, target)
    except OSError:
        for folder in reversed(made):  # a move that failed leaves no trace
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return target


def names_in_records(repo: PerunRepository, on_error: Callable[[Path, str], Any] | None = None) -> set[str]:
    """Every object name the change records mention (the checked pairs name their profiles' objects, explanations
    the call-level profiles kept with them)."""
    found: set[str] = set()
    root = repo.perun_dir / "changes"
    for folder, _dirs, names in os.walk(root):
        for name in names:
            if not name.endswith(".json"):
                continue
            path = Path(folder, name)
            try:
                doc = json.loads(path.read_bytes())
            except (OSError, ValueError, RecursionError) as exc:
                if on_error is not None:
                    on_error(path, str(exc))
                continue
            _collect_shas(doc, found)
    return found


def _collect_shas(value: Any, found: set[str]) -> None:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and _SHA.fullmatch(item):
            found.add(item)
        elif isinstance(item, str) and item.startswith("object:") and _SHA.fullmatch(item[7:]):
            found.add(item[7:])  # an explanation's source: the call-level profiles kept with it
