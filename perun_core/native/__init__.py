"""C sources of the native collectors, compiled on first use.

The package ships C source, not binaries: ``memory.c`` (the LD_PRELOAD
library of the memory collector), ``trace.c`` (the runtime of programs
instrumented with ``-finstrument-functions``) and ``perun_log.h``, the
crash-safe log format both write (each file's header comment documents its
records).  :func:`library` compiles one of them with the system's C compiler
into a shared library, like the spawn helper of
:mod:`perun_core.runner.helper`: once, into ``$XDG_CACHE_HOME/perun``
(default ``~/.cache/perun``), named by a hash of the sources, the flags and
the machine, so a changed source is rebuilt and an unchanged one never is.

Without a compiler :func:`library` raises
:class:`~perun_core.errors.ExternalToolError` naming what to install; a
failed compilation raises :class:`~perun_core.errors.BuildFailed` with the
compiler's output.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import tempfile
import threading
from pathlib import Path

from ..errors import BuildFailed, ExternalToolError
from .build import cache_dir, find_compiler, usable_executable

__all__ = ["LIBRARIES", "SOURCE_DIR", "compiler", "library", "library_path", "source_digest"]

SOURCE_DIR = Path(__file__).resolve().parent

#: name -> (source file, extra libraries to link)
LIBRARIES = {
    "memory": ("memory.c", ("-ldl", "-lpthread")),
    "trace": ("trace.c", ("-ldl", "-lpthread")),
}
_HEADERS = ("perun_log.h",)
_FLAGS = ("-O2", "-g", "-fPIC", "-shared", "-fno-omit-frame-pointer", "-fvisibility=default")

HOW_TO_GET_CC = "install a C compiler (Debian/Ubuntu: apt-get install gcc) or point CC at one"

_lock = threading.Lock()


def compiler() -> str | None:
    """The C compiler to use: ``$CC``, ``cc``, ``gcc`` or ``clang``, whichever is found first."""
    return find_compiler()


def source_digest(name: str) -> str:
    """A hash of everything that goes into library ``name``."""
    source, libs = LIBRARIES[name]
    digest = hashlib.sha1()
    for part in (source, *_HEADERS):
        digest.update((SOURCE_DIR / part).read_bytes())
    digest.update(" ".join((*_FLAGS, *libs)).encode())
    return digest.hexdigest()[:16]


def library_path(name: str) -> Path:
    """Where library ``name`` is (or would be) cached."""
    return cache_dir() / f"libperun-{name}-{source_digest(name)}-{os.uname().machine}.so"


def library(name: str) -> Path:
    """The compiled shared library ``name`` (``memory`` or ``trace``), built if needed.

    Raises ExternalToolError when no C compiler is found, BuildFailed when
    compiling fails.
    """
    if name not in LIBRARIES:
        raise KeyError(name)
    target = library_path(name)
    with _lock:
        if usable_executable(target):
            return target
        cc = compiler()
        if cc is None:
            raise ExternalToolError("cc", HOW_TO_GET_CC)
        _build(name, cc, target)
    return target


def _build(name: str, cc: str, target: Path) -> None:
    source, libs = LIBRARIES[name]
    target.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(target.parent, 0o700)
    with tempfile.TemporaryDirectory(prefix="perun-build-", dir=target.parent) as work:
        output = Path(work) / target.name
        command = [cc, *_FLAGS, f"-I{SOURCE_DIR}", "-o", str(output), str(SOURCE_DIR / source), *libs]
        try:
            built = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=120, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise BuildFailed(f"the {name} library", " ".join(command), str(exc)) from None
        if built.returncode != 0 or not output.is_file():
            raise BuildFailed(f"the {name} library", " ".join(command), built.stderr or built.stdout)
        os.chmod(output, 0o755)
        os.replace(output, target)
