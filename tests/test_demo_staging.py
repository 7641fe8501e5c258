"""A demo built in place (so it can be watched): killed, failed, stopped and concurrent builds end clean.

The builds here write a few files instead of profiling C (the builder does
not care what it builds); tests/test_demo_collected.py builds the real one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from perun_core.api._demo.staging import BUILD_LOCK, build_visibly, marker_of
from perun_core.errors import Interrupted, UsageError

WANTED = {"kind": "test", "version": 1}


def write_demo(root: Path) -> None:
    (root / ".perun").mkdir()
    (root / "data.txt").write_text("complete\n")


def test_a_build_holds_the_lock_file_until_its_marker_is_written(tmp_path):
    seen = {}

    def build(root: Path) -> None:
        seen["lock"] = (root / BUILD_LOCK).exists()
        seen["marker"] = marker_of(root)
        write_demo(root)

    assert build_visibly(tmp_path / "demo", WANTED, build) == tmp_path / "demo"
    assert seen == {"lock": True, "marker": None}  # a build going on is never taken for a finished one
    assert marker_of(tmp_path / "demo") == WANTED and not (tmp_path / "demo" / BUILD_LOCK).exists()
    assert build_visibly(tmp_path / "demo", WANTED, lambda root: pytest.fail("rebuilt")) == tmp_path / "demo"


KILLED_BUILD = """
import sys, threading
from pathlib import Path
from perun_core.api._demo.staging import build_visibly

def build(root):
    (root / ".git").mkdir()
    (root / ".git" / "half-written").write_text("x")
    print("building", flush=True)
    threading.Event().wait()

build_visibly(Path(sys.argv[1]), {"kind": "test", "version": 1}, build)
"""


def test_a_killed_build_is_found_and_built_again(tmp_path):
    target = tmp_path / "demo"
    child = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "building\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert (target / BUILD_LOCK).exists() and marker_of(target) is None  # what a kill leaves: not a demo
    built = []
    build_visibly(target, WANTED, lambda root: (built.append(sorted(p.name for p in root.iterdir())),
                                                write_demo(root)))
    assert built == [[BUILD_LOCK]]  # the killed build's files were removed first
    assert marker_of(target) == WANTED and sorted(p.name for p in target.iterdir()) == [".perun", "data.txt"]


@pytest.mark.parametrize("error", [RuntimeError("compiler crashed"), KeyboardInterrupt()])
def test_a_failed_or_interrupted_build_leaves_nothing(tmp_path, error):
    def build(root: Path) -> None:
        write_demo(root)
        raise error

    with pytest.raises(type(error)):
        build_visibly(tmp_path / "demo", WANTED, build)
    assert list(tmp_path.iterdir()) == []


def test_a_second_build_waits_for_the_first_and_reuses_it(tmp_path):
    target = tmp_path / "demo"
    inside, release, waited = threading.Event(), threading.Event(), threading.Event()
    builds = []

    def first_build(root: Path) -> None:
        builds.append("first")
        inside.set()
        release.wait()
        write_demo(root)

    first = threading.Thread(target=build_visibly, args=(target, WANTED, first_build))
    first.start()
    inside.wait()
    results = []

    def second() -> None:
        results.append(build_visibly(target, WANTED, lambda root: builds.append("second"), waiting=waited.set))

    other = threading.Thread(target=second)
    other.start()
    waited.wait()
    release.set()
    first.join()
    other.join()
    assert builds == ["first"] and results == [target] and marker_of(target) == WANTED
    assert not (target / BUILD_LOCK).exists()


def test_a_second_build_builds_anew_when_the_first_is_stopped(tmp_path):
    target = tmp_path / "demo"
    inside, waited, cancel = threading.Event(), threading.Event(), threading.Event()
    outcome = {}

    def stopped_build(root: Path) -> None:
        inside.set()
        waited.wait()
        raise Interrupted("building the demo was cancelled")

    def first() -> None:
        try:
            build_visibly(target, WANTED, stopped_build, cancel=cancel)
        except Interrupted as error:
            outcome["first"] = error

    runner = threading.Thread(target=first)
    runner.start()
    inside.wait()
    assert build_visibly(target, WANTED, write_demo, waiting=waited.set) == target
    runner.join()
    assert isinstance(outcome["first"], Interrupted) and marker_of(target) == WANTED


def test_a_waiting_build_stops_when_cancelled(tmp_path):
    target = tmp_path / "demo"
    inside, release, cancel = threading.Event(), threading.Event(), threading.Event()

    def slow(root: Path) -> None:
        inside.set()
        release.wait()
        write_demo(root)

    runner = threading.Thread(target=build_visibly, args=(target, WANTED, slow))
    runner.start()
    inside.wait()
    with pytest.raises(Interrupted):
        build_visibly(target, WANTED, write_demo, cancel=cancel, waiting=cancel.set)
    release.set()
    runner.join()
    assert marker_of(target) == WANTED  # the first build was not disturbed


def test_a_directory_holding_something_else_is_refused(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine\n")
    with pytest.raises(UsageError, match="is not a demo repository"):
        build_visibly(tmp_path / "busy", WANTED, write_demo)
    assert os.listdir(tmp_path / "busy") == ["notes.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError):
        build_visibly(tmp_path / "file", WANTED, write_demo)
