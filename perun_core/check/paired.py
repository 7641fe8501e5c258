"""Few measurements at many input sizes, compared size by size: a paired test of log ratios.

A collector sweeping input sizes, or a CI job running each workload once,
measures every size once or twice.  No single size then says anything, but
the sizes together do: at every size both profiles measured, the log ratio
target/baseline (of the medians of the size's measurements) is one paired
observation, and a constant factor shows as log ratios that agree across the
sizes.  Their mean is tested with Student's t on the sizes, so eight sizes
that all say "twice as slow" without any noise are a certain change, while
log ratios scattered around zero are not.

Changes confined to the largest inputs are tested too: the mean log ratio of
the upper half and of the upper third of the shared sizes, with the scatter
estimated from both parts of the sizes (log ratios about their part's mean),
so a few upper sizes are judged against the noise seen at all of them.  The
tests share the significance level (Bonferroni).  As in
:func:`perun_core.check.compare.compare`, a change must reach ``floor`` and
be significantly beyond half of it; the largest inputs decide the
direction; a change of at least ``maybe`` that the sizes cannot make
significant is a Maybe.

Only the *distinct* amounts at a size count when deciding whether a layout
is sparse, and the medians do not change when every measurement is
repeated, so duplicating every point leaves the verdict alone.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .results import PerformanceChange
from .stats import distinct, median, student_t_p

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from .compare import Comparison, Region, Settings

__all__ = ["MAX_DISTINCT_PER_SIZE", "MIN_PAIRS", "paired_comparison", "paired_sizes", "t_p", "verdict_of"]

#: A size with at most this many distinct amounts a side is sparsely measured.
MAX_DISTINCT_PER_SIZE = 2
#: Sizes both profiles measured, needed for the paired test (with fewer, a line through the log
#: ratios and the mean of an upper part have too few degrees of freedom to be of use).
MIN_PAIRS = 5
#: The shared sizes must hold at least this share of each profile's measurements.
SHARED_SHARE = 0.5


def paired_sizes(xb: numpy.ndarray, ub: numpy.ndarray, xt: numpy.ndarray, ut: numpy.ndarray,
                 ) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray] | None:
    """``(sizes, baseline medians, target medians)`` at the sizes both measured, when the layout is sparse.

    Sparse: at least :data:`MIN_PAIRS` shared sizes, each with at most
    :data:`MAX_DISTINCT_PER_SIZE` distinct amounts a side, holding most of
    each profile's measurements.  None otherwise (repeated runs per size go
    to the rank tests of :mod:`perun_core.check.compare`).
    """
    import numpy as np

    # sorted searches, not np.intersect1d / np.isin: those load numpy.ma (see stats.distinct)
    in_base = distinct(xb)
    sizes_t = distinct(xt)
    shared = in_base[sizes_t[np.searchsorted(sizes_t, in_base).clip(max=len(sizes_t) - 1)] == in_base]
    if len(shared) < MIN_PAIRS:
        return None
    in_b, in_t = _member(xb, shared), _member(xt, shared)
    if in_b.sum() < SHARED_SHARE * len(xb) or in_t.sum() < SHARED_SHARE * len(xt):
        return None
    medians = []
    for x, u, inside in ((xb, ub, in_b), (xt, ut, in_t)):
        x, u = x[inside], u[inside]
        order = np.lexsort((u, x))
        x, u = x[order], u[order]
        starts = np.flatnonzero(np.concatenate(([True], x[1:] != x[:-1])))
        parts = np.split(u, starts[1:])
        if max(len(distinct(part)) for part in parts) > MAX_DISTINCT_PER_SIZE:
            return None
        medians.append(np.array([median(part) for part in parts]))
    return shared, medians[0], medians[1]


def _member(values: numpy.ndarray, sorted_set: numpy.ndarray) -> numpy.ndarray:
    """Which of ``values`` are in ``sorted_set`` (sorted, distinct, not empty)."""
    import numpy as np

    return sorted_set[np.searchsorted(sorted_set, values).clip(max=len(sorted_set) - 1)] == values


def t_p(t: float, df: int) -> float:
    """Two-sided p-value of Student's t with ``df`` (taken as a whole number, at least 1) degrees of freedom."""
    return student_t_p(t, max(1, int(df)))


def _mean_test(d: numpy.ndarray, scatter: float, df: int, margin: float) -> tuple[float, float, float]:
    """``(mean, t, p)`` of the mean of ``d`` being zero; ``margin`` > 0 tests it against +-margin one-sided."""
    mean = float(d.mean())
    shifted = mean - math.copysign(margin, mean) if margin > 0 else mean
    if margin > 0 and (shifted > 0) != (mean > 0):
        return mean, 0.0, 1.0  # the mean itself lies within the margin
    se = scatter / math.sqrt(len(d))
    if se <= 0:
        t = math.copysign(math.inf, shifted) if shifted != 0 else 0.0
    else:
        t = shifted / se
    p = t_p(t, df)
    return mean, t, (p / 2 if margin > 0 else p)


