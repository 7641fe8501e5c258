"""The screen shown while the terminal is smaller than perun-tui can lay out (40x12).

It covers whatever was open and says which size is needed and which size
the terminal has; the app (:meth:`perun_tui.app.PerunApp.check_size`) opens
it and closes it again once the terminal is large enough, and what was open
is then shown as it was.  ``q`` still quits.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["MIN_HEIGHT", "MIN_WIDTH", "TooSmallScreen", "too_small"]

MIN_WIDTH = 40
MIN_HEIGHT = 12


def too_small(width: int, height: int) -> bool:
    return width < MIN_WIDTH or height < MIN_HEIGHT


class TooSmallScreen(ModalScreen[None]):
    """"The terminal is too small": the needed and the present size."""

    BINDINGS = [Binding("q", "app.quit", "Quit", id="too_small.quit")]

    def compose(self) -> ComposeResult:
        yield Static("", id="too-small-text")

    def on_mount(self) -> None:
        self._describe(self.app.size.width, self.app.size.height)

    def on_resize(self, event: events.Resize) -> None:
        # the app's size, not the event's: a screen being mounted may get its old size first
        self._describe(self.app.size.width, self.app.size.height)

    def _describe(self, width: int, height: int) -> None:
        self.query_one("#too-small-text", Static).update(
            f"The terminal is too small: {width}x{height}.\n"
            f"perun-tui needs at least {MIN_WIDTH}x{MIN_HEIGHT} (columns x rows).\n"
            "Enlarge the window; q quits.")
