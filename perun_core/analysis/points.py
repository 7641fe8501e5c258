"""Points for the analyses: ``(x, y)`` arrays per uid, read column-wise.

Regression, the nonparametric models and the checks all need the same thing
from a profile: for every uid, the values of an independent key (``x``,
:data:`DEFAULT_X` by default) and a dependent key (``y``, :data:`DEFAULT_Y`)
as float arrays.  Reading them resource by resource would build a million
dicts for a big profile, so this module reads whole columns of the
:class:`~perun_core.profile.resources.ResourceTable` and groups them with
numpy.

A resource contributes a point when both of its values are finite ``int``
or ``float`` numbers (``bool`` and numeric-looking strings are not numbers)
and it has a uid; anything else is left out.  Keys may be flattened paths
(``uid:line``, see :mod:`perun_core.profile.query`); a uid that is a dict is
grouped under its joined form (``"a.c:main:22"``).

The module also holds the types every analysis returns:
:class:`AnalysisResult` (models plus :class:`Skipped` reasons) and
:class:`DegenerateData`, raised by the single-uid fit functions.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import PerunError
from ..profile.model import Profile, Snapshot
from ..profile.query import _path_column, as_profile, flatten_value
from ..profile.resources import MISSING, PackedColumn, ResourceTable

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "ignoring_float_errors",
    "DEFAULT_UID",
    "DEFAULT_X",
    "DEFAULT_Y",
    "AnalysisResult",
    "DegenerateData",
    "PointsRead",
    "Skipped",
    "as_point_sets",
    "count_numbers",
    "finite_number",
    "interval_bound",
    "numeric_array",
    "points_by_uid",
    "r_square",
    "read_points",
]

#: Key of the independent variable unless told otherwise.
DEFAULT_X = "structure-unit-size"
#: Key of the dependent variable unless told otherwise.
DEFAULT_Y = "amount"
#: Key that groups resources into separately modelled functions.
DEFAULT_UID = "uid"

_NUMBER_TYPES = frozenset((int, float))


class DegenerateData(PerunError):
    """The data cannot support the model asked for; :attr:`reason` says why.

    Raised by the single-uid fit functions; the profile-level analyses catch
    it and report a :class:`Skipped` entry instead.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Skipped(NamedTuple):
    """A model that was not stored, and why."""

    uid: Any
    model: str
    reason: str


class AnalysisResult(NamedTuple):
    """What every profile-level analysis returns: ``models, skipped = ...``.

    ``models`` are JSON-ready model records (finite numbers only) in uid
    order; ``skipped`` lists the models left out, one :class:`Skipped` each.
    """

    models: list[dict]
    skipped: list[Skipped]


# -- numbers ---------------------------------------------------------------------

def numeric_array(values: list) -> numpy.ndarray:
    """``values`` as float64; NaN where a value is not an ``int``/``float`` (or overflows).

    Infinite floats stay infinite; callers drop them with ``numpy.isfinite``.
    """
    import numpy as np

    kinds = set(map(type, values))
    if kinds <= _NUMBER_TYPES:
        try:
            return np.array(values, dtype=np.float64)
        except OverflowError:  # an int beyond the float range
            pass
    return np.fromiter(map(_as_float, values), dtype=np.float64, count=len(values))


def _as_float(value: Any) -> float:
    if type(value) in _NUMBER_TYPES:
        try:
            return float(value)
        except OverflowError:
            return math.nan
    return math.nan


#: True while :func:`ignoring_float_errors` has numpy ignore floating-point errors in this context.
_IGNORING = contextvars.ContextVar("perun_ignoring_float_errors", default=False)


class ignoring_float_errors:  # noqa: N801 - used as a context manager, like numpy's errstate
    """``numpy.errstate(all="ignore")`` that costs nothing inside another one of its kind.

    A fit of one uid's points passes through dozens of small steps that each
    must ignore overflow and invalid values; numpy's errstate costs several
    microseconds to enter and leave, which for a hundred uids is a fifth of
    the fitting.  The outermost use sets the state; nested uses only look.
    """

    __slots__ = ("_state", "_token")

    def __enter__(self) -> None:
        if _IGNORING.get():
            self._state = None
            return
        import numpy as np

        self._state = np.errstate(all="ignore")
        self._state.__enter__()
        self._token = _IGNORING.set(True)

    def __exit__(self, *exc: Any) -> None:
        if self._state is not None:
            _IGNORING.reset(self._token)
            self._state.__exit__(*exc)


