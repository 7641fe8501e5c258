"""The heap map in the plot pane: a snapshot's address space by allocation site, or the heat of all."""

from __future__ import annotations

import functools
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.strip import Strip

from perun_core import api
from perun_core.api import format_amount

from ...formatting import fit
from .picture import PictureWidget, style_colour


#: the footer shows both snapshot keys as one item
SNAPSHOT_KEYS = Binding.Group("Snapshot")
#: what t does, in either mode
HEAT_TIP = "Heap map: switch between sites and the heat of all snapshots"


class HeapView(PictureWidget):
    """The heap map: one snapshot's address space by allocation site, or the heat of all snapshots."""

    HELP_NAME = "heap map"

    COMPONENT_CLASSES = {"heap--header", "heap--label", "heap--free", "heap--cursor"}
    BINDINGS = [
        Binding("left", "snapshot(-1)", "Previous snapshot", key_display="←",
                tooltip="Heap map: the previous snapshot", id="plot.previous_snapshot", group=SNAPSHOT_KEYS),
        Binding("right", "snapshot(1)", "Next snapshot", key_display="→", tooltip="Heap map: the next snapshot",
                id="plot.next_snapshot", group=SNAPSHOT_KEYS),
        # t's label says what it switches to: the heat of all snapshots, or back to one snapshot at a time
        # (which ← → step through; their hint is gone while the heat shows).  One tooltip: F1 lists a key once
        Binding("t", "heat", "Heat", tooltip=HEAT_TIP, id="plot.heat"),
        Binding("t", "sites", "Snapshots", tooltip=HEAT_TIP, id="plot.sites"),
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
        layout = api.layout_heap(model.heap, width, max(height - 2, 1), max(snapshot, 0), mode)
        # a header or a legend wider than the pane goes on as many lines as it needs, the map giving up rows
        # for them (cut, the header lost the scale of the cells, '16 B per cell', at 40 columns)
        lines = len(packed([len(glyph) + len(text) for _key, glyph, text in legend_entries(model.heap, layout)],
                           width))
        header = len(header_lines(header_parts(model.heap, layout), width))
        if (lines > 1 or header > 1) and layout.rows + header + lines > height:
            layout = api.layout_heap(model.heap, width, max(height - header - lines, 1), max(snapshot, 0), mode)
        return layout, theme

    def picture_shown(self) -> None:
        layout, _theme = self.picture
        self.cell = min(self.cell, max(len(layout.values) - 1, 0))
        self._describe()

    # -- drawing ---------------------------------------------------------------------------
    def _header(self, layout: Any, width: int) -> list[str]:
        return header_lines(header_parts(self.heap, layout), width)

    def _legend(self, layout: Any, theme: Any, width: int, base: Style) -> list[Strip]:
        """The legend's lines: each shade (or site letter) drawn as the cells draw it, with what it stands for."""
        free = base + self.get_component_rich_style("heap--free", partial=True)
        hottest = layout.hottest or 1
        entries: list[list[Segment]] = []
        for key, glyph, text in legend_entries(self.heap, layout):
            if glyph and layout.mode == "heat":
                style = free if key == "none" else self._heat_style(int(str(key).rpartition("-")[2]), hottest, theme,
                                                                     base)
            elif glyph and theme is not None:
                style = base + Style(color=style_colour(theme.on_block), bgcolor=style_colour(theme.colour(key)))
            else:
                style = base
            entries.append([Segment(glyph, style), Segment(text, base)] if glyph else [Segment(text, base)])
        strips = []
        for line in packed([text_width_of(entry) for entry in entries], width):
            segments: list[Segment] = []
            for index in line:
                if segments:
                    segments.append(Segment("  ", base))
                segments.extend(entries[index])
            strip = Strip(segments)
            if strip.cell_length > width:  # one entry alone wider than the pane
                strip = Strip([*strip.crop(0, max(width - 1, 0)), Segment("…", base)])
            strips.append(strip.adjust_cell_length(width, base))
        return strips

    @staticmethod
    def _heat_style(count: int, hottest: int, theme: Any, base: Style) -> Style:
        """The style of a heat shade: its colour of the theme's ramp, none without colour."""
        return base if theme is None else base + Style(color=style_colour(theme.heat_colour(count / hottest)))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if self.picture is None:
            return Strip([Segment(fit(self.placeholder() if y == 0 else "", width), base)])
        layout, theme = self.picture
        header = self._header(layout, width)
        if y < len(header):
            style = base + self.get_component_rich_style("heap--header", partial=True)
            return Strip([Segment(fit(header[y], width), style)])
        row = y - len(header)
        if row >= layout.rows:
            legend = self._legend(layout, theme, width, base)
            return legend[row - layout.rows] if row - layout.rows < len(legend) else Strip.blank(width, base)
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
                text, style = api.heat_glyph(value, hottest), self._heat_style(value, hottest, theme, base)
            else:
                text = api.site_glyph(value)
                style = base if theme is None else base + Style(
                    color=style_colour(theme.on_block), bgcolor=style_colour(theme.colour(value)))
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
        found = api.allocations_in(heap, layout.snapshot, start, end)
        if not found:
            self.status(f"{where}: free · ←/→ snapshots · t: heat · h/j/k/l: cursor")
            return
        address, amount, site = found[0]
        more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
        self.status(f"{where}: {heap.sites[site].label} · {format_amount(amount, heap.unit)} at {address:#x}{more}")

    # -- actions --------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("snapshot", "animate"):
            return self.model is not None and self.mode == "heap" and len(self.heap.snapshots) > 1
        if action == "heat":
            return self.mode == "heap"
        if action == "sites":
            return self.mode == "heat"
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

    def action_sites(self) -> None:
        """From the heat back to one snapshot's sites (t, labelled so while the heat shows)."""
        if self.mode == "heat":
            self.action_heat()

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
        row, column = event.y - len(self._header(layout, self.size.width)), event.x - layout.label
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


def header_parts(heap: Any, layout: Any) -> list[str]:
    """The parts of the map's header line, each read whole: what is shown, how many, and the cells' scale."""
    unit = heap.unit
    if layout.mode == "heat":
        allocations = sum(len(s.addresses) for s in heap.snapshots)
        return [f"heat of {len(heap.snapshots)} snapshots", f"{allocations} allocations",
                f"{format_amount(layout.size, unit)} per cell", f"hottest {layout.hottest}"]
    shot = heap.snapshots[layout.snapshot]
    # numbered from 0 as the profile stores them, as `show heapmap -s` takes them and the bars' axis labels them
    return [f"snapshot {layout.snapshot} of 0–{len(heap.snapshots) - 1} (time {shot.time_text})",
            f"{len(shot.addresses)} allocations, {format_amount(shot.allocated, unit)}",
            f"{format_amount(layout.size, unit)} per cell"]


def header_lines(parts: list[str], width: int) -> list[str]:
    """``parts`` joined by `` · `` on as few lines of ``width`` as they fit, a part never split between two
    (one wider than a line alone is cut with an ellipsis where it is drawn)."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return lines or [""]


def legend_entries(heap: Any, layout: Any) -> list[tuple[Any, str, str]]:
    """(key, glyph, text) of each entry of a layout's legend: heat shades keyed by their bounds, sites by number."""
    if layout.mode == "heat":
        entries: list[tuple[Any, str, str]] = [(bounds, shade, f" {bounds}")
                                               for shade, bounds in api.heat_legend(layout.hottest or 1)]
        return entries + [("", "", "allocations per cell")]
    return [(site, api.site_glyph(site), f" {heap.sites[site].function or '?'}")
            for site in sorted({v for v in layout.values if v >= 0})]


def text_width_of(segments: list[Segment]) -> int:
    return sum(segment.cell_length for segment in segments)


def packed(sizes: list[int], width: int) -> list[list[int]]:
    """Entry indexes in order on as few lines of ``width`` as fit, two cells apart (an entry wider alone)."""
    lines: list[list[int]] = []
    used = 0
    for index, size in enumerate(sizes):
        if lines and used + 2 + size <= width:
            lines[-1].append(index)
            used += 2 + size
        else:
            lines.append([index])
            used = size
    return lines
