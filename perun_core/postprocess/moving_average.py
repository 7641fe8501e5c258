"""The moving average: ``of`` smoothed over a window of neighbouring points, ordered by ``depending_on``.

For every uid the points are ordered by x and smoothed with a moving
window: ``sma`` (mean of the window), ``smm`` (median of the window) or
``ema`` (exponential average with ``alpha = 2 / (width + 1)``).  The window
counts ``--window-width`` points (default: the square root of their
number); sma and smm centre it on the point unless ``--no-center`` (then it
trails the point); ema always trails, so ``--center`` does not apply to it.
The record (``model: "moving_average"``, the smoothed curve ``x``/``y`` at
most 1000 points, interpolated linearly; see
:mod:`perun_core.analysis.smoothing`) is stored like the parametric
models (:mod:`perun_core.postprocess.common`).
"""

from __future__ import annotations

from typing import Any

from ..analysis.smoothing import moving_average
from ..units import Param, PhaseResult, UnitContext
from .common import ORIGINAL_KEY_PARAMS, fit_and_store, settings

__all__ = ["MovingAverage"]


class MovingAverage:
    name = "moving_average"
    kind = "postprocessor"
    summary = "Moving average (sma, ema) or median (smm) per uid."
    description = (
        "Orders the points of every uid by x and smooths the amounts over a window of --window-width points "
        "(default: the square root of their number): simple moving average (sma), exponential moving average "
        "(ema) or simple moving median (smm). sma and smm centre the window on each point unless --no-center. "
        "The smoothed curve is stored as a moving_average model with its R^2."
    )
    params = (
        Param("moving_method", "choice", "sma", "sma: mean, ema: exponential average, smm: median.",
              flags=("-m", "--moving-method"), choices=("sma", "ema", "smm")),
        Param("window_width", "int", None, "Points in the window (default: the square root of the uid's points).",
              flags=("-ww", "--window-width"), minimum=1, maximum=1_000_000),
        Param("center", "bool", True, "Centre the window on each point (sma and smm; ema always trails).",
              flags=("--center",)),
        *ORIGINAL_KEY_PARAMS,
    )

    def postprocess(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        options = settings(self, kwargs)
        method = options["moving_method"]
        center = bool(options["center"]) if method != "ema" else False
        return fit_and_store(self, kwargs, moving_average, moving_method=method,
                             window_width=options["window_width"], center=center)