def finite_number(value: Any) -> float:
    """``value`` as a Python float, raising :class:`DegenerateData` when it is not finite."""
    number = float(value)
    if not math.isfinite(number):
        raise DegenerateData("the computation overflowed (a result is not finite)")
    return number


def interval_bound(value: Any) -> int | float:
    """An interval end for a model record: an ``int`` when the float is integral."""
    number = finite_number(value)
    if number.is_integer() and abs(number) < 2.0**53:
        return int(number)
    return number


def r_square(y: numpy.ndarray, fitted: numpy.ndarray, ss_tot: float | None = None) -> float:
    """Coefficient of determination ``1 - SS_res / SS_tot`` of ``fitted`` against ``y`` (``ss_tot``: the sum of
    squares of ``y`` about its mean, when the caller has it already).

    When ``y`` is constant (``SS_tot = 0``) it is 1.0 if the fit reproduces
    ``y`` up to rounding and 0.0 otherwise.  It is negative when the fit is
    worse than the mean, and never above 1.  Raises :class:`DegenerateData`
    when it cannot be computed in floating point.
    """
    import numpy as np

    with ignoring_float_errors():
        if ss_tot is None:
            centred = y - y.mean()
            ss_tot = float(np.einsum("i,i->", centred, centred))
        residual = y - fitted
        ss_res = float(np.einsum("i,i->", residual, residual))
        if not (math.isfinite(ss_tot) and math.isfinite(ss_res)):
            raise DegenerateData("the computation overflowed (a result is not finite)")
        if ss_tot == 0.0:
            # constant y: a perfect fit up to rounding, or no explained variance
            scale = float(np.abs(y).max()) if len(y) else 0.0
            return 1.0 if len(y) == 0 or math.sqrt(ss_res / len(y)) <= 1e-12 * scale else 0.0
        return min(1.0, 1.0 - ss_res / ss_tot)


# -- reading points from profiles ---------------------------------------------------

def _tables(source: Any) -> list[ResourceTable]:
    if isinstance(source, ResourceTable):
        return [source]
    if isinstance(source, Snapshot):
        return [source.resources]
    if isinstance(source, (Profile, dict)):
        return [region.resources for _, region in as_profile(source).regions()]
    if isinstance(source, list) and all(isinstance(r, dict) for r in source):
        return [ResourceTable(source)]
    raise TypeError(f"cannot read points from {type(source).__name__}")


def column_values(table: ResourceTable, key: str) -> list:
    """Values of a (possibly flattened) key, one per resource, nested values joined."""
    values, multi, _missing = _path_column(table, key)
    if multi:
        # a '::' path gives a list per resource; a point needs one value
        values = [v[0] if v is not MISSING and len(v) == 1 else MISSING for v in values]
    return values


#: numpy dtypes of the array typecodes of packed columns (always little-endian)
_PACKED_DTYPES = {"b": "<i1", "h": "<i2", "i": "<i4", "q": "<i8", "d": "<f8"}


class _NumberColumn(NamedTuple):
    values: numpy.ndarray  # float64, NaN where the value is not a number (or absent)
    numbers: int  # resources whose value is an int or float (NaN and infinity included)
    nonfinite: int  # of those, the ones that are NaN or infinite


def _from_list(values: list) -> _NumberColumn:
    import numpy as np

    array = numeric_array(values)
    finite = np.isfinite(array)
    count = int(np.count_nonzero(finite))
    if count == len(values):
        return _NumberColumn(array, count, 0)
    # only now look at the values themselves: which non-finite cells are numbers?
    bad = sum(1 for i in np.flatnonzero(~finite).tolist() if type(values[i]) in _NUMBER_TYPES)
    return _NumberColumn(array, count + bad, bad)


