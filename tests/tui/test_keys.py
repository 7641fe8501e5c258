"""Pilot tests: every screen's footer shows its important keys (seven at most); F1 lists all keys of the screen."""

from __future__ import annotations

from textual.widgets import Footer, TabbedContent
from textual.widgets._footer import FooterKey, KeyGroup

from perun_tui.app import PerunApp
from perun_tui.modals.dialogs import HelpScreen
from perun_tui.modals.keys import help_name, own_bindings, screen_key_groups
from perun_tui.screens.matrix import MatrixScreen
from perun_tui.screens.plot import PlotScreen
from perun_tui.widgets.plot import FlameView

from .helpers import select_profile, settle, wait_until

#: the demo's commit (from HEAD) with a memory profile, 1@i
MEMORY_COMMIT = 2
MOST = 7


def footer_items(app) -> list[str]:
    """What the footer shows, one entry per item (a group of keys is one), the palette key left out."""
    items = []
    for child in app.screen.query_one(Footer).children:
        if isinstance(child, KeyGroup):
            items.append(" ".join(key.key_display for key in child.query(FooterKey)))
        elif isinstance(child, FooterKey) and not child.has_class("-command-palette"):
            items.append(f"{child.key_display} {child.description}")
    return items


async def help_rows(pilot) -> list[tuple[str, str, str]]:
    """F1 on the current screen: the rows of its own keys (then closes the help again)."""
    app = pilot.app
    await pilot.press("f1")
    await pilot.pause()
    assert isinstance(app.screen, HelpScreen)
    rows = app.screen.rows(app.screen.current)
    await pilot.press("escape")
    await pilot.pause()
    return rows


async def test_footers_stay_short_and_show_the_key_groups(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        seen = {"main (history)": footer_items(app)}
        await pilot.press("2")
        await settle(pilot)
        seen["main (profiles)"] = footer_items(app)
        await select_profile(pilot, "1@i", commit=MEMORY_COMMIT)
        await pilot.press("p")
        await settle(pilot)
        seen["plot (heap map)"] = footer_items(app)
        await pilot.press("f")
        await settle(pilot)
        seen["plot (flame graph)"] = footer_items(app)
        await pilot.press("escape", "escape")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        seen["matrix"] = footer_items(app)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        seen["check"] = footer_items(app)
    for where, items in seen.items():
        assert 3 <= len(items) <= MOST, (where, items)
        assert "f1 Help" in items, where
    assert "s b w f m" in seen["plot (heap map)"] and "← →" in seen["plot (heap map)"]
    assert "↑ ↓ ← →" in seen["plot (flame graph)"]  # the moves of the frame cursor
    assert "f3 f4" in seen["matrix"]


async def test_f1_lists_the_keys_of_the_screen_on_view_from_its_bindings(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@i", commit=MEMORY_COMMIT)
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PlotScreen))
        await settle(pilot)
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.focused, FlameView))
        rows = await help_rows(pilot)
        where = {row[0] for row in rows}
        assert {"plot", "flame graph", "heap map", "chart", "everywhere"} <= where
        text = "\n".join(" ".join(row) for row in rows)
        for words in ("Flame graph: the calling frame", "Flame graph: the frame to the right",
                      "Flame graph: zoom into", "Heap map: switch between sites", "Back to the profiles", "Leave perun-tui"):
            assert words in text, words
        assert "Edit the job matrix" not in text  # a key of the main screen: not on this one
        # every key the screen's widgets declare, and nothing written by hand
        declared = {binding.tooltip or binding.description for _where, bindings in screen_key_groups(app.screen)
                    for binding in bindings}
        assert declared <= {row[2] for row in rows}
        assert help_name(app.screen) == "plot" and own_bindings(FlameView)[0].id == "plot.zoom"


async def test_the_matrix_editor_says_how_to_switch_tabs_and_f3_f4_do(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MatrixScreen)
        tabs = screen.query_one(TabbedContent)
        assert tabs.active == "tab-commands"
        rows = await help_rows(pilot)
        assert any(row[0] == "job matrix" and row[1] == "f4" and "the tab to the right" in row[2] for row in rows)
        screen.query_one("#matrix-cmds").focus()
        await pilot.pause()
        await pilot.press("f4")  # even from inside a text field
        await wait_until(pilot, lambda: tabs.active == "tab-collectors")
        await pilot.press("f3", "f3")
        await wait_until(pilot, lambda: tabs.active == "tab-preview")  # wraps around
        await pilot.press("escape")
        await settle(pilot)


async def test_the_footer_is_rebuilt_only_when_its_hints_change(demo_repo):
    # Textual rebuilds its footer on every bindings update, several per focus change: a dozen widgets
    # mounted and styled again for the same hints made a tab between panes cost a third of a second of CPU
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(Footer)
        history_hints = footer_items(app)
        assert "h HEAD" in history_hints
        before = list(footer.children)
        await footer.recompose()
        assert list(footer.children) == before  # the same widgets: nothing changed, nothing rebuilt
        # the profiles pane has keys of its own: the footer follows the focus there and back
        await pilot.press("tab")
        await wait_until(pilot, lambda: "p Plot" in footer_items(app))
        assert "h HEAD" not in footer_items(app)
        await pilot.press("tab")
        await wait_until(pilot, lambda: footer_items(app) == history_hints)


def test_j_and_k_move_in_every_list_and_table_of_the_app():
    """j/k moved the history's cursor but did nothing in the profiles table (nor in any other table)."""
    import importlib
    import pkgutil
    import re
    from pathlib import Path

    from textual.widgets import DataTable, OptionList

    import perun_tui

    for module in pkgutil.walk_packages(perun_tui.__path__, "perun_tui."):
        if not module.name.endswith("__main__"):  # that one runs the app
            importlib.import_module(module.name)

    def subclasses(base):
        for cls in base.__subclasses__():
            yield cls
            yield from subclasses(cls)

    ours = [cls for base in (DataTable, OptionList) for cls in subclasses(base)
            if cls.__module__.startswith("perun_tui.")]
    assert {"ProfilesTable", "FittedTable", "EntryList"} <= {cls.__name__ for cls in ours}
    for cls in ours:
        keys = cls._merged_bindings.key_to_bindings
        assert [b.action for b in keys.get("j", [])] == ["cursor_down"], cls
        assert [b.action for b in keys.get("k", [])] == ["cursor_up"], cls
    # no list or table made straight from Textual's classes, which lack the keys
    for path in Path(perun_tui.__file__).parent.rglob("*.py"):
        assert not re.search(r"(?<![\w.])(DataTable|OptionList)\(", path.read_text()), path


async def test_j_and_k_move_the_cursor_of_the_profiles_table(demo_repo):
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = await select_profile(pilot, "0@i", commit=0)
        assert table.cursor_row == 0 and table.row_count > 1
        await pilot.press("j")
        assert table.cursor_row == 1
        await pilot.press("k")
        assert table.cursor_row == 0


async def test_home_and_end_take_the_profiles_table_to_its_first_and_last_row(demo_repo):
    """End and Home did nothing in a table with a row cursor (they scrolled sideways, where nothing was)."""
    from perun_tui.widgets.columns import FittedTable

    assert FittedTable._merged_bindings.key_to_bindings["end"][-1].action == "scroll_bottom"
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = await select_profile(pilot, "0@i", commit=0)
        assert table.row_count > 2
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("home")
        assert table.cursor_row == 0
