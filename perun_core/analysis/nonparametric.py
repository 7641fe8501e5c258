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

The kinds are fitted in :mod:`~perun_core.analysis.bins` (regressogram),
:mod:`~perun_core.analysis.smoothing` (moving average) and
:mod:`~perun_core.analysis.kernel` (kernel regression); this module holds
what they share: cleaning the points, leaving out outliers, finishing a
record, and evaluating and drawing records.

Importing this module registers the three kinds with
:func:`perun_core.analysis.curves.register_model_plotter`, so
``plot_data_from_coefficients_of`` draws them too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter, InvalidProfile
from .curves import model_kind, register_model_plotter
from .points import AnalysisResult, DegenerateData, Skipped, as_point_sets, interval_bound, r_square

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "NONPARAMETRIC_MODELS",
    "analyse",
    "bin_index",
    "clean_points",
    "evaluate_nonparametric",
    "finish_record",
    "finite_floats",
    "plot_nonparametric",
    "record_base",
    "sorted_points",
]

NONPARAMETRIC_MODELS = ("regressogram", "moving_average", "kernel_regression")


# -- shared helpers ---------------------------------------------------------------------------

def clean_points(x: Any, y: Any) -> tuple[numpy.ndarray, numpy.ndarray]:
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


def finite_floats(values: numpy.ndarray) -> list[float]:
    import numpy as np

    if not np.isfinite(values).all():
        raise DegenerateData("the computation overflowed (a result is not finite)")
    return [float(v) for v in values.tolist()]


def sorted_points(x: numpy.ndarray, y: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    import numpy as np

    if len(x) > 1 and not (x[1:] >= x[:-1]).all():
        order = np.argsort(x, kind="stable")
        return x[order], y[order]
    return x, y


def record_base(uid: Any, kind: str) -> dict:
    return {"uid": uid, "model": kind, "method": "full"}


def finish_record(record: dict, x: numpy.ndarray, y: numpy.ndarray) -> dict:
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

    # lazy: perun_core.analysis imports this module back at load (circular)
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


def analyse(unit: str, data: Any, depending_on: str, of: str, fit: Callable[..., dict], **options: Any) -> AnalysisResult:
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


def bin_index(edges: numpy.ndarray, x: numpy.ndarray) -> numpy.ndarray:
    import numpy as np

    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)


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


def evaluate_nonparametric(model: dict, xs: Any) -> numpy.ndarray:
    """Values of a nonparametric model record at ``xs`` (NaN where ``xs`` is NaN)."""
    import numpy as np

    kind = model_kind(model)
    x = np.asarray(xs, dtype=np.float64)
    if kind == "regressogram":
        edges = _numbers(model, "bin_edges")
        values = _numbers(model, "bin_values")
        if len(edges) != len(values) + 1 or not (edges[1:] > edges[:-1]).all():
            raise InvalidProfile(None, "model.bin_edges", "expected increasing edges, one more than bin_values")
        out = values[bin_index(edges, x)]
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

    if model_kind(model) == "regressogram":
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
