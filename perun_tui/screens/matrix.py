"""The job-matrix editor: cmds, args, workloads, collectors and postprocessors of .perun/local.yml.

::

    ╭ Job matrix · .perun/local.yml ─────────────────────── modified ╮
    │  Commands  Collectors  Postprocessors  Preview                  │
    │ cmds · one command per line                                     │
    │ ./build/app                                                     │
    │ args · ...                                                      │
    │ ✓ 4 jobs                                                        │  validation, live
    ╰─────────────────────────────────────────────────────────────────╯

Collectors and postprocessors are lists of units, each edited in a form
generated from the unit's parameter declarations
(:mod:`perun_tui.widgets.units`).  Every edit is validated in a worker
(:func:`perun_core.api.validate_matrix`: each key, each unit's parameter
converters, the expansion into jobs), and the Preview tab lists the jobs.  Saving writes only the keys that changed
(:func:`perun_core.api.save_matrix`), editing the YAML text in place:
comments and every other key survive.  F2 opens the file in $EDITOR instead (the app is
suspended meanwhile) and reads it back, validated, afterwards.
"""

from __future__ import annotations

import copy
import shlex
import subprocess
from collections.abc import Iterator
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import (
    Header,
    Label,
    Static,
    TabbedContent,
    TabPane,
    Tabs,
    TextArea,
)
from textual.worker import Worker

from perun_core.api import MATRIX_KEYS
from perun_core.errors import PerunError

from ..commands import PaletteCommand, ScreenCommands
from ..messages import MatrixChecked, MatrixLoaded, MatrixSaved
from ..modals.dialogs import ConfirmScreen
from ..widgets.forms import describe_params
from ..widgets.units import UnitsEditor, normalized_units
from ..widgets.columns import Column, FittedTable
from ..widgets.footer import Footer

#: the list keys edited as text, one item per line, with what the label says about them
TEXT_KEYS = (
    ("cmds", "cmds · one command per line (binaries or scripts, no arguments)"),
    ("args", "args · one per line; every command runs with each"),
    ("workloads", "workloads · one per line; every command runs on each"),
)


#: the footer shows both tab keys as one item
TAB_KEYS = Binding.Group("Tab")
#: the tabs in the order the tab bar shows them
#: the Preview's columns: the command line and the collector before the postprocessors (often none)
PREVIEW_COLUMNS = (Column("number", "#", 0, 1, 5), Column("command", "command line", 1, 12, 80),
                   Column("collector", "collector", 2, 12, 80, shrink=True),
                   Column("postprocessors", "postprocessors", 3, 8, 40, optional=True))

TABS = ("tab-commands", "tab-collectors", "tab-postprocessors", "tab-preview")


