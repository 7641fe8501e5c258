"""Pilot tests of perun-tui on the demo repository (80x24 unless said otherwise)."""

from __future__ import annotations

import re

import pytest
from textual.widgets import DataTable, Input, Label, Static

from perun_core import api
from perun_tui.app import MainScreen, PerunApp
from perun_tui.cli import main
from perun_tui.messages import HistoryChunk
from perun_tui.modals.details import ProfileDetailsScreen
from perun_tui.modals.dialogs import ConfirmScreen, HelpScreen
from perun_tui.widgets.history import HistoryPane, HistoryView
from perun_tui.widgets.profiles import ProfilesPane, ProfilesTable

from .helpers import Recorder, main_screen, rendered_text, settle, wait_until


def status_of(root):
    with api.open_repository(root) as repo:
        return api.status(repo=repo)


def entries_of(root):
    with api.open_repository(root) as repo:
        return list(api.log(None, with_profiles=True, repo=repo))


async def focus_profiles(pilot, tag: str) -> ProfilesTable:
    table = pilot.app.query_one(ProfilesTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(tag))
    await pilot.pause()
    return table


async def test_history_lists_the_commits_of_the_branch(demo_repo):
    expected = entries_of(demo_repo)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.query_one(HistoryView)
        assert [e.version.checksum for e in view.entries] == [e.version.checksum for e in expected]
        assert len(view.entries) == 40
        assert view.cursor == 0 and view.current.version.checksum == status_of(demo_repo).head.checksum
        assert app.focused is view
        assert app.query_one(HistoryPane).border_subtitle == "40 commits"
        # the header line, then HEAD's row: sha, profile counts and subject
        lines = [view.render_line(y).text for y in range(3)]
        assert lines[0].split()[:2] == ["commit", "date"]
        head = expected[0]
        assert head.version.checksum[:7] in lines[1]
        assert head.version.short_desc[:20] in lines[1]
        assert not any(e.changes for e in expected)  # no check has run on the demo


async def test_history_shows_recorded_check_results(demo_repo):
    from perun_core.storage.changes import write_changes

    entries = entries_of(demo_repo)
    marked = entries[2].version.checksum
    with api.open_repository(demo_repo) as repo:
        write_changes(repo, marked, ["-", "+"])
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.query_one(HistoryView)
        rows = [view.render_line(y).text for y in range(1, 5)]
        row = next(r for r in rows if marked[:7] in r)
        assert "-+" in row
        assert all("-+" not in r for r in rows if marked[:7] not in r)


async def test_moving_the_cursor_shows_that_commits_profiles(demo_repo):
    entries = entries_of(demo_repo)
    slow = next(i for i, e in enumerate(entries) if "plain scan" in e.version.short_desc)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*["down"] * slow)
        await pilot.pause()
        table = app.query_one(ProfilesTable)
        assert table.minor == entries[slow].version.checksum
        assert [info.tag for info in table.infos.values()] == \
            [i.tag for i in entries[slow].profiles] + [p.tag for p in entries[slow].pending]  # its own pending only
        assert app.query_one(ProfilesPane).border_title == f"Profiles at {entries[slow].version.checksum[:7]}"
        await pilot.press("h")
        await pilot.pause()
        assert app.query_one(HistoryView).cursor == 0
        assert table.minor == entries[0].version.checksum


async def test_registering_a_pending_profile_moves_it_to_the_registered_list(demo_repo):
    before = status_of(demo_repo)
    assert len(before.pending) == 2
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = await focus_profiles(pilot, "0@p")
        source = table.current.source
        await pilot.press("a")
        await settle(pilot)
        registered = [i for i in table.infos.values() if i.registered]
        pending = [i for i in table.infos.values() if not i.registered]
        assert source in [i.source for i in registered]
        assert source not in [i.source for i in pending]
        assert app.query_one(HistoryView).current.counts.total == len(before.registered) + 1
    after = status_of(demo_repo)
    assert [p.source for p in after.pending] == [p.source for p in before.pending if p.source != source]
    assert source in [i.source for i in after.registered]


