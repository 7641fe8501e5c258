"""Heap maps of memory profiles: the address space per snapshot (spec §6.1.4).

The allocated address range (from the lowest allocation to the last byte of
the highest, over all snapshots) is cut into equal cells.  In *heap* mode
every snapshot gets a map whose cells show the allocation site (uid) owning
most of the cell's bytes; in *heat* mode one map counts, for every cell,
the allocations of all snapshots that touched it -- the hotter, the more
often memory there was allocated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..amounts import format_amount
from ..errors import EmptyProfile, InvalidParameter
from ..profile.convert import to_heap_map_format
from ..safetext import escape_controls
from .base import Param, RenderOptions, View
from .fits import needs_addresses
from .style import fit, paint

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile
    from .style import Theme

#: Letters marking allocation sites in plain text, in site order (then cycling).
SITE_GLYPHS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#: Heat glyphs from one allocation up to the hottest cell: shades, so the heat reads without colour
#: (with a theme each is painted in its colour of the heat ramp as well).
HEAT_GLYPHS = "░▒▓█"
EMPTY = "·"


@dataclass(frozen=True, slots=True)
class Site:
    """An allocation site (a resource's uid)."""

    function: str
    source: str
    line: object

    @property
    def label(self) -> str:
        where = f"{self.source}:{self.line}" if self.source else ""
        name = self.function or "?"
        return f"{name} ({where})" if where else name


@dataclass(slots=True)
class HeapSnapshot:
    """The allocations of one snapshot: parallel lists of start address, size and site index."""

    time: str
    addresses: list[int]
    amounts: list[float]
    sites: list[int]

    @property
    def allocated(self) -> float:
        return sum(self.amounts)

    @property
    def time_text(self) -> str:
        """When the snapshot was taken, in seconds since the start (``15.0 ms``); a time that is no number as it is."""
        try:
            seconds = float(self.time)
        except (TypeError, ValueError):
            return escape_controls(str(self.time))
        return format_amount(seconds, "s")


@dataclass(slots=True)
class HeapMap:
    """Allocations of every snapshot over the address range ``low`` .. ``high`` (inclusive).

    The data model both front ends draw: the CLI renders it as text
    (:func:`render_text`), the TUI's interactive widget asks it for cells at
    its own size (:meth:`size_for` the bytes per cell that fit, then
    :meth:`site_cells` or :meth:`heat_cells`).
    """

    unit: str
    low: int
    high: int
    sites: list[Site]
    snapshots: list[HeapSnapshot]

    @property
    def span(self) -> int:
        return self.high - self.low + 1

    def size_for(self, cells: int) -> int:
        """The fewest bytes per cell that fit the whole range into ``cells`` cells."""
        return max(-(-self.span // max(cells, 1)), 1)

    def cell_count(self, size: int) -> int:
        """Cells of ``size`` bytes covering the range."""
        return -(-self.span // size)

    def _ranges(self, snapshot: HeapSnapshot, size: int) -> list[tuple[int, int, int, int, int]]:
        """``(first cell, last cell, first byte, last byte, site)`` of each allocation."""
        out = []
        for address, amount, site in zip(snapshot.addresses, snapshot.amounts, snapshot.sites):
            last_byte = address + max(math.ceil(amount), 1) - 1
            out.append(((address - self.low) // size, (last_byte - self.low) // size, address, last_byte, site))
        return out

    def site_cells(self, snapshot: int, size: int) -> list[int]:
        """For cells of ``size`` bytes, the site owning most of each cell in ``snapshot`` (-1: free)."""
        count = self.cell_count(size)
        owner = [-1] * count
        best = [0] * count
        for first, last, start, end, site in self._ranges(self.snapshots[snapshot], size):
            for cell in range(first, last + 1):
                cell_start = self.low + cell * size
                overlap = min(end, cell_start + size - 1) - max(start, cell_start) + 1
                if overlap > best[cell]:
                    best[cell] = overlap
                    owner[cell] = site
        return owner

    def heat_cells(self, size: int) -> list[int]:
        """For cells of ``size`` bytes, how many allocations of all snapshots overlapped each."""
        count = self.cell_count(size)
        diff = [0] * (count + 1)
        for snapshot in self.snapshots:
            for first, last, _start, _end, _site in self._ranges(snapshot, size):
                diff[first] += 1
                diff[last + 1] -= 1
        heat = []
        running = 0
        for step in diff[:-1]:
            running += step
            heat.append(running)
        return heat


@dataclass(slots=True)
class HeapMapResult:
    """What the view builds: the heap map and what to render of it (``mode``, one ``snapshot`` or all)."""

    heap: HeapMap
    mode: str
    snapshot: int | None


def build(profile: Profile, *, mode: str, snapshot: int | None) -> HeapMapResult:
    """The heap map of a memory profile (``mode`` and ``snapshot`` only matter when rendering)."""

    data = to_heap_map_format(profile)
    stats = data["stats"]
    if not stats["allocations"]:
        raise EmptyProfile("heapmap", "allocations (resources with an integer 'address' and an 'amount')")
    sites = [Site(i["function"], i["source"], i["line"]) for i in data["info"]]
    snapshots = [
        HeapSnapshot(
            time=s["time"],
            addresses=[e["address"] for e in s["map"]],
            amounts=[e["amount"] for e in s["map"]],
            sites=[e["uid"] for e in s["map"]],
        )
        for s in data["snapshots"]
    ]
    if snapshot is not None and snapshot >= len(snapshots):
        raise InvalidParameter("heapmap", "snapshot", snapshot, f"a snapshot number from 0 to {len(snapshots) - 1}")
    heap = HeapMap(data["unit"], stats["min_address"], stats["max_address"], sites, snapshots)
    return HeapMapResult(heap, mode, snapshot)


# -- text rendering -------------------------------------------------------------------------

def site_glyph(site: int) -> str:
    """The letter marking allocation site ``site`` in plain text (cycling after 62 sites)."""
    return SITE_GLYPHS[site % len(SITE_GLYPHS)]


def _heat_level(count: int, hottest: int) -> int:
    """The index in :data:`HEAT_GLYPHS` of ``count`` allocations (1 .. ``hottest``), in whole numbers."""
    levels = len(HEAT_GLYPHS)
    if hottest <= 1:
        return levels - 1
    return min(max(count - 1, 0) * levels // (hottest - 1), levels - 1)


def heat_glyph(count: int, hottest: int) -> str:
    """The shade of a cell touched by ``count`` allocations (1 .. ``hottest``)."""
    return HEAT_GLYPHS[_heat_level(count, hottest)]


def heat_levels(hottest: int) -> list[tuple[str, int, int]]:
    """``(glyph, fewest, most)`` allocations each shade stands for when the hottest cell has ``hottest``.

    Shades that no count reaches (a map cooler than there are shades) are left out; the
    ranges follow one another from 1 to ``hottest``.
    """
    hottest = max(hottest, 1)
    levels = len(HEAT_GLYPHS)
    if hottest == 1:
        return [(HEAT_GLYPHS[-1], 1, 1)]
    # the fewest count of shade i: the smallest c with (c - 1) * levels // (hottest - 1) >= i
    lows = [-(-i * (hottest - 1) // levels) + 1 for i in range(levels)] + [hottest + 1]
    return [(HEAT_GLYPHS[i], lows[i], lows[i + 1] - 1) for i in range(levels) if lows[i] < lows[i + 1]]


def heat_legend(hottest: int) -> list[tuple[str, str]]:
    """The heat scale as ``(glyph, range)`` pairs: ``("░", "1-3")`` ... (``("·", "none")`` first)."""
    return [(EMPTY, "none")] + [(glyph, str(low) if low == high else f"{low}-{high}")
                                for glyph, low, high in heat_levels(hottest)]


@dataclass(slots=True)
class HeapLayout:
    """One map: ``columns`` cells per row of ``size`` bytes each, from ``low``; ``values`` per cell.

    In heap mode ``values`` are site indexes (-1: free), in heat mode the
    number of allocations that touched the cell (``hottest`` the most).
    ``label`` is the width of the row label (the address and a space).
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
    """The cells of a map at most ``width`` wide and ``rows`` high (``mode`` "heap": of ``snapshot``; "heat").

    Cells hold a power of two of bytes and rows a multiple of 16 cells (when
    the width allows), so row addresses are round hexadecimal numbers.  A
    row is the address label, a border, the cells and a border: the text
    map draws the borders, the TUI's map leaves their two columns free, so a
    map has the same cells in both at the same width.
    """
    label = len(f"{heap.high:#x}") + 1
    room = max(width - label - 2, 1)
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
        last = address + max(math.ceil(amount), 1) - 1
        if address <= end and last >= start:
            found.append((address, amount, site))
    return found


def _map_lines(layout: HeapLayout, glyph: Callable[[int], str]) -> list[str]:
    lines = []
    for start in range(0, len(layout.values), layout.columns):
        row = "".join(glyph(v) for v in layout.values[start:start + layout.columns])
        lines.append(f"{layout.address_of(start):#0{layout.label - 1}x} │{row}│")
    return lines


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _legend(entries: list[str], width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for entry in entries:
        entry = fit(entry, width)
        if current and len(current) + 3 + len(entry) > width:
            lines.append(current)
            current = entry
        else:
            current = f"{current}   {entry}" if current else entry
    if current:
        lines.append(current)
    return lines


def _rows_for(height: int, legend: int) -> int:
    # a header line above, the legend below
    return max(height - 1 - legend, 1)


def _site_legend(heap: HeapMap, number: int, width: int) -> list[str]:
    """Lines naming the sites of one snapshot with the amount each holds there."""
    snapshot = heap.snapshots[number]
    per_site: dict[int, float] = {}
    for amount, site in zip(snapshot.amounts, snapshot.sites):
        per_site[site] = per_site.get(site, 0) + amount
    entries = [f"{site_glyph(s)} {heap.sites[s].label}: {format_amount(per_site[s], heap.unit)}"
               for s in sorted(per_site)]
    return _legend(entries, width)


def render_heap(heap: HeapMap, number: int, options: RenderOptions, *, legend_rows: int | None = None) -> str:
    """One snapshot's map: a header, rows of cells (site letters, ``·`` free) and the legend.

    ``legend_rows`` reserves room for that many legend lines (maps of several
    snapshots reserve the most any of them needs, so all share one scale).
    """
    theme = options.theme
    snapshot = heap.snapshots[number]
    legend = _site_legend(heap, number, options.width)
    reserved = max(len(legend), legend_rows or 0)
    layout = layout_heap(heap, options.width, _rows_for(options.height, reserved), number, "heap")
    size = layout.size

    def glyph(site: int) -> str:
        if site < 0:
            return paint(EMPTY, colour=theme.axes) if theme is not None and theme.axes else EMPTY
        if theme is None:
            return site_glyph(site)
        return paint(site_glyph(site), colour=theme.on_block, background=theme.colour(site))

    header = (f"snapshot {number} (time {snapshot.time_text}): {_plural(len(snapshot.addresses), 'allocation')}, "
              f"{format_amount(snapshot.allocated, heap.unit)}; {format_amount(size, heap.unit)} per cell")
    lines = [fit(header, options.width)]
    lines += _map_lines(layout, glyph)
    if theme is not None:
        legend = [_colour_legend(line, heap, theme) for line in legend]
    lines += legend
    return "\n".join(lines)


def _colour_legend(line: str, heap: HeapMap, theme: Theme) -> str:
    # colour the site letter at the start of each entry
    out = []
    for i, part in enumerate(line.split("   ")):
        if part and part[0] in SITE_GLYPHS:
            site = SITE_GLYPHS.index(part[0])
            part = paint(part[0], colour=theme.on_block, background=theme.colour(site)) + part[1:]
        out.append(part)
    return "   ".join(out)


def render_heat(heap: HeapMap, options: RenderOptions) -> str:
    """The heat map over all snapshots: glyphs (or colours) from one allocation to the hottest cell."""
    theme = options.theme
    layout = layout_heap(heap, options.width, _rows_for(options.height, 1), 0, "heat")
    heat, size = layout.values, layout.size
    hottest = layout.hottest or 1

    def glyph(count: int) -> str:
        if count <= 0:
            return paint(EMPTY, colour=theme.axes) if theme is not None and theme.axes else EMPTY
        shade = heat_glyph(count, hottest)
        return shade if theme is None else paint(shade, colour=theme.heat_colour(count / hottest))

    allocations = sum(len(s.addresses) for s in heap.snapshots)
    header = (f"heat map of {_plural(len(heap.snapshots), 'snapshot')}: {_plural(allocations, 'allocation')}; "
              f"{format_amount(size, heap.unit)} per cell; hottest cell {max(heat, default=0)}")
    # the scale says what each shade stands for, in the shades and colours of the map's cells
    legend = heat_legend(hottest)
    plain = "  ".join(f"{shade} {bounds}" for shade, bounds in legend)
    suffix = next((s for s in (" allocations per cell", " allocations", "") if len(plain + s) <= options.width), "")
    entries = [f"{glyph(0) if bounds == 'none' else glyph(int(bounds.rpartition('-')[2]))} {bounds}"
               for _shade, bounds in legend]
    return "\n".join([fit(header, options.width), *_map_lines(layout, glyph), "  ".join(entries) + suffix])


def render(shown: HeapMapResult, options: RenderOptions) -> str:
    if shown.mode == "heat":
        return render_heat(shown.heap, options)
    numbers = range(len(shown.heap.snapshots)) if shown.snapshot is None else [shown.snapshot]
    rows = max(len(_site_legend(shown.heap, n, options.width)) for n in numbers)
    return "\n\n".join(render_heap(shown.heap, n, options, legend_rows=rows) for n in numbers)


VIEW = View(
    name="heapmap",
    summary="The address space of a memory profile per snapshot, by allocation site, or as a heat map.",
    description=__doc__ or "",
    params=(
        Param("mode", help="heap: a map per snapshot by allocation site; heat: allocations over all snapshots.",
              kind="choice", flags=("--mode",), default="heap", choices=("heap", "heat")),
        Param("snapshot", help="Show only this snapshot (numbered from 0).", kind="int", flags=("-s", "--snapshot"),
              minimum=0, metavar="N"),
    ),
    fits=needs_addresses,
    build=build,
    render_result=render,
    profile_types=("memory",),
)