def _from_packed(column: PackedColumn) -> _NumberColumn:
    import numpy as np

    absent = column.absent_rows()
    raw = np.frombuffer(column.data, dtype=_PACKED_DTYPES[column.typecode])
    if column.kind == "dict":
        distinct = _from_list(list(column.values or ()))
        array = distinct.values[raw]
        if distinct.numbers == 0:
            return _NumberColumn(array, 0, 0)
        numeric = np.fromiter((type(v) in _NUMBER_TYPES for v in column.values or ()), dtype=bool)
        hits = numeric[raw]
        bad_codes = numeric & ~np.isfinite(distinct.values)
        bad = bad_codes[raw]
        if absent:
            array[absent] = math.nan
            hits[absent] = False
            bad[absent] = False
        return _NumberColumn(array, int(np.count_nonzero(hits)), int(np.count_nonzero(bad)))
    array = raw.astype(np.float64)
    if absent:
        array[absent] = 0.0  # fillers do not count as non-finite numbers
    finite = np.isfinite(array)
    nonfinite = len(array) - int(np.count_nonzero(finite))
    if absent:
        array[absent] = math.nan
    return _NumberColumn(array, len(array) - len(absent), nonfinite)


def _number_column(table: ResourceTable, key: str) -> _NumberColumn:
    packed = table.packed(key)
    if packed is not None:
        return _from_packed(packed)
    if key in table.keys():
        # top level: nested values are not numbers anyway, no need to join them
        return _from_list(table.column(key))
    return _from_list(column_values(table, key))


