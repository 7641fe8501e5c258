"""Pilot tests: perun-tui opens a demo that is still being built, shows the build's phases and the profiles as they land.

The build here is a stand-in for :func:`perun_core.api.build_demo` over a
small repository: it makes each step when the test lets it (an event per
step), so the tests wait on what the app shows, never on the clock.  The
real build is tested in tests/test_demo_collected.py and its recovery in
tests/test_demo_staging.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from perun_core import api
from perun_core.errors import Interrupted, RunError
from perun_tui.app import PerunApp
from perun_tui.demobuild import DemoBuild
from perun_tui.widgets.demoprogress import DemoProgress
from perun_tui.widgets.firstuse import FirstUse

from .helpers import Recorder, main_screen, rendered_text, wait_until


class SteppedBuild:
    """Stands in for api.build_demo: the history is there at once, each commit's profile lands when let."""

    def __init__(self, shas: list[str], fail: bool = False) -> None:
        self.shas = shas
        self.fail = fail
        self.gates = [threading.Event() for _ in range(len(shas) + 1)]

    def __call__(self, where, *, progress, cancel, on_ready):
        from conftest import time_profile, write_pending

        count = len(self.shas)
        for number in range(1, count + 1):
            progress(f"building commit {number}/{count}")
        on_ready(where)
        for number, (sha, gate) in enumerate(zip(self.shas, self.gates), 1):
            progress(f"collecting time profiles: commit {number}/{count} ({sha[:7]})")
            self._wait(gate, cancel)
            if self.fail:
                raise RunError("make failed with exit status 2")
            pending = write_pending(where, f"bench-{number}.perf", time_profile(sha, amounts=(0.1 * number,)))
            api.add([str(pending)], minor=sha, cwd=where)
        progress("checking the history for performance changes")
        self._wait(self.gates[-1], cancel)
        return where

    @staticmethod
    def _wait(gate: threading.Event, cancel: threading.Event) -> None:
        while not gate.wait(0.05):
            if cancel.is_set():
                raise Interrupted("building the demo was cancelled")


@pytest.fixture
def stepped(perun_repo, monkeypatch):
    root, shas = perun_repo
    builder = SteppedBuild(shas)
    monkeypatch.setattr(api, "build_demo", builder)
    build = DemoBuild(root).start()
    assert build.wait_ready() == root
    yield root, shas, builder, build
    build.stop()


def profiles_at(screen, sha: str) -> int:
    entry = next(e for e in screen.history.entries if e.version.checksum == sha)
    return entry.counts.total


async def test_the_build_shows_its_phase_and_the_commits_fill_in(stepped):
    root, shas, builder, build = stepped
    oldest, newest = shas
    recorder = Recorder()
    app = PerunApp(root, demo_build=build)
    async with app.run_test(size=(100, 30), message_hook=recorder) as pilot:
        screen = main_screen(app)
        progress = screen.query_one(DemoProgress)
        await wait_until(pilot, lambda: "commit 1/2" in rendered_text(progress))
        text = rendered_text(progress)
        assert "Building the demo" in text and f"collecting time profiles: commit 1/2 ({oldest[:7]})" in text
        await wait_until(pilot, lambda: len(screen.history.entries) == 2 and screen.report is not None)
        assert profiles_at(screen, oldest) == profiles_at(screen, newest) == 0
        assert not screen.empty and not screen.query(FirstUse)  # no "collect your first profiles" mid-build

        builder.gates[0].set()  # the oldest commit's profile lands, the next commit is profiled
        await wait_until(pilot, lambda: profiles_at(screen, oldest) == 1)
        assert "commit 2/2" in rendered_text(progress) and profiles_at(screen, newest) == 0
        assert screen.history.current.version.checksum == newest and screen.profiles.row_count == 0
        builder.gates[1].set()
        await wait_until(pilot, lambda: profiles_at(screen, newest) == 1)
        await wait_until(pilot, lambda: screen.profiles.row_count == 1)  # HEAD's pane lists it as it lands
        assert "checking the history" in rendered_text(progress)

        builder.gates[2].set()  # the build ends: the line goes, the app says so
        await wait_until(pilot, lambda: not screen.query(DemoProgress))
        await wait_until(pilot, lambda: any("The demo is built" in note for note in recorder.notes()))
        assert profiles_at(screen, oldest) == profiles_at(screen, newest) == 1
    assert build.done.is_set() and build.error is None


