"""Regression analysis: parametric models of ``y`` depending on ``x`` (spec §3.4.2, §5.1.2).

Models
------
Every model is fitted by least squares and stored with coefficients named as
:func:`perun_core.analysis.curves.plot_data_from_coefficients_of` evaluates
them:

=============  =====================  ==============================================
kind           formula                fitted as
=============  =====================  ==============================================
constant       ``b0``                 mean of y (stored with ``b1 = 0`` as the
                                      documented records are)
linear         ``b0 + b1*x``          y on x
logarithmic    ``b0 + b1*ln x``       y on ln x             (needs x > 0)
quadratic      ``b0 + b1*x^2``        y on x^2
nlogn          ``b0 + b1*x*ln x``     y on x ln x, 0 at x = 0 (needs x >= 0)
power          ``b0 * x^b1``          ln y on ln x          (needs x > 0, y > 0)
exponential    ``b0 * b1^x``          ln y on x             (needs y > 0)
=============  =====================  ==============================================

Robustness: a measurement now and then is far off (a call preempted by the
scheduler takes 3-10x its neighbours' time), and a handful of them drag a
least-squares curve far enough to make the right model look wrong.  So the
points of a uid are first weighed against their neighbourhood, whatever
the model (:func:`outlier_weights`: the median of the points of the same
size, or of the nearest sizes).  When some lie beyond Tukey's bisquare
limit (4.685 robust standard deviations of the log ratios), every model is
fitted by weighted least squares with the bisquare weights (0 for those
points, near 1 for the rest), and its ``r_square`` is the weighted one.  The record's ``downweighted`` counts the
points whose weight fell below one half (0 for a plain least-squares fit).
Data without such points keep the exact least-squares coefficients.

``r_square`` is always measured on the original y (``1 - SS_res/SS_tot``,
see :func:`~perun_core.analysis.points.r_square`), so the models of one uid
are comparable.  For the linearly fitted kinds it lies in [0, 1]; power and
exponential, fitted in log space, can score below 0 when they are worse
than the mean.  The best model is the one with the highest ``r_square``,
except that models whose unexplained share ``1 - r_square`` exceeds the
best one's by at most :data:`TIE_RELATIVE` (0.1 %, plus
:data:`TIE_ABSOLUTE`) count as tied, and the simplest of the tied ones (in
the order of :data:`MODELS`) wins.  So pure noise around a constant, where
every model explains next to nothing, is called constant.

A model the data cannot support is not stored: too few points, all x
equal, a logarithm of a value <= 0, or an overflow anywhere.  Each such case
is reported as a :class:`~perun_core.analysis.points.Skipped` entry; no model
record ever holds NaN or infinity.

Methods
-------
``full``
    every model on all points of the uid; all of them are stored.
``iterative``
    the points are shuffled (deterministically, see ``seed``) and split in
    ``steps`` parts; every model is fitted on the first part, then the
    currently best model takes in the next part, until the best model has
    seen all points.  Only that model is stored.
``initial_guess``
    every model is fitted on the first of ``steps`` shuffled parts; the best
    one is then fitted on all points and stored.
``interval``
    the points, sorted by x, are cut into ``steps`` parts of (nearly) equal
    counts, never splitting equal x values; the best model of each part is
    stored with that part's x interval.
``bisection``
    the best model of the whole x interval is found, then the interval is
    halved at its midpoint.  When a half's best model differs from its
    parent's, that half is split again; a half whose best model agrees is
    kept.  If both halves agree with the parent, the parent is kept whole.
    Splitting stops at depth ``steps`` or when a half would have fewer than
    :data:`MIN_SPLIT_POINTS` points.  The best model of each final interval
    is stored.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import InvalidParameter
from .points import (
    DEFAULT_X,
    DEFAULT_Y,
    AnalysisResult,
    DegenerateData,
    Skipped,
    as_point_sets,
    interval_bound,
    r_square,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "DEFAULT_STEPS",
    "METHODS",
    "MODELS",
    "MIN_SPLIT_POINTS",
    "TIE_ABSOLUTE",
    "TIE_RELATIVE",
    "best_model",
    "canonical_model_name",
    "evaluate_parametric",
    "fit_model",
    "fit_models",
    "regression_analysis",
]

#: Model kinds, simplest first (the order breaks ties between equally good models).
MODELS = ("constant", "logarithmic", "linear", "nlogn", "quadratic", "power", "exponential")
#: Computation methods of spec §3.4.2.
METHODS = ("full", "iterative", "initial_guess", "interval", "bisection")
DEFAULT_STEPS = 3
#: Models whose ``1 - r_square`` is within this share of the best one's are tied ...
TIE_RELATIVE = 1e-3
#: ... give or take this much.
TIE_ABSOLUTE = 1e-9
#: Bisection never makes an interval with fewer points than this.
MIN_SPLIT_POINTS = 5

_ALIASES = {
    "n log n": "nlogn",
    "nlogn": "nlogn",
    "n_log_n": "nlogn",
    "linearithmic": "nlogn",
    "log": "logarithmic",
    "const": "constant",
    "exp": "exponential",
}
_RANK = {name: rank for rank, name in enumerate(MODELS)}
_UNIT = "regression_analysis"


def canonical_model_name(name: str) -> str:
    """The canonical kind for ``name`` (``"n log n"`` -> ``"nlogn"``), case-insensitively.

    Raises :class:`~perun_core.errors.InvalidParameter` for unknown kinds.
    """
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _RANK:
        raise InvalidParameter(_UNIT, "regression_models", name, f"one of {', '.join(MODELS)} or 'all'")
    return key


def _model_list(regression_models: str | Iterable[str] | None) -> list[str]:
    if regression_models is None:
        return list(MODELS)
    names = [regression_models] if isinstance(regression_models, str) else list(regression_models)
    if not names or any(str(n).strip().lower() == "all" for n in names):
        return list(MODELS)
    chosen = dict.fromkeys(canonical_model_name(n) for n in names)
    return [m for m in MODELS if m in chosen]


# -- fitting one model on one slice of points ---------------------------------------------

class _Fit(NamedTuple):
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


class _Points:
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

    def part(self, start: int, stop: int) -> _Part:
        return _Part(self, start, stop)

    def weights(self) -> numpy.ndarray | None:
        """Outlier weights of all points (None: no outliers), computed once."""
        import numpy as np

        if "weights" not in self._cache:
            with np.errstate(all="ignore"):
                self._cache["weights"] = outlier_weights(self.x, self.y)  # type: ignore[assignment]
        return self._cache["weights"]


class _Part:
    """A contiguous slice of :class:`_Points` with its own summary statistics."""

    def __init__(self, points: _Points, start: int, stop: int) -> None:
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


def _domain_problem(model: str, x_min: float, y_min: float) -> str | None:
    """Why ``model`` cannot be fitted on data with these minima, or None."""
    if model in ("logarithmic", "power") and x_min <= 0:
        return "ln x is undefined: some x values are <= 0"
    if model == "nlogn" and x_min < 0:
        return "x ln x is undefined: some x values are < 0"
    if model in ("power", "exponential") and y_min <= 0:
        return "ln y is undefined: some y values are <= 0"
    return None


_TRANSFORMS = {"logarithmic": "ln x", "quadratic": "x^2", "nlogn": "x ln x"}


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


#: Tukey's bisquare constant (95 % efficiency under normal noise), in robust standard deviations.
BISQUARE_C = 4.685
#: Neighbours (in x order) whose median is a point's reference when its size is not repeated often.
_WINDOW = 7
#: Beyond this many points the neighbours' values are not moved along the local slope (see _local_reference).
_DENSE = 20_000


def _bisquare(u: numpy.ndarray) -> numpy.ndarray:
    import numpy as np

    clipped = np.clip(u, -1.0, 1.0)
    return (1.0 - clipped * clipped) ** 2


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
    weights[order] = _bisquare(u)
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


def _weighted_line(f: numpy.ndarray, target: numpy.ndarray, w: numpy.ndarray) -> tuple[float, float]:
    """Weighted least squares line ``target = a + slope * f``."""
    import numpy as np

    total = float(w.sum())
    f_mean = float(np.dot(w, f)) / total
    t_mean = float(np.dot(w, target)) / total
    centred = f - f_mean
    s_ff = float(np.dot(w, centred * centred))
    if not math.isfinite(s_ff):
        raise DegenerateData("the computation overflowed (a result is not finite)")
    if s_ff <= 0.0:
        raise DegenerateData("the transformed x values are all equal")
    slope = float(np.dot(w, centred * (target - t_mean))) / s_ff
    return t_mean - slope * f_mean, slope


def _weighted_r_square(y: numpy.ndarray, fitted: numpy.ndarray, w: numpy.ndarray) -> float:
    """``1 - SS_res/SS_tot`` with the weights: points set aside as outliers do not count."""
    import numpy as np

    total = float(w.sum())
    mean = float(np.dot(w, y)) / total
    ss_tot = float(np.dot(w, (y - mean) ** 2))
    ss_res = float(np.dot(w, (y - fitted) ** 2))
    if ss_tot <= 0:
        return 1.0 if ss_res <= 0 else 0.0
    return 1.0 - ss_res / ss_tot


def _fit_part(part: _Part, model: str) -> _Fit:
    """Least squares, or weighted least squares when some points are outliers (see :func:`outlier_weights`)."""
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
                a, slope = _weighted_line(f, part.transform("ln y"), w)
                b0 = math.exp(a) if a < 709.0 else math.inf
                b1 = slope if model == "power" else (math.exp(slope) if slope < 709.0 else math.inf)
                if not (math.isfinite(b0) and math.isfinite(b1) and b0 > 0.0 and (b1 > 0.0 or model == "power")):
                    return fit
                fitted = np.exp(a + slope * f)
            else:
                f = part.x if model == "linear" else part.transform(_TRANSFORMS[model])
                b0, b1 = _weighted_line(f, part.y, w)
                fitted = b0 + b1 * f
        except DegenerateData:
            return fit
        if not np.isfinite(fitted).all():
            return fit
        if model == "constant":
            r2 = 1.0 if fit.r_square == 1.0 else 0.0
        else:
            r2 = _weighted_r_square(part.y, fitted, w)
            if model not in ("power", "exponential"):
                r2 = min(1.0, max(0.0, r2))
    if not all(map(math.isfinite, (b0, b1, r2))):
        return fit
    return _Fit(model, float(b0), float(b1), float(r2), fit.x_start, fit.x_end, int((w < 0.5).sum()))


def _least_squares(part: _Part, model: str) -> _Fit:
    import numpy as np

    if part.n < 1:
        raise DegenerateData("there are no points")
    x_min, x_max = part.stat("x range")
    if model != "constant":
        if part.n < 2:
            raise DegenerateData("needs at least 2 points")
        if x_min == x_max:
            raise DegenerateData("all x values are equal")
        problem = _domain_problem(model, x_min, part.stat("y min"))
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
            f = part.x if model == "linear" else part.transform(_TRANSFORMS[model])
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
    return _Fit(model, float(b0), float(b1), float(r2), x_min, x_max)


def _tie_limit(top: float) -> float:
    """The lowest r_square that ties with a best r_square of ``top``."""
    return 1.0 - ((1.0 - top) * (1.0 + TIE_RELATIVE) + TIE_ABSOLUTE)


def _best(fits: Iterable[_Fit]) -> _Fit | None:
    fits = list(fits)
    if not fits:
        return None
    limit = _tie_limit(max(f.r_square for f in fits))
    tied = [f for f in fits if f.r_square >= limit]
    return min(tied, key=lambda f: _RANK[f.model])


def best_model(models: Iterable[dict]) -> dict | None:
    """The best of ``models`` (records): highest ``r_square``, ties to the simplest kind (see above).

    Records of kinds this module does not know rank after the known ones
    when tied.  Returns None for an empty input.
    """
    chosen = None
    chosen_key = None
    records = [m for m in models if isinstance(m.get("r_square"), (int, float))]
    if not records:
        return None
    limit = _tie_limit(max(m["r_square"] for m in records))
    for record in records:
        if record["r_square"] < limit:
            continue
        kind = _ALIASES.get(str(record.get("model", "")).lower(), str(record.get("model", "")).lower())
        key = _RANK.get(kind, len(MODELS))
        if chosen_key is None or key < chosen_key:
            chosen, chosen_key = record, key
    return chosen


# -- methods -------------------------------------------------------------------------------

class _Outcome:
    """Fits to store and skip reasons of one uid."""

    def __init__(self) -> None:
        self.fits: list[_Fit] = []
        self.skipped: list[tuple[str, str]] = []


def _fit_all(part: _Part, models: Sequence[str]) -> tuple[list[_Fit], list[tuple[str, str]]]:
    fits = []
    skipped = []
    for model in models:
        try:
            fits.append(_fit_part(part, model))
        except DegenerateData as exc:
            skipped.append((model, exc.reason))
    return fits, skipped


def _in_interval(part: _Part, reason: str) -> str:
    if part.n == 0:
        return reason
    low, high = part.stat("x range")
    return f"x in [{low:g}, {high:g}]: {reason}"


def _full(points: _Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
    outcome = _Outcome()
    outcome.fits, outcome.skipped = _fit_all(points.part(0, len(points.x)), models)
    return outcome


def _shuffled(points: _Points, rng: Any) -> _Points:
    order = rng.permutation(len(points.x))
    return _Points(points.x[order], points.y[order])


def _prefix_ends(n: int, steps: int) -> list[int]:
    import numpy as np

    ends = np.unique(np.round(np.linspace(0, n, steps + 1)).astype(np.int64)[1:])
    return [int(e) for e in ends if e > 0] or [n]


def _precheck(points: _Points, models: Sequence[str], outcome: _Outcome) -> list[str]:
    """Models whose domain fits all points; the others are skipped right away."""
    whole = points.part(0, len(points.x))
    if whole.n == 0:
        outcome.skipped.extend((m, "there are no points") for m in models)
        return []
    x_min, _x_max = whole.stat("x range")
    y_min = whole.stat("y min")
    usable = []
    for model in models:
        problem = _domain_problem(model, x_min, y_min)
        if problem:
            outcome.skipped.append((model, problem))
        else:
            usable.append(model)
    return usable


def _iterative(points: _Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
    outcome = _Outcome()
    models = _precheck(points, models, outcome)
    if not models:
        return outcome
    shuffled = _shuffled(points, rng)
    ends = _prefix_ends(len(shuffled.x), steps)
    last = len(ends) - 1
    progress = dict.fromkeys(models, 0)
    current: dict[str, _Fit] = {}

    def advance(model: str) -> None:
        # A model that cannot be fitted on a prefix gets more points at once;
        # only a failure on all points is final.
        while True:
            try:
                current[model] = _fit_part(shuffled.part(0, ends[progress[model]]), model)
                return
            except DegenerateData as exc:
                if progress[model] == last:
                    current.pop(model, None)
                    outcome.skipped.append((model, exc.reason))
                    return
                progress[model] += 1

    for model in models:
        advance(model)
    while current:
        best = _best(current.values())
        assert best is not None
        if progress[best.model] == last:
            outcome.fits.append(best)
            break
        progress[best.model] += 1
        advance(best.model)
    return outcome


def _initial_guess(points: _Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
    outcome = _Outcome()
    models = _precheck(points, models, outcome)
    if not models:
        return outcome
    shuffled = _shuffled(points, rng)
    sample = shuffled.part(0, _prefix_ends(len(shuffled.x), steps)[0])
    guesses, unfit = _fit_all(sample, models)
    ranking = []
    remaining = list(guesses)
    while remaining:
        best = _best(remaining)
        assert best is not None
        ranking.append(best.model)
        remaining.remove(best)
    ranking.extend(model for model, _reason in unfit)
    whole = shuffled.part(0, len(shuffled.x))
    for model in ranking:
        try:
            outcome.fits.append(_fit_part(whole, model))
            break
        except DegenerateData as exc:
            outcome.skipped.append((model, exc.reason))
    return outcome


def _sorted(points: _Points) -> _Points:
    import numpy as np

    if len(points.x) > 1 and not (points.x[1:] >= points.x[:-1]).all():
        order = np.argsort(points.x, kind="stable")
        return _Points(points.x[order], points.y[order])
    return points


def _interval(points: _Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
    import numpy as np

    outcome = _Outcome()
    ordered = _sorted(points)
    x = ordered.x
    n = len(x)
    if n == 0:
        outcome.skipped.extend((m, "there are no points") for m in models)
        return outcome
    cuts = [0]
    for raw in np.round(np.linspace(0, n, steps + 1)).astype(np.int64)[1:-1]:
        # move the cut to the start of its run of equal x values
        cut = int(np.searchsorted(x, x[int(raw)], side="left")) if raw < n else n
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(n)
    for start, stop in zip(cuts, cuts[1:]):
        part = ordered.part(start, stop)
        fits, skipped = _fit_all(part, models)
        best = _best(fits)
        if best is not None:
            outcome.fits.append(best)
        outcome.skipped.extend((m, _in_interval(part, r)) for m, r in skipped)
    return outcome


def _bisection(points: _Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
    import numpy as np

    outcome = _Outcome()
    ordered = _sorted(points)
    x = ordered.x

    def solve(part: _Part, fits: list[_Fit], skipped: list[tuple[str, str]], depth: int) -> None:
        best = _best(fits)

        def keep() -> None:
            if best is not None:
                outcome.fits.append(best)
            outcome.skipped.extend((m, _in_interval(part, r)) for m, r in skipped)

        if best is None or depth >= steps or part.n < 2 * MIN_SPLIT_POINTS:
            keep()
            return
        low, high = part.stat("x range")
        middle = low + (high - low) / 2.0
        cut = part.start + int(np.searchsorted(x[part.start:part.stop], middle, side="left"))
        if cut - part.start < MIN_SPLIT_POINTS or part.stop - cut < MIN_SPLIT_POINTS:
            keep()
            return
        halves = [ordered.part(part.start, cut), ordered.part(cut, part.stop)]
        results = [_fit_all(half, models) for half in halves]
        half_bests = [_best(half_fits) for half_fits, _ in results]
        if all(b is not None and b.model == best.model for b in half_bests):
            keep()
            return
        for half, (half_fits, half_skipped), half_best in zip(halves, results, half_bests):
            if half_best is not None and half_best.model == best.model:
                outcome.fits.append(half_best)
                outcome.skipped.extend((m, _in_interval(half, r)) for m, r in half_skipped)
            else:
                solve(half, half_fits, half_skipped, depth + 1)

    whole = ordered.part(0, len(x))
    if whole.n == 0:
        outcome.skipped.extend((m, "there are no points") for m in models)
        return outcome
    fits, skipped = _fit_all(whole, models)
    solve(whole, fits, skipped, 0)
    return outcome


_METHOD_FUNCTIONS = {
    "full": _full,
    "iterative": _iterative,
    "initial_guess": _initial_guess,
    "interval": _interval,
    "bisection": _bisection,
}


def _check_method(method: str) -> str:
    name = str(method).strip().lower().replace("-", "_")
    if name not in _METHOD_FUNCTIONS:
        raise InvalidParameter(_UNIT, "method", method, f"one of {', '.join(METHODS)}")
    return name


def _check_steps(steps: Any) -> int:
    if type(steps) is not int or steps < 1:
        raise InvalidParameter(_UNIT, "steps", steps, "a positive integer")
    return steps


def _rng_for(uid: Any, seed: int) -> Any:
    import numpy as np

    # one generator per uid, so a uid's result does not depend on the others
    return np.random.default_rng([seed, zlib.crc32(repr(uid).encode("utf-8", "replace"))])


# -- public API ------------------------------------------------------------------------------

def fit_model(x: Any, y: Any, model: str) -> dict:
    """Fit one ``model`` to all points: ``{model, coeffs, r_square, x_interval_start, x_interval_end}``.

    ``x`` and ``y`` are equal-length sequences of finite numbers.  Raises
    :class:`~perun_core.analysis.points.DegenerateData` when the data cannot
    support the model.
    """
    points = _as_points(x, y)
    fit = _fit_part(points.part(0, len(points.x)), canonical_model_name(model))
    record = fit.record(None, "full")
    del record["uid"], record["method"]
    return record


def _as_points(x: Any, y: Any) -> _Points:
    import numpy as np

    with np.errstate(all="ignore"):
        xa = np.asarray(x, dtype=np.float64).ravel()
        ya = np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError("x and y must have the same length")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise DegenerateData("the points contain NaN or infinity")
    return _Points(xa, ya)


def fit_models(
    x: Any,
    y: Any,
    *,
    method: str = "full",
    regression_models: str | Iterable[str] | None = None,
    steps: int = DEFAULT_STEPS,
    uid: Any = None,
    seed: int = 0,
) -> AnalysisResult:
    """Regression analysis of one uid's points; see :func:`regression_analysis`."""
    method = _check_method(method)
    steps = _check_steps(steps)
    models = _model_list(regression_models)
    try:
        points = _as_points(x, y)
    except DegenerateData as exc:
        return AnalysisResult([], [Skipped(uid, m, exc.reason) for m in models])
    # only the sampling methods shuffle; the others need no generator
    rng = _rng_for(uid, seed) if method in ("iterative", "initial_guess") else None
    outcome = _METHOD_FUNCTIONS[method](points, models, steps, rng)
    return AnalysisResult(
        [fit.record(uid, method) for fit in outcome.fits],
        [Skipped(uid, model, reason) for model, reason in outcome.skipped],
    )


