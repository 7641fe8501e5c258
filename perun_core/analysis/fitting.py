"""Fitting one parametric model to one slice of points: the least squares core of regression.

:class:`Points` holds the points of one uid with their transforms (``ln x``,
``x^2``, ...) computed once; a :class:`Part` is a contiguous slice of them.
:func:`fit_part` fits one kind by least squares, or by weighted least squares
when :func:`~perun_core.analysis.robust.outlier_weights` finds outliers, and
raises :class:`~perun_core.analysis.points.DegenerateData` when the data
cannot support the kind.  The formulas are listed in
:mod:`perun_core.analysis.regression`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from .parametric import RANK, tie_limit
from .points import DegenerateData, interval_bound, r_square
from .robust import outlier_weights, weighted_line, weighted_r_square

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["TRANSFORMS", "Fit", "Part", "Points", "as_points", "best_fit", "domain_problem", "fit_part"]


class Fit(NamedTuple):
    model: str
    b0: float
    b1: float
    r_square: float
    x_start: float
    x_end: float
    #: points the robust refit gave a weight below one half (outliers, e.g. preempted calls)
    downweighted: int = 0

    def record(self, uid: Any, method: str) -> dict:
        return {
            "uid": uid,
            "model": self.model,
            "method": method,
            "r_square": self.r_square,
            "coeffs": [{"name": "b0", "value": self.b0}, {"name": "b1", "value": self.b1}],
            "x_interval_start": interval_bound(self.x_start),
            "x_interval_end": interval_bound(self.x_end),
            "downweighted": self.downweighted,
        }


class Points:
    """The points of one uid in a fixed order, with transforms computed once."""

    def __init__(self, x: numpy.ndarray, y: numpy.ndarray) -> None:
        self.x = x
        self.y = y
        self._cache: dict[str, numpy.ndarray] = {}

    def transform(self, name: str) -> numpy.ndarray:
        import numpy as np

        found = self._cache.get(name)
        if found is None:
            with np.errstate(all="ignore"):
                if name == "ln x":
                    found = np.log(self.x)
                elif name == "ln y":
                    found = np.log(self.y)
                elif name == "x^2":
                    found = self.x * self.x
                elif name == "x ln x":
                    found = np.where(self.x > 0, self.x * self.transform("ln x"), 0.0)
                else:  # pragma: no cover - programming error
                    raise KeyError(name)
            self._cache[name] = found
        return found

    def part(self, start: int, stop: int) -> Part:
        return Part(self, start, stop)

    def weights(self) -> numpy.ndarray | None:
        """Outlier weights of all points (None: no outliers), computed once."""
        import numpy as np

        if "weights" not in self._cache:
            with np.errstate(all="ignore"):
                self._cache["weights"] = outlier_weights(self.x, self.y)  # type: ignore[assignment]
        return self._cache["weights"]


class Part:
    """A contiguous slice of :class:`Points` with its own summary statistics."""

    def __init__(self, points: Points, start: int, stop: int) -> None:
        self.points = points
        self.start = start
        self.stop = stop
        self.x = points.x[start:stop]
        self.y = points.y[start:stop]
        self.n = stop - start
        self._stats: dict[str, Any] = {}

    def __len__(self) -> int:
        return self.n

    def transform(self, name: str) -> numpy.ndarray:
        return self.points.transform(name)[self.start:self.stop]

    def weights(self) -> numpy.ndarray | None:
        found = self.points.weights()
        if found is None:
            return None
        part = found[self.start:self.stop]
        return part if bool((part < 1.0).any()) and float(part.sum()) > 0 else None

    def stat(self, name: str) -> Any:
        import numpy as np

        found = self._stats.get(name)
        if found is None:
            with np.errstate(all="ignore"):
                if name == "x range":
                    found = (float(self.x.min()), float(self.x.max()))
                elif name == "y min":
                    found = float(self.y.min())
                elif name == "y mean":
                    found = float(self.y.mean())
                elif name == "y centred":
                    found = self.y - self.stat("y mean")
                elif name == "ss_tot":
                    centred = self.stat("y centred")
                    found = float(np.einsum("i,i->", centred, centred))
                else:  # pragma: no cover - programming error
                    raise KeyError(name)
            self._stats[name] = found
        return found


def domain_problem(model: str, x_min: float, y_min: float) -> str | None:
    """Why ``model`` cannot be fitted on data with these minima, or None."""
    if model in ("logarithmic", "power") and x_min <= 0:
        return "ln x is undefined: some x values are <= 0"
    if model == "nlogn" and x_min < 0:
        return "x ln x is undefined: some x values are < 0"
    if model in ("power", "exponential") and y_min <= 0:
        return "ln y is undefined: some y values are <= 0"
    return None


TRANSFORMS = {"logarithmic": "ln x", "quadratic": "x^2", "nlogn": "x ln x"}


def _spread(centred: numpy.ndarray) -> float:
    """Sum of squares of centred regressor values; must be positive and finite."""
    import numpy as np

    s_ff = float(np.einsum("i,i->", centred, centred))
    if not math.isfinite(s_ff):
        raise DegenerateData("the computation overflowed (a result is not finite)")
    if s_ff <= 0.0:
        raise DegenerateData("the transformed x values are all equal")
    return s_ff


def _line(f: numpy.ndarray, target: numpy.ndarray) -> tuple[float, float]:
    """Least squares line ``target = a + slope * f``: returns ``(a, slope)``."""
    import numpy as np

    f_mean = float(f.mean())
    centred = f - f_mean
    s_ff = _spread(centred)
    t_mean = float(target.mean())
    slope = float(np.einsum("i,i->", centred, target - t_mean)) / s_ff
    return t_mean - slope * f_mean, slope


def fit_part(part: Part, model: str) -> Fit:
    """Least squares, or weighted least squares when some points are outliers.

    The outliers are those :func:`~perun_core.analysis.robust.outlier_weights` finds.
    """
    import numpy as np

    w = part.weights()
    if w is None:
        return _least_squares(part, model)
    fit = _least_squares(part, model)  # the domain checks, and the answer if the weighted fit fails
    usable = w > 0
    if int(usable.sum()) < 2 or float(part.x[usable].min()) == float(part.x[usable].max()):
        return fit
    with np.errstate(all="ignore"):
        try:
            if model == "constant":
                b0, b1 = float(np.dot(w, part.y)) / float(w.sum()), 0.0
                fitted = np.full(part.n, b0)
            elif model in ("power", "exponential"):
                f = part.transform("ln x") if model == "power" else part.x
                a, slope = weighted_line(f, part.transform("ln y"), w)
                b0 = math.exp(a) if a < 709.0 else math.inf
                b1 = slope if model == "power" else (math.exp(slope) if slope < 709.0 else math.inf)
                if not (math.isfinite(b0) and math.isfinite(b1) and b0 > 0.0 and (b1 > 0.0 or model == "power")):
                    return fit
                fitted = np.exp(a + slope * f)
            else:
                f = part.x if model == "linear" else part.transform(TRANSFORMS[model])
                b0, b1 = weighted_line(f, part.y, w)
                fitted = b0 + b1 * f
        except DegenerateData:
            return fit
        if not np.isfinite(fitted).all():
            return fit
        if model == "constant":
            r2 = 1.0 if fit.r_square == 1.0 else 0.0
        else:
            r2 = weighted_r_square(part.y, fitted, w)
            if model not in ("power", "exponential"):
                r2 = min(1.0, max(0.0, r2))
    if not all(map(math.isfinite, (b0, b1, r2))):
        return fit
    return Fit(model, float(b0), float(b1), float(r2), fit.x_start, fit.x_end, int((w < 0.5).sum()))


def _least_squares(part: Part, model: str) -> Fit:
    import numpy as np

    if part.n < 1:
        raise DegenerateData("there are no points")
    x_min, x_max = part.stat("x range")
    if model != "constant":
        if part.n < 2:
            raise DegenerateData("needs at least 2 points")
        if x_min == x_max:
            raise DegenerateData("all x values are equal")
        problem = domain_problem(model, x_min, part.stat("y min"))
        if problem:
            raise DegenerateData(problem)
    with np.errstate(all="ignore"):
        y_mean = part.stat("y mean")
        ss_tot = part.stat("ss_tot")
        if not (math.isfinite(y_mean) and math.isfinite(ss_tot)):
            raise DegenerateData("the computation overflowed (a result is not finite)")
        if model == "constant":
            b0, b1 = y_mean, 0.0
            r2 = 1.0 if ss_tot == 0.0 else 0.0
        elif model in ("power", "exponential"):
            # linear in log space: ln y = a + slope * f
            f = part.transform("ln x") if model == "power" else part.x
            a, slope = _line(f, part.transform("ln y"))
            b0 = math.exp(a) if a < 709.0 else math.inf
            b1 = slope if model == "power" else (math.exp(slope) if slope < 709.0 else math.inf)
            # b0 (and an exponential's b1) are exp() of something: 0 or inf means out of range
            if not (math.isfinite(b0) and math.isfinite(b1) and b0 > 0.0 and (b1 > 0.0 or model == "power")):
                raise DegenerateData("the computation overflowed (a coefficient is not representable)")
            fitted = np.exp(a + slope * f)
            if not np.isfinite(fitted).all():
                raise DegenerateData("the computation overflowed (the model is not finite on the data)")
            r2 = r_square(part.y, fitted)
        else:
            f = part.x if model == "linear" else part.transform(TRANSFORMS[model])
            f_mean = float(f.mean())
            centred = f - f_mean
            s_ff = _spread(centred)
            s_fy = float(np.einsum("i,i->", centred, part.stat("y centred")))
            b1 = s_fy / s_ff
            b0 = y_mean - b1 * f_mean
            # for least squares with an intercept, SS_reg = b1 * S_fy
            r2 = 1.0 if ss_tot == 0.0 else min(1.0, max(0.0, (b1 * s_fy) / ss_tot))
    values = (b0, b1, r2)
    if not all(map(math.isfinite, values)):
        raise DegenerateData("the computation overflowed (a result is not finite)")
    return Fit(model, float(b0), float(b1), float(r2), x_min, x_max)


def best_fit(fits: Iterable[Fit]) -> Fit | None:
    fits = list(fits)
    if not fits:
        return None
    limit = tie_limit(max(f.r_square for f in fits))
    tied = [f for f in fits if f.r_square >= limit]
    return min(tied, key=lambda f: RANK[f.model])


def as_points(x: Any, y: Any) -> Points:
    import numpy as np

    with np.errstate(all="ignore"):
        xa = np.asarray(x, dtype=np.float64).ravel()
        ya = np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError("x and y must have the same length")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise DegenerateData("the points contain NaN or infinity")
    return Points(xa, ya)
