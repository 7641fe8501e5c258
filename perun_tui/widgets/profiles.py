"""The profiles pane: registered profiles of the selected commit, then the pending ones."""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from perun_core.api import LogEntry
from perun_core.api import ProfileInfo, escape_controls

from ..formatting import local_time
from ..messages import DiffRequested, ProfileAction
from .columns import Column, cut_cell, fit_cell, fit_columns
from .moves import LIST_MOVES, TABLE_ENDS

#: what the diff column says of a profile marked with m: the first marked is the baseline of the difference
_MARK_WORDS = ("base", "target")

#: the columns in table order (the diff column only while some profile listed is marked); at 80 columns tag to time and the postprocessors fit, cmd, args and
#: origin come in with room (the note line under the table names the selected profile's file).  Where
#: no profile listed has postprocessors, args or an origin, that column gives way to the others (its
#: header is wider than its dashes) and shows only where there is room for it whole.
_COLUMNS = (
    Column("tag", "tag", 0, 3),
    Column("mark", "diff", 0, 4),
    Column("type", "type", 1, 4),
    Column("collector", "collector", 3, 6),
    # a workload longer than usual (a fuzzer's /tmp/.../inputs/w121.txt) is cut in its middle, keeping its file's
    # name, before the time or the command beside it goes
    Column("workload", "workload", 2, 8, 40, middle=True, yields=20),
    Column("time", "time", 4, 16),
    Column("cmd", "cmd", 6, 6, 30),
    Column("args", "args", 7, 6, 30, optional=True),
    Column("postprocessors", "postprocessors", 5, 10, 40, optional=True),
    Column("origin", "origin", 8, 7, optional=True),
)