def regression_analysis(
    data: Any,
    method: str = "full",
    regression_models: str | Iterable[str] | None = None,
    steps: int = DEFAULT_STEPS,
    depending_on: str = DEFAULT_X,
    of: str = DEFAULT_Y,
    *,
    seed: int = 0,
) -> AnalysisResult:
    """Fit regression models of ``of`` depending on ``depending_on`` for every uid.

    ``data`` is a profile (all regions), a snapshot, a resource table, a
    list of resources, or ready points ``{uid: (x, y)}`` (see
    :func:`~perun_core.analysis.points.as_point_sets`).  ``method`` is one
    of :data:`METHODS` (see the module docstring), ``regression_models`` a
    list of kinds (``None`` or ``"all"`` for every kind; ``"n log n"`` and
    ``"linearithmic"`` name ``nlogn``), ``steps`` the number of parts of
    the iterative, initial guess and interval methods and the maximal depth
    of bisection.  Shuffling is seeded by ``seed`` and the uid, so results
    are reproducible.

    Returns ``(models, skipped)``: records ``{uid, model, method, r_square,
    coeffs: [{name: "b0", value}, {name: "b1", value}], x_interval_start,
    x_interval_end}`` and ``(uid, model, reason)`` entries.
    """
    method = _check_method(method)
    steps = _check_steps(steps)
    models = _model_list(regression_models)
    out = AnalysisResult([], [])
    for uid, (x, y) in as_point_sets(data, depending_on, of).items():
        result = fit_models(x, y, method=method, regression_models=models, steps=steps, uid=uid, seed=seed)
        out.models.extend(result.models)
        out.skipped.extend(result.skipped)
    return out


