"""Pilot tests of the difference screen: from two marked profiles and from a check finding."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from perun_tui.app import PerunApp
from perun_tui.screens.diff import DiffScreen
from perun_tui.screens.check import CheckScreen

from .helpers import Recorder, checked, rendered_text, select_profile, settle, wait_until


def _table_text(screen: DiffScreen) -> str:
    return "" if screen.result is None else screen.result.table


async def test_two_marked_profiles_across_commits_open_the_difference(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = await select_profile(pilot, "0@i", commit=0)
        first = table.current
        await pilot.press("m")
        table = await select_profile(pilot, "0@i", commit=5)
        await pilot.press("d")  # one marked and the cursor on another: their difference
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await wait_until(pilot, lambda: screen.result is not None, timeout=30)
        text = _table_text(screen)
        assert first.source in text and "baseline" in text and "rel" in text
        await pilot.press("b")
        await pilot.pause()
        assert screen.query_one("TabbedContent").active == "diff-bars"
        assert "upper bar" in rendered_text(screen.query_one("#diff-bars-text", Static))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DiffScreen)


async def test_d_on_a_finding_opens_the_difference_of_its_baseline_and_target(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await checked(pilot, "a")
        findings = screen.query_one("#check-findings", DataTable)
        assert findings.row_count > 0
        _, pair, _ = screen.current
        await pilot.press("d")
        await settle(pilot)
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        await wait_until(pilot, lambda: diff.result is not None, timeout=30)
        # the title names both profiles: on one line with an arrow, or a line each when that is too wide
        text = _table_text(diff)
        assert f"{pair.baseline.name} -> {pair.target.name}" in text or \
            (f"baseline: {pair.baseline.name}" in text and f"target:   {pair.target.name}" in text), text


async def test_an_error_wraps_at_the_edge_of_a_narrow_screen(demo_repo):
    """Comparing two profiles that cannot be compared: the whole error is on screen at 40 columns."""
    from perun_core.errors import PerunError

    message = ("cannot compare memory-sll-bench-6000-2026-11-27-04-57-47.perf with "
               "trace-sll-bench-6000-2026-11-27-04-57-48.perf: their functions cost different units")

    def refused():
        raise PerunError(message)

    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        screen = DiffScreen(refused, "refused")
        app.push_screen(screen)
        await wait_until(pilot, lambda: screen.result is not None)
        app.clear_notifications()
        await pilot.pause()
        text = screen.query_one("#diff-table-text", Static)
        assert text.region.right <= 40  # nothing beyond the screen's edge, to be scrolled to
        assert "".join(rendered_text(text).split()) == "".join(f"error: {message}".split())


async def test_the_toast_of_the_marks_goes_when_the_difference_opens(demo_repo):
    """'marked 0@i · press d for the difference' stayed over the difference screen it led to after d."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "0@i", commit=0)
        await pilot.press("m")
        await select_profile(pilot, "0@i", commit=5)
        await pilot.press("m")
        await pilot.pause()
        assert any("press d" in note.message for note in app._notifications)
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        assert not any(note.message.startswith("marked ") for note in app._notifications)


async def test_the_note_without_a_flame_graph_wraps_at_40_columns(demo_repo):
    """A time and a memory profile have no call stacks: the flame graph's tab said so on one line that the
    screen cut at 40 columns ('no call stacks in both profiles: no diff'), with no ellipsis."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "0@i", commit=0)
        await pilot.press("m", "down", "d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await wait_until(pilot, lambda: screen.result is not None, timeout=30)
        await pilot.press("f")
        await settle(pilot)
        note = screen.query_one("#diff-flame-text", Static)
        assert note.region.right <= app.size.width
        assert " ".join(rendered_text(note).split()) == "no call stacks in both profiles: no difference flame graph"


async def test_marks_show_in_the_profiles_table_and_unmarking_says_so(demo_repo):
    """m once showed only in a toast, and m again took the mark away without a word in the table."""
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 30), message_hook=recorder) as pilot:
        await settle(pilot)
        table = await select_profile(pilot, "0@i", commit=0)
        await pilot.press("m")
        await pilot.pause()
        lines = rendered_text(table).splitlines()
        assert "diff" in lines[0]
        assert "base" in next(line for line in lines if "0@i" in line)
        table.move_cursor(row=table.get_row_index("1@i"))
        await pilot.press("m")
        await pilot.pause()
        assert "target" in next(line for line in rendered_text(table).splitlines() if "1@i" in line)
        await pilot.press("m")  # again on the same row: unmarked, and said so
        await pilot.pause()
        assert any(note.startswith("unmarked 1@i") for note in recorder.notes())
        assert "target" not in rendered_text(table)
        table.move_cursor(row=table.get_row_index("1@i"))
        await pilot.press("m")
        table.move_cursor(row=table.get_row_index("0@p"))
        await pilot.press("m")  # a third: the oldest mark goes, and the toast says which
        await pilot.pause()
        assert "unmarked 0@i" in recorder.notes()[-1]
        assert "0@i" in rendered_text(table) and "base" not in next(
            line for line in rendered_text(table).splitlines() if "0@i" in line)
        table.move_cursor(row=table.get_row_index("1@i"))
        await pilot.press("m")
        table.move_cursor(row=table.get_row_index("0@p"))
        await pilot.press("m")
        await pilot.pause()
        assert "diff" not in rendered_text(table).splitlines()[0]  # nothing marked: no column


async def test_the_table_has_the_focus_when_the_difference_opens(demo_repo):
    """End and PageDown did nothing until Tab moved the focus from the tab bar to the table."""
    from textual.containers import ScrollableContainer

    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 12)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@p", commit=0)
        await pilot.press("m")
        await select_profile(pilot, "0@i", commit=2)
        await pilot.press("d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await wait_until(pilot, lambda: screen.result is not None, timeout=30)
        await settle(pilot)
        view = screen.query_one("#diff-table ScrollableContainer", ScrollableContainer)
        assert app.focused is view
        assert view.max_scroll_y > 0
        await pilot.press("end")
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        await pilot.press("b")
        await pilot.pause()
        assert app.focused is screen.query_one("#diff-bars ScrollableContainer")
