"""The flame graph in the plot pane: an icicle with a frame cursor, zoomed by laying out a deeper root."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.strip import Strip

from perun_core import api

from ...formatting import fit
from .picture import PictureWidget, style_colour


#: the footer shows the four moves as one item
MOVE_KEYS = Binding.Group("Move")


class FlameView(PictureWidget):
    """An icicle of the flame graph with a frame cursor; enter zooms into a frame, escape backs out."""

    HELP_NAME = "flame graph"

    COMPONENT_CLASSES = {"flame--header", "flame--cursor"}
    BINDINGS = [
        Binding("enter", "zoom", "Zoom", tooltip="Flame graph: zoom into the frame under the cursor",
                id="plot.zoom"),
        Binding("escape", "unzoom", "Back out", key_display="esc", tooltip="Flame graph: back out of the zoom",
                id="plot.unzoom"),
        Binding("up", "move('up')", "Caller", key_display="↑", group=MOVE_KEYS, tooltip="Flame graph: the calling frame",
                id="plot.frame_up"),
        Binding("down", "move('down')", "Callee", key_display="↓", group=MOVE_KEYS, tooltip="Flame graph: the widest called frame",
                id="plot.frame_down"),
        Binding("left", "move('left')", "Previous frame", key_display="←", group=MOVE_KEYS, tooltip="Flame graph: the frame to the left",
                id="plot.frame_left"),
        Binding("right", "move('right')", "Next frame", key_display="→", group=MOVE_KEYS, tooltip="Flame graph: the frame to the right",
                id="plot.frame_right"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.zoom: list[Any] = []
        self.cursor: Any = None

    @property
    def root(self) -> Any:
        return self.zoom[-1] if self.zoom else self.model.root

    def reset_state(self) -> None:
        self.zoom = []
        self.cursor = self.model.root if self.model is not None else None

    def state_key(self) -> tuple:
        return tuple(id(frame) for frame in self.zoom)

    def draw_input(self) -> Any:
        return self.root

    def draw(self, model: Any, root: Any, width: int, height: int, theme: Any) -> Any:
        return api.layout_flame(root, width, max(height - 1, 1)), theme

    def picture_shown(self) -> None:
        layout, _theme = self.picture
        if self.cursor is None or layout.find(self.cursor) is None:
            self.cursor = layout.root
        self._describe()

    def _describe(self) -> None:
        if self.picture is None or self.cursor is None:
            return
        graph = self.model
        frame = self.cursor
        info = graph.frames.get(frame.label)
        where = ""
        if info is not None and info.source:
            where = f" at {info.source}" + (f":{info.line}" if info.line is not None else "")
        share = 100 * graph.share(frame)
        text = f"{frame.name}{where} · {graph.amount(frame.total)} ({share:.1f}%) · self {graph.amount(frame.self_amount)}"
        layout, _theme = self.picture
        if layout.hidden:
            text += f" · {layout.hidden} deeper level{'s' * (layout.hidden != 1)} cut: zoom in"
        self.status(text)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if self.picture is None:
            return Strip([Segment(fit(self.placeholder() if y == 0 else "", width), base)])
        layout, theme = self.picture
        if y == 0:
            graph = self.model
            header = f"{graph.title} · total {graph.amount(graph.total)}"
            if self.zoom:
                header += f" · zoomed into {self.root.name} ({len(self.zoom)} deep; esc backs out)"
            style = base + self.get_component_rich_style("flame--header", partial=True)
            return Strip([Segment(fit(header, width), style)])
        row = y - 1
        if row >= len(layout.rows):
            return Strip.blank(width, base)
        segments: list[Segment] = []
        column = 0
        cursor_style = self.get_component_rich_style("flame--cursor", partial=True)
        for span in layout.rows[row]:
            if span.start > column:
                segments.append(Segment(" " * (span.start - column), base))
            cells = span.end - span.start
            frame = span.frame
            if theme is None:
                text = api.block_label(frame.name, cells, bracketed=True)
                style = base
            else:
                text = api.block_label(frame.name, cells)
                colour = api.block_colour(theme, frame.name)
                style = base + Style(color=style_colour(theme.on_block), bgcolor=style_colour(colour))
            if frame is self.cursor:
                style = style + cursor_style
            segments.append(Segment(text, style))
            column = span.end
        return Strip(segments).adjust_cell_length(width, base)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "unzoom":
            return bool(self.zoom)
        if action == "zoom":
            return self.cursor is not None and self.model is not None and self.cursor is not self.root
        return True

    def action_zoom(self) -> None:
        if self.cursor is None or self.cursor is self.root:
            return
        self.zoom.append(self.cursor)
        self.refresh_bindings()
        self.request()

    def action_unzoom(self) -> None:
        if self.zoom:
            self.cursor = self.zoom.pop()
            self.refresh_bindings()
            self.request()

    def action_move(self, where: str) -> None:
        if self.picture is None or self.cursor is None:
            return
        layout, _theme = self.picture
        found = layout.find(self.cursor)
        if found is None:
            return
        row, index = found
        span = layout.rows[row][index]
        target = None
        if where == "up" and span.parent is not None:
            target = span.parent
        elif where == "down" and row + 1 < len(layout.rows):
            children = [s for s in layout.rows[row + 1] if s.parent is span.frame]
            target = children[0].frame if children else None
        elif where in ("left", "right"):
            step = -1 if where == "left" else 1
            if 0 <= index + step < len(layout.rows[row]):
                target = layout.rows[row][index + step].frame
        if target is not None:
            self.cursor = target
            self.refresh()
            self.refresh_bindings()
            self._describe()

    def on_click(self, event: events.Click) -> None:
        if self.picture is None or event.y < 1:
            return
        layout, _theme = self.picture
        row = event.y - 1
        if row < len(layout.rows):
            for span in layout.rows[row]:
                if span.start <= event.x < span.end:
                    self.cursor = span.frame
                    self.refresh()
                    self._describe()
                    if event.chain >= 2:
                        self.action_zoom()
                    return
