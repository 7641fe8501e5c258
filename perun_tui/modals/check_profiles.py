"""The dialog of ``check profiles``: the two profiles to compare and the commit they are looked up at."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static
from .keys import HELP_IN_DIALOG


class CheckProfilesDialog(ModalScreen[tuple[str, str, str] | None]):
    """Asks for the two profiles of ``check profiles``: specs looked up at one commit."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", key_display="esc", id="check.profiles_cancel"),
        HELP_IN_DIALOG,
    ]

    def __init__(self, baseline: str, target: str, minor: str) -> None:
        super().__init__()
        self.defaults = (baseline, target, minor)

    def compose(self) -> ComposeResult:
        with Vertical(id="check-profiles-dialog", classes="dialog"):
            yield Static(Text("Profiles are given as everywhere in perun: i@i (registered at the commit), "
                              "i@p (pending), a source name or a path.", style="dim"))
            for name, value in zip(("baseline", "target", "at commit"), self.defaults):
                with Horizontal(classes="form-row"):
                    yield Label(name, classes="form-label")
                    hint = "HEAD" if name == "at commit" else "i@i, i@p, a source name or a path"
                    field = Input(value, placeholder=hint, compact=True, id=f"check-{name.replace(' ', '-')}")
                    field.cursor_blink = False
                    yield field
            with Horizontal(id="check-profiles-buttons"):
                yield Button("Check (enter)", variant="primary", compact=True, id="check-profiles-go")
                yield Button("Cancel (esc)", compact=True, id="check-profiles-cancel")

    def on_mount(self) -> None:
        self.query_one("#check-profiles-dialog").border_title = "Check two profiles"
        self.query_one("#check-baseline", Input).focus()

    def _answer(self) -> None:
        values = tuple(self.query_one(f"#check-{n}", Input).value.strip() for n in ("baseline", "target", "at-commit"))
        if not values[0] or not values[1]:
            self.notify("give both profiles", severity="warning")
            return
        self.dismiss(values)  # type: ignore[arg-type]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._answer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "check-profiles-go":
            self._answer()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
