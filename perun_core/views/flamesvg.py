"""The SVG flame graph: a standalone document in the style of Brendan Gregg's, interactive.

A tooltip per frame, click to zoom, Search highlights the frames matching
a regular expression (``#s=REGEX`` and ``#z=ID`` in the URL do the same on
load).  :mod:`perun_core.views.flamegraph` builds the graph; the difference
flame graph draws it with its own colours and tooltips.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from .style import RGB

if TYPE_CHECKING:  # pragma: no cover
    from .flamegraph import FlameGraph, Frame

__all__ = ["MIN_FRAME_WIDTH", "SVG_WIDTH", "frame_width", "name_hash", "render_svg", "warm_colour"]


def name_hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "replace"))


def warm_colour(name: str) -> RGB:
    """A stable flame colour (red to yellow) for a frame name."""
    h = name_hash(name)
    return 205 + h % 51, 60 + (h >> 8) % 170, (h >> 16) % 60



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
    # here, not at the top: xml.sax.saxutils imports urllib.request (http.client, email: 17 ms), which every
    # command that loads the views (show, the TUI) paid though few of them write an SVG
    from xml.sax.saxutils import escape, quoteattr

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
