"""Clusterizer: a ``cluster`` number for every resource (spec §5.1.3).

Profiles without a natural independent variable (memory allocations, plain
timings) can still be modelled if similar amounts are put into numbered
clusters: the cluster then serves as ``x`` for regression analysis.

Resources are grouped by ``(type, subtype, uid)`` (a nested uid by its
joined form) and, inside a group, ordered by amount (ties keep profile
order).  Clusters are numbered from 1 within each group:

``sort_order``
    a resource's cluster is its position in that order (1, 2, 3, ...).
``sliding_window``
    the first resource opens a window; following resources join it while
    the window has room (its *width*) and their amount is within its
    *height*.  The first resource that does not fit opens the next window.

Window width (how many resources one window may take):

* ``absolute``: ``window_width`` resources;
* ``relative``: ``window_width`` times the group's size (0.01 = 1 %);
* ``weighted``: like relative, scaled by ``1 - p``, where ``p`` is the
  share of the group's resources whose amount equals the window's first
  amount, so frequent amounts are cut into finer clusters.

Widths are rounded up and are at least 1.  Window height (which amounts
join): ``absolute`` up to ``first + window_height``; ``relative`` up to
``first + |first| * window_height`` (window height 0.1 and a first amount
of 100 take amounts up to 110).

A resource whose amount is not a finite number gets no cluster (``None``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter
from ..profile.model import Profile
from ..profile.query import _path_column, as_profile
from ..profile.resources import MISSING, ResourceTable
from .points import DEFAULT_Y, _number_column

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "HEIGHT_MEASURES",
    "STRATEGIES",
    "WIDTH_MEASURES",
    "cluster_values",
    "clusterize_profile",
    "clusterize_table",
    "with_column",
]

STRATEGIES = ("sort_order", "sliding_window")
WIDTH_MEASURES = ("absolute", "relative", "weighted")
HEIGHT_MEASURES = ("absolute", "relative")
_UNIT = "clusterizer"


def _check(strategy: str, window_width: float, width_measure: str, window_height: float,
           height_measure: str) -> None:
    if strategy not in STRATEGIES:
        raise InvalidParameter(_UNIT, "strategy", strategy, " or ".join(STRATEGIES))
    if width_measure not in WIDTH_MEASURES:
        raise InvalidParameter(_UNIT, "width_measure", width_measure, ", ".join(WIDTH_MEASURES))
    if height_measure not in HEIGHT_MEASURES:
        raise InvalidParameter(_UNIT, "height_measure", height_measure, " or ".join(HEIGHT_MEASURES))
    for name, value in (("window_width", window_width), ("window_height", window_height)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise InvalidParameter(_UNIT, name, value, "a finite non-negative number")
    if window_width <= 0:
        raise InvalidParameter(_UNIT, "window_width", window_width, "a positive number")


def cluster_values(
    amounts: Any,
    groups: Any = None,
    *,
    strategy: str = "sort_order",
    window_width: float = 0.01,
    width_measure: str = "relative",
    window_height: float = 0.01,
    height_measure: str = "relative",
) -> numpy.ndarray:
    """Cluster numbers (int64, from 1 per group) for ``amounts``; 0 where an amount is not finite.

    ``groups`` (optional, same length) holds hashable group keys (or
    integer group codes as a numpy array); without it all amounts form one
    group.  See the module docstring for the
    strategies and window measures.
    """
    import numpy as np

    _check(strategy, window_width, width_measure, window_height, height_measure)
    values = np.asarray(amounts, dtype=np.float64).ravel()
    n = len(values)
    clusters = np.zeros(n, dtype=np.int64)
    if n == 0:
        return clusters
    if groups is None:
        codes = np.zeros(n, dtype=np.int64)
    elif isinstance(groups, np.ndarray) and groups.dtype.kind in "iu":
        codes = groups.astype(np.int64, copy=False)
    else:
        codes = _factorize(list(groups))
    if len(codes) != n:
        raise ValueError("groups must be as long as amounts")
    valid = np.flatnonzero(np.isfinite(values))
    if not len(valid):
        return clusters
    # by group, then amount, ties in profile order: two stable sorts (the
    # second, on small integer codes, is a radix sort)
    order = valid[np.argsort(values[valid], kind="stable")]
    group_codes = codes[order]
    if len(group_codes) and group_codes.max() < 2**15:
        group_codes = group_codes.astype(np.int16)
    order = order[np.argsort(group_codes, kind="stable")]
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    stops = np.r_[starts[1:], len(order)]
    if strategy == "sort_order":
        ranks = np.arange(len(order)) - np.repeat(starts, stops - starts) + 1
        clusters[order] = ranks
        return clusters
    sorted_values = values[order]
    for start, stop in zip(starts.tolist(), stops.tolist()):
        clusters[order[start:stop]] = _windows(sorted_values[start:stop], window_width, width_measure,
                                               window_height, height_measure)
    return clusters


def _windows(amounts: numpy.ndarray, window_width: float, width_measure: str, window_height: float,
             height_measure: str) -> numpy.ndarray:
    """Sliding-window cluster numbers of one group's sorted amounts."""
    import numpy as np

    n = len(amounts)
    out = np.empty(n, dtype=np.int64)
    if width_measure == "weighted":
        _, run = np.unique(amounts, return_counts=True)
        share = np.repeat(run / n, run)  # amounts are sorted, so runs are contiguous
    start = 0
    cluster = 0
    while start < n:
        cluster += 1
        first = float(amounts[start])
        if width_measure == "absolute":
            width = window_width
        elif width_measure == "relative":
            width = window_width * n
        else:
            width = window_width * n * (1.0 - float(share[start]))
        room = max(1, math.ceil(width - 1e-9))
        if height_measure == "absolute":
            ceiling = first + window_height
        else:
            ceiling = first + abs(first) * window_height
        fits = int(np.searchsorted(amounts, ceiling, side="right"))
        stop = max(start + 1, min(start + room, fits, n))
        out[start:stop] = cluster
        start = stop
    return out


