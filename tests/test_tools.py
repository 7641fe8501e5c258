"""No silent skips: a missing tool fails its tests where CI requires the tools (tests/tools.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tools import PACKAGES, REQUIRE_TOOLS

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

#: Ways to skip a test; only tests/tools.py may use them, or a skipif whose reason says the machine cannot.
SKIPPING = re.compile(r"pytest\.skip\(|pytest\.skip\.Exception|importorskip\(|mark\.skip\(|mark\.skipif\(")

PROBE = '''
import pytest

@pytest.mark.tools("perun-no-such-tool")
def test_needs_a_missing_tool():
    pass

def test_needs_nothing():
    pass
'''


def test_only_tests_tools_decides_what_a_missing_tool_does():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if "fixtures" in path.relative_to(TESTS).parts or path.name in ("tools.py", "test_tools.py"):
            continue
        text = path.read_text()
        for match in SKIPPING.finditer(text):
            statement = text[match.start():match.start() + 200]
            if "machine cannot:" not in statement:
                line = text.count("\n", 0, match.start()) + 1
                offenders.append(f"{path.relative_to(ROOT)}:{line}")
    assert offenders == [], "skip through tests/tools.py (the tools mark, require, machine_cannot): " + ", ".join(offenders)


#: Plugins of the test environment the probe runs without.
UNUSED_PLUGINS = ("cacheprovider", "textual-snapshot", "syrupy", "xdist", "asyncio", "hypothesispytest",
                  "pastebin", "junitxml", "doctest")


def run_probe(tmp_path: Path, require: bool) -> subprocess.CompletedProcess:
    """pytest on :data:`PROBE` with this suite's conftest as a plugin, as a test file of the suite sees it."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {key: value for key, value in os.environ.items() if key != REQUIRE_TOOLS}
    env["PYTHONPATH"] = str(TESTS)
    if require:
        env[REQUIRE_TOOLS] = "1"
    # Only the suite's conftest matters here: the plugins the probe does not use stay unloaded, which keeps the
    # child's start-up short on a loaded machine (it took over 120 s in one loaded CI run with all of them).  The
    # timeout only stops a hung child; it is no bound on how fast the child must be.
    unused = [arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", *unused, "-rsf",
                           "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_probe.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)


def test_a_missing_tool_skips_on_a_developers_machine(tmp_path):
    result = run_probe(tmp_path, require=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 skipped" in result.stdout
    assert f"perun-no-such-tool (Debian: perun-no-such-tool) is missing (set {REQUIRE_TOOLS}=1" in result.stdout


def test_a_missing_tool_fails_where_the_tools_are_required(tmp_path):
    result = run_probe(tmp_path, require=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed, 1 error" in result.stdout  # the tools mark fails the test in its setup
    assert f"perun-no-such-tool (Debian: perun-no-such-tool) is missing; {REQUIRE_TOOLS}=1 requires it" \
        in result.stdout


def test_ci_installs_the_package_of_every_tool_and_requires_them():
    script = (ROOT / ".ci" / "run").read_text()
    for tool, package in PACKAGES.items():
        assert re.search(rf"packages\+=\({re.escape(package)}\)", script), f"{tool}: .ci/run installs no {package}"
    assert re.search(rf"^export {REQUIRE_TOOLS}=1$", script, re.MULTILINE)
    assert script.index(f"export {REQUIRE_TOOLS}=1") < script.index("\nmake test")
