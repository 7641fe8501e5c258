"""The units of the job-matrix pane: a list of collectors or postprocessors and its editor.

:class:`UnitsEditor` shows the units of one key of the matrix in an
:class:`EntryList`, with a form generated from the selected unit's declared
parameters (:mod:`.forms`) beside it; the screen is
:mod:`perun_tui.screens.matrix`.
"""

from __future__ import annotations

import copy
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Label, OptionList, Select, Static

from .forms import ParamForm, describe_params
from .moves import LIST_MOVES


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
        *LIST_MOVES,
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
        # the unit's name is chosen for an entry of the list: with no entry there is nothing to choose it for
        select.parent.display = index >= 0  # type: ignore[union-attr]
        if index < 0:
            select.set_options([(name, name) for name in names])
            select.disabled = True
            await self.form.show_params(None, None, empty=f"no {self.kind} in the job matrix: a adds one")
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
