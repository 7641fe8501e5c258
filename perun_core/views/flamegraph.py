"""Flame graphs: inclusive consumption by call trace (spec §6.1.2).

Any profile whose resources carry a call trace can be shown: memory, trace
and sampling (perf) profiles; so can profiles that record caller edges
instead (pytrace in both modes, callgrind), whose stacks are rebuilt from
the edges, each function's callees split in the proportions of its
callers.  Every frame is as wide as the total of --of of everything called
through it; deallocations and amounts that are not
positive do not count.  Trace profiles add up ``exclusive`` by default
(their ``amount`` is inclusive and would count nested calls twice), the
others ``amount``.

Outputs (--format, or the suffix of --filename):

* icicle: terminal text, the root on top, the widest frames first
* svg (.svg): an interactive flame graph in the style of Brendan Gregg's:
  a tooltip per frame, click to zoom, Search highlights the frames matching
  a regular expression (``#s=REGEX`` and ``#z=ID`` in the URL do the same
  on load); --width sets its width in pixels (default 1200)
* folded (.folded, .collapsed): ``root;...;leaf amount`` lines
* speedscope (.json): a file for speedscope.app
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..advice import HEIGHT
from ..errors import EmptyProfile, UnsupportedProfile
from ..profile.convert import folded_stacks
from ..profile.resources import MISSING
from .base import Param, RenderOptions, View, amount_unit, not_numeric, require_key, resource_keys
from .callgraph import caller_stacks
from .fits import needs_calls
# the SVG lives in its own module; its names stay importable from here
from .flamesvg import MIN_FRAME_WIDTH, SVG_WIDTH, frame_width, name_hash, render_svg, warm_colour  # noqa: F401
from ..amounts import format_amount
from .style import RGB, Theme, fit, format_number, pad, paint, text_width

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"
#: Profile types whose resources may carry traces (memory, tracer and sampling collectors).
TRACE_TYPES = ("memory", "mixed", "time")

#: speedscope knows these units; anything else becomes "none".
_SPEEDSCOPE_UNITS = {
    "b": "bytes", "byte": "bytes", "bytes": "bytes",
    "ns": "nanoseconds", "us": "microseconds", "µs": "microseconds", "ms": "milliseconds", "s": "seconds",
}


@dataclass(frozen=True, slots=True)
class FrameInfo:
    """Where a frame's code is: function name, source file and line (when known)."""

    function: str
    source: str | None = None
    line: int | None = None


@dataclass(slots=True)
class Frame:
    """A node of the flame graph: a frame reached by one call path.

    ``label`` is the frame as in the folded format (``function()~source~line``);
    ``total`` the inclusive amount of everything called through it.
    """

    label: str
    name: str
    total: float = 0
    children: dict[str, Frame] = field(default_factory=dict)

    @property
    def self_amount(self) -> float:
        """The amount consumed in this frame itself, not in its callees."""
        return self.total - sum(child.total for child in self.children.values())

    def widest_first(self) -> list[Frame]:
        return sorted(self.children.values(), key=lambda f: (-f.total, f.name, f.label))

    def alphabetical(self) -> list[Frame]:
        return sorted(self.children.values(), key=lambda f: (f.name, f.label))

    def depth(self) -> int:
        """Levels below this frame (0 for a leaf)."""
        return 1 + max((c.depth() for c in self.children.values()), default=-1)


@dataclass(slots=True)
class FlameGraph:
    """The merged call tree of a profile; ``root`` ("all") holds the total."""

    root: Frame
    of: str
    unit: str
    title: str
    folded: list[str]
    frames: dict[str, FrameInfo]

    @property
    def total(self) -> float:
        return self.root.total

    def amount(self, value: float) -> str:
        """``value`` with the graph's unit in its best prefix (``12.3 ms``, ``4.50 MiB``)."""
        return format_amount(value, self.unit)

    def share(self, frame: Frame) -> float:
        return frame.total / self.root.total if self.root.total else 0.0


def _display_name(label: str, info: FrameInfo | None) -> str:
    if info is not None:
        return f"{info.function}()"
    return label


def _frame_infos(entries: dict[str, Any]) -> dict[str, FrameInfo]:
    """Structured info for each frame label whose trace entry is a dict (``entries``: label -> entry)."""
    infos: dict[str, FrameInfo] = {}
    for label, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        name = entry.get("function", entry.get("func", entry.get("name", "?")))
        source = entry.get("source", entry.get("file"))
        line = entry.get("line")
        infos[label] = FrameInfo(str(name), None if source is None else str(source),
                                 line if isinstance(line, int) and not isinstance(line, bool) else None)
    return infos


def _parse_amount(text: str) -> float:
    number = float(text)
    return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number


