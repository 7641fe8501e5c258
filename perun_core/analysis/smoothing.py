"""Moving averages: the simple and exponential moving average and the moving median (spec §3.4.2).

Its record is described in :mod:`perun_core.analysis.nonparametric`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter
from .nonparametric import analyse, clean_points, finish_record, finite_floats, record_base, sorted_points
from .points import DEFAULT_X, DEFAULT_Y, AnalysisResult

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["MOVING_METHODS", "fit_moving_average", "moving_average"]

#: simple moving average, exponential moving average, simple moving median
MOVING_METHODS = ("sma", "ema", "smm")


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
    x, y = clean_points(x, y)
    x, y = sorted_points(x, y)
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
    record = record_base(uid, "moving_average")
    record.update({
        "moving_method": moving_method,
        "window_width": width,
        "center": bool(center),
        "x": finite_floats(curve_x),
        "y": finite_floats(curve_y),
    })
    return finish_record(record, x, y)


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
    return analyse("moving_average", data, depending_on, of, fit_moving_average, moving_method=moving_method,
                    window_width=window_width, center=center, max_points=max_points)
