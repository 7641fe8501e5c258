"""Comparing the measurements of one location in two profiles, with or without input sizes.

This is the engine of the statistical methods (``rank_sum_test`` and the
default strategy).  It answers: is the target slower or faster than the
baseline, by what factor, and how sure is that?

Measurements are compared on the log scale, where a multiplicative noise
becomes additive and a constant-factor change becomes a shift.  Samples
above :data:`MAX_POINTS` a side are thinned evenly first.

Without input sizes (or when every measurement has the same size) the two
samples are compared directly: the shift is the Hodges-Lehmann estimate and
its significance comes from the Mann-Whitney U test, both robust to
outliers and heavy tails.  Samples of fewer than eight values cannot reach a
small p-value with ranks alone, so there a change also counts as
significant when every target value lies beyond every baseline value and
Welch's t test on the logs agrees.

With input sizes (``structure-unit-size``) a plain comparison would mistake
a change in the mix of input sizes for a change in speed, so only the range
of sizes both profiles cover is compared, at equal sizes:

* discrete sizes that both profiles measured (at least twice each) are
  compared size by size: each measurement minus the median of its size;
* otherwise a robust (Huber) curve of log amount over log size -- a cubic
  with spline knots, fitted to both profiles together with one shift of the
  target per bin, and never more flexible than the distinct sizes allow --
  is taken out.

(The bins and residuals are made in :mod:`perun_core.check.sizes`.)  A
sweep measured once or twice per size at five or more shared sizes is
compared size by size instead, by paired log ratios
(:mod:`perun_core.check.paired`); sizes the profiles do not share, too few
for bins of larger sizes, also through one curve fitted to both
(:mod:`perun_core.check.fitted`).
The residuals are cut into up to six bins of sizes (one per size when there
are few) and compared with the rank test per bin; the weighted combination
(Stouffer) over all bins catches small uniform changes, over the upper half
changes that grow with the size.  The p-values are Bonferroni-corrected for
the number of tests.

A change is reported only when it is significant *and* at least ``floor``
large (a relative change of about 5 % by default); a single bin among
several must even be significantly beyond the floor, as its sample is small.
So a tiny but real difference stays NoChange.  When regions disagree in
direction, the largest inputs decide -- that is where the asymptotic
behaviour shows -- and when larger inputs point the other way without being
significant, the verdict is only a Maybe.  A large effect that small samples
cannot make significant is a Maybe too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .fitted import fitted_comparison
from .paired import paired_comparison
from .results import PerformanceChange
from .sizes import (
    MAX_BINS,
    MIN_PER_SIDE,
    group_strata,
    shared_curve_residuals,
    shared_strata,
    size_bins,
    size_shift,
    stratum_medians,
)
from .stats import distinct, hodges_lehmann, mann_whitney, median, normal_sf, spread_indexes, stouffer, welch_t

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["EDGE", "Comparison", "Region", "Settings", "compare", "direction"]

#: Larger samples are thinned to this many measurements a side (evenly over their order):
#: beyond it the tests gain little but cost time.
MAX_POINTS = 400
#: Samples of this size or more are judged by the rank test alone.
RANK_ONLY_SIZE = 8
#: Each bin wants about this many measurements of the smaller profile.
POINTS_PER_BIN = 20
#: Below this many measurements a side (three bins' worth) sizes that the profiles do not share are
#: also compared through one curve fitted to both (:mod:`perun_core.check.fitted`).
FITTED_MAX_POINTS = 3 * POINTS_PER_BIN
#: Each profile needs this many measurements at sizes the other one measured too.
MIN_OVERLAP = 5
#: A bin of larger inputs at this p-value that changed the other way makes a verdict a Maybe.
CONFLICT_P = 0.05
#: Profiles with at most this many measurements a side (at input sizes) may also be compared curve to curve.
SPARSE_MAX_POINTS = 24
#: A curve-to-curve change must stand this many standard errors out ...
SPARSE_Z = 4.0
#: A certain change found in a few measurements is kept only when the lines differ this much the same way.
SPARSE_CONFIRM_Z = 2.0
#: ... and this share of the target's measurements in the upper half of the shared sizes must agree.
SPARSE_AGREE = 0.75


#: Thresholds sit this much (relatively) below their nominal value: a change of exactly the floor is
#: then at least the floor however the amounts are scaled (the last bit of a log ratio follows the scale).
EDGE = 1e-9


@dataclass(frozen=True, slots=True)
class Settings:
    """Thresholds of :func:`compare`.

    ``alpha`` is the family-wise significance level per location; ``floor``
    the smallest |log ratio| reported as a change (log 1.05); ``maybe`` the
    |log ratio| from which an insignificant change is still a Maybe (log 1.5).
    """

    alpha: float = 0.01
    floor: float = math.log(1.05) * (1 - EDGE)
    maybe: float = math.log(1.5) * (1 - EDGE)
    use_sizes: bool = True
    max_points: int = MAX_POINTS


@dataclass(slots=True)
class Region:
    """One compared range of input sizes (or everything): counts, shift, test."""

    name: str
    n_base: int
    n_target: int
    effect: float
    z: float
    p: float
    base_level: float
    x_low: float | None = None
    x_high: float | None = None
    #: for one bin among several: the p-value of "the shift is no larger than the floor"
    p_floor: float | None = None
    #: the rank test's z against a shift of half the floor in the direction of the effect
    z_margin: float | None = None


@dataclass(slots=True)
class Comparison:
    """The verdict of :func:`compare` and what it rests on.

    ``effect`` is the log ratio target/baseline of the deciding region,
    ``p`` its corrected p-value, ``kind`` ``"ratio"`` (a uniform factor) or
    ``"scaling"`` (the factor depends on the input size).
    """

    verdict: PerformanceChange
    effect: float = 0.0
    p: float = 1.0
    kind: str = "ratio"
    base_level: float = math.nan
    region: Region | None = None
    regions: list[Region] = field(default_factory=list)
    reason: str = ""
    #: what was added to every amount before taking logs (half the smallest positive amount when some are 0)
    shift: float = 0.0

    @property
    def ratio(self) -> float:
        return math.exp(self.effect)

    @property
    def target_level(self) -> float:
        """The baseline's level moved by the effect on the scale it was measured on (amounts plus ``shift``).

        Without the shift, a baseline whose median is 0 (CPU times below a
        clock tick) would give a target of 0 whatever the effect.
        """
        level = (self.base_level + self.shift) * math.exp(self.effect) - self.shift
        if self.shift > 0 and level < 1e-9 * (self.base_level + self.shift):
            # amounts with zeros are never negative: what is left below that is the rounding of a zero
            return 0.0
        return level


def _thinned(x: numpy.ndarray | None, y: numpy.ndarray, cap: int) -> tuple[numpy.ndarray | None, numpy.ndarray]:
    """At most ``cap`` measurements, evenly spread over the profile's order (deterministic)."""
    if len(y) <= cap:
        return x, y
    keep = spread_indexes(len(y), cap)
    return (x[keep] if x is not None else None), y[keep]


