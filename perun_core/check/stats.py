"""Small statistics the checks share: rank tests, robust shifts, robust regression.

Everything works on numpy arrays and imports numpy when called; the
Student t distribution is computed here, so a check never imports scipy for
it.

Conventions: ``a`` is the baseline sample and ``b`` the target sample;
positive statistics mean "the target is larger" (slower, for time).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "RankTest",
    "average_ranks",
    "distinct",
    "hodges_lehmann",
    "median",
    "full_rank",
    "gram_full_rank",
    "huber_fit",
    "mann_whitney",
    "normal_sf",
    "quantiles",
    "stouffer",
    "student_t_p",
    "incomplete_beta",
    "welch_t",
]

#: Sizes up to which the exact null distribution of U is used (when nothing ties).
EXACT_LIMIT = 400


class RankTest(NamedTuple):
    """A two-sided Mann-Whitney U test of ``a`` against ``b``.

    ``z`` is signed (positive: ``b`` tends to be larger); ``separated`` is
    True when every value of one sample is above every value of the other.
    """

    u: float
    z: float
    p: float
    separated: bool


def median(values: numpy.ndarray) -> float:
    """The median of a non-empty 1-d array (numpy's own is several times slower on small arrays)."""
    import numpy as np

    n = len(values)
    half = n // 2
    if n % 2:
        return float(np.partition(values, half)[half])
    part = np.partition(values, (half - 1, half))
    return 0.5 * (float(part[half - 1]) + float(part[half]))


def distinct(values: numpy.ndarray) -> numpy.ndarray:
    """The sorted distinct values of a 1-d array of finite numbers, as ``np.unique`` gives them.

    ``np.unique`` without its index options imports ``numpy.ma`` on first
    use (to check for masked arrays), which costs more than a whole check of
    a small profile.
    """
    import numpy as np

    ordered = np.sort(values, axis=None)
    if len(ordered) < 2:
        return ordered
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def quantiles(values: numpy.ndarray, q: numpy.ndarray) -> numpy.ndarray:
    """``np.quantile(values, q)`` (its default, linear method) of a 1-d array of finite numbers, bit for bit.

    ``np.quantile`` calls ``np.unique`` inside, which imports ``numpy.ma``
    (see :func:`distinct`); the arithmetic here is numpy's own, step by step.
    """
    import numpy as np

    ordered = np.sort(values, axis=None)
    n = len(ordered)
    virtual = (n - 1) * np.asarray(q, dtype=np.float64)
    previous = np.floor(virtual)
    above = virtual >= n - 1
    previous[above] = -1
    following = previous + 1
    following[above] = -1
    gamma = virtual - previous
    a = ordered[previous.astype(np.intp)]
    b = ordered[following.astype(np.intp)]
    difference = b - a
    result = a + difference * gamma
    np.subtract(b, difference * (1 - gamma), out=result, where=gamma >= 0.5)
    return result


def normal_sf(z: float) -> float:
    """Upper tail probability of the standard normal distribution."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def average_ranks(values: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Ranks from 1 with ties averaged, and the sizes of the tie groups."""
    import numpy as np

    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    n = len(values)
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    counts = np.diff(np.append(starts, n))
    # every member of a tie group gets the mean of the positions it spans
    group_rank = starts + (counts + 1) / 2.0
    ranks = np.empty(n)
    ranks[order] = np.repeat(group_rank, counts)
    return ranks, counts


@lru_cache(maxsize=256)
def _u_distribution(m: int, n: int) -> tuple[float, ...]:
    """P(U = u) for u = 0..m*n under the null hypothesis, without ties.

    The counts are the coefficients of the Gaussian binomial coefficient
    [m+n choose m]_q, built as the product over i of (1 - q^(n+i)) / (1 - q^i).
    """
    size = m * n + 1
    poly = [0] * size
    poly[0] = 1
    for i in range(1, m + 1):
        shift = n + i
        for k in range(size - 1, shift - 1, -1):  # times (1 - q^shift)
            poly[k] -= poly[k - shift]
        for k in range(i, size):  # divided by (1 - q^i): a running sum with step i
            poly[k] += poly[k - i]
    total = math.comb(m + n, m)
    return tuple(c / total for c in poly)


def mann_whitney(a: numpy.ndarray, b: numpy.ndarray) -> RankTest:
    """Two-sided Mann-Whitney U test; exact for small samples without ties.

    Larger samples use the normal approximation with tie and continuity
    corrections.  Both samples need at least one value.
    """
    import numpy as np

    m, n = len(a), len(b)
    pooled = np.concatenate((a, b))
    order = np.argsort(pooled, kind="mergesort")
    ordered = pooled[order]
    has_ties = bool((ordered[1:] == ordered[:-1]).any())
    if has_ties:
        ranks, ties = average_ranks(pooled)
        rank_b = float(ranks[m:].sum())
        tie_sum = float((ties**3 - ties).sum())
    else:
        # every rank is a position: the sum of b's is the same integer average_ranks would add up
        rank_b = float(np.flatnonzero(order >= m).sum() + n)
        tie_sum = 0.0
    u = rank_b - n * (n + 1) / 2.0  # pairs (i, j) with b_j > a_i, ties counting half
    mean = m * n / 2.0
    separated = u in (0.0, float(m * n))
    if not has_ties and m * n <= EXACT_LIMIT:
        dist = _u_distribution(min(m, n), max(m, n))
        k = int(round(min(u, m * n - u)))
        p = min(1.0, 2.0 * sum(dist[: k + 1]))
        sd = math.sqrt(m * n * (m + n + 1) / 12.0)
        z = (u - mean) / sd if sd > 0 else 0.0
        return RankTest(u, z, p, separated)
    total = m + n
    tie_term = tie_sum / (total * (total - 1)) if total > 1 else 0.0
    variance = m * n / 12.0 * ((total + 1) - tie_term)
    if variance <= 0:
        return RankTest(u, 0.0, 1.0, False)
    sd = math.sqrt(variance)
    z = (u - mean) / sd
    corrected = max(0.0, abs(u - mean) - 0.5) / sd
    return RankTest(u, z, min(1.0, 2.0 * normal_sf(corrected)), separated)


@lru_cache(maxsize=512)
def spread_indexes(n: int, cap: int) -> numpy.ndarray:
    import numpy as np

    return np.linspace(0, n - 1, cap).round().astype(np.int64)


def _thin(values: numpy.ndarray, cap: int) -> numpy.ndarray:
    """At most ``cap`` evenly spaced order statistics of ``values`` (deterministic)."""
    import numpy as np

    if len(values) <= cap:
        return values
    return np.sort(values)[spread_indexes(len(values), cap)]


def hodges_lehmann(a: numpy.ndarray, b: numpy.ndarray, cap: int = 64) -> float:
    """The Hodges-Lehmann shift: the median of all differences ``b_j - a_i``.

    Samples above ``cap`` values are thinned to evenly spaced order
    statistics first, which keeps the estimate within a hair of the full one.
    """
    import numpy as np

    a, b = _thin(a, cap), _thin(b, cap)
    return median(np.subtract.outer(b, a).ravel())


def welch_t(a: numpy.ndarray, b: numpy.ndarray) -> tuple[float, float]:
    """Welch's t test of mean(b) - mean(a): ``(t, two-sided p)``; needs two values a side."""
    import numpy as np

    m, n = len(a), len(b)
    va, vb = float(np.var(a, ddof=1)), float(np.var(b, ddof=1))
    diff = float(b.mean() - a.mean())
    se2 = va / m + vb / n
    if se2 <= 0:
        if diff == 0:
            return 0.0, 1.0
        return math.copysign(math.inf, diff), 0.0
    t = diff / math.sqrt(se2)
    df = se2**2 / ((va / m) ** 2 / (m - 1) + (vb / n) ** 2 / (n - 1))
    return t, student_t_p(t, df)


def student_t_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t with ``df`` > 0 degrees of freedom, whole or not.

    The regularized incomplete beta function ``I_x(df/2, 1/2)`` at
    ``x = df / (df + t^2)``, by its continued fraction: within 1e-7 of
    scipy's ``stdtr`` from half a degree of freedom to a hundred million (a
    test holds it to that), in microseconds, where importing scipy.special
    costs a ``check`` process 0.3 s of CPU.
    """
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return 1.0
    if math.isinf(t):
        return 0.0
    square = t * t
    return min(1.0, max(0.0, incomplete_beta(df / 2.0, 0.5, df / (df + square), square / (df + square))))


def incomplete_beta(a: float, b: float, x: float, rest: float | None = None) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for a, b > 0 and 0 <= x <= 1.

    ``rest`` is ``1 - x`` when the caller knows it more precisely than the
    subtraction would give it (x next to 1).  The continued fraction
    converges fast for ``x`` below ``(a + 1) / (a + b + 2)``; above,
    ``1 - I_(1-x)(b, a)`` is taken instead.
    """
    rest = 1.0 - x if rest is None else rest
    if x <= 0.0:
        return 0.0
    if rest <= 0.0:
        return 1.0
    large, small = max(a, b), min(a, b)
    log_front = _log_gamma_ratio(large, small) - math.lgamma(small) + a * math.log(x) + b * math.log(rest)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, rest) / b


