"""Linear Regression and Polynomial Regression checks (spec 001 §8.2.4-8.2.5).

Both fit their own models to the points (input size, amount) of each
profile rather than taking stored ones.

``linear_regression``: ordinary least squares ``a + b*x`` per profile.  The
prediction at the largest common input size is compared with a z test on
the two fits; a relative change of at least ``threshold`` percent (10) that
is significant (p < ``alpha``, 0.01) is a change -- of type ``slope`` when
the slopes differ significantly, else ``shift``.  Significant but smaller
than the threshold: NoChange; large but not significant: Maybe.
Confidence: 1 - p.

``polynomial_regression``: a polynomial of degree 1 to 3 per profile, the
degree chosen by BIC; the mean relative difference of the two curves over
the common sizes decides (``threshold`` percent, 10), in the direction the
curves part towards the larger sizes.  Confidence: the smaller r^2.

Without input sizes both compare the means.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..data import ProfileData
from ..results import Finding, PerformanceChange
from ..stats import normal_sf
from .common import ALPHA, location_pairs, read_params, relative, threshold_param

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from ..data import Sample


def _line(x: numpy.ndarray, y: numpy.ndarray) -> tuple[float, float, numpy.ndarray, float]:
    """OLS fit: intercept, slope, covariance of (a, b), residual variance."""
    import numpy as np

    n = len(x)
    design = np.column_stack((np.ones(n), x))
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    dof = max(1, n - 2)
    sigma2 = float(residual @ residual) / dof
    try:
        cov = sigma2 * np.linalg.inv(design.T @ design)
    except np.linalg.LinAlgError:
        cov = np.full((2, 2), np.inf)
    return float(coef[0]), float(coef[1]), cov, sigma2


def _verdict(change: float | None, significant: bool, threshold: float) -> PerformanceChange:
    if change is None:
        return PerformanceChange.UNKNOWN
    if abs(change) < threshold:
        return PerformanceChange.NO_CHANGE
    if significant:
        return PerformanceChange.DEGRADATION if change > 0 else PerformanceChange.OPTIMIZATION
    return PerformanceChange.MAYBE_DEGRADATION if change > 0 else PerformanceChange.MAYBE_OPTIMIZATION


def _sized(base: Sample, new: Sample) -> bool:
    import numpy as np

    return (base.x is not None and new.x is not None and len(np.unique(base.x)) >= 3
            and len(np.unique(new.x)) >= 3)


class LinearRegression:
    name = "linear_regression"
    summary = "Least-squares lines of amount over input size compared at the largest common size."
    params = (threshold_param(10.0, "Change of the prediction at the largest common size, in percent, that counts."),
              ALPHA)

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        import numpy as np

        values = read_params(self, params)
        threshold, alpha = values["threshold"], values["alpha"]
        for base, new, presence in location_pairs(baseline, target, self.name):
            if presence is not None:
                yield presence
                continue
            assert base is not None and new is not None
            if len(base.y) < 3 or len(new.y) < 3:
                yield Finding(PerformanceChange.UNKNOWN, "linear", base.location, method=self.name,
                              reason="a line needs at least three measurements a side")
                continue
            if not _sized(base, new):
                before, after = float(base.y.mean()), float(new.y.mean())
                se = math.sqrt(float(base.y.var(ddof=1)) / len(base.y) + float(new.y.var(ddof=1)) / len(new.y))
                p = 2 * normal_sf(abs(after - before) / se) if se > 0 else (0.0 if after != before else 1.0)
                change = relative(before, after)
                yield Finding(_verdict(change, p < alpha, threshold), "shift", base.location, before, after,
                              after - before, change, "1-p", 1 - p, self.name)
                continue
            assert base.x is not None and new.x is not None
            at = min(float(base.x.max()), float(new.x.max()))
            a_b, b_b, cov_b, _ = _line(base.x, base.y)
            a_t, b_t, cov_t, _ = _line(new.x, new.y)
            point = np.array([1.0, at])
            before, after = a_b + b_b * at, a_t + b_t * at
            se = math.sqrt(float(point @ cov_b @ point + point @ cov_t @ point))
            p = 2 * normal_sf(abs(after - before) / se) if se > 0 else (0.0 if after != before else 1.0)
            slope_se = math.sqrt(float(cov_b[1, 1] + cov_t[1, 1]))
            slope_p = 2 * normal_sf(abs(b_t - b_b) / slope_se) if slope_se > 0 else 1.0
            change = relative(before, after)
            kind = "slope" if slope_p < alpha else "shift"
            yield Finding(_verdict(change, p < alpha, threshold), kind, base.location, before, after, after - before,
                          change, "1-p", 1 - p, self.name, f"per call or run, at size {at:.6g}")


def _polynomial(x: numpy.ndarray, y: numpy.ndarray, centre: float, spread: float) -> tuple[numpy.ndarray, float, int]:
    """Coefficients (on scaled x) of the BIC-best polynomial of degree 1-3, its r^2 and degree."""
    import numpy as np

    z = (x - centre) / spread
    n = len(x)
    best = None
    total = float(((y - y.mean()) ** 2).sum())
    for degree in (1, 2, 3):
        if len(np.unique(z)) <= degree:
            break
        coef = np.polyfit(z, y, degree)
        residual = float(((y - np.polyval(coef, z)) ** 2).sum())
        bic = n * math.log(max(residual, 1e-300) / n) + (degree + 1) * math.log(n)
        if best is None or bic < best[0] - 2.0:  # a higher degree has to earn its keep
            r2 = 1.0 - residual / total if total > 0 else 1.0
            best = (bic, coef, r2, degree)
    assert best is not None
    return best[1], best[2], best[3]


class PolynomialRegression:
    name = "polynomial_regression"
    summary = "BIC-chosen polynomials (degree 1-3) of amount over input size, compared over the common sizes."
    params = (threshold_param(10.0, "Mean difference of the curves, in percent, that is a change."),)

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        import numpy as np

        threshold = read_params(self, params)["threshold"]
        for base, new, presence in location_pairs(baseline, target, self.name):
            if presence is not None:
                yield presence
                continue
            assert base is not None and new is not None
            if not _sized(base, new) or len(base.y) < 5 or len(new.y) < 5:
                yield Finding(PerformanceChange.UNKNOWN, "polynomial", base.location, method=self.name,
                              reason="needs input sizes (at least three distinct) and five measurements a side")
                continue
            assert base.x is not None and new.x is not None
            low = max(float(base.x.min()), float(new.x.min()))
            high = min(float(base.x.max()), float(new.x.max()))
            if not high > low:
                yield Finding(PerformanceChange.UNKNOWN, "polynomial", base.location, method=self.name,
                              reason="the input sizes of the two profiles do not overlap")
                continue
            centre, spread = (low + high) / 2, (high - low) / 2
            coef_b, r2_b, deg_b = _polynomial(base.x, base.y, centre, spread)
            coef_t, r2_t, deg_t = _polynomial(new.x, new.y, centre, spread)
            grid = np.linspace(-1.0, 1.0, 64)
            values_b, values_t = np.polyval(coef_b, grid), np.polyval(coef_t, grid)
            scale = float(np.mean(np.abs(values_b)))
            difference = values_t - values_b
            change = float(difference.mean()) / scale * 100 if scale > 0 else None
            upper = float(difference[32:].mean())
            if change is None:
                result = PerformanceChange.UNKNOWN
            elif abs(change) < threshold:
                result = PerformanceChange.NO_CHANGE
            else:
                result = PerformanceChange.DEGRADATION if upper > 0 else PerformanceChange.OPTIMIZATION
            yield Finding(result, f"polynomial (degree {deg_b} -> {deg_t})", base.location, float(values_b.mean()),
                          float(values_t.mean()), float(difference.mean()), change, "r_square",
                          max(0.0, min(r2_b, r2_t)), self.name)


LINEAR = LinearRegression()
POLYNOMIAL = PolynomialRegression()
