"""A tiny C program that runs one measured process: exact peak memory and tight timing.

Why: Linux charges a process's peak resident memory (``ru_maxrss``) with the
high-water mark of the address space it had when it called ``exec``.  A child
forked (or vforked) by perun starts as a copy of the Python interpreter, so
its ``ru_maxrss`` is never below perun's own 25-40 MB, and ``true`` would
appear to need that much.  A child forked by a small C program starts from
that program's few hundred kilobytes instead, which is what GNU time and
hyperfine report too.

The helper is compiled with the system's C compiler (``cc``, ``gcc`` or
``clang``) on first use and cached in ``$XDG_CACHE_HOME/perun`` (default
``~/.cache/perun``), named by a hash of its source.  It forks, execs the
command (PATH lookup, relative paths against its working directory), waits
with ``wait4`` and writes one line to the file descriptor given as its first
argument::

    ran <wait status> <wall ns> <user us> <sys us> <max rss KiB>
    exec <errno>                      (the command could not be executed)

Wall time runs from just before the fork to the return of ``wait4``
(``CLOCK_MONOTONIC``).  Without a C compiler :func:`spawn_helper` returns
None and callers measure from Python (peak memory then includes perun's).
Set ``PERUN_NO_SPAWN_HELPER=1`` to force that.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

__all__ = ["HELPER_SOURCE", "cache_dir", "spawn_helper"]

HELPER_SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* perun spawn helper: see perun_core/runner/helper.py */
int main(int argc, char **argv) {
    if (argc < 3) return 125;
    int report = atoi(argv[1]);
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) return 125;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = fork();
    if (pid < 0) return 125;
    if (pid == 0) {
        close(errpipe[0]);
        close(report);
        execvp(argv[2], argv + 2);
        int err = errno;
        ssize_t ignored = write(errpipe[1], &err, sizeof err);
        (void)ignored;
        _exit(127);
    }
    close(errpipe[1]);
    int status = 0;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) < 0) {
        if (errno != EINTR) return 125;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    int err = 0;
    ssize_t got = read(errpipe[0], &err, sizeof err);
    FILE *out = fdopen(report, "w");
    if (out == NULL) return 125;
    if (got == (ssize_t)sizeof err) {
        fprintf(out, "exec %d\n", err);
    } else {
        long long wall = (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
        long long user = (long long)usage.ru_utime.tv_sec * 1000000LL + usage.ru_utime.tv_usec;
        long long sys = (long long)usage.ru_stime.tv_sec * 1000000LL + usage.ru_stime.tv_usec;
        fprintf(out, "ran %d %lld %lld %lld %ld\n", status, wall, user, sys, usage.ru_maxrss);
    }
    return fclose(out) == 0 ? 0 : 125;
}
"""

_lock = threading.Lock()
_known: dict[Path, Path | None] = {}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "perun"


def _compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


def _usable(path: Path) -> bool:
    """An executable regular file owned by us and writable by nobody else."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and os.access(path, os.X_OK))


def spawn_helper() -> Path | None:
    """The compiled helper (built once and cached), or None when it cannot be built."""
    if os.environ.get("PERUN_NO_SPAWN_HELPER"):
        return None
    digest = hashlib.sha1(HELPER_SOURCE.encode()).hexdigest()[:16]
    target = cache_dir() / f"spawn-helper-{digest}-{os.uname().machine}"
    with _lock:
        if target in _known:
            return _known[target]
        _known[target] = _build(target)
        return _known[target]


def _build(target: Path) -> Path | None:
    if _usable(target):
        return target
    compiler = _compiler()
    if compiler is None:
        return None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(target.parent, 0o700)
    except OSError:
        return None
    with tempfile.TemporaryDirectory(prefix="perun-helper-", dir=target.parent) as work:
        source = Path(work) / "helper.c"
        output = Path(work) / "helper"
        source.write_text(HELPER_SOURCE)
        try:
            built = subprocess.run([compiler, "-O2", "-o", str(output), str(source)], stdin=subprocess.DEVNULL,
                                   capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        if built.returncode != 0 or not output.is_file():
            return None
        os.chmod(output, 0o700)
        with contextlib.suppress(OSError):
            os.replace(output, target)
    return target if _usable(target) else None
