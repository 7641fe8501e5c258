"""Regression analysis (spec 001 §3.4.2, §5.1.2): parametric models of ``of`` depending on ``depending_on``.

``perun-core postprocessby PROFILE regression_analysis -m full`` fits, for
every uid, the models of :mod:`perun_core.analysis.regression` (constant,
logarithmic, linear, n log n, quadratic, power, exponential) by least
squares with the chosen method (full, iterative, initial_guess, interval,
bisection).  The records, ``{uid, model, method, r_square, coeffs: [{name,
value}, ...], x_interval_start, x_interval_end, per_key, of_key}``, are
appended to one region's ``models`` and models the data cannot support are
listed under ``skipped`` in the unit's ``postprocessors`` entry; see
:mod:`perun_core.postprocess.common` for both rules.  The original tool's
spelling ``regression-analysis`` names this unit too.
"""

from __future__ import annotations

from typing import Any

from ..analysis.regression import MODELS, canonical_model_name, regression_analysis
from ..errors import InvalidParameter
from ..units import Param, PhaseResult, UnitContext
from .common import KEY_PARAMS, fit_and_store, settings

__all__ = ["RegressionAnalysis", "check_models"]

_METHODS = ("full", "iterative", "initial_guess", "interval", "bisection")


def check_models(value: list[str]) -> list[str]:
    """Model names (items may be comma lists) as canonical kinds; ``["all"]`` when all are asked for."""

    names = [part.strip() for item in value for part in str(item).split(",") if part.strip()]
    if not names or any(name.lower() == "all" for name in names):
        return ["all"]
    chosen = []
    for name in names:
        try:
            kind = canonical_model_name(name)
        except InvalidParameter:
            raise ValueError(f"model names out of {', '.join(MODELS)} (or 'n log n', 'all'); "
                             f"'{name}' is not one") from None
        if kind not in chosen:
            chosen.append(kind)
    return chosen


class RegressionAnalysis:
    name = "regression_analysis"
    kind = "postprocessor"
    summary = "Fit parametric models (linear, quadratic, ...) per uid."
    description = (
        "For every uid, fits the models of 'of' (default amount) depending on 'depending-on' (default "
        "structure-unit-size) by least squares and stores them, with their coefficient of determination "
        "(R^2), in the profile's models. Methods: full (every model on all points), iterative and "
        "initial_guess (pick the best model on a part of the points, then fit it on all), interval (the best "
        "model on each of --steps parts of the x range) and bisection (halve the x range while the best "
        "model changes, up to --steps times). Models the data cannot support are left out, with the reason "
        "recorded in the profile's postprocessors entry."
    )
    params = (
        Param("method", "choice", "full", "How models are computed.", flags=("-m", "--method"), choices=_METHODS),
        Param("regression_models", "list", None,
              "Models to fit: constant, linear, logarithmic, quadratic, power, exponential, nlogn ('n log n'); "
              "repeatable or comma-separated; all of them by default.",
              flags=("-r", "--regression_models", "--regression-models"), metavar="MODEL", aliases=("models",),
              check=check_models),
        Param("steps", "int", 3, "Parts of the iterative, initial_guess and interval methods; the depth of "
              "bisection.", flags=("-s", "--steps"), minimum=1, maximum=64),
        *KEY_PARAMS,
    )

    def postprocess(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        options = settings(self, kwargs)
        models = options["regression_models"]
        if models is not None:
            models = check_models([models] if isinstance(models, str) else list(models))
        return fit_and_store(self, kwargs, lambda points: regression_analysis(
            points, options["method"], models, options["steps"]))
