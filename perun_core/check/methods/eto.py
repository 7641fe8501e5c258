"""Exclusive Time Outliers (paper II.b and IV.a, Tables I and II).

Per location the total exclusive time (``exclusive`` when the collector
records it, else ``amount``) is summed in each profile; its change is taken
relative to the total of the whole baseline program, as in the paper's
tables (``delta_rel`` in percent of the program).  Which changes stand out
among all locations is decided by three outlier rules on those changes:
the modified z-score (above 3), the interquartile range (beyond 1.5 IQR)
and the standard deviation (beyond 2).  All three: SevereDegradation (or
-Optimization); two: Degradation; one: MaybeDegradation; none: NoChange.
Changes smaller than ``cutoff`` percent of the program (0.1) are never
reported.  New and vanished locations are NotInBaseline / NotInTarget with
their whole time as the change, and one more finding for the whole program
(location ``<cmd> (total)``) says TotalDegradation or TotalOptimization when
it moved by at least ``cutoff`` percent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...params import Param
from ..data import ProfileData
from ..results import Finding, PerformanceChange
from .common import location_pairs, read_params

_SEVERITY = {
    3: (PerformanceChange.SEVERE_DEGRADATION, PerformanceChange.SEVERE_OPTIMIZATION),
    2: (PerformanceChange.DEGRADATION, PerformanceChange.OPTIMIZATION),
    1: (PerformanceChange.MAYBE_DEGRADATION, PerformanceChange.MAYBE_OPTIMIZATION),
}


def _total(sample: Any) -> float:
    values = sample.exclusive if sample.exclusive is not None else sample.y
    return float(values[values == values].sum())


def outlier_rules(deltas: list[float]) -> list[int]:
    """How many of the three rules call each delta an outlier."""
    import numpy as np

    d = np.asarray(deltas, dtype=np.float64)
    if len(d) < 3:
        return [0] * len(d)
    median = float(np.median(d))
    mad = float(np.median(np.abs(d - median)))
    if mad > 0:
        zscore = np.abs(0.6745 * (d - median) / mad) > 3.0
    else:
        zscore = d != median
    q1, q3 = np.quantile(d, [0.25, 0.75])
    iqr = q3 - q1
    fences = (d < q1 - 1.5 * iqr) | (d > q3 + 1.5 * iqr) if iqr > 0 else d != median
    std = float(d.std())
    deviation = np.abs(d - d.mean()) > 2.0 * std if std > 0 else np.zeros(len(d), dtype=bool)
    return [int(a) + int(b) + int(c) for a, b, c in zip(zscore, fences, deviation)]


class ExclusiveTimeOutliers:
    name = "exclusive_time_outliers"
    summary = "Which functions' exclusive time changed like outliers among all functions (z-score, IQR, std)."
    params = (Param("cutoff", "float", 0.1, "Smallest change reported, in percent of the whole program.",
                    minimum=0.0),)

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        cutoff = read_params(self, params)["cutoff"]
        base_samples, target_samples = baseline.samples(), target.samples()
        program_b = sum(_total(s) for s in base_samples.values())
        program_t = sum(_total(s) for s in target_samples.values())
        scale = program_b if program_b > 0 else 1.0
        common: list[tuple[str, float, float]] = []
        extra: list[Finding] = []
        for base, new, presence in location_pairs(baseline, target, self.name):
            if presence is not None:
                sample = base if base is not None else new
                assert sample is not None
                total = _total(sample)
                delta = total if base is None else -total
                result = presence.result
                extra.append(Finding(result, "exclusive time", sample.location, None if base is None else total,
                                     total if base is None else None, delta, delta / scale * 100, "no", 0.0,
                                     self.name, presence.reason))
                continue
            assert base is not None and new is not None
            common.append((base.location, _total(base), _total(new)))
        votes = outlier_rules([after - before for _, before, after in common])
        for (location, before, after), vote in zip(common, votes):
            delta = after - before
            share = delta / scale * 100
            if vote == 0 or abs(share) < cutoff:
                result = PerformanceChange.NO_CHANGE
            else:
                result = _SEVERITY[vote][0 if delta > 0 else 1]
            yield Finding(result, "exclusive time", location, before, after, delta, share, "outlier rules",
                          vote / 3, self.name)
        yield from extra
        total_delta = program_t - program_b
        share = total_delta / scale * 100
        if abs(share) < cutoff or total_delta == 0:
            result = PerformanceChange.NO_CHANGE
        else:
            result = PerformanceChange.TOTAL_DEGRADATION if total_delta > 0 else PerformanceChange.TOTAL_OPTIMIZATION
        name = target.profile.cmd or baseline.profile.cmd or "program"
        yield Finding(result, "total exclusive time", f"{name} (total)", program_b, program_t, total_delta, share,
                      "no", 0.0, self.name)


METHOD = ExclusiveTimeOutliers()
