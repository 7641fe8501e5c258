"""Average Amount Threshold (spec 001 §8.2.2).

The average amount of each location in the target is divided by the one in
the baseline.  A ratio of at least ``threshold`` (2.0) is a Degradation, at
most its inverse (0.5) an Optimization, anything between NoChange.  No
confidence is reported.  Cheap, and blind to changes below 2x and to shifts
in the mix of input sizes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..data import ProfileData
from ..results import Finding, PerformanceChange
from .common import location_pairs, read_params, relative, threshold_param


class AverageAmountThreshold:
    name = "average_amount_threshold"
    summary = "Ratio of the average amounts per location against a threshold (2x by default)."
    params = (threshold_param(2.0, "Ratio of the averages from which a location changed (and its inverse).", minimum=1.0),)

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        limit = read_params(self, params)["threshold"]
        for base, new, presence in location_pairs(baseline, target, self.name):
            if presence is not None:
                yield presence
                continue
            assert base is not None and new is not None
            before, after = float(base.y.mean()), float(new.y.mean())
            if before > 0 and after / before >= limit:
                result = PerformanceChange.DEGRADATION
            elif after > 0 and before / after >= limit:
                result = PerformanceChange.OPTIMIZATION
            elif before <= 0 < after:
                result = PerformanceChange.DEGRADATION
            else:
                result = PerformanceChange.NO_CHANGE
            yield Finding(result, "ratio", base.location, before, after, after - before, relative(before, after),
                          method=self.name)


METHOD = AverageAmountThreshold()
