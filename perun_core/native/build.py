"""Finding a C compiler and keeping compiled code in the user's cache: shared by every native build.

The C sources of the preload libraries live beside this module; the spawn
helper of the runner and the libraries of the native collectors are built
with the same compiler lookup and cached under the same directory, and a
cached executable is used only when it is ours and writable by nobody else.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

__all__ = ["cache_dir", "find_compiler", "usable_executable"]


def cache_dir() -> Path:
    """Where compiled helpers and libraries are cached: ``$XDG_CACHE_HOME/perun`` (``~/.cache/perun``)."""
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "perun"


def find_compiler() -> str | None:
    """The C compiler to use: ``$CC``, else cc, gcc or clang; None when there is none."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


def usable_executable(path: Path) -> bool:
    """An executable regular file owned by us and writable by nobody else."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and os.access(path, os.X_OK))
