"""Pilot tests of the compare view: one y scale for both charts, the relative change, titles cut in the middle."""

from __future__ import annotations

import re
from types import SimpleNamespace

from textual.widgets import DataTable, Static

from perun_core import api
from perun_core.check.results import Finding, PerformanceChange
from perun_core.views.base import Figure, Plot, Series
from perun_tui.app import PerunApp
from perun_tui.screens.check import CompareScreen, relative_changes
from perun_tui.widgets.plot import ChartView, MiddleTitle

from .helpers import open_check_screen, settle, wait_until


def top_tick(picture: str) -> str:
    """The label of the highest y tick of a chart."""
    for line in picture.split("\n"):
        if "┤" in line:
            return line.split("┤")[0].strip()
    raise AssertionError("no y tick")


async def test_compare_shares_the_y_scale_and_shows_the_change(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_check_screen(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: not screen.running, timeout=60)
        await settle(pilot)
        await pilot.press("f", "f")  # degradations only
        table = screen.query_one("#check-findings", DataTable)
        row = next(i for i in range(table.row_count) if float(str(table.get_cell_at((i, 3))).rstrip("%")) > 80)
        table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        baseline, target = (compare.query_one(f"#compare-{side}-chart", ChartView) for side in ("baseline", "target"))
        # one scale: the target is about twice as slow, and its bars are about twice as high on the same axis
        assert baseline.model.plots[0].ylim == target.model.plots[0].ylim is not None
        assert top_tick(baseline.picture.plain) == top_tick(target.picture.plain)
        # the finding's location keeps its subtype, markup and all
        assert "[real]" in compare.finding.location
        assert str(compare.query_one("#compare-pane").border_title).replace("\\[", "[").endswith(
            compare.finding.location)
        title = compare.query_one("#compare-target .compare-title", MiddleTitle)
        shown = title.render().plain
        assert len(shown) <= title.content_region.width
        assert shown.startswith("target ") and "…" in shown and shown.endswith("%")  # cut in the middle
        assert "real +" in shown and ".perf" in shown
        # the change over the plot is the verdict line's, to the digit
        verdict = str(compare.query_one("#compare-finding", Static).render())
        percent = re.search(r"real ([+-][0-9.]+%)", shown).group(1)
        assert f" · {percent} · " in verdict and compare.query_one("#compare-pane").border_subtitle.endswith(percent)
        # and the amounts carry their unit
        assert re.search(r" · [0-9.]+ m?s → [0-9.]+ m?s · ", verdict), verdict


def test_relative_changes_are_the_findings_own():
    def bars(values):
        return Figure([Plot("bars", "t", "", "", [Series("mean", list(range(3)), values)],
                            categories=["real", "sys", "user"])])

    def finding(subtype, rel, method="m"):
        return Finding(PerformanceChange.DEGRADATION, "ratio", f"./app [{subtype}]", 1.0, 2.0, 1.0, rel,
                       method=method, unit="s")

    real = finding("real", 42.5)
    pair = SimpleNamespace(findings=[real, finding("user", -50.0), finding("user", 7.0, method="other")])
    # the bars' means would say +100% for real: the check's estimate is what the verdict line says, so it is shown
    assert relative_changes(pair, real, bars([1.0, 0.0, 0.5]), bars([2.0, 0.1, 0.25])) == "real +42.5% · user -50.0%"
    assert relative_changes(pair, real, bars([1.0]), None) == ""
    shared = api.share_y_scale(bars([1.0, 0.0, 0.5]), bars([2.0, 0.1, 0.25]))
    assert [figure.plots[0].ylim for figure in shared] == [(0.0, 2.0), (0.0, 2.0)]
    title = MiddleTitle("target", "cba88d3:sll-bench-time-small-2024-03-23-18-54-00.perf", "· real +100.6%")
    assert title.shortened(40) == "target cba88d3:s…-00.perf · real +100.6%"
    assert title.shortened(200) == title.line