def _hashable(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        return flatten_value(value)
    return value


def _uid_codes(table: ResourceTable, key: str) -> tuple[numpy.ndarray, list]:
    """A code per resource (-1 where it has no uid) and the uid of each code, uids hashable."""
    import numpy as np

    packed = table.packed(key)
    if packed is not None and packed.kind == "dict":
        codes = np.frombuffer(packed.data, dtype=_PACKED_DTYPES[packed.typecode]).astype(np.int64)
        absent = packed.absent_rows()
        if absent:
            codes[absent] = -1
        return codes, [_hashable(v) for v in packed.values or ()]
    if key in table.keys():
        values = table.column(key)
        try:
            distinct = dict.fromkeys(values)
        except TypeError:  # nested uids: group by their joined form
            values = column_values(table, key)
            distinct = dict.fromkeys(values)
    else:
        values = column_values(table, key)
        distinct = dict.fromkeys(values)
    lookup = {uid: code for code, uid in enumerate(distinct)}
    if MISSING in lookup:
        lookup[MISSING] = -1
    codes = np.fromiter(map(lookup.__getitem__, values), dtype=np.int64, count=len(values))
    return codes, [uid for uid in distinct]


def count_numbers(source: Profile | dict | Snapshot | ResourceTable | list[dict], key: str) -> tuple[int, int]:
    """``(numbers, nonfinite)``: resources with an ``int``/``float`` under ``key``, and how many are NaN or infinite."""
    numbers = nonfinite = 0
    for table in _tables(source):
        if len(table):
            column = _number_column(table, key)
            numbers += column.numbers
            nonfinite += column.nonfinite
    return numbers, nonfinite


class PointsRead(NamedTuple):
    """What :func:`read_points` found: the points and how usable the two keys were."""

    #: ``{uid: (x, y)}`` as :func:`points_by_uid` returns it
    by_uid: dict
    #: resources whose x (y) value is an ``int`` or ``float``, NaN and infinity included
    numbers_x: int
    numbers_y: int
    #: of those, the NaN or infinite ones (never part of a point)
    nonfinite_x: int
    nonfinite_y: int
    #: with ``split_kinds``: the group label of every uid that was split, and its
    #: ``(uid, type, subtype)``
    kinds: dict = {}


def read_points(
    source: Profile | dict | Snapshot | ResourceTable | list[dict],
    depending_on: str = DEFAULT_X,
    of: str = DEFAULT_Y,
    *,
    uid_key: str = DEFAULT_UID,
    split_kinds: bool = False,
) -> PointsRead:
    """:func:`points_by_uid` plus counts that say why points may be missing.

    Columns the object store decoded stay packed: their numbers and uid
    codes go straight into numpy.

    With ``split_kinds`` a uid whose resources measure different things
    (the time collector records ``real``, ``user`` and ``sys`` seconds and
    ``max_rss`` bytes of one command) becomes one group per ``(type,
    subtype)``, labelled ``uid [subtype]`` (the type when there is no
    subtype); :attr:`PointsRead.kinds` maps those labels back.  Fitting one
    curve through seconds and bytes together would give nonsense.
    """
    import numpy as np

    uid_index: dict = {}
    kind_index: tuple[dict, dict] = ({}, {})
    kind_parts: tuple[list, list] = ([], [])
    code_parts = []
    xs = []
    ys = []
    counts = [0, 0, 0, 0]
    for table in _tables(source):
        if not len(table):
            continue
        local, distinct = _uid_codes(table, uid_key)
        # local code -> global code; the extra last entry turns -1 into -1
        mapped = [uid_index.setdefault(u, len(uid_index)) if u is not MISSING else -1 for u in distinct]
        if mapped == list(range(len(mapped))):  # the first table's codes are the global ones: no copy
            code_parts.append(local)
        else:
            code_parts.append(np.array(mapped + [-1], dtype=np.int64)[local])
        if split_kinds:
            for key, index, parts in zip(("type", "subtype"), kind_index, kind_parts):
                parts.append(_global_codes(table, key, index))  # made only if some uid is split
        x = _number_column(table, depending_on)
        y = _number_column(table, of)
        xs.append(x.values)
        ys.append(y.values)
        counts[0] += x.numbers
        counts[1] += y.numbers
        counts[2] += x.nonfinite
        counts[3] += y.nonfinite
    if not code_parts:
        return PointsRead({}, *counts)
    codes = np.concatenate(code_parts) if len(code_parts) > 1 else code_parts[0]
    x = np.concatenate(xs) if len(xs) > 1 else xs[0]
    y = np.concatenate(ys) if len(ys) > 1 else ys[0]
    distinct = list(uid_index)
    kinds: dict = {}
    if split_kinds and (len(kind_index[0]) > 1 or len(kind_index[1]) > 1):
        types, subtypes = (np.concatenate([codes_of() for codes_of in parts]) for parts in kind_parts)
        codes, distinct, kinds = _split_by_kind(codes, distinct, types, subtypes, [list(i) for i in kind_index])
    return PointsRead(_group(codes, distinct, x, y), *counts, kinds)


def _global_codes(table: ResourceTable, key: str, index: dict) -> Callable[[], numpy.ndarray]:
    """Codes of ``key``'s values (-1 where absent) numbered across tables by ``index``: the values are numbered
    now, the codes made by the function returned.

    Most profiles measure one type and subtype: then the codes are never
    needed, and a packed column's million codes are not unpacked for nothing.
    """
    import numpy as np

    packed = table.packed(key)
    if packed is not None and packed.kind == "dict":  # its values are listed without unpacking its codes
        distinct = [_hashable(v) for v in packed.values or ()]
        local = None
    else:
        local, distinct = _uid_codes(table, key)
    translate = np.array([index.setdefault(v, len(index)) if v is not MISSING else -1 for v in distinct] + [-1],
                         dtype=np.int64)
    return lambda: translate[_uid_codes(table, key)[0] if local is None else local]


def _split_by_kind(codes: numpy.ndarray, uids: list, types: numpy.ndarray, subtypes: numpy.ndarray,
                   names: list[list]) -> tuple[numpy.ndarray, list, dict]:
    """Regroup the uid ``codes`` by ``(uid, type, subtype)`` where a uid has several of those.

    Returns the new codes, the group labels (first-seen order) and the
    ``{label: (uid, type, subtype)}`` of the split groups.
    """
    import numpy as np

    type_names, subtype_names = names
    width_s = len(subtype_names) + 1
    width_t = (len(type_names) + 1) * width_s
    combined = np.where(codes >= 0, codes * width_t + (types + 1) * width_s + (subtypes + 1), -1)
    found, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    per_uid: dict[int, list[tuple[int, Any, Any]]] = {}
    for position in order.tolist():
        value = int(found[position])
        if value < 0:
            continue
        uid_code, rest = divmod(value, width_t)
        type_code, subtype_code = divmod(rest, width_s)
        kind = type_names[type_code - 1] if type_code else None
        subtype = subtype_names[subtype_code - 1] if subtype_code else None
        per_uid.setdefault(uid_code, []).append((position, kind, subtype))
    labels: list = []
    label_of = np.full(len(found), -1, dtype=np.int64)
    kinds: dict = {}
    for uid_code, groups in per_uid.items():  # uids in first-seen order, as their first group came
        uid = uids[uid_code]
        whats = [subtype if subtype not in (None, "") else kind for _, kind, subtype in groups]
        for (position, kind, subtype), what in zip(groups, whats):
            if len(groups) == 1:
                label = uid
            else:
                if whats.count(what) > 1:  # the same subtype under two types
                    what = f"{kind} {subtype}"
                label = f"{uid} [{what}]"
                kinds[label] = (uid, kind, subtype)
            label_of[position] = len(labels)
            labels.append(label)
    return label_of[inverse], labels, kinds


def points_by_uid(
    source: Profile | dict | Snapshot | ResourceTable | list[dict],
    depending_on: str = DEFAULT_X,
    of: str = DEFAULT_Y,
    *,
    uid_key: str = DEFAULT_UID,
) -> dict[Any, tuple[numpy.ndarray, numpy.ndarray]]:
    """``{uid: (x, y)}`` float arrays of every uid, uids in first-seen order.

    ``source`` is a profile (every region, snapshots then ``global``,
    concatenated), one snapshot, a resource table or a list of resource
    dicts.  ``depending_on`` and ``of`` are (possibly flattened) keys.  Points
    keep their order in the profile.  A uid whose resources all lack a
    usable pair is still listed, with empty arrays, so callers can say why it
    got no model.
    """
    return read_points(source, depending_on, of, uid_key=uid_key).by_uid


def _group(codes: numpy.ndarray, distinct: list, x: numpy.ndarray, y: numpy.ndarray,
           ) -> dict[Any, tuple[numpy.ndarray, numpy.ndarray]]:
    """Split the points by uid code (-1: no uid); every uid with a resource is listed."""
    import numpy as np

    if not distinct:
        return {}
    present = np.bincount(codes[codes >= 0], minlength=len(distinct)) > 0
    valid = np.isfinite(x) & np.isfinite(y) & (codes >= 0)
    if len(distinct) == 1:
        if not present[0]:
            return {}
        if valid.all():
            return {distinct[0]: (x, y)}
        return {distinct[0]: (x[valid], y[valid])}
    if not valid.all():
        codes, x, y = codes[valid], x[valid], y[valid]
    if len(codes) > 1 and not (codes[1:] >= codes[:-1]).all():
        # small integer codes let numpy use a radix sort for the stable grouping
        small = codes.astype(np.int16 if len(distinct) < 2**15 else np.int64)
        order = np.argsort(small, kind="stable")
        x, y = x[order], y[order]
        codes = codes[order]
    cuts = np.cumsum(np.bincount(codes, minlength=len(distinct)))[:-1]
    x_parts = np.split(x, cuts)
    y_parts = np.split(y, cuts)
    return {uid: (x_parts[code], y_parts[code]) for code, uid in enumerate(distinct) if present[code]}


def as_point_sets(
    data: Any,
    depending_on: str = DEFAULT_X,
    of: str = DEFAULT_Y,
) -> dict[Any, tuple[numpy.ndarray, numpy.ndarray]]:
    """Points of an analysis input: a profile-like ``source`` or ``{uid: (x, y)}``.

    A mapping whose values are ``(x, y)`` pairs of sequences (and that is not
    a documented-JSON profile, which has a ``header`` object) is taken as
    ready-made points: both become float arrays and pairs that are not
    finite numbers are dropped.  Anything else goes to :func:`points_by_uid`.
    """
    import numpy as np

    if isinstance(data, Mapping) and not isinstance(data.get("header"), dict):
        out = {}
        for uid, pair in data.items():
            x_values, y_values = pair
            x = _float_array(x_values)
            y = _float_array(y_values)
            if x.shape != y.shape or x.ndim != 1:
                raise TypeError(f"points of {uid!r}: x and y must be one-dimensional and of equal length")
            valid = np.isfinite(x) & np.isfinite(y)
            out[uid] = (x, y) if valid.all() else (x[valid], y[valid])
        return out
    return points_by_uid(data, depending_on, of)


def _float_array(values: Iterable) -> numpy.ndarray:
    import numpy as np

    if isinstance(values, np.ndarray):
        if values.dtype.kind in "iuf":
            return values.astype(np.float64, copy=False)
        values = values.tolist()
    return numeric_array(list(values))
