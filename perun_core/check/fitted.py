"""Measurements at sizes the two profiles do not share: one model fitted across the sizes of both.

When the profiles measured different sizes (each drew its own inputs), no
size pairs a baseline measurement with a target one, and bins of sizes hold
too few measurements to be tested alone until there are hundreds.  Here the
log amounts of both profiles are fitted together by one robust regression
over log size: a curve shared by both (a cubic with spline knots, as
flexible as the distinct sizes allow, see
:func:`perun_core.check.sizes.curve_basis`) plus the target's difference,
modelled three ways:

* a constant: a uniform factor;
* a line over log size, read at the largest shared size: a ratio growing
  with the size (a complexity change);
* one constant below and one in the upper third of the sizes: a change
  confined to the largest inputs.

Each difference is tested with Student's t from the fit (Huber weights,
the residual scale of the weighted fit), and the three share the
significance level (Bonferroni).  As elsewhere a change must reach
``floor``, be significantly beyond half of it, and the largest inputs
decide the direction.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .sizes import CURVE_COLUMNS, curve_basis, shared_strata, size_shift
from .stats import distinct, full_rank, mad_scale, median, quantiles

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from .compare import Comparison, Region, Settings

__all__ = ["fitted_comparison"]

#: The fit needs this many residual degrees of freedom.
MIN_DF = 3
#: Each profile needs this many measurements at this many distinct sizes within the sizes both cover.
MIN_POINTS = 5
MIN_SIZES = 3
#: Share of the measurements (both profiles) in the upper part of the sizes.
UPPER_SHARE = 1 / 3


def _robust_t(design: numpy.ndarray, u: numpy.ndarray, contrast: numpy.ndarray) -> tuple[float, float, int] | None:
    """``(estimate, standard error, df)`` of ``contrast @ coef`` of a Huber regression; None when singular."""
    import numpy as np

    n, p = design.shape
    if n - p < MIN_DF or not full_rank(design):
        return None
    weights = np.ones(n)
    coef = np.linalg.lstsq(design, u, rcond=None)[0]
    for _ in range(8):
        residual = u - design @ coef
        scale = mad_scale(residual)
        if scale <= 0:
            break
        weights = np.minimum(1.0, 1.345 * scale / np.maximum(np.abs(residual), 1e-300))
        weighted = design * weights[:, None]
        coef = np.linalg.solve(weighted.T @ design, weighted.T @ u)
    residual = u - design @ coef
    gram = (design * weights[:, None]).T @ design
    # the weighted residual variance, with the degrees of freedom the weights leave
    variance = float((weights * residual**2).sum()) / max(float(weights.sum()) - p, 1.0)
    try:
        spread = float(contrast @ np.linalg.solve(gram, contrast))
    except np.linalg.LinAlgError:
        return None
    return float(contrast @ coef), math.sqrt(max(variance * spread, 0.0)), n - p


def fitted_comparison(xb: numpy.ndarray, ub: numpy.ndarray, yb: numpy.ndarray, xt: numpy.ndarray,
                      ut: numpy.ndarray, settings: Settings) -> Comparison | None:
    """The verdict of the shared-curve model on sizes ``x`` and log amounts ``u``.

    None when the profiles share discrete sizes (compared at equal sizes
    elsewhere) or the sizes do not allow the fit.
    """
    import numpy as np

    from .paired import verdict_of  # at call time: paired's verdict needs compare, which imports this module

    shift = size_shift(xb, xt)
    vb, vt = np.log(xb + shift), np.log(xt + shift)
    low, high = max(float(vb.min()), float(vt.min())), min(float(vb.max()), float(vt.max()))
    keep_b, keep_t = (vb >= low) & (vb <= high), (vt >= low) & (vt <= high)
    vb, ub, yb, vt, ut = vb[keep_b], ub[keep_b], yb[keep_b], vt[keep_t], ut[keep_t]
    v = np.concatenate((vb, vt))
    u = np.concatenate((ub, ut))
    side = np.concatenate((np.zeros(len(vb)), np.ones(len(vt))))
    if high <= low or min(len(distinct(vb)), len(distinct(vt))) < MIN_SIZES or min(len(vb), len(vt)) < MIN_POINTS:
        return None  # too little of one profile where both measured
    if shared_strata(v, side.astype(bool)) is not None:
        return None
    sizes = distinct(v)
    cut = float(quantiles(v, np.array([1 - UPPER_SHARE]))[0])
    upper = (v >= cut).astype(np.float64)
    # at most half of what the measurements allow goes into the curve: the rest estimates the noise
    columns = min(CURVE_COLUMNS, len(sizes) - 3, (len(v) - 2) // 2)
    if columns < 2:
        return None
    curve = curve_basis(v, sizes, columns)
    # (name, the target's difference as columns, which of them is tested, sizes it speaks for)
    models = [("all sizes", [side], 0, low, high)]
    # the larger sizes speak only where both profiles measured several of them: else the target's
    # difference there would be read off a curve that only one profile shapes
    top = v >= cut
    if min(len(distinct(v[top & (side == 0)])), len(distinct(v[top & (side == 1)]))) >= 2 \
            and (1 - upper)[side == 1].sum() >= 2:
        models.append(("larger sizes", [side, side * (v - high)], 0, high, high))
        models.append(("larger sizes", [side * (1 - upper), side * upper], 1, cut, high))
    regions = []
    for name, difference, tested, low_v, high_v in models:
        design = np.column_stack((curve, *difference))
        contrast = np.zeros(design.shape[1])
        contrast[columns + tested] = 1.0
        found = _robust_t(design, u, contrast)
        if found is None:
            return None
        above = yb[vb >= low_v]
        level = median(above if len(above) else yb)
        regions.append(_region(name, *found, settings, math.exp(low_v) - shift, math.exp(high_v) - shift, level))
    return verdict_of(regions, settings, "few measurements at sizes the profiles do not share: one robust "
                                         "curve of both and the target's difference from it")


def _region(name: str, estimate: float, se: float, df: int, settings: Settings, low: float, high: float,
            level: float) -> Region:
    from .compare import Region  # at call time: compare imports this module
    from .paired import t_p  # at call time, like Region

    if se <= 0:
        t = math.copysign(math.inf, estimate) if estimate != 0 else 0.0
        beyond = math.copysign(math.inf, estimate) if abs(estimate) > settings.floor / 2 else 0.0
    else:
        t = estimate / se
        beyond = (estimate - math.copysign(settings.floor / 2, estimate)) / se
    p = t_p(t, df)
    p_margin = t_p(beyond, df) / 2 if (beyond > 0) == (estimate > 0) and beyond != 0 else 1.0
    return Region(name, 0, 0, estimate, t if math.isfinite(t) else math.copysign(1e6, t), p, level,
                  low, high, p_floor=max(p, p_margin))
