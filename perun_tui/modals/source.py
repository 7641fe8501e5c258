"""A source file as it was at a commit: shown by the user's pager or editor, or in a read-only dialog.

Explain's ``enter`` on a function ends here (:func:`viewers`,
:func:`read_only_copy`).  The file comes from git through
``perun_core.api.source_at``, never from the working tree, which may hold
the fixed code.  The pager (``$PAGER``) or the editor the user configured
(``$VISUAL``, ``$EDITOR``, ``general.editor``) gets a read-only temporary
copy; when neither is set or starts, :class:`SourceScreen` shows the text
here instead of falling back to some editor the user never chose.
"""

from __future__ import annotations

import os
import shlex
import stat
import tempfile
from pathlib import Path

from rich.markup import escape
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from perun_core.api import escape_controls, escape_lines
from .keys import HELP_IN_DIALOG

__all__ = ["SourceScreen", "read_only_copy", "viewers"]

#: pagers that take ``+<line>g`` to open at a line
_LESS_LIKE = {"less"}


def viewers(pager: str, editor: str, line: int | None) -> list[tuple[str, list[str]]]:
    """(name, command without the file) of each program that may show a source, in the order to try them.

    ``pager`` ($PAGER) first, then ``editor`` (the configured one); an empty
    one is left out.  The line is passed as ``+N`` to an editor and as
    ``+Ng`` to less.
    """
    found: list[tuple[str, list[str]]] = []
    for kind, text in (("pager", pager), ("editor", editor)):
        try:
            command = shlex.split(text)
        except ValueError:  # an unbalanced quote: not a command this can run
            continue
        if not command:
            continue
        name = Path(command[0]).name
        if line:
            if kind == "editor":
                command.append(f"+{line}")
            elif name in _LESS_LIKE:
                command.append(f"+{line}g")
        found.append((f"{name} ($PAGER)" if kind == "pager" else name, command))
    return found


def read_only_copy(text: str, path: str, commit: str | None) -> Path:
    """``text`` written to a new temporary file named after ``path`` and the commit (``sll@1a2b3c4.c``), read-only.

    The caller removes it (and its directory) once the viewer returned.
    """
    directory = Path(tempfile.mkdtemp(prefix="perun-source-"))
    name = Path(path).name or "source"
    stem, suffix = os.path.splitext(name)
    copy = directory / (f"{stem}@{commit[:7]}{suffix}" if commit else name)
    copy.write_text(text, encoding="utf-8")
    copy.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return copy


class SourceScreen(ModalScreen[None]):
    """The text of a source file, read-only, the cursor at the function's line."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="source.close"),
        HELP_IN_DIALOG,
    ]

    def __init__(self, text: str, title: str, line: int | None = None, note: str = "") -> None:
        super().__init__()
        self.text = text
        self.title_text = title
        self.line = line
        self.note = note  # why the source shows here (no pager or editor): a line in the dialog, not a toast over it

    def compose(self) -> ComposeResult:
        with Vertical(id="source-dialog", classes="dialog"):
            if self.note:
                yield Static(Text(escape_controls(self.note), style="dim"), id="source-note")
            yield TextArea(escape_lines(self.text), read_only=True, show_line_numbers=True, soft_wrap=False,
                           id="source-text")

    def on_mount(self) -> None:
        dialog = self.query_one("#source-dialog")
        dialog.border_title = escape(escape_controls(self.title_text))
        dialog.border_subtitle = "read-only · esc to close"
        area = self.query_one(TextArea)
        area.cursor_blink = False
        if self.line:
            row = max(self.line - 1, 0)
            area.move_cursor((row, 0), center=True)
        area.focus()

    def action_close(self) -> None:
        self.dismiss(None)
