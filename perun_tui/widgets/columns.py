"""Table columns fitted to a width: the least useful dropped first, the rest widened while there is room.

A table lists its columns with a priority (0 the most useful), the width
below which a column is not worth showing, and a cap; :func:`fit_columns`
takes the columns in priority order, each as wide as its content needs (up
to the cap), until one does not fit: that one is shown whole if the columns
marked ``shrink`` before it can give up enough width above their minimums,
else narrower, down to its minimum (for which they give up what it needs);
the less useful ones after it are left out, but for a table of fewer than
:data:`FEWEST` columns, where the next one is fitted the same way.  A
column marked ``yields`` gives up its cells above that width to any later
column (not ``optional``) that it makes room for whole, and the columns
after that one are fitted the same way: a long workload is cut before the
command beside it goes.  A column marked ``optional`` that has nothing in any row
(every cell empty or ``-``) comes after every column with something in it,
and only whole: its header alone would take the width a column with
content needs.  The columns keep their order on screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from perun_core.api import fit_middle

from ..formatting import fit
from .moves import LIST_MOVES, TABLE_ENDS

__all__ = ["AmountsTable", "Column", "FittedTable", "cut_cell", "fit_columns", "fit_cell"]


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    priority: int
    minimum: int
    maximum: int = 60
    #: gives up width down to ``minimum`` so that a more useful column is not cut
    shrink: bool = False
    #: gives up width down to ``minimum`` only so that a table shows :data:`FEWEST` columns
    squeeze: bool = False
    #: with nothing in any row (every cell empty or ``-``), last in line and shown only whole
    optional: bool = False
    #: a cell too wide is shortened in its middle: its end tells rows apart (``./app [max_rss]``)
    middle: bool = False
    #: wider than this, gives up cells (down to this) so that a later column (not ``optional``) is shown whole:
    #: a long value of it does not push out what a usual one leaves room for
    yields: int = 0


#: a table of fewer columns says too little: the next one still gets its minimum from the shrinking columns
#: (the check's location, result and delta at 40 columns)
FEWEST = 3

#: what a cell holds when it says nothing (an empty list shown as a dash)
_NOTHING = ("", "-")


def fit_columns(columns: Sequence[Column], rows: Iterable[Sequence[str]], width: int,
                padding: int = 2) -> list[tuple[Column, int]]:
    """The columns that fit into ``width`` cells (each takes ``padding`` more), in table order, with widths.

    ``rows`` hold each column's plain text, in the order of ``columns``.
    The first column by priority is always shown, cut if it must be.
    """
    needed = [cell_len(column.label) for column in columns]
    empty = [column.optional for column in columns]  # optional and, so far, nothing in it
    for row in rows:
        for index, text in enumerate(row):
            needed[index] = max(needed[index], cell_len(text))
            if empty[index] and text.strip() not in _NOTHING:
                empty[index] = False
    wanted = [min(max(need, column.minimum), column.maximum) for need, column in zip(needed, columns)]
    order = sorted(range(len(columns)), key=lambda index: (empty[index], columns[index].priority))
    chosen: dict[int, int] = {}
    room = width
    for index in order:
        if wanted[index] + padding <= room:
            chosen[index] = wanted[index]
            room -= wanted[index] + padding
            continue
        # the first column that does not fit whole is shown narrower if its minimum fits; before
        # that, the columns marked ``shrink`` give up what they have above their minimum if that
        # makes it fit whole.  The columns after it (less useful) are left out.  An empty optional
        # column cut would show a cut header over dashes: it is left out instead.
        if empty[index] and chosen:
            break
        least = min(columns[index].minimum, wanted[index])
        short = len(chosen) < FEWEST
        slack = {other: chosen[other] - columns[other].minimum for other in chosen
                 if (columns[other].shrink or (short and columns[other].squeeze))
                 and chosen[other] > columns[other].minimum}
        spare = {other: chosen[other] - columns[other].yields for other in chosen
                 if columns[other].yields and chosen[other] > columns[other].yields}
        if not columns[index].optional and wanted[index] + padding - room <= sum(spare.values()):
            # whole once the yielding columns give up what it lacks (a long workload cut, the command beside it):
            # the columns after it are fitted the same way; an optional one (often empty) cuts none for itself
            _give(columns, chosen, spare, wanted[index] + padding - room)
            chosen[index] = wanted[index]
            room = 0
            continue
        # its minimum fits; or, in a table of fewer than FEWEST columns, fits once the shrinking columns give up
        # their width above theirs
        few = short and room + sum(slack.values()) - padding >= least
        if room - padding >= least or not chosen or few:
            deficit = wanted[index] + padding - room
            if few and sum(slack.values()) < deficit and room - padding < least:
                deficit = least + padding - room  # shown at its minimum, the others down to what it needs
            if sum(slack.values()) >= deficit:
                # the columns marked shrink give first (a location cut in its middle still reads), then those
                # that squeeze (a result cut to "= NoChan…" does not), each the least useful first
                for other in sorted(slack, key=lambda o: (columns[o].shrink, columns[o].priority), reverse=True):
                    take = min(slack[other], deficit)
                    chosen[other] -= take
                    room += take
                    deficit -= take
                chosen[index] = min(wanted[index], room - padding)
                room -= chosen[index] + padding
                if len(chosen) < FEWEST:
                    continue
            else:
                chosen[index] = max(room - padding, 1)
        break
    return [(columns[index], chosen[index]) for index in sorted(chosen)]


def _give(columns: Sequence[Column], chosen: dict[int, int], slack: dict[int, int], deficit: int) -> None:
    """Take ``deficit`` cells from the ``chosen`` columns with ``slack``, the least useful first."""
    for other in sorted(slack, key=lambda o: columns[o].priority, reverse=True):
        take = min(slack[other], deficit)
        chosen[other] -= take
        deficit -= take


def fit_cell(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with an ellipsis (not padded)."""
    return fit(text, width).rstrip() if cell_len(text) > width else text


