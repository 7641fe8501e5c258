"""Pilot tests of what the check screen fits into its rows and columns (the status note, the columns, an empty
filter)."""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Region

from perun_core.api import in_words_of
from perun_core.check.noise import ADVICE
from perun_tui.app import PerunApp

from .helpers import open_check_screen, settle, wait_until


def outer_text(widget) -> str:
    """What ``widget`` shows, padding and all."""
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, *widget.outer_size)))


def squeezed(text: str) -> str:
    return "".join(text.split())  # wrapping breaks lines between words


async def test_the_advice_note_under_the_findings_is_readable_whole(demo_repo):
    """The note under the findings was one row cut with an ellipsis at every size ("note: measurements vary a
    lot or the machine was busy: repeat more (e: the …"), even with twenty free rows at 120x40: it wraps
    over free rows now, and the table keeps its rows at 40x12."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_check_screen(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: not screen.running, timeout=30)
        await settle(pilot)
        note = f"note: {in_words_of(ADVICE, 'tui')}"
        screen._status(Text(note, style="yellow"))
        for size in ((120, 40), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            shown = outer_text(screen.query_one("#check-status"))
            assert squeezed(note) in squeezed(shown), (size, shown)
        await pilot.resize_terminal(40, 12)
        await settle(pilot)
        assert screen.query_one("#check-findings").size.height >= 2  # a row besides the header


async def test_the_h_key_says_it_checks_the_selected_commit(demo_repo):
    """h on the check screen was labelled "Check head" (and the palette said "check: head") while it checks the
    commit selected in the history: "head of b79ccdd" with HEAD elsewhere.  Its label, its palette command, the
    pane's title and the note of its end name the selected commit."""
    from perun_tui.app import MainScreen
    from perun_tui.widgets.history import HistoryView

    from .helpers import main_screen
    from .test_keys import footer_items

    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        history = app.query_one(HistoryView)
        history.cursor = 2
        await settle(pilot)
        selected = history.current.version.checksum[:7]
        assert isinstance(app.screen, MainScreen)
        assert "check: head" not in [command.name for command in main_screen(app).palette_commands()]
        screen = await open_check_screen(pilot)
        labels = {key: active.binding.description for key, active in screen.active_bindings.items()}
        assert labels["h"] == "Check commit", labels
        names = [command.name for command in screen.palette_commands()]
        assert "check: selected commit" in names and "check: head" not in names, names
        assert "h Check commit" in footer_items(app), footer_items(app)
        app.clear_notifications()
        await pilot.press("h")
        await wait_until(pilot, lambda: not screen.running, timeout=60)
        await settle(pilot)
        title = str(screen.query_one("#check-pane").border_title)
        assert title == f"Degradation check · commit {selected}", title
        notes = [n.message for n in app._notifications]
        assert any(f"check commit {selected}:" in note for note in notes), notes


async def test_a_filter_that_leaves_no_finding_says_so(demo_repo):
    """f to a filter none of the findings passes (the demo has no maybe) showed the table's headers alone: a line
    says which results the check has none of."""
    from perun_tui.widgets.findings import FILTERS

    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_check_screen(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: not screen.running, timeout=30)
        await settle(pilot)
        table = screen.query_one("#check-findings")
        empty = []
        for name, _label, keep in FILTERS:
            screen.action_filter(name)
            await pilot.pause()
            shown = outer_text(screen.query_one("#check-pair"))
            if any(keep(finding.result) for _v, _p, finding in screen.rows):
                assert table.row_count and "in this check" not in shown, (name, shown)
            else:
                empty.append(name)
                assert table.row_count == 0 and "in this check" in shown and " no " in f" {shown}", (name, shown)
                await pilot.pause()
                assert screen.query_one("#check-pair").region.y == table.region.y + 1  # right under the headers
        assert "maybe" in empty and "degradations" not in empty  # the demo's slowdown is no maybe


async def test_the_result_is_not_cut_while_the_location_can_give_way_at_40x12(demo_repo):
    """At 40x12 the result read "= NoChan…" and "+ Optimi…" while the location kept cells above its minimum: the
    width a third column needed was taken from the result first.  The location (cut in its middle, its subtype
    kept) gives first now."""
    from perun_tui.widgets.findings import FINDING_COLUMNS

    location_minimum = next(column.minimum for column in FINDING_COLUMNS if column.key == "location")
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        screen = await open_check_screen(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: not screen.running, timeout=30)
        await settle(pilot)
        screen.action_filter("other")  # the no-change rows
        await pilot.pause()
        table = screen.query_one("#check-findings")
        widths = {column.key: size for column, size in table._shown}
        assert list(widths) == ["location", "result", "delta"], widths
        results = {str(table.get_row_at(row)[1]) for row in range(table.row_count)}
        assert "= NoChange" in results and not any(cell.endswith("…") for cell in results
                                                   if cell.startswith("= ")), results
        assert widths["location"] >= location_minimum
