"""The run screen: the job matrix running for some commits, live, and what it produced.

::

    ╭ Run · job matrix for HEAD 6c8442a ─────────────────────────────╮
    │ job 2 of 6 · 2 of 5 runs done · 1.2 s · time: ./bench small    │  the running job
    │ ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━  33%  │  jobs and runs done
    │  #  status   time  job                         commit   profile │  one row per job
    │ job 1: the wall times of the runs vary by 21 %: repeat more …   │  measurement advice
    │ ─ output of job 2 ─────────────────────────────────────────────│
    │ (the last lines the profiled program wrote)                     │
    ╰─────────────────────────────────────────────────────────────────╯

The runner works on the thread of a thread worker here, which turns its
events into messages.  A profiled program may write hundreds of thousands of
lines a second, so output lines are no messages: each goes into a bounded
tail (:class:`OutputTail`, the last lines the pane can show), and one
:class:`~perun_tui.messages.RunOutput` tells the screen that there is news;
the screen takes the tail at most :data:`FRAMES` times a second.  Nothing
queues up however long a flood lasts, so key presses stay quick and a cancel
is noticed at once.  Repetitions come in bursts too, so their messages replace
each other in the queue (``can_replace``).

Escape (or ctrl+c) cancels: the runner kills the profiled process group,
removes its worktree and ends the worker.  Quitting during a run cancels it
the same way and leaves once the worker ended, so no process of the run
outlives the TUI.  Once the run ended, enter on a job's row shows its
profile in the profiles pane.

What the run has to say stays in the pane, where it covers nothing: the
status line says how the run ended and measurement advice (runs that vary
too much) gets lines of its own above the output.  Only an error that
stopped the run before anything ran is a notification as well.  The jobs'
columns are fitted to the width (the least useful left out first, cut text
ending in an ellipsis).

The bar counts finished jobs and, within the running job, its finished
workloads and repetitions (the collectors report each), so it moves during a
single long job; while nothing says how far the run is (before the plan, or a
job that reports no repetitions) it pulses instead of sitting at 0 %.  The
pane's subtitle shows the time since the run started.
"""

from __future__ import annotations

import textwrap
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import replace

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Header, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from perun_core.errors import Interrupted, PerunError
from perun_core.api import run_events as ev
from perun_core.api import escape_controls, escape_lines, in_words_of

from ..commands import PaletteCommand, ScreenCommands
from ..formatting import fit
from ..messages import ProfileLink, RunDone, RunEvent, RunOutput, RunRepetition
from ..widgets.columns import Column, FittedTable
from ..widgets.footer import Footer

#: what ran and how it went first; the profile written takes what is left after the time and the commit (the
#: title names the commit when there is one); at 40 columns the job's number, status and label remain
JOB_COLUMNS = (
    Column("job", "#", 0, 1, 6),
    Column("status", "status", 1, 6, 9),
    # whole where the row has room (held at 40 cells, two jobs of one command read alike at 120 columns), cut
    # in its middle: its end, the workload, tells jobs apart
    Column("label", "job", 2, 8, 80, middle=True),
    Column("time", "time", 3, 5, 9),
    Column("commit", "commit", 4, 7, 7),
    Column("profile", "profile", 5, 10, 80),
)


def job_columns(commits: int) -> tuple[Column, ...]:
    """The jobs' columns of a run of ``commits`` commits: over several, the commit tells rows of one job apart
    and ranks before the job's label and its time; over one (named in the title), it goes first for lack of room."""
    if commits <= 1:
        return JOB_COLUMNS
    return tuple(replace(column, priority={"label": 4, "time": 2, "commit": 3}.get(column.key, column.priority))
                 for column in JOB_COLUMNS)
#: rows the measurement advice may take (ADVICE_ROWS_SHORT under 20 rows); more is cut with an ellipsis
ADVICE_ROWS = 4
ADVICE_ROWS_SHORT = 2

#: lines of the profiled program's output kept for the tail (more than the pane's rows)
TAIL = 40
#: how often a second the output pane takes new lines at most
FRAMES = 30


