"""Pilot test of the fuzz screen: opened from the palette, started from its form, live progress, cancelled with esc."""

from __future__ import annotations

import json
import re

from textual.widgets import DataTable, Input, Label

from perun_core import api
from perun_tui.app import PerunApp
from perun_tui.screens.fuzz import FuzzDone, FuzzEvent, FuzzFeed, FuzzScreen
from perun_tui.widgets.forms import ParamForm

from fuzz.programs import SORT, sort_seed, write_program
from .helpers import Recorder, settle, wait_until


async def test_fuzzing_from_the_palette_shows_progress_and_esc_cancels(demo_repo, tmp_path):
    program = write_program(tmp_path, "sort.py", SORT)
    (tmp_path / "seed.txt").write_text(sort_seed())
    out = tmp_path / "out"
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 32), message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"fuzz: start")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, FuzzScreen) and app.screen.query(ParamForm))
        screen = app.screen
        form = screen.query_one(ParamForm)
        await wait_until(pilot, lambda: bool(screen.query("#field-cmd")))
        # the form is the fuzz declaration: one field per parameter, the same names
        assert {p.name for p in form.owner.params} == {p.name for p in api.FUZZ_PARAMS}
        for name, value in (("cmd", str(program)), ("seeds", str(tmp_path / "seed.txt")), ("output_dir", str(out)),
                            ("seed", "5"), ("profiles", "0")):
            screen.query_one(f"#field-{name}", Input).value = value
        await pilot.pause()
        assert not form.problems()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "runs" in str(screen.query_one("#fuzz-status").render()), timeout=60)
        assert screen.running and recorder.of(FuzzEvent)
        await pilot.press("escape")
        await wait_until(pilot, lambda: recorder.of(FuzzDone), timeout=60)
        await settle(pilot)
        assert screen.status == "cancelled" and app.screen is screen
        results = json.loads((out / "results.json").read_text())
        assert results["stopped"] == "cancelled"
        table = screen.query_one("#fuzz-found", DataTable)
        assert table.row_count == len(results["findings"])
        # a run's cost in the unit of the metric in its best prefix, as the command line writes it (not 0.0123 s)
        costs = [str(table.get_cell_at((row, 2))) for row in range(table.row_count)]
        cost = r"hang|[0-9.]+ (ns|µs|ms|s)" if results["metric"] != "instructions" else r"[0-9.]+[kMGT]? instructions"
        assert all(re.fullmatch(cost, text) for text in costs), costs
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, FuzzScreen)


async def open_fuzz_form(app, pilot) -> None:
    """The fuzz screen opened on a settled app, once its form is there."""
    await settle(pilot)
    app.push_screen(FuzzScreen())
    await wait_until(pilot, lambda: isinstance(app.screen, FuzzScreen) and bool(app.screen.query("#field-cmd")))


async def test_the_form_has_the_focus_and_the_pane_until_a_start(demo_repo):
    """Keys typed at once go into the first field; no sparkline block or empty table before a start; at 40x12
    every field is reachable with tab."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await open_fuzz_form(app, pilot)
        await pilot.pause()
        screen = app.screen
        first = screen.query_one("#field-cmd", Input)
        assert app.focused is first
        await pilot.press(*"./prog")
        assert first.value == "./prog"
        assert not screen.query_one("#fuzz-plot").display and not screen.query_one("#fuzz-found").display
        form = screen.query_one(ParamForm)
        assert form.size.height >= 6  # the pane less its borders and the status line
        fields = list(form.query(".form-field"))
        seen = set()
        for _ in fields:
            seen.add(app.focused.id)
            assert form.region.contains_region(app.focused.region)  # scrolled into view
            await pilot.press("tab")
        assert seen == {field.id for field in fields}


async def test_the_form_shows_the_unit_of_every_amount(demo_repo):
    """Time budget, hang timeout, sizes and counts of runs show their unit beside the field; the default and a typed
    value that reads better with a prefix go through the formatter of amounts (65536 bytes: 64.0 KiB)."""
    amounts = [p for p in api.FUZZ_PARAMS if p.kind in ("int", "float") and p.name != "seed"]
    assert all(p.unit for p in amounts), [p.name for p in amounts if not p.unit]  # the seed is a number, no amount
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_fuzz_form(app, pilot)
        await settle(pilot)
        screen = app.screen
        for param in amounts:
            assert str(screen.query_one(f"#unit-{param.name}", Label).render()) == param.unit
        assert screen.query_one("#field-timeout", Input).placeholder == "default: 1800.0 s"
        assert screen.query_one("#field-calibration", Input).placeholder == "default: 5 runs"
        screen.query_one("#field-max_size", Input).focus()
        await pilot.press(*"65536")
        await pilot.pause()
        assert str(screen.query_one("#unit-max_size", Label).render()) == "B = 64.0 KiB"
        screen.query_one("#field-hang_timeout", Input).focus()
        await pilot.press(*"0.25")
        await pilot.pause()
        assert str(screen.query_one("#unit-hang_timeout", Label).render()) == "s = 250.0 ms"
        await pilot.press("backspace", "backspace", "backspace", "backspace", *"x")
        await pilot.pause()
        # a value that does not convert: the unit alone, the field marked and the error in the message line
        assert str(screen.query_one("#unit-hang_timeout", Label).render()) == "s"
        assert screen.query_one(ParamForm).problems()
        # marked in shape before its name, not by the field's tint alone; the mark goes with the error
        row = screen.query_one("#field-hang_timeout").parent
        assert str(row.query_one(".form-label", Label).render()) == "✗ hang_timeout"
        await pilot.press("backspace")
        await pilot.pause()
        assert str(row.query_one(".form-label", Label).render()) == "hang_timeout"


async def test_a_unit_stands_next_to_its_field_at_120_columns(demo_repo):
    """At 120x40 the fields stretched over the whole pane, and "s" of the 1800 s time budget stood ninety cells
    right of the value it belongs to: a field is as wide as a value needs, its unit next to it."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_fuzz_form(app, pilot)
        await settle(pilot)
        screen = app.screen
        for name in ("timeout", "max_size", "calibration"):
            field, unit = screen.query_one(f"#field-{name}", Input), screen.query_one(f"#unit-{name}", Label)
            assert unit.region.x - field.region.x <= 64, (name, field.region, unit.region)
            assert field.region.width >= 40  # room for a long value (a command line, a path) all the same