class FittedTable(DataTable):
    """A row-cursor table whose columns follow :func:`fit_columns` at every width.

    Rows are given whole (one Text per column of ``columns``) by
    :meth:`set_rows`, or one at a time by :meth:`put_row` and
    :meth:`set_cell` (a table that grows while work goes on); on a resize,
    or when new content changes what fits, the columns are fitted again and
    the rows re-added, the cursor kept on its row.  Cells wider than their
    column end in an ellipsis.
    """

    BINDINGS = [*LIST_MOVES, *TABLE_ENDS]

    def __init__(self, columns: Sequence[Column], *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.columns_wanted = tuple(columns)
        self._cells: list[tuple[str, list[Text]]] = []
        self._fitted: int | None = None  # the width the columns were fitted to
        self._shown: list[tuple[Column, int]] = []  # the columns shown, with their widths

    def on_mount(self) -> None:
        self._build()

    def on_resize(self) -> None:
        if self._fitted != self._width():
            self._build()

    def on_show(self) -> None:
        # a table filled while hidden (a tab not shown) was fitted to no width: fitted again once it shows
        self.call_after_refresh(self.on_resize)

    def watch_show_vertical_scrollbar(self) -> None:
        # the scrollbar that came (or went) with the rows takes (or gives) a column the table was fitted to
        self.call_after_refresh(self.on_resize)

    def _fit(self) -> list[tuple[Column, int]]:
        return fit_columns(self.columns_wanted, [[cell.plain for cell in cells] for _key, cells in self._cells],
                           self._width(), padding=2 * self.cell_padding)

    def put_row(self, key: str, cells: list[Text]) -> None:
        """Add a row at the end (one Text per column); the columns are fitted again only if it changes them."""
        self._cells.append((key, list(cells)))
        if self._fit() != self._shown:
            self._build()
            return
        self.add_row(*self._cut(cells), key=key)

    def set_cell(self, key: str, column: str, cell: Text) -> None:
        """Change one cell of the row ``key``; a row that is not there is ignored."""
        index = next(i for i, wanted in enumerate(self.columns_wanted) if wanted.key == column)
        row = next((cells for row_key, cells in self._cells if row_key == key), None)
        if row is None:
            return
        row[index] = cell
        if self._fit() != self._shown:
            self._build()
            return
        shown = next(((shown, size) for shown, size in self._shown if shown.key == column), None)
        if shown is not None:
            self.update_cell(key, column, cut_cell(cell, shown[1], middle=shown[0].middle))

    def _cut(self, cells: list[Text]) -> list[Text]:
        return [cut_cell(cells[self.columns_wanted.index(column)], size, middle=column.middle)
                for column, size in self._shown]

    def _width(self) -> int:
        """The cells the columns have; while the table is not shown (a hidden tab), the screen's: its last
        region may be none, or the size of an older layout."""
        width = self.scrollable_content_region.width if self.is_on_screen else 0
        return width if width > 0 else max(self.app.size.width - 6, 1)

    def set_rows(self, rows: Iterable[tuple[str, list[Text]]]) -> None:
        """Replace the rows: (key, one Text per column)."""
        self._cells = list(rows)
        self.cursor_coordinate = Coordinate(0, 0)
        self._build()

    def _build(self) -> None:
        self._shown = self._fit()
        row = self.cursor_row
        self.clear(columns=True)
        self._fitted = self._width()
        for column, size in self._shown:
            self.add_column(fit_cell(column.label, size), key=column.key, width=size)  # a cut label ends in …
        for key, cells in self._cells:
            self.add_row(*self._cut(cells), key=key)
        if self.row_count:
            self.move_cursor(row=max(min(row, self.row_count - 1), 0), animate=False)


def cut_cell(cell: Text, width: int, *, middle: bool = False) -> Text:
    """``cell`` as it is if it fits ``width`` cells, else cut with an ellipsis (in its ``middle``), its style kept."""
    if cell.cell_len <= width:
        return cell
    text = fit_middle(cell.plain, width) if middle else fit_cell(cell.plain, width)
    return Text(text, style=cell.style, justify=cell.justify)


class AmountsTable(DataTable):
    """A read-only table of named rows of amounts that fits its width without scrolling sideways.

    The first column names a row, the others hold amounts with their units
    (``184.9 ms``) or short text (a model and its coefficients).  Beside a
    name they are never cut: their columns are as wide as their widest cell
    and the name column takes what is left, a long name shortened in its
    middle (its end, a ``[unit]``, tells rows apart).  When they leave a
    name fewer than :attr:`NAME_ROOM` cells, each row is shown as a list
    instead: its name on a line of its own, then one ``label  value`` line
    per column (a value wider than the line goes on under itself, broken
    between words; only a word wider than the line ends in an ellipsis).  The layout is chosen again on
    every resize.
    """

    BINDINGS = LIST_MOVES

    #: the fewest cells of a name beside the amounts before the rows become lists
    NAME_ROOM = 12

    def __init__(self, labels: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=False)
        self.labels = tuple(labels)
        self.rows_given: list[list[Text]] = []
        self.listed = False  # shown as a list of name and label/amount lines
        self._fitted: int | None = None

    def set_rows(self, rows: Iterable[Sequence[Text]]) -> None:
        """Replace the rows: one Text per label, the name first."""
        self.rows_given = [list(row) for row in rows]
        self._build()

    def on_resize(self) -> None:
        if self._fitted != self._width():
            self._build()

    def _width(self) -> int:
        """The cells the columns have; while the table is not shown (a hidden tab), the screen's: its last
        region may be none, or the size of an older layout."""
        width = self.scrollable_content_region.width if self.is_on_screen else 0
        return width if width > 0 else max(self.app.size.width - 6, 1)

    def _build(self) -> None:
        width = self._fitted = self._width()
        self._fill(width)
        # as tall as its lines, each one cell high: its container scrolls, not the table (a DataTable's own
        # max-height, its container's height, cut the rows listed at 40x12 out of reach of every key)
        lines = self.row_count + (1 if self.show_header else 0)
        self.styles.height = self.styles.max_height = max(lines, 1)

    def _fill(self, width: int) -> None:
        """The columns and rows for ``width`` cells: a table, or a list where the names would have too little."""
        pad = 2 * self.cell_padding
        amounts = [max([cell_len(label)] + [row[index].cell_len for row in self.rows_given])
                   for index, label in enumerate(self.labels) if index > 0]
        names = max([cell_len(self.labels[0])] + [row[0].cell_len for row in self.rows_given])
        room = width - sum(size + pad for size in amounts) - pad
        self.clear(columns=True)
        self.listed = room < min(self.NAME_ROOM, names)
        self.show_header = not self.listed
        if not self.listed:
            name_width = min(names, room)
            self.add_column(fit_cell(self.labels[0], name_width), width=name_width)
            for index, (label, size) in enumerate(zip(self.labels[1:], amounts), start=1):
                # a heading stands where its column's cells do: over right-justified numbers on the right
                justify = self.rows_given[0][index].justify if self.rows_given else None
                self.add_column(Text(label, justify=justify or "left"), width=size)
            for row in self.rows_given:
                self.add_row(cut_cell(row[0], name_width, middle=True),
                             *(_right_aligned(cell, size) for cell, size in zip(row[1:], amounts)))
            return
        # one column of lines: the name, then each amount after its label (indented under the name)
        line_width = max(width - pad, 1)
        key_width = max(cell_len(label) for label in self.labels[1:])
        value_width = max(line_width - key_width - 4, 1)
        self.show_header = False
        self.add_column("", width=line_width)
        for row in self.rows_given:
            self.add_row(Text(cut_cell(row[0], line_width, middle=True).plain, style="bold"))
            for label, cell in zip(self.labels[1:], row[1:]):
                for number, part in enumerate(_wrap_words(cell.plain, value_width)):
                    line = Text(f"  {(label if number == 0 else '').ljust(key_width)}  ")
                    line.append(part, style=cell.style)
                    self.add_row(line)


def _right_aligned(cell: Text, size: int) -> Text:
    """A right-justified ``cell`` padded on its left to ``size`` by hand: rich's right justification strips the
    trailing spaces that keep a singular count's digits under a plural's (``1 sample `` under ``56 samples``)."""
    if cell.justify != "right" or not cell.plain.endswith(" "):
        return cell
    padded = cell.copy()
    padded.pad_left(max(size - cell.cell_len, 0))
    padded.justify = "left"
    return padded


def _wrap_words(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken between words (``b0=0.804`` / ``b1=-2.4e-05``).

    A number is never cut: only a single word wider than the whole line
    ends in an ellipsis.
    """
    lines: list[str] = []
    for word in text.split(" "):
        if lines and cell_len(lines[-1]) + 1 + cell_len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(fit_cell(word, width))
    return lines or [""]
