"""A table of resources that is stored either as rows or as columns.

Profiles of a million resources are common, and building a million Python
dicts costs more than everything else in loading a profile.  A
:class:`ResourceTable` therefore keeps whichever shape it was made in and
converts lazily: a profile read from the object store holds columns and only
becomes rows when someone iterates it; a profile parsed from documented JSON
holds rows and only becomes columns when it is encoded or analysed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import repeat
from operator import itemgetter
from typing import Any

#: Stand-in for "this resource has no such key" inside a column.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__slots__": ()})()


class ResourceTable:
    """Resources of one snapshot; rows are plain dicts in the documented form.

    Rows handed out share nested values (traces, uid dicts) between resources
    that were equal when stored: treat them as read-only, copy to modify.
    """

    __slots__ = ("_rows", "_keys", "_columns", "_length", "_sparse")

    def __init__(self, rows: list[dict] | None = None) -> None:
        self._rows: list[dict] | None = rows if rows is not None else []
        self._keys: list[str] | None = None
        self._columns: list[list] | None = None
        self._length = len(self._rows)
        self._sparse = False

    @classmethod
    def from_columns(
        cls, length: int, keys: list[str], columns: list[list], *, sparse: bool = False
    ) -> ResourceTable:
        """Build from parallel columns.

        ``sparse`` says that some rows lack some keys: those cells hold ``MISSING``.
        """
        table = cls.__new__(cls)
        table._rows = None
        table._keys = list(keys)
        table._columns = columns
        table._length = length
        table._sparse = sparse
        return table

    @property
    def sparse(self) -> bool:
        """True when some resource lacks a key that others have."""
        self.columns()
        return self._sparse

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows())

    def __bool__(self) -> bool:
        return self._length > 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceTable):
            return NotImplemented
        return self.rows() == other.rows()

    def rows(self) -> list[dict]:
        """The resources as a list of dicts (materialized once, then cached)."""
        if self._rows is None:
            self._rows = _columns_to_rows(self._keys or [], self._columns or [], self._length, self._sparse)
        return self._rows

    def columns(self) -> tuple[list[str], list[list]]:
        """Top-level keys in first-seen order and one value list per key."""
        if self._columns is None:
            self._keys, self._columns, self._sparse = _rows_to_columns(self._rows or [])
        return self._keys or [], self._columns

    def column(self, key: str) -> list:
        """Values of one top-level key, ``MISSING`` where a resource lacks it."""
        keys, columns = self.columns()
        try:
            return columns[keys.index(key)]
        except ValueError:
            return [MISSING] * self._length

    def keys(self) -> list[str]:
        return list(self.columns()[0])

    def append(self, resource: dict) -> None:
        self.rows().append(resource)
        self._invalidate_columns()

    def extend(self, resources: Iterable[dict]) -> None:
        rows = self.rows()
        rows.extend(resources)
        self._invalidate_columns()

    def _invalidate_columns(self) -> None:
        self._columns = None
        self._keys = None
        self._sparse = False
        self._length = len(self._rows or [])


def _rows_to_columns(rows: list[dict]) -> tuple[list[str], list[list], bool]:
    if not rows:
        return [], [], False
    key_list = list(rows[0])
    # Resources of one snapshot usually share their keys.  If every row has as
    # many keys as the first and each of the first's keys (itemgetter raises
    # otherwise), the key sets are equal; both checks run in C.
    if sum(map(len, rows)) == len(key_list) * len(rows):
        try:
            return key_list, [list(map(itemgetter(key), rows)) for key in key_list], False
        except KeyError:
            pass
    keys: dict[str, None] = {}
    for row in rows:
        for key in row:
            keys.setdefault(key, None)
    key_list = list(keys)
    return key_list, [[row.get(key, MISSING) for row in rows] for key in key_list], True


def _columns_to_rows(keys: list[str], columns: list[list], length: int, sparse: bool) -> list[dict]:
    if not keys:
        return [{} for _ in range(length)]
    if not sparse:
        return list(map(dict, map(zip, repeat(keys), zip(*columns))))
    return [
        {key: value for key, value in zip(keys, values) if value is not MISSING}
        for values in zip(*columns)
    ]
