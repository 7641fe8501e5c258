"""Layout by terminal size: fitted columns, the too-small screen, toasts over no pane, no colour."""

from __future__ import annotations

from perun_tui.app import PerunApp
from perun_tui.cli import colour_environment
from perun_tui.modals.too_small import TooSmallScreen
from perun_tui.widgets.columns import Column, fit_columns
from perun_tui.widgets.profiles import ProfilesTable

from .helpers import rendered_text, select_profile, settle, wait_until

COLUMNS = (Column("a", "a", 0, 4), Column("b", "b", 2, 4, shrink=True), Column("c", "c", 1, 6),
           Column("d", "d", 3, 3))
ROWS = [["aaaa", "bbbbbbbbbb", "cccccc", "ddd"]]


def test_columns_are_dropped_least_useful_first_and_keep_their_order():
    assert [(c.key, w) for c, w in fit_columns(COLUMNS, ROWS, 40)] == [("a", 4), ("b", 10), ("c", 6), ("d", 3)]
    # no room for d (the least useful): it goes, the others stay whole
    assert [c.key for c, _ in fit_columns(COLUMNS, ROWS, 28)] == ["a", "b", "c"]
    # b does not fit even at its minimum: it goes, and d (less useful) with it
    assert [(c.key, w) for c, w in fit_columns(COLUMNS, ROWS, 16)] == [("a", 4), ("c", 6)]
    assert [(c.key, w) for c, w in fit_columns(COLUMNS, ROWS, 3)] == [("a", 1)]


def test_a_cut_column_takes_width_from_a_shrinkable_one():
    rows = [["aaaa", "bbbbbbbbbb", "cccccccc"]]
    columns = (Column("a", "a", 0, 4), Column("b", "b", 1, 4, shrink=True), Column("c", "c", 2, 6))
    # a and b whole leave 8 cells: c would show cut at 6, so b (shrink) gives it the 2 it lacks
    assert [(c.key, w) for c, w in fit_columns(columns, rows, 26)] == [("a", 4), ("b", 8), ("c", 8)]


def test_the_run_screens_jobs_stay_apart_and_whole_where_there_is_room():
    """Two jobs differing in their workload read alike at 80 and at 120 columns ("time: ./sll-bench --iterations
    1000 wor…", the job column held at 40 cells beside a profile column with room to spare): the job's label is
    whole where the row has room for it (a run of one commit, named in the title, gives up the commit column for
    it at 80 columns), and cut in its middle, keeping the workload, where it has not."""
    from perun_tui.screens.run import JOB_COLUMNS, job_columns
    from perun_tui.widgets.columns import cut_cell
    from rich.text import Text

    rows = [["1", "ok", f"time: ./sll-bench --iterations 1000 workloads/{size}.txt", "1.4 s", "6c8442a",
             f"sll-bench-time-{size}.perf"] for size in ("small", "large")]
    for width, whole in ((36, False), (76, True), (116, True)):
        fitted = fit_columns(JOB_COLUMNS, rows, width)
        keys = [column.key for column, _ in fitted]
        assert keys[:3] == ["job", "status", "label"] and ("time" in keys) is whole, (width, keys)
        label, size = next((column, size) for column, size in fitted if column.key == "label")
        shown = [cut_cell(Text(row[2]), size, middle=label.middle).plain for row in rows]
        assert shown[0] != shown[1] and all(text.endswith(".txt") for text in shown), (width, shown)
        assert (shown == [row[2] for row in rows]) is whole, (width, shown)
    assert [column.key for column, _ in fit_columns(JOB_COLUMNS, rows, 116)][-1] == "profile"
    # a run over several commits keeps the commit that tells a job's rows apart, and the time, at 80 columns
    fitted = fit_columns(job_columns(2), rows, 76)
    assert [column.key for column, _ in fitted] == ["job", "status", "label", "time", "commit"], fitted
    label, size = next((column, size) for column, size in fitted if column.key == "label")
    shown = [cut_cell(Text(row[2]), size, middle=label.middle).plain for row in rows]
    assert shown[0] != shown[1] and all(text.endswith(".txt") for text in shown), shown