def _log_gamma_ratio(a: float, b: float) -> float:
    """``ln Gamma(a + b) - ln Gamma(a)``; for a large ``a`` from Stirling's series of both, as the difference
    of two huge ``lgamma`` values would lose the digits that matter."""
    if a < 1e4:
        return math.lgamma(a + b) - math.lgamma(a)
    total = a + b
    correction = (1 / (12 * total) - 1 / (360 * total**3)) - (1 / (12 * a) - 1 / (360 * a**3))
    return (a - 0.5) * math.log1p(b / a) + b * math.log(total) - b + correction


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function, evaluated from the front (modified Lentz)."""
    tiny = 1e-300

    def guarded(value: float) -> float:
        return value if abs(value) > tiny else tiny

    front = 1.0
    back = 1.0 / guarded(1.0 - (a + b) * x / (a + 1.0))
    value = back
    for step in range(1, 10_000):
        twice = 2 * step
        # the even term, then the odd one, of the fraction's step
        for term in (step * (b - step) * x / ((a + twice - 1.0) * (a + twice)),
                     -(a + step) * (a + b + step) * x / ((a + twice) * (a + twice + 1.0))):
            back = 1.0 / guarded(1.0 + term * back)
            front = guarded(1.0 + term / front)
            value *= back * front
        if abs(back * front - 1.0) < 1e-15:
            break
    return value


def stouffer(zs: list[float], weights: list[float]) -> float:
    """Weighted Stouffer combination of signed z scores."""
    norm = math.sqrt(sum(w * w for w in weights))
    if norm == 0:
        return 0.0
    return sum(w * z for w, z in zip(weights, zs)) / norm


def mad_scale(residuals: numpy.ndarray) -> float:
    """The median absolute deviation scaled to a normal standard deviation."""
    import numpy as np

    return 1.4826 * median(np.abs(residuals - median(residuals)))


def gram_full_rank(gram: numpy.ndarray) -> bool:
    """Whether a Gram matrix ``X.T @ X`` comes from linearly independent columns (numerically)."""
    import numpy as np

    diagonal = np.diag(gram)
    if not (diagonal > 0).all():
        return False
    scale = 1.0 / np.sqrt(diagonal)
    eigen = np.linalg.eigvalsh(gram * np.outer(scale, scale))
    return bool(eigen[0] > 1e-10 * eigen[-1])


def full_rank(design: numpy.ndarray) -> bool:
    """Whether the columns of ``design`` are linearly independent (numerically)."""
    return gram_full_rank(design.T @ design)


def _weighted_solve(design: numpy.ndarray, y: numpy.ndarray, weights: numpy.ndarray | None) -> numpy.ndarray:
    """Least squares through the normal equations (the designs here are tall and narrow)."""
    import numpy as np

    weighted = design if weights is None else design * weights[:, None]
    gram = weighted.T @ design
    try:
        return np.linalg.solve(gram, weighted.T @ y)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(design, y, rcond=None)[0]


def huber_fit(design: numpy.ndarray, y: numpy.ndarray, iterations: int = 4) -> numpy.ndarray:
    """Coefficients of a robust (Huber, k = 1.345) linear regression of ``y`` on ``design``.

    Iteratively reweighted least squares from the ordinary fit; the scale is
    the MAD of the residuals.  ``design`` should have independent columns
    (see :func:`full_rank`).
    """
    import numpy as np

    coef = _weighted_solve(design, y, None)
    for _ in range(iterations):
        residuals = y - design @ coef
        scale = mad_scale(residuals)
        if scale <= 0:
            break
        limit = 1.345 * scale
        weights = np.minimum(1.0, limit / np.maximum(np.abs(residuals), 1e-300))
        updated = _weighted_solve(design, y, weights)
        change = float(np.max(np.abs(updated - coef)))
        coef = updated
        if change <= 1e-7 * (1.0 + float(np.max(np.abs(coef)))):
            break
    return coef
