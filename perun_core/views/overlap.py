"""Model curves drawn so that each one stays in sight where curves share the cells of a plot.

A terminal cell shows one marker: where two curves pass through the same
cells, the one drawn later hides the other.  Two fits that nearly agree (a
linear and a quadratic model of the same points) share most of their cells,
and the linear model's ``*`` was all but gone under the quadratic's ``+``.
So a curve hidden in most of its cells by curves drawn after it gets its
own marker back in every n-th column of those cells (n: it and the curves
that hide it): such a stretch reads ``*+*+``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["draw_curves"]


def draw_curves(plt: Any, curves: Sequence[tuple[Any, Any]], *, markers: Sequence[str], colours: Sequence[Any],
                labels: Sequence[str | None], xlim: tuple[float, float], ylim: tuple[float, float], columns: int,
                rows: int) -> None:
    """Draw each of ``curves`` (x and y arrays) with plotext's ``plt`` in order, then mark the hidden ones again.

    ``columns`` and ``rows`` are about the cells of the plot area (within a
    cell or two: they only pick the columns a hidden curve is marked in).
    """
    import numpy as np

    drawn = []
    for index, (x, y) in enumerate(curves):
        if not len(x):
            continue
        plt.plot([float(v) for v in x], [float(v) for v in y], marker=markers[index], color=colours[index],
                 label=labels[index])
        order = np.argsort(x, kind="stable")
        drawn.append((index, np.asarray(x, dtype=float)[order], np.asarray(y, dtype=float)[order]))
    if len(drawn) < 2 or columns < 2 or rows < 1 or xlim[1] <= xlim[0] or ylim[1] <= ylim[0]:
        return
    centres = xlim[0] + (np.arange(columns) + 0.5) * ((xlim[1] - xlim[0]) / columns)
    cells = []
    for _index, x, y in drawn:
        inside = (centres >= x[0]) & (centres <= x[-1])
        row = np.floor((np.interp(centres, x, y) - ylim[0]) * (rows / (ylim[1] - ylim[0])))
        cells.append(np.where(inside, row, np.nan))
    for turn, (index, x, y) in enumerate(drawn[:-1]):
        mine = cells[turn]
        shared = [later == mine for later in cells[turn + 1:]]
        hidden = np.isfinite(mine) & np.any(shared, axis=0)
        if 2 * int(hidden.sum()) <= int(np.isfinite(mine).sum()):
            continue  # in sight in most of its cells: crossing another curve is no reason to mark it again
        # its turn among the curves that hide it: every other column beside one curve, every third beside two
        chosen = centres[hidden & (np.arange(columns) % (1 + sum(bool(s.any()) for s in shared)) == 0)]
        if len(chosen):
            plt.scatter([float(v) for v in chosen], [float(v) for v in np.interp(chosen, x, y)],
                        marker=markers[index], color=colours[index])
