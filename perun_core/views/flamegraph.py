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

import json
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape, quoteattr

from ..errors import EmptyProfile, UnsupportedProfile
from .base import Param, RenderOptions, View, amount_unit, not_numeric, require_key, resource_keys
from .fits import needs_calls
from .style import RGB, Theme, fit, format_number, pad, paint

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
        text = format_number(value)
        return f"{text} {self.unit}" if self.unit else text

    def share(self, frame: Frame) -> float:
        return frame.total / self.root.total if self.root.total else 0.0


def _display_name(label: str, info: FrameInfo | None) -> str:
    if info is not None:
        return f"{info.function}()"
    return label


def _frame_infos(profile: Profile) -> dict[str, FrameInfo]:
    """Structured info for the label of every dict entry of every trace."""
    from ..profile.convert import _frame

    infos: dict[str, FrameInfo] = {}
    seen: set[int] = set()
    entries_seen: set[int] = set()  # entries shared between traces are looked at once
    for _, region in profile.regions():
        column = region.resources.column("trace")
        for trace in dict(zip(map(id, column), column)).values():  # each shared trace once
            if not isinstance(trace, list) or id(trace) in seen:
                continue
            seen.add(id(trace))
            for entry in trace:
                if not isinstance(entry, dict) or id(entry) in entries_seen:
                    continue
                entries_seen.add(id(entry))
                label = _frame(entry)
                if label in infos:
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
    from ..profile.resources import MISSING

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
    from ..profile.convert import to_flame_graph_format
    from .callgraph import caller_stacks

    keys = resource_keys(profile, snapshots=False)
    from_edges = "trace" not in keys and "caller" in keys
    if of is None:
        of = "amount" if from_edges else default_of(profile)
    require_key("flamegraph", "of", profile, of, numeric=True, snapshots=False)
    folded = caller_stacks(profile, of) if from_edges else to_flame_graph_format(profile, of=of)
    if not folded:
        if "trace" not in keys and "caller" not in keys:
            raise UnsupportedProfile(
                "flamegraph", profile.type, TRACE_TYPES,
                reason="its resources carry no call stacks ('trace') or caller edges ('caller')",
            )
        if of not in resource_keys(profile, numeric=True, snapshots=False):
            raise not_numeric("flamegraph", "of", profile, of)
        raise EmptyProfile("flamegraph", f"resources with a call trace and a positive '{of}'")
    infos = _frame_infos(profile)
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
    unit = amount_unit(profile, of, having="caller" if from_edges else "trace")
    return FlameGraph(
        root=root,
        of=of,
        unit=unit,
        title=title if title is not None else f"Flame graph of {of}" + (f" [{unit}]" if unit else ""),
        folded=folded,
        frames=infos,
    )


# -- colours ---------------------------------------------------------------------------

def _hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "replace"))


def warm_colour(name: str) -> RGB:
    """A stable flame colour (red to yellow) for a frame name."""
    h = _hash(name)
    return 205 + h % 51, 60 + (h >> 8) % 170, (h >> 16) % 60


