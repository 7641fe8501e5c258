"""SVG snapshots of the main, details, plot and job-matrix screens at 80x24 and 120x40.

Update them with ``pytest tests/tui/test_snapshots.py --snapshot-update`` and
look at the SVGs before committing.  The demo repository has fixed dates,
TZ is UTC (see conftest) and the search box does not blink.
"""

from __future__ import annotations

import pytest

from perun_tui.app import PerunApp
from perun_tui.widgets.profiles import ProfilesTable

from .helpers import select_profile, set_matrix, settle, wait_until

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


def app_on(root) -> PerunApp:
    """The app with a fixed header: the repository lives in a new temporary directory on every run."""
    app = PerunApp(root)
    app.sub_title = "~/sll"
    return app


@pytest.mark.parametrize("size", SIZES)
def test_main_screen(snap_compare, demo_repo, size):
    """History with HEAD selected, its profiles and the pending ones."""
    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_main_screen_at_the_slowdown(snap_compare, demo_repo, size):
    """The search jumped to the commit that made the benchmark twice as slow."""
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("slash", *"plain", "enter")
        await settle(pilot)

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_details_screen(snap_compare, demo_repo, size):
    """Details of HEAD's mixed profile: header, collector, statistics, models."""
    async def run_before(pilot):
        await settle(pilot)
        table = pilot.app.query_one(ProfilesTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("1@i"))
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_plot_screen(snap_compare, demo_repo, size):
    """The scatter of HEAD's mixed profile: one uid with its constant and linear models."""
    async def run_before(pilot):
        await settle(pilot)
        await select_profile(pilot, "1@i")
        await pilot.press("p")
        await settle(pilot)

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_matrix_editor(snap_compare, demo_repo, size):
    """The collectors of a job matrix: the list, and the form of the time collector's parameters."""
    set_matrix(demo_repo, cmds=["./sll-bench"], args=["--iterations 1000"],
               workloads=["workloads/small.txt", "workloads/large.txt"],
               collectors=[{"name": "time", "params": {"repeat": 5, "warmup": 1}}, {"name": "memory"}],
               postprocessors=[{"name": "regression_analysis", "params": {"method": "full"}}])

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "loaded", False))
        pilot.app.animation_level = "none"  # the tab underline jumps instead of sliding
        await pilot.press("right")
        await settle(pilot)

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)
