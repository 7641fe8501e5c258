"""The keys that move the cursor of every list and table as the arrows do: ``j`` down, ``k`` up.

The history has its own (``up,k`` and ``down,j``); each other list and table
of the app (the profiles, the check findings, the run's jobs, the matrix's
units and preview, the fuzz results, the details' amounts, the explained
functions) adds these to its bindings, so the keys do the same wherever the
cursor is; the tables take ``home`` and ``end`` to their first and last row.
"""

from __future__ import annotations

from textual.binding import Binding

__all__ = ["LIST_MOVES", "TABLE_ENDS"]

#: ``j`` and ``k`` as ``down`` and ``up`` (DataTable and OptionList both name these actions so)
LIST_MOVES = [
    Binding("j", "cursor_down", "Down", show=False, tooltip="Move the cursor down (as ↓)", id="list.down"),
    Binding("k", "cursor_up", "Up", show=False, tooltip="Move the cursor up (as ↑)", id="list.up"),
]

#: ``home`` and ``end`` to the first and the last row of a table, as in the history and an option list
#: (a table's own move the view to its leftmost and rightmost column, which the fitted tables never need)
TABLE_ENDS = [
    Binding("home", "scroll_top", "First", show=False, tooltip="Move the cursor to the first row", id="table.first"),
    Binding("end", "scroll_bottom", "Last", show=False, tooltip="Move the cursor to the last row", id="table.last"),
]
