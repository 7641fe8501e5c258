"""Pilot tests of the bisect screen: palette command 'bisect: start' over stored profiles, live lines."""

from __future__ import annotations

from textual.widgets import Log

from perun_tui.app import PerunApp
from perun_tui.screens.bisect import BisectDone, BisectScreen

from .helpers import Recorder, bisect_repo, main_screen, settle, wait_until


async def test_bisect_from_the_palette_finds_the_commit_with_stored_profiles(tmp_path):
    root, shas = bisect_repo(tmp_path)
    recorder = Recorder()
    app = PerunApp(root)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        main = main_screen(app)
        names = [command.name for command in main.palette_commands()]
        assert "bisect: start" in names
        main.action_bisect()  # nothing marked: a warning, no screen
        await pilot.pause()
        assert any("mark two commits" in note for note in recorder.notes("warning"))
        main.history.marked = {shas[4]: None, shas[0]: None}  # newest first: the order is found out
        main.action_bisect()
        await wait_until(pilot, lambda: recorder.of(BisectDone), timeout=60)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BisectScreen)
        done = recorder.of(BisectDone)[0]
        assert done.error is None and done.result.culprit == shas[3] and done.result.collections == 0
        lines = screen.query_one(Log).lines
        assert any(line.startswith(f"{shas[4][:7]} is bad (stored profiles)") for line in lines), lines
        assert f"first degraded commit: {shas[3][:7]}" in lines
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, BisectScreen)