def paired_comparison(xb: numpy.ndarray, ub: numpy.ndarray, yb: numpy.ndarray, xt: numpy.ndarray,
                      ut: numpy.ndarray, settings: Settings) -> Comparison | None:
    """The verdict of the paired test of log ratios over the shared sizes; None when the layout is not sparse."""
    import numpy as np

    pairs = paired_sizes(xb, ub, xt, ut)
    if pairs is None:
        return None
    sizes, mb, mt = pairs
    d = mt - mb
    k = len(d)
    v = np.log(sizes - min(0.0, float(sizes.min())) + 1.0)
    level_all = math.exp(median(mb))
    regions = [_region("all sizes", d, float(np.std(d, ddof=1)), k - 1, settings, sizes, level_all)]
    # a ratio that grows with the size (a complexity change): the line of log ratios over log size,
    # read at the largest size
    centred = v - v.mean()
    slope = float(centred @ d / (centred @ centred))
    fitted = d.mean() + slope * centred
    scatter = math.sqrt(float(((d - fitted) ** 2).sum()) / (k - 2))
    # the largest size's value of the line, tested like a mean of this many sizes
    weight = 1.0 / (1.0 / k + centred[-1] ** 2 / float(centred @ centred))
    top = np.array([float(fitted[-1])])
    regions.append(_region("larger sizes", top, scatter / math.sqrt(weight), k - 2, settings, sizes[-1:],
                           float(math.exp(mb[-1]))))
    # a change confined to the upper third: its mean, judged against the scatter of both parts
    start = k - max(2, math.ceil(k / 3))
    lower, upper = d[:start], d[start:]
    pooled = float(((lower - lower.mean()) ** 2).sum() + ((upper - upper.mean()) ** 2).sum())
    regions.append(_region("larger sizes", upper, math.sqrt(pooled / (k - 2)), k - 2, settings,
                           sizes[start:], math.exp(median(mb[start:]))))
    return verdict_of(regions, settings, "one or two measurements per size: log ratios at the sizes both "
                                         "profiles measured, paired")


def _region(name: str, part: numpy.ndarray, scatter: float, df: int, settings: Settings, sizes: numpy.ndarray,
            level: float) -> Region:
    """The test of the mean of ``part`` (log ratios) with the given scatter of one log ratio."""
    from .compare import Region  # at call time: compare imports this module

    mean, t, p = _mean_test(part, scatter, df, 0.0)
    _mean, _t, p_margin = _mean_test(part, scatter, df, settings.floor / 2)
    return Region(name, len(part), len(part), mean, t if math.isfinite(t) else math.copysign(1e6, t), p, level,
                  float(sizes[0]), float(sizes[-1]), p_floor=max(p, p_margin))


def verdict_of(regions: list[Region], settings: Settings, why: str) -> Comparison:
    """The verdict of tests of the target's difference: the overall one first, then ones of larger sizes.

    Bonferroni over the tests; a change must reach ``floor`` and be
    significantly beyond half of it; the largest inputs decide.
    """
    from .compare import Comparison, direction  # at call time: compare imports this module

    family = len(regions)

    def corrected(p: float) -> float:
        return min(1.0, p * family)

    overall = regions[0]
    significant = [r for r in regions if corrected(r.p_floor) < settings.alpha and abs(r.effect) >= settings.floor]
    if not significant:
        # the largest effect among the regions, if large, is a Maybe when the sizes lean that way
        biggest = max(regions, key=lambda r: abs(r.effect))
        if abs(biggest.effect) >= settings.maybe and corrected(biggest.p) < 0.2:
            return Comparison(direction(biggest.effect, maybe=True), biggest.effect, corrected(biggest.p), "ratio",
                              biggest.base_level, biggest, regions, why)
        return Comparison(PerformanceChange.NO_CHANGE, overall.effect, corrected(overall.p), "ratio",
                          overall.base_level, overall, regions, why)
    deciding = significant[-1]  # the largest inputs decide
    kind = "ratio"
    if deciding is not overall:
        if overall in significant and (overall.effect > 0) == (deciding.effect > 0) \
                and abs(deciding.effect - overall.effect) <= max(2 * settings.floor, 0.1):
            deciding = overall  # a uniform change: the estimate over all sizes is the more precise one
        else:
            kind = "scaling"
    return Comparison(direction(deciding.effect), deciding.effect, corrected(deciding.p_floor), kind,
                      deciding.base_level, deciding, regions, why)

