"""What the tests need from the machine, and what a missing piece does to them.

Two kinds of need, told apart so that a CI run cannot lose a group of tests
without anyone noticing:

* **Installable** (a program, a browser, a static C library): declare it with
  the ``tools`` mark, ``@pytest.mark.tools("cc", "make")`` on a test or as a
  module's ``pytestmark`` (``tests/conftest.py`` checks it before each test),
  or call :func:`need_tools` / :func:`require` inside the test.  Missing, the
  test is skipped on a developer's machine and **fails** when
  ``PERUN_REQUIRE_NATIVE_TOOLS=1``, which ``.ci/run`` sets after installing
  every package these tests name.
* **What no package can give**: the running kernel or file system refuses.
  :func:`machine_cannot` skips with a reason that starts with
  ``machine cannot:`` in every mode.  The complete list of such skips:

  - uprobe events (``perf probe -x``): the kernel has no tracefs with
    ``uprobe_events`` (a container, or a kernel built without uprobes);
  - sampling with perf: the kernel forbids it (``perf_event_paranoid``, a
    seccomp filter or a virtual machine without a PMU);
  - a read-only file for root: ``chattr +i`` fails on the file system
    (overlay, tmpfs), and root writes anywhere else;
  - a system library mapped executable in the test process (the symbol cache
    reads one of the interpreter's own): a statically linked interpreter has
    none;
  - a device file or a small tmpfs for the full-disk cases: making one needs
    root, mounting one a privilege a container may lack;
  - the original Perun (perun-toolsuite 0.28.3): never a dependency, it may
    only be installed in a throwaway environment outside the project, so its
    round trips run where ``PERUN_ORIGINAL`` names its executable.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable

import pytest

#: Set by .ci/run, which installs the tools: there a missing one fails the tests that need it.
REQUIRE_TOOLS = "PERUN_REQUIRE_NATIVE_TOOLS"

#: Where each tool comes from, for the message of a missing one (Debian package names, as .ci/run installs them).
PACKAGES = {
    "cc": "build-essential", "gcc": "build-essential", "make": "build-essential", "gcov": "build-essential",
    "g++": "g++", "valgrind": "valgrind", "perf": "linux-perf", "addr2line": "binutils", "nm": "binutils",
    "readelf": "binutils", "tmux": "tmux", "chromium": "chromium", "setsid": "util-linux",
}


def required() -> bool:
    """True where a missing installable tool must fail its test (``PERUN_REQUIRE_NATIVE_TOOLS=1``)."""
    return os.environ.get(REQUIRE_TOOLS) == "1"


def require(available: bool, what: str) -> None:
    """Go on when ``available``; else skip the calling test, or fail it under :data:`REQUIRE_TOOLS`."""
    if available:
        return
    if required():
        pytest.fail(f"{what} is missing; {REQUIRE_TOOLS}=1 requires it (.ci/run installs it)", pytrace=False)
    pytest.skip(f"{what} is missing (set {REQUIRE_TOOLS}=1 to fail instead)")


def missing(tools: Iterable[str]) -> list[str]:
    """The tools of ``tools`` that are not on PATH."""
    return [tool for tool in tools if shutil.which(tool) is None]


def need_tools(*tools: str) -> None:
    """:func:`require` every program of ``tools`` on PATH."""
    absent = missing(tools)
    packages = sorted({PACKAGES.get(tool, tool) for tool in absent})
    require(not absent, f"{', '.join(absent)} (Debian: {' '.join(packages)})")


def machine_cannot(what: str, detail: str) -> None:
    """Skip: the machine itself refuses ``what`` (one of the kinds listed in this module's docstring)."""
    pytest.skip(f"machine cannot: {what}: {detail}")
