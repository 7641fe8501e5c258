"""The difference of two profiles: the table, the difference flame graph (where both have stacks) and bars.

Opened from the profiles pane (mark two profiles with ``m``, press ``d``)
and from a finding of a check (``d``: its baseline against its target).
The comparison and its rendering run in a thread worker over
:mod:`perun_core.api`; the result arrives by message.  The views are drawn
for the screen's width and drawn again when it changes; their lines never
wrap (a table narrower than its columns scrolls sideways).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual import events
from textual.containers import ScrollableContainer
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Static, TabbedContent, TabPane

from perun_core import api
from perun_core.errors import PerunError
from perun_core.api import escape_controls

from ..widgets.footer import Footer
from ..formatting import ansi_picture
from ..pictures import plain_pictures

__all__ = ["DiffScreen"]

#: loads (baseline, target) as api.LoadedProfile, in a worker thread
Loader = Callable[[], tuple[Any, Any]]


@dataclass
class DiffReady(Message):
    """The rendered views of a comparison (terminal text with colours), or an error."""

    title: str = ""
    #: the width the views were drawn for
    width: int = 0
    table: str = ""
    flame: str | None = None
    bars: str = ""
    error: str | None = None


class DiffScreen(Screen[None]):
    """What changed from a baseline to a target profile."""

    TITLE = "perun · difference"
    #: the table's view has the focus on opening: End, PageDown and the arrows scroll it at once
    AUTO_FOCUS = "#diff-table ScrollableContainer"

    BINDINGS = [
        Binding("escape", "close", "Back", key_display="esc", tooltip="Difference: back", id="diff.close"),
        Binding("t", "tab('diff-table')", "Table", tooltip="Difference: the table per uid and function",
                id="diff.table"),
        Binding("f", "tab('diff-flame')", "Flame graph", tooltip="Difference: the difference flame graph",
                id="diff.flame"),
        Binding("b", "tab('diff-bars')", "Bars", tooltip="Difference: baseline and target bars per uid",
                id="diff.bars"),
    ]

    def __init__(self, loader: Loader, label: str = "", names: tuple[str, str] | None = None) -> None:
        super().__init__()
        self.names = names
        self.loader = loader
        self.label = label
        #: the last rendered comparison (None until it arrives)
        self.result: DiffReady | None = None
        self._comparison: tuple[Any, tuple[str, str]] | None = None  # (comparison, names), once made
        self._drawing: int | None = None  # the width of the drawing under way

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with TabbedContent(id="diff-tabs", initial="diff-table"):
            with TabPane("Table", id="diff-table"):
                yield ScrollableContainer(Static("comparing…", id="diff-table-text", classes="diff-view"))
            with TabPane("Flame graph", id="diff-flame"):
                yield ScrollableContainer(Static("", id="diff-flame-text", classes="diff-view"))
            with TabPane("Bars", id="diff-bars"):
                yield ScrollableContainer(Static("", id="diff-bars-text", classes="diff-view"))
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = escape_controls(self.label)
        self._draw()

    def on_resize(self, event: events.Resize) -> None:
        if self.result is not None and not self.result.error and self._view_size()[0] != self.result.width:
            self._draw()

    def _view_size(self) -> tuple[int, int]:
        """The cells a view has: the screen less the scrollbar and a column of margin; the rows under the tabs."""
        width, height = self.app.size
        return max(width - 2, 30), max(height - 8, 6)

    def _draw(self) -> None:
        width, height = self._view_size()
        if self._drawing == width:
            return
        self._drawing = width
        # without colour the views draw their plain forms (frames in brackets), not colour stripped off
        self.compare(width, height, not plain_pictures(self.app))

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff", description="comparing two profiles")
    def compare(self, width: int, height: int, color: bool = True) -> None:
        try:
            if self._comparison is None:
                baseline, target = self.loader()
                names = self.names or (baseline.source, target.source)
                self._comparison = (api.compare_profiles(baseline.profile, target.profile, baseline_name=names[0],
                                                         target_name=names[1]), names)
            comparison, names = self._comparison
            table = api.render_diff(comparison, "short", width=width, color=color, limit=200)
            flame = None
            if comparison.has_stacks:
                flame = api.render_diff(comparison, "flamegraph", width=width, height=height, color=color, front="tui")
            bars = api.render_diff(comparison, "bars", width=width, color=color)
        except PerunError as error:
            self.post_message(DiffReady(error=error.message))
            return
        self.post_message(DiffReady(f"{names[0]} → {names[1]}", width, table, flame, bars))

    def on_diff_ready(self, message: DiffReady) -> None:
        self.result = message
        if self._drawing == message.width:
            self._drawing = None
        if not message.error and message.width != self._view_size()[0]:
            self._draw()  # the screen was resized while this drawing was made
        if message.error:
            self.app.notify(message.error, title="difference", severity="error", timeout=10, markup=False)
            text = self.query_one("#diff-table-text", Static)
            text.add_class("-error")  # a sentence, wrapped to the screen (a drawn view keeps its lines)
            text.update(Text(escape_controls(f"error: {message.error}"), style="bold red"))
            return
        self.sub_title = escape_controls(message.title)
        self.query_one("#diff-table-text", Static).remove_class("-error").update(ansi_picture(message.table))
        flame = message.flame if message.flame is not None else \
            "no call stacks in both profiles: no difference flame graph"
        # the note without a flame graph is a sentence: it wraps at the screen's edge (cut at 40 columns)
        self.query_one("#diff-flame-text", Static).set_class(message.flame is None, "-sentence").update(
            ansi_picture(flame))
        self.query_one("#diff-bars-text", Static).update(ansi_picture(message.bars))

    def action_tab(self, pane: str) -> None:
        self.query_one(TabbedContent).active = pane
        # the view shown takes the focus, so that the scrolling keys move it and not the hidden one
        self.query_one(f"#{pane} ScrollableContainer").focus()

    def action_close(self) -> None:
        self.dismiss(None)
