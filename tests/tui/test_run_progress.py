"""Pilot tests: the run's progress moves during a single long job, and pulses while nothing says how far it is."""

from __future__ import annotations

import sys
import tempfile

from textual.widgets import ProgressBar, Static

from perun_tui.app import PerunApp
from perun_tui.screens.run import RunScreen, _clock

from .helpers import rendered_text, set_matrix, settle, wait_until

#: each run of this program waits until the test lets it go (a file appears), then takes the file away
GATE = """\
import os, sys, time
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.01)
os.remove(go)
"""


async def test_a_single_long_job_shows_elapsed_time_runs_done_and_a_moving_bar(demo_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gate = tmp_path / "gate.py"
    gate.write_text(GATE)
    go = tmp_path / "go"
    set_matrix(demo_repo, cmds=[sys.executable], args=[f"{gate} {go}"],
               collectors=[{"name": "time", "params": {"repeat": 3}}])
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        bar = screen.query_one(ProgressBar)
        current = screen.query_one("#run-current", Static)

        # the first run of the only job: nothing is done yet, so the bar pulses rather than sit at 0 %
        await wait_until(pilot, lambda: screen.runs == (0, 3), timeout=60)
        screen._tick()
        await pilot.pause()
        assert screen.total == 1 and bar.total is None
        assert "job 1 of 1 · 0 of 3 runs done" in rendered_text(current)
        assert screen.query_one("#run-pane").border_subtitle.endswith(" elapsed")

        for done in (1, 2):
            go.write_text("")
            await wait_until(pilot, lambda done=done: screen.runs == (done, 3), timeout=60)
            screen._tick()
            await pilot.pause()
            assert bar.total == 1 and abs(bar.percentage - done / 3) < 1e-9  # moving within the one job
            assert f"{done} of 3 runs done" in rendered_text(current)
        go.write_text("")
        await wait_until(pilot, lambda: not screen.running, timeout=60)
        await settle(pilot)
        assert screen.status == "ok" and bar.percentage == 1


def test_elapsed_time_reads_like_a_clock():
    assert [_clock(s) for s in (0.4, 42.9, 187, 3727)] == ["0 s", "42 s", "3:07", "1:02:07"]
