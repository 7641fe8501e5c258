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
generated from the unit's parameter declarations (:mod:`.forms`).  Every
edit is validated in a worker (``config.validate`` of each key, each unit's
parameter converters, the expansion into jobs), and the Preview tab lists
the jobs.  Saving writes only the keys that changed, through
``Config.set``, which edits the YAML text in place: comments and every
other key survive.  F2 opens the file in $EDITOR instead (the app is
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
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Label,
    OptionList,
    Select,
    Static,
    TabbedContent,
    TabPane,
    Tabs,
    TextArea,
)
from textual.worker import Worker

from perun_core.errors import PerunError

from ..commands import PaletteCommand, ScreenCommands
from ..core import MATRIX_KEYS
from ..formatting import fit
from ..messages import MatrixChecked, MatrixLoaded, MatrixSaved
from .dialogs import ConfirmScreen
from .forms import ParamForm, describe_params

#: the list keys edited as text, one item per line, with what the label says about them
TEXT_KEYS = (
    ("cmds", "cmds · one command per line (binaries or scripts, no arguments)"),
    ("args", "args · one per line; every command runs with each"),
    ("workloads", "workloads · one per line; every command runs on each"),
)


def normalized_units(entries: Any) -> list[dict[str, Any]]:
    """collectors/postprocessors entries as ``{name, params}`` dicts (params as one mapping)."""
    out = []
    for entry in entries or []:
        if isinstance(entry, str):
            out.append({"name": entry, "params": {}})
        elif isinstance(entry, dict):
            params = entry.get("params")
            if isinstance(params, list):
                merged: dict[str, Any] = {}
                for item in params:
                    if isinstance(item, dict):
                        merged.update(item)
                params = merged
            out.append({"name": str(entry.get("name", "")), "params": dict(params or {})})
    return out


