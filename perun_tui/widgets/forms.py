"""Forms generated from parameter declarations (``Param``) of units, views and check methods.

A :class:`ParamForm` shows one row per declared parameter of its *owner*:
anything with a ``name`` and ``params`` (an ``api.run.UnitInfo``, a view,
an ``api.check.MethodInfo``).  A ``bool`` gets a check box, a ``choice`` a
drop-down and the rest a one-line input (lists as comma-separated items).
Every change is converted right away by the parameter's own converter
(:meth:`perun_core.params.Param.convert`), so a bad value is marked on its
row (``✗`` before the name) and named in the form's message line before
anything is saved or run.
Fields left empty mean "the default" and are left out of the parameters.
A parameter that declares a ``unit`` shows it after its field, and its
default and a value that reads better with a prefix (``65536`` bytes is
``64.0 KiB``) through the one formatter of amounts.
:func:`form_fields` says which field each parameter gets without mounting
anything.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select, Static

from perun_core.api import format_amount
from perun_core.errors import PerunError


#: before the name of a parameter whose field holds a value it refuses
INVALID_MARK = "✗"


def show_value(value: Any) -> str:
    """A parameter value as it is typed into a field: lists comma-separated."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(show_value(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {show_value(v)}" for k, v in value.items())
    return str(value)


def show_default(param: Any) -> str:
    """A field's placeholder: the default (a number with its unit, through the formatter of amounts) or "not set"."""
    if param.default in (None, (), []):
        return "not set"
    if param.unit and isinstance(param.default, (int, float)) and not isinstance(param.default, bool):
        return f"default: {format_amount(param.default, param.unit)}"
    return f"default: {show_value(param.default)}"


def unit_hint(param: Any, value: Any) -> str:
    """What follows a field of a parameter with a unit: the unit, and the value in a better prefix when it has one.

    ``B = 64.0 KiB`` for 65536 bytes, ``s = 500.0 ms`` for 0.5 seconds; just
    ``s`` for an empty field, a value the unit reads well in or one that
    does not convert.
    """
    if not param.unit:
        return ""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return param.unit
    shown = format_amount(value, param.unit)
    return param.unit if shown == f"{value} {param.unit}" else f"{param.unit} = {shown}"


def describe_params(params: dict[str, Any]) -> str:
    """``key: value, ...`` for a list entry; a parameter not set (None) is left out, not shown as ``key: ``."""
    return ", ".join(f"{k}: {show_value(v)}" for k, v in params.items() if v is not None)


def field_kind(param: Any) -> str:
    """The widget a parameter gets: ``checkbox`` (bool), ``select`` (choice) or ``input``."""
    return {"bool": "checkbox", "choice": "select"}.get(param.kind, "input")


def form_fields(owner: Any) -> dict[str, str]:
    """The fields a form for ``owner`` has: widget id -> field kind, one per declared parameter."""
    return {f"field-{param.name}": field_kind(param) for param in getattr(owner, "params", ())}


class TickBox(Checkbox):
    """A check box whose mark differs in shape, not only in colour: ``X`` checked, blank unchecked.

    textual's own box shows an ``X`` either way and tells the states apart
    by colour alone, which NO_COLOR and monochrome terminals lose.
    """

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 - textual reads the class constant's name
        return "X" if self.value else " "


