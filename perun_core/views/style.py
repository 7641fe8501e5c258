"""Colours and text helpers shared by every view.

Colours are RGB tuples from a :class:`Theme`, never ANSI palette indices
(which terminals remap at will).  A renderer given ``theme=None`` produces
plain text without a single escape sequence; that is what goes to files,
pipes and golden tests.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

RGB = tuple[int, int, int]

#: Any CSI sequence (colours, styles) and the OSC 8 hyperlinks some tools emit.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")

RESET = "\x1b[0m"


@dataclass(frozen=True, slots=True)
class Theme:
    """The colours a view may use.

    ``series`` colours data series in order (points, bars, lines, allocation
    sites), cycling when there are more series than colours; ``heat`` is a
    ramp from cold to hot; ``text``, ``axes`` and ``background`` are ``None``
    to keep the terminal's own.
    """

    series: tuple[RGB, ...]
    heat: tuple[RGB, ...]
    text: RGB | None = None
    axes: RGB | None = None
    background: RGB | None = None
    #: text drawn on top of coloured blocks (flame graph frames)
    on_block: RGB = (0, 0, 0)

    def colour(self, index: int) -> RGB:
        """The ``index``-th series colour, cycling."""
        return self.series[index % len(self.series)]

    def heat_colour(self, fraction: float) -> RGB:
        """Colour of the heat ramp at ``fraction`` in [0, 1]."""
        ramp = self.heat
        fraction = min(max(fraction, 0.0), 1.0)
        return ramp[min(int(fraction * len(ramp)), len(ramp) - 1)]


#: Okabe-Ito colours (readable with colour-vision deficiencies) and a blue-to-red ramp.
DEFAULT_THEME = Theme(
    series=(
        (86, 180, 233), (230, 159, 0), (0, 158, 115), (240, 228, 66),
        (0, 114, 178), (213, 94, 0), (204, 121, 167), (153, 153, 153),
    ),
    heat=(
        (49, 54, 149), (69, 117, 180), (116, 173, 209), (171, 217, 233),
        (254, 224, 144), (253, 174, 97), (244, 109, 67), (215, 48, 39), (165, 0, 38),
    ),
)


def strip_ansi(text: str) -> str:
    """``text`` without escape sequences."""
    return _ANSI.sub("", text)


def fg(rgb: RGB) -> str:
    return f"\x1b[38;2;{rgb[0]};{rgb[1]};{rgb[2]}m"


def bg(rgb: RGB) -> str:
    return f"\x1b[48;2;{rgb[0]};{rgb[1]};{rgb[2]}m"


def paint(text: str, *, colour: RGB | None = None, background: RGB | None = None, bold: bool = False) -> str:
    """``text`` wrapped in the escapes for the given colours (nothing when none is given)."""
    prefix = ("\x1b[1m" if bold else "") + (fg(colour) if colour else "") + (bg(background) if background else "")
    return f"{prefix}{text}{RESET}" if prefix else text


def char_width(char: str) -> int:
    """Columns a character takes in a terminal (wide East Asian characters take two)."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def text_width(text: str) -> int:
    """Columns ``text`` (without escapes) takes."""
    if text.isascii():
        return len(text)
    return sum(map(char_width, text))


def fit(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` columns, ending in an ellipsis when cut."""
    if width <= 0:
        return ""
    if text_width(text) <= width:
        return text
    out = []
    used = 0
    for char in text:
        w = char_width(char)
        if used + w > width - 1:
            break
        out.append(char)
        used += w
    return "".join(out) + "…"


def fit_end(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` columns from its start, keeping its end after one ellipsis (``…_end``)."""
    if text_width(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    kept: list[str] = []
    used = 1
    for char in reversed(text):
        if used + char_width(char) > width:
            break
        kept.append(char)
        used += char_width(char)
    return "…" + "".join(reversed(kept))


def _cut_head(text: str, room: int) -> str:
    """``text`` in ``room`` columns with one ellipsis: when its last word is a path, its directory gives way first
    (``uid: …/sll-bench``, then ``…/sll-bench``, then ``sll-be…``), as a program's base name tells locations
    apart and its directory seldom does; otherwise it is cut at its end."""
    if text_width(text) <= room:
        return text
    lead, _, word = text.rpartition(" ")
    lead = lead + " " if lead else ""
    slash = word.rstrip("/").rfind("/")
    if slash < 0:
        return fit(text, room)
    parts = word[:slash].split("/")
    name = word[slash + 1:]
    for before in (lead, ""):
        if text_width(f"{before}…/{name}") > room:
            continue
        kept = name
        for part in reversed(parts[1:]):
            if text_width(f"{before}…/{part}/{kept}") > room:
                break
            kept = f"{part}/{kept}"
        return f"{before}…/{kept}"
    return "…" + name if text_width(name) < room else fit(name + "…", room)


def fit_middle(text: str, width: int) -> str:
    """``text`` shortened to at most ``width`` columns by one ellipsis in the middle.

    Titles end in what tells plots apart (``uid: ./app [real]``, a subtype,
    a note such as ``(time only)``), so the end is kept.  A location
    (``./sll-bench [sys]``, ending in its ``[resource]``) keeps the resource
    whole while it leaves three columns, the part before it shortened by
    :func:`_cut_head` (a path's directory first: ``…/sll-bench [sys]``, then
    ``sll-be… [sys]``; never in the middle of a program's name).  Otherwise
    half of the room, or more to keep a ``[subtype]`` and the notes after it
    whole, the head cut at a space when one is near.
    """
    if width <= 0:
        return ""
    if text_width(text) <= width:
        return text
    if width < 8:
        return fit(text, width)
    tail_room = (width - 1) // 2
    bracket = text.rfind(" [")
    if bracket > 0 and text.endswith("]") and text_width(text[bracket:]) <= width - 3:
        return _cut_head(text[:bracket], width - text_width(text[bracket:])) + text[bracket:]
    # a subtype in brackets and the notes after it are kept whole when they take at most two thirds
    if bracket > 0 and tail_room < text_width(text[bracket:]) <= (width - 1) * 2 // 3:
        tail_room = text_width(text[bracket:])
    head_room = width - 1 - tail_room
    tail: list[str] = []
    used = 0
    for char in reversed(text):
        w = char_width(char)
        if used + w > tail_room:
            break
        tail.append(char)
        used += w
    head: list[str] = []
    used = 0
    for char in text:
        w = char_width(char)
        if used + w > head_room:
            break
        head.append(char)
        used += w
    start = "".join(head)
    cut = start.rfind(" ")
    if cut >= head_room * 2 // 3:
        start = start[:cut + 1]
    return start + "…" + "".join(reversed(tail))


def pad(text: str, width: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` columns (aligned right if asked)."""
    gap = " " * max(width - text_width(text), 0)
    return gap + text if right else text + gap


def format_number(value: object) -> str:
    """A short, stable text form of a number (integers without a fraction)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"