def _log_amounts(yb: numpy.ndarray, yt: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray, float] | None:
    """Both samples on the log scale and the shift added to the amounts first; None when no amount is positive."""
    import numpy as np

    if float(yb.min()) > 0 and float(yt.min()) > 0:
        return np.log(yb), np.log(yt), 0.0
    pooled = np.concatenate((yb, yt))
    positive = pooled[pooled > 0]
    if not len(positive):
        return None
    # zeros (and negative amounts, which should not happen) sit just below the smallest positive amount
    eps = 0.5 * float(positive.min())
    return np.log(np.maximum(yb, 0.0) + eps), np.log(np.maximum(yt, 0.0) + eps), eps


def direction(effect: float, maybe: bool = False) -> PerformanceChange:
    if effect > 0:
        return PerformanceChange.MAYBE_DEGRADATION if maybe else PerformanceChange.DEGRADATION
    return PerformanceChange.MAYBE_OPTIMIZATION if maybe else PerformanceChange.OPTIMIZATION


def compare(
    xb: numpy.ndarray | None,
    yb: numpy.ndarray,
    xt: numpy.ndarray | None,
    yt: numpy.ndarray,
    settings: Settings = Settings(),
) -> Comparison:
    """Compare baseline measurements ``(xb, yb)`` with target ones ``(xt, yt)``.

    ``x`` arrays (input sizes) may be None; amounts should be finite.  See
    the module docstring for the method.
    """
    if len(yb) == 0 or len(yt) == 0:
        return Comparison(PerformanceChange.UNKNOWN, reason="no measurements to compare")
    if settings.max_points:
        xb, yb = _thinned(xb, yb, settings.max_points)
        xt, yt = _thinned(xt, yt, settings.max_points)
    logs = _log_amounts(yb, yt)
    if logs is None:
        return Comparison(PerformanceChange.NO_CHANGE, base_level=0.0, reason="every amount is zero")
    ub, ut, shift = logs
    result = _compare_logs(xb, ub, yb, xt, ut, settings)
    result.shift = shift
    return result