async def test_a_failed_build_says_so_where_the_progress_was(perun_repo, monkeypatch):
    root, shas = perun_repo
    builder = SteppedBuild(shas, fail=True)
    monkeypatch.setattr(api, "build_demo", builder)
    build = DemoBuild(root).start()
    build.wait_ready()
    app = PerunApp(root, demo_build=build)
    async with app.run_test(size=(100, 30)) as pilot:
        progress = main_screen(app).query_one(DemoProgress)
        await wait_until(pilot, lambda: "commit 1/2" in rendered_text(progress))
        builder.gates[0].set()
        await wait_until(pilot, lambda: "failed" in rendered_text(progress))
        text = " ".join(rendered_text(progress).split())
        assert "make failed with exit status 2" in text and "run make demo again" in text
        assert progress.has_class("-failed")
    assert isinstance(build.error, RunError) and not build.stopped


def test_stopping_the_build_cancels_it(stepped):
    _root, _shas, _builder, build = stepped
    assert build.running
    build.stop()  # what perun-tui does when it is quit mid-build
    assert not build.running and build.stopped


def test_perun_tui_demo_refuses_a_directory_holding_something_else(tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine\n")
    done = subprocess.run([sys.executable, "-m", "perun_tui", "--demo", str(busy)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "TERM": "xterm"})
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "is not a demo repository" in lines[0]
    assert os.listdir(busy) == ["notes.txt"]


def test_perun_tui_demo_opens_a_built_demo_without_building(tmp_path):
    from perun_core.api._demo.collected import COLLECTED_DEMO_VERSION
    from gitrepo import make_repo

    root = tmp_path / "demo"
    make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first"}])
    api.init(root)
    (root / ".perun" / "demo.json").write_text(f'{{"kind": "collected", "version": {COLLECTED_DEMO_VERSION}}}\n')
    # standard output is a pipe: the app cannot draw, so it says so after opening the repository
    done = subprocess.run([sys.executable, "-m", "perun_tui", "--demo", str(root)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "TERM": "xterm"})
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: perun-tui cannot draw here"), done.stderr


def test_a_build_that_waited_for_another_opens_what_that_one_built(tmp_path, monkeypatch):
    steps = []

    def waited_then_reused(where, *, progress, cancel, on_ready):
        progress("waiting for another build of the demo in this directory")  # and never on_ready: it was built
        steps.append(where)
        return where

    monkeypatch.setattr(api, "build_demo", waited_then_reused)
    build = DemoBuild(tmp_path / "demo").start()
    assert build.wait_ready() == tmp_path / "demo" and steps == [tmp_path / "demo"]
    build.done.wait()
    assert not build.running and build.error is None


def test_open_demo_returns_as_soon_as_the_history_is_written(perun_repo, monkeypatch, capsys):
    from perun_tui.cli import open_demo

    root, shas = perun_repo
    monkeypatch.setattr(api, "build_demo", SteppedBuild(shas))
    opened, build = open_demo(root)
    try:
        assert opened == root and build is not None and build.running  # the profiles are still to come
        err = capsys.readouterr().err.splitlines()
        assert err[0].startswith("perun-tui: building the demo repository in")  # the banner, on a line or more
        steps = [line for line in err if line.startswith("  ")]
        assert steps == ["  building commit 1/2"] == err[-1:]  # each phase once, before the app takes the terminal
    finally:
        build.stop()
    assert build.stopped


def test_the_banner_before_the_build_wraps_at_the_terminal_and_says_the_load_decides(perun_repo, monkeypatch,
                                                                                     capsys):
    """At 80 columns the banner was one line of 150 characters the terminal broke anywhere (a comma alone at the
    start of the second row), and it promised "about half a minute on two cores" for a build that took 100 s on a
    busy machine: it wraps between words now and says the load decides."""
    from perun_tui.cli import open_demo

    root, shas = perun_repo
    monkeypatch.setattr(api, "build_demo", SteppedBuild(shas))
    monkeypatch.setenv("COLUMNS", "80")
    opened, build = open_demo(root)
    try:
        err = capsys.readouterr().err.splitlines()
        banner = err[:err.index("  building commit 1/2")]
        assert len(banner) > 1 and all(len(line) <= 80 for line in banner), banner
        assert not any(line[:1] in ",.;:)" for line in banner), banner  # no row starts with a comma
        said = " ".join(banner)
        assert said.startswith(f"perun-tui: building the demo repository in ") and "busy machine" in said, said
        assert "half a minute on two cores)" not in said
    finally:
        build.stop()
