"""Kernel regression: the Nadaraya-Watson estimate of ``of`` depending on ``depending_on``.

For every uid the estimate (a kernel-weighted mean of the amounts around
each x) is taken on an even grid of ``--points`` x values over the uid's x
range, with a ``gaussian`` or ``epanechnikov`` kernel (both of unit
variance) and a bandwidth that is a positive number or a rule: ``scott``,
``silverman`` or ``cv`` (leave-one-out cross-validation on a sample of at
most 1000 points).  The record (``model: "kernel_regression"``, the curve
``x``/``y``, ``bandwidth``; see :mod:`perun_core.analysis.kernel`)
is stored like the parametric models (:mod:`perun_core.postprocess.common`).
"""

from __future__ import annotations

import math
from typing import Any

from ..analysis.kernel import kernel_regression
from ..units import Param, PhaseResult, UnitContext
from .common import ORIGINAL_KEY_PARAMS, fit_and_store, settings

__all__ = ["KernelRegression", "check_bandwidth"]

_RULES = ("scott", "silverman", "cv")


def check_bandwidth(value: str) -> float | str:
    """A rule name (lower case) or a positive finite number (as a float)."""
    text = str(value).strip().lower()
    if text in _RULES:
        return text
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"a positive number or a rule: {', '.join(_RULES)}")
    return number


class KernelRegression:
    name = "kernel_regression"
    kind = "postprocessor"
    summary = "Kernel regression of the amounts of every uid."
    description = (
        "Estimates the amounts of every uid as the Nadaraya-Watson kernel regression on an even grid of x "
        "values, with a gaussian or epanechnikov kernel and a bandwidth that is a number or a rule (scott, "
        "silverman, cv: leave-one-out cross-validation). The curve is stored as a kernel_regression model "
        "with its R^2."
    )
    params = (
        Param("kernel", "choice", "gaussian", "The kernel (both have unit variance).", flags=("-k", "--kernel"),
              choices=("gaussian", "epanechnikov")),
        Param("bandwidth", "str", "scott", "A positive number, or a rule: scott, silverman, cv.",
              flags=("-bw", "--bandwidth"), metavar="NUMBER|RULE", aliases=("bandwidth_method",),
              check=check_bandwidth),
        Param("points", "int", 101, "Grid points the curve is stored at.", flags=("-p", "--points"), minimum=2, maximum=100_000),
        *ORIGINAL_KEY_PARAMS,
    )

    def postprocess(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        options = settings(self, kwargs)
        return fit_and_store(self, kwargs, kernel_regression, kernel=options["kernel"],
                             bandwidth=check_bandwidth(options["bandwidth"]), points=options["points"])
