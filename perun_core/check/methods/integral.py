"""Integral Comparison (paper II.b).

The areas under the best models of the two profiles over the input sizes
both cover should stay about the same.  Their relative difference of at
least ``threshold`` percent (10) is a Degradation or Optimization, of at
least ``maybe`` percent (5) a Maybe.  A complement to best model order
equality: a higher-order model whose curve practically matches the old one
on the measured sizes makes no alarm here.  Confidence: the smaller r^2.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...params import Param
from ..data import ProfileData
from ..results import Finding, PerformanceChange
from .common import model_pairs, read_params, relative, threshold_param
from .modelled import area, common_grid, interval_of, model_values


class IntegralComparison:
    name = "integral_comparison"
    summary = "Relative difference of the areas under the best models over the common input sizes."
    params = (
        threshold_param(10.0, "Difference of the areas in percent that is a change."),
        Param("maybe", "float", 5.0, "Difference of the areas in percent that is a Maybe.", minimum=0.0),
    )

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:

        values = read_params(self, params)
        threshold, maybe = values["threshold"], values["maybe"]
        for ready, base, new, before, after in model_pairs(baseline, target, self.name, "integral"):
            if ready is not None:
                yield ready
                continue
            grid = common_grid(interval_of(before, base), interval_of(after, new), 128)
            values_b = model_values(before, grid) if grid is not None else None
            values_t = model_values(after, grid) if grid is not None else None
            if grid is None or values_b is None or values_t is None:
                yield Finding(PerformanceChange.UNKNOWN, "integral", base.location, method=self.name,
                              reason="the models share no interval of input sizes where both are defined")
                continue
            area_b = area(values_b, grid)
            area_t = area(values_t, grid)
            change = relative(area_b, area_t)
            confidence = max(0.0, float(min(before["r_square"], after["r_square"])))
            if change is None:
                result = PerformanceChange.UNKNOWN
            elif abs(change) >= threshold:
                result = PerformanceChange.DEGRADATION if change > 0 else PerformanceChange.OPTIMIZATION
            elif abs(change) >= maybe:
                result = PerformanceChange.MAYBE_DEGRADATION if change > 0 else PerformanceChange.MAYBE_OPTIMIZATION
            else:
                result = PerformanceChange.NO_CHANGE
            yield Finding(result, "integral", base.location, area_b, area_t, area_t - area_b, change, "r_square",
                          confidence, self.name)


METHOD = IntegralComparison()
