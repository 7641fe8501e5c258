"""Kernel regression: the Nadaraya-Watson estimate and its bandwidth rules (spec §3.4.2).

Its record is described in :mod:`perun_core.analysis.nonparametric`.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter
from .nonparametric import analyse, clean_points, finish_record, finite_floats, record_base, sorted_points
from .points import DEFAULT_X, DEFAULT_Y, AnalysisResult, DegenerateData

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["BANDWIDTH_METHODS", "KERNELS", "bandwidth_cv", "bandwidth_scott", "bandwidth_silverman",
           "fit_kernel_regression", "kernel_regression"]

KERNELS = ("gaussian", "epanechnikov")
BANDWIDTH_METHODS = ("scott", "silverman", "cv")

#: Above this many points kernel sums are taken over fine bins of the data.
_EXACT_LIMIT = 4096
#: Memory bound (matrix cells) of one block of kernel weights.
_BLOCK_CELLS = 1 << 22


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

    xs, ys = clean_points(x, y)
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
    x, y = clean_points(x, y)
    x, y = sorted_points(x, y)
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
    record = record_base(uid, "kernel_regression")
    record.update({
        "kernel": kernel,
        "bandwidth": float(h),
        "bandwidth_method": method,
        "x": finite_floats(grid),
        "y": finite_floats(curve),
    })
    return finish_record(record, x, y)


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
    return analyse("kernel_regression", data, depending_on, of, fit_kernel_regression, kernel=kernel,
                    bandwidth=bandwidth, points=points, cv_sample=cv_sample, seed=seed)
