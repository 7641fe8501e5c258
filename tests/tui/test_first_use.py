"""Pilot tests: a repository without profiles says what to press to collect the first ones."""

from __future__ import annotations

from perun_tui.app import PerunApp
from perun_tui.widgets.firstuse import FirstUse
from perun_tui.widgets.profiles import ProfilesTable

from .helpers import main_screen, rendered_text, settle


async def test_an_empty_repository_says_how_to_collect_the_first_profiles(perun_repo):
    root, _shas = perun_repo
    app = PerunApp(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen.empty
        first = screen.query_one(FirstUse)
        assert not screen.query_one(ProfilesTable).display  # the words stand where the table would
        text = " ".join(rendered_text(first).split())
        assert "No profiles yet" in text
        assert "e edit the job matrix" in text and "R run the matrix for HEAD" in text


async def test_the_steps_go_once_a_profile_exists(perun_repo):
    from conftest import time_profile, write_pending

    root, shas = perun_repo
    app = PerunApp(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert main_screen(app).query(FirstUse)
        write_pending(root, "ls-time.perf", time_profile(shas[-1]))
        await pilot.press("r")  # reload
        await settle(pilot)
        screen = main_screen(app)
        assert not screen.empty and not screen.query(FirstUse)
        assert screen.query_one(ProfilesTable).display and screen.query_one(ProfilesTable).row_count == 1


async def test_the_demo_is_not_empty(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not main_screen(app).empty and not app.query(FirstUse)