def _compare_logs(xb: numpy.ndarray | None, ub: numpy.ndarray, yb: numpy.ndarray, xt: numpy.ndarray | None,
                  ut: numpy.ndarray, settings: Settings) -> Comparison:
    """:func:`compare` on the log amounts ``ub`` and ``ut`` (``yb``: the baseline's amounts; ``ut`` is as long as the target's)."""
    import numpy as np

    sized = settings.use_sizes and xb is not None and xt is not None and len(xb) == len(yb) and len(xt) == len(ut)
    if sized:
        assert xb is not None and xt is not None
        both = np.concatenate((xb, xt))
        if not np.isfinite(both).all() or float(both.min()) == float(both.max()):
            sized = False
    if not sized:
        return _plain(ub, ut, yb, settings)
    paired = paired_comparison(xb, ub, yb, xt, ut, settings)  # type: ignore[arg-type]
    if paired is not None:
        return paired
    if min(len(yb), len(ut)) < FITTED_MAX_POINTS:
        # too few measurements for bins of larger sizes: one curve of both finds what bins cannot; a second
        # way to find a change in the same data, so it gets half the significance level
        fitted = fitted_comparison(xb, ub, yb, xt, ut, replace(settings, alpha=settings.alpha / 2))  # type: ignore[arg-type]
        if fitted is not None and fitted.verdict.is_change and not fitted.verdict.is_maybe:
            return fitted
    found = _by_size(xb, ub, yb, xt, ut, settings)  # type: ignore[arg-type]
    certain = found.verdict.is_change and not found.verdict.is_maybe
    if min(len(yb), len(ut)) > SPARSE_MAX_POINTS:
        return found
    sparse = _sparse_curves(xb, ub, yb, xt, ut, settings)  # type: ignore[arg-type]
    if sparse is None:
        return found
    if not certain:
        if sparse.verdict.is_change or found.verdict is PerformanceChange.UNKNOWN:
            return sparse
        return found
    region = sparse.region
    assert region is not None
    # a few measurements in a few bins: the lines of the two profiles must at least lean the same way
    if abs(region.z) < SPARSE_CONFIRM_Z:
        found.verdict = PerformanceChange.NO_CHANGE
        found.reason = "few measurements; the profiles' lines do not bear the change out"
    elif (region.effect > 0) != (found.effect > 0):
        found.verdict = direction(found.effect, maybe=True)
        found.reason = "few measurements; the profiles' lines lean the other way"
    return found


