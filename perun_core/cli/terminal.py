"""The terminal side of the CLI: whether to colour, and the ANSI codes of the style names results carry.

Results are lines of ``(text, style)`` segments or text with a style name
(``degradation``, ``checksum``, ``muted`` ...); this module is the one place
that turns those names into colour.  Only the standard library is imported,
so every command module may use it at start-up.
"""

from __future__ import annotations

import os
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
