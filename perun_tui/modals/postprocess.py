"""The postprocess dialog: choose a postprocessor, fill its form, run it on the selected profile.

The form is generated from the postprocessor's parameter declarations
(:class:`~perun_tui.widgets.forms.ParamForm`); ``api_run.postprocess`` runs
in a thread worker and writes a new pending profile, which the profiles
pane then selects.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static
from textual.worker import Worker

from perun_core.errors import PerunError
from perun_core.api import ProfileInfo

from ..messages import MatrixLoaded, PostprocessDone, ProfileLink
from ..widgets.forms import ParamForm
from .keys import HELP_IN_DIALOG


def preferred_postprocessor(profile_type: str, names: list[str]) -> str | None:
    """The postprocessor offered first: regression analysis for mixed profiles, else the first one."""
    for wanted in (("regression_analysis",) if profile_type == "mixed" else ()) + ("normalizer",):
        if wanted in names:
            return wanted
    return names[0] if names else None


class PostprocessScreen(ModalScreen[ProfileLink | None]):
    """Dismisses with the new pending profile, or None when cancelled or failed."""

    BINDINGS = [
        Binding("ctrl+s", "run", "Run", priority=True, tooltip="Postprocess: run the chosen postprocessor",
                id="postprocess.run"),
        Binding("escape", "cancel", "Cancel", key_display="esc", tooltip="Postprocess: close without running",
                id="postprocess.cancel"),
        HELP_IN_DIALOG,
    ]

    def __init__(self, info: ProfileInfo, minor: str | None) -> None:
        super().__init__()
        self.info = info
        self.minor = minor
        self.units: dict[str, Any] = {}
        self.running = False

    def compose(self) -> ComposeResult:
        with Vertical(id="postprocess-dialog", classes="dialog"):
            with Horizontal(classes="form-row"):
                yield Label("postprocessor", classes="form-label")
                yield Select([], prompt="choose a postprocessor", allow_blank=True, compact=True,
                             id="postprocess-unit", classes="unit-name")
            yield Static("", id="postprocess-summary")
            yield ParamForm(id="postprocess-form", classes="param-form")
            with Horizontal(id="postprocess-buttons"):
                yield Button("Run (ctrl+s)", variant="primary", id="postprocess-run", compact=True)
                yield Button("Cancel (esc)", id="postprocess-cancel", compact=True)

    def on_mount(self) -> None:
        dialog = self.query_one("#postprocess-dialog")
        where = f" at {self.minor[:7]}" if self.info.registered and self.minor else " (pending)"
        dialog.border_title = f"Postprocess {self.info.tag} {self.info.type}{where}"
        dialog.border_subtitle = "the result is a new pending profile"
        self.load_units()

    @work(thread=True, exclusive=True, exit_on_error=False, group="postprocess-units", description="listing units")
    def load_units(self) -> None:
        self.post_message(MatrixLoaded({}, [], self.app.core.units("postprocessor")))

    async def on_matrix_loaded(self, message: MatrixLoaded) -> None:
        self.units = {unit.name: unit for unit in message.postprocessors}
        select = self.query_one("#postprocess-unit", Select)
        names = sorted(self.units)
        select.set_options([(name, name) for name in names])
        chosen = preferred_postprocessor(self.info.type, names)
        if chosen is not None:
            with select.prevent(Select.Changed):
                select.value = chosen
            await self._show(chosen)
        select.focus()

    async def _show(self, name: str | None) -> None:
        unit = self.units.get(name or "")
        summary = self.query_one("#postprocess-summary", Static)
        summary.update(Text(unit.summary if unit is not None else "", style="dim"))
        await self.query_one(ParamForm).show_params(unit, {})

    @on(Select.Changed, "#postprocess-unit")
    async def _unit_chosen(self, event: Select.Changed) -> None:
        event.stop()
        await self._show(None if event.value is Select.NULL else str(event.value))

    @on(ParamForm.Changed)
    def _form_changed(self, event: ParamForm.Changed) -> None:
        event.stop()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_run()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "postprocess-run":
            self.action_run()
        else:
            self.action_cancel()

    def action_run(self) -> None:
        if self.running:
            return
        form = self.query_one(ParamForm)
        if form.owner is None:
            self.notify("choose a postprocessor first", severity="warning")
            return
        problems = form.problems()
        if problems:
            self.notify(problems[0], title="postprocess", severity="error", markup=False)
            return
        self.running = True
        self.query_one("#postprocess-run", Button).disabled = True
        self.query_one("#postprocess-dialog").border_subtitle = f"running {form.owner.name}…"
        self.postprocess(form.owner.name, dict(form.params))

    @work(thread=True, exclusive=True, exit_on_error=False, group="postprocess", description="postprocessing")
    def postprocess(self, name: str, params: dict[str, Any]) -> None:
        try:
            result = self.app.core.postprocess(self.info, self.minor, name, params)
        except PerunError as error:
            message = error.message if not error.hint else f"{error.message}\n{error.hint}"
            self.post_message(PostprocessDone(None, message))
            return
        self.post_message(PostprocessDone(ProfileLink(result.origin, result.path.name)))

    def on_postprocess_done(self, message: PostprocessDone) -> None:
        self.running = False
        self.query_one("#postprocess-run", Button).disabled = False
        if message.link is None:
            self.query_one("#postprocess-dialog").border_subtitle = "failed"
            self.app.notify(message.error, title="postprocess", severity="error", timeout=10, markup=False)
            return
        self.app.notify(f"wrote the pending profile {message.link.source}", title="postprocess")
        self.dismiss(message.link)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)

    def action_cancel(self) -> None:
        if self.running:
            self.notify("the postprocessor is still running", severity="warning")
            return
        self.dismiss(None)
