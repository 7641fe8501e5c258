"""What the plot screen draws, computed off the UI thread.

Charts (scatter, bars, flow) are drawn by perun_core's plotting adapter
(through :class:`~perun_tui.core.Core`) and arrive as ANSI text.  The flame
graph and the heap map are drawn here, from the data models the views
build, because they are interactive: :func:`layout_flame` places the frames
of a (zoomed) call tree on rows of a given width, :func:`layout_heap` cuts
the address space into the cells a given size holds.  Both are plain
functions of their inputs, so the widgets run them in thread workers and
cache the results by size.

:func:`plot_theme` turns the app's theme into the RGB colours the views
take; under NO_COLOR it is None, and every picture falls back to glyphs.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.color import Color

if TYPE_CHECKING:
    from textual.app import App

    from perun_core.views.flamegraph import Frame
    from perun_core.views.heapmap import HeapMap

RGB = tuple[int, int, int]


# -- colours --------------------------------------------------------------------------

def _rgb(color: Color) -> RGB:
    return (color.r, color.g, color.b)


def _readable(color: Color, background: Color, foreground: Color) -> Color:
    """``color`` moved towards the text colour until it stands out from ``background``."""
    for step in range(5):
        if abs(color.brightness - background.brightness) >= 0.25:
            break
        color = color.blend(foreground, 0.25 + 0.1 * step)
    return color


def theme_key(app: App) -> str:
    """What a picture's colours depend on: the theme's name, or "plain" under NO_COLOR."""
    return "plain" if app.no_color else app.theme


def plot_theme(app: App) -> Any:
    """The views' Theme made of the app theme's colours (None under NO_COLOR)."""
    if app.no_color:
        return None
    variables = app.get_css_variables()

    def parse(name: str, fallback: str) -> Color:
        try:
            return Color.parse(variables.get(name, fallback))
        except Exception:  # noqa: BLE001 - a theme variable that is no colour ("auto 87%")
            return Color.parse(fallback)

    background = parse("surface", "#1e1e1e")
    foreground = parse("foreground", "#e0e0e0")
    series: list[RGB] = []
    for name in ("primary", "accent", "success", "error", "secondary", "warning"):
        rgb = _rgb(_readable(parse(name, "#888888"), background, foreground))
        if rgb not in series:
            series.append(rgb)
    cold, warm, hot = parse("primary", "#0178d4"), parse("warning", "#fea62b"), parse("error", "#b93c5b")
    heat = tuple(_rgb(cold.blend(warm, i / 4)) for i in range(4)) + tuple(_rgb(warm.blend(hot, i / 4))
                                                                          for i in range(5))
    muted = foreground.blend(background, 0.45)
    from .core import Core

    # labels on coloured blocks (flame frames, heap sites) are black: the blocks are light enough
    return Core.theme(tuple(series), heat, _rgb(foreground), _rgb(muted), _rgb(background), (0, 0, 0))


# -- a small cache ------------------------------------------------------------------------

class PictureCache:
    """The last ``size`` pictures by key (profile, view, state, width, height, theme)."""

    def __init__(self, size: int = 48) -> None:
        self.size = size
        self._items: OrderedDict[tuple, Any] = OrderedDict()

    def get(self, key: tuple) -> Any:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def put(self, key: tuple, value: Any) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


# -- flame graph --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Span:
    """A frame placed on a row: columns ``start`` .. ``end`` (exclusive)."""

    start: int
    end: int
    frame: Frame
    parent: Frame | None


@dataclass(slots=True)
class FlameLayout:
    """The rows of an icicle with ``root`` on top; ``hidden`` levels did not fit."""

    root: Frame
    width: int
    rows: list[list[Span]]
    hidden: int = 0
    where: dict[int, tuple[int, int]] = field(default_factory=dict)  # id(frame) -> (row, index)

    def find(self, frame: Frame) -> tuple[int, int] | None:
        return self.where.get(id(frame))


def layout_flame(root: Frame, width: int, levels: int) -> FlameLayout:
    """Frames under ``root`` as rows, each as wide as its share of ``root`` (narrower than a column: left out)."""
    rows: list[list[Span]] = []
    total = root.total or 1

    def place(frame: Frame, parent: Frame | None, start: float, depth: int) -> None:
        end = start + frame.total / total * width
        first, last = round(start), round(end)
        if last <= first:
            return
        while depth >= len(rows):
            rows.append([])
        rows[depth].append(Span(first, last, frame, parent))
        offset = start
        for child in frame.widest_first():
            place(child, frame, offset, depth + 1)
            offset += child.total / total * width

    place(root, None, 0.0, 0)
    hidden = max(len(rows) - levels, 0)
    rows = rows[:levels]
    layout = FlameLayout(root, width, rows, hidden)
    for number, row in enumerate(rows):
        for index, span in enumerate(row):
            layout.where[id(span.frame)] = (number, index)
    return layout


# -- heap map -------------------------------------------------------------------------------

@dataclass(slots=True)
class HeapLayout:
    """One map: ``columns`` cells per row of ``size`` bytes each, from ``low``; ``values`` per cell.

    In heap mode ``values`` are site indexes (-1: free), in heat mode the
    number of allocations that touched the cell (``hottest`` the most).
    """

    mode: str
    snapshot: int
    low: int
    columns: int
    label: int
    size: int
    values: list[int]
    hottest: int = 0

    @property
    def rows(self) -> int:
        return -(-len(self.values) // self.columns)

    def address_of(self, cell: int) -> int:
        return self.low + cell * self.size


def layout_heap(heap: HeapMap, width: int, rows: int, snapshot: int, mode: str) -> HeapLayout:
    """Cells of a power-of-two size so that the whole address range fits ``rows`` rows of ``width`` columns.

    A row holds a multiple of 16 cells when the width allows, so the row
    labels are round hexadecimal addresses.
    """
    label = len(f"{heap.high:#x}") + 1
    room = max(width - label - 1, 1)
    columns = room - room % 16 if room >= 16 else room
    size = 1 << (heap.size_for(columns * max(rows, 1)) - 1).bit_length()
    if mode == "heat":
        values = heap.heat_cells(size)
        return HeapLayout(mode, snapshot, heap.low, columns, label, size, values, max(values, default=0))
    return HeapLayout(mode, snapshot, heap.low, columns, label, size, heap.site_cells(snapshot, size))


def allocations_in(heap: HeapMap, snapshot: int, start: int, end: int) -> list[tuple[int, float, int]]:
    """``(address, amount, site)`` of the allocations of ``snapshot`` overlapping bytes ``start`` .. ``end``."""
    found = []
    shot = heap.snapshots[snapshot]
    for address, amount, site in zip(shot.addresses, shot.amounts, shot.sites):
        last = address + max(int(-(-amount // 1)), 1) - 1
        if address <= end and last >= start:
            found.append((address, amount, site))
    return found
