"""F1 (and ``?``) list the keys inside dialogs too, as the keys screen says they do 'everywhere'."""

from __future__ import annotations

import pytest

from perun_tui.app import PerunApp
from perun_tui.modals.details import ProfileDetailsScreen
from perun_tui.modals.dialogs import HelpScreen

from .helpers import rendered_text
from .test_app import focus_profiles, settle


@pytest.mark.parametrize("key", ["f1", "question_mark"])
async def test_the_keys_open_from_the_details_dialog_and_close_back_to_it(demo_repo, key):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await focus_profiles(pilot, "1@i")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ProfileDetailsScreen)
        await pilot.press(key)
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ProfileDetailsScreen)


async def test_f1_on_the_main_screen_explains_the_short_column_names(demo_repo):
    """The history's 'a m x t' and its - + * marks had no legend anywhere on screen."""
    from perun_tui.modals.dialogs import HelpScreen
    from perun_tui.widgets.history import HistoryView

    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "all, memory, mixed, time" in str(app.query_one(HistoryView).tooltip)
        await pilot.press("f1")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        legend = rendered_text(help_screen.query_one("#help-legend"))
        assert "a m x t" in legend and "all, memory, mixed, time" in legend
        assert "N@p: pending" in " ".join(legend.split())
