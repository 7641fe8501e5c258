"""Nothing told by colour alone: under NO_COLOR every screen keeps what colour would have said.

Series keep markers of their own, heat its shades with a legend, check
boxes a mark that differs in shape, the difference flame graph its signs.
"""

from __future__ import annotations

import re

import pytest
from textual.app import App
from textual.widgets import Static

from perun_core.params import Param
from perun_tui.app import PerunApp
from perun_tui.screens.diff import DiffScreen
from perun_tui.widgets.forms import ParamForm, TickBox
from perun_tui.widgets.plot import ChartView, HeapView

from .helpers import rendered_text, select_profile, settle, wait_until
from .test_plot import MEMORY_COMMIT


@pytest.fixture
def no_color(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")


def legend_markers(picture: str) -> list[str]:
    """The marker of each legend entry (plotext writes ``MM name`` at the top left of the frame)."""
    return re.findall(r"[│┤] (\S)\1 \S", picture)


async def test_scatter_and_flow_series_differ_in_shape_without_colour(demo_repo, no_color):
    app = PerunApp(demo_repo, colour=False)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.no_color
        await settle(pilot)
        await select_profile(pilot, "1@i")
        await pilot.press("p")
        await settle(pilot)
        chart = app.screen.query_one(ChartView)
        assert chart.picture.spans == [] or all(not span.style for span in chart.picture.spans)
        # the points and each of the uid's two model curves
        markers = legend_markers(chart.picture.plain)
        assert len(markers) == 3 and len(set(markers)) == 3
        await pilot.press("w")
        await settle(pilot)
        markers = legend_markers(chart.picture.plain)
        assert len(markers) >= 2 and len(set(markers)) == len(markers)  # one line per uid


async def test_heat_cells_are_shades_with_a_legend_without_colour(demo_repo, no_color):
    app = PerunApp(demo_repo, colour=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i", commit=MEMORY_COMMIT)
        await pilot.press("p")
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        heap = app.screen.query_one(HeapView)
        assert heap.mode == "heat"
        text = rendered_text(heap)
        cells = "".join(line.partition(" ")[2] for line in text.splitlines()[1:-1] if line.startswith("0x"))
        assert set(cells) - {"·", " "} <= set("░▒▓█") and set(cells) & set("░▒▓█")
        legend = [line for line in text.splitlines() if "allocations per cell" in line]
        # the legend shows every shade the cells use, with the counts it stands for
        assert legend and legend[0].startswith("· none  ") and set(cells) - {" "} <= set(legend[0])
        assert re.search(r"[░▒▓█] 1\b", legend[0])


async def test_a_check_box_mark_differs_in_shape_checked_or_not(no_color):
    class FormApp(App):
        def compose(self):
            yield ParamForm(id="form")

    class Owner:
        name = "unit"
        params = (Param("fast", help="Go fast.", kind="bool", default=False),)

    app = FormApp()
    async with app.run_test(size=(60, 10)) as pilot:
        assert app.no_color
        form = app.query_one(ParamForm)
        await form.show_params(Owner(), {})
        await pilot.pause()
        box = form.query_one("#field-fast", TickBox)
        unchecked = rendered_text(box)
        box.toggle()
        await pilot.pause()
        checked = rendered_text(box)
        assert unchecked != checked
        assert "X" in checked and "X" not in unchecked


async def test_the_difference_flame_graph_says_its_changes_with_signs(demo_repo, no_color):
    app = PerunApp(demo_repo, colour=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        # the demo's two memory profiles: their allocations carry call stacks
        await select_profile(pilot, "1@i", commit=MEMORY_COMMIT)
        await pilot.press("m")
        await select_profile(pilot, "1@i", commit=MEMORY_COMMIT + 4)
        await pilot.press("d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await wait_until(pilot, lambda: screen.result is not None, timeout=30)
        assert screen.result.flame is not None, screen.result.error
        flame = screen.result.flame
        assert "\x1b[" not in flame and "\x1b[" not in screen.result.table
        frames = re.findall(r"\[([+=-])", flame)
        assert frames and set(frames) <= {"+", "-", "="}
        assert "+ own amount grew" in flame
        await pilot.press("f")
        await pilot.pause()
        assert re.search(r"\[[+=-]", rendered_text(screen.query_one("#diff-flame-text", Static)))


async def test_the_focused_pane_differs_in_shape_without_colour(demo_repo, no_color):
    """Under NO_COLOR "1" and "2" (focus the history, the profiles) changed nothing on screen: the focused pane
    was told by its border's colour alone, and both cursors were reversed alike. Its border differs in shape now."""
    app = PerunApp(demo_repo, colour=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        history, profiles = app.screen.query_one("#history-pane"), app.screen.query_one("#profiles-pane")
        shapes = []
        for key, focused, other in (("1", history, profiles), ("2", profiles, history)):
            await pilot.press(key)
            await settle(pilot)
            assert app.focused in focused.query("HistoryView, DataTable"), app.focused
            assert focused.styles.border_top[0] != other.styles.border_top[0], key
            shapes.append(focused.styles.border_top[0])
        assert shapes[0] == shapes[1]  # one shape says "focused", whichever pane it is
