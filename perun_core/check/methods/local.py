"""Local Statistics (spec 001 §8.2).

The input sizes both profiles cover are cut into up to ``intervals`` (10)
parts of equal counts; in each the mean, median, minimum, maximum and
quartiles of the amounts are compared.  A part has changed when its mean
and median both moved by at least ``threshold`` percent (10) the same way.
When at least half of the parts changed the same way that is a Degradation
or Optimization; a fifth, a Maybe.  Without input sizes the whole sample is
one part.  Confidence: the share of parts that agree.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...params import Param
from ..data import ProfileData
from ..results import Finding, PerformanceChange
from .common import location_pairs, read_params, relative, threshold_param


class LocalStatistics:
    name = "local_statistics"
    summary = "Mean, median, extremes and quartiles compared per interval of input sizes."
    params = (
        threshold_param(10.0, "Move of the mean and the median of a part, in percent, that changes it."),
        Param("intervals", "int", 10, "Parts the common input sizes are cut into (at most).", minimum=1, maximum=1000),
    )

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        import numpy as np

        values = read_params(self, params)
        threshold, intervals = values["threshold"], values["intervals"]
        for base, new, presence in location_pairs(baseline, target, self.name):
            if presence is not None:
                yield presence
                continue
            assert base is not None and new is not None
            if base.x is not None and new.x is not None:
                low = max(float(base.x.min()), float(new.x.min()))
                high = min(float(base.x.max()), float(new.x.max()))
                pooled = np.concatenate((base.x, new.x))
                pooled = pooled[(pooled >= low) & (pooled <= high)]
                cuts = np.unique(np.quantile(pooled, np.linspace(0, 1, intervals + 1)[1:-1])) if len(pooled) else []
                part_b = np.searchsorted(cuts, base.x, side="right")
                part_t = np.searchsorted(cuts, new.x, side="right")
                in_b = (base.x >= low) & (base.x <= high)
                in_t = (new.x >= low) & (new.x <= high)
                parts = len(cuts) + 1
            else:
                part_b = np.zeros(len(base.y), dtype=int)
                part_t = np.zeros(len(new.y), dtype=int)
                in_b = np.ones(len(base.y), dtype=bool)
                in_t = np.ones(len(new.y), dtype=bool)
                parts = 1
            up = down = compared = 0
            before_sum = after_sum = 0.0
            for part in range(parts):
                yb = base.y[in_b & (part_b == part)]
                yt = new.y[in_t & (part_t == part)]
                if len(yb) < 2 or len(yt) < 2:
                    continue
                compared += 1
                stats_b = (yb.mean(), np.median(yb))
                stats_t = (yt.mean(), np.median(yt))
                moves = [relative(float(b), float(t)) for b, t in zip(stats_b, stats_t)]
                if all(m is not None and m >= threshold for m in moves):
                    up += 1
                    before_sum += float(stats_b[0])
                    after_sum += float(stats_t[0])
                elif all(m is not None and m <= -threshold for m in moves):
                    down += 1
                    before_sum += float(stats_b[0])
                    after_sum += float(stats_t[0])
            if not compared:
                yield Finding(PerformanceChange.UNKNOWN, "local", base.location, method=self.name,
                              reason="no interval of input sizes has two measurements of each profile")
                continue
            worse = up >= down
            agree = max(up, down) / compared
            if agree >= 0.5:
                result = PerformanceChange.DEGRADATION if worse else PerformanceChange.OPTIMIZATION
            elif agree >= 0.2:
                result = PerformanceChange.MAYBE_DEGRADATION if worse else PerformanceChange.MAYBE_OPTIMIZATION
            else:
                result = PerformanceChange.NO_CHANGE
                before_sum, after_sum = float(base.y.mean()), float(new.y.mean())
            yield Finding(result, "local", base.location, before_sum, after_sum, after_sum - before_sum,
                          relative(before_sum, after_sum), "agreeing intervals", agree, self.name,
                          f"{max(up, down)} of {compared} intervals moved")


METHOD = LocalStatistics()
