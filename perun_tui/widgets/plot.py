"""The plot screen: scatter with models, bars, flow, flame graph and heap map of one profile.

::

    ╭ Plot · 1@i mixed at abc1234 ───────────────────────────────╮
    │ s scatter  b bars  w flow  f flame graph  m heap map        │  the views; the current one lit
    │ (the picture, as big as the pane)                           │
    │ uid 2 of 3: sll_search · ←/→ other uids                     │  what the cursor is on
    ╰─────────────────────────────────────────────────────────────╯

The profile is loaded and each view's data built (``View.run``) in thread
workers; every picture is drawn in a thread worker too, at the widget's
size, and cached by (profile, view, state, width, height, theme) in the
app's :class:`~perun_tui.pictures.PictureCache`.  While a new picture is
drawn the old one stays on screen.  Charts come from perun_core's plotting
adapter as ANSI text; the flame graph (an icicle) and the heap map are
drawn here with Rich segments from the views' data models, because they
have a cursor.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Footer, Header, Static
from textual.worker import Worker

from perun_core.errors import PerunError
from perun_core.storage.repository import ProfileInfo

from ..commands import PaletteCommand, ScreenCommands
from ..formatting import fit
from ..messages import PictureReady, PlotModelBuilt, PlotProfileLoaded, PlotStatus
from ..pictures import allocations_in, layout_flame, layout_heap, plot_theme, theme_key
from ..stats import format_number

#: (view, key, label) in the order the view line shows them
VIEWS = (
    ("scatter", "s", "scatter"),
    ("bars", "b", "bars"),
    ("flow", "w", "flow"),
    ("flamegraph", "f", "flame graph"),
    ("heapmap", "m", "heap map"),
)
VIEW_LABELS = {name: label for name, _key, label in VIEWS}


def _unprefixed(view: str, error: str) -> str:
    """The core's error without its leading ``view:`` (the TUI names the view already)."""
    return error[len(view) + 2:] if error.startswith(f"{view}: ") else error


def default_view(profile_type: str) -> str:
    """What a profile of this type is best shown as first."""
    return {"mixed": "scatter", "memory": "heapmap"}.get(profile_type, "bars")


def view_params(view: str, profile_type: str) -> dict[str, Any]:
    """The parameters the TUI gives each view, by profile type.

    The views' own defaults suit the command line's memory profiles; for
    time profiles the runs are the x axis (``order``) and the kinds of time
    the groups, for mixed profiles the functions (uids).
    """
    if view == "bars":
        return {"time": {"func": "mean", "per": "subtype"},
                "mixed": {"func": "sum", "per": "uid"}}.get(profile_type, {"func": "sum", "per": "snapshots",
                                                                           "by": "subtype"})
    if view == "flow":
        return {"time": {"func": "mean", "through": "order", "by": "subtype"},
                "mixed": {"func": "mean", "through": "structure-unit-size", "by": "uid"}}.get(
            profile_type, {"func": "sum", "through": "snapshots", "by": "subtype"})
    return {}


def profile_key(info: ProfileInfo) -> str:
    """What identifies a profile's content: its checksum, else its file and time."""
    return info.checksum or f"{info.path or info.source}@{info.time}"


# -- the picture widgets --------------------------------------------------------------------

