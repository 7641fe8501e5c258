"""The numeric core of the postprocessors: models, clusters and filters.

Pure functions over profiles (or ready ``{uid: (x, y)}`` points) that thin
postprocessor units wrap:

* :mod:`.points` -- ``(x, y)`` arrays per uid read column-wise from profiles;
  the result types :class:`AnalysisResult` and :class:`Skipped`;
* :mod:`.regression` -- parametric regression analysis (spec §3.4.2, §5.1.2);
* :mod:`.nonparametric` -- regressogram, moving average, kernel regression;
* :mod:`.clusterizer` -- the ``cluster`` value of every resource (§5.1.3);
* :mod:`.filtering` -- keeping or dropping resources by uid, type or value.

:func:`evaluate_model` and :func:`plot_points` work on every model kind.
numpy and scipy are imported only when a function needs them, and each
submodule only when one of its names is first used, so importing this
package (or one of its submodules) is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter, InvalidProfile

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from .bins import fit_regressogram, regressogram
    from .clusterizer import clusterize_profile, clusterize_table, with_column
    from .filtering import filter_profile, filter_rows, filter_table, parse_condition, resource_mask
    from .kernel import fit_kernel_regression, kernel_regression
    from .nonparametric import NONPARAMETRIC_MODELS
    from .points import DEFAULT_X, DEFAULT_Y, AnalysisResult, DegenerateData, Skipped, points_by_uid
    from .regression import METHODS, MODELS, best_model, fit_model, fit_models, regression_analysis
    from .smoothing import fit_moving_average, moving_average

#: where each name of the package is defined: a submodule is imported when one of its names is first used, so
#: a command that needs one submodule (``show`` filters resources with :mod:`.filtering`) does not import them all
_HOMES = {
    "bins": ("fit_regressogram", "regressogram"),
    "clusterizer": ("clusterize_profile", "clusterize_table", "with_column"),
    "filtering": ("filter_profile", "filter_rows", "filter_table", "parse_condition", "resource_mask"),
    "kernel": ("fit_kernel_regression", "kernel_regression"),
    "nonparametric": ("NONPARAMETRIC_MODELS",),
    "points": ("DEFAULT_X", "DEFAULT_Y", "AnalysisResult", "DegenerateData", "Skipped", "points_by_uid"),
    "regression": ("METHODS", "MODELS", "best_model", "fit_model", "fit_models", "regression_analysis"),
    "smoothing": ("fit_moving_average", "moving_average"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "DEFAULT_X",
    "DEFAULT_Y",
    "METHODS",
    "MODELS",
    "NONPARAMETRIC_MODELS",
    "AnalysisResult",
    "DegenerateData",
    "Skipped",
    "best_model",
    "clusterize_profile",
    "clusterize_table",
    "evaluate_model",
    "filter_profile",
    "filter_rows",
    "filter_table",
    "fit_kernel_regression",
    "fit_model",
    "fit_models",
    "fit_moving_average",
    "fit_regressogram",
    "kernel_regression",
    "moving_average",
    "parse_condition",
    "plot_points",
    "points_by_uid",
    "regression_analysis",
    "regressogram",
    "resource_mask",
    "with_column",
]


def evaluate_model(model: dict, xs: Any) -> numpy.ndarray:
    """Values of any model record (parametric or nonparametric) at ``xs``, as a float array.

    Parametric formulas give NaN where they are undefined (``ln`` of x <= 0,
    ...); nonparametric models hold their end values outside their interval.
    Raises :class:`~perun_core.errors.InvalidProfile` for an unknown kind or
    a malformed record.
    """
    # lazy: the package imports its submodules only when they are used
    from . import curves, nonparametric, regression

    if curves.model_kind(model) in nonparametric.NONPARAMETRIC_MODELS:
        return nonparametric.evaluate_nonparametric(model, xs)
    return regression.evaluate_parametric(model, xs)


def plot_points(model: dict, points: int = 51) -> tuple[list[float], list[float]]:
    """``(xs, ys)`` lists of finite floats that draw ``model`` over its x interval.

    Curves are sampled at ``points`` evenly spaced x from
    ``x_interval_start`` to ``x_interval_end``, dropping x where a formula
    is undefined; a regressogram gives its exact step outline instead.
    """
    import numpy as np

    # lazy: the package imports its submodules only when they are used
    from . import curves, nonparametric, regression

    if curves.model_kind(model) in nonparametric.NONPARAMETRIC_MODELS:
        return nonparametric.plot_nonparametric(model, points)
    if type(points) is not int or points < 1:
        raise InvalidParameter("plot", "points", points, "a positive integer")
    start = model.get("x_interval_start", model.get("x_start"))
    end = model.get("x_interval_end", model.get("x_end"))
    if not isinstance(start, (int, float)) or not isinstance(end, (int, float)):
        raise InvalidProfile(None, "model.x_interval_start", "expected numeric interval ends")
    xs = np.linspace(float(start), float(end), points)
    ys = regression.evaluate_parametric(model, xs)
    keep = np.isfinite(xs) & np.isfinite(ys)
    return [float(v) for v in xs[keep]], [float(v) for v in ys[keep]]