# -- evaluation -----------------------------------------------------------------------------------

def _coefficients(model: dict) -> dict[str, float]:
    from .curves import model_coefficients

    return model_coefficients(model)


def evaluate_parametric(model: dict, xs: Any) -> numpy.ndarray:
    """Values of a parametric model record at ``xs`` (NaN where the formula is undefined).

    Uses the formulas of :func:`~perun_core.analysis.curves.plot_data_from_coefficients_of`,
    including ``b0 + b1*x + b2*x^2`` for quadratic records that have ``b2``.
    """
    import numpy as np

    from ..errors import InvalidProfile

    kind = str(model.get("model", model.get("type", ""))).strip().lower()
    kind = _ALIASES.get(kind, kind)
    if kind not in _RANK:
        raise InvalidProfile(None, "model", f"unknown model kind '{kind}'")
    c = _coefficients(model)
    needed = ("b0",) if kind == "constant" else ("b0", "b1")
    for name in needed:
        if name not in c:
            raise InvalidProfile(None, "model.coeffs", f"missing coefficient '{name}' of a {kind} model")
    x = np.asarray(xs, dtype=np.float64)
    with np.errstate(all="ignore"):
        if kind == "constant":
            out = np.full(x.shape, c["b0"])
        elif kind == "linear":
            out = c["b0"] + c["b1"] * x
        elif kind == "logarithmic":
            out = c["b0"] + c["b1"] * np.log(np.where(x > 0, x, np.nan))
        elif kind == "quadratic":
            out = c["b0"] + c["b1"] * x * x if "b2" not in c else c["b0"] + c["b1"] * x + c["b2"] * x * x
        elif kind == "nlogn":
            # x ln x tends to 0 at x = 0, as in the fit
            x_ln_x = np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, np.nan))
            out = c["b0"] + c["b1"] * x_ln_x
        elif kind == "power":
            out = c["b0"] * np.power(x, c["b1"])
        else:  # exponential
            out = c["b0"] * np.power(c["b1"], x)
    return np.where(np.isfinite(out), out, np.nan)
