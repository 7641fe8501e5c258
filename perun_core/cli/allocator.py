"""Memory settings of the ``perun-core`` process for bulk numeric work (importing, building, comparing profiles).

A command that handles a million-resource profile makes dozens of
temporary numpy arrays of 50 to 100 MB.  With the C library's defaults
each one is a fresh anonymous mapping, released when freed, so its pages
are faulted in and zeroed again and again; and numpy asks the kernel for
transparent huge pages on large arrays, which the kernel may first
compact memory to provide.  Measured on a 1,000,000-line folded import
(2 cores, idle): 2.0 to 3.0 s with the defaults, most of the spread system
time, against 1.76 to 1.81 s with both settings below.

* the C library keeps freed blocks of any size for reuse (``mallopt``:
  mapping threshold 1 GiB, trimming only above 2 GiB), so the pages of one
  temporary serve the next;
* numpy, once imported, stops asking for huge pages;
* numpy's OpenBLAS is loaded with one thread (unless the user set
  ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``GOTO_NUM_THREADS``):
  by default it starts a thread per core at load, which then spin for work
  perun never gives them (the analyses and checks multiply vectors and small
  matrices, and the regression fits use no BLAS at all).  On 2 busy cores that
  was 0.04 to 0.07 s of the 0.6 s CPU of ``postprocessby`` on a million resources.
  The variable is set only while numpy is imported, and only when no other
  thread runs, so programs perun starts get the environment they had.

All concern only this short-lived process: child processes (profiled
programs) start with their own defaults, and the TUI, which stays up,
does not call this.  Where one is not available (another C library, a
numpy without the switch) nothing changes.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: The variables OpenBLAS takes its number of threads from: one set by the user is left as it is.
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS")


def tune_for_bulk_work() -> None:
    """Apply both settings (see the module docstring); safe to call more than once."""
    if sys.platform.startswith("linux"):
        _keep_freed_memory()
    if "numpy" in sys.modules:
        _no_huge_pages(sys.modules["numpy"])
    elif not any(isinstance(finder, _AfterNumpyImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumpyImport())


def _keep_freed_memory() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 1 << 30)
        libc.mallopt(_M_TRIM_THRESHOLD, (1 << 31) - 1)
    except (OSError, AttributeError):  # not glibc
        pass


def _no_huge_pages(numpy: Any) -> None:
    core = getattr(numpy, "_core", None) or getattr(numpy, "core", None)
    switch = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if switch is not None:
        switch(False)


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """``OPENBLAS_NUM_THREADS=1`` in the environment while numpy (and the OpenBLAS it loads) is imported, unless
    the user chose a number of threads, or another thread runs: it might start a program meanwhile, which would
    inherit the setting (the memory collector imports numpy in a thread of its own while the program starts)."""
    if threading.active_count() > 1 or any(name in os.environ for name in _BLAS_THREADS):
        yield
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        os.environ.pop("OPENBLAS_NUM_THREADS", None)


class _AfterNumpyImport:
    """Finds numpy through the other finders and turns its huge pages off right after it is imported.

    numpy is imported lazily, by the commands that need it; this keeps the
    others from paying for it.  (A meta path finder needs only ``find_spec``:
    importing ``importlib.abc`` for its base class would cost 15 ms of every
    start.)
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "numpy":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_module = loader.exec_module

        def exec_module(module: Any) -> None:
            with _one_blas_thread():
                run_module(module)
            _no_huge_pages(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
