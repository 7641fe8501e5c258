"""Pilot tests of the plot screen on the demo repository, at 80x24."""

from __future__ import annotations

import subprocess
import sys
import threading

from textual.widgets import Static

from perun_core import api
from perun_tui.app import MainScreen, PerunApp
from perun_tui.core import Core
from perun_tui.messages import PictureReady
from perun_tui.screens.plot import PlotScreen
from perun_tui.widgets.plot import ChartView, FlameView, HeapView, PictureWidget

from .helpers import Recorder, rendered_text, select_profile, settle, wait_until

#: the demo's commit (from HEAD) with a memory profile, 1@i
MEMORY_COMMIT = 2


def status_line(app) -> str:
    return rendered_text(app.screen.query_one("#plot-status", Static)).strip()


async def test_scatter_of_a_mixed_profile_shows_one_uid_with_its_models(demo_repo):
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i")
        await pilot.press("p")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PlotScreen) and screen.view == "scatter"
        chart = screen.query_one(ChartView)
        assert app.focused is chart
        picture = chart.picture.plain
        assert "uid: sll_insert(SLList*, int)" in picture
        assert "linear (R^2=" in picture and "constant (R^2=" in picture
        assert status_line(app).startswith("uid 1 of 3: sll_insert(SLList*, int) · 2 models")
        # drawn at the widget's size
        lines = picture.split("\n")
        assert len(lines) == chart.size.height and max(len(line) for line in lines) == chart.size.width

        await pilot.press("right")
        await settle(pilot)
        assert "uid: sll_search(SLList*, int)" in chart.picture.plain
        assert status_line(app).startswith("uid 2 of 3")
        drawn = len(recorder.of(PictureReady))
        await pilot.press("left")
        await settle(pilot)
        assert "uid: sll_insert(SLList*, int)" in chart.picture.plain
        assert len(recorder.of(PictureReady)) == drawn  # the first uid came from the cache

        names = [command.name for command in app.screen.palette_commands()]
        assert {"plot: scatter", "plot: heap map", "plot: next uid", "plot: previous uid"} <= set(names)
        assert all(": " in name for name in names)

        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_bars_and_flow_of_a_time_profile_and_a_view_that_cannot_show_it(demo_repo):
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await select_profile(pilot, "0@i")
        await pilot.press("p")
        await settle(pilot)
        chart = app.screen.query_one(ChartView)
        assert app.screen.view == "bars"
        picture = chart.picture.plain
        assert "mean of amount per subtype" in picture
        assert all(kind in picture for kind in ("real", "user", "sys"))
        await pilot.press("w")
        await settle(pilot)
        assert app.screen.view == "flow"
        assert "mean of amount through order by subtype" in chart.picture.plain
        assert not chart.check_action("uid", (1,))  # no uids to cycle outside the scatter

        await pilot.press("m")  # a heap map needs a memory profile: the pane says so (no toast over the tab bar)
        await settle(pilot)
        message = str(app.screen.query_one("#plot-message", Static).content)
        assert message.startswith("heap map:") and "memory" in message
        assert not any("memory" in note for note in recorder.notes("warning"))
        await pilot.press("s")  # no sizes: the scatter plots against the run order
        await settle(pilot)
        assert "run order" in chart.picture.plain
        assert not any(note.startswith("scatter:") for note in recorder.notes("warning"))
        await pilot.press("b")  # the other views still work
        await settle(pilot)
        assert "mean of amount per subtype" in chart.picture.plain


async def test_the_old_picture_stays_until_the_new_one_is_drawn(demo_repo, monkeypatch):
    release = threading.Event()
    render = Core.render_view

    def slow_render(self, view, model, width, height, theme):
        if "sll_search" in model.plots[0].title:
            release.wait(10)
        return render(self, view, model, width, height, theme)

    monkeypatch.setattr(Core, "render_view", slow_render)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i")
        await pilot.press("p")
        await settle(pilot)
        chart = app.screen.query_one(ChartView)
        before = chart.picture
        await pilot.press("right")
        await pilot.pause(0.2)
        assert chart.picture is before  # still drawing: the first uid stays on screen
        assert "sll_insert" in rendered_text(chart)
        release.set()
        await settle(pilot)
        assert "uid: sll_search(SLList*, int)" in chart.picture.plain