def _factorize(values: list) -> numpy.ndarray:
    """Integer codes of hashable ``values``, numbered in first-seen order."""
    import numpy as np

    distinct = dict.fromkeys(values)
    if len(distinct) == 1:
        return np.zeros(len(values), dtype=np.int64)
    lookup = {value: code for code, value in enumerate(distinct)}
    return np.fromiter(map(lookup.__getitem__, values), dtype=np.int64, count=len(values))


def _group_codes(tables: list[ResourceTable]) -> numpy.ndarray:
    """One code per resource for its ``(type, subtype, uid)`` group."""
    import numpy as np

    combined = None
    for key in ("type", "subtype", "uid"):
        values: list = []
        for table in tables:
            values.extend(table.column(key))
        try:
            codes = _factorize(values)
        except TypeError:  # nested values: group by their joined form
            values = []
            for table in tables:
                values.extend(_path_column(table, key)[0])
            codes = _factorize(values)
        if combined is None:
            combined = codes
        else:
            combined = combined * (int(codes.max()) + 1) + codes
            if int(combined.max()) >= 2**15:
                # renumber densely, so the codes stay small and cannot overflow
                _, combined = np.unique(combined, return_inverse=True)
    assert combined is not None
    return combined.ravel()


def _amounts(table: ResourceTable, of: str) -> numpy.ndarray:
    # packed columns (decoded from the store) go straight into numpy
    return _number_column(table, of).values


def _as_list(clusters: numpy.ndarray) -> list[int | None]:
    values = clusters.tolist()
    if clusters.all():
        return values
    return [c if c else None for c in values]


def clusterize_table(table: ResourceTable, *, of: str = DEFAULT_Y, strategy: str = "sort_order",
                     **window: Any) -> list[int | None]:
    """Cluster of every resource of one table, aligned with its rows.

    ``of`` names the (possibly flattened) amount key; ``window`` takes
    ``window_width``, ``width_measure``, ``window_height`` and
    ``height_measure`` (see :func:`cluster_values`).
    """
    if not len(table):
        return []
    clusters = cluster_values(_amounts(table, of), _group_codes([table]), strategy=strategy, **window)
    return _as_list(clusters)


def clusterize_profile(profile: Profile | dict, *, of: str = DEFAULT_Y, strategy: str = "sort_order",
                       **window: Any) -> list[list[int | None]]:
    """Clusters of all resources of a profile, one list per region (:meth:`Profile.regions` order).

    Groups span all regions, as the amounts of one function in different
    snapshots are measurements of the same thing.
    """
    import numpy as np

    regions = [region.resources for _, region in as_profile(profile).regions()]
    sizes = [len(t) for t in regions]
    filled = [t for t in regions if len(t)]
    if not filled:
        return [[] for _ in regions]
    amounts = np.concatenate([_amounts(t, of) for t in filled])
    clusters = _as_list(cluster_values(amounts, _group_codes(filled), strategy=strategy, **window))
    out = []
    position = 0
    for size in sizes:
        out.append(clusters[position:position + size])
        position += size
    return out


def with_column(table: ResourceTable, key: str, values: list) -> ResourceTable:
    """A new table with column ``key`` set to ``values`` (aligned with the rows).

    ``None`` values leave the key out of that resource.  The original table
    is not changed; other columns are shared with it.
    """
    if len(values) != len(table):
        raise ValueError("values must be as long as the table")
    keys, columns = table.columns()
    keys = list(keys)
    columns = list(columns)
    new = [MISSING if v is None else v for v in values]
    sparse = table.sparse or any(v is None for v in values)
    if key in keys:
        columns[keys.index(key)] = new
    else:
        keys.append(key)
        columns.append(new)
    return ResourceTable.from_columns(len(table), keys, columns, sparse=sparse)