def test_an_optional_column_with_nothing_in_it_gives_way_and_is_never_cut():
    columns = (Column("a", "a", 0, 4), Column("long", "a long header", 1, 6, optional=True),
               Column("c", "c", 2, 8))
    empty = [["aaaa", "-", "cccccccc"], ["aaaa", "", "cccccccc"]]
    # nothing in it: c (less useful, but with content) comes first; no room left for its header whole
    assert [(c.key, w) for c, w in fit_columns(columns, empty, 24)] == [("a", 4), ("c", 8)]
    assert [(c.key, w) for c, w in fit_columns(columns, empty, 40)] == [("a", 4), ("long", 13), ("c", 8)]
    # one row with something in it: the column keeps its priority, cut to what is left
    full = [["aaaa", "-", "cccccccc"], ["aaaa", "x", "cccccccc"]]
    assert [(c.key, w) for c, w in fit_columns(columns, full, 24)] == [("a", 4), ("long", 13)]


async def test_a_column_cut_in_its_middle_keeps_what_tells_its_rows_apart():
    """The check's locations end in their subtype: cut at the end, ./sll-bench [real] and [user] looked alike."""
    from rich.text import Text
    from textual.app import App

    from perun_tui.widgets.findings import FINDING_COLUMNS
    from perun_tui.widgets.columns import FittedTable

    class Findings(App):
        def compose(self):
            yield FittedTable(FINDING_COLUMNS)

    locations = ["./sll-bench [real]", "./sll-bench [user]", "./sll-bench [max_rss]"]
    app = Findings()
    async with app.run_test(size=(72, 8)) as pilot:
        table = app.query_one(FittedTable)
        table.set_rows([(str(i), [Text("aec5884"), Text(location), Text("~ MaybeOptimization"), Text("-92.9%"),
                                  Text("589.7 ms → 42.0 ms"), Text("0.95"), Text("integral_comparison")])
                        for i, location in enumerate(locations)])
        await pilot.pause()
        shown = [str(table.get_row_at(i)[1]) for i in range(3)]
        width = dict((column.key, size) for column, size in table._shown)["location"]
        assert width < len("./sll-bench [max_rss]")  # cut: the test is about how
        assert [cell.endswith(end) for cell, end in zip(shown, ("[real]", "[user]", "_rss]"))] == [True] * 3
        assert all("…" in cell for cell in shown if len(cell) < len(locations[2]))


def test_no_color_turns_colour_off():
    assert colour_environment({"TERM": "xterm"}) is True
    env = {"NO_COLOR": "", "TERM": "xterm"}
    assert colour_environment(env) is True and "NO_COLOR" not in env  # empty counts as unset
    assert colour_environment({"NO_COLOR": "1"}) is False


