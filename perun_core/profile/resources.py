"""A table of resources that is stored either as rows or as columns.

Profiles of a million resources are common, and building a million Python
dicts costs more than everything else in loading a profile.  A
:class:`ResourceTable` therefore keeps whichever shape it was made in and
converts lazily: a profile read from the object store holds columns and only
becomes rows when someone iterates it; a profile parsed from documented JSON
holds rows and only becomes columns when it is encoded or analysed.

Columns decoded from the object store are kept *packed* (a
:class:`PackedColumn`: the little-endian bytes of an int or float array, or
integer codes into a list of distinct values) until someone asks for them
as lists.  Analyses read packed columns straight into numpy
(:meth:`ResourceTable.packed`), so a million-resource profile can be
modelled without building a million Python numbers.  Call stacks made by
importers are kept the same way (a :class:`StackColumn`: frame numbers into
one table of frame dicts) until someone reads them as lists.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from itertools import repeat
from operator import itemgetter
from typing import Any

from .packing import ITEM_SIZES, LITTLE, int_kind

#: Stand-in for "this resource has no such key" inside a column.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__slots__": ()})()


class PackedColumn:
    """One column as the columnar encoding stores it, decoded lazily.

    ``kind`` is ``"int"`` or ``"f64"`` (``data`` holds the packed numbers,
    array typecode ``typecode``: ``b``, ``h``, ``i``, ``q`` or ``d``) or
    ``"dict"`` (``data`` holds integer codes of typecode ``typecode`` into
    ``values``).  ``absent`` holds the packed int64 row numbers that lack the
    key (their cells in ``data`` are fillers), or is empty.  All packed data
    is little-endian, whatever the machine.  ``text``, when known, is the
    base64 text of ``data`` exactly as the encoding writes it (a column read
    from a file is written back without encoding it again).  Instances are
    immutable.
    """

    __slots__ = ("kind", "typecode", "data", "values", "absent", "length", "text")

    def __init__(self, kind: str, typecode: str, data: bytes, length: int, values: list | None = None,
                 absent: bytes = b"", text: str | None = None) -> None:
        self.kind = kind
        self.typecode = typecode
        self.data = data
        self.length = length
        self.values = values
        self.absent = absent
        self.text = text

    def numbers(self) -> array:
        """``data`` as an :class:`array.array` in native byte order."""
        return _native(self.typecode, self.data)

    def absent_rows(self) -> list[int]:
        return _native("q", self.absent).tolist() if self.absent else []

    def to_list(self) -> list:
        """The column as a list of Python values, ``MISSING`` in absent rows."""
        numbers = self.numbers()
        if self.kind == "dict":
            assert self.values is not None
            out = list(map(self.values.__getitem__, numbers))
        else:
            out = numbers.tolist()
        for row in self.absent_rows():
            out[row] = MISSING
        return out


def packed_numbers(numbers: Any, absent: Any = None) -> PackedColumn:
    """A numpy int or float array as a :class:`PackedColumn` (the narrowest integers that hold it, or float64);
    ``absent``: rows lacking the key (their cells are ignored).

    For columns built with numpy (importers): no Python number per row is
    ever made, to store, validate or encode them.
    """
    import numpy as np

    numbers = np.asarray(numbers)
    if numbers.dtype.kind == "f":
        return PackedColumn("f64", "d", np.ascontiguousarray(numbers, dtype="<f8").tobytes(), len(numbers), None,
                            _absent_bytes(absent))
    low, high = (int(numbers.min()), int(numbers.max())) if len(numbers) else (0, 0)
    typecode, dtype = _narrowest(low, high)
    return PackedColumn("int", typecode, np.ascontiguousarray(numbers, dtype=dtype).tobytes(), len(numbers), None,
                        _absent_bytes(absent))


def packed_codes(codes: Any, values: list, absent: Any = None) -> PackedColumn:
    """Row ``i`` holds ``values[codes[i]]`` (``codes`` a numpy integer array), as a dictionary-coded
    :class:`PackedColumn`; ``absent``: rows lacking the key (their codes are ignored)."""
    import numpy as np

    typecode, dtype = _narrowest(0, len(values) - 1)
    data = np.ascontiguousarray(codes, dtype=dtype).tobytes()
    return PackedColumn("dict", typecode, data, len(codes), values, _absent_bytes(absent))


def _narrowest(low: int, high: int) -> tuple[str, str]:
    """The array typecode and little-endian numpy type of the narrowest integer holding ``low`` .. ``high``."""
    typecode = int_kind(low, high)
    return typecode, "<i" + str(ITEM_SIZES[typecode])


def _absent_bytes(absent: Any) -> bytes:
    import numpy as np

    return b"" if absent is None or not len(absent) else np.ascontiguousarray(absent, dtype="<i8").tobytes()


class StackColumn:
    """Call stacks as numbers into one frame table, materialized as trace lists on demand.

    A million distinct stacks of a dozen frames each are twelve million list
    entries; importers of stacks hold them columnar instead: ``frames`` is
    the list of distinct trace entries (frame dicts), ``flat`` the frame
    numbers of every stack one after another, and stack ``i`` (row ``i`` of
    the table) is ``flat[starts[i]:ends[i]]``, innermost first.  Rows from
    ``len(starts)`` to ``length`` have no trace (``MISSING``).  ``flat``,
    ``starts`` and ``ends`` are numpy integer arrays.  :meth:`to_list` gives
    the rows' traces as lists sharing the frame dicts, as collectors make
    them; readers that understand the columnar form (flame graphs) take it
    from :meth:`ResourceTable.stacks`.  Instances are immutable.
    """

    __slots__ = ("frames", "flat", "starts", "ends", "length")

    def __init__(self, frames: list[dict], flat: Any, starts: Any, ends: Any, length: int) -> None:
        self.frames = frames
        self.flat = flat
        self.starts = starts
        self.ends = ends
        self.length = length

    def to_list(self) -> list:
        entries = list(map(self.frames.__getitem__, self.flat.tolist()))
        traces = list(map(entries.__getitem__, map(slice, self.starts.tolist(), self.ends.tolist())))
        traces.extend([MISSING] * (self.length - len(traces)))
        return traces


def _native(typecode: str, data: bytes) -> array:
    packed = array(typecode)
    packed.frombytes(data)
    if not LITTLE:
        packed.byteswap()
    return packed


class ResourceTable:
    """Resources of one snapshot; rows are plain dicts in the documented form.

    Rows handed out share nested values (traces, uid dicts) between resources
    that were equal when stored: treat them as read-only, copy to modify.
    """

    __slots__ = ("_rows", "_keys", "_columns", "_length", "_sparse", "_packed", "_stacks")

    def __init__(self, rows: list[dict] | None = None) -> None:
        self._rows: list[dict] | None = rows if rows is not None else []
        self._keys: list[str] | None = None
        self._columns: list[list] | None = None
        self._length = len(self._rows)
        self._sparse = False
        self._packed: dict[str, PackedColumn] | None = None
        self._stacks: dict[str, StackColumn] | None = None

    @classmethod
    def from_columns(
        cls, length: int, keys: list[str], columns: list[list | PackedColumn | StackColumn], *, sparse: bool = False
    ) -> ResourceTable:
        """Build from parallel columns.

        ``sparse`` says that some rows lack some keys: those cells hold
        ``MISSING``.  A column may be a :class:`PackedColumn`: it becomes a
        list when :meth:`columns` (or anything built on it) is first called,
        and stays available through :meth:`packed` until the table changes.
        A :class:`StackColumn` likewise, through :meth:`stacks`.
        """
        table = cls.__new__(cls)
        table._rows = None
        table._keys = list(keys)
        table._columns = list(columns)
        packed = {key: column for key, column in zip(keys, columns) if isinstance(column, PackedColumn)}
        table._packed = packed or None
        stacks = {key: column for key, column in zip(keys, columns) if isinstance(column, StackColumn)}
        table._stacks = stacks or None
        table._length = length
        table._sparse = sparse
        return table

    def packed(self, key: str) -> PackedColumn | None:
        """The packed form of top-level column ``key``, if the table was decoded with one."""
        return self._packed.get(key) if self._packed else None

    def stacks(self, key: str = "trace") -> StackColumn | None:
        """The columnar form of the stacks in column ``key``, if the table was made with one."""
        return self._stacks.get(key) if self._stacks else None

    def raw_columns(self, *, stacks: bool = False) -> tuple[list[str], list[list | PackedColumn]] | None:
        """Keys and columns as they are held, packed ones not unpacked; None for a table of rows.

        For readers that handle :class:`PackedColumn` themselves (the JSON
        writer); everyone else uses :meth:`columns`.  Columns of stacks are
        made lists first, unless ``stacks`` (for readers that handle
        :class:`StackColumn` too) and they are still held columnar.
        """
        if self._columns is None:
            return None
        if self._stacks and not stacks:
            columns = self._columns
            for i, column in enumerate(columns):
                if isinstance(column, StackColumn):
                    columns[i] = column.to_list()
        return self._keys or [], self._columns  # type: ignore[return-value]

    @property
    def sparse(self) -> bool:
        """True when some resource lacks a key that others have."""
        if self._columns is None:
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
            keys, columns = self.columns()
            self._rows = _columns_to_rows(keys, columns, self._length, self._sparse)
        return self._rows

    def columns(self) -> tuple[list[str], list[list]]:
        """Top-level keys in first-seen order and one value list per key."""
        if self._columns is None:
            self._keys, self._columns, self._sparse = _rows_to_columns(self._rows or [])
        elif self._packed or self._stacks:
            columns = self._columns
            for i, column in enumerate(columns):
                if isinstance(column, (PackedColumn, StackColumn)):
                    columns[i] = column.to_list()
        return self._keys or [], self._columns  # type: ignore[return-value]

    def column(self, key: str) -> list:
        """Values of one top-level key, ``MISSING`` where a resource lacks it."""
        if self._columns is None:
            self.columns()
        keys = self._keys or []
        try:
            index = keys.index(key)
        except ValueError:
            return [MISSING] * self._length
        assert self._columns is not None
        column = self._columns[index]
        if isinstance(column, (PackedColumn, StackColumn)):
            column = self._columns[index] = column.to_list()
        return column

    def keys(self) -> list[str]:
        """The top-level keys in first-seen order (packed columns stay packed)."""
        if self._columns is None:
            self.columns()
        return list(self._keys or [])

    def append(self, resource: dict) -> None:
        self.rows().append(resource)
        self._invalidate_columns()

    def extend(self, resources: Iterable[dict]) -> None:
        rows = self.rows()
        rows.extend(resources)
        self._invalidate_columns()

    def _invalidate_columns(self) -> None:
        self._columns = None
        self._packed = None
        self._stacks = None
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
