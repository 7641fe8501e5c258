"""Temporary worktrees: another commit's files, outside the user's checkout.

Profiling a commit other than the checked-out one (``-m``,
``--crawl-parents``) never touches the user's working tree, index, stash or
untracked files: the commit's tree is exported with
:meth:`~perun_core.vcs.GitVcs.export_tree` into a fresh directory made by
:func:`tempfile.mkdtemp` (in ``$TMPDIR``), ``execute.pre_run`` and the jobs
run there, and the directory is removed afterwards, also when the run fails
or is interrupted.  Relative commands and workloads (``./build/app``)
resolve against the worktree root, exactly as they resolve against the
working-tree root for the checked-out commit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .process import signals_deferred

__all__ = ["WORKTREE_PREFIX", "remove_tree", "temporary_worktree"]

WORKTREE_PREFIX = "perun-worktree-"


def remove_tree(path: Path) -> None:
    """Delete ``path`` recursively, also read-only files and directories a build left behind."""

    def make_writable_and_retry(function: Any, target: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            parent = os.path.dirname(target)
            os.chmod(parent, os.stat(parent).st_mode | stat.S_IWUSR | stat.S_IXUSR)
            if os.path.isdir(target) and not os.path.islink(target):
                os.chmod(target, os.stat(target).st_mode | stat.S_IRWXU)
        with contextlib.suppress(FileNotFoundError):
            function(target)

    with signals_deferred():
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(path, onerror=make_writable_and_retry)


@contextlib.contextmanager
def temporary_worktree(vcs: Any, sha: str) -> Iterator[Path]:
    """The files of commit ``sha`` in a temporary directory, removed on exit."""
    path = Path(tempfile.mkdtemp(prefix=f"{WORKTREE_PREFIX}{sha[:7]}-"))
    try:
        vcs.export_tree(sha, path)
        yield path
    finally:
        remove_tree(path)
