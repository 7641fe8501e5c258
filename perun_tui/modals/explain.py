"""The explanation of one finding: which functions made its job slower or faster (``x`` on a finding).

A finding that a check explained before (its explanation is stored with
the check) is shown at once; otherwise call-level profiles are collected
in a worker through ``perun_core.api.explain``, with its progress shown
while it runs: the collector, its expected run time and the seconds
elapsed, the notes on how it was chosen, the round.  Below the ranked functions comes the difference flame
graph of the two call-level profiles (the diff screen's renderer, where
both profiles carry call stacks).  ``enter`` on a function shows its source
as it was at the explained (target) commit, read from git, at its line: in
the user's pager or editor on a read-only copy, or in a dialog when neither
is set or starts (:mod:`.source`); a notification says which.  Findings of
profile files (no commit) show the working tree's file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker

from perun_core import api
from perun_core.errors import Interrupted, PerunError

from ..formatting import ansi_picture
from ..pictures import plain_pictures
from ..widgets.moves import LIST_MOVES
from .source import SourceScreen, read_only_copy, viewers
from .keys import HELP_IN_DIALOG

NO_FLAME = "no call stacks in both call-level profiles: no difference flame graph"
#: the rows the difference flame graph is drawn in at most (its pane scrolls): deeper than any real call stack
FLAME_LEVELS = 200


#: the dialog's keys in its bottom border, and the form that fits a narrow dialog
KEYS_HINT = "enter opens a function's source · pgup/pgdn scroll · esc to close"
SHORT_KEYS_HINT = "⏎ source · pgup/dn · esc"
#: ... while no function is listed (collecting, or nothing to explain): enter has nothing to open
NO_SOURCE_HINT = "pgup/pgdn scroll · esc to close"


def hanging(text: str, indent: int, width: int | None, first: int | None = None) -> str:
    """``text`` after ``indent`` spaces (``first`` on its first line, when given), wrapped to ``width`` cells
    with every continuation line indented alike (wrapped by the widget instead, a long note's second line
    started at column 0, under the headline rather than under its own start), an amount kept with its unit."""
    lead = " " * (indent if first is None else first)
    if width is None or width <= indent + 12 or len(lead) + len(text) <= width:
        return lead + text
    # the product's one wrap: an amount stays with its unit ('100 %' was broken at 40 columns)
    return "\n".join(api.wrap_text(text, width, indent=indent, first=len(lead)))


def explanation_text(explanation: Any, width: int | None = None) -> Text:
    """The headline and the notes (profiles reused, files written) of an explanation, wrapped to ``width``."""
    text = Text()
    text.append(hanging(api.escape_controls(explanation.headline()), 5, width, first=0),
                style="bold" if explanation.explained else "yellow")
    lines = [*explanation.notes, *(f"reused {item}" for item in explanation.reused),
             *(f"wrote {path}" for path in explanation.written)]
    for line in lines:
        text.append("\n" + hanging(api.escape_controls(line), 5, width), style="dim")
    return text


def function_prompt(rank: int, function: Any, unit: str, width: int | None = None) -> Text:
    """One ranked function: ``  1. name (file:line): ...``, and below it the library functions whose cost it
    carries (``through memcpy: ...``), as the command line's tree shows them; wrapped to ``width``."""
    text = Text()
    text.append(f"{rank:>3}. ", style="dim")
    first = hanging(api.escape_controls(function.text(unit)), 5, width, first=5)[5:]
    text.append(first, style="bold red" if rank == 1 else "")
    for below in function.through:
        text.append("\n" + hanging(api.escape_controls(below.text(unit)), 7, width), style="dim")
    return text


class FunctionList(OptionList):
    """The ranked functions, wrapped again by their dialog whenever the list's width changes: shown for the
    first time with the explanation, it had no width yet, and the options broke their lines at column 0."""

    BINDINGS = LIST_MOVES

    def on_resize(self) -> None:
        screen = self.screen
        if isinstance(screen, ExplainScreen):
            screen.functions_resized()


class TextBody(VerticalScroll):
    """The headline and notes, scrolled when taller than their share of the dialog: cut there by its height, a
    note ended mid-phrase ('... .perf (object') with nothing saying more was below.  It takes the focus (tab, then
    the arrow keys) only when it has more to show and the dialog does not scroll as a whole (under 20 rows)."""

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0 and not self.screen.has_class("-short")


