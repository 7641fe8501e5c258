"""The details screen of one profile: header, collector, postprocessors, statistics, models."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from textual.worker import Worker, WorkerState

from perun_core.errors import PerunError
from perun_core.api import ProfileInfo, describe_machine, escape_controls, format_amount, format_number

from ..messages import ProfileLoaded
from ..widgets.columns import AmountsTable
from .keys import HELP_IN_DIALOG


class ProfileDetailsScreen(ModalScreen[None]):
    """Loads the profile in a worker, then shows it; errors close it with a notification."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="details.close"),
        HELP_IN_DIALOG,
    ]

    def __init__(self, info: ProfileInfo, minor: str | None) -> None:
        super().__init__()
        self.info = info
        self.minor = minor

    def compose(self) -> ComposeResult:
        with Vertical(id="details-dialog", classes="dialog"):
            with VerticalScroll(id="details-body"):
                yield Static("loading…", id="details-meta")
                yield Label("Resources", id="details-resources", classes="details-heading")
                yield AmountsTable(("numeric field", "count", "min", "mean", "max"), id="details-stats")
                yield Label("Models", id="details-models-heading", classes="details-heading")
                yield AmountsTable(("uid", "model", "r²", "coefficients", "interval"), id="details-models")

    def on_mount(self) -> None:
        dialog = self.query_one("#details-dialog")
        where = f" at {self.minor[:7]}" if self.info.registered and self.minor else " (pending)"
        dialog.border_title = f"{self.info.tag} {self.info.type}{where}"
        dialog.border_subtitle = "esc to close"
        self.query_one("#details-body").focus()
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="details", description="loading a profile")
    def load(self) -> None:
        try:
            loaded = self.app.core.load(self.info, self.minor)
            summary = self.app.core.summary(loaded.profile)
        except PerunError as error:
            self.app.call_from_thread(self.app.report_error, error)
            self.app.call_from_thread(self.dismiss, None)
            return
        self.post_message(ProfileLoaded(loaded, summary))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.app.report_failed_worker(event)
            self.dismiss(None)

    def on_profile_loaded(self, message: ProfileLoaded) -> None:
        profile = message.loaded.profile
        summary = message.summary
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(ratio=1)
        # every name and value here comes from the profile file: shown with its control characters escaped
        grid.add_row("command", Text(escape_controls(" ".join(p for p in (profile.cmd, profile.args) if p))))
        grid.add_row("workload", Text(escape_controls(profile.workload or "-")))
        if profile.units:
            grid.add_row("units", Text(escape_controls(", ".join(f"{k}: {v}" for k, v in profile.units.items()))))
        for key, value in profile.header.items():
            if key == "machine" and isinstance(value, dict):
                # amounts with their units (memory: 23.5 GiB), one entry a row
                for number, (name, text) in enumerate(describe_machine(value)):
                    grid.add_row("machine" if number == 0 else "", Text(escape_controls(f"{name}: {text}")))
            elif key not in ("type", "cmd", "args", "params", "workload", "units"):
                grid.add_row(Text(escape_controls(str(key))), Text(escape_controls(_compact(value))))
        grid.add_row("collector", Text(escape_controls(_unit(profile.collector or "?",
                                                             profile.collector_info.get("params")))))
        for number, unit in enumerate(profile.postprocessors):
            grid.add_row("postprocessor" if number == 0 else "",
                         Text(escape_controls(_unit(str(unit.get("name", "?")), unit.get("params")))))
        if not profile.postprocessors:
            grid.add_row("postprocessor", Text("none", style="dim"))
        grid.add_row("source", Text(escape_controls(message.loaded.source)))
        self.query_one("#details-meta", Static).update(grid)

        regions = f"{summary.regions} region{'s' * (summary.regions != 1)}"
        self.query_one("#details-resources", Label).update(f"Resources · {summary.resources} in {regions}")
        stats = self.query_one("#details-stats", AmountsTable)
        # the amounts carry their units (75.6 ms): a '[s]' beside the label would contradict them
        stats.set_rows([Text(escape_controls(row.label)), Text(format_number(row.count), justify="right"),
                        *(Text(escape_controls(_statistic(row, v)), justify="right")
                          for v in (row.minimum, row.mean, row.maximum))] for row in summary.fields)
        stats.display = bool(summary.fields)
        models = self.query_one("#details-models", AmountsTable)
        heading = self.query_one("#details-models-heading", Label)
        if summary.models:
            unit = summary.amount_unit
            # the coefficients are numbers of the amounts' unit (a slope: per unit of size)
            heading.update(f"Models · {len(summary.models)}" + (f" · coefficients in {unit}" if unit else ""))
            models.set_rows([Text(escape_controls(model.uid)), Text(escape_controls(model.model)),
                             Text(f"{model.r_square:.3f}" if model.r_square is not None else "",
                                  justify="right"),
                             Text(escape_controls(model.coeffs)), Text(escape_controls(model.interval))]
                            for model in summary.models)
        else:
            heading.update("Models · none (a regression postprocessor adds them)")
            models.display = False

    def action_close(self) -> None:
        self.dismiss(None)


def _unit(name: str, params: Any) -> str:
    """``name (key: value, ...)`` for a collector or postprocessor and its parameters."""
    shown = {k: v for k, v in params.items() if v is not None} if isinstance(params, dict) else {}
    if not shown:  # a parameter not set (None) is left out: 'timeout: None' was Python's spelling
        return name
    return f"{name} ({', '.join(f'{k}: {_compact(v)}' for k, v in shown.items())})"


#: Header keys whose numbers are amounts in a unit the name says (pytrace's ``preemption.wait_seconds``).
_UNIT_SUFFIXES = {"_seconds": "s", "_bytes": "B"}


def _compact(value: Any, key: str | None = None) -> str:
    """Parameters as people write them: ``[a, b]`` and ``{key: value}``, no JSON quoting; a number under a key
    that names its unit (``wait_seconds``) with that unit."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_compact(v, str(k))}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_compact(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"  # as local.yml and the forms write it, not Python's False
    if isinstance(value, (int, float)) and key is not None:
        unit = next((u for suffix, u in _UNIT_SUFFIXES.items() if key.endswith(suffix)), None)
        if unit is not None:
            return format_amount(value, unit)
    return str(value)


def _statistic(row: Any, value: Any) -> str:
    """A statistic of a numeric field: an amount with its unit, an address in hexadecimal (as a count, the
    address of a memory profile read '94.2T')."""
    if row.key == "address" and isinstance(value, (int, float)) and value == value and abs(value) != float("inf"):
        return f"{round(value):#x}"
    return format_amount(value, row.unit, column=True)
