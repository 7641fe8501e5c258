"""Best Model Order Equality (spec 001 §8.2.1, paper II.b).

For every location the best regression model of each profile (highest
coefficient of determination; among nearly equal ones the simplest) stands
for its performance.  When the complexity class of the target's best model
is higher than the baseline's, that is a Degradation (e.g. linear ->
quadratic); lower, an Optimization.  The confidence is the smaller r^2 of the
two models: below ``min_confidence`` (0.8) a change is only a Maybe.

Classes are ordered by growth: constant, logarithmic, linear, n log n,
quadratic, exponential; a power model ``b0 * x^b1`` ranks by its exponent
(``b1 = 2`` sits with quadratic).  Profiles without models get them fitted
now (all kinds, method ``full``).

Two guards against the method's known weakness -- picking between nearly
equal models of noisy data: below ``min_fit`` (0.5) the models explain too
little to tell an order, so the result is NoChange; and an order change that
contradicts the models' values at the largest common input size (a "higher"
order that is cheaper there) is only a Maybe.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from ...analysis.curves import model_coefficients
from ...analysis.parametric import canonical_model_name
from ...params import Param
from ..data import ProfileData
from ..results import Finding, PerformanceChange
from .common import model_pairs, read_params
from .modelled import common_grid, interval_of, model_values

#: Growth of each model kind, comparable across kinds.
GROWTH = {"constant": 0.0, "logarithmic": 0.5, "linear": 1.0, "nlogn": 1.5, "quadratic": 2.0, "exponential": 100.0}
#: Two power exponents closer than this are the same class.
EXPONENT_TOLERANCE = 0.25


def model_kind(model: dict) -> str:
    return canonical_model_name(str(model.get("model", model.get("type", ""))))


def growth_of(model: dict) -> float:
    """How fast a model grows, on the scale of :data:`GROWTH` (power: its exponent)."""

    kind = model_kind(model)
    if kind == "power":
        b1 = model_coefficients(model).get("b1", 1.0)
        return max(0.0, float(b1))
    return GROWTH.get(kind, math.nan)


def describe_model(model: dict) -> str:
    """The kind of a model; a power model with its exponent (``power(x^1.8)``)."""

    kind = model_kind(model)
    if kind == "power":
        return f"power(x^{model_coefficients(model).get('b1', 0.0):.2g})"
    return kind


def _agrees_at_largest(before: dict, after: dict, base: Any, new: Any, worse: bool) -> bool:
    """Whether the target's model is higher (for ``worse``) at the largest size both cover."""

    grid = common_grid(interval_of(before, base), interval_of(after, new), 2)
    if grid is None:
        return True
    values_b, values_t = model_values(before, grid[-1:]), model_values(after, grid[-1:])
    if values_b is None or values_t is None:
        return True
    return bool(values_t[0] > values_b[0]) == worse


class BestModelOrderEquality:
    name = "best_model_order_equality"
    summary = "Compares the complexity class of the best regression model of each location."
    params = (
        Param("min_confidence", "float", 0.8, "Smallest r^2 of both models for a certain (not Maybe) change.",
              minimum=0.0, maximum=1.0),
        Param("min_fit", "float", 0.5, "Smallest r^2 of both models to tell an order at all (else NoChange).",
              minimum=0.0, maximum=1.0),
    )

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        values = read_params(self, params)
        min_confidence, min_fit = values["min_confidence"], values["min_fit"]
        for ready, base, new, before, after in model_pairs(baseline, target, self.name, "order"):
            if ready is not None:
                yield ready
                continue
            confidence = float(min(before["r_square"], after["r_square"]))
            grow_before, grow_after = growth_of(before), growth_of(after)
            same = abs(grow_after - grow_before) < EXPONENT_TOLERANCE or model_kind(before) == model_kind(after)
            if same or math.isnan(grow_before) or math.isnan(grow_after) or confidence < min_fit:
                result = PerformanceChange.NO_CHANGE
            else:
                worse = grow_after > grow_before
                agrees = _agrees_at_largest(before, after, base, new, worse)
                if confidence >= min_confidence and agrees:
                    result = PerformanceChange.DEGRADATION if worse else PerformanceChange.OPTIMIZATION
                else:
                    result = PerformanceChange.MAYBE_DEGRADATION if worse else PerformanceChange.MAYBE_OPTIMIZATION
            yield Finding(result, "order", base.location, describe_model(before), describe_model(after), None, None,
                          "r_square", max(0.0, confidence), method=self.name)


METHOD = BestModelOrderEquality()
