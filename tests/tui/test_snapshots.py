"""SVG snapshots of every screen and dialog at 40x12, 80x24 and 120x40.

Update them with ``pytest tests/tui/test_snapshots.py --snapshot-update`` and
look at the SVGs before committing.  The demo repository has fixed dates,
TZ is UTC (see conftest) and the search box does not blink.  Nothing is
measured here: the run screen shows a run replayed from fixed events with
its clock fixed, the explain dialog an explanation stored with the check
(of fixed perf profiles); tests/tui/test_tmux_walk.py visits real runs.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from perun_tui.app import PerunApp
from perun_tui.modals.too_small import TooSmallScreen
from perun_tui.widgets.profiles import ProfilesTable

from .helpers import (bisect_repo, git_head, main_screen, replayed_run, select_profile, set_matrix, settle,
                      store_demo_explanation, wait_until)

SIZES = [pytest.param((40, 12), id="40x12"), pytest.param((80, 24), id="80x24"),
         pytest.param((120, 40), id="120x40")]

#: positions in the demo's history, newest first: a commit with a memory profile
MEMORY_COMMIT = 2


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
def test_main_screen_with_a_notification(snap_compare, demo_repo, size):
    """A mark's notification takes the key bar's line (and the rows it needs more from the panes), over no pane."""
    from textual.widgets._toast import Toast

    async def run_before(pilot):
        await settle(pilot)
        table = await select_profile(pilot, "1@p")
        pilot.app.NOTIFICATION_TIMEOUT = 600  # still there when the picture is taken on a busy machine
        await pilot.press("m")
        await wait_until(pilot, lambda: bool(pilot.app.screen.query(Toast)))
        await pilot.pause()
        await pilot.pause()
        assert table.has_focus

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


def _plot(tag: str, *keys: str, commit: int = 0):
    async def run_before(pilot):
        await settle(pilot)
        await select_profile(pilot, tag, commit=commit)
        await pilot.press("p")
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_plot_screen(snap_compare, demo_repo, size):
    """The scatter of HEAD's mixed profile: one uid with its constant and linear models."""
    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=_plot("1@i"))


@pytest.mark.parametrize("size", SIZES)
def test_plot_bars(snap_compare, demo_repo, size):
    """Bars of HEAD's time profile."""
    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=_plot("0@i", "b"))


@pytest.mark.parametrize("size", SIZES)
def test_plot_heap_map(snap_compare, demo_repo, size):
    """A memory profile opens as a heap map."""
    assert snap_compare(app_on(demo_repo), terminal_size=size,
                        run_before=_plot("1@i", commit=MEMORY_COMMIT))


@pytest.mark.parametrize("size", SIZES)
def test_plot_flame_graph(snap_compare, demo_repo, size):
    """The flame graph of the memory profile's allocation stacks, the cursor on a frame."""
    assert snap_compare(app_on(demo_repo), terminal_size=size,
                        run_before=_plot("1@i", "f", "down", "down", commit=MEMORY_COMMIT))


@pytest.mark.parametrize("size", SIZES)
def test_run_screen(snap_compare, demo_repo, size, monkeypatch):
    """R: the job matrix run for HEAD, finished: its jobs, the advice on measuring, the last job's output."""
    from perun_tui.core import Core
    from perun_tui.screens import run

    head = git_head(demo_repo)
    run_matrix, clock = replayed_run(demo_repo, head)
    monkeypatch.setattr(Core, "run_matrix", run_matrix)
    monkeypatch.setattr(run, "time", SimpleNamespace(monotonic=lambda: clock[0]))

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, run.RunScreen) and not pilot.app.screen.running)
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
        await pilot.press("shift+tab", "right")  # from the commands to the tab bar, then the next tab
        await settle(pilot)

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


