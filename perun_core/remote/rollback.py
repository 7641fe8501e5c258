"""A transfer that fails leaves ``.perun`` as it found it.

Fetching writes the remote's objects into the private store (``.perun/remote``)
before the remote's ``format`` can be read, and opening the store creates it on
first use; a transfer that then fails (a newer layout, a path that is no
repository, a URL that cannot be reached, Ctrl-C) must not leave those behind.
:func:`undone_on_failure` removes what the failed transfer added, as long as no
ref of the private store moved: once one did, the objects are referenced and
stay.  The transfer lock file is removed too when this transfer made it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from ..atomic import file_lock, remove_lock_file

#: files of the private store that say what it holds; objects that none of them reach are garbage
_REF_FILES = ("refs", "packed-refs", "tracking.json")


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file of ``root`` with its size and time, and every directory (as ``(-1, -1)``)."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs:
            found[str(Path(folder, name).relative_to(root))] = (-1, -1)
        for name in names:
            path = Path(folder, name)
            with contextlib.suppress(OSError):
                info = path.stat()
                found[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns)
    return found


def _refs(files: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    return {k: v for k, v in files.items() if k.split(os.sep)[0] in _REF_FILES and v != (-1, -1)}


@contextlib.contextmanager
def undone_on_failure(private: Path, lock: Path) -> Iterator[None]:
    """Run a transfer holding ``lock`` (one at a time per store); on a failure undo what it added (see above)."""
    lock_is_new, lock_dir_is_new = not lock.exists(), not lock.parent.exists()
    with file_lock(lock, timeout=3600.0), _undone(private, lock, lock_is_new, lock_dir_is_new):
        yield


@contextlib.contextmanager
def _undone(private: Path, lock: Path, lock_is_new: bool, lock_dir_is_new: bool) -> Iterator[None]:
    existed = private.exists()
    before = _files(private) if existed else {}
    try:
        yield
    except BaseException:
        after = _files(private) if private.exists() else {}
        if _refs(after) == _refs(before):
            if not existed:
                shutil.rmtree(private, ignore_errors=True)
            else:
                _remove_new(private, before, after)
        if lock_is_new:
            remove_lock_file(lock)
        if lock_dir_is_new:
            with contextlib.suppress(OSError):
                lock.parent.rmdir()  # only when empty
        raise


def _remove_new(private: Path, before: dict, after: dict) -> None:
    new = sorted(after.keys() - before.keys(), key=len, reverse=True)  # files and subdirectories before their dirs
    for name in new:
        with contextlib.suppress(OSError):
            if after[name] == (-1, -1):
                (private / name).rmdir()
            else:
                (private / name).unlink()
