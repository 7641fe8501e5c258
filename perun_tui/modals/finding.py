"""The whole of one finding of a degradation check: the check screen's line under its table is cut in narrow
or short terminals, this dialog wraps every word of it (the re-run's verdict, the sizes, both profiles)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Static

from .keys import HELP_IN_DIALOG


class FindingScreen(ModalScreen[None]):
    """``text`` wrapped to the dialog's width, scrolled when it is longer than the terminal."""

    BINDINGS = [
        Binding("escape,q,i", "close", "Close", id="finding.close"),
        HELP_IN_DIALOG,
    ]

    def __init__(self, title: str, text: Text) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="finding-dialog", classes="dialog"):
            with VerticalScroll(id="finding-body"):
                yield Static(self.text, id="finding-text")

    def on_mount(self) -> None:
        dialog = self.query_one("#finding-dialog")
        dialog.border_title = escape(self.title_text)
        dialog.border_subtitle = "esc to close"
        self.query_one("#finding-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
