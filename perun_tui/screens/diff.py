"""The difference of two profiles: the table, the difference flame graph (where both have stacks) and bars.

Opened from the profiles pane (mark two profiles with ``m``, press ``d``)
and from a finding of a check (``d``: its baseline against its target).
The comparison and its rendering run in a thread worker over
:mod:`perun_core.api`; the result arrives by message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
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
    table: str = ""
    flame: str | None = None
    bars: str = ""
    error: str | None = None


class DiffScreen(Screen[None]):
    """What changed from a baseline to a target profile."""

    TITLE = "perun · difference"

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

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with TabbedContent(id="diff-tabs", initial="diff-table"):
            with TabPane("Table", id="diff-table"):
                yield VerticalScroll(Static("comparing…", id="diff-table-text"))
            with TabPane("Flame graph", id="diff-flame"):
                yield VerticalScroll(Static("", id="diff-flame-text"))
            with TabPane("Bars", id="diff-bars"):
                yield VerticalScroll(Static("", id="diff-bars-text"))
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = escape_controls(self.label)
        # without colour the views draw their plain forms (frames in brackets), not colour stripped off
        self.compare(max(self.app.size.width - 4, 30), max(self.app.size.height - 8, 6), not plain_pictures(self.app))

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff", description="comparing two profiles")
    def compare(self, width: int, height: int, color: bool = True) -> None:
        try:
            baseline, target = self.loader()
            names = self.names or (baseline.source, target.source)
            comparison = api.compare_profiles(baseline.profile, target.profile, baseline_name=names[0],
                                              target_name=names[1])
            table = api.render_diff(comparison, "short", width=width, color=color, limit=200)
            flame = None
            if comparison.has_stacks:
                flame = api.render_diff(comparison, "flamegraph", width=width, height=height, color=color)
            bars = api.render_diff(comparison, "bars", width=width, color=color)
        except PerunError as error:
            self.post_message(DiffReady(error=error.message))
            return
        self.post_message(DiffReady(f"{names[0]} → {names[1]}", table, flame, bars))

    def on_diff_ready(self, message: DiffReady) -> None:
        self.result = message
        if message.error:
            self.app.notify(message.error, title="difference", severity="error", timeout=10, markup=False)
            self.query_one("#diff-table-text", Static).update(Text(escape_controls(f"error: {message.error}"),
                                                                   style="bold red"))
            return
        self.sub_title = escape_controls(message.title)
        self.query_one("#diff-table-text", Static).update(ansi_picture(message.table))
        flame = message.flame if message.flame is not None else \
            "no call stacks in both profiles: no difference flame graph"
        self.query_one("#diff-flame-text", Static).update(ansi_picture(flame))
        self.query_one("#diff-bars-text", Static).update(ansi_picture(message.bars))

    def action_tab(self, pane: str) -> None:
        self.query_one(TabbedContent).active = pane

    def action_close(self) -> None:
        self.dismiss(None)