async def test_flame_graph_zooms_into_a_frame_and_backs_out(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i", commit=MEMORY_COMMIT)
        await pilot.press("p")
        await settle(pilot)
        assert app.screen.view == "heapmap"  # memory profiles open as a heap map
        await pilot.press("f")
        await settle(pilot)
        flame = app.screen.query_one(FlameView)
        assert app.focused is flame
        assert "plot: zoom into frame" in [command.name for command in app.screen.palette_commands()]
        lines = rendered_text(flame).split("\n")
        assert lines[0].startswith("Flame graph of amount · total ")
        assert lines[1].strip() == "all" and lines[2].strip() == "main()"
        assert flame.cursor is flame.model.root

        await pilot.press("down", "down")
        assert flame.cursor.name == "sll_insert()"
        assert "sll_insert() at src/sll.c:10" in status_line(app)
        await pilot.press("enter")
        await settle(pilot)
        assert [frame.name for frame in flame.zoom] == ["sll_insert()"]
        lines = rendered_text(flame).split("\n")
        assert "zoomed into sll_insert()" in lines[0]
        assert lines[1].strip() == "sll_insert()"

        await pilot.press("escape")  # backs out of the zoom, stays on the plot
        await settle(pilot)
        assert flame.zoom == [] and isinstance(app.screen, PlotScreen)
        assert rendered_text(flame).split("\n")[1].strip() == "all"
        await pilot.press("up")
        assert flame.cursor.name == "main()"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def _open_heap_map(pilot, app) -> HeapView:
    """The heap map of the demo's memory profile, opened as a user opens it (select the profile, then p)."""
    await settle(pilot)
    await select_profile(pilot, "1@i", commit=MEMORY_COMMIT)
    await pilot.press("p")
    await settle(pilot)
    return app.screen.query_one(HeapView)


def _t_label(app) -> str:
    """The footer's label of the t key on the screen shown."""
    from textual.widgets._footer import FooterKey

    shown = [key for key in app.screen.query(FooterKey) if key.key == "t"]
    assert len(shown) == 1
    return shown[0].description


async def test_heap_map_steps_through_snapshots_and_toggles_heat(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        heap = await _open_heap_map(pilot, app)
        assert app.focused is heap
        assert "plot: toggle heat mode" in [command.name for command in app.screen.palette_commands()]
        text = rendered_text(heap)
        assert text.startswith("snapshot 0 of 0–2 (time 25.0 ms)")
        assert "A sll_insert" in text
        assert "sll_insert (src/sll.c:10) · 16 B at 0x55d4a000" in status_line(app)
        # the cell cursor, by keys and by the mouse: a row down is the next allocation, right of it is free
        layout, _theme = heap.picture
        await pilot.press("j")
        assert heap.cell == layout.columns
        assert f"16 B at {layout.address_of(layout.columns):#x}" in status_line(app)
        await pilot.hover(heap, offset=(layout.label + 20 // layout.size, 1))
        assert heap.cell == 20 // layout.size
        assert ": free" in status_line(app)

        await pilot.press("right")
        await settle(pilot)
        assert heap.snapshot == 1
        assert rendered_text(heap).startswith("snapshot 1 of 0–2 (time 50.0 ms)")
        # one numbering: the command line's snapshot 1 is the same one (it was "snapshot 2 of 3" here)
        with api.open_repository(demo_repo) as repo:
            minor = list(api.log(None, repo=repo))[MEMORY_COMMIT].version.checksum
        cli = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "show", "-m", minor, "1@i", "heapmap",
                              "-s", "1"], cwd=demo_repo, capture_output=True, text=True, timeout=120)
        assert cli.returncode == 0, cli.stderr
        assert "snapshot 1 (time 50.0 ms)" in cli.stdout, cli.stdout[:300]
        await pilot.press("left", "left")
        await settle(pilot)
        assert heap.snapshot == 2  # wraps around


        assert _t_label(app) == "Heat"
        await pilot.press("t")
        await settle(pilot)
        assert heap.mode == "heat"
        assert rendered_text(heap).startswith("heat of 3 snapshots")
        assert not heap.check_action("snapshot", (1,))
        # the label says what t does now (it said Heat in heat mode): back to the snapshots ← → step through
        assert _t_label(app) == "Snapshots"
        await pilot.press("t")
        await settle(pilot)
        assert heap.mode == "heap" and rendered_text(heap).startswith("snapshot 2 of 0–2")


async def test_the_heat_legend_at_40x12_goes_on_two_lines_rather_than_being_cut(demo_repo, monkeypatch):
    """At 40x12 the heat legend of the demo's heap ('· none  ░ 1-36  ▒ 37-72  ▓ 73-108  █ 109-144  allocations
    per cell') was one line cut at the pane's edge, with no ellipsis: the hottest shade's bounds were lost.
    The test repository's heap is one allocation deep: its legend is given the bounds of a cell touched 144 times."""
    from perun_core import api

    shades = api.heat_legend
    monkeypatch.setattr(api, "heat_legend", lambda hottest: shades(144))
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        heap = await _open_heap_map(pilot, app)
        await pilot.press("t")
        await settle(pilot)
        assert heap.mode == "heat"
        layout, _theme = heap.picture
        lines = rendered_text(heap).split("\n")
        header = len(heap._header(layout, heap.size.width))  # the header's lines, over the map
        legend = [line.rstrip() for line in lines[header + layout.rows:] if line.strip()]
        assert len(legend) == 2 and all(len(line) <= heap.size.width for line in legend)
        # every shade with its bounds, the hottest one's whole, and what they count
        words = " ".join(legend)
        for shade, bounds in shades(144):
            assert f"{shade} {bounds}" in words
        assert "allocations per cell" in words


async def test_a_flame_graph_asked_for_before_it_has_a_size_is_drawn_once_it_has_room(demo_repo, monkeypatch):
    """At 40x12 on a busy machine the widget was asked to draw while the layout still gave it 0x0
    (over its one retry and its Resize), and it said "too small to draw (0x0)" until a key was
    pressed.  A widget with no size is waiting, not too small, and its next paint with room draws."""
    unsized = {"on": False}
    laid_out = PictureWidget.canvas_size.fget
    monkeypatch.setattr(PictureWidget, "canvas_size",
                        property(lambda widget: (0, 0) if unsized["on"] else laid_out(widget)))
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i", commit=MEMORY_COMMIT)
        await pilot.press("p")
        await settle(pilot)
        unsized["on"] = True
        await pilot.press("f")
        await settle(pilot)
        flame = app.screen.query_one(FlameView)
        assert flame.picture is None
        assert "0x0" not in flame.waiting_text and "too small" not in flame.waiting_text
        unsized["on"] = False
        flame.refresh()  # the paint that follows the layout which gives the widget its size
        await settle(pilot)
        assert flame.picture is not None, flame.waiting_text
        layout, _theme = flame.picture
        assert len(layout.rows) <= flame.size.height - 1
        assert flame.render_line(1).text.strip() == "all"  # the root frame, the whole width


async def test_the_heap_maps_header_keeps_the_scale_of_its_cells_at_40x12(demo_repo):
    """The header was one line cut at the pane's edge: at 40 columns '· 1 B per cell · hottest 1' was lost, and
    with it the map's scale.  Its parts go on the lines they need, the map giving up rows for them."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i", commit=MEMORY_COMMIT)
        await pilot.press("p")
        await settle(pilot)
        heap = app.screen.query_one(HeapView)
        for mode in ("heap", "heat"):
            if mode == "heat":
                await pilot.press("t")
                await settle(pilot)
            await wait_until(pilot, lambda: heap.picture is not None and heap.picture[0].mode == mode)
            await pilot.pause()
            lines = rendered_text(heap).splitlines()
            layout, _theme = heap.picture
            top = "\n".join(lines[:lines.index(next(line for line in lines if line.startswith("0x")))])
            assert "per cell" in top and "…" not in top, lines
            assert mode == "heap" or "hottest" in top
            assert len(lines) <= heap.size.height and any("allocations per cell" in line for line in lines) == (
                mode == "heat"), lines