async def test_the_profiles_keep_whole_columns_at_every_width(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(ProfilesTable)
        shown = [column.key.value for column in table.columns.values()]
        assert shown[:4] == ["tag", "type", "collector", "workload"] and "postprocessors" in shown
        assert sum(column.get_render_width(table) for column in table.columns.values()) \
            <= table.scrollable_content_region.width
        await pilot.resize_terminal(40, 12)
        await wait_until(pilot, lambda: len(table.columns) < len(shown))
        narrow = [column.key.value for column in table.columns.values()]
        assert narrow[:2] == ["tag", "type"] and "origin" not in narrow
        await pilot.resize_terminal(200, 40)  # beside the commit pane, room for every column
        await wait_until(pilot, lambda: "origin" in [column.key.value for column in table.columns.values()])


async def test_a_commit_without_postprocessed_profiles_shows_the_command_instead(demo_repo):
    """The postprocessors' header is 14 cells over dashes: at 80 columns it gave way to cmd only when needed."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(ProfilesTable)

        def shown() -> dict[str, int]:
            return {column.key.value: column.width for column in table.columns.values()}

        assert "postprocessors" in shown()  # HEAD has a profile with regression models
        await pilot.press("slash", *"plain", "enter")  # the slowdown: no profile there is postprocessed
        await wait_until(pilot, lambda: table.minor is not None and table.minor.startswith("cba88d3"))
        await settle(pilot)
        assert all(not info.postprocessors for info in table.infos.values())
        assert shown().get("cmd") == len("./sll-bench") and "postprocessors" not in shown()
        assert "./sll-bench" in rendered_text(table)


async def test_the_mark_toast_shows_the_next_key_at_40x12(demo_repo):
    """A toast is at most three rows high there: the file name pushed the key to press next out of it."""
    from textual.widgets._toast import Toast

    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12), notifications=True) as pilot:
        await settle(pilot)
        app.NOTIFICATION_TIMEOUT = 600
        await select_profile(pilot, "1@p")
        await pilot.press("m")
        await wait_until(pilot, lambda: bool(app.screen.query(Toast)))
        shown = " ".join(rendered_text(app.screen.query_one(Toast)).split())
        assert "marked 1@p (pending)" in shown and "press d on one" in shown
        assert not toasts_over_panes(app)


async def test_an_empty_commit_says_which_profiles_a_commit_lists(demo_repo):
    """The note said pending profiles show everywhere; only HEAD and the commit they were collected at list them."""
    from textual.widgets import Static

    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(ProfilesTable)
        assert any(not info.registered for info in table.infos.values())  # HEAD lists the pending profiles
        from perun_tui.widgets.history import HistoryView

        app.query_one(HistoryView).cursor = 4  # 73958f4: nothing registered, nothing collected there
        await wait_until(pilot, lambda: table.minor is not None and table.minor.startswith("73958f4"))
        await settle(pilot)
        assert table.row_count == 0
        note = str(app.query_one("#profiles-note", Static).render())
        assert "pending ones collected at it" in note and "always" not in note


async def test_the_too_small_screen_comes_and_goes_with_the_size(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        main = app.screen
        await pilot.resize_terminal(39, 12)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))
        assert "40x12" in str(app.screen.query_one("#too-small-text").render())
        await pilot.resize_terminal(40, 11)
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen)
        await pilot.resize_terminal(40, 12)
        await wait_until(pilot, lambda: app.screen is main)


def toasts_over_panes(app) -> list:
    """The panes of the screen a toast stands over (their regions met), with the toast's region; a row of a toast
    hidden under another widget (the key bar drawn over it) counts as well."""
    from textual.widgets._toast import Toast

    toasts = list(app.screen.query(Toast))
    hidden = [(widget, toast.region) for toast in toasts for y in range(toast.region.y, toast.region.bottom)
              if (widget := app.screen.get_widget_at(toast.region.x + 2, y)[0]) is not toast]
    return hidden + [(pane, toast.region) for toast in toasts for pane in app.screen.query(".pane")
                     if pane.region.overlaps(toast.region)]


async def test_a_toast_stands_over_no_pane(demo_repo):
    """The toasts stood on the side away from the focused row: after h on the check screen (80x24) over the pair
    line and the note under the findings, after m in the profiles pane over the history's rows.  They take the
    key bar's line now, the panes giving up the rows a longer one needs."""
    from textual.widgets._toast import Toast

    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.NOTIFICATION_TIMEOUT = 600
        await select_profile(pilot, "1@p")  # the last profile row, in the lower half
        await pilot.press("m")
        await wait_until(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause()
        assert not toasts_over_panes(app)
        toast = app.screen.query_one(Toast)
        assert toast.region.bottom == app.size.height and "marked 1@p" in rendered_text(toast)
        await pilot.press("escape", "c")
        await wait_until(pilot, lambda: bool(app.screen.query("#check-findings")))
        await settle(pilot)
        app.clear_notifications()
        await pilot.press("h")
        await wait_until(pilot, lambda: bool(app.screen.query(Toast)))
        await settle(pilot)
        assert "check: check commit " in rendered_text(app.screen.query_one(Toast))  # the title on its line
        assert not toasts_over_panes(app)
        status = app.screen.query_one("#check-status")
        assert status.region.bottom <= app.screen.query_one(Toast).region.y


async def test_a_toast_cut_to_its_rows_ends_in_an_ellipsis(demo_repo):
    """At 40x12 a toast has three rows: a message naming a long file lost its end with nothing to say so."""
    from textual.widgets._toast import Toast

    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12), notifications=True) as pilot:
        await settle(pilot)
        name = "time-sll-bench-15000-2026-11-28-03-06-51-with-a-long-workload-name.perf"
        app.notify(f"registered {name} at aec5884 and again at 3f0e609", title="profiles", timeout=600)
        await wait_until(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause()
        from textual.geometry import Region

        toast = app.screen.query_one(Toast)  # drawn whole: rendered_text crops a widget to its content's width
        lines = [strip.text.rstrip() for strip in toast.render_lines(Region(0, 0, *toast.outer_size))]
        assert len(lines) == 3 and lines[-1].endswith("…"), lines
        assert lines[0].startswith("▌ profiles: registered")
        assert not toasts_over_panes(app)


def test_a_commit_message_is_wrapped_at_the_panes_width_not_at_its_own():
    """A body hard-wrapped at 72 columns, wrapped again in the 34 cells of the commit pane, left "the" alone on a
    line: its paragraphs are joined for the pane to wrap; lists, indented lines and blank lines keep their lines."""
    from perun_tui.widgets.commit import reflowed

    message = ("Keep a tail pointer again: appending was quadratic\n\nWalking to the last node made building a list\n"
               "of n keys O(n^2): the\nbenchmark has been slower since.\n\n- one item\n- another\n1. first\n"
               "    code line\n    code line\nafter the code")
    assert reflowed(message).splitlines() == [
        "Keep a tail pointer again: appending was quadratic", "",
        "Walking to the last node made building a list of n keys O(n^2): the benchmark has been slower since.", "",
        "- one item", "- another", "1. first", "    code line", "    code line", "after the code"]


async def test_the_too_small_notice_takes_no_key_but_q(demo_repo):
    """ctrl+p with the palette open under the notice pushed a second palette of the same id: the app died with
    DuplicateIds (80x24, ctrl+p, shrink to 36x10, ctrl+p); f1 and ? put the keys under the notice."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CommandPalette")
        await pilot.resize_terminal(36, 10)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))
        stack = list(app.screen_stack)
        for key in ("ctrl+p", "f1", "question_mark", "tab"):
            await pilot.press(key)
            await pilot.pause()
            assert app.is_running and app.screen_stack == stack, key
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CommandPalette")
        await pilot.press("escape")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "MainScreen")


async def test_a_result_is_whole_where_the_findings_have_room():
    """At 120x40 '~ MaybeOptimization' read '~ MaybeOptimiza…' beside forty empty cells: the result's column
    was capped at 16."""
    from rich.text import Text
    from textual.app import App

    from perun_tui.widgets.findings import FINDING_COLUMNS
    from perun_tui.widgets.columns import FittedTable

    class Findings(App):
        def compose(self):
            yield FittedTable(FINDING_COLUMNS)

    app = Findings()
    async with app.run_test(size=(120, 10)) as pilot:
        table = app.query_one(FittedTable)
        table.set_rows([("0", [Text("5a817b2"), Text("sll_init"), Text("~ MaybeOptimization"), Text("-47.3%"),
                               Text("441.9 ns → 232.7 ns"), Text("1-p 0.96"), Text("size_aware_rank_test")])])
        await pilot.pause()
        assert str(table.get_row_at(0)[2]) == "~ MaybeOptimization"
        assert str(table.get_row_at(0)[-1]) == "size_aware_rank_test"
