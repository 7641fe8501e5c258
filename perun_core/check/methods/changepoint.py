"""Change-point detection over the history of one configuration, for steps and creeping changes.

``check head`` and ``check all`` hand this method the older profiles of the
same configuration (up to ``window``, 20, versions back, along the chain of
baselines).  For every location it computes the level of each version (see
:mod:`perun_core.check.history`) and reports, for the target version:

* a **change point** at the target when the target differs from its
  baseline (the size-aware rank comparison of the default strategy: one
  version is too short a segment for a statistic over levels);
* a **creeping** Degradation or Optimization when, once sharp steps are
  taken out, the levels keep drifting (Mann-Kendall p < ``alpha``) by at
  least ``creep_floor`` percent (10) over the window -- the slow kind of
  degradation no single commit shows;
* a **recent shift** when E-divisive means (a permutation test over the
  levels) puts a change point within the last ``recent`` (3) versions and the
  levels after it differ from those before by at least ``floor`` percent
  (5): a change spread over a few commits, each below the floor;
* NoChange otherwise.

Given fewer than five versions (``check profiles``) there is no history to
speak of: the method then compares the pair like the default strategy does.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from ...params import Param
from ..data import ProfileData
from ..default import DEFAULT
from ..history import change_points, creeping, levels
from ..results import Finding, PerformanceChange
from .common import FLOOR, MAYBE, location_pairs, read_params, typical

#: Versions of history below which the method compares just the pair.
MIN_VERSIONS = 5


def creep_finding(location: str, samples: list, window_versions: int, method: str, *, creep_floor: float, alpha: float) -> Finding | None:
    """A creeping finding for ``location`` given its samples oldest to newest, or None."""
    series = levels(samples)
    if series is None:
        return None
    trend = creeping(series, alpha=alpha)
    if trend is None or trend.p >= alpha or abs(trend.drift) < creep_floor:
        return None
    oldest = next(s for s in samples if s is not None)
    before = typical(oldest)
    after = before * math.exp(trend.drift)
    result = PerformanceChange.DEGRADATION if trend.drift > 0 else PerformanceChange.OPTIMIZATION
    return Finding(result, "creeping", location, before, after, after - before, (math.exp(trend.drift) - 1) * 100,
                   "1-p", 1.0 - trend.p, method,
                   f"drifted over the last {trend.versions} versions ({trend.steps} steps taken out)")


class ChangePointDetection:
    name = "change_point_detection"
    summary = "Steps and creeping drifts over the history of a configuration (E-divisive means, Mann-Kendall)."
    uses_history = True
    params = (
        Param("alpha", "float", 0.01, "Significance level of the steps and drifts.", minimum=1e-6, maximum=0.5),
        FLOOR,
        MAYBE,
        Param("creep_floor", "float", 10.0, "Smallest drift over the window reported, in percent.", minimum=0.0),
        Param("window", "int", 20, "Versions of history (the target included) searched.", minimum=MIN_VERSIONS,
              maximum=500),
        Param("recent", "int", 3, "How many of the newest versions a step may lie in to be reported.", minimum=1,
              maximum=50),
    )

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        values = read_params(self, params)
        alpha = values["alpha"]
        floor = math.log1p(values["floor"] / 100)
        creep_floor = math.log1p(values["creep_floor"] / 100)
        window = values["window"]
        history: list[ProfileData] = list(params.get("history") or [baseline])[-(window - 1):]
        versions = [*history, target]

        if len(versions) < MIN_VERSIONS:
            yield from (replace(f, method=self.name) for f in DEFAULT.pairwise(baseline, target, values))
            return
        recent = values["recent"]
        pairwise = {f.location: f for f in DEFAULT.pairwise(baseline, target, values)}
        for base, new, presence in location_pairs(baseline, target, self.name):
            if presence is not None:
                yield presence
                continue
            assert base is not None and new is not None
            step = pairwise[new.location]
            if step.result.is_change or step.result is PerformanceChange.UNKNOWN:
                yield replace(step, method=self.name, type="change point" if step.result.is_change else step.type,
                              reason=step.reason or "a step at this version")
                continue
            samples = [data.samples().get(new.location) for data in versions]
            creep = creep_finding(new.location, samples, len(versions), self.name,
                                  creep_floor=creep_floor, alpha=alpha)
            if creep is not None:
                yield creep
                continue
            shift = self._recent_shift(samples, alpha, floor, recent)
            if shift is None:
                yield replace(step, method=self.name, type="change point")
                continue
            before = typical(base)
            after = before * math.exp(shift.shift)
            result = PerformanceChange.DEGRADATION if shift.shift > 0 else PerformanceChange.OPTIMIZATION
            back = len(versions) - shift.index
            yield Finding(result, "change point", new.location, before, after, after - before,
                          (math.exp(shift.shift) - 1) * 100, "1-p", 1.0 - shift.p, self.name,
                          f"shifted over the last {back} versions")

    @staticmethod
    def _recent_shift(samples: list, alpha: float, floor: float, recent: int):
        import numpy as np

        series = levels(samples)
        if series is None:
            return None
        known = series[np.isfinite(series)]
        found = [c for c in change_points(known, alpha=alpha) if c.index >= len(known) - recent]
        if not found or abs(found[-1].shift) < floor:
            return None
        return found[-1]


METHOD = ChangePointDetection()
