"""The fuzz screen: a form built from the fuzz parameter declarations, live progress, the found inputs.

Opened from the palette ("fuzz: start").  ``ctrl+s`` starts fuzzing with the
form's values (relative paths against the repository root); progress comes
as messages from a thread worker: runs, kept inputs, hangs, the best
slow-down and a sparkline of the best slow-down over time.  ``esc`` cancels a
running search (the results so far are still written) and closes the screen
otherwise; ``enter`` on a found input whose profile was collected closes the
screen and shows that profile in the profiles pane.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Sparkline, Static

from perun_core import api
from perun_core.errors import PerunError

from ..messages import ProfileLink
from ..widgets.forms import ParamForm
from ..widgets.footer import Footer

__all__ = ["FuzzDone", "FuzzEvent", "FuzzScreen"]


@dataclass
class FuzzEvent(Message):
    """One progress event of the running search (an api.FuzzStarted, InputKept, FuzzProgress, ...)."""

    event: Any


@dataclass
class FuzzDone(Message):
    """The search ended: its result, or the error that stopped it before it began."""

    result: Any
    error: PerunError | None


class FuzzScreen(Screen[ProfileLink | None]):
    """Fuzz a program for slow inputs; dismisses with the profile to show, if any."""

    BINDINGS = [
        Binding("ctrl+s", "start", "Start", tooltip="Start fuzzing with the values of the form", id="fuzz.start"),
        Binding("escape", "stop_or_close", "Cancel/Close", tooltip="Cancel the running search, else close",
                id="fuzz.cancel"),
        Binding("enter", "open", "Open profile", tooltip="Show the profile of the selected input", id="fuzz.open"),
    ]

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.values = dict(values or {})
        self.cancel = threading.Event()
        self.running = False
        self.status = ""
        self.result: Any = None
        self.best = 1.0
        self.history: list[float] = [1.0]
        self.links: dict[str, ProfileLink] = {}
        self.started = 0.0

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="fuzz-pane", classes="pane"):
            yield ParamForm(id="fuzz-form")
            yield Static("fill in cmd, seeds and output_dir, then ctrl+s", id="fuzz-status")
            yield Sparkline(self.history, id="fuzz-plot")
            yield DataTable(id="fuzz-found", cursor_type="row", zebra_stripes=False)
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#fuzz-pane").border_title = "Fuzz · find inputs that make a program slow"
        table = self.query_one("#fuzz-found", DataTable)
        for label, key in (("input", "id"), ("size", "size"), ("time", "time"), ("slow-down", "slowdown"),
                           ("rules", "rules"), ("profile", "profile")):
            table.add_column(label, key=key)
        await self.query_one(ParamForm).show_params(api.fuzz_form(), self.values)

    # -- starting and stopping --------------------------------------------------------------
    def action_start(self) -> None:
        if self.running:
            return
        form = self.query_one(ParamForm)
        if form.problems():
            self.notify(form.problems()[0], severity="error", title="fuzz")
            return
        self.cancel = threading.Event()
        self.running = True
        self.status = "running"
        self.best = 1.0
        self.history[:] = [1.0]
        self.started = time.monotonic()
        self.query_one("#fuzz-found", DataTable).clear()
        self._show("checking the seeds and measuring them…")
        self.fuzz(dict(form.params))

    @work(thread=True, exclusive=True, exit_on_error=False, group="fuzz", description="fuzzing")
    def fuzz(self, values: dict[str, Any]) -> None:
        try:
            result = api.run_fuzzing(values, on_event=lambda event: self.post_message(FuzzEvent(event)),
                                     cancel=self.cancel, cwd=self.app.core.root)
        except PerunError as error:
            self.post_message(FuzzDone(None, error))
            return
        self.post_message(FuzzDone(result, None))

    def action_stop_or_close(self) -> None:
        if self.running:
            self.cancel.set()
            self._show("cancelling…")
        else:
            self.dismiss(None)

    def on_unmount(self) -> None:
        self.cancel.set()  # never leave a search running behind a closed screen

    def action_open(self) -> None:
        table = self.query_one("#fuzz-found", DataTable)
        if self.running or table.row_count == 0:
            return
        key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        link = self.links.get(str(key))
        if link is None:
            self.notify("this input has no profile (only the best inputs get one)", severity="warning")
            return
        self.dismiss(link)

    # -- progress ---------------------------------------------------------------------------------
    def _show(self, text: str) -> None:
        self.query_one("#fuzz-status", Static).update(Text(text))

    def on_fuzz_event(self, message: FuzzEvent) -> None:
        event = message.event
        if isinstance(event, api.FuzzStarted):
            self._show(f"fuzzing with {event.jobs} parallel runs; seed {event.baselines[0]:.4f} s; keeping inputs "
                       f"{100 * event.threshold:.0f} % slower than their parent")
        elif isinstance(event, api.InputKept):
            finding = event.finding
            self.best = max(self.best, event.best_slowdown)
            time_text = "hang" if finding.hang else f"{finding.value:.4f} s"
            self.query_one("#fuzz-found", DataTable).add_row(
                finding.id, f"{finding.size} B", time_text, f"{finding.slowdown:.1f}x",
                api.compact_rules(finding.rules), "", key=finding.id)
        elif isinstance(event, api.FuzzProgress):
            self.best = max(self.best, event.best_slowdown)
            self.history.append(self.best)
            del self.history[:-200]
            self.query_one("#fuzz-plot", Sparkline).data = list(self.history)
            self._show(f"{event.executions} runs ({event.executions_per_second:.0f}/s) · {event.kept} kept · "
                       f"{event.hangs} hangs · best {event.best_slowdown:.1f}x at equal size (at "
                       f"{event.best_found_at:.0f} s) · {event.elapsed:.0f} s"
                       + (" · cancelling…" if self.cancel.is_set() else ""))

    def on_fuzz_done(self, message: FuzzDone) -> None:
        self.running = False
        if message.error is not None:
            self.status = "failed"
            self._show(f"error: {message.error.message}")
            self.notify(message.error.message, severity="error", title="fuzz")
            return
        result = self.result = message.result
        self.status = "cancelled" if result.stopped == "cancelled" else "done"
        profiled = [f for f in result.best if not f.hang][:len(result.profiles)]
        table = self.query_one("#fuzz-found", DataTable)
        for finding, profile in zip(profiled, result.profiles):
            self.links[finding.id] = ProfileLink(None, Path(profile).name)
            if finding.id in table.rows:
                table.update_cell(finding.id, "profile", Path(profile).name)
        reported = "; ".join(f"{v.id} {v.ratio:.1f}x at equal size, {api.growth_text(v)}" for v in result.reported[:2])
        self._show(f"{self.status}: {result.executions} runs, {len(result.findings)} kept, {len(result.reported)} "
                   f"reported{': ' + reported if reported else ''}; results in {result.settings.output_dir}")