def default_of(profile: Profile) -> str:
    """``exclusive`` when every resource with a trace carries it as a number, else ``amount``.

    The trace collector's ``amount`` is the inclusive duration of a call:
    added up along the stacks, a nested call would count once for itself
    and again in each caller.  Sampling profiles keep ``exclusive`` on
    separate rows without traces, so they add up ``amount``.
    """

    traced = False
    for _, region in profile.regions():
        table = region.resources
        if not len(table):
            continue
        if "exclusive" not in table.columns()[0]:
            if any(trace is not MISSING for trace in table.column("trace")):
                return "amount"
            continue
        for trace, value in zip(table.column("trace"), table.column("exclusive")):
            if trace is MISSING:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                return "amount"
            traced = True
    return "exclusive" if traced else "amount"


def build(profile: Profile, *, of: str | None, title: str | None) -> FlameGraph:
    """The flame graph of ``of`` (by default :func:`default_of`) over the call traces of ``profile``.

    The stacks come from :func:`perun_core.profile.convert.to_flame_graph_format`,
    so the same resources count here as in the folded format; they are
    merged into a tree of :class:`Frame` nodes whose ``total`` is the
    inclusive amount.
    """

    keys = resource_keys(profile, snapshots=False)
    from_edges = "trace" not in keys and "caller" in keys
    if of is None:
        of = "amount" if from_edges else default_of(profile)
    require_key("flamegraph", "of", profile, of, numeric=True, snapshots=False)
    folded, entries = ((caller_stacks(profile, of), {}) if from_edges else folded_stacks(profile, of))
    if not folded:
        if "trace" not in keys and "caller" not in keys:
            raise UnsupportedProfile(
                "flamegraph", profile.type, TRACE_TYPES,
                reason="its resources carry no call stacks ('trace') or caller edges ('caller')",
            )
        if of not in resource_keys(profile, numeric=True, snapshots=False):
            raise not_numeric("flamegraph", "of", profile, of)
        raise EmptyProfile("flamegraph", f"resources with a call trace and a positive '{of}'")
    infos = _frame_infos(entries)
    with paused_gc():
        root = _tree(folded, infos)
    unit = amount_unit(profile, of, having="caller" if from_edges else "trace")
    return FlameGraph(
        root=root,
        of=of,
        unit=unit,
        # no '[unit]': the total beside the title is in the unit's best prefix ('[ns]: total 1.89 ms' contradicted itself)
        title=title if title is not None else f"Flame graph of {of}",
        folded=folded,
        frames=infos,
    )


def _tree(folded: list[str], infos: dict[str, FrameInfo]) -> Frame:
    """The folded stacks merged into a tree of :class:`Frame` nodes under "all"."""
    root = Frame("all", "all")
    for line in folded:
        stack, _, value = line.rpartition(" ")
        amount = _parse_amount(value)
        root.total += amount
        node = root
        for label in stack.split(";"):
            child = node.children.get(label)
            if child is None:
                child = node.children[label] = Frame(label, _display_name(label, infos.get(label)))
            child.total += amount
            node = child
    return root


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while a tree of frames is built.

    The tree has no cycles (reference counting frees it), but its hundreds
    of thousands of new nodes set off collections that each walk every
    object alive: with two profiles of a million resources loaded, those
    walks cost more than building the tree.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# -- colours ---------------------------------------------------------------------------

