"""The bisect screen: the first commit between two where a job's profile degrades, found live.

::

    ╭ Bisect · 1a2b3c4 (good) .. 9f8e7d6 (bad) ─────────────────────╮
    │ testing 5c6d7e8: collecting in a temporary worktree · 3 left   │  the current step
    │ 9f8e7d6 is bad (collected)                                     │  one line per tested commit
    │ 5c6d7e8 is good (stored profiles)                              │
    │ first degraded commit: 7a8b9c0 ...                             │  the verdict
    ╰────────────────────────────────────────────────────────────────╯

The search runs :func:`perun_core.api.bisect` in a thread worker; its events
come back as messages.  Escape cancels (the runner kills the profiled
program and removes its worktree), or closes the screen once it ended.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Static
from textual.worker import Worker

from perun_core import api
from perun_core.errors import Interrupted, PerunError, UsageError

from ..commands import PaletteCommand, ScreenCommands
from ..widgets.footer import Footer
from ..widgets.wrappedlog import WrappedLog


@dataclass
class BisectLine(Message):
    """A line for the log (from the worker thread)."""

    text: str
    current: str | None = None


@dataclass
class BisectDone(Message):
    """The bisect ended: ``result`` (api.BisectResult) or ``error``."""

    result: Any = None
    error: str | None = None


class BisectScreen(Screen[None]):
    """Bisects between two commits once mounted (their order is found out: the older is GOOD)."""

    TITLE = "perun · bisect"
    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("escape", "stop", "Cancel", key_display="esc",
                tooltip="Cancel the bisect (the profiled program is killed)", id="bisect.stop"),
        Binding("escape", "close", "Close", key_display="esc", tooltip="Bisect: back to the history",
                id="bisect.close"),
    ]

    def __init__(self, first: str, second: str, *, register: bool = False) -> None:
        super().__init__()
        self.pair = (first, second)
        self.register = register
        self.cancel = threading.Event()
        self.running = False
        self.result: Any = None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="bisect-pane", classes="pane"):
            yield Static("starting…", id="bisect-current")
            yield WrappedLog(id="bisect-log", auto_scroll=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#bisect-pane").border_title = f"Bisect · {self.pair[0][:7]} .. {self.pair[1][:7]}"
        self.running = True
        self.search()

    def on_unmount(self) -> None:
        self.cancel.set()

    def palette_commands(self) -> Iterator[PaletteCommand]:
        yield PaletteCommand("bisect: cancel or close", "Cancel the running bisect, or close the screen",
                             self.action_stop)

    @work(thread=True, exclusive=True, exit_on_error=False, group="bisect", description="bisecting")
    def search(self) -> None:
        repo = self.app.core.repo

        def on_event(event: Any) -> None:
            text = _describe(event)
            if text is not None:
                self.post_message(BisectLine(*text))

        good, bad = self.pair
        try:
            try:
                result = api.bisect(good, bad, register=self.register, on_event=on_event, cancel=self.cancel,
                                    repo=repo)
            except UsageError as error:
                if "not an ancestor" not in error.message:
                    raise
                result = api.bisect(bad, good, register=self.register, on_event=on_event, cancel=self.cancel,
                                    repo=repo)
        except Interrupted:
            self.post_message(BisectDone(error="cancelled"))
            return
        except PerunError as error:
            self.post_message(BisectDone(error=error.message))
            return
        self.post_message(BisectDone(result=result))

    def on_bisect_line(self, message: BisectLine) -> None:
        if message.text:
            self.query_one(WrappedLog).write_line(message.text)
        if message.current is not None:
            self.query_one("#bisect-current", Static).update(message.current)

    def on_bisect_done(self, message: BisectDone) -> None:
        self.running = False
        self.refresh_bindings()
        self.result, self.error = message.result, message.error
        log = self.query_one(WrappedLog)
        current = self.query_one("#bisect-current", Static)
        if message.error is not None:
            current.update(f"stopped: {message.error}")
            log.write_line(f"error: {message.error}")
            return
        result = message.result
        if result.culprit is None:
            verdict = f"{result.bad[:7]} is not degraded against {result.good[:7]}"
        else:
            verdict = f"first degraded commit: {result.culprit[:7]}"
        current.update(f"{verdict} · {result.collections} collection{'s' * (result.collections != 1)} · esc closes")
        log.write_line(verdict)
        for label, finding in api.labelled_findings(result):
            log.write_line(f"  {label}:")
            log.write_line(_finding_line(finding))
        for commit, reason in result.skipped:
            log.write_line(f"skipped {commit[:7]}: {reason}")
        if result.candidates:
            log.write_line("or one of the skipped commits before it: " + ", ".join(c[:7] for c in result.candidates))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # one esc, named for what it does now: the footer said "Cancel / close" after the bisect had ended
        if action == "stop":
            return self.running
        if action == "close":
            return not self.running
        return True

    def action_stop(self) -> None:
        if self.running:
            self.cancel.set()
            self.query_one("#bisect-current", Static).update("cancelling…")
        else:
            self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


def _describe(event: Any) -> tuple[str, str | None] | None:
    """(log line, status line) for an event of the bisect; None for the ones not shown."""
    if isinstance(event, api.BisectStarted):
        return (f"bisecting {event.commits} commits with {event.jobs} job{'s' * (event.jobs != 1)}",
                f"testing {event.bad[:7]} (bad?)")
    if isinstance(event, api.BisectCollecting):
        return "", f"testing {event.commit[:7]}: collecting in a temporary worktree"
    if isinstance(event, api.BisectTested):
        step = event.step
        how = step.reason if step.reason else ("stored profiles" if step.reused else "collected")
        again = "re-check: " if step.recheck else ""  # the boundary measured again, as the command line says it
        return f"{again}{step.commit[:7]} is {step.verdict} ({how})", f"{event.remaining} commit{'s' * (event.remaining != 1)} left to test"
    return None


def _finding_line(finding: Any) -> str:
    """``  Degradation at ./app [real]: 151.7 ms -> 537.0 ms (+254.1 %)``: amounts with their unit, as the check writes them.

    The location comes from a profile: its control characters are escaped.
    """
    change = ""
    if isinstance(finding.delta_rel, (int, float)) and not isinstance(finding.delta_rel, bool):
        change = f" ({api.format_change(finding.delta_rel, finding.from_)})"
    return api.escape_controls(f"  {finding.result.value} at {finding.location}: "
                               f"{api.format_amount(finding.from_, finding.unit)} -> "
                               f"{api.format_amount(finding.to, finding.unit)}{change}")
