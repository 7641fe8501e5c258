"""The cells of a difference: a profile's columns read (names as text, numbers with their mask, values as
codes) and an amount written."""

from __future__ import annotations

from typing import Any

from ..amounts import format_amount


def cell_text(value: Any) -> str:
    if type(value) is str:
        return value
    if isinstance(value, dict):
        name = value.get("function", value.get("func", value.get("name", "")))
        where = value.get("source", value.get("file"))
        line = value.get("line")
        return f"{name}" + (f" ({where}" + (f":{line}" if line is not None else "") + ")" if where else "")
    return "" if value is None else str(value)


def numeric_cells(column: list) -> tuple[Any, Any]:
    """(float array, mask of the numeric cells) of a column."""
    import numpy as np

    try:
        values = np.array(column, dtype=np.float64)
        return values, np.isfinite(values)
    except (TypeError, ValueError):
        values = np.array([v if type(v) in (int, float) else np.nan for v in column], dtype=np.float64)
        return values, np.isfinite(values)


def coded_cells(column: list, convert: bool = False) -> tuple[list, Any]:
    """(distinct values, int codes) of a column; values that are not strings made text when ``convert``."""
    import numpy as np

    try:
        distinct: list | None = list(dict.fromkeys(column))
    except TypeError:  # unhashable values (uids that are dicts)
        distinct = None
    if distinct is None or (convert and any(type(v) is not str for v in distinct)):
        if convert:
            column = [v if type(v) is str else cell_text(v) for v in column]
        distinct = list(dict.fromkeys(column))
    if len(distinct) == 1:  # a type or subtype shared by every resource
        return distinct, np.zeros(len(column), dtype=np.int64)
    index = dict(zip(distinct, range(len(distinct))))
    return distinct, np.fromiter(map(index.__getitem__, column), dtype=np.int64, count=len(column))


def amount_cell(value: float | None, unit: str = "", column: bool = False) -> str:
    """An amount of a difference's table or bars with its unit (``-`` for none), rounded off float noise."""
    if value is None:
        return "-"
    return format_amount(round(value, 6) if isinstance(value, float) else value, unit, column=column)