class MatrixScreen(Screen[None]):
    """Edit, validate, preview and save the job matrix."""

    TITLE = "perun · job matrix"
    HELP_NAME = "job matrix"

    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True, tooltip="Matrix: write the changed keys into local.yml",
                id="matrix.save"),
        Binding("f2", "editor", "$EDITOR", priority=True,
                tooltip="Matrix: open local.yml in $EDITOR, then read it back and validate it", id="matrix.editor"),
        Binding("escape", "close", "Close", key_display="esc", tooltip="Matrix: close (asks when unsaved)",
                id="matrix.close"),
        # F keys: every field of the editor takes letters and most ctrl keys
        Binding("f3", "switch_tab(-1)", "Previous tab", priority=True, group=TAB_KEYS,
                tooltip="Matrix: the tab to the left (commands, collectors, postprocessors, preview)",
                id="matrix.previous_tab"),
        Binding("f4", "switch_tab(1)", "Next tab", priority=True, group=TAB_KEYS,
                tooltip="Matrix: the tab to the right (commands, collectors, postprocessors, preview)",
                id="matrix.next_tab"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.original: dict[str, Any] = {}
        self.loaded = False
        self.modified = False
        self.valid = True
        self._generation = 0
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="matrix-pane", classes="pane"):
            # hidden (so nothing typed goes astray) until local.yml and the units are read
            with TabbedContent(id="matrix-tabs", initial="tab-commands", classes="loading"):
                with TabPane("Commands", id="tab-commands"):
                    for key, label in TEXT_KEYS:
                        yield Label(label, classes="matrix-label")
                        area = TextArea("", id=f"matrix-{key}", classes="matrix-text", soft_wrap=False,
                                        tab_behavior="focus")
                        area.cursor_blink = False
                        yield area
                with TabPane("Collectors", id="tab-collectors"):
                    yield UnitsEditor("collector", id="matrix-collectors")
                with TabPane("Postprocessors", id="tab-postprocessors"):
                    yield UnitsEditor("postprocessor", id="matrix-postprocessors")
                with TabPane("Preview", id="tab-preview"):
                    yield FittedTable(PREVIEW_COLUMNS, id="matrix-preview")
            yield Static("reading local.yml…", id="matrix-status")
        yield Footer()

    def on_mount(self) -> None:
        pane = self.query_one("#matrix-pane")
        core = self.app.core
        try:
            where = core.local_config_path.relative_to(core.root)
        except ValueError:
            where = core.local_config_path
        pane.border_title = f"Job matrix · {where}"
        self.load()

    # -- reading -------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="matrix-load", description="reading local.yml")
    def load(self, after_editor: bool = False) -> None:
        core = self.app.core
        problem = ""
        try:
            values = core.matrix()
            if after_editor:
                core.reload_config()
                try:
                    core.check_local_config()
                except PerunError as error:
                    problem = error.message
        except PerunError as error:
            self.post_message(MatrixLoaded({}, [], [], error.message))
            return
        self.post_message(MatrixLoaded(values, core.units("collector"), core.units("postprocessor"), problem))

    async def on_matrix_loaded(self, message: MatrixLoaded) -> None:
        if message.problem:
            self.app.notify(message.problem, title="local.yml", severity="error", timeout=10, markup=False)
        values = message.values
        for key, _label in TEXT_KEYS:
            area = self.query_one(f"#matrix-{key}", TextArea)
            items = values.get(key)
            with area.prevent(TextArea.Changed):
                area.load_text("\n".join(str(i) for i in items) if isinstance(items, list) else "")
        await self.query_one("#matrix-collectors", UnitsEditor).set_entries(
            message.collectors, normalized_units(values.get("collectors")))
        await self.query_one("#matrix-postprocessors", UnitsEditor).set_entries(
            message.postprocessors, normalized_units(values.get("postprocessors")))
        self.original = self.values()
        self.loaded = True
        self._set_modified(False)
        tabs = self.query_one(TabbedContent)
        if tabs.has_class("loading"):
            tabs.remove_class("loading")
            # the commands take what is typed first (on the tab bar a letter was lost, q quit the app)
            self.query_one("#matrix-cmds", TextArea).focus()
        self.check_now()

    def values(self) -> dict[str, Any]:
        """The matrix as the forms hold it, shaped like local.yml."""
        values: dict[str, Any] = {}
        for key, _label in TEXT_KEYS:
            text = self.query_one(f"#matrix-{key}", TextArea).text
            values[key] = [line.strip() for line in text.splitlines() if line.strip()]
        values["collectors"] = self.query_one("#matrix-collectors", UnitsEditor).values()
        values["postprocessors"] = self.query_one("#matrix-postprocessors", UnitsEditor).values()
        return values

    def changed_keys(self) -> tuple[str, ...]:
        values = self.values()
        return tuple(key for key in MATRIX_KEYS if values.get(key) != self.original.get(key))

    # -- validation ------------------------------------------------------------------------
    def _edited(self) -> None:
        if not self.loaded:
            return
        self._set_modified(bool(self.changed_keys()))
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(0.25, self.check_now)

    @on(TextArea.Changed)
    def _text_changed(self, event: TextArea.Changed) -> None:
        self._edited()

    @on(UnitsEditor.Changed)
    def _units_changed(self, event: UnitsEditor.Changed) -> None:
        self._edited()

    def check_now(self) -> None:
        self._generation += 1
        form_problems = [*self.query_one("#matrix-collectors", UnitsEditor).problems(),
                         *self.query_one("#matrix-postprocessors", UnitsEditor).problems()]
        if form_problems:
            self.post_message(MatrixChecked(self._generation, [], form_problems[0]))
            return
        self.check(self._generation, self.values())

    @work(thread=True, exclusive=True, exit_on_error=False, group="matrix-check", description="validating the matrix")
    def check(self, generation: int, values: dict[str, Any]) -> None:
        try:
            jobs, warning = self.app.core.validate_matrix(values)
        except PerunError as error:
            self.post_message(MatrixChecked(generation, [], error.message))
            return
        self.post_message(MatrixChecked(generation, jobs, warning=warning))

    def on_matrix_checked(self, message: MatrixChecked) -> None:
        if message.generation != self._generation:
            return
        self.valid = not message.error
        status = self.query_one("#matrix-status", Static)
        preview = self.query_one("#matrix-preview", FittedTable)
        if message.error:
            preview.set_rows([])
            status.update(Text(f"✗ {message.error}", style="bold red", no_wrap=True, overflow="ellipsis"))
            return
        rows = []
        for number, job in enumerate(message.jobs, 1):
            collector = job.collector.name + (f" ({describe_params(dict(job.collector.params))})"
                                              if job.collector.params else "")
            rows.append((str(number), [Text(str(number), justify="right"), Text(" ".join(job.command_line.split())),
                                       Text(collector), Text(" | ".join(p.name for p in job.postprocessors) or "-")]))
        # the columns take the width there is: capped at 40 and 30 cells, the collector's parameters were cut
        # at 120 columns beside an empty postprocessors column, and at 80 the table scrolled sideways
        preview.set_rows(rows)
        if message.warning:
            status.update(Text(f"! {message.warning}", style="bold yellow", no_wrap=True, overflow="ellipsis"))
        else:
            count = len(message.jobs)
            hint = " · ctrl+s saves" if self.modified else ""
            status.update(Text(f"✓ valid: {count} job{'s' * (count != 1)} per commit (see Preview){hint}",
                               no_wrap=True, overflow="ellipsis"))

    def _set_modified(self, modified: bool) -> None:
        self.modified = modified
        self.query_one("#matrix-pane").border_subtitle = "modified" if modified else "saved"

    # -- saving ---------------------------------------------------------------------------
    def action_save(self) -> None:
        if not self.loaded:
            return
        keys = self.changed_keys()
        if not keys:
            self.app.notify("nothing to save: the matrix is as in local.yml")
            return
        self.check_now()
        problems = [*self.query_one("#matrix-collectors", UnitsEditor).problems(),
                    *self.query_one("#matrix-postprocessors", UnitsEditor).problems()]
        if problems:
            self.app.notify(f"not saved: {problems[0]}", title="matrix", severity="error", markup=False)
            return
        self.save(self.values(), keys)

    @work(thread=True, exclusive=True, exit_on_error=False, group="matrix-save", description="saving local.yml")
    def save(self, values: dict[str, Any], keys: tuple[str, ...]) -> None:
        core = self.app.core
        try:
            core.validate_matrix(values)
            core.save_matrix(values, keys)
        except PerunError as error:
            self.post_message(MatrixSaved(values, error.message))
            return
        self.post_message(MatrixSaved(values))

    def on_matrix_saved(self, message: MatrixSaved) -> None:
        if message.error:
            self.app.notify(f"not saved: {message.error}", title="matrix", severity="error", timeout=10,
                            markup=False)
            return
        self.original = copy.deepcopy(message.values)
        self._set_modified(bool(self.changed_keys()))
        self.app.notify("saved the job matrix to local.yml", title="matrix")
        self.check_now()

    # -- $EDITOR --------------------------------------------------------------------------
    def action_editor(self) -> None:
        if not self.modified:
            self._open_editor()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._open_editor()

        self.app.push_screen(ConfirmScreen("Open in $EDITOR", "The form has unsaved changes. Drop them and open "
                                           "local.yml in your editor?", "Drop and edit"), answered)

    def _open_editor(self) -> None:
        core = self.app.core
        command = [*shlex.split(core.editor()), str(core.local_config_path)]
        try:
            with self.app.suspend():
                subprocess.run(command, check=False)
        except SuspendNotSupported:
            self.app.notify("this terminal cannot hand over to an editor; edit local.yml by hand and reopen",
                            severity="warning")
            return
        except OSError as error:
            self.app.notify(f"cannot start {command[0]}: {error.strerror or error}", title="editor",
                            severity="error", markup=False)
            return
        self.loaded = False
        self.load(after_editor=True)

    # -- closing ---------------------------------------------------------------------------
    def action_close(self) -> None:
        if not self.modified:
            self.dismiss(None)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(None)

        self.app.push_screen(ConfirmScreen("Unsaved changes", "The job matrix has unsaved changes. Close and "
                                           "drop them?", "Drop"), answered)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)

    #: the field each tab starts at
    FIRST_FIELD = {"tab-commands": "#matrix-cmds", "tab-collectors": "#collector-entries",
                   "tab-postprocessors": "#postprocessor-entries", "tab-preview": "#matrix-preview"}

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self.query_one(self.FIRST_FIELD[tab]).focus()

    def action_switch_tab(self, step: int) -> None:
        """The tab ``step`` places to the right (left when negative), wrapping around."""
        active = self.query_one(TabbedContent).active or TABS[0]
        self.action_tab(TABS[(TABS.index(active) + step) % len(TABS)])

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        # a field of the tab that was left keeps the focus (and the keys typed) unless moved
        focused = self.app.focused
        pane = event.pane
        if focused is not None and focused not in pane.query("*") and focused.id != "matrix-tabs":
            if not isinstance(focused, Tabs):
                self.query_one(self.FIRST_FIELD[pane.id or "tab-commands"]).focus()

    def palette_commands(self) -> Iterator[PaletteCommand]:
        yield PaletteCommand("matrix: save", "Write the changed keys into local.yml", self.action_save)
        yield PaletteCommand("matrix: open in $EDITOR", "Edit local.yml in your editor, then validate it",
                             self.action_editor)
        for tab, name in (("tab-commands", "commands"), ("tab-collectors", "collectors"),
                          ("tab-postprocessors", "postprocessors"), ("tab-preview", "preview")):
            yield PaletteCommand(f"matrix: show {name}", f"Switch to the {name} tab",
                                 lambda tab=tab: self.action_tab(tab))
        editor = self.query_one("#matrix-collectors", UnitsEditor)
        yield PaletteCommand("matrix: add collector", "Add a collector to the matrix",
                             lambda: (self.action_tab("tab-collectors"), self.run_worker(editor.add_entry())))
        post = self.query_one("#matrix-postprocessors", UnitsEditor)
        yield PaletteCommand("matrix: add postprocessor", "Add a postprocessor to the matrix",
                             lambda: (self.action_tab("tab-postprocessors"), self.run_worker(post.add_entry())))
        yield PaletteCommand("matrix: close", "Back to the history", self.action_close)
        yield PaletteCommand("help: keys", "List every key", self.app.action_help)
