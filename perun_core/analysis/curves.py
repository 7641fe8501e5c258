"""Model curves: the points of a fitted model, for views and checks to draw and compare.

Parametric kinds (linear, quadratic, ...) are built in; nonparametric ones
(regressogram, moving average, kernel regression) register themselves from
:mod:`perun_core.analysis.nonparametric` through :func:`register_model_plotter`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InvalidProfile, UsageError
from ..profile.model import is_finite_number

__all__ = ["MODEL_PLOTTERS", "ModelPlotter", "interval_points", "model_coefficients", "model_kind",
           "plot_data_from_coefficients_of", "register_model_plotter"]


#: A plotter takes a model dict and a number of points and returns
#: ``(plot_x, plot_y)``, finite floats only.
ModelPlotter = Callable[[dict, int], tuple[list[float], list[float]]]

#: Model kind (lower case) -> plotter.  Nonparametric kinds register here via
#: :func:`register_model_plotter`.
MODEL_PLOTTERS: dict[str, ModelPlotter] = {}


def register_model_plotter(names: str | Iterable[str], plotter: ModelPlotter) -> None:
    """Make :func:`plot_data_from_coefficients_of` handle models of kind ``names``."""
    for name in [names] if isinstance(names, str) else names:
        MODEL_PLOTTERS[name.strip().lower()] = plotter


def model_kind(model: dict) -> str:
    """The kind of a model record (``model``, else the original's ``type`` key), lower case: ``linear``, ``kernel``."""
    return str(model.get("model", model.get("type", ""))).strip().lower()


def _number(value: Any, where: str) -> float:
    if is_finite_number(value):
        try:
            return float(value)
        except OverflowError:
            pass
    raise InvalidProfile(None, where, f"expected a finite number, got {value!r}")


def model_coefficients(model: dict) -> dict[str, float]:
    """The model's coefficients by name (``coeffs`` is a list of ``{name, value}``)."""
    coeffs = model.get("coeffs", [])
    if isinstance(coeffs, dict):
        pairs = list(coeffs.items())
    elif isinstance(coeffs, list):
        pairs = []
        for i, item in enumerate(coeffs):
            if not isinstance(item, dict) or "name" not in item or "value" not in item:
                raise InvalidProfile(None, f"model.coeffs[{i}]", "expected an object with 'name' and 'value'")
            pairs.append((item["name"], item["value"]))
    else:
        raise InvalidProfile(None, "model.coeffs", "expected a list of coefficients")
    return {str(name): _number(value, f"model.coeffs.{name}") for name, value in pairs}


def interval_points(model: dict, points: int) -> list[float]:
    """``points`` evenly spaced x values from the model's interval start to its end, both included."""
    start = model.get("x_interval_start", model.get("x_start"))
    end = model.get("x_interval_end", model.get("x_end"))
    if start is None:
        raise InvalidProfile(None, "model.x_interval_start", "is missing")
    if end is None:
        raise InvalidProfile(None, "model.x_interval_end", "is missing")
    low = _number(start, "model.x_interval_start")
    high = _number(end, "model.x_interval_end")
    if points == 1:
        return [low]
    width = high - low
    return [low + width * i / (points - 1) for i in range(points)]


def _parametric(formula: Callable[[dict[str, float], float], float], required: tuple[str, ...], kind: str) -> ModelPlotter:
    def plot(model: dict, points: int) -> tuple[list[float], list[float]]:
        coefficients = model_coefficients(model)
        for name in required:
            if name not in coefficients:
                raise InvalidProfile(None, "model.coeffs", f"missing coefficient '{name}' of a {kind} model")
        plot_x: list[float] = []
        plot_y: list[float] = []
        for x in interval_points(model, points):
            try:
                y = formula(coefficients, x)
            except (ValueError, OverflowError, ZeroDivisionError):
                continue  # undefined here (log of x <= 0, 0 ** negative, ...)
            if isinstance(y, complex) or not math.isfinite(y):
                continue
            plot_x.append(x)
            plot_y.append(float(y))
        return plot_x, plot_y

    return plot


def _quadratic(c: dict[str, float], x: float) -> float:
    if "b2" in c:
        return c["b0"] + c["b1"] * x + c["b2"] * x * x
    return c["b0"] + c["b1"] * x * x


register_model_plotter("constant", _parametric(lambda c, x: c["b0"], ("b0",), "constant"))
register_model_plotter("linear", _parametric(lambda c, x: c["b0"] + c["b1"] * x, ("b0", "b1"), "linear"))
register_model_plotter(
    "logarithmic", _parametric(lambda c, x: c["b0"] + c["b1"] * math.log(x), ("b0", "b1"), "logarithmic")
)
register_model_plotter("quadratic", _parametric(_quadratic, ("b0", "b1"), "quadratic"))
register_model_plotter("power", _parametric(lambda c, x: c["b0"] * math.pow(x, c["b1"]), ("b0", "b1"), "power"))
register_model_plotter(
    "exponential", _parametric(lambda c, x: c["b0"] * math.pow(c["b1"], x), ("b0", "b1"), "exponential")
)
register_model_plotter(
    ("n log n", "nlogn", "linearithmic"),
    _parametric(lambda c, x: c["b0"] + c["b1"] * x * math.log(x), ("b0", "b1"), "n log n"),
)


def plot_data_from_coefficients_of(model: dict, points: int = 51) -> dict:
    """A copy of ``model`` with ``plot_x`` and ``plot_y``: its curve over its x interval.

    The curve is evaluated at ``points`` evenly spaced x from
    ``x_interval_start`` to ``x_interval_end`` (``x_start``/``x_end`` are
    accepted too).  Parametric kinds and their formulas (coefficients looked
    up by name): constant ``b0``; linear ``b0 + b1*x``; logarithmic ``b0 +
    b1*ln x``; quadratic ``b0 + b1*x^2`` (``b0 + b1*x + b2*x^2`` when ``b2``
    exists); power ``b0 * x^b1``; exponential ``b0 * b1^x``; ``n log n``
    (also ``nlogn``, ``linearithmic``) ``b0 + b1*x*ln x``.  Points where the
    formula is undefined or not finite are dropped, so both lists hold only
    finite floats and have equal lengths.  The kind is read from ``model``
    (``type`` as a fallback), case-insensitively; other kinds can be added
    with :func:`register_model_plotter`.
    """
    if type(points) is not int or points < 1:
        raise UsageError(f"points must be a positive integer, got {points!r}")
    if not isinstance(model, dict):
        raise InvalidProfile(None, "model", "expected a model object")
    kind = model.get("model", model.get("type"))
    if not isinstance(kind, str) or not kind.strip():
        raise InvalidProfile(None, "model", "the model kind is missing")
    plotter = MODEL_PLOTTERS.get(kind.strip().lower())
    if plotter is None:
        # Nonparametric kinds register themselves when their module loads.
        from . import nonparametric  # noqa: F401  (lazy: its import registers the kinds, and it needs numpy)

        plotter = MODEL_PLOTTERS.get(kind.strip().lower())
    if plotter is None:
        raise InvalidProfile(None, "model", f"unknown model kind '{kind}'; known: {', '.join(sorted(MODEL_PLOTTERS))}")
    plot_x, plot_y = plotter(model, points)
    result = dict(model)
    result["plot_x"] = plot_x
    result["plot_y"] = plot_y
    return result
