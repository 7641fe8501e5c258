"""Nonparametric models: regressogram, moving average and kernel regression.

Each model describes ``y`` depending on ``x`` without assuming a formula.
A model record holds everything needed to evaluate it again (with
:func:`evaluate_nonparametric` or :func:`perun_core.analysis.evaluate_model`),
has only finite numbers and is JSON-serializable:

regressogram
    ``{"uid", "model": "regressogram", "method": "full", "statistic":
    "mean"|"median", "bin_rule": rule or None, "bin_edges": [e0, ..., ek],
    "bin_values": [v1, ..., vk], "bin_counts": [c1, ..., ck], "r_square",
    "x_interval_start", "x_interval_end"}``.  The value of bin ``i`` holds
    on ``[e(i-1), e(i))`` (the last bin includes its right edge, as in
    ``numpy.histogram``); an empty bin repeats the value of the nearest
    non-empty bin to its left (or right, for leading empty bins).
moving_average
    ``{"uid", "model": "moving_average", "method": "full", "moving_method":
    "sma"|"ema"|"smm", "window_width", "center", "x": [...], "y": [...],
    "r_square", "x_interval_start", "x_interval_end"}``: the smoothed curve
    at distinct x values, linearly interpolated in between.
kernel_regression
    ``{"uid", "model": "kernel_regression", "method": "full", "kernel":
    "gaussian"|"epanechnikov", "bandwidth", "bandwidth_method":
    "scott"|"silverman"|"cv"|"fixed", "x": grid, "y": curve, "r_square",
    "x_interval_start", "x_interval_end"}``: the Nadaraya-Watson estimate on
    an even grid over the x interval, linearly interpolated in between.

Outside ``[x_interval_start, x_interval_end]`` every model is extended by
its value at the nearer end.  ``r_square`` is measured at the data points
with the model as it is evaluated from the record.

As postprocessors, the three leave out points far off their neighbourhood
(a call preempted by the scheduler takes 3-10x its neighbours' time; see
:func:`perun_core.analysis.robust.outlier_weights`) before fitting, and
record how many in ``downweighted`` (0 when none stood out).

Importing this module registers the three kinds with
:func:`perun_core.analysis.curves.register_model_plotter`, so
``plot_data_from_coefficients_of`` draws them too.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter, InvalidProfile
from .curves import register_model_plotter
from .points import DEFAULT_X, DEFAULT_Y, AnalysisResult, DegenerateData, Skipped, as_point_sets, interval_bound, r_square

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "BIN_RULES",
    "KERNELS",
    "MAX_BINS",
    "MOVING_METHODS",
    "NONPARAMETRIC_MODELS",
    "bandwidth_cv",
    "bandwidth_scott",
    "bandwidth_silverman",
    "evaluate_nonparametric",
    "fit_kernel_regression",
    "fit_moving_average",
    "fit_regressogram",
    "kernel_regression",
    "moving_average",
    "plot_nonparametric",
    "regressogram",
]

NONPARAMETRIC_MODELS = ("regressogram", "moving_average", "kernel_regression")
#: Rules of ``numpy.histogram_bin_edges`` for choosing the bins.
BIN_RULES = ("auto", "doane", "fd", "rice", "scott", "sqrt", "sturges")
STATISTICS = ("mean", "median")
#: Upper limit on the number of bins a rule may choose.
MAX_BINS = 1024
#: simple moving average, exponential moving average, simple moving median
MOVING_METHODS = ("sma", "ema", "smm")
KERNELS = ("gaussian", "epanechnikov")
BANDWIDTH_METHODS = ("scott", "silverman", "cv")

#: Above this many points kernel sums are taken over fine bins of the data.
_EXACT_LIMIT = 4096
#: Memory bound (matrix cells) of one block of kernel weights.
_BLOCK_CELLS = 1 << 22


# -- shared helpers ---------------------------------------------------------------------------

def _clean(x: Any, y: Any) -> tuple[numpy.ndarray, numpy.ndarray]:
    import numpy as np

    with np.errstate(all="ignore"):
        xa = np.asarray(x, dtype=np.float64).ravel()
        ya = np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError("x and y must have the same length")
    if len(xa) == 0:
        raise DegenerateData("there are no points")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise DegenerateData("the points contain NaN or infinity")
    return xa, ya


def _floats(values: numpy.ndarray) -> list[float]:
    import numpy as np

    if not np.isfinite(values).all():
        raise DegenerateData("the computation overflowed (a result is not finite)")
    return [float(v) for v in values.tolist()]


def _sorted(x: numpy.ndarray, y: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    import numpy as np

    if len(x) > 1 and not (x[1:] >= x[:-1]).all():
        order = np.argsort(x, kind="stable")
        return x[order], y[order]
    return x, y


def _base(uid: Any, kind: str) -> dict:
    return {"uid": uid, "model": kind, "method": "full"}


def _finish(record: dict, x: numpy.ndarray, y: numpy.ndarray) -> dict:
    import numpy as np

    fitted = evaluate_nonparametric(record, x)
    record["r_square"] = r_square(y, fitted)
    record["x_interval_start"] = interval_bound(np.min(x))
    record["x_interval_end"] = interval_bound(np.max(x))
    return record


def _without_outliers(x: Any, y: Any) -> tuple[Any, Any, int]:
    """The points minus those far off their neighbourhood (preempted calls), and how many were left out.

    The same weighing as regression_analysis's (see
    :func:`perun_core.analysis.robust.outlier_weights`): a point whose
    bisquare weight is below one half is left out of the fit.
    """
    import numpy as np

    from .robust import outlier_weights

    with np.errstate(all="ignore"):
        xa = np.asarray(x, dtype=np.float64).ravel()
        ya = np.asarray(y, dtype=np.float64).ravel()
        if xa.shape != ya.shape or not (np.isfinite(xa).all() and np.isfinite(ya).all()):
            return x, y, 0
        weights = outlier_weights(xa, ya)
    if weights is None:
        return x, y, 0
    keep = weights >= 0.5
    if int(keep.sum()) < 2:
        return x, y, 0
    return xa[keep], ya[keep], int((~keep).sum())


def _analyse(unit: str, data: Any, depending_on: str, of: str, fit: Callable[..., dict], **options: Any) -> AnalysisResult:
    out = AnalysisResult([], [])
    for uid, (x, y) in as_point_sets(data, depending_on, of).items():
        try:
            x, y, left_out = _without_outliers(x, y)
            model = fit(x, y, uid=uid, **options)
            model["downweighted"] = left_out
            out.models.append(model)
        except DegenerateData as exc:
            out.skipped.append(Skipped(uid, unit, exc.reason))
    return out


# -- regressogram --------------------------------------------------------------------------------

def _check_bins(bins: Any) -> tuple[int | None, str | None]:
    if isinstance(bins, str):
        rule = bins.strip().lower()
        if rule not in BIN_RULES:
            raise InvalidParameter("regressogram", "bins", bins, f"a positive integer or one of {', '.join(BIN_RULES)}")
        return None, rule
    if type(bins) is int and bins >= 1:
        return bins, None
    raise InvalidParameter("regressogram", "bins", bins, f"a positive integer or one of {', '.join(BIN_RULES)}")


def _bin_edges(x: numpy.ndarray, count: int | None, rule: str | None, max_bins: int) -> numpy.ndarray:
    import numpy as np

    n = len(x)
    low, high = float(x.min()), float(x.max())
    if count is None and rule in ("fd", "auto", "scott") and n > 1 and high > low:
        # These rules derive a bin width from the spread of x; with a narrow
        # spread and a far outlier they would ask for millions of bins.
        with np.errstate(all="ignore"):  # a heuristic: underflow on subnormal spreads is harmless
            if rule == "scott":
                width = (24.0 * math.sqrt(math.pi) / n) ** (1.0 / 3.0) * float(np.std(x))
            else:
                q75, q25 = np.percentile(x, [75, 25])
                width = 2.0 * float(q75 - q25) * n ** (-1.0 / 3.0)
        if width > 0 and (high - low) / width > max_bins:
            count, rule = max_bins, None
    with np.errstate(all="ignore"):
        try:
            edges = np.histogram_bin_edges(x, bins=count if rule is None else rule)
        except (ValueError, OverflowError, MemoryError) as exc:
            raise DegenerateData(f"cannot choose bins: {exc}") from None
        if len(edges) - 1 > max_bins:
            edges = np.histogram_bin_edges(x, bins=max_bins)
    if len(edges) < 2 or not np.isfinite(edges).all() or not (np.diff(edges) > 0).all():
        raise DegenerateData("the x range cannot be split into finite bins")
    return edges


def _bin_index(edges: numpy.ndarray, x: numpy.ndarray) -> numpy.ndarray:
    import numpy as np

    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)


def _fill_empty(values: numpy.ndarray, present: numpy.ndarray) -> numpy.ndarray:
    import numpy as np

    if present.all():
        return values
    positions = np.where(present, np.arange(len(values)), -1)
    previous = np.maximum.accumulate(positions)
    first = int(np.argmax(present))
    previous[previous < 0] = first
    return values[previous]


def fit_regressogram(
    x: Any,
    y: Any,
    *,
    bins: int | str = "auto",
    statistic: str = "mean",
    max_bins: int = MAX_BINS,
    uid: Any = None,
) -> dict:
    """A regressogram of one uid's points: ``statistic`` of y in each bin of x.

    ``bins`` is a number of equal-width bins or a rule of :data:`BIN_RULES`
    (a rule never gives more than ``max_bins`` bins).  Raises
    :class:`~perun_core.analysis.points.DegenerateData` when no finite
    model exists (no points, an x range too wide for floats).
    """
    import numpy as np

    count, rule = _check_bins(bins)
    if statistic not in STATISTICS:
        raise InvalidParameter("regressogram", "statistic", statistic, "mean or median")
    if type(max_bins) is not int or max_bins < 1:
        raise InvalidParameter("regressogram", "max_bins", max_bins, "a positive integer")
    x, y = _clean(x, y)
    edges = _bin_edges(x, count, rule, max_bins)
    nbins = len(edges) - 1
    index = _bin_index(edges, x)
    counts = np.bincount(index, minlength=nbins)
    present = counts > 0
    with np.errstate(all="ignore"):
        if statistic == "mean":
            # relative to one sample, so a constant signal gives exact values
            reference = y[0]
            sums = np.bincount(index, weights=y - reference, minlength=nbins)
            values = np.zeros(nbins)
            values[present] = sums[present] / counts[present] + reference
        else:
            order = np.lexsort((y, index))
            ordered = y[order]
            starts = np.cumsum(counts) - counts
            low = starts + (counts - 1) // 2
            high = starts + counts // 2
            values = np.zeros(nbins)
            values[present] = ordered[low[present]] / 2.0 + ordered[high[present]] / 2.0
    values = _fill_empty(values, present)
    record = _base(uid, "regressogram")
    record.update({
        "statistic": statistic,
        "bin_rule": rule,
        "bin_edges": _floats(edges),
        "bin_values": _floats(values),
        "bin_counts": [int(c) for c in counts.tolist()],
    })
    return _finish(record, x, y)


def regressogram(
    data: Any,
    *,
    bins: int | str = "auto",
    statistic: str = "mean",
    max_bins: int = MAX_BINS,
    depending_on: str = DEFAULT_X,
    of: str = DEFAULT_Y,
) -> AnalysisResult:
    """Regressograms of every uid of ``data`` (a profile, region, table or ``{uid: (x, y)}``)."""
    _check_bins(bins)
    if statistic not in STATISTICS:
        raise InvalidParameter("regressogram", "statistic", statistic, "mean or median")
    return _analyse("regressogram", data, depending_on, of, fit_regressogram,
                    bins=bins, statistic=statistic, max_bins=max_bins)


# -- moving average ---------------------------------------------------------------------------

def _window(n: int, width: int | None) -> int:
    if width is None:
        width = max(1, round(math.sqrt(n)))
    return max(1, min(int(width), n))


def _reach(width: int, center: bool) -> tuple[int, int]:
    """How far the window of a point reaches to the left and to the right."""
    left = width // 2 if center else width - 1
    return left, width - 1 - left


def _simple_average(y: numpy.ndarray, width: int, center: bool) -> numpy.ndarray:
    import numpy as np

    n = len(y)
    left, right = _reach(width, center)
    reference = y[0]
    sums = np.concatenate(([0.0], np.cumsum(y - reference)))
    positions = np.arange(n)
    low = np.maximum(positions - left, 0)
    high = np.minimum(positions + right, n - 1) + 1
    return (sums[high] - sums[low]) / (high - low) + reference


def _moving_median(y: numpy.ndarray, width: int, center: bool) -> numpy.ndarray:
    import numpy as np
    from scipy import ndimage

    n = len(y)
    left, right = _reach(width, center)
    out = np.empty(n)
    if width <= n:
        # scipy's window of point i is y[i - (width//2 + origin):][:width]
        origin = left - width // 2
        upper = ndimage.rank_filter(y, rank=width // 2, size=width, origin=origin, mode="nearest")
        if width % 2:
            out[:] = upper
        else:
            lower = ndimage.rank_filter(y, rank=width // 2 - 1, size=width, origin=origin, mode="nearest")
            out[:] = lower / 2.0 + upper / 2.0
    # near the ends the window is cut short: take the median of what is there
    edge_positions = list(range(min(left, n))) + list(range(max(n - right, min(left, n)), n))
    for i in edge_positions:
        out[i] = np.median(y[max(0, i - left):min(n, i + right + 1)])
    return out


def _exponential_average(y: numpy.ndarray, width: int) -> numpy.ndarray:
    import numpy as np
    from scipy import signal

    alpha = 2.0 / (width + 1.0)
    reference = y[0]
    # s[0] = y[0]; s[i] = alpha * y[i] + (1 - alpha) * s[i - 1]
    smoothed, _state = signal.lfilter([alpha], [1.0, alpha - 1.0], y - reference, zi=np.zeros(1))
    return smoothed + reference


def _thin(x: numpy.ndarray, y: numpy.ndarray, max_points: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    import numpy as np

    if len(x) <= max_points:
        return x, y
    keep = np.unique(np.round(np.linspace(0, len(x) - 1, max_points)).astype(np.int64))
    return x[keep], y[keep]


def fit_moving_average(
    x: Any,
    y: Any,
    *,
    moving_method: str = "sma",
    window_width: int | None = None,
    center: bool | None = None,
    max_points: int = 1000,
    uid: Any = None,
) -> dict:
    """Smooth one uid's points, ordered by x, with a moving window.

    ``moving_method``: ``sma`` (mean of the window), ``smm`` (median of the
    window) or ``ema`` (exponential average ``s = a*y + (1-a)*s_prev`` with
    ``a = 2 / (window_width + 1)``, starting at the first point).
    ``window_width`` counts points (default: the rounded square root of
    their number; never more than there are points); near the ends the
    window holds what is there.  A
    centred window (the default for sma and smm) spans ``width // 2``
    points before the point and the rest after it; otherwise it trails
    the point.  ``ema`` cannot be centred.  Smoothed values of equal x are
    averaged, and at most ``max_points`` (evenly chosen) are stored.
    """
    import numpy as np

    if moving_method not in MOVING_METHODS:
        raise InvalidParameter("moving_average", "moving_method", moving_method, ", ".join(MOVING_METHODS))
    if window_width is not None and (type(window_width) is not int or window_width < 1):
        raise InvalidParameter("moving_average", "window_width", window_width, "a positive integer")
    if center is None:
        center = moving_method != "ema"
    elif moving_method == "ema" and center:
        raise InvalidParameter("moving_average", "center", center, "False for an exponential moving average")
    if type(max_points) is not int or max_points < 2:
        raise InvalidParameter("moving_average", "max_points", max_points, "an integer of at least 2")
    x, y = _clean(x, y)
    x, y = _sorted(x, y)
    width = _window(len(x), window_width)
    with np.errstate(all="ignore"):
        if moving_method == "sma":
            smoothed = _simple_average(y, width, center)
        elif moving_method == "smm":
            smoothed = _moving_median(y, width, center)
        else:
            smoothed = _exponential_average(y, width)
        distinct, first = np.unique(x, return_index=True)
        if len(distinct) < len(x):
            inverse = np.repeat(np.arange(len(distinct)), np.diff(np.append(first, len(x))))
            counts = np.bincount(inverse)
            reference = smoothed[0]
            curve = np.bincount(inverse, weights=smoothed - reference) / counts + reference
        else:
            curve = smoothed
    curve_x, curve_y = _thin(distinct, curve, max_points)
    record = _base(uid, "moving_average")
    record.update({
        "moving_method": moving_method,
        "window_width": width,
        "center": bool(center),
        "x": _floats(curve_x),
        "y": _floats(curve_y),
    })
    return _finish(record, x, y)


def moving_average(
    data: Any,
    *,
    moving_method: str = "sma",
    window_width: int | None = None,
    center: bool | None = None,
    max_points: int = 1000,
    depending_on: str = DEFAULT_X,
    of: str = DEFAULT_Y,
) -> AnalysisResult:
    """Moving averages of every uid of ``data``; see :func:`fit_moving_average`."""
    if moving_method not in MOVING_METHODS:
        raise InvalidParameter("moving_average", "moving_method", moving_method, ", ".join(MOVING_METHODS))
    return _analyse("moving_average", data, depending_on, of, fit_moving_average, moving_method=moving_method,
                    window_width=window_width, center=center, max_points=max_points)


# -- kernel regression -------------------------------------------------------------------------

def _kernel(name: str) -> Callable[[numpy.ndarray], numpy.ndarray]:
    """The kernel with unit variance, up to its constant factor (which cancels)."""
    import numpy as np

    if name == "gaussian":
        return lambda u: np.exp(-0.5 * u * u)
    if name == "epanechnikov":
        # 3/(4 sqrt 5) * (1 - u^2/5) on |u| < sqrt 5: variance 1, like the gaussian
        return lambda u: np.maximum(1.0 - u * u / 5.0, 0.0)
    raise InvalidParameter("kernel_regression", "kernel", name, ", ".join(KERNELS))


def _spread(x: numpy.ndarray) -> float:
    import numpy as np

    return float(np.std(x, ddof=1)) if len(x) > 1 else 0.0


def bandwidth_scott(x: Any) -> float:
    """Scott's normal-reference bandwidth ``(4/3)^(1/5) * sigma * n^(-1/5)`` (about 1.06 sigma n^-1/5).

    ``sigma`` is the sample standard deviation of ``x`` (``ddof=1``).  The
    kernels of this module have unit variance, so the value suits both.
    """
    import numpy as np

    values = np.asarray(x, dtype=np.float64).ravel()
    n = len(values)
    if n == 0:
        return 0.0
    return (4.0 / 3.0) ** 0.2 * _spread(values) * n ** -0.2


def bandwidth_silverman(x: Any) -> float:
    """Silverman's rule of thumb ``0.9 * min(sigma, IQR / 1.34) * n^(-1/5)``.

    When the interquartile range is 0, ``sigma`` alone is used.
    """
    import numpy as np

    values = np.asarray(x, dtype=np.float64).ravel()
    n = len(values)
    if n == 0:
        return 0.0
    sigma = _spread(values)
    q75, q25 = np.percentile(values, [75, 25])
    iqr = float(q75 - q25) / 1.34
    scale = min(sigma, iqr) if iqr > 0 else sigma
    return 0.9 * scale * n ** -0.2


def _rng(seed: int, uid: Any) -> Any:
    import numpy as np

    return np.random.default_rng([seed, zlib.crc32(repr(uid).encode("utf-8", "replace"))])


def bandwidth_cv(
    x: Any,
    y: Any,
    kernel: str = "gaussian",
    *,
    sample: int = 1000,
    seed: int = 0,
) -> float:
    """Bandwidth minimising the leave-one-out squared error of the Nadaraya-Watson estimate.

    Candidates range over ``2^-6 .. 2^3`` times Silverman's bandwidth; the
    best of 28 log-spaced ones is refined by a bounded scalar search.  With
    more than ``sample`` points, a seeded random sample of that size is
    used.  A point without neighbours within the kernel's reach makes a
    candidate invalid.  Returns 1.0 when all x are equal.
    """
    import numpy as np
    from scipy import optimize

    xs, ys = _clean(x, y)
    kern = _kernel(kernel)
    if len(xs) > sample:
        chosen = np.random.default_rng(seed).choice(len(xs), size=sample, replace=False)
        xs, ys = xs[chosen], ys[chosen]
    width = float(xs.max() - xs.min())
    if not width > 0:
        return 1.0
    reference = bandwidth_silverman(xs)
    if not reference > 0:
        reference = width / 10.0
    distances = xs[:, None] - xs[None, :]

    def score(exponent: float) -> float:
        with np.errstate(all="ignore"):
            weights = kern(distances / (reference * 2.0**exponent))
            np.fill_diagonal(weights, 0.0)
            den = weights.sum(axis=1)
            if not (den > 0).all():
                return math.inf
            num = np.einsum("ij,j->i", weights, ys)
            error = float(np.mean((ys - num / den) ** 2))
        return error if math.isfinite(error) else math.inf

    exponents = np.linspace(-6.0, 3.0, 28)
    scores = [score(e) for e in exponents]
    best = int(np.argmin(scores))
    if not math.isfinite(scores[best]):
        return reference
    low = float(exponents[max(best - 1, 0)])
    high = float(exponents[min(best + 1, len(exponents) - 1)])
    found = optimize.minimize_scalar(score, bounds=(low, high), method="bounded", options={"xatol": 1e-3})
    chosen = float(found.x) if found.success and found.fun <= scores[best] else float(exponents[best])
    return reference * 2.0**chosen


def _binned(x: numpy.ndarray, y: numpy.ndarray, bandwidth: float) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Bin centres, counts and y sums of the non-empty bins (bins far finer than the bandwidth)."""
    import numpy as np

    low, high = float(x.min()), float(x.max())
    nbins = int(min(max(8.0 * (high - low) / bandwidth, 1024.0), 65536.0))
    width = (high - low) / nbins
    index = np.clip(((x - low) / width).astype(np.int64), 0, nbins - 1)
    counts = np.bincount(index, minlength=nbins).astype(np.float64)
    sums = np.bincount(index, weights=y, minlength=nbins)
    present = counts > 0
    centres = low + (np.arange(nbins) + 0.5) * width
    return centres[present], counts[present], sums[present]


