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
:data:`MIN_SAMPLES` samples).  Their scatter also says how sure that rate
is and how much more than counting alone the functions vary from run to
run (quasi-Poisson dispersion): a normal test of the log ratio that
includes both must agree with the binomial one.  A longer recording, a higher sampling rate, or
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
from .stats import median, normal_sf

if TYPE_CHECKING:  # pragma: no cover
    from .compare import Comparison, Settings
    from .data import ProfileData, Sample

__all__ = ["CountedPair", "counted_pair", "is_counted"]

#: Functions well sampled in both profiles needed to take their median ratio as the common rate.
MIN_TYPICAL = 3
#: Well-sampled functions needed to estimate how much more than counting they scatter (with fewer,
#: the robust spread of their ratios is mostly chance and would only blunt the tests).
MIN_DISPERSION = 6
#: Samples (both profiles together) a function needs to count as well sampled.
MIN_SAMPLES = 20
#: A change of at least ``maybe`` that is not significant is a Maybe below this p-value: counts carry
#: their own statistics, so a large ratio of a few samples that chance explains is no change.
MAYBE_P = 0.05
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
    """Two counted profiles and the rate that makes their counts comparable.

    ``dispersion`` is how much more the well-sampled functions' ratios
    scatter than counting alone explains (at least 1), ``rate_variance`` the
    variance of the log rate estimated from them; both 1 and 0 when the rate
    comes from the sampling periods.
    """

    def __init__(self, baseline: ProfileData, target: ProfileData) -> None:
        self.dispersion, self.rate_variance = 1.0, 0.0
        self.rate, self.rate_from = self._rate(baseline, target)

    def _rate(self, baseline: ProfileData, target: ProfileData) -> tuple[float, str]:
        """``(s, how)``: target samples per baseline sample of an unchanged function."""
        import numpy as np

        base, new = baseline.samples(), target.samples()
        own = [(float(b.exclusive.sum()), float(new[loc].exclusive.sum())) for loc, b in base.items()
               if loc in new and b.exclusive is not None and new[loc].exclusive is not None]
        if not own:
            own = [(float(b.y.sum()), float(new[loc].y.sum())) for loc, b in base.items() if loc in new]
        pairs = np.array([(b, t) for b, t in own if b > 0 and t > 0 and b + t >= MIN_SAMPLES]).reshape(-1, 2)
        if len(pairs) >= MIN_TYPICAL:
            ratios = np.log(pairs[:, 1] / pairs[:, 0])
            centre = median(ratios)
            counting = 1 / pairs[:, 0] + 1 / pairs[:, 1]  # the variance of each log ratio from counting alone
            # quasi-Poisson: the robust scatter of the standardized log ratios beyond 1 inflates every test
            spread = 1.4826 * median(np.abs(ratios - centre) / np.sqrt(counting))
            if len(pairs) >= MIN_DISPERSION:
                self.dispersion = max(1.0, spread**2)
            # the median of k log ratios varies about pi/2 times as much as their mean
            self.rate_variance = math.pi / 2 * self.dispersion * float(counting.mean()) / len(pairs)
            return math.exp(centre), "the typical function"
        before, after = _mean_period(baseline), _mean_period(target)
        if before and after:
            return before / after, "the sampling periods"
        return 1.0, "equal sampling rates"

    def _normal_p(self, c_b: float, c_t: float, shift: float) -> tuple[float, float]:
        """``(z, two-sided p)`` of the log ratio minus ``shift`` with counting, dispersion and rate variance."""
        b, t = max(c_b, 0.5), max(c_t, 0.5)
        sd = math.sqrt(self.dispersion * (1 / b + 1 / t) + self.rate_variance)
        z = (math.log(t / b) - math.log(self.rate) - shift) / sd
        return z, min(1.0, 2 * normal_sf(abs(z)))

    def compare(self, base: Sample, new: Sample, settings: Settings) -> Comparison:
        """The verdict on one location's counts."""
        from .compare import Comparison, Region, direction  # at call time: compare is the heavier module

        c_b, c_t = float(base.y.sum()), float(new.y.sum())
        s = self.rate
        # half a sample keeps the log ratio finite for a location one profile saw but never sampled
        effect = math.log((c_t or 0.5) / (c_b or 0.5)) - math.log(s)
        half = math.copysign(settings.floor / 2, effect)
        z, p_normal = self._normal_p(c_b, c_t, 0.0)
        z_margin, p_normal_margin = self._normal_p(c_b, c_t, half)
        beyond = p_normal_margin / 2 if (z_margin > 0) == (effect > 0) and z_margin != 0 else 1.0
        # exact for few samples, the normal one for the scatter beyond counting: the larger p of the two
        p = max(_binomial_p(c_b, c_t, s), p_normal)
        p_margin = max(_binomial_tail(c_b, c_t, s * math.exp(half), upper=effect > 0), beyond)
        region = Region("all", int(round(c_b)), int(round(c_t)), effect, z, p, c_b, p_floor=max(p, p_margin))
        why = f"sample counts (binomial test; rate from {self.rate_from})"
        if region.p_floor < settings.alpha and abs(effect) >= settings.floor:
            return Comparison(direction(effect), effect, p, "ratio", c_b, region, [region], why)
        if abs(effect) >= settings.maybe and p < MAYBE_P:
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