def _plain(ub: numpy.ndarray, ut: numpy.ndarray, yb: numpy.ndarray, settings: Settings) -> Comparison:
    import numpy as np

    base_level = median(yb)
    nb, nt = len(ub), len(ut)
    if min(nb, nt) < 2:
        effect = median(ut) - median(ub)
        region = Region("all", nb, nt, effect, 0.0, 1.0, base_level)
        if abs(effect) >= settings.maybe:
            return Comparison(direction(effect, maybe=True), effect, 1.0, "ratio", base_level, region, [region],
                              "a single measurement cannot show significance")
        if abs(effect) < settings.floor:
            return Comparison(PerformanceChange.NO_CHANGE, effect, 1.0, "ratio", base_level, region, [region])
        return Comparison(PerformanceChange.UNKNOWN, effect, 1.0, "ratio", base_level, region, [region],
                          "too few measurements to tell")
    if _within_resolution(ub, ut):
        region = Region("all", nb, nt, 0.0, 0.0, 1.0, base_level)
        return Comparison(PerformanceChange.NO_CHANGE, 0.0, 1.0, "ratio", base_level, region, [region],
                          "within the resolution of the measurements")
    test = mann_whitney(ub, ut)
    effect = hodges_lehmann(ub, ut)
    p = test.p
    if min(nb, nt) < RANK_ONLY_SIZE and test.separated:
        # ranks alone cannot go below ~0.1 here; let the t test speak when nothing overlaps
        _t, p_t = welch_t(ub, ut)
        p = min(p, p_t)
    region = Region("all", nb, nt, effect, test.z, p, base_level)
    if abs(effect) >= settings.floor and min(nb, nt) >= RANK_ONLY_SIZE:
        # the shift must be significant beyond half the floor too: measurements that merely differ
        # by chance (heavy tails, a few preempted runs) then rarely pass, real changes of the
        # floor's size and more hardly notice
        region.p_floor = max(p, _beyond(ub, ut, effect, settings.floor / 2))
    return _decide([region], [region], 1, base_level, settings, small=min(nb, nt) < RANK_ONLY_SIZE)


def _beyond(ub: numpy.ndarray, ut: numpy.ndarray, effect: float, margin: float) -> float:
    """One-sided p-value of "the target is shifted by more than ``margin`` in the direction of ``effect``"."""
    beyond = mann_whitney(ub, ut - math.copysign(margin, effect))
    return beyond.p / 2 if (beyond.z > 0) == (effect > 0) and beyond.z != 0 else 1.0


def _within_resolution(ub: numpy.ndarray, ut: numpy.ndarray) -> bool:
    """Whether the medians (log amounts) differ by at most one step of coarsely quantized measurements.

    Some amounts come in steps (CPU times counted in clock ticks): when the
    samples themselves vary by such a step, a difference of one step says
    nothing.  Samples without variation (exactly repeatable counts) are not
    affected.
    """
    import numpy as np

    pooled = distinct(np.concatenate((ub, ut)))
    if len(pooled) < 2 or len(pooled) > 6:
        return False
    step = float(np.diff(pooled).min())
    varies = float(np.ptp(ub)) >= step or float(np.ptp(ut)) >= step
    return varies and abs(median(ut) - median(ub)) <= step * (1 + 1e-9)