def _nadaraya_watson(grid: numpy.ndarray, x: numpy.ndarray, y: numpy.ndarray, bandwidth: float,
                     kernel: str) -> numpy.ndarray:
    import numpy as np

    kern = _kernel(kernel)
    if len(x) > _EXACT_LIMIT and x.max() > x.min():
        centres, weights, sums = _binned(x, y, bandwidth)
    else:
        centres, weights, sums = x, np.ones(len(x)), y
    num = np.empty(len(grid))
    den = np.empty(len(grid))
    block = max(1, _BLOCK_CELLS // max(len(centres), 1))
    with np.errstate(all="ignore"):
        for start in range(0, len(grid), block):
            part = grid[start:start + block]
            k = kern((part[:, None] - centres[None, :]) / bandwidth)
            num[start:start + block] = np.einsum("ij,j->i", k, sums)
            den[start:start + block] = np.einsum("ij,j->i", k, weights)
        curve = num / den
    valid = (den > 0) & np.isfinite(curve)
    if valid.all():
        return curve
    if valid.any():
        # no data within the kernel's reach: bridge from the neighbouring grid points
        return np.interp(grid, grid[valid], curve[valid])
    nearest = np.clip(np.searchsorted(x, grid), 0, len(x) - 1)
    return y[nearest]


def fit_kernel_regression(
    x: Any,
    y: Any,
    *,
    kernel: str = "gaussian",
    bandwidth: float | str = "scott",
    points: int = 101,
    cv_sample: int = 1000,
    seed: int = 0,
    uid: Any = None,
) -> dict:
    """Nadaraya-Watson kernel regression of one uid's points, stored on a grid.

    ``kernel`` is ``gaussian`` or ``epanechnikov`` (both scaled to unit
    variance), ``bandwidth`` a positive number or a rule: ``scott``,
    ``silverman`` (see :func:`bandwidth_scott`, :func:`bandwidth_silverman`)
    or ``cv`` (:func:`bandwidth_cv` on at most ``cv_sample`` points).  A
    rule that gives no positive bandwidth (all x equal, or too few points)
    falls back to a 50th of the x range, or 1.0.  The estimate is taken at
    ``points`` evenly spaced x over the data's range; above 4096 points the
    kernel sums run over fine bins of the data.
    """
    import numpy as np

    _kernel(kernel)
    if type(points) is not int or points < 2:
        raise InvalidParameter("kernel_regression", "points", points, "an integer of at least 2")
    if isinstance(bandwidth, str):
        method = bandwidth.strip().lower()
        if method not in BANDWIDTH_METHODS:
            raise InvalidParameter("kernel_regression", "bandwidth", bandwidth,
                                   f"a positive number or one of {', '.join(BANDWIDTH_METHODS)}")
    elif isinstance(bandwidth, (int, float)) and not isinstance(bandwidth, bool) and 0 < bandwidth < math.inf:
        method = "fixed"
    else:
        raise InvalidParameter("kernel_regression", "bandwidth", bandwidth,
                               f"a positive number or one of {', '.join(BANDWIDTH_METHODS)}")
    x, y = _clean(x, y)
    x, y = _sorted(x, y)
    low, high = float(x[0]), float(x[-1])
    with np.errstate(all="ignore"):
        if method == "fixed":
            h = float(bandwidth)
        elif method == "scott":
            h = bandwidth_scott(x)
        elif method == "silverman":
            h = bandwidth_silverman(x)
        else:
            h = bandwidth_cv(x, y, kernel, sample=cv_sample, seed=zlib.crc32(repr((seed, uid)).encode()))
        if not (math.isfinite(h) and h > 0):
            h = (high - low) / 50.0 if high > low else 1.0
        if not (math.isfinite(h) and h > 0):
            raise DegenerateData("no positive finite bandwidth exists for this x range")
        grid = np.linspace(low, high, points) if high > low else np.array([low])
        if not np.isfinite(grid).all():
            raise DegenerateData("the x range is too wide for floats")
        curve = _nadaraya_watson(grid, x, y, h, kernel)
    record = _base(uid, "kernel_regression")
    record.update({
        "kernel": kernel,
        "bandwidth": float(h),
        "bandwidth_method": method,
        "x": _floats(grid),
        "y": _floats(curve),
    })
    return _finish(record, x, y)


def kernel_regression(
    data: Any,
    *,
    kernel: str = "gaussian",
    bandwidth: float | str = "scott",
    points: int = 101,
    cv_sample: int = 1000,
    seed: int = 0,
    depending_on: str = DEFAULT_X,
    of: str = DEFAULT_Y,
) -> AnalysisResult:
    """Kernel regressions of every uid of ``data``; see :func:`fit_kernel_regression`."""
    _kernel(kernel)
    return _analyse("kernel_regression", data, depending_on, of, fit_kernel_regression, kernel=kernel,
                    bandwidth=bandwidth, points=points, cv_sample=cv_sample, seed=seed)


# -- evaluation --------------------------------------------------------------------------------

def _numbers(model: dict, key: str) -> numpy.ndarray:
    import numpy as np

    values = model.get(key)
    if not isinstance(values, list) or not values:
        raise InvalidProfile(None, f"model.{key}", "expected a non-empty list of numbers")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidProfile(None, f"model.{key}", "expected a non-empty list of numbers") from None
    if array.ndim != 1 or not np.isfinite(array).all():
        raise InvalidProfile(None, f"model.{key}", "expected a list of finite numbers")
    return array


def _kind(model: dict) -> str:
    return str(model.get("model", model.get("type", ""))).strip().lower()


def evaluate_nonparametric(model: dict, xs: Any) -> numpy.ndarray:
    """Values of a nonparametric model record at ``xs`` (NaN where ``xs`` is NaN)."""
    import numpy as np

    kind = _kind(model)
    x = np.asarray(xs, dtype=np.float64)
    if kind == "regressogram":
        edges = _numbers(model, "bin_edges")
        values = _numbers(model, "bin_values")
        if len(edges) != len(values) + 1 or not (edges[1:] > edges[:-1]).all():
            raise InvalidProfile(None, "model.bin_edges", "expected increasing edges, one more than bin_values")
        out = values[_bin_index(edges, x)]
    elif kind in ("moving_average", "kernel_regression"):
        curve_x = _numbers(model, "x")
        curve_y = _numbers(model, "y")
        # compared, not subtracted: differences of extreme values would overflow
        if len(curve_x) != len(curve_y) or (len(curve_x) > 1 and not (curve_x[1:] >= curve_x[:-1]).all()):
            raise InvalidProfile(None, "model.x", "expected sorted x of the same length as y")
        out = np.interp(x, curve_x, curve_y)
    else:
        raise InvalidProfile(None, "model", f"'{kind}' is not a nonparametric model kind")
    return np.where(np.isnan(x), np.nan, out)


def plot_nonparametric(model: dict, points: int = 51) -> tuple[list[float], list[float]]:
    """Curve points of a nonparametric record for drawing.

    A regressogram gives its exact step outline (each bin's two edges at
    the bin's value; ``points`` is ignored); the smoothed curves are
    sampled at ``points`` evenly spaced x over the model's interval.
    """
    import numpy as np

    if _kind(model) == "regressogram":
        edges = _numbers(model, "bin_edges")
        values = _numbers(model, "bin_values")
        if len(edges) != len(values) + 1:
            raise InvalidProfile(None, "model.bin_edges", "expected one more edge than bin_values")
        xs = np.repeat(edges, 2)[1:-1]
        ys = np.repeat(values, 2)
        return [float(v) for v in xs], [float(v) for v in ys]
    if type(points) is not int or points < 1:
        raise InvalidParameter("plot", "points", points, "a positive integer")
    curve_x = _numbers(model, "x")
    start = model.get("x_interval_start", float(curve_x[0]))
    end = model.get("x_interval_end", float(curve_x[-1]))
    xs = np.linspace(float(start), float(end), points)
    ys = evaluate_nonparametric(model, xs)
    keep = np.isfinite(xs) & np.isfinite(ys)
    return [float(v) for v in xs[keep]], [float(v) for v in ys[keep]]


register_model_plotter(NONPARAMETRIC_MODELS, plot_nonparametric)