def unit_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries as they are written to local.yml: ``params`` only when there are some."""
    return [{"name": e["name"], "params": dict(e["params"])} if e["params"] else {"name": e["name"]}
            for e in entries]


class EntryList(OptionList):
    """The units of one list, in order."""

    BINDINGS = [
        Binding("a", "add", "Add", tooltip="Matrix: add a unit after the selected one", id="matrix.add_unit"),
        Binding("x,delete", "remove", "Remove", key_display="x", tooltip="Matrix: remove the selected unit",
                id="matrix.remove_unit"),
        Binding("left_square_bracket", "move(-1)", "Move up", key_display="[", show=False,
                tooltip="Matrix: move the selected unit up (postprocessors run in order)", id="matrix.unit_up"),
        Binding("right_square_bracket", "move(1)", "Move down", key_display="]", show=False,
                tooltip="Matrix: move the selected unit down", id="matrix.unit_down"),
    ]

    async def action_add(self) -> None:
        await self.parent_editor.add_entry()

    async def action_remove(self) -> None:
        await self.parent_editor.remove_entry()

    async def action_move(self, step: int) -> None:
        await self.parent_editor.move_entry(step)

    @property
    def parent_editor(self) -> UnitsEditor:
        return self.query_ancestor(UnitsEditor)


class UnitsEditor(Horizontal):
    """A list of units (collectors or postprocessors) and the parameter form of the selected one."""

    class Changed(Message):
        """The units or their parameters changed."""

    def __init__(self, kind: str, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="units-editor")
        self.kind = kind
        self.units: dict[str, Any] = {}
        self.entries: list[dict[str, Any]] = []
        self.errors: dict[int, dict[str, str]] = {}
        self.selected = -1

    def compose(self) -> ComposeResult:
        with Vertical(classes="units-left"):
            yield EntryList(id=f"{self.kind}-entries", classes="units-list")
            yield Static(Text("a add · x remove · [ ] order", style="dim"), classes="units-hint")
        with Vertical(classes="units-right"):
            with Horizontal(classes="form-row"):
                yield Label(self.kind, classes="form-label")
                yield Select([], prompt=f"choose a {self.kind}", allow_blank=True, compact=True,
                             id=f"{self.kind}-name", classes="unit-name")
            yield ParamForm(id=f"{self.kind}-form", classes="param-form")

    @property
    def entry_list(self) -> EntryList:
        return self.query_one(EntryList)

    @property
    def name_select(self) -> Select:
        return self.query_one(f"#{self.kind}-name", Select)

    @property
    def form(self) -> ParamForm:
        return self.query_one(ParamForm)

    async def set_entries(self, units: list[Any], entries: list[dict[str, Any]]) -> None:
        self.units = {unit.name: unit for unit in units}
        self.entries = copy.deepcopy(entries)
        self.errors = {}
        self.selected = -1
        self._refresh_list()
        await self._select(0 if self.entries else -1)

    def values(self) -> list[dict[str, Any]]:
        return unit_entries(self.entries)

    def problems(self) -> list[str]:
        return [message for errors in self.errors.values() for message in errors.values()]

    # -- the list ------------------------------------------------------------------------
    def _label(self, entry: dict[str, Any]) -> Text:
        text = Text(entry["name"] or "(no unit)", style="bold")
        if entry["name"] and entry["name"] not in self.units:
            text.append(" unknown", style="bold red")
        if entry["params"]:
            text.append(f" ({describe_params(entry['params'])})", style="dim")
        return text

    def _refresh_list(self) -> None:
        entries = self.entry_list
        highlighted = entries.highlighted
        entries.clear_options()
        entries.add_options([self._label(entry) for entry in self.entries])
        if self.entries:
            entries.highlighted = min(highlighted if highlighted is not None else 0, len(self.entries) - 1)

    async def _select(self, index: int) -> None:
        if index == self.selected and index >= 0:
            return
        self.selected = index
        select = self.name_select
        names = sorted(self.units)
        if index < 0:
            select.set_options([(name, name) for name in names])
            select.disabled = True
            await self.form.show_params(None, None)
            return
        entry = self.entries[index]
        if entry["name"] and entry["name"] not in self.units:
            names.append(entry["name"])
        select.disabled = False
        select.set_options([(name, name) for name in names])
        with select.prevent(Select.Changed):
            select.value = entry["name"] if entry["name"] else Select.NULL
        await self.form.show_params(self.units.get(entry["name"]), entry["params"])
        self.errors[index] = dict(self.form.errors)

    @on(OptionList.OptionHighlighted)
    async def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        await self._select(event.option_index)

    @on(Select.Changed, ".unit-name")
    async def _unit_chosen(self, event: Select.Changed) -> None:
        event.stop()
        if self.selected < 0:
            return
        name = "" if event.value is Select.NULL else str(event.value)
        entry = self.entries[self.selected]
        if name == entry["name"]:
            return
        entry["name"] = name
        entry["params"] = {}
        self.errors.pop(self.selected, None)
        await self.form.show_params(self.units.get(name), {})
        self._refresh_list()
        self.post_message(self.Changed())

    @on(ParamForm.Changed)
    def _params_changed(self, event: ParamForm.Changed) -> None:
        event.stop()
        if self.selected < 0:
            return
        self.entries[self.selected]["params"] = event.params
        self.errors[self.selected] = event.errors
        entries = self.entry_list
        entries.replace_option_prompt_at_index(self.selected, self._label(self.entries[self.selected]))
        self.post_message(self.Changed())

    # -- editing the list ---------------------------------------------------------------------
    async def add_entry(self) -> None:
        default = "time" if self.kind == "collector" and "time" in self.units else ""
        index = self.selected + 1 if self.selected >= 0 else len(self.entries)
        self.entries.insert(index, {"name": default, "params": {}})
        self.errors = {}
        self.selected = -1
        self._refresh_list()
        self.entry_list.highlighted = index
        await self._select(index)
        self.name_select.focus()
        self.post_message(self.Changed())

    async def remove_entry(self) -> None:
        if self.selected < 0:
            return
        del self.entries[self.selected]
        self.errors = {}
        index = min(self.selected, len(self.entries) - 1)
        self.selected = -1
        self._refresh_list()
        await self._select(index)
        self.post_message(self.Changed())

    async def move_entry(self, step: int) -> None:
        index = self.selected
        target = index + step
        if index < 0 or not 0 <= target < len(self.entries):
            return
        self.entries[index], self.entries[target] = self.entries[target], self.entries[index]
        self.errors = {}
        self.selected = -1
        self._refresh_list()
        self.entry_list.highlighted = target
        await self._select(target)
        self.post_message(self.Changed())


class MatrixScreen(Screen[None]):
    """Edit, validate, preview and save the job matrix."""

    TITLE = "perun · job matrix"

    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True, tooltip="Matrix: write the changed keys into local.yml",
                id="matrix.save"),
        Binding("f2", "editor", "$EDITOR", priority=True,
                tooltip="Matrix: open local.yml in $EDITOR, then read it back and validate it", id="matrix.editor"),
        Binding("escape", "close", "Close", key_display="esc", tooltip="Matrix: close (asks when unsaved)",
                id="matrix.close"),
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
                    yield DataTable(id="matrix-preview", cursor_type="row", zebra_stripes=False)
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
        preview = self.query_one("#matrix-preview", DataTable)
        preview.add_columns("#", "command line", "collector", "postprocessors")
        self.load()

    # -- reading -------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="matrix-load", description="reading local.yml")
    def load(self, after_editor: bool = False) -> None:
        core = self.app.core
        problem = ""
        try:
            config = core.local_config()
            if after_editor:
                core.reload_config()
                try:
                    core.check_local_config()
                except PerunError as error:
                    problem = error.message
        except PerunError as error:
            self.post_message(MatrixLoaded({}, [], [], error.message))
            return
        values = {key: config.get(key) if config.has(key) else None for key in MATRIX_KEYS}
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
            self.query_one(Tabs).focus()
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
        preview = self.query_one("#matrix-preview", DataTable)
        preview.clear()
        if message.error:
            status.update(Text(f"✗ {message.error}", style="bold red", no_wrap=True, overflow="ellipsis"))
            return
        for number, job in enumerate(message.jobs, 1):
            collector = job.collector.name + (f" ({describe_params(dict(job.collector.params))})"
                                              if job.collector.params else "")
            preview.add_row(Text(str(number), justify="right"), Text(fit(" ".join(job.command_line.split()), 40)),
                            Text(fit(collector, 30)), Text(" | ".join(p.name for p in job.postprocessors) or "-"))
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
