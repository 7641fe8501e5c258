"""``make demo`` is quiet: one line per phase, the installer's output only when installing fails.

The Makefile's install recipe runs here with a stand-in ``python3`` whose
venv "pip" prints pages of warnings (as setuptools does) and succeeds or
fails on request, so no network or real install is needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
needs_make = pytest.mark.tools("make")

FAKE_PYTHON = """#!/bin/sh
# a stand-in for 'python3 -m venv DIR': makes DIR/bin/python, a noisy pip
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    cat > "$3/bin/python" <<'EOS'
#!/bin/sh
i=0
while [ $i -lt 60 ]; do echo "SetuptoolsDeprecationWarning: line $i" >&2; i=$((i+1)); done
echo "$*" >> "$(dirname "$0")/calls"
case "$*" in *"-e "*) exit $PIP_EXIT ;; esac
exit 0
EOS
    chmod +x "$3/bin/python"
    exit 0
fi
exit 1
"""


def run_make(tmp_path: Path, pip_exit: int, target: str = ".venv/.installed") -> subprocess.CompletedProcess:
    work = tmp_path / "clone"
    work.mkdir()
    shutil.copy(ROOT / "Makefile", work / "Makefile")
    (work / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    fake = tmp_path / "python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    env = {**os.environ, "PIP_EXIT": str(pip_exit)}
    return subprocess.run(["make", "--no-print-directory", f"PYTHON={fake}", target], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)


@needs_make
def test_installing_is_one_line_and_the_noise_goes_to_a_log(tmp_path):
    done = run_make(tmp_path, 0)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["perun: installing perun and its dependencies into .venv"]
    assert done.stderr == ""
    log = (tmp_path / "clone" / ".venv" / "install.log").read_text()
    assert log.count("SetuptoolsDeprecationWarning") == 120


@needs_make
def test_the_demo_installs_no_test_extras_and_the_tests_add_them(tmp_path):
    done = run_make(tmp_path, 0, ".venv/.installed-test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["perun: installing perun and its dependencies into .venv",
                                        "perun: installing the test extras into .venv"]
    calls = (tmp_path / "clone" / ".venv" / "bin" / "calls").read_text().splitlines()
    installs = [call.split() for call in calls if "install" in call.split()]
    # the stamp make demo needs installs perun alone; the test stamp adds the extras on top
    assert [words[words.index("-e") + 1] for words in installs] == [".", ".[test]"], calls
    assert not [call for call in calls if "--upgrade" in call.split()], "pip 23 or newer (the fake's) is kept"


@needs_make
def test_a_failed_install_shows_its_output(tmp_path):
    failed = run_make(tmp_path, 1)
    assert failed.returncode != 0
    assert failed.stdout.splitlines()[0] == "perun: installing perun and its dependencies into .venv"
    assert failed.stdout.count("SetuptoolsDeprecationWarning") == 120
    assert "perun: installing failed; the output above is kept in .venv/install.log" in failed.stderr
    assert not (tmp_path / "clone" / ".venv" / ".installed").exists()


def test_the_demo_builder_prints_one_line_and_reuses_a_build(tmp_path):
    target = tmp_path / "demo"
    (target / ".perun").mkdir(parents=True)
    from perun_core.api._demo.collected import COLLECTED_DEMO_VERSION

    (target / ".perun" / "demo.json").write_text(f'{{"kind": "collected", "version": {COLLECTED_DEMO_VERSION}}}\n')
    reused = subprocess.run([sys.executable, "-m", "perun_core.cli.demo", str(target)], capture_output=True,
                            text=True, timeout=60)
    assert reused.returncode == 0, reused.stderr
    assert reused.stdout == f"perun: reusing the demo repository in {target}\n" and reused.stderr == ""


def test_the_demo_builder_refuses_a_directory_holding_something_else(tmp_path):
    from perun_core.api import DEMO_DURATION

    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    failed = subprocess.run([sys.executable, "-m", "perun_core.cli.demo", str(target)], capture_output=True,
                            text=True, timeout=60)
    assert failed.returncode == 1
    assert failed.stdout.splitlines() == [f"perun: building the demo repository in {target} (once). "
                                          f"{DEMO_DURATION}."]
    lines = failed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: building the demo failed: ")
    assert (target / "notes.txt").read_text() == "mine\n"


def test_the_build_prints_each_phase_once_with_its_seconds_off_a_terminal():
    import io

    from perun_core.cli.demo import PhaseLines

    out = io.StringIO()
    lines = PhaseLines(out)
    for step in ["building commit 1/2", "building commit 2/2", "collecting time profiles: commit 1/2 (aaaaaaa)",
                 "collecting trace profiles: commit 1/1 (aaaaaaa)", "collecting time profiles: commit 2/2 (bbbbbbb)",
                 "checking the history for performance changes"]:
        lines(step)
    lines.close("built")
    printed = out.getvalue().splitlines()
    assert [line.split(" s  ", 1)[1] for line in printed] == [
        "building commit 1/2", "collecting time profiles: commit 1/2 (aaaaaaa)",
        "collecting trace profiles: commit 1/1 (aaaaaaa)", "checking the history for performance changes", "built"]
    seconds = [float(line.split(" s  ", 1)[0]) for line in printed]
    assert seconds == sorted(seconds) and seconds[0] >= 0


def test_on_a_terminal_the_running_phase_counts_in_place_and_verbose_prints_every_step():
    import io

    from perun_core.cli.demo import PhaseLines

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    lines = PhaseLines(out)
    for step in ["building commit 1/2", "building commit 2/2", "checking the history for performance changes"]:
        lines(step)
    lines.close("built")
    shown = [row.rsplit("\r\x1b[K", 1)[-1].split(" s  ", 1)[1] for row in out.getvalue().split("\n") if row]
    assert shown == ["building commit 2/2", "checking the history for performance changes", "built"]
    assert out.getvalue().count("\r\x1b[K") == 1

    verbose = Terminal()
    lines = PhaseLines(verbose, every_step=True)
    for step in ["building commit 1/2", "building commit 2/2"]:
        lines(step)
    assert [row.split(" s  ", 1)[1] for row in verbose.getvalue().splitlines()] == [
        "building commit 1/2", "building commit 2/2"]
