"""The one helper every module of the porcelain shares: use the caller's repository or open the nearest.

Kept apart from :mod:`.repository` so that a command needing one corner of
the API (``check profiles`` of two files) does not load the rest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from ..errors import NotPerunRepository
from ..storage.repository import PerunRepository

__all__ = ["PerunRepository", "open_repository"]


@contextlib.contextmanager
def using(repo: PerunRepository | None, cwd: Path | str | None = None) -> Iterator[PerunRepository]:
    """``repo`` as it is, or the nearest instance from ``cwd``, closed again on leaving."""
    if repo is not None:
        yield repo
        return
    opened = PerunRepository.discover(cwd)
    try:
        yield opened
    finally:
        opened.close()


@contextlib.contextmanager
def using_if_any(repo: PerunRepository | None, cwd: Path | str | None = None) -> Iterator[PerunRepository | None]:
    """Like :func:`using`, but None instead of an error outside any repository: commands on profile files
    (``check profiles``, explaining them) work anywhere and use the repository only when there is one."""

    if repo is not None:
        yield repo
        return
    try:
        opened = PerunRepository.discover(cwd)
    except NotPerunRepository:
        yield None
        return
    try:
        yield opened
    finally:
        opened.close()


def open_repository(cwd: Path | str | None = None) -> PerunRepository:
    """The nearest perun instance; the caller closes it."""
    return PerunRepository.discover(cwd)