class ProfilesTable(DataTable):
    """One row per profile; the row key is the profile's tag (``0@i``, ``1@p``)."""

    COMPONENT_CLASSES = DataTable.COMPONENT_CLASSES | {
        "profiles--pending",
        "profiles--registered",
        "profiles--damaged",
    }

    #: what the tags and the diff column say: f1 lists it
    HELP_LEGEND = (
        ("tag", "N@i: registered at the commit; N@p: pending, collected but not registered (a registers it)"),
        ("diff", "base and target: the profiles marked with m for the difference d shows"),
    )

    BINDINGS = [
        Binding("enter", "details", "Details", tooltip="Header, collector, statistics and models",
                id="profiles.details"),
        Binding("p", "plot", "Plot", tooltip="Plot the profile: scatter, bars, flow, flame graph, heap map",
                id="profiles.plot"),
        Binding("o", "postprocess", "Postprocess", show=False,
                tooltip="Postprocess the profile into a new pending one (a form of the unit's parameters)",
                id="profiles.postprocess"),
        Binding("a", "register", "Register", tooltip="Register the pending profile at its commit",
                id="profiles.register"),
        Binding("u", "unlink", "Unlink", tooltip="Unlink the registered profile from this commit",
                id="profiles.unlink"),
        Binding("x", "delete", "Delete", show=False, tooltip="Delete the pending profile file",
                id="profiles.delete"),
        Binding("delete", "remove", "Remove", show=False, tooltip="Unlink a registered or delete a pending profile",
                id="profiles.remove"),
        Binding("m", "mark", "Mark", show=False, tooltip="Mark the profile for a difference (d); again to unmark",
                id="profiles.mark"),
        Binding("d", "diff", "Difference", show=False,
                tooltip="What changed between the two marked profiles (or the marked one and this one)",
                id="profiles.diff"),
        *LIST_MOVES,
        *TABLE_ENDS,
        # a and x where the two above do not apply (a registered profile): a line saying why, not nothing
        Binding("a", "refuse('register')", "", show=False, id="profiles.register_refused"),
        Binding("x", "refuse('delete')", "", show=False, id="profiles.delete_refused"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.infos: dict[str, ProfileInfo] = {}
        self.minor: str | None = None
        self._binding_state: tuple[bool, bool, bool] | None = None
        self._shown: tuple | None = None  # what the rows were built from: infos and styles
        #: profiles marked for a difference, (info, commit), across commits; the first is the baseline
        self.marked: list[tuple[ProfileInfo, str | None]] = []
        self._cells: list[tuple[str, list[Text]]] = []  # (tag, one Text per column of _COLUMNS)
        self._fitted: tuple[int, list[tuple[Column, int]]] | None = None  # (width, columns shown)
        #: the time zone every listed profile's time is in, named once in the time column's header; None when
        #: they differ (a daylight-saving change between them): then each time names its own
        self._zone: str | None = None

    def on_mount(self) -> None:
        self._build()

    def on_resize(self) -> None:
        if self._fitted is None or self._fitted[0] != self._width():
            self._build()

    def _width(self) -> int:
        return max(self.scrollable_content_region.width, 1)

    def _build(self) -> None:
        """(Re)create the columns that fit the width and the rows, the cursor kept on its row."""
        width = self._width()
        marks = any(cells[1].plain for _tag, cells in self._cells)
        kept = [marks or column.key != "mark" for column in _COLUMNS]
        columns = [replace(c, label=f"{c.label} {self._zone}") if c.key == "time" and self._zone else c
                   for c, keep in zip(_COLUMNS, kept) if keep]
        rows = [[cell.plain for cell, keep in zip(cells, kept) if keep] for _tag, cells in self._cells]
        fitted = fit_columns(columns, rows, width, padding=2 * self.cell_padding)
        row = self.cursor_row
        self.clear(columns=True)
        self._fitted = (width, fitted)
        keys = [column.key for column in _COLUMNS]
        shown = [(keys.index(column.key), column, size) for column, size in fitted]
        for _index, column, size in shown:
            self.add_column(fit_cell(column.label, size), key=column.key, width=size)  # a cut label ends in …
        for tag, cells in self._cells:
            texts = []
            for index, column, size in shown:
                cell = cells[index]
                texts.append(cut_cell(cell, size, middle=column.middle))
            self.add_row(*texts, key=tag)
        if self.row_count:
            self.move_cursor(row=max(min(row, self.row_count - 1), 0), animate=False)

    @property
    def current(self) -> ProfileInfo | None:
        if not self.infos or self.cursor_row < 0 or self.cursor_row >= self.row_count:
            return None
        key = self.coordinate_to_cell_key((self.cursor_row, 0)).row_key.value
        return self.infos.get(key or "")

    def comparable_pair(self, info: ProfileInfo | None) -> tuple[ProfileInfo, ProfileInfo] | None:
        """(baseline, target) to check against each other: ``info`` and the listed profile most like it (the same type,
        then the same collector, command and workload; a registered one before a pending one), the pending one as the
        target, the older one too among registered ones; without ``info``, the first pending profile that has such a
        partner.  None when nothing listed is comparable."""
        def likeness(one: ProfileInfo, other: ProfileInfo) -> tuple[int, ...]:
            return (one.collector == other.collector, one.cmd == other.cmd, one.workload == other.workload,
                    other.registered)

        usable = [i for i in self.infos.values() if not i.error]
        targets = [info] if info is not None else [i for i in usable if not i.registered] or usable
        for target in targets:
            others = [i for i in usable if i is not target and i.type == target.type]
            if not others:
                continue
            partner = max(others, key=lambda other: likeness(target, other))
            if target.registered and not partner.registered:
                return target, partner  # the pending one is the newer
            return partner, target
        return None

    def select_source(self, source: str) -> bool:
        """Put the cursor on the profile stored as ``source`` (a pending file or a registered name)."""
        for tag, info in self.infos.items():
            if source in (info.source, str(info.path or "")):
                self.move_cursor(row=self.get_row_index(tag), animate=False)
                return True
        return False

    def show(self, minor: str | None, registered: list[ProfileInfo], pending: list[ProfileInfo]) -> None:
        """Replace the rows, keeping the cursor on the same tag when it is still there."""
        previous = self.current.tag if self.current else None
        previous_row = self.cursor_row
        same_commit = minor == self.minor
        self.minor = minor
        pending_style = self.get_component_rich_style("profiles--pending", partial=True)
        registered_style = self.get_component_rich_style("profiles--registered", partial=True)
        damaged_style = self.get_component_rich_style("profiles--damaged", partial=True)
        rows = [*registered, *pending]
        shown = (rows, [self._mark_of(info) for info in rows], pending_style, registered_style, damaged_style,
                 self._width())
        if self._keep_rows(shown, same_commit):
            self._bindings_changed()
            return
        self._shown = shown
        self.infos = {}
        self._cells = []
        times = [local_time(info.time) for info in rows]
        zones = {when.rpartition(" ")[2] for when in times}
        self._zone = zones.pop() if len(zones) == 1 else None
        for info, when in zip(rows, times):
            self.infos[info.tag] = info
            tag_style = registered_style if info.registered else pending_style
            kind = Text(info.type or "?")
            if info.error:
                tag_style = damaged_style
                kind = Text("damaged" if info.registered else "invalid", style=damaged_style)
            self._cells.append((info.tag, [
                Text(info.tag, style=tag_style),
                Text(self._mark_of(info)),
                kind,
                Text(escape_controls(info.collector)),
                Text(escape_controls(info.workload)),
                Text(when.rpartition(" ")[0] if self._zone else when),
                Text(escape_controls(info.cmd)),
                Text(escape_controls(info.args)),
                Text(escape_controls(", ".join(info.postprocessors) or "-")),
                Text((info.origin or "")[:7]),
            ]))
        self.cursor_coordinate = Coordinate(0, 0)
        self._build()
        if previous and same_commit:
            # the same profile if it is still listed, else the row where it was
            row = self.get_row_index(previous) if previous in self.infos else min(previous_row, self.row_count - 1)
            self.move_cursor(row=max(row, 0), animate=False)
        self._bindings_changed()

    def _mark_of(self, info: ProfileInfo) -> str:
        """``base`` or ``target`` for a profile marked for a difference, else nothing."""
        for index, (marked, minor) in enumerate(self.marked):
            if marked.source == info.source and marked.registered == info.registered and \
                    (not info.registered or minor == self.minor):
                return _MARK_WORDS[index]
        return ""

    def _show_marks(self) -> None:
        """Put the marks into the diff column (the column comes and goes with them) and redraw."""
        for tag, cells in self._cells:
            cells[1] = Text(self._mark_of(self.infos[tag]))
        self._build()

    def _keep_rows(self, shown: tuple, same_commit: bool) -> bool:
        """Leave the rows as they are when they would be rebuilt identical; True if so.

        Rebuilding costs a render of every cell (DataTable drops its caches on
        any change), which is most of the time a history move takes, and most
        commits show just the same pending profiles.  Only when nothing the
        rebuild does could be seen: the table is not scrolled and the cursor
        row is on screen, so the rebuilt table would look the same, with the
        cursor on the first row, or, on the same commit, where it is.
        """
        if shown != self._shown or self.row_count != len(shown[0]) or self.scroll_offset != (0, 0):
            return False
        header = self.header_height if self.show_header else 0
        if not 0 <= self.cursor_row < self.scrollable_content_region.height - header:
            return False
        if not same_commit:
            self.move_cursor(row=0, column=0, animate=False)
        self.hover_coordinate = Coordinate(0, 0)
        return True

    # -- actions ---------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        info = self.current
        if action in ("details", "remove", "plot", "postprocess"):
            return info is not None
        if action == "register" or action == "delete":
            return info is not None and not info.registered
        if action == "unlink":
            return info is None or info.registered
        return True

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._bindings_changed()

    def _bindings_changed(self) -> None:
        # The footer rebuilds itself on every refresh_bindings(): do it only when
        # the keys that apply really change, and only while the footer shows them.
        info = self.current
        state = (self.has_focus, info is not None, bool(info and info.registered))
        if state != self._binding_state:
            self._binding_state = state
            if self.has_focus:
                self.refresh_bindings()

    def _on_focus(self, event) -> None:
        super()._on_focus(event)
        self._bindings_changed()

    def _on_blur(self, event) -> None:
        super()._on_blur(event)
        self._binding_state = None

    def _ask(self, action: str) -> None:
        info = self.current
        if info is None:
            self.notify("no profile is selected", severity="warning")
            return
        if action == "remove":
            action = "unlink" if info.registered else "delete"
        if action in ("register", "delete") and info.registered:
            done = "registered" if action == "register" else "deleted"
            self.notify(f"{info.tag} is already registered; only pending profiles can be {done}",
                        severity="warning")
            return
        if action == "unlink" and not info.registered:
            self.notify(f"{info.tag} is pending; press x to delete it", severity="warning")
            return
        self.post_message(ProfileAction(action, info, self.minor))

    def action_details(self) -> None:
        self._ask("details")

    def action_plot(self) -> None:
        self._ask("plot")

    def action_postprocess(self) -> None:
        self._ask("postprocess")

    def action_register(self) -> None:
        self._ask("register")

    def action_unlink(self) -> None:
        self._ask("unlink")

    def action_delete(self) -> None:
        self._ask("delete")

    def action_remove(self) -> None:
        self._ask("remove")

    def action_refuse(self, action: str) -> None:
        """The key of ``action`` pressed where it does not apply: :meth:`_ask` says why."""
        self._ask(action)

    def action_mark(self) -> None:
        info = self.current
        if info is None:
            return
        here = [(i, m) for i, m in self.marked if i.source == info.source and i.registered == info.registered]
        self.app.dismiss_notes("marked ", "unmarked ")  # type: ignore[attr-defined]
        if here:
            self.marked.remove(here[0])
            left = f" · {self.marked[0][0].tag} is still marked" if self.marked else " · nothing is marked"
            self.notify(f"unmarked {info.tag} (m marks and unmarks){left}")
            self._show_marks()
            return
        dropped = self.marked[0][0] if len(self.marked) == 2 else None
        self.marked = [*self.marked[-1:], (info, self.minor if info.registered else None)]
        self._show_marks()
        # the tag and its commit name the profile (the line under the table names its file): the key
        # to press next must not be pushed out of a toast three rows high by a long file name
        where = f" at {self.minor[:7]}" if info.registered and self.minor else " (pending)"
        unmarked = f" · unmarked {dropped.tag} (two at most)" if dropped else ""
        self.notify(f"marked {info.tag}{where}{unmarked}" + (" · press d for the difference" if len(self.marked) == 2
                                                             else " · mark another, or press d on one"))

    def action_diff(self) -> None:
        pair = list(self.marked)
        if len(pair) == 1 and self.current is not None:
            pair.append((self.current, self.minor if self.current.registered else None))
        if len(pair) != 2:
            self.notify("mark two profiles with m, then press d", severity="warning")
            return
        (base, base_minor), (target, target_minor) = pair
        self.post_message(DiffRequested(base, base_minor, target, target_minor))


class ProfilesPane(Vertical):
    """The table and a line saying what the selected row is."""

    def compose(self) -> ComposeResult:
        yield ProfilesTable(id="profiles")
        yield Static("", id="profiles-note")

    def on_mount(self) -> None:
        self.border_title = "Profiles"

    @property
    def table(self) -> ProfilesTable:
        return self.query_one(ProfilesTable)

    def show(self, entry: LogEntry | None, registered: list[ProfileInfo], pending: list[ProfileInfo]) -> None:
        minor = entry.version.checksum if entry else None
        self.table.show(minor, registered, pending)
        self.border_title = f"Profiles at {minor[:7]}" if minor else "Profiles"
        self.border_subtitle = f"{len(registered)} registered · {len(pending)} pending"
        self._update_note()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._update_note()

    def _update_note(self) -> None:
        note = self.query_one("#profiles-note", Static)
        info = self.table.current
        if not self.table.infos:
            # HEAD lists every pending profile; any other commit only those collected at it
            note.update("no profiles here: a commit lists those registered at it and the pending ones "
                        "collected at it")
        elif info is None:
            note.update("")
        elif info.error:
            note.update(Text(escape_controls(f"{info.tag}: {info.error}")))
        elif info.registered:
            note.update(Text(escape_controls(f"{info.tag} {info.source}")))
        else:
            origin = f" · collected at {info.origin[:7]}" if info.origin else " · no origin"
            note.update(Text(escape_controls(f"{info.tag} {info.source}{origin}")))