class OutputTail:
    """The last lines of the shown job's output: filled by the run's thread, taken by the screen.

    :meth:`add` returns True when the screen has to be told (nothing new was
    waiting before), so one message is on its way however many lines come
    until the screen takes them (:meth:`take`).  :meth:`reset` starts the
    tail of the next job; the screen takes lines only for the job whose output
    it shows, so lines of the next job never appear under the previous one,
    and the previous job's last lines stay to be taken once.
    """

    def __init__(self, size: int = TAIL) -> None:
        self._lock = threading.Lock()
        self._lines: deque[str] = deque(maxlen=size)
        self._job: int | None = None
        self._news = False
        self._previous: tuple[int | None, list[str]] | None = None

    def add(self, text: str) -> bool:
        with self._lock:
            self._lines.append(text)
            told, self._news = self._news, True
        return not told

    def reset(self, job: int | None) -> None:
        with self._lock:
            self._previous = (self._job, list(self._lines)) if self._news else None
            self._job = job
            self._lines.clear()
            self._news = False

    def take(self, job: int | None) -> list[str] | None:
        """``job``'s lines if some came since the last take; None otherwise."""
        with self._lock:
            if self._previous is not None and self._previous[0] == job:
                lines, self._previous = self._previous[1], None
                return lines
            if not self._news or self._job != job:
                return None
            self._news = False
            return list(self._lines)


