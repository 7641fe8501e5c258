"""The history pane: commits of the current branch, newest first.

:class:`HistoryView` draws rows with the line API (``render_line``), so only
the rows on screen are ever rendered and ten thousand commits scroll as
smoothly as forty.  Entries arrive in chunks from a worker; the first line
of the view is a column header that stays put while the rows scroll.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input

from perun_core.api import LogEntry, escape_controls

from ..formatting import commit_date, fit
from ..messages import CommitHighlighted


@dataclass(frozen=True, slots=True)
class _Layout:
    """Which columns fit into a width, and how wide the subject is."""

    date: bool
    author: bool
    author_width: int
    subject: int


_MARKED = 1     # "*" on a commit marked for a run or a bisect: a cell of its own, never over a check mark
_MARKS = 2      # degradation / optimization marks
_SHA = 7
_DATE = 10
_COUNTS = 8     # "a m x t", two cells each


def _layout(width: int) -> _Layout:
    fixed = _MARKED + _MARKS + _SHA + 1 + _COUNTS + 1
    date = width - fixed >= _DATE + 1 + 20
    if date:
        fixed += _DATE + 1
    author_width = 16 if width >= 100 else 12
    author = width - fixed >= author_width + 1 + 24
    if author:
        fixed += author_width + 1
    return _Layout(date, author, author_width, max(width - fixed, 0))


class HistoryView(ScrollView, can_focus=True):
    """A virtual list of log entries with a cursor, searching and a fixed header line."""

    COMPONENT_CLASSES = {
        "history--header",
        "history--cursor",
        "history--sha",
        "history--date",
        "history--author",
        "history--zero",
        "history--count",
        "history--degradation",
        "history--optimization",
        "history--match",
        "history--marked",
    }

    #: what the header's short names and the marks mean: f1 lists it, and it is the view's tooltip
    HELP_LEGEND = (
        ("a m x t", "how many profiles the commit has: all, memory, mixed, time (· for none)"),
        ("- +", "before the commit: a check found a degradation (-) or an optimization (+) there"),
        ("*", "before the commit: marked for a run or a bisect (space)"),
    )

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, id="history.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="history.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="history.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="history.page_down"),
        Binding("h,home", "jump_head", "HEAD", key_display="h", tooltip="Move the cursor to HEAD", id="history.head"),
        Binding("end", "jump_end", "Oldest", show=False, id="history.end"),
        Binding("slash", "search", "Search", key_display="/", tooltip="Search commits by sha, author or message",
                id="history.search"),
        Binding("n", "next_match", "Next", tooltip="Next commit matching the search", id="history.next"),
        Binding("N", "previous_match", "Previous match", show=False, id="history.previous"),
        Binding("enter", "to_profiles", "Profiles", show=False, id="history.to_profiles"),
        Binding("space", "toggle_mark", "Mark", show=False, tooltip="Mark the commit (or unmark it) for a run",
                id="history.mark"),
    ]

    #: no repaint of its own: watch_cursor paints just the rows that changed (a whole pane per key is kilobytes
    #: to send over a slow link)
    cursor: reactive[int] = reactive(0, always_update=True, init=False, repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tooltip = "\n".join(f"{term}: {meaning}" for term, meaning in self.HELP_LEGEND)
        self.entries: list[LogEntry] = []
        self._haystack: list[str] = []
        self._index_of: dict[str, int] = {}
        self.query_text = ""
        self.walking = True
        self.marked: dict[str, None] = {}  # commits marked for a run, in the order they were marked
        self._base_style: Style | None = None

    # -- data ------------------------------------------------------------------------
    def clear(self) -> None:
        self.entries = []
        self._haystack = []
        self._index_of = {}
        self.walking = True
        self.set_reactive(HistoryView.cursor, 0)
        self._update_size()
        self.refresh()

    def extend(self, entries: list[LogEntry]) -> None:
        """Append a chunk; the first chunk also puts the cursor on HEAD."""
        first = not self.entries
        start = len(self.entries)
        self.entries.extend(entries)
        for offset, entry in enumerate(entries):
            version = entry.version
            self._index_of[version.checksum] = start + offset
            self._haystack.append(f"{version.checksum}\n{version.author}\n{version.email}\n{version.desc}".lower())
        self._update_size()
        self.refresh()
        if first and self.entries:
            self.cursor = 0

    def replace_entry(self, entry: LogEntry) -> None:
        index = self._index_of.get(entry.version.checksum)
        if index is None:
            return
        self.entries[index] = entry
        self.refresh()
        if index == self.cursor:
            self.post_message(CommitHighlighted(entry))

    def index_of(self, checksum: str) -> int | None:
        return self._index_of.get(checksum)

    @property
    def current(self) -> LogEntry | None:
        if 0 <= self.cursor < len(self.entries):
            return self.entries[self.cursor]
        return None

    def _update_size(self) -> None:
        self.virtual_size = Size(1, len(self.entries) + 1)

    # -- cursor ---------------------------------------------------------------------
    @property
    def _rows_visible(self) -> int:
        return max(self.scrollable_content_region.height - 1, 1)

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.entries) - 1)) if self.entries else 0

    def watch_cursor(self, old: int, new: int) -> None:
        top = round(self.scroll_offset.y)
        rows = self._rows_visible
        if new < top:
            self.scroll_to(y=new, animate=False, force=True)
            self.refresh()
        elif new >= top + rows:
            self.scroll_to(y=new - rows + 1, animate=False, force=True)
            self.refresh()
        elif top <= old < top + rows:
            # Only the two rows whose cursor colours changed are painted again: a key
            # held down on ten thousand commits must not redraw the whole pane each time.
            width = self.size.width
            self.refresh(Region(0, old - top + 1, width, 1), Region(0, new - top + 1, width, 1))
        else:
            self.refresh()
        self.post_message(CommitHighlighted(self.current))

    def on_resize(self, event: events.Resize) -> None:
        # fewer rows (40x12): the cursor's commit, the one the profiles pane shows, stays on screen
        self.call_after_refresh(self._cursor_into_view)

    def _cursor_into_view(self) -> None:
        top = round(self.scroll_offset.y)
        rows = self._rows_visible
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, force=True)
        elif self.cursor >= top + rows:
            self.scroll_to(y=self.cursor - rows + 1, animate=False, force=True)

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_page_up(self) -> None:
        self.cursor -= self._rows_visible

    def action_page_down(self) -> None:
        self.cursor += self._rows_visible

    def action_jump_head(self) -> None:
        self.cursor = 0
        self.scroll_to(y=0, animate=False, force=True)

    def action_jump_end(self) -> None:
        self.cursor = len(self.entries) - 1

    def action_to_profiles(self) -> None:
        self.screen.focus_next()

    def action_toggle_mark(self) -> None:
        entry = self.current
        if entry is None:
            return
        checksum = entry.version.checksum
        if checksum in self.marked:
            del self.marked[checksum]
        else:
            self.marked[checksum] = None
        self.refresh()
        self.cursor += 1

    def clear_marks(self) -> None:
        self.marked = {}
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        index = round(self.scroll_offset.y) + offset.y - 1
        if 0 <= index < len(self.entries):
            self.cursor = index

    def _on_focus(self, event: events.Focus) -> None:
        super()._on_focus(event)
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        super()._on_blur(event)
        self.refresh()

    # -- search ---------------------------------------------------------------------
    def action_search(self) -> None:
        pane = self.query_ancestor(HistoryPane)
        pane.open_search()

    def find(self, text: str, *, forward: bool = True, include_current: bool = False) -> int | None:
        """Index of the next entry (from the cursor, wrapping) whose sha, author or message contains ``text``."""
        needle = text.strip().lower()
        count = len(self._haystack)
        if not needle or not count:
            return None
        step = 1 if forward else -1
        start = self.cursor if include_current else self.cursor + step
        for offset in range(count):
            index = (start + step * offset) % count
            if needle in self._haystack[index]:
                return index
        return None

    def search(self, text: str, *, forward: bool = True, include_current: bool = False) -> bool:
        """Move to the next match of ``text``; notifies and returns False when there is none."""
        self.query_text = text.strip()
        self.refresh_bindings()
        index = self.find(self.query_text, forward=forward, include_current=include_current)
        if index is None:
            where = f"the {len(self.entries)} commits loaded so far" if self.walking else "the history"
            self.notify(f"'{self.query_text}' is not in {where}", severity="warning")
            return False
        self.cursor = index
        self.refresh()
        return True

    def action_next_match(self) -> None:
        if self.query_text:
            self.search(self.query_text)

    def action_previous_match(self) -> None:
        if self.query_text:
            self.search(self.query_text, forward=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("next_match", "previous_match"):
            return bool(self.query_text)
        return True

    # -- rendering ------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        # The base style walks the ancestors' styles: look it up once per frame, not per line.
        self._base_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._base_style = None

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self._base_style if self._base_style is not None else self.rich_style
        if y == 0:
            return self._header(width, base)
        index = round(self.scroll_offset.y) + y - 1
        if index >= len(self.entries):
            return Strip.blank(width, base)
        return self._row(index, width, base)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def _header(self, width: int, base: Style) -> Strip:
        layout = _layout(width)
        style = base + self._style("history--header")
        parts = [fit("", _MARKED + _MARKS), fit("commit", _SHA), " "]
        if layout.date:
            parts += [fit("date", _DATE), " "]
        if layout.author:
            parts += [fit("author", layout.author_width), " "]
        parts += [fit(" a m x t", _COUNTS), " ", fit("subject", layout.subject)]
        return Strip([Segment("".join(parts), style)]).adjust_cell_length(width, style)

    def _row(self, index: int, width: int, base: Style) -> Strip:
        entry = self.entries[index]
        version = entry.version
        layout = _layout(width)
        row_style = base
        if index == self.cursor:
            row_style = base + self._style("history--cursor")
        segments: list[Segment] = []

        def add(text: str, component: str | None = None) -> None:
            style = row_style if component is None else row_style + self._style(component)
            if index == self.cursor and component is not None:
                # the cursor's colours win; keep only the emphasis of the column
                style = row_style + Style(bold=style.bold, italic=style.italic)
            segments.append(Segment(text, style))

        if version.checksum in self.marked:
            add("*", "history--marked")
        else:
            add(" " * _MARKED)
        marks = entry.changes[:_MARKS]
        for mark in marks:
            add(mark, "history--degradation" if mark == "-" else "history--optimization")
        add(" " * (_MARKS - len(marks)))
        add(version.checksum[:_SHA], "history--sha")
        add(" ")
        if layout.date:
            add(commit_date(version.date, version.tz_offset), "history--date")
            add(" ")
        if layout.author:
            add(fit(escape_controls(version.author), layout.author_width), "history--author")
            add(" ")
        counts = entry.counts
        for value in (counts.total, counts.memory, counts.mixed, counts.time):
            text = "·" if value == 0 else (str(value) if value < 10 else "+")
            add(text.rjust(2), "history--zero" if value == 0 else "history--count")
        add(" ")
        matched = bool(self.query_text) and self.query_text.lower() in self._haystack[index]
        add(fit(escape_controls(version.short_desc), layout.subject), "history--match" if matched else None)
        return Strip(segments).adjust_cell_length(width, row_style)


class HistoryPane(Vertical):
    """The history view with a search box that opens below it."""

    BINDINGS = [
        Binding("escape", "close_search", "Close search", show=False, id="history.close_search"),
    ]

    def compose(self) -> ComposeResult:
        yield HistoryView(id="history")
        search = Input(placeholder="search sha, author or message; enter to find, esc to close",
                       id="history-search")
        search.cursor_blink = False
        search.can_focus = False  # only while it is open
        yield search

    def on_mount(self) -> None:
        self.border_title = "History"
        self.border_subtitle = "loading…"

    @property
    def view(self) -> HistoryView:
        return self.query_one(HistoryView)

    def open_search(self) -> None:
        search = self.query_one("#history-search", Input)
        search.value = self.view.query_text
        search.display = True
        search.can_focus = True
        search.focus()

    def action_close_search(self) -> None:
        search = self.query_one("#history-search", Input)
        if search.display:
            search.display = False
            search.can_focus = False
            self.view.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_close_search()
        if event.value.strip():
            self.view.search(event.value, include_current=False)
        else:
            self.view.query_text = ""
            self.view.refresh_bindings()
            self.view.refresh()