def test_the_feed_tells_the_screen_once_per_take():
    """A burst of events from the search is one message: the screen takes the kept inputs and the last progress."""
    feed = FuzzFeed()
    progress = [api.FuzzProgress(n, 0, 0, 0, 1.0, n / 10, 10.0) for n in range(1, 6)]
    assert feed.put(progress[0]) is True
    assert [feed.put(event) for event in progress[1:]] == [False] * 4
    kept = api.InputKept(None, 2.0)
    assert feed.put(kept) is False
    assert feed.take() == (None, [kept], progress[-1])
    assert feed.put(progress[0]) is True  # told again after a take
    assert feed.put(object()) is False  # what the screen does not show is not kept


async def test_a_tab_between_fields_restyles_the_two_fields_not_the_whole_pane(demo_repo, monkeypatch):
    """The focused pane's border came from ``:focus-within``, for which Textual restyled every widget of the
    pane (the form's 31 fields and their labels) on each tab; the class the app sets changes only when the
    focus enters or leaves a pane."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_fuzz_form(app, pilot)
        await settle(pilot)
        pane = app.screen.query_one("#field-cmd").query_ancestor(".pane")
        assert pane.has_class("-focus-within")
        restyled: list[int] = []
        update_nodes = app.stylesheet.update_nodes
        monkeypatch.setattr(app.stylesheet, "update_nodes",
                            lambda nodes, *args, **kwargs: (restyled.append(len(list(nodes))),
                                                            update_nodes(nodes, *args, **kwargs))[1])
        await pilot.press("tab", "tab")
        await settle(pilot)
        assert app.focused.id == "field-seeds" and pane.has_class("-focus-within")
        in_pane = len(list(pane.walk_children()))
        assert restyled and max(restyled) < in_pane // 4, (restyled, in_pane)


async def test_a_field_name_cut_at_40_columns_keeps_a_space_before_its_field(demo_repo):
    """At 40x12 'workloads_filter' read 'workloads_fil…not set': the cut name ran into its field's text."""
    from .helpers import rendered_text

    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await open_fuzz_form(app, pilot)
        labels = list(app.screen.query(".form-label").results(Label))
        assert labels
        cut = [label for label in labels if rendered_text(label).rstrip().endswith("…")]
        assert cut, [rendered_text(label) for label in labels]  # the test is about a cut name
        for label in labels:
            # the name ends a cell short of the field
            assert label.region.x + len(rendered_text(label).rstrip()) < label.region.right, rendered_text(label)


async def test_ctrl_s_with_the_command_empty_names_the_field_and_keeps_the_form(demo_repo, tmp_path):
    """It reported 'fuzz: -b/--cmd is required' (a flag of the command line) and switched to an empty results
    layout; the form's field is what the reader can fill in."""
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 32), message_hook=recorder) as pilot:
        await settle(pilot)
        app.push_screen(FuzzScreen())
        await wait_until(pilot, lambda: isinstance(app.screen, FuzzScreen) and bool(app.screen.query("#field-cmd")))
        screen = app.screen
        screen.query_one("#field-seeds", Input).value = str(tmp_path)
        screen.query_one("#field-output_dir", Input).value = str(tmp_path / "out")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await settle(pilot)
        notes = recorder.notes("error")
        assert notes and notes[-1].startswith("fill in cmd:") and "--cmd" not in notes[-1]
        assert not screen.has_class("-started") and not screen.running
        assert app.focused is screen.query_one("#field-cmd")
        assert "fill in cmd" in str(screen.query_one("#fuzz-status").render())


