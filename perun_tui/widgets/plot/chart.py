"""Scatter (one uid at a time), bars and flow in the plot pane, as the plotting adapter draws them."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding

from .picture import PictureWidget
from ...formatting import ansi_picture


#: the footer shows both uid keys as one item
UID_KEYS = Binding.Group("Other uid")


class ChartView(PictureWidget):
    """Scatter (one uid at a time), bars and flow, drawn by the plotting adapter as ANSI text."""

    HELP_NAME = "chart"

    BINDINGS = [
        Binding("left", "uid(-1)", "Previous uid", key_display="←", tooltip="Scatter: the previous uid",
                id="plot.previous_uid", group=UID_KEYS),
        Binding("right", "uid(1)", "Next uid", key_display="→", tooltip="Scatter: the next uid",
                id="plot.next_uid", group=UID_KEYS),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index = 0

    @property
    def plots(self) -> int:
        return len(self.model.plots) if self.model is not None else 0

    def reset_state(self) -> None:
        self.index = 0

    def state_key(self) -> tuple:
        return (self.index,)

    def draw(self, model: Any, state: tuple, width: int, height: int, theme: Any) -> Any:
        core = self.app.core
        figure = core.one_plot(model, state[0]) if len(model.plots) > 1 else model
        return ansi_picture(core.render_view(self.view, figure, width, height, theme), no_wrap=True, end="")

    def render(self) -> Text:
        if self.picture is None:
            return Text(self.placeholder(), style="dim")
        return self.picture

    def picture_shown(self) -> None:
        if self.view == "scatter" and self.model is not None:
            plot = self.model.plots[self.index]
            uid = plot.series[0].name if plot.series else "?"
            curves = len(plot.curves)
            models = f"{curves} model{'s' * (curves != 1)}" if curves else "no models"
            more = " · ←/→ other uids" if self.plots > 1 else ""
            self.status(f"uid {self.index + 1} of {self.plots}: {uid} · {models}{more}")
        elif self.model is not None:
            self.status("s b w f m: other views · ctrl+p: plot commands · esc: back")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "uid":
            return self.view == "scatter" and self.plots > 1
        return True

    def action_uid(self, step: int) -> None:
        if self.plots > 1:
            self.index = (self.index + step) % self.plots
            self.request()
