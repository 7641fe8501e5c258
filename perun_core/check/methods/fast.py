"""Fast Check: the shape of the difference between the best models (spec 001 §8.2.3).

The best models of both profiles are evaluated over the input sizes both
cover and subtracted.  Regression analysis of that difference says what
kind of change it is (``constant`` error: a fixed extra cost; ``linear``
error: a cost that grows with the input ...).  The mean difference relative
to the baseline decides: at least ``threshold`` percent (10) is a change,
in the direction the difference has over the larger half of the sizes.
Uses only models, so it is fast once profiles carry them.  Confidence: the
r^2 of the model of the difference.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...analysis.regression import best_model, fit_models
from ..data import ProfileData
from ..results import Finding, PerformanceChange
from .common import model_locations, read_params, threshold_param
from .modelled import common_grid, interval_of, model_values


class FastCheck:
    name = "fast_check"
    summary = "Classifies the difference of the best models (constant, linear ... error) by its size."
    params = (threshold_param(10.0, "Mean difference of the models, in percent of the baseline, that is a change."),)

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        import numpy as np

        threshold = read_params(self, params)["threshold"]
        best_base, best_target = baseline.best_models(), target.best_models()
        for base, new, presence in model_locations(baseline, target, self.name):
            if presence is not None:
                yield presence
                continue
            assert base is not None and new is not None
            before, after = best_base.get(base.location), best_target.get(new.location)
            grid = common_grid(interval_of(before, base), interval_of(after, new)) if before and after else None
            values_b = model_values(before, grid) if grid is not None and before else None
            values_t = model_values(after, grid) if grid is not None and after else None
            if values_b is None or values_t is None or grid is None:
                yield Finding(PerformanceChange.UNKNOWN, "error model", base.location, method=self.name,
                              reason="no pair of models over common input sizes")
                continue
            error = values_t - values_b
            scale = float(np.mean(np.abs(values_b)))
            mean_b, mean_t = float(values_b.mean()), float(values_t.mean())
            change = float(error.mean()) / scale * 100 if scale > 0 else 0.0
            upper = float(error[len(error) // 2:].mean())
            fitted = fit_models(grid, error).models
            chosen = best_model(fitted)
            kind = f"{chosen['model']} error" if chosen else "error"
            confidence = max(0.0, float(chosen["r_square"])) if chosen else 0.0
            if abs(change) < threshold:
                result = PerformanceChange.NO_CHANGE
            else:
                result = PerformanceChange.DEGRADATION if upper > 0 else PerformanceChange.OPTIMIZATION
            yield Finding(result, kind, base.location, mean_b, mean_t, mean_t - mean_b, change, "r_square",
                          confidence, self.name)


METHOD = FastCheck()
