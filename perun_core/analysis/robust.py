"""Robust weighting: which points of a uid are outliers, and weighted least squares lines.

A measurement now and then is far off (a call preempted by the scheduler
takes 3-10x its neighbours' time).  :func:`outlier_weights` weighs every
point against its neighbourhood, whatever the model, with Tukey's bisquare;
regression (:mod:`perun_core.analysis.fitting`) and the nonparametric
models use the weights to set such points aside.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .points import DegenerateData, ignoring_float_errors

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["BISQUARE_C", "bisquare", "outlier_weights", "residual_scale", "start_weights", "weighted_line",
           "weighted_r_square"]


#: Tukey's bisquare constant (95 % efficiency under normal noise), in robust standard deviations.
BISQUARE_C = 4.685
#: Neighbours (in x order) whose median is a point's reference when its size is not repeated often.
_WINDOW = 7
#: Beyond this many points the neighbours' values are not moved along the local slope (see _local_reference).
_DENSE = 20_000


#: :func:`start_weights` takes the scale of the deviations from blocks of this many neighbouring points.
_BLOCK = 200
#: :func:`start_weights` flags a point this many robust standard deviations off its neighbours: beyond what
#: normal noise does in a large sample, even with a block's scale estimated a little low; a point less far
#: off than that does not move a model much.
_SCREEN_C = 5.0


def bisquare(u: numpy.ndarray) -> numpy.ndarray:
    """Tukey's bisquare weights of standardized residuals ``u`` (1 at 0, falling to 0 at |u| >= 1)."""
    import numpy as np

    clipped = np.clip(u, -1.0, 1.0)
    return (1.0 - clipped * clipped) ** 2


