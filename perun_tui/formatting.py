"""Small text helpers shared by the panes."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter

from perun_core.api import commit_time, drop_controls, escape_output, has_controls
from perun_core.api import local_time as api_local_time


def commit_date(epoch: int, tz_offset: int, *, with_time: bool = False) -> str:
    """A commit's date in its own time zone, as ``git log`` and ``perun-core log`` show it (so never the viewer's)."""
    return commit_time(epoch, tz_offset, clock=with_time)


def local_time(epoch: float) -> str:
    """When a profile was collected or registered, in the viewer's time zone, named (``2026-11-28 03:06 +0100``)."""
    return api_local_time(epoch)


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells (ending in an ellipsis when cut) or padded to it."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


def display_path(path: Path, *, limit: int = 48) -> str:
    """``path`` with the home directory as ``~`` and, past ``limit`` cells, only its last parts after ``…/``."""
    text = str(path)
    home = str(Path.home())
    if home not in ("", "/") and (text == home or text.startswith(home + "/")):
        text = "~" + text[len(home):]
    if cell_len(text) <= limit:
        return text
    parts = Path(text).parts
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        if cell_len(f"…/{part}/{tail}") > limit:
            break
        tail = f"{part}/{tail}"
    return f"…/{tail}"


def ansi_picture(text: str, **options) -> Text:
    """A view the core drew (ANSI colours) as Rich text; a control character in a label it holds is escaped.

    ``Text.from_ansi`` would act on any escape sequence in a uid or frame
    name (recolour, hide text); only the colour sequences the view wrote stay.
    """
    return Text.from_ansi(escape_output(text, keep_colour=True), **options)


class ControlFilter(LineFilter):
    """The last net under every pane: no control character of a drawn line reaches the terminal.

    Foreign text (commit messages, commands, uids, file names) is escaped
    where a pane takes it in; a raw ESC that one of them misses would still
    let a profile retitle the terminal or move its cursor.  Control
    characters take no cell, so dropping them here leaves the layout as it
    was drawn.
    """

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(has_controls(segment.text) for segment in segments):
            return segments
        return [Segment(drop_controls(segment.text), segment.style, segment.control) for segment in segments]
