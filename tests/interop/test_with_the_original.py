"""Both tools on one repository: perun-core and the original Perun (perun-toolsuite 0.28.3) take turns.

The original is never a dependency of this project.  To run these tests, install it in a
throwaway virtual environment outside the checkout and name its executable::

    python3 -m venv /tmp/orig-venv && /tmp/orig-venv/bin/pip install perun-toolsuite==0.28.3
    PERUN_ORIGINAL=/tmp/orig-venv/bin/perun .venv/bin/python -m pytest tests/interop

Without ``PERUN_ORIGINAL`` every test here is skipped.  The original always runs with the
scratch ``HOME`` and ``PERUN_CONFIG_DIR`` of the test (it writes a ``shared.yml`` there on its
first run), in UTC.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from tools import machine_cannot
from conftest import run_cli

from perun_core.storage.index import ORIGINAL_LAYOUT, index_layout, read_index

ORIGINAL = os.environ.get("PERUN_ORIGINAL", "")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # it colours some messages despite --no-color

@pytest.fixture(autouse=True)
def the_original():
    """The original tool is never a dependency: only where PERUN_ORIGINAL names its executable."""
    if not (ORIGINAL and os.access(ORIGINAL, os.X_OK)):
        machine_cannot("the original Perun", "set PERUN_ORIGINAL to the perun executable of perun-toolsuite 0.28.3")


def original(*args: str, cwd: Path) -> str:
    """Run the original; its stdout and stderr together (it reports failures there and often exits 0)."""
    env = dict(os.environ, TZ="UTC", COLUMNS="200")
    Path(env["PERUN_CONFIG_DIR"]).mkdir(parents=True, exist_ok=True)  # it fails where the directory is missing
    done = subprocess.run([ORIGINAL, "--no-color", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    text = ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0 and "[ERROR]" not in text and "Traceback" not in text, (args, text)
    assert "Registration failed" not in text and "not in valid perun format" not in text, (args, text)
    return text


def ours(*args: str, cwd: Path) -> str:
    done = run_cli(*args, cwd=cwd)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def original_status(root: Path) -> tuple[list[str], list[str]]:
    """Names the original's ``status`` lists as registered at HEAD and as pending."""
    status = original("status", cwd=root)

    def names(tag: str) -> list[str]:
        return sorted(line.split("┃")[1].split("(")[0].strip() for line in status.splitlines() if f"{tag} ┃" in line)

    return names("@i"), names("@p")


def our_names(root: Path, head: str) -> list[str]:
    return sorted(entry.path for entry in read_index(root / ".perun" / "objects" / head[:2] / head[2:]))


def rows_shown_by_original(root: Path, spec: str) -> list[str]:
    table = original("show", spec, "tableof", "-ts", "-f", "tsv", "resources", cwd=root)
    return [line for line in table.splitlines() if "\t" in line and "amount" not in line]


@pytest.fixture
def project(tmp_path):
    from gitrepo import make_repo

    root = tmp_path / "project"
    head = make_repo(root, [{"files": {".gitignore": ".perun/\n", "README": "a project\n"}, "message": "first"}])[-1]
    return root, head


def test_both_tools_take_turns_adding_showing_and_removing(project):
    """In a repository the original made, each tool adds, lists, logs, shows and removes after the other."""
    root, head = project
    original("init", "--vcs-type", "git", ".", cwd=root)
    index = root / ".perun" / "objects" / head[:2] / head[2:]

    # the original collects; we see it pending and register it; the original lists, logs and shows it
    original("collect", "-c", "true", "-w", "11", "time", "-r", "1", cwd=root)
    assert "Registered" in ours("add", "0@p", cwd=root)
    assert index_layout(index.read_bytes()) == ORIGINAL_LAYOUT
    first = our_names(root, head)
    assert len(first) == 1 and original_status(root) == (first, [])
    assert "1 tracked profiles (1 time)" in original("log", cwd=root)
    assert len(rows_shown_by_original(root, first[0])) == 3  # real, user, sys

    # we collect; the original lists it pending and registers it; we list, log and show both
    ours("collect", "-c", "true", "-w", "22", "time", cwd=root)
    tracked, second = original_status(root)
    assert tracked == first and len(second) == 1
    original("add", "0@p", cwd=root)
    both = sorted(first + second)
    assert our_names(root, head) == both
    status = ours("status", cwd=root)
    assert all(name in status for name in both) and "(no pending profiles)" in status
    assert "2 profiles" in ours("log", cwd=root)
    for name in both:
        shown = ours("show", name, "tableof", "resources", "--format", "csv", cwd=root)
        assert "real" in shown and "sys" in shown

    # each removes one; both agree after each step
    original("rm", first[0], cwd=root)
    assert our_names(root, head) == second
    ours("rm", second[0], cwd=root)
    assert our_names(root, head) == [] and original_status(root) == ([], [])
    assert index_layout(index.read_bytes()) == ORIGINAL_LAYOUT


