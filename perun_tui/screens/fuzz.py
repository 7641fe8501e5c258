"""The fuzz screen: a form built from the fuzz parameter declarations, live progress, the found inputs.

Opened from the palette ("fuzz: start").  ``ctrl+s`` starts fuzzing with the
form's values (relative paths against the repository root); progress comes
as messages from a thread worker: runs, kept inputs, hangs, the best
slow-down and a sparkline of the best slow-down over time.  ``esc`` cancels a
running search (the results so far are still written) and closes the screen
otherwise; ``enter`` on a found input whose profile was collected closes the
screen and shows that profile in the profiles pane.  The found inputs are
listed the slowest first; when the search ends their table takes the focus,
its cursor on the best one (``tab`` reaches it too).

The form's first field has the focus when the screen opens.  Until a search
starts the form has the pane to itself (the sparkline and the table of
found inputs come in with the first start).  The search reports every kept
input and several progress events a second from its thread; the screen
must not redraw for each (a redraw of the whole form costs the search's
thread the interpreter lock and made it several times slower than on the
command line), so the events wait in a :class:`FuzzFeed` and the screen
takes them at most :data:`FRAMES` times a second, with lines of fixed
height that need no new layout.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
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
from ..widgets.columns import Column, FittedTable
from ..widgets.footer import Footer

__all__ = ["FOUND_COLUMNS", "FRAMES", "FuzzDone", "FuzzEvent", "FuzzFeed", "FuzzScreen"]

#: how many times a second the screen shows the search's progress at most
FRAMES = 4

#: the kept inputs' columns: fitted to the width, a cell too wide (the rules) cut with an ellipsis
FOUND_COLUMNS = (Column("id", "input", 0, 4, 12), Column("size", "size", 3, 4, 10),
                 Column("time", "time", 2, 4, 12), Column("slowdown", "x in search", 1, 5, 11),
                 Column("rules", "rules", 5, 8, 60, shrink=True),
                 Column("profile", "profile", 4, 8, 60, optional=True, middle=True))


@dataclass
class FuzzEvent(Message):
    """The search has news: the screen takes it from its :class:`FuzzFeed` (one message until it did)."""

    event: Any


class FuzzFeed:
    """What the search reported since the screen last looked: its start, the kept inputs, the latest progress.

    Filled on the search's thread, emptied on the UI's: a burst of events
    is one message and one redraw.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: Any = None
        self._kept: list[Any] = []
        self._progress: Any = None
        self._told = False

    def put(self, event: Any) -> bool:
        """Keep ``event``; True when the screen is to be told (it was told nothing since it last took)."""
        with self._lock:
            if isinstance(event, api.InputKept):
                self._kept.append(event)
            elif isinstance(event, api.FuzzProgress):
                self._progress = event
            elif isinstance(event, api.FuzzStarted):
                self._started = event
            else:
                return False
            told, self._told = self._told, True
            return not told

    def take(self) -> tuple[Any, list[Any], Any]:
        """(the start or None, the inputs kept since the last take, the latest progress or None)."""
        with self._lock:
            taken = (self._started, self._kept, self._progress)
            self._started, self._kept, self._progress = None, [], None
            self._told = False
            return taken


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
        self.history: list[float] = []  # the best slow-down at each look (empty: a flat line, no block)
        self.links: dict[str, ProfileLink] = {}
        #: the kept inputs' rows, the slowest first: (slow-down, id, cells)
        self.found: list[tuple[float, str, list[Text]]] = []
        self.started = 0.0
        self.metric = "cpu"  # what a run's cost is, as the search's start says
        self.feed = FuzzFeed()
        self._taken = 0.0  # when the screen last took the feed (monotonic)
        self._take_timer: Any = None  # a take scheduled for the next frame

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="fuzz-pane", classes="pane"):
            yield ParamForm(id="fuzz-form")
            yield Static("fill in cmd, seeds and output_dir, then ctrl+s", id="fuzz-status")
            yield Sparkline([], id="fuzz-plot")
            yield FittedTable(FOUND_COLUMNS, id="fuzz-found")
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#fuzz-pane").border_title = "Fuzz · find inputs that make a program slow"
        form = self.query_one(ParamForm)
        await form.show_params(api.fuzz_form(), self.values)
        fields = form.query(".form-field")
        if fields:
            fields.first().focus()  # keys typed at once go into the first field

    # -- starting and stopping --------------------------------------------------------------
    def action_start(self) -> None:
        if self.running:
            return
        form = self.query_one(ParamForm)
        if form.problems():
            self.notify(form.problems()[0], severity="error", title="fuzz")
            return
        empty = [name for name in getattr(form.owner, "needed", ()) if not form.params.get(name)]
        if empty:
            # named as the form names it (the command line's flags mean nothing here); the form stays, its field focused
            self._show(f"fill in {', '.join(empty)}, then ctrl+s")
            them = "them" if len(empty) > 1 else "it"
            self.notify(f"fill in {', '.join(empty)}: the search cannot start without {them}", severity="error",
                        title="fuzz")
            self.query_one(f"#field-{empty[0]}").focus()
            return
        self.cancel = threading.Event()
        self.running = True
        self.status = "running"
        self.best = 1.0
        self.history.clear()
        self.query_one("#fuzz-plot", Sparkline).data = []
        self.started = time.monotonic()
        self.feed = FuzzFeed()
        self.add_class("-started")
        self.found.clear()
        self.query_one("#fuzz-found", FittedTable).set_rows([])
        self._show("checking the seeds and measuring them…")
        self.fuzz(dict(form.params))

    @work(thread=True, exclusive=True, exit_on_error=False, group="fuzz", description="fuzzing")
    def fuzz(self, values: dict[str, Any]) -> None:
        feed = self.feed

        def on_event(event: Any) -> None:
            if feed.put(event):
                self.post_message(FuzzEvent(event))

        try:
            result = api.run_fuzzing(values, on_event=on_event, cancel=self.cancel, cwd=self.app.core.root)
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
        table = self.query_one("#fuzz-found", FittedTable)
        if self.running or table.row_count == 0:
            return
        key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        link = self.links.get(str(key))
        if link is None:
            self.notify("this input has no profile (only the best inputs get one)", severity="warning")
            return
        self.dismiss(link)

    @on(DataTable.RowSelected, "#fuzz-found")
    def _row_chosen(self, event: DataTable.RowSelected) -> None:
        # enter on the table selects its row (the table's own key comes before the screen's)
        self.action_open()

    # -- progress ---------------------------------------------------------------------------------
    def _show(self, text: str) -> None:
        # one line of fixed height: no new layout of the form for a changed status
        self.query_one("#fuzz-status", Static).update(Text(text, no_wrap=True, overflow="ellipsis"), layout=False)

    def on_fuzz_event(self, message: FuzzEvent) -> None:
        """News from the search: taken now, or with the next frame when the last take was within this one."""
        if self._take_timer is not None:
            return
        wait = self._taken + 1 / FRAMES - time.monotonic()
        if wait <= 0:
            self._take()
        else:
            self._take_timer = self.set_timer(wait, self._take)

    def _take(self) -> None:
        """Show what the feed holds: the start, the kept inputs in a batch, the latest progress."""
        if self._take_timer is not None:
            self._take_timer.stop()
            self._take_timer = None
        self._taken = time.monotonic()
        started, kept, progress = self.feed.take()
        if started is not None:
            self.metric = started.metric
            self._show(f"fuzzing with {started.jobs} parallel runs; seed "
                       f"{api.format_cost(started.baselines[0], started.metric)}; keeping "
                       f"inputs {100 * started.threshold:.0f} % slower than their parent")
        for event in kept:
            finding = event.finding
            self.best = max(self.best, event.best_slowdown)
            time_text = "hang" if finding.hang else api.format_cost(finding.value, self.metric)
            cells = [Text(finding.id), Text(api.format_amount(finding.size, "B")), Text(time_text),
                     Text(f"{finding.slowdown:.1f}x"), Text(api.compact_rules(finding.rules)), Text("")]
            self.found.append((finding.slowdown, finding.id, cells))
        if kept:
            self._show_found()
        if progress is not None:
            self.best = max(self.best, progress.best_slowdown)
            self.history.append(self.best)
            del self.history[:-200]
            self.query_one("#fuzz-plot", Sparkline).data = list(self.history)
            self._show(f"{progress.executions} runs ({progress.executions_per_second:.0f}/s) · {progress.kept} kept · "
                       f"{progress.hangs} hangs · best {progress.best_slowdown:.1f}x at equal size in the search (at "
                       f"{progress.best_found_at:.0f} s) · {progress.elapsed:.0f} s"
                       + (" · cancelling…" if self.cancel.is_set() else ""))

    def _show_found(self) -> None:
        """The kept inputs in the table, the slowest first; the cursor stays on the input it was on."""
        table = self.query_one("#fuzz-found", FittedTable)
        on = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value if table.row_count else None
        self.found.sort(key=lambda row: -row[0])
        table.set_rows([(key, cells) for _slowdown, key, cells in self.found])
        if on is not None:
            table.move_cursor(row=table.get_row_index(on), animate=False)

    def on_fuzz_done(self, message: FuzzDone) -> None:
        self._take()  # what came in after the last frame
        self.running = False
        if message.error is not None:
            self.status = "failed"
            if not self.query_one("#fuzz-found", DataTable).row_count:
                self.remove_class("-started")  # refused before any input was kept: no empty table of results
            self._show(f"error: {message.error.message}")
            self.notify(message.error.message, severity="error", title="fuzz")
            return
        result = self.result = message.result
        self.status = "cancelled" if result.stopped == "cancelled" else "done"
        profiled = [f for f in result.best if not f.hang][:len(result.profiles)]
        table = self.query_one("#fuzz-found", FittedTable)
        for finding, profile in zip(profiled, result.profiles):
            self.links[finding.id] = ProfileLink(None, Path(profile).name)
            table.set_cell(finding.id, "profile", Text(Path(profile).name))
        if table.row_count:
            # the search's end hands the keys to the results: the best input is on the cursor, enter shows it
            table.move_cursor(row=0, animate=False)
            table.focus()
        reported = "; ".join(f"{v.id} {v.ratio:.1f}x at equal size re-measured side by side, {api.growth_text(v)}" for v in result.reported[:2])
        self._show(f"{self.status}: {result.executions} runs, {len(result.findings)} kept, {len(result.reported)} "
                   f"reported{': ' + reported if reported else ''}; results in {result.settings.output_dir}")