class RunScreen(Screen[ProfileLink | None]):
    """Runs the job matrix for ``minors`` once mounted; dismisses with the profile to show, if any."""

    TITLE = "perun · run"

    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("escape", "stop", "Cancel", key_display="esc", tooltip="Cancel the run (the profiled program is killed); once it ended, close",
                id="run.stop"),
        Binding("ctrl+c", "stop", "Cancel", show=False, tooltip="Cancel the run (the profiled program is killed)",
                id="run.interrupt"),
        Binding("escape", "close", "Close", key_display="esc", tooltip="Close the run once it ended",
                id="run.close"),
        Binding("enter", "open", "Show profile", priority=True,
                tooltip="Show the profile of the selected job: its details, over the profiles pane with it selected",
                id="run.open"),
    ]

    def __init__(self, minors: list[str], label: str) -> None:
        super().__init__()
        self.minors = list(minors)
        self.label = label
        self.running = False
        self.cancelling = False
        self.quitting = False  # the app leaves once the run stopped
        #: set to stop the run (the runner checks it while it waits for the profiled program)
        self.cancel = threading.Event()
        #: set when the worker's thread is done with the run (its processes and worktree are gone)
        self.finished = threading.Event()
        self.worker: Worker | None = None
        self.status = ""
        self.total = 0
        self.done = 0
        self.job: int | None = None
        self.job_label = ""
        self.job_started = 0.0
        self.started = 0.0
        self.repetition = ""
        #: measured repetitions of the running job: (done, total); warm-ups do not count
        self.runs: tuple[int, int] | None = None
        #: workloads of the running job: (index of the one running, total)
        self.workload: tuple[int, int] | None = None
        self.links: dict[int, ProfileLink] = {}
        self._versions: dict[str, int] = {}
        self._tail = OutputTail()
        self._output_job: int | None = None  # the job whose output the pane shows
        self._output_tail: list[str] = []  # the shown job's last lines of output
        self._output_taken = 0.0  # when the pane last took lines (monotonic)
        self._output_timer: object | None = None  # a take scheduled for the next frame
        self._failure = ""  # why the shown job failed, shown under its output
        self._advice: list[str] = []  # measurement advice, one line per piece

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="run-pane", classes="pane"):
            yield Static("starting…", id="run-current")
            yield ProgressBar(total=None, show_eta=False, id="run-progress")
            yield FittedTable(job_columns(len(self.minors)), id="run-jobs")
            yield Static("", id="run-advice")
            yield Static("", id="run-output")
        yield Footer()

    def on_mount(self) -> None:
        pane = self.query_one("#run-pane")
        pane.border_title = f"Run · {self.label}"
        self.query_one("#run-advice", Static).display = False
        self.query_one("#run-output", Static).border_title = "output"
        self.started = time.monotonic()
        self.running = True
        self.set_interval(0.5, self._tick)
        self.worker = self.run()

    def on_unmount(self) -> None:
        # leaving (the app quits): stop the run; the thread cleans up within a second, and the
        # interpreter does not end before the worker's thread did
        self.cancel.set()

    # -- the worker ------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="run", description="running the job matrix")
    def run(self) -> None:
        try:
            self.post_message(self._run(get_current_worker()))
        finally:
            self.finished.set()

    def _run(self, worker: Worker) -> RunDone:
        tail = self._tail

        def on_event(event: object) -> None:
            # on this thread, for every event: an output line costs an append, nothing more
            if worker.is_cancelled:
                self.cancel.set()
            if isinstance(event, ev.OutputLine):
                if tail.add(event.text):
                    self.post_message(RunOutput(event.job))
            elif isinstance(event, ev.Repetition):
                kind = "warm-up" if event.warmup else "run"
                if tail.add(f"── {kind} {event.index} of {event.total}"):
                    self.post_message(RunOutput(event.job))
                self.post_message(RunRepetition(event.job, event.index, event.total, event.warmup))
            else:
                if isinstance(event, ev.JobStarted):
                    tail.reset(event.job)
                self.post_message(RunEvent(event))

        try:
            result = self.app.core.run_matrix(self.minors, on_event, self.cancel)
        except Interrupted:
            return RunDone("interrupted")
        except PerunError as error:
            return RunDone("error", error=_message(error))
        return RunDone("failed" if result.failures else "ok", result)

    # -- events ------------------------------------------------------------------------
    def on_run_event(self, message: RunEvent) -> None:
        event = message.event
        table = self.query_one("#run-jobs", FittedTable)
        if isinstance(event, ev.RunPlanned):
            self.total = event.total
        elif isinstance(event, ev.VersionStarted):
            self._versions[event.version] = event.index
        elif isinstance(event, ev.JobStarted):
            self.job = event.job
            self.job_label = " ".join(event.spec.label.split())  # a command line may hold newlines
            self.job_started = time.monotonic()
            self.repetition = ""
            self.runs = self.workload = None
            table.put_row(str(event.job), [Text(str(event.job), justify="right"), Text("running", style="bold"),
                                           Text(self.job_label), Text(""), Text(event.version[:7]), Text("")])
            table.move_cursor(row=table.row_count - 1, animate=False)
            self.query_one("#run-output", Static).border_title = f"output of job {event.job}"
            self._output_job, self._output_tail, self._failure = event.job, [], ""
            self._take_output()  # lines the job wrote before this message was handled
            self._show_output()
        elif isinstance(event, ev.WorkloadStarted) and event.job == self.job:
            self.workload = (event.index, event.total)
            self.runs = None
        elif isinstance(event, ev.PhaseStarted) and event.job == self.job and event.phase != "collect":
            self.repetition = event.phase + (f" {event.unit}" if event.unit else "")
        elif isinstance(event, ev.ProfileWritten) and event.job is not None:
            self.links[event.job] = ProfileLink(event.origin or None, event.path.name)
            self._cell(event.job, "profile", Text(event.path.name))
        elif isinstance(event, ev.ProfileRegistered) and event.job is not None:
            self.links[event.job] = ProfileLink(event.minor, event.source, registered=True)
            self._cell(event.job, "profile", Text(f"{event.source} (registered)"))
        elif isinstance(event, ev.MeasurementAdvice):
            self._advise(event.job, event.text)
        elif isinstance(event, ev.JobFinished):
            self._take_output()
            self._job_ended(event.job, Text("ok", style="bold green"), f"{event.seconds:.1f} s")
        elif isinstance(event, ev.JobFailed):
            self._take_output()
            self._job_ended(event.job, Text("failed", style="bold red"), f"{time.monotonic() - self.job_started:.1f} s")
            reason = " ".join(event.reason.split())
            if self.job_label and reason.startswith(self.job_label + ": "):
                reason = reason[len(self.job_label) + 2:]  # the row already names the job
            self._cell(event.job, "profile", Text(reason, style="red"))
            # the table's cell is cut at the screen's edge: the output pane has room for the whole reason
            self.query_one("#run-output", Static).border_title = f"output of job {event.job}: failed"
            self._failure = f"failed: {reason}"
            self._show_output()
        self._tick()

    def _job_ended(self, job: int, status: Text, seconds: str) -> None:
        self.done += 1
        self._cell(job, "status", status)
        self._cell(job, "time", Text(seconds))
        self.job = None

    def _cell(self, job: int, column: str, value: Text) -> None:
        # a row that was never added (an event without JobStarted) is ignored
        self.query_one("#run-jobs", FittedTable).set_cell(str(job), column, value)

    def _advise(self, job: int | None, text: str) -> None:
        """Advice on a job's measurement: lines of the pane's own (a toast would cover the output)."""
        text = " ".join(text.split())
        text = in_words_of(text.removeprefix("advice: "), "tui")
        self._advice.append(f"advice for job {job}: {text}" if job is not None else f"advice: {text}")
        self._show_advice()

    def _show_advice(self) -> None:
        """The advice that fits the rows the pane gives it, the last line ending in an ellipsis if cut."""
        advice = self.query_one("#run-advice", Static)
        advice.display = bool(self._advice)
        if not self._advice:
            return
        # its own width once laid out; before that, the screen's less the pane's borders and its padding
        shown = advice.content_region.width
        width = max(shown if shown > 0 else self.size.width - 4, 10)
        rows = wrapped_to(self._advice, width, ADVICE_ROWS_SHORT if self.size.height < 20 else ADVICE_ROWS)
        advice.styles.height = len(rows)
        advice.update(Text("\n".join(rows), no_wrap=True, overflow="ellipsis"))  # narrower than thought: … still
        if shown <= 0:
            self.call_after_refresh(self._fit_advice, width)
        # the advice took rows of the output's: its tail is cut again to the rows left (at 40x12 they showed the
        # first lines of the tail cut for the taller pane, not the last)
        self.call_after_refresh(self._show_output)

    def _fit_advice(self, width: int) -> None:
        """Wrap the advice again when the width it was wrapped to before the layout is not the one it got."""
        if self.query_one("#run-advice", Static).content_region.width not in (0, width):
            self._show_advice()

    def on_resize(self) -> None:
        self._show_advice()
        self.call_after_refresh(self._show_output)  # the tail that fits the output's new height

    def on_run_repetition(self, message: RunRepetition) -> None:
        if message.job != self.job:
            return
        if message.warmup:
            self.repetition = f"warm-up {message.index} of {message.total}"
        else:
            self.repetition = ""
            self.runs = (message.index - 1, message.total)
        self._tick()

    def job_fraction(self) -> float:
        """How much of the running job is done (0 when nothing says), from its workloads and repetitions."""
        runs = self.runs[0] / self.runs[1] if self.runs and self.runs[1] else 0.0
        if self.workload and self.workload[1]:
            return (self.workload[0] - 1 + runs) / self.workload[1]
        return runs

    def _update_bar(self) -> None:
        """Jobs done plus the running job's part; pulsing while that is still nothing at all."""
        bar = self.query_one(ProgressBar)
        done = self.done + (self.job_fraction() if self.job is not None else 0.0)
        if not self.total or (self.running and done == 0):
            if bar.total is not None:
                bar.update(total=None)
            return
        bar.update(total=self.total, progress=min(done, self.total))

    def on_run_output(self, message: RunOutput) -> None:
        """New lines: take them now, or with the next frame when the last take was within this one."""
        if self._output_timer is not None:
            return
        wait = self._output_taken + 1 / FRAMES - time.monotonic()
        if wait <= 0:
            self._take_output()
        else:
            self._output_timer = self.set_timer(wait, self._take_output)

    def _take_output(self) -> None:
        if self._output_timer is not None:
            self._output_timer.stop()  # type: ignore[attr-defined]
            self._output_timer = None
        lines = self._tail.take(self._output_job)
        if lines is None:
            return
        self._output_taken = time.monotonic()
        self._output_tail = [escape_controls(line) for line in lines]  # the profiled program's own output
        self._show_output()

    def _show_output(self) -> None:
        """The tail of the job's output that fits; a failure's reason, wrapped, below it."""
        output = self.query_one("#run-output", Static)
        rows = max(output.content_region.height, 1)
        output.set_class(bool(self._failure), "failed")
        if not self._failure:
            output.update(Text("\n".join(self._output_tail[-rows:]), no_wrap=True, overflow="ellipsis"))
            return
        width = max(output.content_region.width, 1)
        reason_rows = min(-(-len(self._failure) // width) + 1, rows)  # +1: wrapping at words takes more
        lines = [Text(line, no_wrap=True, overflow="ellipsis") for line in self._output_tail[-(rows - reason_rows):]
                 ] if rows > reason_rows else []
        output.update(Text("\n").join([*lines, Text(escape_lines(self._failure), style="red")]))

    def on_run_done(self, message: RunDone) -> None:
        self._take_output()
        self.running = False
        self.cancelling = False
        self.status = message.status
        bar = self.query_one(ProgressBar)
        bar.update(total=max(self.total, 1), progress=self.done)
        seconds = time.monotonic() - self.started
        current = self.query_one("#run-current", Static)
        if message.status == "error":
            current.update(Text(f"error: {message.error}", style="bold red"))
            self.app.notify(message.error, title="run", severity="error", timeout=10, markup=False)
        elif message.status == "interrupted":
            if self.job is not None:
                self._cell(self.job, "status", Text("cancelled", style="bold yellow"))
                self.job = None
            current.update(Text(f"cancelled after {seconds:.1f} s: the running job was stopped, "
                                "nothing partial was kept", style="bold"))
        else:
            result = message.result
            written = len(result.profiles)
            failed = len(result.failures)
            summary = f"done in {seconds:.1f} s: {written} profile{'s' * (written != 1)} written"
            if failed:
                summary += f", {failed} job{'s' * (failed != 1)} failed"
            if self.links:
                summary += " · enter shows the selected job's profile"
            current.update(Text(summary, style="bold" if not failed else "bold yellow"))
            table = self.query_one("#run-jobs", FittedTable)
            if self.links:
                first = min(self.links)
                table.move_cursor(row=table.get_row_index(str(first)), animate=False)
            table.focus()
        self.query_one("#run-pane").border_subtitle = message.status
        self.refresh_bindings()

    def _tick(self) -> None:
        if not self.running:
            return
        self._update_bar()
        self.query_one("#run-pane").border_subtitle = f"{_clock(time.monotonic() - self.started)} elapsed"
        current = self.query_one("#run-current", Static)
        if self.cancelling:
            doing = "quitting" if self.quitting else "cancelling"
            current.update(Text(f"{doing}: stopping the profiled program…", style="bold"))
            return
        if self.job is None:
            elapsed = time.monotonic() - self.started
            current.update(Text(f"preparing… {elapsed:.1f} s" if not self.done else
                                f"{self.done} of {self.total} jobs done · {elapsed:.1f} s"))
            return
        elapsed = time.monotonic() - self.job_started
        parts = [f"job {self.job} of {self.total or '?'}"]
        if self.workload and self.workload[1] > 1:
            parts.append(f"workload {self.workload[0]} of {self.workload[1]}")
        if self.repetition:
            parts.append(self.repetition)
        elif self.runs and self.runs[1] > 1:
            parts.append(f"{self.runs[0]} of {self.runs[1]} runs done")
        parts += [f"{elapsed:.1f} s", self.job_label]
        current.update(Text(" · ".join(parts), no_wrap=True, overflow="ellipsis"))

    # -- actions -----------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open":
            return not self.running and bool(self.links)
        if action == "stop":
            return self.running
        if action == "close":
            return not self.running
        return True

    def action_stop(self) -> None:
        """Cancel the run: the runner kills the profiled process group and removes its worktree."""
        if self.running and not self.cancelling:
            self.cancelling = True
            self.cancel.set()
            self._tick()

    def quit_when_stopped(self) -> None:
        """Cancel the run and make the app exit once the worker ended (the app's quit during a run)."""
        self.quitting = True
        if self.finished.is_set():
            self.app.exit()
            return
        self.action_stop()
        self._tick()

    def action_close(self) -> None:
        if not self.running:
            self.dismiss(None)

    def action_open(self) -> None:
        if self.running:
            return
        table = self.query_one("#run-jobs", FittedTable)
        if table.row_count == 0:
            return
        key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        link = self.links.get(int(key or 0))
        if link is None:
            self.notify("this job wrote no profile", severity="warning")
            return
        self.dismiss(link)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)
        ended = event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)
        if ended and event.worker is self.worker and self.quitting:
            self.app.exit()

    def palette_commands(self) -> Iterator[PaletteCommand]:
        if self.running:
            yield PaletteCommand("run: cancel", "Stop the running job and the rest of the run", self.action_stop)
        else:
            yield PaletteCommand("run: show profile", "Show the selected job's profile", self.action_open)
            yield PaletteCommand("run: close", "Back to the history", self.action_close)
        yield PaletteCommand("help: keys", "List every key", self.app.action_help)


def wrapped_to(lines: list[str], width: int, rows: int) -> list[str]:
    """``lines`` wrapped at words to ``width`` cells, at most ``rows`` of them, the last ending in … when cut."""
    wrapped = [row for line in lines for row in (textwrap.wrap(line, width) or [""])]
    if len(wrapped) <= rows:
        return wrapped
    last = wrapped[rows - 1]
    # a last row that fills the width gives its last cell to the ellipsis (fit() leaves one that fits whole)
    return [*wrapped[:rows - 1], fit(last + "…", width) if cell_len(last) >= width else last + "…"]


def _clock(seconds: float) -> str:
    """Elapsed time as ``42 s``, ``3:07`` or ``1:02:07``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _message(error: PerunError) -> str:
    return error.message if not error.hint else f"{error.message} ({error.hint})"