async def test_unlinking_asks_first_and_cancel_keeps_the_profile(demo_repo):
    before = status_of(demo_repo)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await focus_profiles(pilot, "0@i")
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert len(status_of(demo_repo).registered) == len(before.registered)

        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Unlink 0@i" in rendered_text(app.screen.query_one("#confirm-question", Static))
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
    after = status_of(demo_repo)
    assert [i.source for i in after.registered] == [i.source for i in before.registered[1:]]


async def test_deleting_a_pending_profile_after_confirming(demo_repo):
    before = status_of(demo_repo)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = await focus_profiles(pilot, "1@p")
        path = table.current.path
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.click("#confirm-yes")
        await settle(pilot)
        assert not path.exists()
        assert [i.tag for i in table.infos.values() if not i.registered] == ["0@p"]
    assert len(status_of(demo_repo).pending) == len(before.pending) - 1


async def test_details_show_header_collector_statistics_and_models(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = await focus_profiles(pilot, "1@i")
        assert table.current.type == "mixed"
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ProfileDetailsScreen)
        meta = rendered_text(screen.query_one("#details-meta", Static))
        assert "command        ./sll-bench --iterations 1000" in meta
        assert "collector      trace (method: custom" in meta
        assert "postprocessor  regression_analysis (method: full, models: [constant," in meta
        stats = screen.query_one("#details-stats", DataTable)
        fields = [str(stats.get_row_at(i)[0]) for i in range(stats.row_count)]
        # measured amounts per type and subtype with their unit (api.summary)
        assert fields == ["amount · mixed time delta", "structure-unit-size"]  # its amounts carry the unit
        assert [str(c) for c in stats.get_row_at(1)[1:]] == ["60", "0", "76", "152"]
        models = screen.query_one("#details-models", DataTable)
        assert models.row_count == 6  # constant and linear for three functions
        # the coefficients say their unit, r² its three decimals, and no coefficient is grouped into two
        # numbers ('b0=34 571'); the test demo's trace amounts are microseconds
        heading = " ".join(rendered_text(screen.query_one("#details-models-heading", Label)).split())
        assert heading == "Models · 6 · coefficients in us", heading
        rows = [[str(cell) for cell in models.get_row_at(i)] for i in range(models.row_count)]
        assert all(re.fullmatch(r"[01]\.\d{3}", row[2]) for row in rows), rows
        assert all(re.fullmatch(r"(b\d=\S+ ?)+", row[3]) for row in rows), rows
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_details_headings_wrap_in_a_narrow_dialog(demo_repo):
    """At 40x12 the heading of a profile without models was cut at the dialog's edge: it wraps now."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        await focus_profiles(pilot, "0@i")
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ProfileDetailsScreen)
        heading = screen.query_one("#details-models-heading", Label)
        await wait_until(pilot, lambda: "none" in str(heading.render()))
        body = screen.query_one("#details-body")
        assert heading.region.right <= body.content_region.right
        assert " ".join(rendered_text(heading).split()) == "Models · none (a regression postprocessor adds them)"


async def test_details_tables_fit_the_width_without_cutting_an_amount(demo_repo):
    """At 40x12 the statistics and models tables scrolled sideways: now each row becomes a list of label and
    amount lines there, as tall as its lines, and at 80x24 the names shrink (cut with an ellipsis) beside
    amounts shown whole."""
    from rich.cells import cell_len

    from perun_tui.widgets.columns import AmountsTable

    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await focus_profiles(pilot, "1@i")
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ProfileDetailsScreen)
        stats = screen.query_one("#details-stats", AmountsTable)
        models = screen.query_one("#details-models", AmountsTable)
        for size, listed in (((80, 24), False), ((40, 12), True), ((120, 40), False)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            for table in (stats, models):
                assert table.listed is listed, (size, table.id)
                assert table.virtual_size.width <= table.scrollable_content_region.width, (size, table.id)
                # as tall as its rows (the body scrolls): rows listed at 40 columns were cut at the height the
                # table had before it became a list, out of reach of every key
                assert table.size.height == table.virtual_size.height, (size, table.id)
                widths = [column.width for column in table.columns.values()]
                shown = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
                # no cell wider than its column (the table would crop it without an ellipsis)
                assert all(cell_len(cell) <= width for row in shown for cell, width in zip(row, widths)), size
                # every amount and coefficient whole (a long value may go on in the next line, broken between
                # words): a cut one would end in … or lose its unit
                words = " ".join(" ".join(row) for row in shown).split()
                for row in table.rows_given:
                    for cell in row[1:]:
                        assert cell.plain in " ".join(words) or all(w in words for w in cell.plain.split()), \
                            (size, table.id, cell.plain)
            names = [str(stats.get_row_at(i)[0]) for i in range(stats.row_count)]
            if listed:
                # a name on its own line, then one line per column: "count  60"
                assert names[0].startswith("amount") and names[1].split() == ["count", "60"]
            else:
                assert names[0].startswith("amount") and names[0].endswith("time delta")  # whole, not cut
        await pilot.press("escape")


async def test_details_show_the_machine_and_amounts_with_units(demo_repo):
    import json

    rows = [{"type": "time", "subtype": "real", "uid": "./app", "amount": 0.1839 + 0.001 * order, "order": order}
            for order in range(1, 4)]
    machine = {"hostname": "box", "cpu": "Some CPU", "cores": 8, "memory": 25_276_514_304, "os": "Linux 6.1",
               "load_before": 0.52, "load_after": 0.61}
    (demo_repo / ".perun" / "jobs" / "app-time-machine.perf").write_text(json.dumps(
        {"header": {"type": "time", "units": {"time": "s"}, "cmd": "./app", "machine": machine,
                    "preemption": {"count": 12, "wait_seconds": 0.004414}},
         "collector_info": {"name": "time", "params": {}}, "global": {"timestamp": 1.0, "resources": rows}}))
    tag = next(i.tag for i in status_of(demo_repo).pending if i.path and i.path.name == "app-time-machine.perf")
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await focus_profiles(pilot, tag)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ProfileDetailsScreen)
        meta = rendered_text(screen.query_one("#details-meta", Static))
        # the machine entry row by row, its memory in GiB rather than 25276514304
        assert "machine        hostname: box" in meta and "memory: 23.5 GiB" in meta
        assert "load: 0.52 -> 0.61" in meta and "25276514304" not in meta and "{hostname" not in meta
        # the time a traced run spent off the CPU, in a unit, not as a bare float of seconds
        assert "wait_seconds: 4.41 ms" in meta and "0.004414" not in meta, meta
        stats = screen.query_one("#details-stats", DataTable)
        assert [str(c) for c in stats.get_row_at(0)[1:]] == ["3", "184.9 ms", "185.9 ms", "186.9 ms"]


async def test_search_finds_a_commit_and_n_repeats_it(demo_repo):
    entries = entries_of(demo_repo)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.query_one(HistoryView)
        await pilot.press("slash")
        search = app.query_one("#history-search", Input)
        assert search.display and app.focused is search
        await pilot.press(*"plain scan", "enter")
        await pilot.pause()
        assert not search.display and app.focused is view
        assert "plain scan" in view.current.version.short_desc
        assert app.query_one(ProfilesTable).minor == view.current.version.checksum
        # searching by author visits that author's commits in order
        await pilot.press("slash", *"priya", "enter")
        first = view.cursor
        await pilot.press("n")
        second = view.cursor
        priya = [i for i, e in enumerate(entries) if e.version.author == "Priya Raman"]
        assert first in priya and second in priya and second != first


async def test_search_and_head_work_from_the_profiles_pane(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.query_one(HistoryView)
        app.query_one(ProfilesTable).focus()
        await pilot.press("slash", *"plain scan", "enter")
        await settle(pilot)
        assert app.focused is view and "plain scan" in view.current.version.short_desc
        app.query_one(ProfilesTable).focus()
        await pilot.press("h")
        await pilot.pause()
        assert app.focused is view and view.cursor == 0


async def test_search_without_a_match_warns(demo_repo):
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"no such commit", "enter")
        await pilot.pause()
        assert app.query_one(HistoryView).cursor == 0
        assert any("no such commit" in note for note in recorder.notes("warning"))


async def test_a_corrupted_object_is_a_notification_not_a_crash(demo_repo):
    head = status_of(demo_repo).registered[0]
    with api.open_repository(demo_repo) as repo:
        path = repo.objects.path_of(head.checksum)
    path.chmod(0o644)
    path.write_bytes(b"this is not a compressed profile")
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        errors = recorder.notes("error")
        assert any("damaged" in e and head.checksum in e for e in errors)
        table = await focus_profiles(pilot, head.tag)
        assert table.current.error
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)  # the details closed again
        assert any(e.startswith("corrupt object") for e in recorder.notes("error"))
        assert app.is_running


async def test_f1_lists_every_key(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(" ".join(row) for row in app.screen.rows())
        for words in ("Register the pending profile", "Unlink", "Search commits", "Move the cursor to HEAD",
                      "Leave perun-tui", "Command palette", "Plot the profile", "Postprocess the profile",
                      "Run the job matrix", "Edit the job matrix", "Degradation checks", "Mark the commit",
                      "Flame graph: zoom into", "Heap map: the next snapshot", "Heap map: switch between",
                      "Scatter: the next uid", "Matrix: open local.yml in $EDITOR", "Check: every commit",
                      "Cancel the run"):
            assert words in text, words
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_question_mark_opens_help_but_types_in_the_search_box(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "slash", "question_mark")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert app.screen.query_one("#history-search").value == "?"


async def test_header_names_the_screen_and_the_repository(demo_repo):
    from textual.widgets import Header
    from textual.widgets._header import HeaderTitle

    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        title = str(app.screen.query_one(Header).query_one(HeaderTitle).render())
        assert title.startswith("perun") and demo_repo.name in title


def test_every_binding_has_an_id():
    from perun_tui.modals.check_profiles import CheckProfilesDialog
    from perun_tui.screens.check import CheckScreen, CompareScreen
    from perun_tui.widgets.history import HistoryPane
    from perun_tui.screens.matrix import MatrixScreen
    from perun_tui.widgets.units import EntryList
    from perun_tui.screens.plot import PlotScreen
    from perun_tui.widgets.plot import ChartView, FlameView, HeapView
    from perun_tui.modals.postprocess import PostprocessScreen
    from perun_tui.screens.run import RunScreen

    classes = (PerunApp, MainScreen, HistoryView, HistoryPane, ProfilesTable, ProfileDetailsScreen, ConfirmScreen,
               HelpScreen, PlotScreen, ChartView, FlameView, HeapView, RunScreen, MatrixScreen, EntryList,
               PostprocessScreen, CheckScreen, CheckProfilesDialog, CompareScreen)
    ids = {}
    for cls in classes:
        for binding in cls.__dict__.get("BINDINGS", []):
            assert binding.id, f"{cls.__name__}: {binding.key}"
            # one id, one binding: the help keys every dialog shares are one Binding object
            assert ids.setdefault(binding.id, binding) is binding, f"{cls.__name__}: {binding.id} names two bindings"


async def test_palette_commands_act_on_the_selection(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        names = [c.name for c in main_screen(app).palette_commands()]
        assert {"profile: register", "profile: unlink", "history: jump to HEAD", "history: search",
                "plot: scatter", "plot: flame graph", "plot: heap map", "profile: postprocess",
                "run: matrix for HEAD", "run: matrix for marked commits", "matrix: edit", "check: selected commit",
                "check: all", "check: profiles"} <= set(names)
        assert all(": " in name for name in names)
        await pilot.press("down", "down", "down")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"jump")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one(HistoryView).cursor == 0

        await focus_profiles(pilot, "0@p")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"register")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
    assert len(status_of(demo_repo).pending) == 1


async def test_narrow_terminals_hide_the_commit_pane(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("narrow")
        assert not app.query_one("#commit-pane").display
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not app.screen.has_class("narrow")
        assert app.query_one("#commit-pane").display


async def test_ten_thousand_commits_arrive_in_chunks_and_scroll(tmp_path):
    from gitrepo import fast_linear_history

    root = tmp_path / "big"
    fast_linear_history(root, 10_000)
    api.init(root)
    recorder = Recorder()
    app = PerunApp(root)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        view = app.query_one(HistoryView)
        assert len(view.entries) == 10_000
        assert len(recorder.of(HistoryChunk)) > 5
        await pilot.press("end")
        await pilot.pause()
        assert view.cursor == 9_999
        assert view.scroll_offset.y == 10_001 - view.scrollable_content_region.height
        assert "benchmark commit 0" in view.render_line(view.scrollable_content_region.height - 1).text
        await pilot.press("pageup", "h")
        await pilot.pause()
        assert view.cursor == 0 and view.scroll_offset.y == 0


def test_outside_a_repository_main_says_so_in_one_line(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: not a perun repository")
    assert err.count("\n") == 1


@pytest.mark.parametrize("argv", [["--help"]])
def test_help_option(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--demo" in out and "--repo PATH" in out


def test_repo_option_names_the_repository(tmp_path, capsys):
    assert main(["--repo", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("error: not a perun repository")


@pytest.mark.parametrize("argv", [["--repo", "a", "--demo"], ["--repo", "a", "b"]])
def test_conflicting_repositories_are_refused(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err


async def test_reload_keeps_the_selected_commit(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.query_one(HistoryView)
        await pilot.press("down", "down", "down")
        selected = view.current.version.checksum
        await pilot.press("r")
        await settle(pilot)
        assert len(view.entries) == 40
        assert view.current.version.checksum == selected


async def test_an_unexpected_failure_is_a_notification_too(demo_repo, monkeypatch):
    from perun_tui.core import Core

    def broken(self):
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(Core, "status", broken)
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        assert any("the disk is on fire" in note for note in recorder.notes("error"))
        assert app.is_running
        assert len(app.query_one(HistoryView).entries) == 40


async def test_an_amounts_table_keeps_a_singular_counts_digits_under_the_plurals():
    """``1 sample`` under ``56 samples`` in a right-aligned column of amounts: its unit is padded, so the
    digits line up (rich's right justification would strip the padding and move the number)."""
    from rich.text import Text
    from textual.app import App

    from perun_core.api import format_amount
    from perun_tui.widgets.columns import AmountsTable

    class Host(App):
        def compose(self):
            yield AmountsTable(("field", "count"), id="table")

    app = Host()
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(AmountsTable)
        table.set_rows([[Text(name), Text(format_amount(count, "samples", column=True), justify="right")]
                        for name, count in (("main", 56), ("helper", 1))])
        await pilot.pause()
        lines = [line for line in rendered_text(table).splitlines() if line.strip().startswith(("main", "helper"))]
        main, helper = lines
        assert "1 sample" in helper and "1 samples" not in helper
        assert helper.index("1 sample") == main.index("56 samples") + 1


async def test_details_show_the_addresses_of_a_memory_profile_in_hexadecimal(demo_repo):
    """The statistics of a memory profile's allocation addresses read '94.2T' as if they counted something."""
    from perun_tui.widgets.columns import AmountsTable

    from .helpers import select_profile

    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i", commit=2)  # the demo's memory profile
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ProfileDetailsScreen)
        stats = screen.query_one("#details-stats", AmountsTable)
        row = next(row for row in stats.rows_given if row[0].plain == "address")
        assert all(cell.plain.startswith("0x") for cell in row[2:]), [cell.plain for cell in row]
        int(row[2].plain, 16)  # a number in hexadecimal, no unit or prefix


async def test_profile_times_name_their_zone_as_the_command_line_does(demo_repo, monkeypatch):
    """The profiles' times are the viewer's: the zone is said once, in the time column's header, as in status."""
    import re
    import time

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.query_one(ProfilesTable)
        assert table.row_count
        labels = [column.label.plain for column in table.columns.values()]
        assert "time +0530" in labels, labels
        times = [table.get_row_at(row)[labels.index("time +0530")].plain for row in range(table.row_count)]
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", when) for when in times), times


async def test_a_and_x_on_a_registered_profile_say_why_they_do_nothing(demo_repo):
    """a (register) and x (delete) apply to pending profiles only; on a registered one they did nothing, silently."""
    from .helpers import select_profile

    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        table = await select_profile(pilot, "0@i", commit=0)
        assert table.current.registered
        await pilot.press("a")
        await pilot.press("x")
        await pilot.pause()
        warnings = recorder.notes("warning")
        assert any("only pending profiles can be registered" in note for note in warnings), warnings
        assert any("only pending profiles can be deleted" in note for note in warnings), warnings
        assert isinstance(app.screen, MainScreen)  # nothing asked, nothing done