class ParamForm(VerticalScroll, can_focus=False):
    """The fields of the parameters of one unit, view or check method; posts :class:`ParamForm.Changed` on every edit."""

    class Changed(Message):
        """The parameters changed: ``params`` holds converted values (raw text where conversion failed)."""

        def __init__(self, form: ParamForm, params: dict[str, Any], errors: dict[str, str]) -> None:
            super().__init__()
            self.form = form
            self.params = params
            self.errors = errors

        @property
        def control(self) -> ParamForm:
            return self.form

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.owner: Any = None  # what declares the parameters (UnitInfo, View, MethodInfo)
        self.params: dict[str, Any] = {}
        self.errors: dict[str, str] = {}
        self._loading = False
        self._shown: dict[str, str] = {}  # the text each input started with

    def compose(self) -> ComposeResult:
        yield Static("", id="form-fields-anchor", classes="form-empty")

    async def show_params(self, owner: Any, params: dict[str, Any] | None, empty: str = "no unit selected") -> None:
        """Build the fields of ``owner`` (anything with ``name`` and ``params``; None for nothing, which says ``empty``)
        filled with ``params``."""
        self.owner = owner
        self.params = dict(params or {})
        self.errors = {}
        self._shown = {}
        self._loading = True
        await self.remove_children()
        if owner is None:
            await self.mount(Static(Text(empty, style="dim"), classes="form-empty"))
            self._loading = False
            return
        rows: list[Widget] = []
        if not owner.params:
            rows.append(Static(Text(f"{owner.name} has no parameters", style="dim"), classes="form-empty"))
        for param in owner.params:
            rows.append(self._row(param, self.params.get(param.name)))
        known = {key for param in owner.params for key in param.keys}
        for key in self.params:
            if key not in known:
                self.errors[key] = f"{owner.name} has no parameter '{key}'"
        rows.append(Static("", id="form-message", classes="form-message"))
        await self.mount_all(rows)
        self._loading = False
        self._show_message()

    def _row(self, param: Any, value: Any) -> Horizontal:
        label = Label(param.name, classes="form-label")
        label.tooltip = param.help or param.describe()
        field: Widget
        kind = field_kind(param)
        if kind == "checkbox":
            checked = bool(param.default) if value is None else _as_bool(param, value, self.owner.name)
            field = TickBox("", checked, compact=True, id=f"field-{param.name}", classes="form-field")
        elif kind == "select":
            options = [(choice, choice) for choice in param.choices]
            default = f"default: {param.default}" if param.default is not None else "not set"
            field = Select(options, prompt=default, allow_blank=True, compact=True, id=f"field-{param.name}",
                           classes="form-field", value=value if value in param.choices else Select.NULL)
        else:
            placeholder = show_default(param)
            if param.kind == "list":
                placeholder += " (comma-separated)"
            self._shown[param.name] = show_value(value)
            field = Input(self._shown[param.name], placeholder=placeholder, compact=True, id=f"field-{param.name}",
                          classes="form-field")
            field.cursor_blink = False
        field.tooltip = f"{param.help} ({param.describe()})" if param.help else param.describe()
        if not param.unit:
            return Horizontal(label, field, classes="form-row")
        unit = Label(unit_hint(param, value), id=f"unit-{param.name}", classes="form-unit")
        return Horizontal(label, field, unit, classes="form-row")

    # -- edits -----------------------------------------------------------------------------
    def _param(self, widget: Widget) -> Any:
        name = (widget.id or "").removeprefix("field-")
        for param in self.owner.params if self.owner else ():
            if param.name == name:
                return param
        return None

    @on(Input.Changed, ".form-field")
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        param = self._param(event.input)
        if param is None or self._loading:
            return
        if self._shown.pop(param.name, None) == event.value:
            # the input reporting the value it was built with: keep the value as it is (a list of
            # mappings, say, has no exact text form)
            return
        text = event.value.strip()
        self._set(param, None if not text else text, event.input)

    @on(Checkbox.Changed, ".form-field")
    def _checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        param = self._param(event.checkbox)
        if param is None or self._loading:
            return
        self._set(param, None if event.value == bool(param.default) else event.value, event.checkbox)

    @on(Select.Changed, ".form-field")
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        param = self._param(event.select)
        if param is None or self._loading:
            return
        self._set(param, None if event.value is Select.NULL else event.value, event.select)

    def _set(self, param: Any, raw: Any, widget: Widget) -> None:
        self.errors.pop(param.name, None)
        if raw is None:
            self.params.pop(param.name, None)
        else:
            try:
                self.params[param.name] = param.convert(raw, self.owner.name)
            except PerunError as error:
                self.params[param.name] = raw
                self.errors[param.name] = error.message
        invalid = param.name in self.errors
        widget.set_class(invalid, "-invalid")
        # the mark says it in shape too: the field's tint is colour alone (lost with NO_COLOR), and the message
        # line under the form may be scrolled out of a short pane
        label = widget.parent.query(".form-label") if widget.parent is not None else None
        if label:
            label.first(Label).update(f"{INVALID_MARK} {param.name}" if invalid else param.name)
        if param.unit:
            self.query_one(f"#unit-{param.name}", Label).update(unit_hint(param, self.params.get(param.name)))
        self._show_message()
        self.post_message(self.Changed(self, dict(self.params), dict(self.errors)))

    def _show_message(self, focused: Widget | None = None) -> None:
        message = self.query("#form-message")
        if not message:
            return
        if self.errors:
            message.first(Static).update(Text(next(iter(self.errors.values())), style="bold red"))
        else:
            focused = focused or self.app.focused
            param = self._param(focused) if focused is not None and focused in self.query(".form-field") else None
            text = f"{param.name}: {param.help or param.describe()}" if param is not None else ""
            message.first(Static).update(Text(text, style="dim"))

    def on_descendant_focus(self, event: Any) -> None:
        self._show_message(getattr(event, "widget", None))

    def problems(self) -> list[str]:
        """Every error of the form, as messages."""
        return list(self.errors.values())


def _as_bool(param: Any, value: Any, unit: str) -> bool:
    try:
        return bool(param.convert(value, unit))
    except PerunError:
        return bool(param.default)