def test_a_repository_of_init_compat_is_one_the_original_uses(project):
    root, head = project
    assert "Shared with the original Perun" in ours("init", "--compat", ".", cwd=root)
    ours("collect", "-c", "true", "-w", "33", "time", cwd=root)
    ours("add", "0@p", cwd=root)
    (name,) = our_names(root, head)
    assert original_status(root) == ([name], [])
    assert len(rows_shown_by_original(root, name)) >= 3
    original("collect", "-c", "true", "-w", "44", "time", "-r", "1", cwd=root)
    original("add", "0@p", cwd=root)
    assert len(our_names(root, head)) == 2 and "2 profiles" in ours("log", cwd=root)


def test_what_the_originals_check_found_is_shown_by_our_log_and_status(tmp_path):
    """The original records its check's findings in objects/<sha>.changes; we show them where we never checked."""
    from gitrepo import make_repo

    root = tmp_path / "project"
    script = "#!/bin/sh\nsleep {}\n"
    make_repo(root, [{"files": {".gitignore": ".perun/\n", "prog.sh": ("exec", script.format("0.01"))},
                              "message": "fast"}])
    original("init", "--vcs-type", "git", ".", cwd=root)
    # it pairs only profiles with a postprocessor (a profile without one records '' as its postprocessor, which no
    # other profile has); its raw profiles stay pending: [fast], then [fast, slow]
    original("collect", "-c", "./prog.sh", "-w", "1", "time", "-r", "3", "-w", "0", cwd=root)
    original("postprocessby", "0@p", "moving-average", "-of", "amount", "-per", "order", "sma", cwd=root)
    original("add", "1@p", cwd=root)
    head = make_repo(root, [{"files": {".gitignore": ".perun/\n", "prog.sh": ("exec", script.format("0.3"))},
                             "message": "slow"}])[-1]
    original("collect", "-c", "./prog.sh", "-w", "1", "time", "-r", "3", "-w", "0", cwd=root)
    original("postprocessby", "1@p", "moving-average", "-of", "amount", "-per", "order", "sma", cwd=root)
    original("add", "2@p", cwd=root)
    assert "Degradation" in original("check", "head", cwd=root)
    assert (root / ".perun" / "objects" / head[:2] / f"{head[2:]}.changes").read_text().strip()
    short = ours("log", "-s", cwd=root).splitlines()
    assert short[1].startswith(f"* {head[:6]}") and short[1].rstrip().endswith("-")
    assert "- Degradation at ./prog.sh [original Perun] in ./prog.sh 1" in ours("status", cwd=root)


def test_the_original_draws_our_regressogram_and_regression_models(project, tmp_path):
    """Its show scatter stopped with KeyError: 'x_start' on our postprocessed profiles."""
    root, _head = project
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "original" / "profiles"
    ours("init", "--compat", ".", cwd=root)
    before = set((root / ".perun" / "jobs").glob("*.perf"))
    ours("postprocessby", str(fixture / "time-prog-regression-analysis-all-v2.perf"), "regressogram", "-bn", "4",
         "-per", "n", cwd=root)
    ours("postprocessby", str(fixture / "time-prog-regression-analysis-all-v2.perf"), "regression_analysis",
         "-dp", "n", "-r", "linear,quadratic", cwd=root)
    for made in sorted(set((root / ".perun" / "jobs").glob("*.perf")) - before):
        picture = tmp_path / f"{made.stem}.html"
        original("show", str(made), "scatter", "-o", "amount", "-p", "n", "-f", str(picture), cwd=root)
