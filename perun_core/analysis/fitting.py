"""Fitting one parametric model to one slice of points: the least squares core of regression.

:class:`Points` holds the points of one uid with their transforms (``ln x``,
``x^2``, ...) computed once; a :class:`Part` is a contiguous slice of them.
:func:`fit_part` fits one kind by least squares, or takes the kind's robust
fit when :func:`robust_fits` finds outliers in the part (the fits of all
kinds of a part are made and scored together, once), and raises
:class:`~perun_core.analysis.points.DegenerateData` when the data cannot
support the kind.  The formulas are listed in
:mod:`perun_core.analysis.regression`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from .parametric import MODELS, RANK, ties
from .points import DegenerateData, ignoring_float_errors, interval_bound, r_square
from .robust import BISQUARE_C, bisquare, residual_scale, start_weights, weighted_line, weighted_r_square

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
    #: the standard error the noise of the points gives a robust fit's r_square (see :func:`robust_fits`); 0
    #: for least squares
    r_square_error: float = 0.0

    def record(self, uid: Any, method: str) -> dict:
        record = {
            "uid": uid,
            "model": self.model,
            "method": method,
            "r_square": self.r_square,
            "coeffs": [{"name": "b0", "value": self.b0}, {"name": "b1", "value": self.b1}],
            "x_interval_start": interval_bound(self.x_start),
            "x_interval_end": interval_bound(self.x_end),
            "downweighted": self.downweighted,
        }
        if self.r_square_error > 0.0:
            record["r_square_error"] = self.r_square_error
        return record


class Points:
    """The points of one uid in a fixed order, with transforms computed once.

    ``kinds`` are the models being compared; the robust fits of a part (see
    :meth:`Part.weights`) pick their common weights among them.
    """

    def __init__(self, x: numpy.ndarray, y: numpy.ndarray, kinds: Iterable[str] = MODELS) -> None:
        self.x = x
        self.y = y
        self.kinds = tuple(kinds)
        self._cache: dict[str, Any] = {}

    def transform(self, name: str) -> numpy.ndarray:
        import numpy as np

        found = self._cache.get(name)
        if found is None:
            with ignoring_float_errors():
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

    def robust_fits(self) -> dict[str, Fit] | None:
        """The robust fits of the part's kinds, or None when least squares will do; computed once.

        See :func:`robust_fits`.
        """
        # kept with the points: the methods make a new Part of the same slice for each kind they fit
        key = f"robust {self.start}:{self.stop}"
        if key not in self.points._cache:
            self.points._cache[key] = robust_fits(self)  # type: ignore[assignment]
        return self.points._cache[key]  # type: ignore[return-value]

    def stat(self, name: str) -> Any:
        import numpy as np

        found = self._stats.get(name)
        if found is None:
            with ignoring_float_errors():
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
                elif name.startswith("centred "):
                    # (mean, values - mean, their sum of squares) of x, ln x or ln y: two kinds of a part
                    # regress on each (linear and exponential on x, logarithmic and power on ln x)
                    values = self.x if name == "centred x" else self.transform(name[len("centred "):])
                    mean = float(values.mean())
                    centred = values - mean
                    found = (mean, centred, float(np.einsum("i,i->", centred, centred)))
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


def _spread(s_ff: float) -> float:
    """The sum of squares of centred regressor values, refused unless positive and finite."""
    if not math.isfinite(s_ff):
        raise DegenerateData("the computation overflowed (a result is not finite)")
    if s_ff <= 0.0:
        raise DegenerateData("the transformed x values are all equal")
    return s_ff


def _centred(part: Part, regressor: str) -> tuple[float, numpy.ndarray, float]:
    """``(mean, centred values, sum of squares)`` of ``regressor`` (x or a transform) over ``part``; the sum
    checked by :func:`_spread`.  x, ln x and ln y are centred once per part."""
    import numpy as np

    if regressor in ("x", "ln x", "ln y"):
        mean, centred, s_ff = part.stat(f"centred {regressor}")
    else:
        values = part.transform(regressor)
        mean = float(values.mean())
        centred = values - mean
        s_ff = float(np.einsum("i,i->", centred, centred))
    return mean, centred, _spread(s_ff)


def _line(part: Part, regressor: str) -> tuple[float, float]:
    """Least squares line ``ln y = a + slope * f`` of ``regressor`` f: returns ``(a, slope)``."""
    import numpy as np

    f_mean, centred, s_ff = _centred(part, regressor)
    t_mean, target, _ = part.stat("centred ln y")
    slope = float(np.einsum("i,i->", centred, target)) / s_ff
    return t_mean - slope * f_mean, slope


def fit_part(part: Part, model: str) -> Fit:
    """Least squares, or the robust fit when the part has outliers (see :func:`robust_fits`)."""
    fit = _least_squares(part, model)  # the domain checks, and the answer without outliers
    robust = part.robust_fits()
    if robust is None:
        return fit
    if model not in robust:
        # a least-squares r_square is not comparable with the robust ones of the other kinds
        raise DegenerateData("the points that are not outliers cannot support it")
    return robust[model]


def _weighted_fit(part: Part, model: str, w: numpy.ndarray) -> tuple[float, float, numpy.ndarray]:
    """``(b0, b1, fitted values)`` of ``model`` by least squares weighted by ``w``; DegenerateData when the
    weighted points cannot support it or the result is not finite."""
    import numpy as np

    total = float(w.sum())
    if not (math.isfinite(total) and total > 0.0):
        raise DegenerateData("no point has weight")
    if model == "constant":
        b0, b1 = float(np.einsum("i,i->", w, part.y)) / total, 0.0
        fitted = np.full(part.n, b0)
    elif model in ("power", "exponential"):
        f = part.transform("ln x") if model == "power" else part.x
        a, slope = weighted_line(f, part.transform("ln y"), w)
        b0 = math.exp(a) if a < 709.0 else math.inf
        b1 = slope if model == "power" else (math.exp(slope) if slope < 709.0 else math.inf)
        if not (math.isfinite(b0) and math.isfinite(b1) and b0 > 0.0 and (b1 > 0.0 or model == "power")):
            raise DegenerateData("the computation overflowed (a coefficient is not representable)")
        fitted = np.exp(a + slope * f)
    else:
        f = part.x if model == "linear" else part.transform(TRANSFORMS[model])
        b0, b1 = weighted_line(f, part.y, w)
        fitted = b0 + b1 * f
    if not (math.isfinite(b0) and math.isfinite(b1) and np.isfinite(fitted).all()):
        raise DegenerateData("the computation overflowed (a result is not finite)")
    return b0, b1, fitted


#: Rounds of each stage of a robust fit at most (each usually settles in a few).
_ROUNDS = 20
#: A robust fit is first judged on the mean of its smallest squared residuals, this share of them (a third
#: of the points may be outliers without moving the judgement) ...
_TRIMMED_SHARE = 2.0 / 3.0
#: ... and the kinds whose judgement is within this factor of the best one's fit the bulk alike: the fewest
#: points any of them sets aside are the outliers, and all kinds are compared on the rest (so that no kind
#: hides where it misfits in the trimmed third)
_ALIKE = 4.0
#: Below this many points every part is fitted robustly; above, only a part in which the quick look of
#: :func:`~perun_core.analysis.robust.start_weights` finds points far off their neighbours.
_ALWAYS_LOOK = 200


def robust_fits(part: Part) -> dict[str, Fit] | None:
    """Robust fits of the kinds of ``part.points.kinds`` (those the data allow), or None for least squares.

    Each kind is fitted by :func:`_robust_fit` (residuals in log space for
    positive data, as preemption multiplies a time).  The outliers are
    counted as the fewest points that a kind fitting the bulk about as well
    as the best one (see :data:`_ALIKE`) sets aside, and every kind is
    scored on the mean of its squared residuals without that many of its
    largest ones: ``r_square`` is ``1 - T / T_constant``, the share of the
    bulk's spread that the kind explains, so the kind that explains the bulk
    best wins, unless a simpler kind is within the noise of it:
    ``r_square_error`` is the standard error the noise (the scatter of the
    best kind's squared residuals there) gives an ``r_square``, and
    :func:`~perun_core.analysis.parametric.ties` compares by it.  None when
    there are no outliers (fewer than one in 2000, at
    least one): then the exact least-squares fits stand.  Parts of more
    than :data:`_ALWAYS_LOOK` points are fitted robustly only when a quick
    look finds points far off their neighbours.
    """
    import numpy as np

    if part.n < 5:
        return None
    positive = part.stat("y min") > 0
    with ignoring_float_errors():
        log_y = part.transform("ln y") if positive else None
        screened = start_weights(part.x, part.y, log_y)
        if screened is None and part.n > _ALWAYS_LOOK:
            return None
        # a small part is also fitted from all its points, in case the quick look missed something
        starts = [screened] if screened is not None else []
        if part.n <= _ALWAYS_LOOK:
            starts.append(np.ones(part.n))
        x_min = part.stat("x range")[0]
        found: dict[str, _RobustFit] = {}
        for model in dict.fromkeys(("constant", *part.points.kinds)):
            if domain_problem(model, x_min, part.stat("y min")):
                continue
            tries = [t for t in (_robust_fit(part, model, start, log_y) for start in starts) if t is not None]
            if tries:
                found[model] = min(tries, key=lambda t: t.trimmed)
    if "constant" not in found:
        return None
    top = min(f.trimmed for f in found.values())
    # rounding: exact data leave every kind that fits them a trimmed mean of rounding errors, not 0
    alike = _ALIKE * top + _rounding(part, log_y) ** 2
    outliers = min(int((f.weights <= 0.0).sum()) for f in found.values() if f.trimmed <= alike)
    if outliers < max(1, part.n // 2000):
        return None
    # more outliers than the trimmed share leaves out is no longer a few measurements gone wrong
    kept = max(part.n - outliers, int(math.ceil(part.n * _TRIMMED_SHARE)))
    score, scatter = {}, {}
    with ignoring_float_errors():
        for m, f in found.items():
            squares = np.partition(f.absolute * f.absolute, kept - 1)[:kept]
            score[m] = float(squares.mean())
            scatter[m] = float(squares.std()) if kept > 1 else 0.0
    baseline = score["constant"]
    # what the noise alone does to a score: the scatter of the best kind's squared residuals (its residuals are
    # the noise, as far as the data tell) over the root of their count; the other kinds' scatter also holds
    # their misfit, which is what is being judged
    noise = scatter[min(score, key=score.__getitem__)] / math.sqrt(kept)
    x_start, x_end = part.stat("x range")
    fits = {}
    for model in part.points.kinds:
        if model not in found:
            continue
        if baseline > 0:
            r2 = min(1.0, 1.0 - score[model] / baseline)
            r2_error = noise / baseline
        else:
            r2, r2_error = (1.0 if score[model] <= 0 else 0.0), 0.0
        if model not in ("power", "exponential"):
            r2 = max(0.0, r2)
        fit = found[model]
        fits[model] = Fit(model, fit.b0, fit.b1, r2, x_start, x_end, int((fit.weights < 0.5).sum()),
                          r2_error if math.isfinite(r2_error) else 0.0)
    return fits


class _RobustFit(NamedTuple):
    trimmed: float              # mean of the smallest _TRIMMED_SHARE of the squared residuals
    b0: float
    b1: float
    weights: numpy.ndarray      # bisquare
    absolute: numpy.ndarray     # absolute residuals (log space for positive data)


def _robust_fit(part: Part, model: str, w: numpy.ndarray, log_y: numpy.ndarray | None) -> _RobustFit | None:
    """``model`` fitted robustly, starting from the weights ``w``.

    First the fit is concentrated on the points it explains best (least
    trimmed squares by concentration steps: fit, keep the
    :data:`_TRIMMED_SHARE` of the points with the smallest residuals, fit
    again, until the kept points stay the same; each step lowers the
    trimmed mean), then refined by Tukey's bisquare with a scale of 1.4826
    times the median absolute residual.  The trimmed mean is that of the
    final fit.  None when the model cannot be fitted to the weighted points
    or a result is not finite.
    """
    import numpy as np

    n = part.n
    kept = max(2, int(math.ceil(n * _TRIMMED_SHARE)))
    # a model may reach 0 or below where y is positive: its residual there is taken against a tiny value
    floor = float(part.stat("y min")) * 1e-9 if log_y is not None else 0.0
    tiny = _rounding(part, log_y)

    # the kinds fitted on y itself minimize relative errors (weights 1/y^2) when their residuals are taken in
    # log space, as the kinds fitted on ln y do
    relative = None
    if log_y is not None and model not in ("power", "exponential"):
        relative = np.exp(-2.0 * (log_y - float(np.median(log_y))))  # (median / y)^2: near 1, not under 1e-308
        relative[~np.isfinite(relative)] = 0.0

    def fitted_with(weights: numpy.ndarray) -> tuple[float, float, numpy.ndarray] | None:
        if int((weights > 0).sum()) < 2:
            return None
        try:
            b0, b1, fitted = _weighted_fit(part, model, weights if relative is None else weights * relative)
        except DegenerateData:
            return None
        found = np.abs(log_y - np.log(np.maximum(fitted, floor)) if log_y is not None else part.y - fitted)
        return (b0, b1, found) if np.isfinite(found).all() else None

    result = fitted_with(w)
    if result is None:
        return None
    for _ in range(_ROUNDS):
        # the kept points: residuals up to the kept-th smallest (ties at that value are all kept)
        limit = np.partition(result[2], kept - 1)[kept - 1]
        chosen = (result[2] <= limit).astype(np.float64)
        if np.array_equal(chosen, w):
            break
        w = chosen
        result = fitted_with(w)
        if result is None:
            return None
    for _ in range(_ROUNDS):
        absolute = result[2]
        new = bisquare(absolute / (BISQUARE_C * residual_scale(absolute, tiny)))
        settled = float(np.max(np.abs(new - w))) < 1e-3
        refined = fitted_with(new)
        if refined is None:
            break
        w, result = new, refined
        if settled:
            break
    b0, b1, absolute = result
    trimmed = float(np.partition(absolute * absolute, kept - 1)[:kept].mean())
    return _RobustFit(trimmed, b0, b1, w, absolute)


def _rounding(part: Part, log_y: numpy.ndarray | None) -> float:
    """A residual this small is a fit's rounding error, not a misfit (log space for positive data)."""
    import numpy as np

    return 1e-9 if log_y is not None else 1e-12 * float(np.abs(part.y).max())


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
    with ignoring_float_errors():
        y_mean = part.stat("y mean")
        ss_tot = part.stat("ss_tot")
        if not (math.isfinite(y_mean) and math.isfinite(ss_tot)):
            raise DegenerateData("the computation overflowed (a result is not finite)")
        if model == "constant":
            b0, b1 = y_mean, 0.0
            r2 = 1.0 if ss_tot == 0.0 else 0.0
        elif model in ("power", "exponential"):
            # linear in log space: ln y = a + slope * f
            regressor = "ln x" if model == "power" else "x"
            a, slope = _line(part, regressor)
            f = part.transform(regressor) if model == "power" else part.x
            b0 = math.exp(a) if a < 709.0 else math.inf
            b1 = slope if model == "power" else (math.exp(slope) if slope < 709.0 else math.inf)
            # b0 (and an exponential's b1) are exp() of something: 0 or inf means out of range
            if not (math.isfinite(b0) and math.isfinite(b1) and b0 > 0.0 and (b1 > 0.0 or model == "power")):
                raise DegenerateData("the computation overflowed (a coefficient is not representable)")
            fitted = np.exp(a + slope * f)
            if not np.isfinite(fitted).all():
                raise DegenerateData("the computation overflowed (the model is not finite on the data)")
            r2 = r_square(part.y, fitted, ss_tot)
        else:
            f_mean, centred, s_ff = _centred(part, "x" if model == "linear" else TRANSFORMS[model])
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
    """The fit :func:`~perun_core.analysis.parametric.best_model` would choose from the fits' records."""
    fits = list(fits)
    if not fits:
        return None
    top = max(fits, key=lambda f: f.r_square)
    tied = [f for f in fits if ties(top.r_square, top.r_square_error, f.r_square, f.r_square_error)]
    return min(tied, key=lambda f: RANK[f.model])


def as_points(x: Any, y: Any, kinds: Iterable[str] = MODELS) -> Points:
    import numpy as np

    with ignoring_float_errors():
        xa = np.asarray(x, dtype=np.float64).ravel()
        ya = np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError("x and y must have the same length")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise DegenerateData("the points contain NaN or infinity")
    return Points(xa, ya, kinds)
