"""The history pane keeps its cursor's commit on screen when the terminal shrinks."""

from __future__ import annotations

from perun_tui.app import PerunApp
from perun_tui.widgets.history import HistoryView
from perun_tui.widgets.profiles import ProfilesPane

from .helpers import rendered_text, settle


async def test_the_cursor_row_stays_on_screen_after_a_resize(demo_repo):
    """At 120x40 with the cursor on the 13th commit, a resize to 40x12 (two rows of history) scrolled it out of
    view while the profiles pane still said "Profiles at" that commit."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        history = app.query_one(HistoryView)
        history.focus()
        for _ in range(12):
            await pilot.press("down")
        await settle(pilot)
        selected = history.current.version.checksum[:7]
        assert selected in rendered_text(history)
        for size in ((40, 12), (80, 24), (40, 12)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            await pilot.pause()
            assert history.current.version.checksum[:7] == selected
            assert app.query_one(ProfilesPane).border_title == f"Profiles at {selected}"
            assert selected in rendered_text(history), (size, rendered_text(history))
