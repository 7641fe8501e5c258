"""Table columns fitted to a width: the least useful dropped first, the rest widened while there is room.

A table lists its columns with a priority (0 the most useful), the width
below which a column is not worth showing, and a cap; :func:`fit_columns`
takes the columns in priority order, each as wide as its content needs (up
to the cap), until one does not fit: that one is shown narrower if its
minimum fits, and the less useful ones after it are left out.  The columns
keep their order on screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len

from ..formatting import fit

__all__ = ["Column", "fit_columns", "fit_cell"]


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    priority: int
    minimum: int
    maximum: int = 60


def fit_columns(columns: Sequence[Column], rows: Iterable[Sequence[str]], width: int,
                padding: int = 2) -> list[tuple[Column, int]]:
    """The columns that fit into ``width`` cells (each takes ``padding`` more), in table order, with widths.

    ``rows`` hold each column's plain text, in the order of ``columns``.
    The first column by priority is always shown, cut if it must be.
    """
    needed = [cell_len(column.label) for column in columns]
    for row in rows:
        for index, text in enumerate(row):
            needed[index] = max(needed[index], cell_len(text))
    wanted = [min(max(need, column.minimum), column.maximum) for need, column in zip(needed, columns)]
    order = sorted(range(len(columns)), key=lambda index: columns[index].priority)
    chosen: dict[int, int] = {}
    room = width
    for index in order:
        if wanted[index] + padding <= room:
            chosen[index] = wanted[index]
            room -= wanted[index] + padding
            continue
        # the first column that does not fit whole: shown narrower if its minimum fits, and the
        # columns after it (less useful) are left out, so the room goes to the more useful ones
        if room - padding >= min(columns[index].minimum, wanted[index]) or not chosen:
            chosen[index] = max(room - padding, 1)
        break
    return [(columns[index], chosen[index]) for index in sorted(chosen)]


def fit_cell(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with an ellipsis (not padded)."""
    return fit(text, width).rstrip() if cell_len(text) > width else text
