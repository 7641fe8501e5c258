"""Levels of a location over the history of one configuration, steps in them and slow trends.

A *level* is how slow a location is in one version relative to the oldest
version of the window, on the log scale (0.03 ~ 3 % slower).  With input
sizes it is measured against a robust curve of log amount over log size
fitted to the oldest version, so a change in the mix of input sizes does not
move the level.

:func:`creeping` finds slow drifts that no single commit shows: steps
(sharp jumps between neighbouring versions) are taken out first, then the
Mann-Kendall test asks whether what remains keeps rising (or falling), and
Sen's slope says by how much over the window.  :func:`change_points` finds
steps with the E-divisive means statistic and a permutation test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .stats import distinct, huber_fit, median, normal_sf

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from .data import Sample

__all__ = ["ChangePoint", "Trend", "change_points", "creeping", "levels"]


@dataclass(frozen=True, slots=True)
class Trend:
    """A monotone drift of the de-stepped levels: total ``drift`` (log) over the window, test ``p``."""

    drift: float
    p: float
    steps: int
    versions: int


@dataclass(frozen=True, slots=True)
class ChangePoint:
    """A step before version ``index`` (0 = oldest) of ``shift`` (log), found with ``p``."""

    index: int
    shift: float
    p: float


def _log(y: numpy.ndarray, eps: float) -> numpy.ndarray:
    import numpy as np

    return np.log(np.maximum(y, 0.0) + (eps if (y <= 0).any() else 0.0))


def _zero_offset(samples: list[Sample]) -> float:
    """What a zero amount counts as on the log scale, the same for every version of the history.

    Half the smallest positive amount of the whole history: taken per
    version, a run of zeros (CPU times below one clock tick) would lie at a
    level set by that version's smallest non-zero run, and identical
    versions would seem to drift.
    """
    positive = [float(s.y[s.y > 0].min()) for s in samples if (s.y > 0).any()]
    return 0.5 * min(positive) if positive else 1.0


def levels(samples: list[Sample | None]) -> numpy.ndarray | None:
    """The level of every version (NaN where the location is missing) relative to the first one present."""
    import numpy as np

    present = [s for s in samples if s is not None and len(s.y)]
    if not present:
        return None
    reference = present[0]
    eps = _zero_offset(present)
    sized = all(s.x is not None for s in present) and reference.x is not None and len(distinct(reference.x)) >= 2
    out = np.full(len(samples), np.nan)
    if not sized:
        for i, sample in enumerate(samples):
            if sample is not None and len(sample.y):
                out[i] = float(median(_log(sample.y, eps)))
        first = out[np.isfinite(out)][0]
        return out - first
    assert reference.x is not None
    v_ref = np.log(reference.x - min(0.0, float(reference.x.min())) + 1.0)
    low, high = float(v_ref.min()), float(v_ref.max())
    centre, spread = (low + high) / 2, (high - low) / 2 or 1.0
    degree = min(3, len(distinct(v_ref)) - 1)

    def design(v: numpy.ndarray) -> numpy.ndarray:
        z = (v - centre) / spread
        return np.column_stack([z**k for k in range(degree + 1)])

    coef = huber_fit(design(v_ref), _log(reference.y, eps))
    shift = min(0.0, float(reference.x.min()))
    for i, sample in enumerate(samples):
        if sample is None or sample.x is None or not len(sample.y):
            continue
        v = np.log(sample.x - shift + 1.0)
        inside = (v >= low) & (v <= high)
        if inside.sum() < 2:
            continue
        out[i] = float(median(_log(sample.y[inside], eps) - design(v[inside]) @ coef))
    finite = out[np.isfinite(out)]
    return out - finite[0] if len(finite) else None


def _destep(series: numpy.ndarray, step_floor: float) -> tuple[numpy.ndarray, int]:
    """The series with sharp jumps between neighbours taken out, and how many there were."""
    import numpy as np

    diffs = np.diff(series)
    if len(diffs) < 3:
        return series, 0
    noise = 1.4826 * float(median(np.abs(diffs - median(diffs))))
    limit = max(step_floor, 4.0 * noise)
    jumps = np.where(np.abs(diffs) >= limit, diffs, 0.0)
    return series - np.concatenate(([0.0], np.cumsum(jumps))), int((jumps != 0).sum())


def mann_kendall(series: numpy.ndarray) -> tuple[float, float]:
    """Mann-Kendall trend test: ``(z, two-sided p)`` (no tie correction; levels rarely tie)."""
    import numpy as np

    n = len(series)
    if n < 4:
        return 0.0, 1.0
    signs = np.sign(np.subtract.outer(series, series))
    s = float(np.triu(-signs, 1).sum())  # pairs (i < j) with x_j > x_i count +1
    variance = n * (n - 1) * (2 * n + 5) / 18.0
    if s == 0:
        return 0.0, 1.0
    z = (s - math.copysign(1.0, s)) / math.sqrt(variance)
    return z, min(1.0, 2.0 * normal_sf(abs(z)))


def sen_slope(series: numpy.ndarray) -> float:
    """Median of the slopes between all pairs of points."""
    import numpy as np

    n = len(series)
    i, j = np.triu_indices(n, 1)
    return float(median((series[j] - series[i]) / (j - i)))


def creeping(series: numpy.ndarray, *, step_floor: float = math.log(1.05), alpha: float = 0.01) -> Trend | None:
    """The drift of ``series`` (levels, oldest first; NaN skipped) once steps are removed.

    None for fewer than five known levels.
    """
    import numpy as np

    known = series[np.isfinite(series)]
    if len(known) < 5:
        return None
    destepped, steps = _destep(known, step_floor)
    _z, p = mann_kendall(destepped)
    drift = sen_slope(destepped) * (len(destepped) - 1)
    return Trend(drift, p, steps, len(known))


def _energy_split(x: numpy.ndarray) -> tuple[int, float]:
    """The split index maximizing the E-divisive statistic (alpha = 1) and its value."""
    import numpy as np

    n = len(x)
    distance = np.abs(np.subtract.outer(x, x))
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = distance.cumsum(0).cumsum(1)

    def block(a: int, b: int, c: int, d: int) -> float:
        return prefix[b, d] - prefix[a, d] - prefix[b, c] + prefix[a, c]

    best, best_value = 0, -math.inf
    for tau in range(1, n):
        left, right = tau, n - tau
        between = block(0, tau, tau, n) / (left * right)
        within_left = block(0, tau, 0, tau) / (left * left)
        within_right = block(tau, n, tau, n) / (right * right)
        value = left * right / n * (2 * between - within_left - within_right)
        if value > best_value:
            best, best_value = tau, value
    return best, best_value


def change_points(series: numpy.ndarray, *, alpha: float = 0.01, permutations: int = 199, seed: int = 0,
                  limit: int = 3) -> list[ChangePoint]:
    """Steps of ``series`` by E-divisive means with binary segmentation and a permutation test.

    Indexes refer to the known (finite) levels in order.
    """
    import numpy as np

    known = series[np.isfinite(series)]
    rng = np.random.default_rng(seed)
    found: list[ChangePoint] = []
    segments = [(0, len(known))]
    while segments and len(found) < limit:
        start, end = segments.pop(0)
        part = known[start:end]
        if len(part) < 5:
            continue
        tau, value = _energy_split(part)
        exceed = sum(_energy_split(rng.permutation(part))[1] >= value for _ in range(permutations))
        p = float(exceed + 1) / (permutations + 1)
        if p >= alpha:
            continue
        shift = float(median(part[tau:]) - median(part[:tau]))
        found.append(ChangePoint(start + tau, shift, p))
        segments += [(start, start + tau), (start + tau, end)]
    return sorted(found, key=lambda c: c.index)