class PictureWidget(Widget, can_focus=True):
    """A picture of a model drawn in a worker at the widget's size; the old one stays until the new is ready."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model: Any = None
        self.model_key: tuple = ()
        self.view = ""
        self.picture: Any = None
        self._wanted: tuple | None = None
        self._retry = False

    def set_model(self, model_key: tuple, view: str, model: Any) -> None:
        if model_key == self.model_key and model is self.model:
            self.request()
            return
        self.model_key = model_key
        self.view = view
        self.model = model
        self.picture = None
        self.reset_state()
        self.request()

    # hooks of the subclasses
    def reset_state(self) -> None:
        """A new model arrived: start from its beginning."""

    def state_key(self) -> tuple:
        """What besides the size the picture depends on (hashable: it is part of the cache key)."""
        return ()

    def draw_input(self) -> Any:
        """What :meth:`draw` needs of the state, taken on the UI thread (the state key by default)."""
        return self.state_key()

    def draw(self, model: Any, state: Any, width: int, height: int, theme: Any) -> Any:
        """The picture (runs in a worker thread: use only the arguments)."""
        raise NotImplementedError

    def picture_shown(self) -> None:
        """A new picture is on screen (update the status line)."""

    @property
    def canvas_size(self) -> tuple[int, int]:
        region = self.content_region
        return region.width, region.height

    def request(self) -> None:
        """Show the picture for the current state and size: from the cache, else drawn in a worker."""
        width, height = self.canvas_size
        if self.model is None:
            return
        if width < 20 or height < 5:
            # not laid out yet (just switched to): once more after the next refresh
            if not self._retry:
                self._retry = True
                self.call_after_refresh(self.request)
            return
        self._retry = False
        state = self.state_key()
        key = (*self.model_key, *state, width, height, theme_key(self.app))
        self._wanted = key
        cached = self.app.pictures.get(key)
        if cached is not None:
            self._show(cached)
            return
        theme = plot_theme(self.app)
        work = functools.partial(self._draw_in_thread, key, self.model, self.draw_input(), width, height, theme)
        self.run_worker(work, thread=True, exclusive=True, exit_on_error=False, group=f"draw-{self.id}",
                        description=f"drawing the {VIEW_LABELS.get(self.view, self.view)}")

    def _draw_in_thread(self, key: tuple, model: Any, state: Any, width: int, height: int, theme: Any) -> None:
        try:
            picture = self.draw(model, state, width, height, theme)
        except PerunError as error:
            self.post_message(PictureReady(key, None, error.message))
            return
        self.post_message(PictureReady(key, picture))

    def on_picture_ready(self, message: PictureReady) -> None:
        message.stop()
        if message.error:
            if message.key == self._wanted:
                self.notify(message.error, title="plot", severity="error", markup=False)
            return
        self.app.pictures.put(message.key, message.picture)
        if message.key == self._wanted:
            self._show(message.picture)

    def _show(self, picture: Any) -> None:
        self.picture = picture
        self.refresh()
        self.picture_shown()

    def on_resize(self, event: events.Resize) -> None:
        self.request()

    def status(self, text: str) -> None:
        self.post_message(PlotStatus(text))


class ChartView(PictureWidget):
    """Scatter (one uid at a time), bars and flow, drawn by the plotting adapter as ANSI text."""

    BINDINGS = [
        Binding("right", "uid(1)", "Next uid", key_display="→", tooltip="Scatter: the next uid",
                id="plot.next_uid"),
        Binding("left", "uid(-1)", "Previous uid", key_display="←", tooltip="Scatter: the previous uid",
                id="plot.previous_uid"),
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
        return Text.from_ansi(core.render_view(self.view, figure, width, height, theme), no_wrap=True,
                              end="")

    def render(self) -> Text:
        if self.picture is None:
            return Text("drawing…", style="dim")
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


class FlameView(PictureWidget):
    """An icicle of the flame graph with a frame cursor; enter zooms into a frame, escape backs out."""

    COMPONENT_CLASSES = {"flame--header", "flame--cursor"}
    BINDINGS = [
        Binding("enter", "zoom", "Zoom", tooltip="Flame graph: zoom into the frame under the cursor",
                id="plot.zoom"),
        Binding("escape", "unzoom", "Back out", key_display="esc", tooltip="Flame graph: back out of the zoom",
                id="plot.unzoom"),
        Binding("up", "move('up')", "Caller", show=False, tooltip="Flame graph: the calling frame",
                id="plot.frame_up"),
        Binding("down", "move('down')", "Callee", show=False, tooltip="Flame graph: the widest called frame",
                id="plot.frame_down"),
        Binding("left", "move('left')", "Previous frame", show=False, tooltip="Flame graph: the frame to the left",
                id="plot.frame_left"),
        Binding("right", "move('right')", "Next frame", show=False, tooltip="Flame graph: the frame to the right",
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
        return layout_flame(root, width, max(height - 1, 1)), theme

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
            return Strip([Segment(fit("drawing…" if y == 0 else "", width), base)])
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
                text = "|" if cells == 1 else "[" + fit(frame.name, cells - 2) + "]"
                style = base
            else:
                text = fit(" " + frame.name, cells)
                colour = _block_colour(theme, frame.name)
                style = base + Style(color=_style_colour(theme.on_block), bgcolor=_style_colour(colour))
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


class HeapView(PictureWidget):
    """The heap map: one snapshot's address space by allocation site, or the heat of all snapshots."""

    COMPONENT_CLASSES = {"heap--header", "heap--label", "heap--free", "heap--cursor"}
    BINDINGS = [
        Binding("right", "snapshot(1)", "Next snapshot", key_display="→", tooltip="Heap map: the next snapshot",
                id="plot.next_snapshot"),
        Binding("left", "snapshot(-1)", "Previous snapshot", key_display="←",
                tooltip="Heap map: the previous snapshot", id="plot.previous_snapshot"),
        Binding("t", "heat", "Heat", tooltip="Heap map: switch between sites and the heat of all snapshots",
                id="plot.heat"),
        Binding("space", "animate", "Play", show=False, tooltip="Heap map: step through the snapshots by itself",
                id="plot.animate"),
        Binding("k,up", "cell(0, -1)", "Cell up", show=False, tooltip="Heap map: move the cell cursor up",
                id="plot.cell_up"),
        Binding("j,down", "cell(0, 1)", "Cell down", show=False, tooltip="Heap map: move the cell cursor down",
                id="plot.cell_down"),
        Binding("h", "cell(-1, 0)", "Cell left", show=False, tooltip="Heap map: move the cell cursor left",
                id="plot.cell_left"),
        Binding("l", "cell(1, 0)", "Cell right", show=False, tooltip="Heap map: move the cell cursor right",
                id="plot.cell_right"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.snapshot = 0
        self.mode = "heap"
        self.cell = 0
        self._timer: Any = None

    @property
    def heap(self) -> Any:
        return self.model.heap

    def reset_state(self) -> None:
        self.snapshot = (self.model.snapshot or 0) if self.model is not None else 0
        self.mode = "heap"
        self.cell = 0
        self._stop()

    def state_key(self) -> tuple:
        return (self.mode, self.snapshot if self.mode == "heap" else -1)

    def draw(self, model: Any, state: tuple, width: int, height: int, theme: Any) -> Any:
        mode, snapshot = state
        return layout_heap(model.heap, width, max(height - 2, 1), max(snapshot, 0), mode), theme

    def picture_shown(self) -> None:
        layout, _theme = self.picture
        self.cell = min(self.cell, max(len(layout.values) - 1, 0))
        self._describe()

    # -- drawing ---------------------------------------------------------------------------
    def _header(self, layout: Any) -> str:
        heap = self.heap
        unit = heap.unit
        if layout.mode == "heat":
            allocations = sum(len(s.addresses) for s in heap.snapshots)
            return (f"heat of {len(heap.snapshots)} snapshots · {allocations} allocations · "
                    f"{format_number(layout.size)} {unit} per cell · hottest {layout.hottest}")
        shot = heap.snapshots[layout.snapshot]
        return (f"snapshot {layout.snapshot + 1} of {len(heap.snapshots)} (time {shot.time}) · "
                f"{len(shot.addresses)} allocations, {format_number(shot.allocated)} {unit} · "
                f"{format_number(layout.size)} {unit} per cell")

    def _legend(self, layout: Any, theme: Any, width: int, base: Style) -> Strip:
        heap = self.heap
        segments: list[Segment] = []
        if layout.mode == "heat":
            segments.append(Segment("cold ", base))
            if theme is None:
                segments.append(Segment(_HEAT_GLYPHS, base))
            else:
                for colour in theme.heat:
                    segments.append(Segment("█", base + Style(color=_style_colour(colour))))
            segments.append(Segment(f" hot: 1 .. {layout.hottest} allocations per cell", base))
            return Strip(segments).crop(0, width).adjust_cell_length(width, base)
        shown = sorted({v for v in layout.values if v >= 0})
        for site in shown:
            glyph = _site_glyph(site)
            if theme is None:
                segments.append(Segment(glyph, base))
            else:
                colour = theme.colour(site)
                segments.append(Segment(glyph, base + Style(color=_style_colour(theme.on_block),
                                                             bgcolor=_style_colour(colour))))
            segments.append(Segment(f" {heap.sites[site].function or '?'}  ", base))
        return Strip(segments).crop(0, width).adjust_cell_length(width, base)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if self.picture is None:
            return Strip([Segment(fit("drawing…" if y == 0 else "", width), base)])
        layout, theme = self.picture
        if y == 0:
            style = base + self.get_component_rich_style("heap--header", partial=True)
            return Strip([Segment(fit(self._header(layout), width), style)])
        row = y - 1
        if row == layout.rows:
            return self._legend(layout, theme, width, base)
        if row > layout.rows:
            return Strip.blank(width, base)
        label_style = base + self.get_component_rich_style("heap--label", partial=True)
        free_style = base + self.get_component_rich_style("heap--free", partial=True)
        cursor_style = self.get_component_rich_style("heap--cursor", partial=True)
        first = row * layout.columns
        segments = [Segment(f"{layout.address_of(first):#0{layout.label - 1}x} ", label_style)]
        hottest = layout.hottest or 1
        for cell in range(first, min(first + layout.columns, len(layout.values))):
            value = layout.values[cell]
            if value < 0 or (layout.mode == "heat" and value == 0):
                text, style = "·", free_style
            elif layout.mode == "heat":
                if theme is None:
                    level = (value - 1) / (hottest - 1) if hottest > 1 else 1.0
                    text = _HEAT_GLYPHS[min(int(level * len(_HEAT_GLYPHS)), len(_HEAT_GLYPHS) - 1)]
                    style = base
                else:
                    text, style = "█", base + Style(color=_style_colour(theme.heat_colour(value / hottest)))
            else:
                text = _site_glyph(value)
                style = base if theme is None else base + Style(
                    color=_style_colour(theme.on_block), bgcolor=_style_colour(theme.colour(value)))
            if cell == self.cell and self.has_focus:
                style = style + cursor_style
            segments.append(Segment(text, style))
        return Strip(segments).adjust_cell_length(width, base)

    def _describe(self) -> None:
        if self.picture is None:
            return
        layout, _theme = self.picture
        if not layout.values:
            return
        start = layout.address_of(self.cell)
        end = start + layout.size - 1
        where = f"{start:#x}..{end:#x}"
        heap = self.heap
        if layout.mode == "heat":
            count = layout.values[self.cell]
            self.status(f"{where}: touched by {count} allocation{'s' * (count != 1)} · t: sites of one snapshot")
            return
        found = allocations_in(heap, layout.snapshot, start, end)
        if not found:
            self.status(f"{where}: free · ←/→ snapshots · t: heat · h/j/k/l: cursor")
            return
        address, amount, site = found[0]
        more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
        self.status(f"{where}: {heap.sites[site].label} · {format_number(amount)} {heap.unit} at {address:#x}{more}")

    # -- actions --------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("snapshot", "animate"):
            return self.model is not None and self.mode == "heap" and len(self.heap.snapshots) > 1
        return True

    def action_snapshot(self, step: int) -> None:
        if self.model is None or self.mode != "heap":
            return
        count = len(self.heap.snapshots)
        self.snapshot = (self.snapshot + step) % count
        self.request()

    def action_heat(self) -> None:
        if self.model is None:
            return
        self._stop()
        self.mode = "heat" if self.mode == "heap" else "heap"
        self.refresh_bindings()
        self.request()

    def action_cell(self, dx: int, dy: int) -> None:
        if self.picture is None:
            return
        layout, _theme = self.picture
        cell = self.cell + dx + dy * layout.columns
        if 0 <= cell < len(layout.values):
            self.cell = cell
            self.refresh()
            self._describe()

    def action_animate(self) -> None:
        if self.model is None:
            return
        if self._timer is not None:
            self._stop()
            return
        self._timer = self.set_interval(0.7, functools.partial(self.action_snapshot, 1))

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self.picture is None:
            return
        layout, _theme = self.picture
        row, column = event.y - 1, event.x - layout.label
        if 0 <= row < layout.rows and 0 <= column < layout.columns:
            cell = row * layout.columns + column
            if cell < len(layout.values) and cell != self.cell:
                self.cell = cell
                self.refresh()
                self._describe()

    def _on_focus(self, event: events.Focus) -> None:
        super()._on_focus(event)
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        super()._on_blur(event)
        self.refresh()


_HEAT_GLYPHS = ".:-=+*#%@"
_SITE_GLYPHS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _site_glyph(site: int) -> str:
    return _SITE_GLYPHS[site % len(_SITE_GLYPHS)]


def _style_colour(rgb: tuple[int, int, int]) -> str:
    return f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"


def _block_colour(theme: Any, name: str) -> tuple[int, int, int]:
    """A frame's colour: the warm half of the heat ramp, picked by a stable hash of its name."""
    import zlib

    ramp = theme.heat[len(theme.heat) // 2:] or theme.heat
    return ramp[zlib.crc32(name.encode("utf-8", "replace")) % len(ramp)]


# -- the screen -----------------------------------------------------------------------------

class PlotScreen(Screen[None]):
    """Plots of one profile; ``s``, ``b``, ``l``, ``f``, ``m`` switch views, escape goes back."""

    TITLE = "perun · plot"

    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("escape", "close", "Back", key_display="esc", tooltip="Back to the profiles", id="plot.close"),
        Binding("s", "view('scatter')", "Scatter", show=False, tooltip="Scatter of amount per size with models",
                id="plot.scatter"),
        Binding("b", "view('bars')", "Bars", show=False, tooltip="Bars of an aggregation", id="plot.bars"),
        Binding("w", "view('flow')", "Flow", show=False, tooltip="Flow: lines through the snapshots or runs",
                id="plot.flow"),
        Binding("f", "view('flamegraph')", "Flame graph", show=False, tooltip="Flame graph (icicle) of the traces",
                id="plot.flamegraph"),
        Binding("m", "view('heapmap')", "Heap map", show=False, tooltip="Heap map of a memory profile",
                id="plot.heapmap"),
    ]

    def __init__(self, info: ProfileInfo, minor: str | None, view: str | None = None) -> None:
        super().__init__()
        self.info = info
        self.minor = minor
        self.requested = view
        self.view: str | None = None
        self.profile: Any = None
        self.models: dict[str, Any] = {}
        self.errors: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="plot-pane", classes="pane"):
            yield Static("", id="plot-views")
            with ContentSwitcher(id="plot-switcher", initial="plot-message"):
                yield Static("loading the profile…", id="plot-message")
                yield ChartView(id="plot-chart")
                yield FlameView(id="plot-flame")
                yield HeapView(id="plot-heap")
            yield Static("", id="plot-status")
        yield Footer()

    def on_mount(self) -> None:
        pane = self.query_one("#plot-pane")
        where = f" at {self.minor[:7]}" if self.info.registered and self.minor else " (pending)"
        pane.border_title = f"Plot · {self.info.tag} {self.info.type}{where}"
        pane.border_subtitle = " ".join(p for p in (self.info.cmd, self.info.args, self.info.workload) if p)
        self._show_views()
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self.load()

    def _theme_changed(self, _theme: Any) -> None:
        widget = self.current_widget
        if widget is not None:
            widget.request()

    @property
    def current_widget(self) -> PictureWidget | None:
        current = self.query_one(ContentSwitcher).current
        if current in ("plot-chart", "plot-flame", "plot-heap"):
            return self.query_one(f"#{current}", PictureWidget)
        return None

    # -- loading -------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="plot-load", description="loading a profile")
    def load(self) -> None:
        try:
            loaded = self.app.core.load(self.info, self.minor)
        except PerunError as error:
            self.post_message(PlotProfileLoaded(None, error.message))
            return
        self.post_message(PlotProfileLoaded(loaded))

    def on_plot_profile_loaded(self, message: PlotProfileLoaded) -> None:
        if message.loaded is None:
            self.app.notify(message.error, title="error", severity="error", timeout=10, markup=False)
            self._message(message.error)
            return
        self.profile = message.loaded.profile
        self.action_view(self.requested or default_view(self.profile.type))

    @work(thread=True, exit_on_error=False, group="plot-model", description="building a view")
    def build(self, view: str) -> None:
        try:
            model = self.app.core.view_model(self.profile, view, view_params(view, self.profile.type))
        except PerunError as error:
            self.post_message(PlotModelBuilt(view, None, error.message))
            return
        self.post_message(PlotModelBuilt(view, model))

    def on_plot_model_built(self, message: PlotModelBuilt) -> None:
        if message.error:
            self.errors[message.view] = message.error
            if message.view == self.view:
                self.app.notify(_unprefixed(message.view, message.error), title=VIEW_LABELS[message.view],
                                severity="warning", markup=False)
        else:
            self.models[message.view] = message.model
        if message.view == self.view:
            self._show_model()

    # -- views ---------------------------------------------------------------------------
    def action_view(self, view: str) -> None:
        self.view = view
        self._show_views()
        if self.profile is None:
            return
        if view in self.models or view in self.errors:
            self._show_model()
        else:
            self._message(f"building the {VIEW_LABELS[view]}…")
            self.build(view)

    def _show_model(self) -> None:
        view = self.view
        if view in self.errors:
            self._message(f"{VIEW_LABELS[view]}: {_unprefixed(view, self.errors[view])}")
            self.query_one("#plot-status", Static).update("s b w f m: other views · esc: back")
            return
        widget_id = {"flamegraph": "plot-flame", "heapmap": "plot-heap"}.get(view, "plot-chart")
        widget = self.query_one(f"#{widget_id}", PictureWidget)
        self.query_one(ContentSwitcher).current = widget_id
        widget.set_model((profile_key(self.info), view), view, self.models[view])
        widget.focus()
        self.refresh_bindings()

    def _message(self, text: str) -> None:
        self.query_one("#plot-message", Static).update(Text(text))
        self.query_one(ContentSwitcher).current = "plot-message"
        self.query_one("#plot-status", Static).update("")

    def _show_views(self) -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        for view, key, label in VIEWS:
            style = "reverse bold" if view == self.view else ""
            line.append(f" {key} ", style=style or "bold")
            line.append(f"{label} ", style=style)
            line.append(" ")
        self.query_one("#plot-views", Static).update(line)

    def on_plot_status(self, message: PlotStatus) -> None:
        self.query_one("#plot-status", Static).update(Text(message.text, no_wrap=True, overflow="ellipsis"))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)

    def action_close(self) -> None:
        self.dismiss(None)

    def palette_commands(self) -> Iterator[PaletteCommand]:
        for view, _key, label in VIEWS:
            yield PaletteCommand(f"plot: {label}", f"Show the profile as a {label}",
                                 functools.partial(self.action_view, view))
        # the commands of the view on screen
        if self.view == "scatter":
            chart = self.query_one(ChartView)
            yield PaletteCommand("plot: next uid", "Scatter: the next uid", functools.partial(chart.action_uid, 1))
            yield PaletteCommand("plot: previous uid", "Scatter: the previous uid",
                                 functools.partial(chart.action_uid, -1))
        elif self.view == "flamegraph":
            flame = self.query_one(FlameView)
            yield PaletteCommand("plot: zoom into frame", "Flame graph: zoom into the selected frame",
                                 flame.action_zoom)
            yield PaletteCommand("plot: back out of zoom", "Flame graph: back out one level", flame.action_unzoom)
        elif self.view == "heapmap":
            heap = self.query_one(HeapView)
            yield PaletteCommand("plot: next snapshot", "Heap map: the next snapshot",
                                 functools.partial(heap.action_snapshot, 1))
            yield PaletteCommand("plot: previous snapshot", "Heap map: the previous snapshot",
                                 functools.partial(heap.action_snapshot, -1))
            yield PaletteCommand("plot: toggle heat mode", "Heap map: sites of one snapshot or heat of all",
                                 heap.action_heat)
            yield PaletteCommand("plot: play snapshots", "Heap map: step through the snapshots by itself",
                                 heap.action_animate)
        yield PaletteCommand("plot: close", "Back to the profiles", self.action_close)
        yield PaletteCommand("help: keys", "List every key", self.app.action_help)