async def test_a_search_refused_before_it_ran_leaves_no_empty_results_layout(demo_repo, tmp_path):
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 32), message_hook=recorder) as pilot:
        await settle(pilot)
        app.push_screen(FuzzScreen())
        await wait_until(pilot, lambda: isinstance(app.screen, FuzzScreen) and bool(app.screen.query("#field-cmd")))
        screen = app.screen
        for name, value in (("cmd", "true"), ("seeds", str(tmp_path / "no-such-seed")),
                            ("output_dir", str(tmp_path / "out"))):
            screen.query_one(f"#field-{name}", Input).value = value
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: recorder.of(FuzzDone), timeout=30)
        await settle(pilot)
        assert screen.status == "failed" and recorder.notes("error")
        assert not screen.has_class("-started")


def _kept(index: int, slowdown: float, rules: list[str]) -> api.InputKept:
    finding = api.Finding(f"w{index}", f"/out/w{index}", 100 + index, 0.01 * slowdown, 0.01 * slowdown,
                          0.01 * slowdown, slowdown, "seed", "seed", rules, 1, 1.0, index)
    return api.InputKept(finding, slowdown)


async def test_the_found_inputs_are_sorted_slowest_first_fitted_and_focused_when_the_search_ends(demo_repo):
    """27 kept inputs: 10 were shown in the order found, the best off screen; the table never got the focus
    (enter could not open a profile); the rules were cut at the screen's edge without an ellipsis and a
    scrollbar's glyph stood under the table."""
    from types import SimpleNamespace

    from textual.widgets import DataTable

    rules = ["open-unclosed", "open-unclosed", "insert-token", "prepend-token", "grow-run"]
    slowdowns = [1.5 + (index * 7) % 27 for index in range(27)]
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_fuzz_form(app, pilot)
        screen = app.screen
        screen.running = True
        screen.add_class("-started")
        for index, slowdown in enumerate(slowdowns):
            if screen.feed.put(_kept(index, slowdown, rules)):
                screen.post_message(FuzzEvent(None))
        await wait_until(pilot, lambda: screen.query_one("#fuzz-found", DataTable).row_count == 27)
        best = max(range(27), key=lambda index: slowdowns[index])
        result = SimpleNamespace(stopped="limit", best=[_kept(best, slowdowns[best], rules).finding],
                                 profiles=[f"/out/profiles/w{best}.perf"], reported=[], executions=100,
                                 findings=list(range(27)), settings=SimpleNamespace(output_dir="/out"))
        screen.post_message(FuzzDone(result, None))
        await wait_until(pilot, lambda: not screen.running)
        await settle(pilot)
        table = screen.query_one("#fuzz-found", DataTable)
        assert app.focused is table and table.cursor_row == 0
        shown = [[str(table.get_cell_at((row, column))) for column in range(len(table.columns))]
                 for row in range(table.row_count)]
        keys = [str(table.coordinate_to_cell_key((row, 0)).row_key.value) for row in range(table.row_count)]
        assert keys[0] == f"w{best}"
        assert [slowdowns[int(key[1:])] for key in keys] == sorted(slowdowns, reverse=True)
        full = api.compact_rules(rules)
        labels = [str(column.label) for column in table.columns.values()]
        cells = [row[labels.index("rules")] for row in shown]
        assert all(cell == full or (cell.endswith("…") and full.startswith(cell[:-1])) for cell in cells), cells
        # the columns fit the table: no sideways scrolling, no scrollbar under it
        assert table.max_scroll_x == 0 and not table.show_horizontal_scrollbar
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == 26 and table.scroll_y > 0
        await pilot.press("home")
        opened = []
        screen.dismiss = opened.append
        await pilot.press("enter")
        assert [link.source for link in opened] == [f"w{best}.perf"]


async def test_the_search_and_the_re_measured_slow_down_are_labelled_apart(demo_repo):
    """One input, two numbers: the table showed w1 at 5.6x under 'slow-down', the status reported it at
    16.5x 'at equal size', with nothing saying the first is the search's measurement and the second the
    re-measurement side by side."""
    from types import SimpleNamespace

    from textual.widgets import DataTable

    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 24)) as pilot:
        await open_fuzz_form(app, pilot)
        screen = app.screen
        screen.running = True
        screen.add_class("-started")
        kept = _kept(1, 5.6, ["grow-run"])
        if screen.feed.put(kept):
            screen.post_message(FuzzEvent(None))
        await wait_until(pilot, lambda: screen.query_one("#fuzz-found", DataTable).row_count == 1)
        growth = SimpleNamespace(order="quadratic", per_step=None, exponent=None, at_least=None, measured=None,
                                 part="the run of 'a'")
        verdict = SimpleNamespace(id="w1", ratio=16.5, growth=growth)
        result = SimpleNamespace(stopped="limit", best=[kept.finding], profiles=[], reported=[verdict],
                                 executions=100, findings=[kept.finding], settings=SimpleNamespace(output_dir="/out"))
        screen.post_message(FuzzDone(result, None))
        await wait_until(pilot, lambda: not screen.running)
        await settle(pilot)
        table = screen.query_one("#fuzz-found", DataTable)
        labels = [str(column.label) for column in table.columns.values()]
        assert "5.6x" in [str(table.get_cell_at((0, column))) for column in range(len(labels))]
        assert any("in search" in label for label in labels), labels
        status = str(screen.query_one("#fuzz-status").render())
        assert "w1 16.5x at equal size re-measured side by side" in status, status
