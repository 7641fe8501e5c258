"""A one-line title shortened in the middle to the width it gets: its end tells plots apart."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from perun_core.api import escape_controls, fit_middle


class MiddleTitle(Static):
    """``head`` in bold, ``text``, then ``tail``; a line too long loses the middle of ``text``, never the ends.

    The tail (a relative change, say) is kept whole while ``text`` keeps at
    least a few columns; narrower still, the whole line is shortened in the middle.
    """

    def __init__(self, head: str = "", text: str = "", tail: str = "", *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes)
        # a uid or a profile name: escaped before it is measured, so the escapes count in its width
        self.head, self.text, self.tail = (escape_controls(part) for part in (head, text, tail))

    def set_text(self, head: str, text: str, tail: str = "") -> None:
        self.head, self.text, self.tail = (escape_controls(part) for part in (head, text, tail))
        self.refresh()

    @property
    def line(self) -> str:
        """The whole title, unshortened."""
        return " ".join(part for part in (self.head, self.text, self.tail) if part)

    def shortened(self, width: int) -> str:
        """The title in at most ``width`` columns."""
        line = self.line
        if len(line) <= width:
            return line
        fixed = len(self.head) + len(self.tail) + 2
        if self.tail and width - fixed >= 12:
            return " ".join(part for part in (self.head, fit_middle(self.text, width - fixed), self.tail) if part)
        return fit_middle(line, width)

    def render(self) -> Text:
        width = self.content_region.width or len(self.line)
        shown = self.shortened(width)
        out = Text(shown, no_wrap=True, overflow="crop")
        if self.head and shown.startswith(self.head):
            out.stylize("bold", 0, len(self.head))
        return out
