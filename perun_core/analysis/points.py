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

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import PerunError
from ..profile.model import Profile, Snapshot
from ..profile.query import _path_column, as_profile
from ..profile.resources import MISSING, ResourceTable

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "DEFAULT_UID",
    "DEFAULT_X",
    "DEFAULT_Y",
    "AnalysisResult",
    "DegenerateData",
    "Skipped",
    "as_point_sets",
    "finite_number",
    "interval_bound",
    "numeric_array",
    "points_by_uid",
    "r_square",
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


def r_square(y: numpy.ndarray, fitted: numpy.ndarray) -> float:
    """Coefficient of determination ``1 - SS_res / SS_tot`` of ``fitted`` against ``y``.

    When ``y`` is constant (``SS_tot = 0``) it is 1.0 if the fit reproduces
    ``y`` up to rounding and 0.0 otherwise.  It is negative when the fit is
    worse than the mean, and never above 1.  Raises :class:`DegenerateData`
    when it cannot be computed in floating point.
    """
    import numpy as np

    with np.errstate(all="ignore"):
        mean = y.mean()
        centred = y - mean
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


def _column(table: ResourceTable, key: str) -> list:
    """Values of a (possibly flattened) key, one per resource, nested values joined."""
    values, multi, _missing = _path_column(table, key)
    if multi:
        # a '::' path gives a list per resource; a point needs one value
        values = [v[0] if v is not MISSING and len(v) == 1 else MISSING for v in values]
    return values


def _number_column(table: ResourceTable, key: str) -> numpy.ndarray:
    if key in table.columns()[0]:
        # top level: nested values are not numbers anyway, no need to join them
        return numeric_array(table.column(key))
    return numeric_array(_column(table, key))


def _uid_column(table: ResourceTable, key: str) -> tuple[list, dict]:
    """The uid of every resource and the distinct uids (as dict keys, in first-seen order)."""
    if key in table.columns()[0]:
        values = table.column(key)
        try:
            return values, dict.fromkeys(values)
        except TypeError:  # nested uids: group by their joined form
            pass
    values = _column(table, key)
    return values, dict.fromkeys(values)


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
    import numpy as np

    uids: list = []
    distinct: dict = {}
    xs = []
    ys = []
    for table in _tables(source):
        if not len(table):
            continue
        values, seen = _uid_column(table, uid_key)
        uids.extend(values)
        distinct.update(seen)
        xs.append(_number_column(table, depending_on))
        ys.append(_number_column(table, of))
    if not uids:
        return {}
    x = np.concatenate(xs) if len(xs) > 1 else xs[0]
    y = np.concatenate(ys) if len(ys) > 1 else ys[0]
    return _group(uids, list(distinct), x, y)


def _group(uids: list, distinct: list, x: numpy.ndarray, y: numpy.ndarray,
           ) -> dict[Any, tuple[numpy.ndarray, numpy.ndarray]]:
    import numpy as np

    valid = np.isfinite(x) & np.isfinite(y)
    if len(distinct) == 1:
        uid = distinct[0]
        if uid is MISSING:
            return {}
        if valid.all():
            return {uid: (x, y)}
        return {uid: (x[valid], y[valid])}
    lookup = {uid: code for code, uid in enumerate(distinct)}
    # small integer codes let numpy use a radix sort for the stable grouping
    code_type = np.int16 if len(distinct) < 2**15 else np.int64
    codes = np.fromiter(map(lookup.__getitem__, uids), dtype=code_type, count=len(uids))
    if not valid.all():
        codes, x, y = codes[valid], x[valid], y[valid]
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(distinct))
    cuts = np.cumsum(counts)[:-1]
    x_parts = np.split(x[order], cuts)
    y_parts = np.split(y[order], cuts)
    return {
        uid: (x_parts[code], y_parts[code])
        for code, uid in enumerate(distinct)
        if uid is not MISSING
    }


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
