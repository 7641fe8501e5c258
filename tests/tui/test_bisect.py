"""Pilot tests of the bisect screen: palette command 'bisect: start' over stored profiles, live lines."""

from __future__ import annotations

import re


from perun_tui.app import PerunApp
from perun_tui.screens.bisect import BisectDone, BisectScreen
from perun_tui.widgets.wrappedlog import WrappedLog

from .helpers import Recorder, bisect_repo, main_screen, settle, wait_until
from .test_keys import footer_items


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
        lines = screen.query_one(WrappedLog).lines
        assert any(line.startswith(f"{shas[4][:7]} is bad (stored profiles)") for line in lines), lines
        assert f"first degraded commit: {shas[3][:7]}" in lines
        # the finding's amounts with their unit and the change, as the check writes them (not 0.99000 -> 3.96000)
        found = [line for line in lines if line.startswith("  Degradation at ./app [real]: ")]
        assert found and re.search(r": 1\.00 s -> 4\.00 s \(\+\d+(\.\d+)? ?%\)$", found[0]), lines
        # each figure says what it compared (stored profiles here, as check; re-measured ones say so)
        assert lines[lines.index(found[0]) - 1] == f"  against {shas[0][:7]} (stored profiles):", lines
        # ended: esc closes, and the footer says so (it said "Cancel / close" whatever the state)
        items = footer_items(app)
        assert "esc Close" in items and not any("Cancel" in item for item in items), items
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, BisectScreen)


async def test_the_verdict_wraps_at_40_columns_instead_of_running_past_the_border(tmp_path):
    """At 40x12 the finding lines were cut at the pane's edge without an ellipsis (the log scrolled sideways)."""
    root, shas = bisect_repo(tmp_path)
    recorder = Recorder()
    app = PerunApp(root)
    async with app.run_test(size=(40, 12), message_hook=recorder) as pilot:
        await settle(pilot)
        main = main_screen(app)
        main.history.marked = {shas[4]: None, shas[0]: None}
        main.action_bisect()
        await wait_until(pilot, lambda: recorder.of(BisectDone), timeout=60)
        await settle(pilot)
        log = app.screen.query_one(WrappedLog)
        width = log.scrollable_content_region.width
        assert log.virtual_size.width <= width and all(len(line) <= width for line in log.lines), log.lines
        finding = next(line for line in log.written if line.startswith("  Degradation at ./app [real]"))
        assert len(finding) > width  # the case that scrolled: now its words follow in the next lines
        assert " ".join(finding.split()) in " ".join(" ".join(log.lines).split())
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert finding in log.lines  # whole again where it fits


def test_the_log_names_the_re_check_of_the_boundary_as_the_command_line_does():
    # the boundary's second measurement read as a repeated line ("eb6d7d3 is good (collected)" twice)
    from perun_core import api
    from perun_tui.screens.bisect import _describe

    first = api.BisectTested(api.BisectStep("eb6d7d3aa", "good", False), 1)
    again = api.BisectTested(api.BisectStep("eb6d7d3aa", "good", False, recheck=True), 0)
    assert _describe(first)[0] == "eb6d7d3 is good (collected)"
    assert _describe(again)[0] == "re-check: eb6d7d3 is good (collected)"