async def _check_all(pilot, *keys: str):
    await settle(pilot)
    await pilot.press("c")
    await settle(pilot)
    await pilot.press("a")
    await wait_until(pilot, lambda: not pilot.app.screen.running, timeout=60)
    await settle(pilot)
    pilot.app.clear_notifications()  # its note would be gone or not by the time of the picture
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_check_results(snap_compare, demo_repo, size):
    """Every commit checked; only the degradations shown."""
    async def run_before(pilot):
        await _check_all(pilot, "f", "f")

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_explain_dialog(snap_compare, demo_repo, size):
    """x on the slowdown's real time: the functions that made it slower and their difference flame graph, from
    the explanation stored with the check (fixed perf profiles: nothing is collected)."""
    from textual.widgets import DataTable, Static

    from perun_core import api
    from perun_tui.modals.explain import ExplainScreen

    store_demo_explanation(demo_repo)

    async def run_before(pilot):
        await _check_all(pilot)
        screen = pilot.app.screen
        table = screen.query_one("#check-findings", DataTable)
        table.move_cursor(row=next(row for row in range(table.row_count) if api.explanation_of(
            screen.rows[int(table.coordinate_to_cell_key((row, 0)).row_key.value)][2]) is not None))
        await pilot.press("x")
        modal = pilot.app.screen
        assert isinstance(modal, ExplainScreen)
        await wait_until(pilot, lambda: modal.explanation is not None and modal.functions_width > 0 and str(
            modal.query_one("#explain-flame", Static).render()).startswith("Difference flame graph"), timeout=30)
        await settle(pilot)

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_compare_view(snap_compare, demo_repo, size):
    """The first degradation's baseline and target (stacked under 120 columns)."""
    async def run_before(pilot):
        await _check_all(pilot, "f", "f", "enter")

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_difference_of_two_profiles(snap_compare, demo_repo, size):
    """HEAD's two registered profiles marked: the table of what changed."""
    async def run_before(pilot):
        await settle(pilot)
        await select_profile(pilot, "0@i")
        await pilot.press("m", "down", "d")
        await settle(pilot)
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "result", None) is not None, timeout=30)
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_fuzz_form(snap_compare, demo_repo, size):
    """The fuzz screen opened from the palette: its form, before a start."""
    async def run_before(pilot):
        await settle(pilot)
        main_screen(pilot.app).action_fuzz()
        await wait_until(pilot, lambda: bool(pilot.app.screen.query("#field-cmd")))
        await settle(pilot)

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_bisect_screen(snap_compare, tmp_path, size):
    """Bisect over stored profiles: the first degraded commit found without a run."""
    from perun_tui.screens.bisect import BisectScreen
    from perun_tui.widgets.wrappedlog import WrappedLog

    root, shas = bisect_repo(tmp_path)

    async def run_before(pilot):
        await settle(pilot)
        main = main_screen(pilot.app)
        main.history.marked = {shas[4]: None, shas[0]: None}
        main.action_bisect()
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, BisectScreen) and any(
            line.startswith("first degraded commit") for log in pilot.app.screen.query(WrappedLog) for line in log.lines),
            timeout=60)
        await settle(pilot)
        # the log follows its last line as it grows; whether the last scroll landed before the picture is a
        # race at 40x12, so the picture is taken at the end, where the result is
        for log in pilot.app.screen.query(WrappedLog):
            log.scroll_end(animate=False)
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    app = PerunApp(root)
    app.sub_title = "~/proj"
    assert snap_compare(app, terminal_size=size, run_before=run_before)


def _pressing(*keys: str, on_profile: str | None = None):
    """What to do before the picture: settle, select a profile of HEAD (when given), press ``keys``, settle."""
    async def run_before(pilot):
        await settle(pilot)
        if on_profile is not None:
            await select_profile(pilot, on_profile)
        await pilot.press(*keys)
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_help_screen(snap_compare, demo_repo, size):
    """F1: every key."""
    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=_pressing("f1"))


@pytest.mark.parametrize("size", SIZES)
def test_confirm_dialog(snap_compare, demo_repo, size):
    """u on a registered profile asks first."""
    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=_pressing("u", on_profile="0@i"))


@pytest.mark.parametrize("size", SIZES)
def test_postprocess_dialog(snap_compare, demo_repo, size):
    """o on a profile: the form of the postprocessor's parameters."""
    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=_pressing("o", on_profile="0@i"))


@pytest.mark.parametrize("size", [pytest.param((39, 12), id="39x12"), pytest.param((80, 11), id="80x11")])
def test_too_small_screen(snap_compare, demo_repo, size):
    """Under 40x12 the screen says which size is needed."""
    async def run_before(pilot):
        await settle(pilot)
        assert isinstance(pilot.app.screen, TooSmallScreen)

    assert snap_compare(app_on(demo_repo), terminal_size=size, run_before=run_before)
