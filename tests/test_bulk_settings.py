"""The ``perun-core`` process's settings for bulk numeric work (perun_core.cli.allocator)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]

#: In a fresh interpreter: the settings, then numpy imported (in a thread of its own when asked), then what the
#: process's environment holds and how many threads numpy's OpenBLAS runs with (-1: not an OpenBLAS perun knows).
_PROBE = """
import ctypes, os, sys, threading
from perun_core.cli.allocator import tune_for_bulk_work
tune_for_bulk_work()
if sys.argv[1] == "thread":
    worker = threading.Thread(target=lambda: __import__("numpy"))
    worker.start()
    worker.join()
import numpy
threads = -1
for line in open("/proc/self/maps"):
    if "openblas" in line:
        library = ctypes.CDLL(line.split()[-1])
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
            if hasattr(library, name):
                threads = getattr(library, name)()
                break
        break
print(os.environ.get("OPENBLAS_NUM_THREADS"), threads)
"""


def _probe(how: str, **env: str) -> tuple[str, int]:
    base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                                 "GOTO_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", _PROBE, how], capture_output=True, text=True, check=True,
                          cwd=ROOT, env={**base, **env})
    variable, threads = done.stdout.split()
    return variable, int(threads)


def test_numpy_gets_one_blas_thread_and_programs_the_environment_they_had():
    variable, threads = _probe("main")
    assert variable == "None"  # set only while numpy was imported
    # numpy's wheels (pinned in pyproject.toml) bring their own OpenBLAS, which the probe finds in the maps
    assert threads != -1, "numpy is not linked with an OpenBLAS the probe knows"
    assert threads == 1


def test_a_users_choice_of_threads_and_another_running_thread_leave_blas_alone():
    variable, threads = _probe("main", OPENBLAS_NUM_THREADS="2")
    assert variable == "2" and threads in (2, -1)
    variable, threads = _probe("main", OMP_NUM_THREADS="2")
    assert variable == "None" and threads in (2, -1)
    # numpy imported while another thread runs (which might start a program meanwhile): the environment
    # is never changed, so OpenBLAS takes its default
    variable, threads = _probe("thread")
    assert variable == "None"
    if threads != -1 and len(os.sched_getaffinity(0)) > 1:
        assert threads > 1
