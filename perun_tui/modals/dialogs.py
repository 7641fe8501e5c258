"""Modal dialogs: a yes/no confirmation and the F1 help screen."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask before something that cannot be undone from the TUI; dismisses with True or False."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, question: str, action: str) -> None:
        super().__init__()
        self.title_text = title
        self.question = question
        self.action_label = action

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog"):
            yield Static(Text(self.question), id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.action_label} (y)", variant="error", id="confirm-yes")
                yield Button("Cancel (n)", variant="default", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-dialog").border_title = self.title_text
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class HelpScreen(ModalScreen[None]):
    """The keys of the screen on view (``current``), then every other key of the app, grouped by where it works."""

    BINDINGS = [
        Binding("escape,f1,q", "close", "Close", id="help.close"),
    ]

    def __init__(self, groups: Iterable[tuple[str, list[BindingType]]],
                 current: Iterable[tuple[str, list[BindingType]]] = (),
                 legend: Iterable[tuple[str, str]] = ()) -> None:
        super().__init__()
        self.current = list(current)
        #: (term, meaning) of the short column names and marks on the screen, listed under its keys
        self.legend = list(legend)
        self.groups = list(groups)

    #: Below this many terminal columns "where" is a heading above its keys instead of a column beside them,
    #: so that what a key does keeps most of the width (three columns left it one word per line at 40).
    NARROW_BELOW = 70

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog", classes="dialog"):
            with VerticalScroll(id="help-body"):
                if self.current:
                    yield Static(Text("On this screen", style="bold underline"), classes="help-heading")
                    yield Static(self._table(self.current), id="help-current")
                if self.legend:
                    yield Static(Text("\nWhat the short names mean", style="bold underline"), classes="help-heading")
                    yield Static(self._legend(), id="help-legend")
                if self.current:
                    yield Static(Text("\nElsewhere", style="bold underline"), classes="help-heading")
                yield Static(self._table(self.groups), id="help-keys")
            yield Label(self._hint(), id="help-hint")

    def on_mount(self) -> None:
        dialog = self.query_one("#help-dialog")
        dialog.border_title = "Keys"
        dialog.border_subtitle = "esc to close"
        self.query_one("#help-body").focus()

    def rows(self, groups: list[tuple[str, list[BindingType]]] | None = None) -> list[tuple[str, str, str]]:
        """(where, keys, what) for every binding with a description, in order (every group by default)."""
        rows = []
        seen: set[tuple[str, str]] = set()
        for where, bindings in (self.current + self.groups) if groups is None else groups:
            for binding in bindings:
                if not isinstance(binding, Binding) or not binding.description:
                    continue
                keys = ", ".join(self.app.get_key_display(Binding(key, binding.action, key_display=(
                    binding.key_display if "," not in binding.key else None)))
                    for key in binding.key.split(","))
                if (where, keys) not in seen:
                    seen.add((where, keys))
                    rows.append((where, keys, binding.tooltip or binding.description))
        return rows

    def _hint(self) -> str:
        if self.app.size.width < self.NARROW_BELOW:
            return "ctrl+p: the command palette"
        return "ctrl+p opens the command palette: every action is there as 'noun: verb'"

    def on_resize(self) -> None:
        self.query_one("#help-hint", Label).update(self._hint())
        if self.current:
            self.query_one("#help-current", Static).update(self._table(self.current))
        self.query_one("#help-keys", Static).update(self._table(self.groups))

    def _table(self, groups: list[tuple[str, list[BindingType]]]) -> Table | Group:
        if self.app.size.width < self.NARROW_BELOW:
            return self._headed_tables(groups)
        table = Table(box=None, expand=True, padding=(0, 2, 0, 0), show_edge=False)
        table.add_column("where", style="bold", no_wrap=True)
        table.add_column("key", no_wrap=True)
        table.add_column("does", ratio=1)
        previous = None
        for where, keys, what in self.rows(groups):
            if previous is not None and where != previous:
                table.add_row("", "", "")
            table.add_row(where if where != previous else "", keys, what)
            previous = where
        return table

    def _legend(self) -> Table:
        table = Table(box=None, expand=True, padding=(0, 2, 0, 0), show_edge=False, show_header=False)
        table.add_column("term", style="bold", no_wrap=True)
        table.add_column("means", ratio=1)
        for term, meaning in self.legend:
            table.add_row(term, meaning)
        return table

    def _headed_tables(self, groups: list[tuple[str, list[BindingType]]]) -> Group:
        """The narrow layout: per place, its name in bold, then its keys and what they do."""
        parts: list[Text | Table] = []
        for where, rows in itertools.groupby(self.rows(groups), key=lambda row: row[0]):
            parts.append(Text(("\n" if parts else "") + where, style="bold"))
            table = Table(box=None, expand=True, padding=(0, 1, 0, 0), show_edge=False, show_header=False)
            table.add_column("key", no_wrap=True)
            table.add_column("does", ratio=1)
            for _, keys, what in rows:
                table.add_row(keys, what)
            parts.append(table)
        return Group(*parts)

    def action_close(self) -> None:
        self.dismiss(None)
