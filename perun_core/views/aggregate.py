"""Grouping and aggregating resource columns with numpy (for bars and flow).

Columns come from :func:`perun_core.profile.query.resource_table` (``None``
where a resource lacks the key).  Groups are numbered by :func:`factorize`
in sorted order: numbers first (ascending), then everything else by its
text.  :func:`aggregate` computes one value per group without a Python
loop over resources.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

from ..analysis.points import numeric_array
from .base import AGGREGATIONS

if TYPE_CHECKING:  # pragma: no cover
    import numpy


def _order(value: Any) -> tuple:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    return (1, 0, str(value))


def factorize(values: Sequence[Any]) -> tuple[numpy.ndarray, list]:
    """``(codes, distinct)``: each value's index into the sorted distinct values; -1 for ``None`` and NaN."""
    import numpy as np

    kinds = set(map(type, values))
    if kinds == {int}:
        try:
            integers = np.array(values, dtype=np.int64)
        except OverflowError:
            integers = None
        # floats hold ints exactly up to 2**53; beyond that go the long way
        if integers is not None and int(np.abs(integers).max()) < 2**53:
            return _factorize_floats(integers.astype(np.float64), ints=True)
    elif kinds and kinds <= {int, float}:
        try:
            return _factorize_floats(np.array(values, dtype=np.float64), ints=False)
        except OverflowError:
            pass
    distinct = [v for v in dict.fromkeys(values) if v is not None and v == v]
    distinct.sort(key=_order)
    lookup: dict[Any, int] = {value: index for index, value in enumerate(distinct)}
    lookup[None] = -1
    try:
        codes = np.fromiter(map(lookup.__getitem__, values), dtype=np.int64, count=len(values))
    except KeyError:  # NaN, which equals nothing
        codes = np.fromiter((lookup.get(v, -1) for v in values), dtype=np.int64, count=len(values))
    return codes, distinct


def _factorize_floats(array: numpy.ndarray, *, ints: bool) -> tuple[numpy.ndarray, list]:
    import numpy as np

    valid = ~np.isnan(array)
    distinct, inverse = np.unique(array[valid], return_inverse=True)
    codes = np.full(len(array), -1, dtype=np.int64)
    codes[valid] = inverse.reshape(-1)
    return codes, [int(v) for v in distinct.tolist()] if ints else distinct.tolist()


def values_of(column: Sequence[Any], func: str) -> numpy.ndarray:
    """What ``func`` aggregates: 1.0 for every present value when counting, else the numbers (NaN elsewhere)."""
    import numpy as np

    if func == "count":
        present = np.fromiter(map(operator.is_not, column, repeat(None)), dtype=bool, count=len(column))
        return present.astype(np.float64)
    return numeric_array(list(column))


def aggregate(values: numpy.ndarray, codes: numpy.ndarray, groups: int, func: str) -> numpy.ndarray:
    """``func`` of ``values`` per group code (0 .. ``groups`` - 1).

    Negative codes and NaN values are left out.  ``count`` gives 0 for an
    empty group (``values`` holds 1.0 per counted resource, see
    :func:`values_of`); every other function gives NaN there.
    """
    import numpy as np

    if func not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {func!r}")
    keep = (codes >= 0) & ~np.isnan(values)
    if func == "count":
        keep &= values > 0
    c = codes[keep]
    v = values[keep]
    counts = np.bincount(c, minlength=groups).astype(np.float64)
    if func == "count":
        return counts
    out = np.full(groups, np.nan)
    filled = counts > 0
    if func in ("sum", "mean"):
        sums = np.bincount(c, weights=v, minlength=groups)
        out[filled] = sums[filled] if func == "sum" else sums[filled] / counts[filled]
        return out
    order = np.lexsort((v, c))
    sorted_codes = c[order]
    sorted_values = v[order]
    ids = np.arange(groups)
    starts = np.searchsorted(sorted_codes, ids, side="left")[filled]
    ends = np.searchsorted(sorted_codes, ids, side="right")[filled]
    if func == "min":
        out[filled] = sorted_values[starts]
    elif func == "max":
        out[filled] = sorted_values[ends - 1]
    else:  # median
        low = sorted_values[(starts + ends - 1) // 2]
        high = sorted_values[(starts + ends) // 2]
        out[filled] = (low + high) / 2
    return out


def grouped(
    table: dict[str, list], of: str, per: str, by: str | None, func: str
) -> tuple[list, list, numpy.ndarray]:
    """``(per values, by values, matrix)``: ``matrix[b, p]`` = ``func`` of ``of`` for that pair.

    Without ``by`` there is one group, named ``None``.  Resources lacking
    ``per`` or ``by`` are left out.
    """
    import numpy as np

    per_codes, per_values = factorize(table[per])
    if by is not None:
        by_codes, by_values = factorize(table[by])
    else:
        by_codes, by_values = np.zeros(len(per_codes), dtype=np.int64), [None]
    combined = np.where((per_codes >= 0) & (by_codes >= 0), by_codes * max(len(per_values), 1) + per_codes, -1)
    result = aggregate(values_of(table[of], func), combined, len(by_values) * len(per_values), func)
    return per_values, by_values, result.reshape(len(by_values), len(per_values))
