"""Keeping or dropping resources by uid, type, subtype or the value of any key.

A resource *matches* when it satisfies every criterion given:

* ``uids`` / ``types`` / ``subtypes``: its ``uid`` (a nested uid in its
  joined form, ``"a.c:main:22"``), ``type`` or ``subtype`` is one of the
  given strings;
* each condition ``key op value``, ``op`` one of :data:`OPERATORS`: with a
  numeric ``value``, the resource's value of the (possibly flattened) key
  must be a number (``int``/``float``, not ``bool``) comparing so; with a
  string ``value`` (only ``==`` and ``!=``) the value itself is compared.
  A resource lacking the key never satisfies a condition, ``!=`` included.

With ``mode="keep"`` the matching resources stay; with ``mode="drop"``
they go.  No criteria at all match every resource.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable, Iterable
from itertools import compress
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import InvalidParameter
from ..profile.model import Profile, Snapshot
from ..profile.query import as_profile
from ..profile.resources import MISSING, ResourceTable
from .points import column_values, numeric_array

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "OPERATORS",
    "Condition",
    "filter_profile",
    "filter_rows",
    "filter_table",
    "parse_condition",
    "resource_mask",
]

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
OPERATORS = tuple(_COMPARE)
_UNIT = "filter"


class Condition(NamedTuple):
    """``key op value``, e.g. ``Condition("amount", ">=", 10)``."""

    key: str
    op: str
    value: int | float | str

    def check(self) -> Condition:
        if self.op not in _COMPARE:
            raise InvalidParameter(_UNIT, "condition", self, f"an operator of {' '.join(OPERATORS)}")
        if not isinstance(self.key, str) or not self.key:
            raise InvalidParameter(_UNIT, "condition", self, "a non-empty key")
        if isinstance(self.value, str):
            if self.op not in ("==", "!="):
                raise InvalidParameter(_UNIT, "condition", self, "a number to compare with " + self.op)
        elif isinstance(self.value, bool) or not isinstance(self.value, (int, float)) or (
                isinstance(self.value, float) and math.isnan(self.value)):
            raise InvalidParameter(_UNIT, "condition", self, "a number or a string value")
        else:
            try:
                float(self.value)
            except OverflowError:
                raise InvalidParameter(_UNIT, "condition", self, "a number within the float range") from None
        return self


def _parse_value(text: str) -> int | float | str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if not math.isnan(number) else text


def parse_condition(text: str) -> Condition:
    """Parse ``"key op value"`` (``"amount >= 10"``, ``"uid:function == main"``).

    The first operator in the text splits it; a value that reads as a
    number is a number, anything else (quotes stripped) a string.
    """
    for position in range(len(text)):
        for op in ("==", "!=", "<=", ">=", "<", ">"):
            if text.startswith(op, position):
                key = text[:position].strip()
                condition = Condition(key, op, _parse_value(text[position + len(op):]))
                return condition.check()
    raise InvalidParameter(_UNIT, "condition", text, f"'key op value' with op one of {' '.join(OPERATORS)}")


def _condition(item: Condition | str | tuple) -> Condition:
    if isinstance(item, Condition):
        return item.check()
    if isinstance(item, str):
        return parse_condition(item)
    if isinstance(item, tuple) and len(item) == 3:
        return Condition(*item).check()
    raise InvalidParameter(_UNIT, "condition", item, "'key op value' or a (key, op, value) triple")


def _names(value: str | Iterable[str] | None, what: str) -> set[str] | None:
    if value is None:
        return None
    names = {value} if isinstance(value, str) else set(value)
    if not all(isinstance(n, str) for n in names):
        raise InvalidParameter(_UNIT, what, value, "strings")
    return names


def _by_value(values: list, test: Callable[[Any], bool]) -> numpy.ndarray:
    """``test`` of every value, evaluated once per distinct value."""
    import numpy as np

    try:
        verdicts = {v: bool(test(v)) for v in dict.fromkeys(values)}
        return np.fromiter(map(verdicts.__getitem__, values), dtype=bool, count=len(values))
    except TypeError:  # an unhashable value
        return np.fromiter(map(test, values), dtype=bool, count=len(values))


def _member(wanted: set[str]) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        if value is MISSING:
            return False
        return value in wanted or (not isinstance(value, str) and str(value) in wanted)

    return test


def _matches(table: ResourceTable, condition: Condition) -> numpy.ndarray:
    import numpy as np

    values = column_values(table, condition.key)
    compare = _COMPARE[condition.op]
    if isinstance(condition.value, str):
        target = condition.value
        return _by_value(values, lambda v: v is not MISSING and compare(v, target))
    numbers = numeric_array(values)
    with np.errstate(invalid="ignore"):
        return compare(numbers, float(condition.value)) & ~np.isnan(numbers)


def resource_mask(
    table: ResourceTable,
    *,
    uids: str | Iterable[str] | None = None,
    types: str | Iterable[str] | None = None,
    subtypes: str | Iterable[str] | None = None,
    conditions: Iterable[Condition | str | tuple] = (),
    mode: str = "keep",
) -> numpy.ndarray:
    """Boolean array, one per resource of ``table``: True where the resource stays."""
    import numpy as np

    if mode not in ("keep", "drop"):
        raise InvalidParameter(_UNIT, "mode", mode, "keep or drop")
    checks = [_condition(c) for c in conditions]
    selections = [(key, _names(names, key + "s")) for key, names in
                  (("uid", uids), ("type", types), ("subtype", subtypes))]
    match = np.ones(len(table), dtype=bool)
    for key, names in selections:
        if names is not None and len(table):
            match &= _by_value(column_values(table, key), _member(names))
    for condition in checks:
        if len(table):
            match &= _matches(table, condition)
    return match if mode == "keep" else ~match


def filter_table(table: ResourceTable, **criteria: Any) -> ResourceTable:
    """A new table of the resources that stay (see :func:`resource_mask` for ``criteria``)."""
    mask = resource_mask(table, **criteria)
    if mask.all():
        return table
    keep = mask.tolist()
    keys, columns = table.columns()
    return ResourceTable.from_columns(
        int(mask.sum()), list(keys), [list(compress(column, keep)) for column in columns], sparse=table.sparse
    )


def filter_rows(table: ResourceTable, **criteria: Any) -> list[dict]:
    """The resources that stay, as dicts (shared with ``table``)."""
    mask = resource_mask(table, **criteria)
    return list(compress(table.rows(), mask.tolist()))


def filter_profile(profile: Profile | dict, **criteria: Any) -> Profile:
    """A new profile whose every region holds only the resources that stay.

    Models and everything else are kept as they are (and shared with the
    original).
    """
    prof = as_profile(profile)

    def region(snapshot: Snapshot) -> Snapshot:
        return dataclasses.replace(snapshot, resources=filter_table(snapshot.resources, **criteria),
                                   models=list(snapshot.models), meta=dict(snapshot.meta))

    return dataclasses.replace(
        prof,
        snapshots=[region(s) for s in prof.snapshots],
        global_region=region(prof.global_region) if prof.global_region is not None else None,
    )
