"""The terminal side of the CLI: whether to colour, and the ANSI codes of the style names results carry.

Results are lines of ``(text, style)`` segments or text with a style name
(``degradation``, ``checksum``, ``muted`` ...); this module is the one place
that turns those names into colour.  Only the standard library is imported,
so every command module may use it at start-up.
"""

from __future__ import annotations

import os
import re
import sys

#: style name -> ANSI code
STYLES = {
    "degradation": "\x1b[1;31m",
    "optimization": "\x1b[1;32m",
    "maybe": "\x1b[33m",
    "notice": "\x1b[36m",
    "checksum": "\x1b[33m",
    "date": "\x1b[36m",
    "author": "\x1b[35m",
    "stats": "\x1b[1m",
    "muted": "\x1b[2m",
    "heading": "\x1b[1m",
    "tag": "\x1b[1;36m",
    "error": "\x1b[31m",
    "graph": "\x1b[34m",
}
RESET = "\x1b[0m"


def escape_controls(text: str) -> str:
    """:func:`perun_core.api.escape_controls`, loaded when first used (modules on the start-up path call this)."""
    # lazy: keeps `perun-core --help` light
    from perun_core.api.text import escape_controls as escape

    return escape(text)


def use_colour() -> bool:
    """Colour on a terminal; NO_COLOR turns it off, FORCE_COLOR on (NO_COLOR wins), TERM=dumb has none."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def paint(text: str, style: str, color: bool) -> str:
    """``text`` in the colour of ``style`` when ``color`` is on (plain text for no style)."""
    if not color or not style or not text:
        return text
    return f"{STYLES.get(style, '')}{text}{RESET}"


def paint_segments(segments: list[tuple[str, str]], color: bool) -> str:
    """A line of ``(text, style)`` segments, coloured when ``color`` is on (unknown styles stay plain)."""
    if not color:
        return "".join(text for text, _style in segments)
    return "".join(f"{STYLES[style]}{text}{RESET}" if style in STYLES and text else text for text, style in segments)




def wrap_segments(segments: list[tuple[str, str]], width: int, hang: int = 2, *,
                  cut_words: bool = True) -> list[list[tuple[str, str]]]:
    """A line of ``(text, style)`` segments on lines of at most ``width`` columns, styles kept.

    The line's lead (its graph bars and indentation) starts every line, a
    ``*`` of the graph continued as ``|``; the lines after the first are
    indented ``hang`` more (a hanging indent).  Lines break at spaces, never
    between an amount and its unit; a word longer than a line is cut into
    pieces of a line each, or with ``cut_words`` False (a path someone will
    copy) left whole on a line of its own.
    """
    # the one rule of where a line may not break (standard library only, so cheap at start-up)
    from perun_core.api.text import UNIT_SPACE

    cut = 0
    while cut < len(segments) and (segments[cut][1] == "graph" or not segments[cut][0].strip()):
        cut += 1
    lead, body = segments[:cut], segments[cut:]
    lead_width = sum(len(text) for text, _style in lead)
    text = "".join(text for text, _style in body)
    if lead_width + len(text) <= width or not text.strip():
        return [segments]
    styles = [style for part, style in body for _char in part]
    first_room = max(width - lead_width, 12)
    room = max(first_room - hang, 10)
    ranges: list[list[int]] = []
    for word in re.finditer(r"[^ ]+", UNIT_SPACE.sub("\0", text)):
        start, end = word.span()
        if ranges and end - ranges[-1][0] <= (first_room if len(ranges) == 1 else room):
            ranges[-1][1] = end
            continue
        if not ranges:
            start = 0  # the first line keeps its own leading spaces
        while cut_words and end - start > (first_room if not ranges else room):  # a word longer than a line
            ranges.append([start, start + (first_room if not ranges else room)])
            start = ranges[-1][1]
        ranges.append([start, end])
    more = [(text.replace("*", "|"), style) for text, style in lead] + [(" " * hang, "")]
    out = []
    for number, (start, end) in enumerate(ranges):
        pieces: list[tuple[str, str]] = []
        for index in range(start, end):
            if pieces and pieces[-1][1] == styles[index]:
                pieces[-1] = (pieces[-1][0] + text[index], styles[index])
            else:
                pieces.append((text[index], styles[index]))
        out.append([*(lead if number == 0 else more), *pieces])
    return out


def fit_to_terminal(text: str) -> str:
    """``text`` (one line, no colour) wrapped to the terminal's width, 80 columns on a pipe.

    The lines after the first are indented two more; a path or other word
    longer than a line is left whole on a line of its own, for copying.
    """
    import shutil

    width = shutil.get_terminal_size((80, 24)).columns
    lead = len(text) - len(text.lstrip(" "))
    segments = [(text[:lead], ""), (text[lead:], "")] if lead else [(text, "")]
    return "\n".join("".join(part for part, _style in line) for line in wrap_segments(segments, width, cut_words=False))