def block_colour(theme: Theme, name: str) -> RGB:
    """A frame's colour: the warm half of the theme's heat ramp, picked by a stable hash of its name."""
    ramp = theme.heat[len(theme.heat) // 2:] or theme.heat
    return ramp[_hash(name) % len(ramp)]


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
                  colour_of: Callable[[Frame], RGB] | None = None) -> str:
    """The tree as text, root on top, each frame as wide as its share of the width.

    Children sit under their parent from the left, widest first; frames
    narrower than a column are left out.  Levels that do not fit in the
    height are cut, with a note saying how many.  ``colour_of`` overrides
    the colour of each frame (the difference flame graph colours by change).
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
            line.append(_segment(frame, last - first, theme, colour))
            column = last
            previous = colour
        out.append("".join(line).rstrip())
    hidden = layout.hidden
    if hidden > 0:
        note = f"({hidden} deeper level{'s' if hidden != 1 else ''} not shown; raise --height)"
        out.append(fit(note, width))
    return "\n".join(out)


def _segment(frame: Frame, span: int, theme: Theme | None, colour: RGB | None) -> str:
    if theme is None or colour is None:
        if span == 1:
            return "|"
        return "[" + pad(fit(frame.name, span - 2), span - 2) + "]"
    text = pad(fit(" " + frame.name, span), span)
    return paint(text, colour=theme.on_block, background=colour)


def _shade(colour: RGB) -> RGB:
    """A darker shade of ``colour``, to tell a block from a neighbour of the same colour."""
    red, green, blue = colour
    return int(red * 0.75), int(green * 0.75), int(blue * 0.75)


# -- SVG -----------------------------------------------------------------------------------------

SVG_WIDTH = 1200
_PAD = 10
_FRAME_HEIGHT = 16
_TOP = 44
_BOTTOM = 30
_FONT_SIZE = 12
_CHAR_WIDTH = 0.59 * _FONT_SIZE
#: Frames narrower than this many pixels are not drawn.
MIN_FRAME_WIDTH = 0.1

_SCRIPT = """
var frames = [], details, unzoomButton, searchButton, matched, searching = false;
var WIDTH = %(width)d, PAD = %(pad)d, CHAR = %(char).3f, MATCH = "rgb(230,0,230)";
function init(evt) {
  details = document.getElementById("details");
  unzoomButton = document.getElementById("unzoom");
  searchButton = document.getElementById("search");
  matched = document.getElementById("matched");
  var groups = document.getElementsByClassName("frame");
  for (var i = 0; i < groups.length; i++) {
    var g = groups[i], r = g.getElementsByTagName("rect")[0];
    g.x0 = parseFloat(r.getAttribute("x"));
    g.w0 = parseFloat(r.getAttribute("width"));
    g.depth = parseInt(g.getAttribute("data-depth"), 10);
    g.fname = g.getAttribute("data-name");
    g.fill0 = r.getAttribute("fill");
    g.addEventListener("click", onClick);
    g.addEventListener("mouseover", onOver);
    g.addEventListener("mouseout", onOut);
    frames.push(g);
  }
  unzoomButton.addEventListener("click", unzoom);
  searchButton.addEventListener("click", onSearch);
  var hash = decodeURIComponent(window.location.hash.slice(1));
  hash.split("&").forEach(function (part) {
    if (part.indexOf("s=") === 0) search(part.slice(2));
    if (part.indexOf("z=") === 0) { var f = document.getElementById(part.slice(2)); if (f) zoom(f); }
  });
  document.documentElement.setAttribute("data-ready", "true");
}
function onClick(evt) { zoom(evt.currentTarget); }
function onOver(evt) { details.textContent = evt.currentTarget.getElementsByTagName("title")[0].textContent; }
function onOut() { details.textContent = " "; }
function fitText(name, width) {
  var n = Math.floor((width - 6) / CHAR);
  if (n < 3) return "";
  return name.length <= n ? name : name.slice(0, n - 2) + "..";
}
function place(g, x, w) {
  var r = g.getElementsByTagName("rect")[0], t = g.getElementsByTagName("text")[0];
  r.setAttribute("x", x.toFixed(2));
  r.setAttribute("width", w.toFixed(2));
  t.setAttribute("x", (x + 3).toFixed(2));
  t.textContent = fitText(g.fname, w);
}
function zoom(target) {
  var left = target.x0, right = target.x0 + target.w0, scale = (WIDTH - 2 * PAD) / target.w0, eps = 1e-6;
  frames.forEach(function (g) {
    var l = g.x0, r = g.x0 + g.w0;
    if (g.depth >= target.depth && l >= left - eps && r <= right + eps) {
      g.style.display = ""; g.classList.remove("parent");
      place(g, PAD + (l - left) * scale, g.w0 * scale);
    } else if (g.depth < target.depth && l <= left + eps && r >= right - eps) {
      g.style.display = ""; g.classList.add("parent");
      place(g, PAD, WIDTH - 2 * PAD);
    } else {
      g.style.display = "none";
    }
  });
  unzoomButton.classList.remove("hide");
}
function unzoom() {
  frames.forEach(function (g) { g.style.display = ""; g.classList.remove("parent"); place(g, g.x0, g.w0); });
  unzoomButton.classList.add("hide");
}
function onSearch() {
  if (searching) { clearSearch(); return; }
  var term = window.prompt("Search frames (regular expression)", "");
  if (term) search(term);
}
function clearSearch() {
  frames.forEach(function (g) { g.getElementsByTagName("rect")[0].setAttribute("fill", g.fill0); });
  matched.textContent = " ";
  searchButton.textContent = "Search";
  searching = false;
}
function search(term) {
  var pattern;
  try { pattern = new RegExp(term); } catch (e) { matched.textContent = "Bad expression"; return; }
  var spans = [];
  frames.forEach(function (g) {
    if (pattern.test(g.fname)) {
      g.getElementsByTagName("rect")[0].setAttribute("fill", MATCH);
      spans.push([g.x0, g.x0 + g.w0]);
    }
  });
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var covered = 0, end = -1;
  spans.forEach(function (s) {
    if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }
    else if (s[1] > end) { covered += s[1] - end; end = s[1]; }
  });
  matched.textContent = "Matched: " + (100 * covered / (WIDTH - 2 * PAD)).toFixed(1) + "%%";
  searchButton.textContent = "Reset Search";
  searching = true;
}
"""

_STYLE = """
text { font-family: Verdana, sans-serif; font-size: %(font)dpx; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-size: 17px; }
#search, #unzoom { cursor: pointer; fill: rgb(0,0,160); }
#matched { text-anchor: end; }
.frame { cursor: pointer; }
.frame:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }
.parent { opacity: 0.5; }
.hide { display: none; }
"""


def _svg_label(name: str, width: float) -> str:
    chars = math.floor((width - 6) / _CHAR_WIDTH)
    if chars < 3:
        return ""
    return name if len(name) <= chars else name[: chars - 2] + ".."


def _tooltip(graph: FlameGraph, frame: Frame) -> str:
    info = graph.frames.get(frame.label)
    where = ""
    if info is not None and info.source is not None:
        where = f" at {info.source}" + (f":{info.line}" if info.line is not None else "")
    return f"{frame.name}{where} ({graph.amount(frame.total)}, {100 * graph.share(frame):.2f}%)"


def frame_width(graph: FlameGraph, frame: Frame, width: int = SVG_WIDTH) -> float:
    """The width in pixels of ``frame``'s rect in an SVG ``width`` pixels wide."""
    return graph.share(frame) * (width - 2 * _PAD)


