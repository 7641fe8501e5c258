"""The explanation of one finding: which functions made its job slower or faster (``x`` on a finding).

Call-level profiles are collected in a worker through ``perun_core.api.explain``;
its progress events are shown while it runs.
"""

from __future__ import annotations

import threading
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker

from perun_core.errors import Interrupted, PerunError


def explanation_text(explanation: Any) -> Text:
    """The headline and the ranked functions of an explanation."""
    text = Text()
    text.append(explanation.headline() + "\n", style="bold" if explanation.explained else "yellow")
    for rank, function in enumerate(explanation.functions, 1):
        text.append(f"{rank:>3}. ", style="dim")
        text.append(function.text(explanation.unit) + "\n", style="bold red" if rank == 1 else "")
    for item in explanation.reused:
        text.append(f"     reused {item}\n", style="dim")
    for path in explanation.written:
        text.append(f"     wrote {path}\n", style="dim")
    return text


class ExplainScreen(ModalScreen[None]):
    """Explains one finding (a report of its pair with only that finding) in a worker."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="explain.close"),
    ]

    def __init__(self, report: Any, title: str) -> None:
        super().__init__()
        self.report = report
        self.title_text = title
        self.cancel = threading.Event()
        self.lines: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="explain-dialog", classes="dialog"):
            with VerticalScroll(id="explain-body"):
                yield Static("finding the call-level profiles…", id="explain-text")

    def on_mount(self) -> None:
        dialog = self.query_one("#explain-dialog")
        dialog.border_title = f"Why? {self.title_text}"
        dialog.border_subtitle = "esc to close"
        self.explain()

    def _progress(self, event: Any) -> None:
        name = type(event).__name__
        if name == "ExplainCollecting":
            self.lines.append(f"collecting {event.collector} profiles of {event.command} at "
                              f"{', '.join(event.commits)}…")
            self.query_one("#explain-text", Static).update("\n".join(self.lines))

    @work(thread=True, exclusive=True, exit_on_error=False, group="explain", description="explaining a finding")
    def explain(self) -> None:
        from perun_core import api

        try:
            explained = api.explain(self.report, on_event=lambda e: self.app.call_from_thread(self._progress, e),
                                    cancel=self.cancel, cwd=self.app.core.root)
        except Interrupted:
            return
        except PerunError as error:
            self.app.call_from_thread(self.app.report_error, error)
            self.app.call_from_thread(self.dismiss, None)
            return
        found = [api.explanation_of(finding) for _v, _p, finding in explained.findings()]
        shown = next((e for e in found if e is not None), None)
        text = explanation_text(shown) if shown is not None else Text(
            "only certain time degradations and optimizations can be explained")
        self.app.call_from_thread(self.query_one("#explain-text", Static).update, text)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)

    def action_close(self) -> None:
        self.cancel.set()
        self.dismiss(None)