class ExplainScreen(ModalScreen[None]):
    """Explains one finding (a report of its pair with only that finding) in a worker."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="explain.close"),
        HELP_IN_DIALOG,
        # priority: the function list's own page keys would move its highlight, and under 20 rows the text
        # above it could otherwise be scrolled back to only with a mouse
        Binding("pageup", "page(-1)", "Scroll up", priority=True, id="explain.page_up"),
        Binding("pagedown", "page(1)", "Scroll down", priority=True, id="explain.page_down"),
    ]

    def __init__(self, report: Any, title: str) -> None:
        super().__init__()
        self.report = report
        self.title_text = title
        self.cancel = threading.Event()
        self.lines: list[str] = []
        #: the explanation shown (None until it is known)
        self.explanation: Any = None
        #: the collection under way: its ExplainCollecting event, when it started (``clock``) and its line's index
        self.collecting: tuple[Any, float, int] | None = None
        self.clock = time.monotonic
        self.ticker: Timer | None = None
        #: the call-level comparison whose flame graph is shown, and the width it was drawn for
        self.comparison: Any = None
        self.flame_width = 0
        #: the width the ranked functions were wrapped to (0: not yet laid out)
        self.functions_width = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="explain-dialog", classes="dialog"):
            with TextBody(id="explain-text-body"):
                yield Static("finding the call-level profiles…", id="explain-text")
            yield FunctionList(id="explain-functions")
            with VerticalScroll(id="explain-flame-body"):
                yield Static("", id="explain-flame")
            # below the scrolled graph, not at its end: what + - = say stays in view
            yield Static("", id="explain-flame-legend")

    def on_mount(self) -> None:
        dialog = self.query_one("#explain-dialog")
        dialog.border_title = f"Why? {escape(api.escape_controls(self.title_text))}"
        self.call_after_refresh(self._show_keys)
        self.query_one("#explain-functions", OptionList).display = False
        self.call_after_refresh(self._start)

    def _start(self) -> None:
        """Explain, the flame graph drawn as wide as its pane is once laid out (less a cell for its scroll bar).

        A width guessed from the terminal's was wider than the dialog at 40 and at 120 columns: every
        frame's last cell wrapped onto a line of its own.
        """
        self.explain(*self._flame_size())

    def _flame_size(self) -> tuple[int, int]:
        """The width of the graph's pane and the rows drawn: every level, the pane scrolls (pgup/pgdn); cut to a
        third of the terminal, 16 deeper levels were left out with a note to raise the command line's --height."""
        body = self.query_one("#explain-flame-body")
        width = body.size.width - 1 if body.size.width > 1 else max(self.app.size.width - 12, 20)
        return width, FLAME_LEVELS

    def on_resize(self) -> None:
        self.call_after_refresh(self._relayout)

    def _relayout(self) -> None:
        """After a resize: the keys in the border, the text and functions wrapped anew, the flame graph redrawn."""
        self._show_keys()
        if self.explanation is None:
            return
        self._show_text(self.explanation)
        width, height = self._flame_size()
        if self.comparison is not None and width != self.flame_width:
            self.flame_width = width
            self.redraw_flame(self.comparison, width, height)

    def _show_text(self, explanation: Any) -> None:
        """The headline, notes and ranked functions, wrapped to the widths they have now (the functions again when
        their list gets its width: see :class:`FunctionList`)."""
        self.query_one("#explain-text", Static).update(
            explanation_text(explanation, self.query_one("#explain-text").content_region.width or None))
        functions = self.query_one("#explain-functions", OptionList)
        highlighted = functions.highlighted
        width = functions.scrollable_content_region.width - 2
        self.functions_width = max(width, 0)
        functions.clear_options()
        functions.add_options([Option(function_prompt(rank, f, explanation.unit, width if width > 0 else None),
                                      id=str(rank - 1)) for rank, f in enumerate(explanation.functions, 1)])
        if explanation.functions:
            functions.highlighted = highlighted if highlighted is not None else 0

    def functions_resized(self) -> None:
        """The list of functions got a new width: wrap them to it."""
        width = self.query_one("#explain-functions", OptionList).scrollable_content_region.width - 2
        if self.explanation is not None and width > 0 and width != self.functions_width:
            self._show_text(self.explanation)

    def action_page(self, step: int) -> None:
        """A page up or down: the whole dialog where it scrolls as one (under 20 rows), else the flame graph."""
        part = self.query_one("#explain-dialog") if self.has_class("-short") else self.query_one("#explain-flame-body")
        if step < 0:
            part.scroll_page_up()
        else:
            part.scroll_page_down()

    @work(thread=True, exclusive=True, exit_on_error=False, group="flame", description="drawing a flame graph")
    def redraw_flame(self, comparison: Any, width: int, height: int) -> None:
        flame = api.render_diff(comparison, "flamegraph", width=width, height=height,
                                color=not plain_pictures(self.app), legend=False, front="tui-dialog")
        self.app.call_from_thread(self.query_one("#explain-flame", Static).update, ansi_picture(flame))

    def _show_keys(self) -> None:
        """The keys in the border: in full, or short where the full hint would be cut (``esc`` with it at 40 columns)."""
        dialog = self.query_one("#explain-dialog")
        if self.explanation is None or not self.explanation.functions:
            dialog.border_subtitle = NO_SOURCE_HINT
            return
        room = dialog.size.width - 4  # the corners and a space each side
        dialog.border_subtitle = KEYS_HINT if len(KEYS_HINT) <= room or room <= 0 else SHORT_KEYS_HINT

    def _progress(self, event: Any) -> None:
        name = type(event).__name__
        if name == "ExplainCollecting":
            self.lines.append(f"collecting {event.collector} profiles of {event.command} at "
                              f"{', '.join(event.commits)}…")
            self.collecting = (event, self.clock(), len(self.lines))
            self.lines.append(self._cost_line())
            self.lines.extend(f"  {note}" for note in event.notes)
            if self.ticker is None:
                self.ticker = self.set_interval(1.0, self._tick)
        elif name == "ExplainRound":
            line = f"  round {event.round} of {event.rounds}: {event.commit}"
            if self.lines and self.lines[-1].startswith("  round "):
                self.lines[-1] = line
            else:
                self.lines.append(line)
        else:
            return
        self._show_progress()

    def _show_progress(self) -> None:
        """The lines of the collection under way, each one wrapped under its own start (a long note went on at
        column 0, under the line that says what runs)."""
        text = self.query_one("#explain-text", Static)
        width = text.content_region.width or None
        text.update("\n".join(hanging(line.lstrip(), len(line) - len(line.lstrip()) + 2, width,
                                      first=len(line) - len(line.lstrip())) for line in self.lines))

    def _cost_line(self) -> str:
        """``  callgrind, about 40 s expected, 12 s elapsed`` of the collection under way."""
        assert self.collecting is not None
        event, started, _ = self.collecting
        return f"  {event.collector}, {event.cost(self.clock() - started)}"

    def _tick(self) -> None:
        """Count the seconds of the collection under way (the line below the one that says what runs)."""
        if self.collecting is None or self.explanation is not None:
            return
        self.lines[self.collecting[2]] = self._cost_line()
        self._show_progress()

    @work(thread=True, exclusive=True, exit_on_error=False, group="explain", description="explaining a finding")
    def explain(self, width: int, height: int) -> None:
        root = self.app.core.root
        known = [api.explanation_of(finding) for _v, _p, finding in self.report.findings()]
        shown = next((e for e in known if e is not None), None)
        try:
            if shown is None:  # not explained before: collect and compare now
                explained = api.explain(self.report, on_event=lambda e: self.app.call_from_thread(self._progress, e),
                                        cancel=self.cancel, cwd=root)
                found = [api.explanation_of(finding) for _v, _p, finding in explained.findings()]
                shown = next((e for e in found if e is not None), None)
            flame = None
            if shown is not None and shown.explained:
                comparison = api.explanation_comparison(shown, cwd=root)
                if comparison is not None and comparison.has_stacks:
                    flame = api.render_diff(comparison, "flamegraph", width=width, height=height,
                                            color=not plain_pictures(self.app), legend=False, front="tui-dialog")
                    self.comparison, self.flame_width = comparison, width
        except Interrupted:
            return
        except PerunError as error:
            self.app.call_from_thread(self.app.report_error, error)
            self.app.call_from_thread(self.dismiss, None)
            return
        self.app.call_from_thread(self._show, shown, flame)

    def _show(self, explanation: Any, flame: str | None) -> None:
        self.explanation = explanation
        self._show_keys()
        if self.ticker is not None:
            self.ticker.stop()
            self.ticker = None
        if explanation is None:
            why = api.why_not_explained(self.report) or "only certain time degradations and optimizations can be explained"
            self.query_one("#explain-text", Static).update(Text(api.escape_controls(why), style="yellow"))
            return
        functions = self.query_one("#explain-functions", OptionList)
        functions.display = bool(explanation.functions)
        self._show_text(explanation)  # the functions once more when their list, hidden until now, is laid out
        if explanation.functions:
            functions.highlighted = 0
            functions.focus()
        if explanation.explained:
            self.query_one("#explain-flame", Static).update(ansi_picture(flame) if flame is not None
                                                            else Text(NO_FLAME, style="dim"))
            if flame is not None and self.comparison is not None:
                self.query_one("#explain-flame-legend", Static).update(
                    Text(api.diff_flame_legend(self.comparison), style="dim"))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.explanation is None or event.option.id is None:
            return
        self.open_source(self.explanation.functions[int(event.option.id)])

    @property
    def commit(self) -> str | None:
        """The explained commit: the target of the finding (None for profiles given as files)."""
        return next((version.minor for version, _pair, _finding in self.report.findings() if version.minor), None)

    def source_path(self, function: Any) -> Path | None:
        """The function's source file when it is a file of the repository (it need not exist now), else None."""
        if not function.file:
            return None
        root = Path(self.app.core.root).resolve()
        path = Path(function.file)
        path = Path(os.path.normpath(path if path.is_absolute() else root / path))
        return path if path.is_relative_to(root) else None

    def open_source(self, function: Any) -> None:
        """Show the function's source as it was at the explained commit (read in a worker, then shown here)."""
        path = self.source_path(function)
        if path is None:
            where = function.where or "no source file is known"
            self.app.notify(f"{function.function}: {where} is not a file of this repository", title="source",
                            severity="warning", markup=False)
            return
        self.read_source(function, path, self.commit)

    @work(thread=True, exclusive=True, exit_on_error=False, group="source", description="reading a source file")
    def read_source(self, function: Any, path: Path, commit: str | None) -> None:
        root = Path(self.app.core.root).resolve()
        try:
            if commit is None:  # profiles of files: no commit to read from
                shown = (path.read_text(encoding="utf-8", errors="replace"), path.relative_to(root).as_posix())
            else:
                source = api.source_at(commit, path, cwd=root)
                shown = (source.text, source.path)
        except PerunError as error:
            self.app.call_from_thread(self.app.notify, f"{function.function}: {error.message}", title="source",
                                      severity="warning", markup=False)
            return
        except OSError as error:
            self.app.call_from_thread(self.app.notify, f"{function.function}: cannot read {path}: "
                                      f"{error.strerror or error}", title="source", severity="warning", markup=False)
            return
        self.app.call_from_thread(self.show_source, function, shown[0], shown[1], commit)

    def show_source(self, function: Any, text: str, path: str, commit: str | None) -> None:
        """In $PAGER, else the configured editor (a read-only copy), else a dialog; a notification (or the dialog) says which."""
        where = f"{path} at {commit[:7]}" if commit else f"{path} (working tree)"
        editor = api.editor_command(scope="local", cwd=self.app.core.root, fallback=False)
        copy = read_only_copy(text, path, commit)
        failed: list[str] = []
        try:
            for name, command in viewers(os.environ.get("PAGER", ""), editor, function.line):
                try:
                    with self.app.suspend():
                        status = subprocess.run([*command, str(copy)], check=False).returncode
                except SuspendNotSupported:
                    failed.append("this terminal cannot hand over to another program")
                    break
                except OSError as error:
                    failed.append(f"cannot start {name}: {error.strerror or error}")
                    continue
                if status in (126, 127):  # a shell's "cannot run" / "not found" (a wrapper script's)
                    failed.append(f"{name} could not run (exit status {status})")
                    continue
                self.app.notify(f"{where} shown in {name} (a read-only copy)", title="source", markup=False)
                return
        finally:
            shutil.rmtree(copy.parent, ignore_errors=True)
        why = "; ".join(failed) if failed else "neither $PAGER nor an editor is set"
        # why it shows here is a line of the dialog: a toast would cover the dialog's border and title
        self.app.push_screen(SourceScreen(text, f"{where} · {function.function}", function.line,
                                          note=f"shown here: {why}"))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)

    def action_close(self) -> None:
        self.cancel.set()
        self.dismiss(None)
