"""Sampled call-stack profiles (perf, folded, speedscope) and event counts (callgrind), compared as counts.

Such a profile is one measurement per function, but not a measurement
without statistics: a function's samples are a count, and a count of
independent samples scatters like a Poisson variable.  So two profiles are
compared per location (a function's inclusive samples, its own samples)
with the conditional binomial test of two Poisson counts: given the
``c_b + c_t`` samples of a function in both profiles, the target's share of
them is ``s / (1 + s)`` when nothing changed, ``s`` being how many samples
the target takes for one of the baseline's.

``s`` is the ratio of the typical function: the median ratio of the
functions' own (exclusive) samples over the functions well sampled in both
profiles (at least :data:`MIN_TYPICAL` of them, each with
:data:`MIN_SAMPLES` samples).  A longer recording, a higher sampling rate, or
a change of one function then leaves the other functions alone, and a
function whose share of the samples did not change is not flagged.  With
fewer well-sampled functions the sampling periods decide (the ``period``
that perf records with each stack; equal periods when there are none).

A location's counts are its resources' added up (one function on several
distinct stacks is one location with the sum, never an average of stacks).
As elsewhere, a change must be at least ``floor`` and significantly beyond
half of it; one of at least ``maybe`` that the counts cannot make
significant is a Maybe.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..profile.query import resource_table
from .results import PerformanceChange

if TYPE_CHECKING:  # pragma: no cover
    from .compare import Comparison, Settings
    from .data import ProfileData, Sample

__all__ = ["CountedPair", "counted_pair", "is_counted"]

#: Functions well sampled in both profiles needed to take their median ratio as the common rate.
MIN_TYPICAL = 3
#: Samples (both profiles together) a function needs to count as well sampled.
MIN_SAMPLES = 20
#: Units whose amounts are counts: samples of a sampling profiler.
COUNT_UNITS = frozenset({"samples"})
#: Unit keys of profiles counting events exactly (callgrind's instructions).
EVENT_KEYS = frozenset({"instructions"})


def is_counted(data: ProfileData) -> bool:
    """Whether the amounts of a profile are counts of samples or events."""
    units = data.units
    return any(str(unit) in COUNT_UNITS for unit in units.values()) or bool(EVENT_KEYS & set(units))


def _mean_period(data: ProfileData) -> float | None:
    """The mean sampling period of the profile's stacks (``period`` / ``amount``), None when not recorded."""
    table = resource_table(data.profile, ["amount", "period"])
    samples = periods = 0.0
    for amount, period in zip(table["amount"], table["period"]):
        if type(period) in (int, float) and type(amount) in (int, float) and period > 0 and amount > 0:
            samples += amount
            periods += period
    return periods / samples if samples > 0 else None


class CountedPair:
    """Two counted profiles and the rate that makes their counts comparable."""

    def __init__(self, baseline: ProfileData, target: ProfileData) -> None:
        self.rate, self.rate_from = self._rate(baseline, target)

    @staticmethod
    def _rate(baseline: ProfileData, target: ProfileData) -> tuple[float, str]:
        """``(s, how)``: target samples per baseline sample of an unchanged function."""
        import numpy as np

        base, new = baseline.samples(), target.samples()
        own = [(float(b.exclusive.sum()), float(new[loc].exclusive.sum())) for loc, b in base.items()
               if loc in new and b.exclusive is not None and new[loc].exclusive is not None]
        if not own:
            own = [(float(b.y.sum()), float(new[loc].y.sum())) for loc, b in base.items() if loc in new]
        ratios = [math.log(t / b) for b, t in own if b > 0 and t > 0 and b + t >= MIN_SAMPLES]
        if len(ratios) >= MIN_TYPICAL:
            return float(math.exp(float(np.median(ratios)))), "the typical function"
        before, after = _mean_period(baseline), _mean_period(target)
        if before and after:
            return before / after, "the sampling periods"
        return 1.0, "equal sampling rates"

    def compare(self, base: Sample, new: Sample, settings: Settings) -> Comparison:
        """The verdict on one location's counts."""
        from .compare import Comparison, Region, direction  # at call time: compare is the heavier module

        c_b, c_t = float(base.y.sum()), float(new.y.sum())
        s = self.rate
        # half a sample keeps the log ratio finite for a location one profile saw but never sampled
        effect = math.log((c_t or 0.5) / (c_b or 0.5)) - math.log(s)
        p = _binomial_p(c_b, c_t, s)
        half = math.copysign(settings.floor / 2, effect)
        p_margin = _binomial_tail(c_b, c_t, s * math.exp(half), upper=effect > 0)
        n = c_b + c_t
        share = s / (1 + s)
        sd = math.sqrt(n * share * (1 - share)) if n > 0 else 0.0
        z = (c_t - n * share) / sd if sd > 0 else 0.0
        region = Region("all", int(round(c_b)), int(round(c_t)), effect, z, p, c_b, p_floor=max(p, p_margin))
        why = f"sample counts (binomial test; rate from {self.rate_from})"
        if region.p_floor < settings.alpha and abs(effect) >= settings.floor:
            return Comparison(direction(effect), effect, p, "ratio", c_b, region, [region], why)
        if abs(effect) >= settings.maybe and p < 0.2:
            return Comparison(direction(effect, maybe=True), effect, p, "ratio", c_b, region, [region], why)
        return Comparison(PerformanceChange.NO_CHANGE, effect, p, "ratio", c_b, region, [region], why)


def _binomial_tail(c_b: float, c_t: float, s: float, *, upper: bool) -> float:
    """P(X >= c_t) (``upper``) or P(X <= c_t) for X ~ Binomial(c_b + c_t, s / (1 + s))."""
    from scipy.special import bdtr, bdtrc

    n, k = round(c_b + c_t), round(c_t)
    share = s / (1 + s)
    if upper:
        return 1.0 if k <= 0 else float(bdtrc(k - 1, n, share))
    return float(bdtr(k, n, share))


def _binomial_p(c_b: float, c_t: float, s: float) -> float:
    """Two-sided p-value of the target's share of the counts being ``s / (1 + s)``."""
    low = _binomial_tail(c_b, c_t, s, upper=False)
    high = _binomial_tail(c_b, c_t, s, upper=True)
    return min(1.0, 2.0 * min(low, high))


def counted_pair(baseline: ProfileData, target: ProfileData) -> CountedPair | None:
    """The pair compared as counts, when both profiles count samples or events; else None."""
    if not (is_counted(baseline) and is_counted(target)):
        return None
    return CountedPair(baseline, target)