def _by_size(xb: numpy.ndarray, ub: numpy.ndarray, yb: numpy.ndarray, xt: numpy.ndarray, ut: numpy.ndarray,
             settings: Settings) -> Comparison:
    import numpy as np

    shift = size_shift(xb, xt)
    vb, vt = np.log(xb + shift), np.log(xt + shift)
    low = max(float(vb.min()), float(vt.min()))
    high = min(float(vb.max()), float(vt.max()))
    keep_b = (vb >= low) & (vb <= high)
    keep_t = (vt >= low) & (vt <= high)
    nb, nt = int(keep_b.sum()), int(keep_t.sum())
    if high < low or nb < MIN_OVERLAP or nt < MIN_OVERLAP:
        return Comparison(PerformanceChange.UNKNOWN, base_level=median(yb),
                          reason="the input sizes of the two profiles hardly overlap")
    vb, ub, yb_kept = vb[keep_b], ub[keep_b], yb[keep_b]
    vt, ut = vt[keep_t], ut[keep_t]
    v = np.concatenate((vb, vt))
    u = np.concatenate((ub, ut))
    side = np.concatenate((np.zeros(nb, dtype=bool), np.ones(nt, dtype=bool)))
    base_y = np.concatenate((yb_kept, np.full(nt, np.nan)))
    strata = shared_strata(v, side)
    if strata is not None:
        # discrete sizes measured by both: compare at exactly equal sizes
        keep, codes, count_strata = strata
        v, u, side, base_y, codes = v[keep], u[keep], side[keep], base_y[keep], codes[keep]
        residual = u - stratum_medians(u, codes, count_strata)[codes]
        labels = group_strata(codes, side, count_strata)
    else:
        sizes = distinct(v)
        if min(nb, nt) < 3 or len(sizes) < 2:
            return _plain(ub, ut, yb_kept, settings)
        wanted = max(1, min(MAX_BINS, min(nb, nt) // POINTS_PER_BIN, len(sizes) - 1))
        labels = size_bins(v, side, wanted)
        fitted = shared_curve_residuals(v, u, side, labels, int(labels.max()) + 1, sizes)
        if fitted is None:
            return Comparison(PerformanceChange.UNKNOWN, base_level=median(yb_kept),
                              reason="the input sizes of the two profiles do not allow a comparison at equal sizes")
        residual = fitted
    count = int(labels.max()) + 1
    bins: list[Region] = []
    for k in range(count):
        inside = labels == k
        region = _bin_region(f"bin {k + 1}", v[inside], residual[inside], side[inside],
                             base_y[inside & ~side], shift, settings.floor if count > 1 else None,
                             settings.floor / 2)
        if region is not None:
            bins.append(region)
    if not bins:
        return _plain(ub, ut, yb_kept, settings)
    base_level = median(yb_kept)
    tests = list(bins)
    if len(bins) > 1:
        tests.append(_combined("all sizes", bins, base_level))
        if len(bins) >= 3:
            upper = bins[len(bins) // 2:]
            tests.append(_combined("larger sizes", upper, median(np.array([b.base_level for b in upper]))))
    small = min(nb, nt) < RANK_ONLY_SIZE
    return _decide(tests, bins, len(tests), base_level, settings, small=small)


def _theil_sen(v: numpy.ndarray, u: numpy.ndarray) -> tuple[float, float, float] | None:
    """(intercept, slope, robust residual scale) of u over v; None with fewer than three distinct v."""
    import numpy as np

    if len(distinct(v)) < 3:
        return None
    first, second = np.triu_indices(len(v), 1)
    dv = v[second] - v[first]
    keep = dv != 0
    slope = median((u[second] - u[first])[keep] / dv[keep])
    intercept = median(u - slope * v)
    residual = u - intercept - slope * v
    scale = 1.4826 * median(np.abs(residual - median(residual)))
    return intercept, slope, scale


def _sparse_curves(xb: numpy.ndarray, ub: numpy.ndarray, yb: numpy.ndarray, xt: numpy.ndarray, ut: numpy.ndarray,
                   settings: Settings) -> Comparison | None:
    """Few measurements at input sizes (one or two per size): compare a robust line of each profile.

    Each profile gets its own Theil-Sen line of log amount over log size, so
    a change of complexity shows as a change of slope.  The lines are
    compared at the largest size both profiles reach (where asymptotic
    behaviour shows), with the standard error of each line's value there
    from its robust residual scale.  A change is certain when it stands
    :data:`SPARSE_Z` standard errors out, is at least the ``maybe`` size
    (1.5x) and most target measurements on the upper half of the shared
    sizes lie on that side of the baseline's line; otherwise the lines say
    NoChange.  None when the data do not allow the comparison.
    """
    import numpy as np

    shift = size_shift(xb, xt)
    vb, vt = np.log(xb + shift), np.log(xt + shift)
    fit_b, fit_t = _theil_sen(vb, ub), _theil_sen(vt, ut)
    if fit_b is None or fit_t is None:
        return None
    low, high = max(float(vb.min()), float(vt.min())), min(float(vb.max()), float(vt.max()))
    if high <= low:
        return None
    (ab, sb, scale_b), (at, st, scale_t) = fit_b, fit_t
    # a tiny scale from a few points that happen to line up must not make any difference significant
    scale = max(math.sqrt((scale_b**2 + scale_t**2) / 2), 0.02)

    def standard_error(v: numpy.ndarray, at_v: float) -> float:
        centred = v - float(v.mean())
        spread = float(centred @ centred)
        return scale * math.sqrt(1 / len(v) + ((at_v - float(v.mean())) ** 2 / spread if spread > 0 else 0.0))

    effect = (at + st * high) - (ab + sb * high)
    z = effect / math.hypot(standard_error(vb, high), standard_error(vt, high))
    inside = (vb >= low) & (vb <= high)
    base_level = float(math.exp(ab + sb * high))
    region = Region("largest shared size", int(inside.sum()), int(((vt >= low) & (vt <= high)).sum()), effect, z,
                    min(1.0, 2.0 * normal_sf(abs(z))), base_level, float(math.exp(low)) - shift,
                    float(math.exp(high)) - shift)
    why = "few measurements per size: robust lines of both profiles compared at the largest shared size"
    upper = (vt >= (low + high) / 2) & (vt <= high)
    agree = bool(upper.any()) and float(
        ((ut[upper] - (ab + sb * vt[upper])) * math.copysign(1.0, effect) > 0).mean()) >= SPARSE_AGREE
    if abs(z) < SPARSE_Z or abs(effect) < settings.maybe or not agree:
        return Comparison(PerformanceChange.NO_CHANGE, effect, region.p, "ratio", base_level, region, [region], why)
    kind = "scaling" if abs(st - sb) > 0.1 else "ratio"
    return Comparison(direction(effect), effect, region.p, kind, base_level, region, [region], why)


def _bin_region(name: str, v: numpy.ndarray, residual: numpy.ndarray, side: numpy.ndarray,
                base_y: numpy.ndarray, shift: float, floor: float | None, half: float = 0.0) -> Region | None:
    """The test of one bin.  With ``floor`` the bin also gets a test against a shift of ``floor``:
    a single bin is a small sample, and its estimate alone crossing the floor is not enough."""
    nb, nt = int((~side).sum()), int(side.sum())
    if nb < 2 or nt < 2:
        return None
    rb, rt = residual[~side], residual[side]
    test = mann_whitney(rb, rt)
    effect = hodges_lehmann(rb, rt)
    p = test.p
    if min(nb, nt) < RANK_ONLY_SIZE and test.separated:
        p = min(p, welch_t(rb, rt)[1])
    p_floor = None
    if floor is not None and abs(effect) < floor:
        p_floor = 1.0  # the estimate itself is within the floor: no need to test beyond it
    elif floor is not None:
        beyond = mann_whitney(rb, rt - math.copysign(floor, effect))
        # one-sided: the target is further off than the floor, in the direction of the effect
        p_floor = beyond.p / 2 if (beyond.z > 0) == (effect > 0) and beyond.z != 0 else 1.0
    margin = mann_whitney(rb, rt - math.copysign(half, effect)).z if half > 0 else None
    if p_floor is None and margin is not None and min(nb, nt) >= RANK_ONLY_SIZE:
        # the only bin: significant beyond half the floor too (see _plain)
        p_floor = max(p, normal_sf(margin) if effect > 0 else normal_sf(-margin))
    return Region(name, nb, nt, effect, test.z, p, median(base_y) if len(base_y) else math.nan,
                  float(math.exp(v.min())) - shift, float(math.exp(v.max())) - shift, p_floor, margin)


def _combined(name: str, bins: list[Region], base_level: float) -> Region:
    weights = [math.sqrt(b.n_base * b.n_target / (b.n_base + b.n_target)) for b in bins]
    z = stouffer([b.z for b in bins], weights)
    total = sum(w * w for w in weights)
    effect = sum(w * w * b.effect for w, b in zip(weights, bins)) / total
    region = Region(name, sum(b.n_base for b in bins), sum(b.n_target for b in bins), effect, z,
                    min(1.0, 2.0 * normal_sf(abs(z))), base_level, bins[0].x_low, bins[-1].x_high)
    if all(b.z_margin is not None for b in bins):
        # significant beyond half the floor too (see _plain): one-sided, in the direction of the effect
        beyond = stouffer([b.z_margin for b in bins], weights)  # type: ignore[misc]
        region.p_floor = max(region.p, normal_sf(beyond) if effect > 0 else normal_sf(-beyond))
    return region


def _decide(tests: list[Region], bins: list[Region], family: int, base_level: float, settings: Settings,
            *, small: bool) -> Comparison:
    def corrected(region: Region, *, decide: bool = False) -> float:
        p = region.p_floor if decide and region.p_floor is not None else region.p
        return min(1.0, p * family)

    significant = [r for r in tests if corrected(r, decide=True) < settings.alpha and abs(r.effect) >= settings.floor]
    overall = next((r for r in tests if r.name in ("all sizes", "all")), tests[0])
    if not significant:
        if abs(overall.effect) >= settings.maybe and (small or corrected(overall) < 0.2):
            return Comparison(direction(overall.effect, maybe=True), overall.effect, corrected(overall),
                              "ratio", overall.base_level, overall, bins)
        return Comparison(PerformanceChange.NO_CHANGE, overall.effect, corrected(overall), "ratio",
                          overall.base_level, overall, bins)
    significant_bins = [r for r in significant if r in bins]
    if significant_bins:
        deciding = significant_bins[-1]  # the largest inputs decide
    else:
        deciding = next((r for r in significant if r.name == "larger sizes"), significant[0])
        if any(r.name == "all sizes" for r in significant):
            upper = next((r for r in significant if r.name == "larger sizes"), None)
            overall_sig = next(r for r in significant if r.name == "all sizes")
            deciding = upper if upper is not None and (upper.effect > 0) != (overall_sig.effect > 0) else overall_sig
    if deciding in bins:
        # larger inputs that point the other way, if not firmly, make the verdict uncertain: the
        # direction at the largest sizes is what counts, and it was not established
        above = bins[bins.index(deciding) + 1:]
        against = [b for b in above if (b.effect > 0) != (deciding.effect > 0) and abs(b.effect) >= settings.floor
                   and b.p < CONFLICT_P]
        if against:
            top = against[-1]
            return Comparison(direction(top.effect, maybe=True), top.effect, corrected(top), "scaling",
                              top.base_level, top, bins,
                              "smaller inputs changed the other way; the largest ones decide")
    effects = [b.effect for b in bins if b.n_base >= MIN_PER_SIDE and b.n_target >= MIN_PER_SIDE]
    spread = (max(effects) - min(effects)) if len(effects) > 1 else 0.0
    kind = "scaling" if len(effects) > 1 and spread > max(settings.floor * 4, 0.2) else "ratio"
    if kind == "ratio" and overall in significant and (overall.effect > 0) == (deciding.effect > 0):
        deciding = overall  # a uniform change: the estimate over all sizes is the more precise one
    return Comparison(direction(deciding.effect), deciding.effect, corrected(deciding), kind,
                      deciding.base_level, deciding, bins)
