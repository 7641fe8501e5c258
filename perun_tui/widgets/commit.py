"""The commit pane: everything about the commit under the history cursor."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from perun_core.api import LogEntry, escape_controls, escape_lines

from ..formatting import commit_date


class CommitPane(VerticalScroll, can_focus=False):
    """Sha, author, date, parents, profile counts, changes and the full message."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: the last commit shown: a pane made again (moved to the other row) or still composing shows it on mount
        self._shown: tuple[LogEntry | None, bool] = (None, False)

    def compose(self):
        yield Static("", id="commit-text")

    def on_mount(self) -> None:
        self.border_title = "Commit"
        self.show(*self._shown)

    def show(self, entry: LogEntry | None, is_head: bool = False) -> None:
        self._shown = (entry, is_head)
        bodies = self.query("#commit-text")
        if not bodies:
            return  # not composed yet, or being removed: on_mount shows it
        body = bodies.first(Static)
        if entry is None:
            body.update(Text("no commit selected", style="dim"))
            return
        version = entry.version
        counts = entry.counts
        title = Text(version.checksum[:12], style="bold")
        if is_head:
            title.append("  HEAD", style="bold reverse")
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", justify="right", no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_row("author", Text(escape_controls(version.author)))
        grid.add_row("", Text(escape_controls(f"<{version.email}>")))
        grid.add_row("date", commit_date(version.date, version.tz_offset, with_time=True))
        grid.add_row("parents", " ".join(p[:7] for p in version.parents) or "(root)")
        kinds = [f"{n} {kind}" for n, kind in ((counts.time, "time"), (counts.mixed, "mixed"),
                                                (counts.memory, "memory")) if n]
        grid.add_row("profiles", f"{counts.total}" + (f" ({', '.join(kinds)})" if kinds else ""))
        if entry.changes:
            worse, better = entry.changes.count("-"), entry.changes.count("+")
            found = [f"{worse} degradation{'s' * (worse != 1)}"] if worse else []
            found += [f"{better} optimization{'s' * (better != 1)}"] if better else []
            grid.add_row("changes", ", ".join(found))
        body.update(Group(title, grid, Text(""), Text(escape_lines(reflowed(version.desc.rstrip())))))


def reflowed(message: str) -> str:
    """A commit message with each paragraph's lines joined, for the pane to wrap at its own width: a body wrapped
    at 72 columns, wrapped again at the pane's 34, left a word or two alone on every other line ("the").

    Blank lines part paragraphs; a line that starts indented or as a list item (``-``, ``*``, ``1.``) starts a
    line of its own, and the line after an indented one too (code and tables keep their lines).
    """
    out: list[str] = []
    joinable = False
    for line in message.splitlines():
        stripped = line.strip()
        starts_own = not stripped or line[:1].isspace() or stripped[:2] in ("- ", "* ") or \
            (stripped.split(" ", 1)[0][:-1].isdigit() and stripped.split(" ", 1)[0].endswith((".", ")")))
        if joinable and not starts_own:
            out[-1] += " " + stripped
        else:
            out.append(line.rstrip())
        joinable = bool(stripped) and not line[:1].isspace()
    return "\n".join(out)
