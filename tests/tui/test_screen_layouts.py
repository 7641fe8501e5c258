"""Layouts that use the space: whole rows, cut text ending in …, nothing covering what it should not."""

from __future__ import annotations

import dataclasses
import sys
import tempfile

import pytest
from rich.text import Text
from textual.app import App
from textual.widgets import Static

from perun_core.api import run_events as ev
from perun_tui.app import PerunApp
from perun_tui.messages import RunEvent
from perun_tui.screens.diff import DiffScreen
from perun_tui.screens.run import RunScreen, wrapped_to
from perun_tui.widgets.columns import Column, FittedTable
from perun_tui.widgets.history import HistoryView
from perun_tui.widgets.profiles import ProfilesTable

from .helpers import Recorder, main_screen, rendered_text, select_profile, set_matrix, settle, wait_until


async def test_a_marked_commit_keeps_both_cells_of_its_check_marks(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.query_one(HistoryView)
        index = 1
        entry = dataclasses.replace(view.entries[index], changes="++")  # two optimizations found by a check
        view.replace_entry(entry)
        view.cursor = index
        await pilot.press("space")
        await pilot.pause()
        assert entry.version.checksum in view.marked
        row = view.render_line(index + 1 - round(view.scroll_offset.y)).text  # +1: the header line
        assert row.startswith(f"*{entry.changes[:2]}{entry.version.checksum[:7]}"), row


async def test_from_120_columns_the_profiles_get_every_column_and_the_commit_pane_moves_up(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pane = app.query_one("#commit-pane")
        assert pane.parent.id == "upper" and pane.display
        table = app.query_one(ProfilesTable)
        shown = [str(c.label) for c in table.columns.values()]
        assert shown[:7] == ["tag", "type", "collector", "workload", "time +0000", "cmd", "args"]  # TZ=UTC
        assert not any("…" in str(cell) for row in range(table.row_count) for cell in table.get_row_at(row))
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        pane = app.query_one("#commit-pane")
        assert pane.parent.id == "lower" and pane.display
        # made again in the other row, it shows the commit again
        assert pane.query_one("#commit-text", Static).content != ""
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert app.query_one("#commit-pane").parent.id == "upper"


@pytest.mark.parametrize("sizes", [((80, 24), (40, 12), (120, 40))])
async def test_the_difference_table_keeps_each_row_on_one_line_at_every_width(demo_repo, sizes):
    app = PerunApp(demo_repo)
    async with app.run_test(size=sizes[0]) as pilot:
        await settle(pilot)
        await select_profile(pilot, "0@i")
        await pilot.press("m", "down", "d")
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        for size in sizes:
            await pilot.resize_terminal(*size)
            await wait_until(pilot, lambda: screen.result is not None and screen.result.width == size[0] - 2,
                             timeout=30)
            await settle(pilot)
            table = screen.query_one("#diff-table-text", Static)
            lines = screen.result.table.rstrip("\n").split("\n")
            assert table.size.height == len(lines)  # no row wrapped onto a second line
            widest = max(len(Text.from_ansi(line).plain) for line in lines)
            # a table wider than the screen (its columns' minimum) scrolls sideways instead of wrapping
            assert table.parent.max_scroll_x == max(widest - table.parent.scrollable_content_region.width, 0)


def test_advice_is_cut_to_its_rows_with_an_ellipsis():
    lines = ["advice for job 1: " + "word " * 40]
    assert not any(row.endswith("…") for row in wrapped_to(lines, 30, 10))  # all of it fits ten rows
    cut = wrapped_to(lines, 30, 2)
    assert len(cut) == 2 and cut[-1].endswith("…") and all(len(row) <= 30 for row in cut)
    assert wrapped_to(["short"], 30, 2) == ["short"]
    # a cut last row that fills the width exactly (a full run's busy-machine advice at 40x12) still ends in …
    exact = wrapped_to(["aaaa bbbb", "cccc dddd", "more"], 9, 2)
    assert exact == ["aaaa bbbb", "cccc ddd…"]


async def test_run_advice_has_rows_of_its_own_and_no_toast_covers_the_output(demo_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    set_matrix(demo_repo, cmds=[sys.executable], args=["-c 'print(\"hello from the job\")'"],
               collectors=[{"name": "time", "params": {"repeat": 2}}])
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12), message_hook=recorder) as pilot:
        await settle(pilot)
        main_screen(app).action_run()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await wait_until(pilot, lambda: not screen.running, timeout=60)
        await settle(pilot)
        screen.post_message(RunEvent(ev.MeasurementAdvice(1, "advice: the wall times of the runs vary by 21 % (CV) "
                                                          "and the machine was busy: repeat more")))
        await settle(pilot)
        advice = screen.query_one("#run-advice", Static)
        output = screen.query_one("#run-output", Static)
        assert advice.display and rendered_text(advice).strip().startswith("advice for job 1: ")
        assert rendered_text(advice).rstrip().endswith("…")  # cut to its two rows at 40x12
        assert not advice.region.overlaps(output.region) and output.content_region.height >= 1
        assert rendered_text(output).strip()  # the job's last lines still show under the advice
        assert not recorder.notes()  # neither the advice nor the run's end is a toast over the output


class _TableApp(App[None]):
    def __init__(self, table: FittedTable) -> None:
        super().__init__()
        self.table = table

    def compose(self):
        yield self.table


async def test_a_growing_fitted_table_cuts_with_an_ellipsis_and_refits_when_content_changes():
    columns = (Column("n", "#", 0, 1), Column("label", "job", 1, 8, 40), Column("profile", "profile", 2, 10, 80))
    table = FittedTable(columns)
    app = _TableApp(table)
    async with app.run_test(size=(40, 10)) as pilot:
        table.put_row("1", [Text("1"), Text("time: ./bench"), Text("")])
        await pilot.pause()
        assert [str(c.label) for c in table.columns.values()] == ["#", "job", "profile"]
        table.set_cell("1", "profile", Text("time-bench-15000-2026-11-26-22-31-32.perf"))
        await pilot.pause()
        cell = str(table.get_cell("1", "profile"))
        assert cell.endswith("…") and len(cell) < len("time-bench-15000-2026-11-26-22-31-32.perf")
        table.put_row("2", [Text("2"), Text("x"), Text("p")])
        table.set_cell("9", "profile", Text("a row that is not there is ignored"))
        await pilot.pause()
        assert table.row_count == 2 and str(table.get_cell("2", "label")) == "x"
        await pilot.resize_terminal(120, 10)
        await pilot.pause()
        assert str(table.get_cell("1", "profile")) == "time-bench-15000-2026-11-26-22-31-32.perf"


async def test_a_cut_column_label_ends_with_an_ellipsis_like_its_cells():
    table = FittedTable((Column("n", "#", 0, 1), Column("commit", "commit", 1, 3)))
    app = _TableApp(table)
    async with app.run_test(size=(9, 5)) as pilot:
        table.put_row("1", [Text("1"), Text("abcdef1")])
        await pilot.pause()
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[0] == "#" and labels[1].endswith("…") and "commit".startswith(labels[1][:-1])
        assert str(table.get_cell("1", "commit")).endswith("…")