def residual_scale(absolute: numpy.ndarray, floor: float) -> float:
    """Robust standard deviation of residuals from their absolute values (1.4826 times their median), at least
    ``floor``, so that exact data (a median residual of 0) still tell their outliers apart."""
    import numpy as np

    n = len(absolute)
    middle = np.partition(absolute, [(n - 1) // 2, n // 2])
    median = 0.5 * (float(middle[(n - 1) // 2]) + float(middle[n // 2]))
    return max(1.4826 * median, floor)


def start_weights(x: numpy.ndarray, y: numpy.ndarray, log_y: numpy.ndarray | None) -> numpy.ndarray | None:
    """A quick look for points far off their neighbours in x: 0/1 weights to start robust fits from, or None.

    Each value (``log_y`` when given, as preemption multiplies a time, else
    ``y``) is compared with the median of its four nearest neighbours in x
    order, which follow the curve whatever its model; deviations beyond
    :data:`_SCREEN_C` robust standard deviations are flagged.  None (no
    robust fitting needed) unless at least one point in 1000 (and at least
    one) is flagged.  Neither the model nor the order of the points matters;
    callers fit robustly when this says so and decide from those fits.
    """
    import numpy as np

    n = len(y)
    if n < 5:
        return None
    values = log_y if log_y is not None else y
    # by x, points of equal x by value: the neighbours, and so the flags, do not depend on the points' order
    order = _by_x_then_value(x, values)
    v = values[order]
    if n >= 6:
        # the median of four values is the mean of the two in the middle: the sum less the extremes, halved
        around = (v[:-4], v[1:-3], v[3:-1], v[4:])       # i-2, i-1, i+1, i+2 of the points 2 .. n-3
        low = np.minimum(np.minimum(around[0], around[1]), np.minimum(around[2], around[3]))
        high = np.maximum(np.maximum(around[0], around[1]), np.maximum(around[2], around[3]))
        inner = (around[0] + around[1] + around[2] + around[3] - low - high) * 0.5
        # the two points at each end take the other four of the five at their end (four Python floats:
        # np.median costs more per call than its sort)
        head, tail = v[:5].tolist(), v[-5:].tolist()
        first = [_median_of_four(head[:i] + head[i + 1:]) for i in (0, 1)]
        last = [_median_of_four(tail[:i] + tail[i + 1:]) for i in (3, 4)]
        reference = np.concatenate((first, inner, last))
    else:
        reference = np.array([np.median(np.delete(v, i)) for i in range(n)])
    with ignoring_float_errors():
        deviation = np.abs(v - reference)
        if not np.isfinite(deviation).all():
            return None
    # each point is judged against the spread of the deviations around it (blocks of _BLOCK points in x order:
    # noise need not be equally large everywhere), taken from the smallest quarter of them: where outliers
    # crowd together (long calls are preempted more often) they spoil their clean neighbours' references too,
    # and a median would take its size from them
    blocks = max(1, n // _BLOCK)
    size = n // blocks
    quarter = (size - 1) // 4
    spread = np.partition(deviation[:blocks * size].reshape(blocks, size), quarter, axis=1)[:, quarter] / 0.3186
    scale = np.repeat(spread, size)
    scale = np.concatenate((scale, np.full(n - len(scale), spread[-1])))  # the last few join the last block
    floor = 1e-12 if log_y is not None else 1e-12 * float(np.abs(v).max())
    flagged = deviation > _SCREEN_C * np.maximum(scale, floor)
    if int(flagged.sum()) < max(1, n // 1000):
        return None
    weights = np.ones(n)
    weights[order[flagged]] = 0.0
    return weights


def _by_x_then_value(x: numpy.ndarray, values: numpy.ndarray) -> numpy.ndarray:
    """The order of the points by x, points of equal x by value (points equal in both in any order).

    When x holds only 16-bit integers (sizes often do) and there are fewer
    than 2**16 points, one sort of 64-bit keys does it: x in the top 16
    bits, the value's leading bits (as an unsigned integer that sorts as the
    float does) in the middle and the point's index at the bottom.  numpy
    sorts such keys with SIMD instructions, in about a third of the time of
    the two argsorts (by value, then stably by x) that are the way
    otherwise; when the leading bits leave two values of equal x in the
    wrong order (they agree there), the two argsorts decide after all.
    """
    import numpy as np

    values = np.ascontiguousarray(values, dtype=np.float64)
    n = len(values)
    small = _sort_key(x)
    if small.dtype != np.int16 or n >= 1 << 16:
        by_value = np.argsort(values)
        return by_value[np.argsort(small[by_value], kind="stable")]
    index_bits = max(1, (n - 1).bit_length())
    value_bits = np.uint64(64 - 16 - index_bits)
    signed = values.view(np.int64)
    # IEEE doubles sort as unsigned integers once the negative ones are inverted and the positive ones get
    # the top bit: XOR with all ones (the sign spread by an arithmetic shift) or with the top bit alone
    flip = signed >> 63
    flip |= np.int64(-(1 << 63))
    flip ^= signed
    key = flip.view(np.uint64)
    key >>= np.uint64(64) - value_bits
    above = (small.view(np.uint16) ^ np.uint16(1 << 15)).astype(np.uint64)  # x + 32768, unsigned
    above <<= value_bits
    key |= above
    key <<= np.uint64(index_bits)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    order = (key & np.uint64((1 << index_bits) - 1)).astype(np.intp)
    xs, vs = small[order], values[order]
    if ((xs[1:] == xs[:-1]) & (vs[1:] < vs[:-1])).any():
        by_value = np.argsort(values)
        return by_value[np.argsort(small[by_value], kind="stable")]
    return order


def _median_of_four(values: list[float]) -> float:
    """The median of four floats (the mean of the middle two, as numpy takes it); NaN when one is NaN."""
    if any(value != value for value in values):
        return math.nan
    values.sort()
    return (values[1] + values[2]) / 2


def _sort_key(x: numpy.ndarray) -> numpy.ndarray:
    """``x`` as 16-bit integers when it holds only such values (sizes often do: numpy sorts those stably by
    radix, ten times faster), else ``x`` itself."""
    import numpy as np

    if len(x) and float(x.min()) >= -32768.0 and float(x.max()) <= 32767.0:
        small = x.astype(np.int16)
        if np.array_equal(small, x):
            return small
    return x


def outlier_weights(x: numpy.ndarray, y: numpy.ndarray) -> numpy.ndarray | None:
    """Bisquare weights of the points against their neighbourhood, or None when no point stands out.

    A point's reference is the median of the points of its size when the
    size is repeated at least three times, else the median of its
    :data:`_WINDOW` nearest neighbours in x order.  The deviations from the
    reference (log ratios for positive data: preemption multiplies a
    timing) are scaled by their median absolute deviation; points beyond
    :data:`BISQUARE_C` of it get weight 0, the others a weight that falls
    smoothly from 1.  The weights do not depend on any model, so the models
    of one uid stay comparable.
    """
    import numpy as np

    n = len(y)
    if n < 5:
        return None
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    positive = bool((ys > 0).all())
    with np.errstate(all="ignore"):
        values = np.log(ys) if positive else ys
        reference = _local_reference(xs, values)
        deviation = values - reference
        if not positive:
            deviation = deviation / np.maximum(np.abs(reference), 1e-300)
        if not np.isfinite(deviation).all():
            return None
        scale = 1.4826 * float(np.median(np.abs(deviation - np.median(deviation))))
    if not math.isfinite(scale) or scale <= 0:
        return None
    with np.errstate(all="ignore"):
        u = deviation / (BISQUARE_C * scale)
    # a point beyond the limit now and then is what normal noise does in a large sample: only more
    # than that (one in 2000, at least one) is worth leaving least squares for
    if not np.isfinite(u).all() or int((np.abs(u) >= 1.0).sum()) < max(1, n // 2000):
        return None
    weights = np.empty(n)
    weights[order] = bisquare(u)
    return weights


def _local_reference(xs: numpy.ndarray, values: numpy.ndarray) -> numpy.ndarray:
    """What each value (of points sorted by x) should be, judged by its neighbours alone.

    A value never counts in its own reference.  Sizes repeated at least
    three times: the median of the other values of that size.  Others: the
    median of the :data:`_WINDOW` nearest values in x
    order, each moved to the point's x along the local slope of a running
    median, so a steep curve does not make its points look like outliers.
    """
    import numpy as np

    n = len(values)
    reference = np.empty(n)
    _sizes, starts, counts = np.unique(xs, return_index=True, return_counts=True)
    repeated = np.repeat(counts >= 3, counts)
    if repeated.any():
        _others_medians(values, starts, counts, reference)
    single = np.flatnonzero(~repeated)
    if not len(single):
        return reference
    width = min(_WINDOW + 1, n)
    index = np.int32 if n < 2**31 else np.int64
    low = np.clip(single - width // 2, 0, n - width).astype(index)
    # the point itself is left out: with it, its median is pulled towards it and typical
    # deviations look smaller than they are, which makes the ordinary extremes of clean noise
    # look like outliers (every window holds its point exactly once)
    offsets = np.arange(width, dtype=index)
    mine = low[:, None] + offsets[None, :]
    others = mine[mine != single[:, None]].reshape(len(single), width - 1)
    if n > _DENSE:
        # so many points that neighbours lie close together: the curve hardly moves within a window
        reference[single] = np.median(values[others], axis=1)
        return reference
    t = np.log(xs - xs.min() + 1.0) if float(xs.min()) <= 0 else np.log(xs)
    every = np.arange(n)
    rows = np.clip(every - width // 2, 0, n - width)[:, None] + offsets[None, :]
    # a running median first (robust to a few outliers in a window), then the local slope of that
    # smooth curve moves each neighbour to the point's own x before the median is taken again
    smooth = np.median(values[rows], axis=1)
    where = np.median(t[rows], axis=1)  # a window at an edge is not centred on its point
    ahead, behind = np.minimum(every + width, n - 1), np.maximum(every - width, 0)
    with np.errstate(all="ignore"):
        span = where[ahead] - where[behind]
        slope = np.where(span > 0, (smooth[ahead] - smooth[behind]) / np.where(span > 0, span, 1.0), 0.0)
    moved = values[others] + slope[single][:, None] * (t[single][:, None] - t[others])
    reference[single] = np.median(moved, axis=1)
    return reference


def _others_medians(values: numpy.ndarray, starts: numpy.ndarray, counts: numpy.ndarray,
                    out: numpy.ndarray) -> None:
    """Into ``out``: for each value of a group of three or more (contiguous runs given by ``starts``
    and ``counts``), the median of the other values of its group."""
    import numpy as np

    big = counts >= 3
    group = np.repeat(np.arange(len(counts)), counts)
    member = big[group]
    positions = np.flatnonzero(member)
    order = positions[np.lexsort((values[positions], group[positions]))]  # by group, then value
    g = values[order]
    k = counts[group[order]]
    start = np.repeat(np.cumsum(np.concatenate(([0], counts[big])))[:-1], counts[big])
    rank = np.arange(len(order)) - start

    def without(index: numpy.ndarray) -> numpy.ndarray:  # the index-th smallest of the others
        return np.where(rank > index, g[start + index], g[start + np.minimum(index + 1, k - 1)])

    even_others = (k - 1) % 2 == 1
    low = np.where(even_others, (k - 2) // 2, (k - 3) // 2)
    high = np.where(even_others, (k - 2) // 2, (k - 1) // 2)
    out[order] = (without(low) + without(high)) / 2


def weighted_line(f: numpy.ndarray, target: numpy.ndarray, w: numpy.ndarray) -> tuple[float, float]:
    """Weighted least squares line ``target = a + slope * f``."""
    import numpy as np

    total = float(w.sum())
    f_mean = float(np.einsum("i,i->", w, f)) / total
    t_mean = float(np.einsum("i,i->", w, target)) / total
    centred = f - f_mean
    s_ff = float(np.einsum("i,i->", w, centred * centred))
    if not math.isfinite(s_ff):
        raise DegenerateData("the computation overflowed (a result is not finite)")
    if s_ff <= 0.0:
        raise DegenerateData("the transformed x values are all equal")
    slope = float(np.einsum("i,i->", w, centred * (target - t_mean))) / s_ff
    return t_mean - slope * f_mean, slope


def weighted_r_square(y: numpy.ndarray, fitted: numpy.ndarray, w: numpy.ndarray) -> float:
    """``1 - SS_res/SS_tot`` with the weights: points set aside as outliers do not count."""
    import numpy as np

    total = float(w.sum())
    mean = float(np.einsum("i,i->", w, y)) / total
    ss_tot = float(np.einsum("i,i,i->", w, y - mean, y - mean))
    ss_res = float(np.einsum("i,i,i->", w, y - fitted, y - fitted))
    if ss_tot <= 0:
        return 1.0 if ss_res <= 0 else 0.0
    return 1.0 - ss_res / ss_tot
