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

Layout: the kinds, their records and ranking live in
:mod:`~perun_core.analysis.parametric`, fitting one kind in
:mod:`~perun_core.analysis.fitting`, the outlier weights in
:mod:`~perun_core.analysis.robust`; this module runs the methods below.

Robustness: a measurement now and then is far off (a call preempted by the
scheduler takes 10-40x its neighbours' time; on a busy machine a quarter of
the calls may be), and least squares would let those points pick the model
(an exponential, whose log-space fit they pull least).  So every part of
up to :data:`~perun_core.analysis.fitting._ALWAYS_LOOK` points, and every
larger one in which a quick look finds points far off their neighbours in
x (:func:`~perun_core.analysis.robust.start_weights`), is fitted robustly
by :func:`~perun_core.analysis.fitting.robust_fits`: each kind by least
trimmed squares, then Tukey's bisquare, with residuals in log space for
positive data (preemption multiplies a time; the kinds fitted on y then
minimize relative errors).  The fewest points that any kind fitting the
bulk about as well as the best one sets aside are the outliers; every kind
is scored on the rest, ``r_square = 1 - T / T_constant`` with ``T`` the
mean squared log residual there, so the kind that explains the bulk best
wins (or a simpler one within two standard errors of it: the record's
``r_square_error`` is the error the noise of the points gives a score),
and the record's ``downweighted`` counts the points its fit gave a weight
below one half.  Data without outliers (that sets none aside) keep
the exact least-squares coefficients and ``r_square`` below, and
``downweighted`` 0.

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

import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import InvalidParameter
from .fitting import Fit, Part, Points, as_points, best_fit, domain_problem, fit_part
from .parametric import (
    MODELS,
    TIE_ABSOLUTE,
    TIE_RELATIVE,
    best_model,
    canonical_model_name,
    evaluate_parametric,
)
from .points import DEFAULT_X, DEFAULT_Y, AnalysisResult, DegenerateData, Skipped, as_point_sets, ignoring_float_errors

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


#: Computation methods of spec §3.4.2.
METHODS = ("full", "iterative", "initial_guess", "interval", "bisection")
DEFAULT_STEPS = 3
#: Bisection never makes an interval with fewer points than this.
MIN_SPLIT_POINTS = 5

_UNIT = "regression_analysis"


def _model_list(regression_models: str | Iterable[str] | None) -> list[str]:
    if regression_models is None:
        return list(MODELS)
    names = [regression_models] if isinstance(regression_models, str) else list(regression_models)
    if not names or any(str(n).strip().lower() == "all" for n in names):
        return list(MODELS)
    chosen = dict.fromkeys(canonical_model_name(n) for n in names)
    return [m for m in MODELS if m in chosen]


# -- methods -------------------------------------------------------------------------------

class _Outcome:
    """Fits to store and skip reasons of one uid."""

    def __init__(self) -> None:
        self.fits: list[Fit] = []
        self.skipped: list[tuple[str, str]] = []


def _fit_all(part: Part, models: Sequence[str]) -> tuple[list[Fit], list[tuple[str, str]]]:
    fits = []
    skipped = []
    for model in models:
        try:
            fits.append(fit_part(part, model))
        except DegenerateData as exc:
            skipped.append((model, exc.reason))
    return fits, skipped


def _in_interval(part: Part, reason: str) -> str:
    if part.n == 0:
        return reason
    low, high = part.stat("x range")
    return f"x in [{low:g}, {high:g}]: {reason}"


def _full(points: Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
    outcome = _Outcome()
    outcome.fits, outcome.skipped = _fit_all(points.part(0, len(points.x)), models)
    return outcome


def _shuffled(points: Points, rng: Any) -> Points:
    order = rng.permutation(len(points.x))
    return Points(points.x[order], points.y[order], points.kinds)


def _prefix_ends(n: int, steps: int) -> list[int]:
    import numpy as np

    ends = np.unique(np.round(np.linspace(0, n, steps + 1)).astype(np.int64)[1:])
    return [int(e) for e in ends if e > 0] or [n]


def _precheck(points: Points, models: Sequence[str], outcome: _Outcome) -> list[str]:
    """Models whose domain fits all points; the others are skipped right away."""
    whole = points.part(0, len(points.x))
    if whole.n == 0:
        outcome.skipped.extend((m, "there are no points") for m in models)
        return []
    x_min, _x_max = whole.stat("x range")
    y_min = whole.stat("y min")
    usable = []
    for model in models:
        problem = domain_problem(model, x_min, y_min)
        if problem:
            outcome.skipped.append((model, problem))
        else:
            usable.append(model)
    return usable


def _iterative(points: Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
    outcome = _Outcome()
    models = _precheck(points, models, outcome)
    if not models:
        return outcome
    shuffled = _shuffled(points, rng)
    ends = _prefix_ends(len(shuffled.x), steps)
    last = len(ends) - 1
    progress = dict.fromkeys(models, 0)
    current: dict[str, Fit] = {}

    def advance(model: str) -> None:
        # A model that cannot be fitted on a prefix gets more points at once;
        # only a failure on all points is final.
        while True:
            try:
                current[model] = fit_part(shuffled.part(0, ends[progress[model]]), model)
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
        best = best_fit(current.values())
        assert best is not None
        if progress[best.model] == last:
            outcome.fits.append(best)
            break
        progress[best.model] += 1
        advance(best.model)
    return outcome


def _initial_guess(points: Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
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
        best = best_fit(remaining)
        assert best is not None
        ranking.append(best.model)
        remaining.remove(best)
    ranking.extend(model for model, _reason in unfit)
    whole = shuffled.part(0, len(shuffled.x))
    for model in ranking:
        try:
            outcome.fits.append(fit_part(whole, model))
            break
        except DegenerateData as exc:
            outcome.skipped.append((model, exc.reason))
    return outcome


def _sorted(points: Points) -> Points:
    import numpy as np

    if len(points.x) > 1 and not (points.x[1:] >= points.x[:-1]).all():
        order = np.argsort(points.x, kind="stable")
        return Points(points.x[order], points.y[order], points.kinds)
    return points


def _interval(points: Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
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
        best = best_fit(fits)
        if best is not None:
            outcome.fits.append(best)
        outcome.skipped.extend((m, _in_interval(part, r)) for m, r in skipped)
    return outcome


def _bisection(points: Points, models: Sequence[str], steps: int, rng: Any) -> _Outcome:
    import numpy as np

    outcome = _Outcome()
    ordered = _sorted(points)
    x = ordered.x

    def solve(part: Part, fits: list[Fit], skipped: list[tuple[str, str]], depth: int) -> None:
        best = best_fit(fits)

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
        half_bests = [best_fit(half_fits) for half_fits, _ in results]
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
    kind = canonical_model_name(model)
    points = as_points(x, y, (kind,))
    fit = fit_part(points.part(0, len(points.x)), kind)
    record = fit.record(None, "full")
    del record["uid"], record["method"]
    return record


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
    with ignoring_float_errors():  # once for the whole fit: its many steps then skip numpy's costly errstate
        try:
            points = as_points(x, y, models)
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
