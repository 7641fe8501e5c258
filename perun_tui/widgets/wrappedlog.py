"""A log whose long lines go on in the next line instead of running past the pane's edge.

textual's ``Log`` keeps each line whole and scrolls sideways: at 40 columns
a bisect's verdict (``Degradation at ./app [real]: 1.00 s -> 4.00 s``) was
cut at the border with nothing to say so.  :class:`WrappedLog` keeps the
lines as written and shows them broken between words at the width it has,
again on every resize; a continuation is indented under its line's text.
"""

from __future__ import annotations

from textual.widgets import Log

from perun_core import api

__all__ = ["WrappedLog", "wrap_line"]


def wrap_line(line: str, width: int) -> list[str]:
    """``line`` in pieces of at most ``width`` characters, continuations indented two past its own indent.

    A number stays on the line of the word after it (its unit).
    """
    if len(line) <= width or width < 8:
        return [line]
    own = len(line) - len(line.lstrip(" "))
    return api.wrap_text(line.lstrip(" "), width, indent=own + 2, first=own)


class WrappedLog(Log):
    """A ``Log`` that wraps its lines to its width (no sideways scrolling); ``written`` holds them as written."""

    DEFAULT_CSS = """
    WrappedLog {
        overflow-x: hidden;
        scrollbar-gutter: stable;
    }
    """

    def __init__(self, *, id: str | None = None, auto_scroll: bool = True) -> None:
        super().__init__(id=id, auto_scroll=auto_scroll)
        self.written: list[str] = []
        self._wrapped_at = 0

    def _wrap_width(self) -> int:
        return self.scrollable_content_region.width

    def write_line(self, line: str, scroll_end: bool | None = None) -> WrappedLog:
        self.written.append(line)
        width = self._wrap_width()
        for piece in wrap_line(line, width) if width > 0 else [line]:
            super().write_line(piece, scroll_end)
        return self

    def clear(self) -> WrappedLog:
        self.written.clear()
        super().clear()
        return self

    def on_resize(self) -> None:
        width = self._wrap_width()
        if width == self._wrapped_at or width <= 0:
            return
        self._wrapped_at = width
        Log.clear(self)
        super().write_lines([piece for line in self.written for piece in wrap_line(line, width)])