def render_svg(graph: FlameGraph, width: int = SVG_WIDTH, *, colour_of: Callable[[Frame], RGB] | None = None,
               tooltip_of: Callable[[Frame], str] | None = None) -> str:
    """A standalone interactive SVG document (root at the bottom).

    ``colour_of`` and ``tooltip_of`` override each frame's fill colour and
    tooltip (the difference flame graph colours by change and tells it).
    """
    depth = graph.root.depth() + 1
    height = _TOP + depth * _FRAME_HEIGHT + _BOTTOM
    style = _STYLE % {"font": _FONT_SIZE}
    script = _SCRIPT % {"width": width, "pad": _PAD, "char": _CHAR_WIDTH}
    parts = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
        f'<svg version="1.1" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'onload="init(evt)" xmlns="http://www.w3.org/2000/svg">',
        f'<style type="text/css"><![CDATA[{style}]]></style>',
        f'<script type="text/ecmascript"><![CDATA[{script}]]></script>',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="rgb(250,248,240)"/>',
        f'<text id="title" x="{width / 2:.1f}" y="24">{escape(graph.title)}</text>',
        f'<text id="unzoom" class="hide" x="{_PAD}" y="24">Reset Zoom</text>',
        f'<text id="search" x="{width - _PAD - 100}" y="24">Search</text>',
        f'<text id="details" x="{_PAD}" y="{height - 10}"> </text>',
        f'<text id="matched" x="{width - _PAD}" y="{height - 10}"> </text>',
        '<g id="frames">',
    ]
    counter = 0

    def draw(frame: Frame, x: float, level: int) -> None:
        nonlocal counter
        w = frame_width(graph, frame, width)
        if w < MIN_FRAME_WIDTH:
            return
        y = height - _BOTTOM - (level + 1) * _FRAME_HEIGHT
        fill = "rgb(%d,%d,%d)" % (colour_of(frame) if colour_of else warm_colour(frame.name))
        tip = tooltip_of(frame) if tooltip_of else _tooltip(graph, frame)
        parts.append(
            f'<g class="frame" id="f{counter}" data-depth="{level}" data-name={quoteattr(frame.name)}>'
            f"<title>{escape(tip)}</title>"
            f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{_FRAME_HEIGHT - 1}" fill="{fill}" rx="2" ry="2"/>'
            f'<text x="{x + 3:.2f}" y="{y + _FRAME_HEIGHT - 4.5:.1f}">{escape(_svg_label(frame.name, w))}</text>'
            "</g>"
        )
        counter += 1
        offset = x
        for child in frame.alphabetical():
            draw(child, offset, level + 1)
            offset += frame_width(graph, child, width)

    draw(graph.root, float(_PAD), 0)
    parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


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
