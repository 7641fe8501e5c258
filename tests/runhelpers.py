"""Helpers for the collection tests: a shared spawn-helper cache, a private TMPDIR,
tree snapshots and a small C project whose second commit is about five times slower.

Import the fixtures into a test module (``from runhelpers import run_env``) to
use them there.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

#: The C project needs a C compiler and make (.ci/run installs them; see tests/tools.py for a missing one).
needs_cc = pytest.mark.tools("cc", "make")

C_PROGRAM = """#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    volatile long sum = 0;
    for (long i = 0; i < n * FACTOR; i++) sum += i;
    return 0;
}
"""
MAKEFILE = "app: app.c\n\tcc -O1 -o app app.c\n"


@pytest.fixture(autouse=True)
def run_env(tmp_path_factory, tmp_path, monkeypatch):
    """Share the compiled spawn helper between tests; give each test its own TMPDIR (for worktrees)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "shared-xdg-cache"))
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    return tmpdir


def tree_bytes(root: Path, *, skip_perun: bool = True) -> dict[str, bytes]:
    """Every file under ``root`` (the .git directory included) with its bytes."""
    files = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if skip_perun and relative.parts[0] == ".perun":
            continue
        if path.is_file() and not path.is_symlink():
            files[str(relative)] = path.read_bytes()
    return files


def leftover_worktrees(tmpdir: Path) -> list[str]:
    return sorted(name for name in os.listdir(tmpdir) if name.startswith("perun-worktree-"))


def make_c_project(root: Path) -> list[str]:
    """Two commits of app.c + Makefile; v2 runs its loop five times as often."""
    from gitrepo import make_repo

    files = {"Makefile": MAKEFILE, ".gitignore": "app\n"}
    return make_repo(root, [
        {"files": {**files, "app.c": C_PROGRAM.replace("FACTOR", "1")}, "message": "v1"},
        {"files": {**files, "app.c": C_PROGRAM.replace("FACTOR", "5")}, "message": "v2: five times the work"},
    ])


def process_gone(pid: int, wait: float = 3.0) -> bool:
    """True once ``pid`` does not run anymore (gone, or a zombie its new parent has not reaped yet)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


def line_of(source: str, marker: str) -> int:
    """The number of the first line of ``source`` that contains ``marker``."""
    return next(number for number, text in enumerate(source.splitlines(), 1) if marker in text)


def build_c(directory: Path, name: str, source: str, *flags: str) -> Path:
    """``source`` compiled with cc (no optimization, debug information, pthreads) into ``directory/name``."""
    path = directory / f"{name}.c"
    path.write_text(source)
    binary = directory / name
    subprocess.run(["cc", "-O0", "-g", *flags, "-o", str(binary), str(path), "-lpthread"], check=True)
    return binary


def documented(path) -> dict:
    """A profile file perun wrote (compact or documented layout) in the documented JSON form, origin included."""
    from perun_core.profile.codec import load_profile_from_file

    return load_profile_from_file(path).to_dict()


# A C program with five functions; REPEAT scales `middle` (it does most of the work, so that a
# slower `middle` makes the whole program clearly slower even on a busy machine).  Used by the explain
# tests and benchmarks/explain.py, built by FIVE_FUNCTIONS_MAKEFILE: with debug information (-g), so that
# explanations name each function's file and line, and frame pointers for perf's call stacks.
FIVE_FUNCTIONS_C = r'''
#include <stdio.h>
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) static void alpha(long n) { for (long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) static void beta(long n) { for (long i = 0; i < n; i++) sink ^= i; }
__attribute__((noinline)) static void middle(long n) { for (long i = 0; i < REPEAT * 4 * n; i++) sink += i & 3; }
__attribute__((noinline)) static void gamma_(long n) { for (long i = 0; i < n; i++) sink -= i; }
__attribute__((noinline)) static void delta(long n) { for (long i = 0; i < n; i++) sink |= i; }
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    alpha(n); beta(n); middle(n); gamma_(n); delta(n);
    printf("%ld\n", sink);
    return 0;
}
'''
FIVE_FUNCTIONS_MAKEFILE = "app: app.c\n\tcc -O1 -g -fno-omit-frame-pointer -o app app.c\n"


@contextmanager
def busy_sessions(count: int = 4):
    """``count`` busy loops while the block runs, each started in a session of its own (``setsid``).

    Linux groups the processes of a session when they share the CPUs
    (autogroup), so loops started in the test's own session would compete
    only with each other; other users' work runs in sessions of its own.
    """
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            try:
                os.killpg(loop.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            loop.wait()


def perf_refused() -> str | None:
    """Why the kernel refuses perf sampling, or None (also None without perf: the ``tools`` mark says that)."""
    import shutil

    if not shutil.which("perf"):
        return None
    from perun_core.collect.perf import perf_permission  # lazy: the helpers load in every test module

    allowed, detail, _ = perf_permission()
    return None if allowed else detail


@contextmanager
def module_environment(tmp_path_factory):
    """The scrubbed environment of a module-scoped template (a home, a configuration, caches and temporary files of
    its own), for fixtures that run perun once for a whole module: the function-scoped clean_env and run_env come
    later, so they cannot give it."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("PERUN_CONFIG_DIR", str(home / "perun-config"))
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "shared-xdg-cache"))
        patch.setenv("TMPDIR", str(tmp_path_factory.mktemp("tmpdir")))
        patch.setattr(tempfile, "tempdir", None)
        yield
