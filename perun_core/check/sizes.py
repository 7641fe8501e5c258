"""Putting the measurements of two profiles on equal input sizes, for :mod:`perun_core.check.compare`.

Sizes are compared on the log scale (:func:`size_shift`).  Discrete sizes
that both profiles measured at least twice form strata
(:func:`shared_strata`); each measurement is then taken relative to the
median of its stratum, and strata are grouped into bins
(:func:`group_strata`).  Otherwise the pooled sizes are cut at quantiles
(:func:`size_bins`) and a robust curve of log amount over log size, shared
by both profiles, is taken out (:func:`shared_curve_residuals`).  Bins short
of either profile are merged into a neighbour (:func:`merge_short`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .stats import distinct, full_rank, huber_fit, median, quantiles

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "CURVE_COLUMNS",
    "MAX_BINS",
    "MAX_STRATA",
    "MAX_STRATA_BINS",
    "MIN_PER_SIDE",
    "curve_basis",
    "group_strata",
    "merge_short",
    "shared_curve_residuals",
    "shared_strata",
    "size_bins",
    "size_shift",
    "stratum_medians",
]

#: At most this many bins of input sizes.
MAX_BINS = 6
#: A bin needs this many measurements of each profile (smaller bins are merged).
MIN_PER_SIDE = 4
#: The curve of log amount against log size has at most this many coefficients.
CURVE_COLUMNS = 7
#: Up to this many distinct sizes may be compared size by size ...
MAX_STRATA = 64
#: ... and up to this many each in a bin of its own.
MAX_STRATA_BINS = 8


def size_shift(xb: numpy.ndarray, xt: numpy.ndarray) -> float:
    """What to add to sizes before taking logs, so that the smallest maps to log 1 or more."""
    low = min(float(xb.min()), float(xt.min()))
    return 0.0 if low >= 1.0 else 1.0 - low


def size_bins(v: numpy.ndarray, side: numpy.ndarray, wanted: int) -> numpy.ndarray:
    """Bin numbers 0..k-1 for sizes ``v`` (pooled quantiles), merging bins short of either profile."""
    import numpy as np

    if wanted <= 1:
        return np.zeros(len(v), dtype=np.int64)
    cuts = distinct(quantiles(v, np.linspace(0.0, 1.0, wanted + 1)[1:-1]))
    labels = np.searchsorted(cuts, v, side="right")
    return merge_short(np.unique(labels, return_inverse=True)[1], side)


def merge_short(labels: numpy.ndarray, side: numpy.ndarray) -> numpy.ndarray:
    """Merge bins with fewer than MIN_PER_SIDE measurements of a profile into a neighbour."""
    import numpy as np

    count = int(labels.max()) + 1
    while count > 1:
        base = np.bincount(labels[~side], minlength=count)
        target = np.bincount(labels[side], minlength=count)
        short = np.flatnonzero((base < MIN_PER_SIDE) | (target < MIN_PER_SIDE))
        if not len(short):
            break
        total = base + target
        worst = int(short[np.argmin(total[short])])
        if worst == 0:
            into = 1
        elif worst == count - 1:
            into = count - 2
        else:
            into = worst - 1 if total[worst - 1] <= total[worst + 1] else worst + 1
        labels = np.where(labels == worst, into, labels)
        labels = np.unique(labels, return_inverse=True)[1]
        count -= 1
    return labels


def shared_strata(v: numpy.ndarray, side: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray, int] | None:
    """Sizes measured at least twice by both profiles, when they hold most of each profile's measurements.

    Returns ``(keep, codes, count)``: the measurements at shared sizes, the
    number of each one's size among the shared ones, and how many there are.
    None when the sizes are not discrete enough or not shared.
    """
    import numpy as np

    values, inverse = np.unique(v, return_inverse=True)
    if len(values) > MAX_STRATA:
        return None
    base = np.bincount(inverse[~side], minlength=len(values))
    target = np.bincount(inverse[side], minlength=len(values))
    shared = (base >= 2) & (target >= 2)
    if not shared.any():
        return None
    # measurements at sizes the other profile lacks cannot be compared at an equal size: they
    # are left out, as long as most of each profile is measured at shared sizes
    if base[shared].sum() < 0.5 * base.sum() or target[shared].sum() < 0.5 * target.sum():
        return None
    renumber = np.cumsum(shared) - 1
    keep = shared[inverse]
    codes = np.where(keep, renumber[inverse], 0)
    return keep, codes, int(shared.sum())


def stratum_medians(u: numpy.ndarray, codes: numpy.ndarray, count: int) -> numpy.ndarray:
    import numpy as np

    order = np.argsort(codes, kind="stable")
    cuts = np.cumsum(np.bincount(codes, minlength=count))[:-1]
    return np.array([median(part) for part in np.split(u[order], cuts)])


def group_strata(codes: numpy.ndarray, side: numpy.ndarray, count: int) -> numpy.ndarray:
    """Bins of whole strata: one per size when there are few, else about equal counts."""
    import numpy as np

    if count <= MAX_STRATA_BINS:
        labels = codes.copy()
    else:
        sizes = np.bincount(codes, minlength=count)
        share = np.cumsum(sizes) / sizes.sum()
        group = np.minimum((share - sizes / (2 * sizes.sum())) * MAX_BINS, MAX_BINS - 1).astype(np.int64)
        labels = np.unique(group, return_inverse=True)[1][codes]
    return merge_short(labels, side)


def curve_basis(v: numpy.ndarray, distinct: numpy.ndarray, columns: int) -> numpy.ndarray:
    """``columns`` functions of log size: a polynomial up to cubic, then cubic splines at quantile knots."""
    import numpy as np

    centre, spread = float(distinct.mean()), float(distinct.std()) or 1.0
    z = (v - centre) / spread
    basis = [np.ones(len(v))]
    for power in (1, 2, 3):
        if len(basis) < columns:
            basis.append(z**power)
    extra = columns - len(basis)
    if extra > 0:
        knots = quantiles((distinct - centre) / spread, np.linspace(0.0, 1.0, extra + 2)[1:-1])
        for knot in knots:
            basis.append(np.maximum(z - knot, 0.0) ** 3)
    return np.column_stack(basis)


def shared_curve_residuals(v: numpy.ndarray, u: numpy.ndarray, side: numpy.ndarray, labels: numpy.ndarray,
                            count: int, distinct: numpy.ndarray) -> numpy.ndarray | None:
    """Log amounts minus a curve of log size shared by both profiles.

    The curve is fitted robustly together with one shift of the target per
    bin, so a real change does not bend it.  Its flexibility is kept well
    below the number of distinct sizes: with sizes that the two profiles do
    not share, a too flexible curve could explain a change away.  None when
    the shifts cannot be told apart from the curve.
    """
    import numpy as np

    shifts = np.zeros((len(v), count))
    shifts[np.flatnonzero(side), labels[side]] = 1.0
    columns = max(1, min(CURVE_COLUMNS, len(distinct) - count - 1))
    while columns >= 1:
        curve = curve_basis(v, distinct, columns)
        design = np.column_stack((curve, shifts))
        if full_rank(design):
            coef = huber_fit(design, u)
            return u - curve @ coef[:columns]
        columns -= 1
    return None