def block_colour(theme: Theme, name: str) -> RGB:
    """A frame's colour: the warm half of the theme's heat ramp, picked by a stable hash of its name."""
    ramp = theme.heat[len(theme.heat) // 2:] or theme.heat
    return ramp[name_hash(name) % len(ramp)]


# -- layout --------------------------------------------------------------------------------

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
    """Frames under ``root`` on rows of ``width`` columns, at most ``levels`` of them.

    Each frame is as wide as its share of ``root``; children sit under their
    parent from the left, widest first; frames narrower than a column are
    left out.  The text icicle and the TUI's interactive flame graph (which
    zooms by laying out a deeper ``root``) both draw this.
    """
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


# -- icicle (terminal) -----------------------------------------------------------------------

def render_icicle(graph: FlameGraph, options: RenderOptions, *,
                  colour_of: Callable[[Frame], RGB] | None = None,
                  label_of: Callable[[Frame], str] | None = None, front: str = "cli") -> str:
    """The tree as text, root on top, each frame as wide as its share of the width.

    Children sit under their parent from the left, widest first; frames
    narrower than a column are left out.  Levels that do not fit in the
    height are cut, with a note saying how many.  ``colour_of`` overrides
    the colour of each frame and ``label_of`` its text (the difference
    flame graph colours by change and says it with a sign, for eyes and
    terminals without colour).  The note on levels cut names what to do in
    the words of ``front`` (see :mod:`perun_core.advice`).
    """
    width = options.width
    theme = options.theme
    layout = layout_flame(graph.root, width, max(options.height - 2, 1))
    header = f"{graph.title}: total {graph.amount(graph.total)}"
    out = [paint(fit(header, width), colour=theme.text, bold=True) if theme is not None else fit(header, width)]
    for spans in layout.rows:
        line = []
        column = 0
        previous: RGB | None = None
        for span in spans:
            first, last, frame = span.start, span.end, span.frame
            colour = None if theme is None else colour_of(frame) if colour_of else block_colour(theme, frame.name)
            if colour is not None and colour == previous and first == column:
                # side by side, two blocks of one colour would read as one frame
                colour = _shade(colour)
            line.append(" " * (first - column))
            line.append(_segment(label_of(frame) if label_of else frame.name, last - first, theme, colour))
            column = last
            previous = colour
        out.append("".join(line).rstrip())
    hidden = layout.hidden
    if hidden > 0:
        note = f"({hidden} deeper level{'s' if hidden != 1 else ''} not shown; {HEIGHT.words(front)})"
        out.append(fit(note, width))
    return "\n".join(out)


def block_label(label: str, cells: int, *, bracketed: bool = False) -> str:
    """The text of a frame's block ``cells`` wide: its label after a space, or between ``[`` and ``]`` when no
    colour tells the blocks apart (a block of one cell is ``|``).

    A label cut keeps at least two of its characters before its ellipsis; a block with less room shows its
    colour (or its brackets) only: a row of narrow blocks, each drawn as a lone ``…``, read as one label
    ending in two or three ellipses (``sll_remov……``).
    """
    if bracketed:
        if cells <= 1:
            return "|" * cells
        inner = cells - 2
        return "[" + pad(fit(label, inner) if text_width(label) <= inner or inner >= 3 else "", inner) + "]"
    if text_width(label) + 1 <= cells or cells >= 4:
        return pad(fit(" " + label, cells), cells)
    return " " * cells


def _segment(label: str, span: int, theme: Theme | None, colour: RGB | None) -> str:
    if theme is None or colour is None:
        return block_label(label, span, bracketed=True)
    return paint(block_label(label, span), colour=theme.on_block, background=colour)


def _shade(colour: RGB) -> RGB:
    """A darker shade of ``colour``, to tell a block from a neighbour of the same colour."""
    red, green, blue = colour
    return int(red * 0.75), int(green * 0.75), int(blue * 0.75)


# -- folded and speedscope --------------------------------------------------------------------

def render_folded(graph: FlameGraph) -> str:
    return "\n".join(graph.folded)


def speedscope_unit(unit: str) -> str:
    return _SPEEDSCOPE_UNITS.get(unit.strip().lower(), "none")


def to_speedscope(graph: FlameGraph) -> dict[str, Any]:
    """The flame graph as a speedscope file (one sampled profile, a sample per distinct stack)."""
    frames: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    samples = []
    weights = []
    for line in graph.folded:
        stack, _, value = line.rpartition(" ")
        sample = []
        for label in stack.split(";"):
            number = index.get(label)
            if number is None:
                number = index[label] = len(frames)
                info = graph.frames.get(label)
                record: dict[str, Any] = {"name": info.function if info else label}
                if info is not None and info.source is not None:
                    record["file"] = info.source
                if info is not None and info.line is not None:
                    record["line"] = info.line
                frames.append(record)
            sample.append(number)
        samples.append(sample)
        weights.append(_parse_amount(value))
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "shared": {"frames": frames},
        "profiles": [{
            "type": "sampled",
            "name": graph.title,
            "unit": speedscope_unit(graph.unit),
            "startValue": 0,
            "endValue": graph.total,
            "samples": samples,
            "weights": weights,
        }],
        "name": graph.title,
        "activeProfileIndex": 0,
        "exporter": "perun",
    }


def render(graph: FlameGraph, options: RenderOptions) -> str:
    if options.fmt == "svg":
        return render_svg(graph, options.pixels or SVG_WIDTH)
    if options.fmt == "folded":
        return render_folded(graph)
    if options.fmt == "speedscope":
        return json.dumps(to_speedscope(graph), indent=1, ensure_ascii=False)
    return render_icicle(graph, options)


VIEW = View(
    name="flamegraph",
    summary="Inclusive consumption by call trace: terminal icicle, SVG, folded stacks, speedscope JSON.",
    description=__doc__ or "",
    params=(
        Param("of", help="Numeric resource key to add up along the traces [default: exclusive when every traced "
                    "resource has it (trace profiles), else amount].", flags=("-o", "--of"), metavar="KEY"),
        Param("title", help="Title of the graph.", flags=("-gt", "--graph-title"), metavar="TEXT"),
    ),
    fits=needs_calls,
    build=build,
    render_result=render,
    formats=("icicle", "svg", "folded", "speedscope"),
    textual=("icicle",),
    extensions={".svg": "svg", ".folded": "folded", ".collapsed": "folded", ".json": "speedscope",
                ".txt": "icicle", ".html": "icicle"},
    pixel_formats={"svg": SVG_WIDTH},
)
