"""The part of a slow input that makes it slow, scaled, and how the cost grows with it.

A slow input found by mutation nearly always holds a repeated shape: a run of
one character, a substring repeated many times, delimiters nested many deep.
:func:`periodic_regions` finds the longest such region (a unit of up to 32
code points repeated at least three times) and the other regions repeated
just as often (the closing half of a nesting), which :func:`scaled` grows or
shrinks together to ``k`` repetitions.

:func:`fit_growth` fits the cost against ``k`` as a constant (the start-up)
plus a linear term plus the fastest term the points show (a power of ``k``
or an exponential): that term's power says how fast the cost grows (about 1
linear, 2 quadratic, 3 cubic).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..safetext import escape_controls

__all__ = ["MIN_SPAN", "WHOLE_INPUT", "Growth", "Region", "describe", "finding_rank", "fit_growth", "order_rank",
           "periodic_regions", "periodic_regions_without", "scaled"]

MAX_PERIOD = 32
MIN_COUNT = 3
#: a growth claim needs at least this many points above the noise floor
MIN_POINTS = 4
#: an exponent at least this big is superlinear
SUPERLINEAR = 1.5
#: a power's exponent is named only when the counts whose cost is above the noise of the start-up (every one of
#: them up to the largest) span at least this ratio
MIN_SPAN = 4.0
#: a power above linear is believed over the straight line ``a + l*n`` only when its squared relative error is below
#: this share of the line's: a steep power on top of a large linear term, fitted through a line whose points a busy
#: machine lifted by 10-20 %, took half the line's error away (sqlparse's linear run of ',' fitted n^3.4 over
#: 753..3012), while every real superlinear cost of the stored benchmark runs took 89 % of it or more
POWER_OVER_LINE = 0.25
_PATTERNS = [re.compile(r"(.{%d})\1{%d,}" % (p, MIN_COUNT - 1), re.DOTALL) for p in range(1, MAX_PERIOD + 1)]


@dataclass(frozen=True, slots=True)
class Region:
    """``unit`` repeated ``count`` times from code point ``start`` on."""

    start: int
    unit: str
    count: int

    @property
    def end(self) -> int:
        return self.start + len(self.unit) * self.count


def periodic_regions(text: str) -> list[Region]:
    """The longest repeated region of ``text`` and the regions repeated as often (to scale in step: its copies
    on other lines, the closing half of a nesting), and every other run of its unit; [] if none.

    A region covers at least eight code points; between two of equal cover the
    shorter unit wins (a run of "a" rather than repeats of "aa").
    """
    found: list[Region] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            unit = match.group(1)
            span = match.end() - match.start()
            if span >= 8:
                found.append(Region(match.start(), unit, span // len(unit)))
    if not found:
        return []
    found.sort(key=lambda r: (-(len(r.unit) * r.count), len(r.unit), r.start))
    main = found[0]
    chosen = [main]
    tolerance = max(1, main.count // 20)
    for other in found[1:]:
        # copies of the same unit scale with it whatever their count: left at their size they may hold the cost
        # alone (a long run split by the mutations into runs of other lengths)
        if abs(other.count - main.count) > tolerance and other.unit != main.unit:
            continue
        if any(other.start < c.end and c.start < other.end for c in chosen):
            continue
        chosen.append(other)
    return sorted(chosen, key=lambda r: r.start)


def periodic_regions_without(text: str, taken: Sequence[Region]) -> list[Region]:
    """Other repeated regions of ``text``, of units other than those ``taken``, largest first (one per unit)."""
    units = {r.unit for r in taken}
    found: dict[str, Region] = {}
    for pattern in _PATTERNS[:8]:
        for match in pattern.finditer(text):
            unit = match.group(1)
            span = match.end() - match.start()
            if span < 8 or unit in units or _is_power(unit):
                continue
            if any(match.start() < r.end and r.start < match.end() for r in taken):
                continue
            region = Region(match.start(), unit, span // len(unit))
            if unit not in found or region.count > found[unit].count:
                found[unit] = region
    return sorted(found.values(), key=lambda r: -(len(r.unit) * r.count))


def _is_power(unit: str) -> bool:
    """Whether ``unit`` is a shorter unit repeated ("aa", "abab"): its region is found with that unit already."""
    return any(len(unit) % p == 0 and unit == unit[:p] * (len(unit) // p) for p in range(1, len(unit)))


def scaled(text: str, regions: Sequence[Region], k: int) -> str:
    """``text`` with every region's unit repeated ``k`` times instead of its count."""
    pieces = []
    at = 0
    for region in regions:
        pieces.append(text[at:region.start])
        pieces.append(region.unit * k)
        at = region.end
    pieces.append(text[at:])
    return "".join(pieces)


#: What :func:`describe` calls a growth of the whole input (no part of it scaled alone).
WHOLE_INPUT = "copies of the whole input"


def describe(text: str, regions: Sequence[Region]) -> str:
    """``the run of 'a' on line 3`` / ``the repeats of '<b>'`` (with the parts scaled with it)."""
    if not regions:
        return WHOLE_INPUT
    main = max(regions, key=lambda r: len(r.unit) * r.count)
    shown = escape_controls(main.unit if len(main.unit) <= 12 else main.unit[:12] + "…")
    what = f"the run of '{shown}'" if len(main.unit) == 1 else f"the repeats of '{shown}'"
    line = text.count("\n", 0, main.start) + 1
    where = f" on line {line}" if "\n" in text else ""
    others = len(regions) - 1
    return what + where + (f" (with {others} part{'s' * (others > 1)} repeated as often)" if others else "")


@dataclass
class Growth:
    """How the cost grows with the repetitions of the part: ``order`` in words, the fitted numbers, the points."""

    order: str
    exponent: float | None
    model: str | None
    r_square: float | None
    superlinear: bool
    part: str = ""
    counts: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    base: float = 0.0
    per_step: float | None = None
    #: a power above linear measured over too narrow a range to name its exponent (``exponent`` is then None):
    #: the slope of the cost over the start-up there, which the true exponent is at least about
    at_least: float | None = None
    #: the counts (least, largest) whose cost was above the noise of the start-up, every one up to the largest
    measured: tuple[int, int] | None = None

    def as_json(self) -> dict:
        return {"order": self.order, "exponent": self.exponent, "model": self.model, "r_square": self.r_square,
                "superlinear": self.superlinear, "part": self.part, "counts": self.counts, "sizes": self.sizes,
                "costs": self.costs, "base_cost": self.base, "factor_per_repetition": self.per_step,
                "exponent_at_least": self.at_least,
                "above_noise": list(self.measured) if self.measured is not None else None}


_POWERS = [round(1.1 + 0.1 * i, 1) for i in range(70)]  # 1.1 .. 8.0


@dataclass
class _Fit:
    """``cost = a + l*n + b*g(n)`` (a, l, b >= 0), fitted on relative errors; ``rss`` their sum of squares."""

    term: float  # the power of g, or its factor per step for an exponential
    coefficients: tuple[float, float, float]
    rss: float

    def parts_at_top(self, columns_top: tuple[float, float, float]) -> tuple[float, float, float]:
        return tuple(c * t for c, t in zip(self.coefficients, columns_top))  # type: ignore[return-value]


def _nnls_fit(ns, ys, column, offset: float = 0.0) -> tuple[tuple[float, ...], float]:
    """Non-negative least squares of ``ys - offset`` on 1, n/n_max and ``column`` (already scaled to at most 1)
    in errors relative to ``ys``: the coefficients (the constant's without ``offset``) and the sum of squared
    relative residuals.

    With three columns at most, every subset of them is solved by plain least squares and the best one
    with no negative coefficient is the non-negative solution (scipy's solver would cost seconds of
    import on a loaded machine for that)."""
    # lazy: numpy is needed only when a finding is analysed
    import numpy as np

    x = ns / ns[-1]
    columns = [np.ones_like(x), x] + ([column] if column is not None else [])
    matrix = np.column_stack(columns) / ys[:, None]
    target = (ys - offset) / ys
    best: tuple[tuple[float, ...], float] = ((0.0,) * len(columns), float(len(ys)))
    for size in range(1, len(columns) + 1):
        for subset in itertools.combinations(range(len(columns)), size):
            solution = np.linalg.lstsq(matrix[:, subset], target, rcond=None)[0]
            if np.any(solution < 0):
                continue
            rss = float(np.sum((matrix[:, subset] @ solution - target) ** 2))
            if rss < best[1]:
                coefficients = [0.0] * len(columns)
                for index, value in zip(subset, solution):
                    coefficients[index] = float(value)
                best = (tuple(coefficients), rss)
    return best


def _best_fit(ns, ys, kind: str, offset: float) -> _Fit:
    """The best ``a + l*n + b*n^p`` (kind "power", p from 1.1 to 8) or ``a + l*n + b*r^n`` ("exponential",
    r from 1.01 to 16 per step) on a grid of p or r, with ``a`` at least ``offset``."""
    import numpy as np  # lazy, as above

    best: _Fit | None = None
    if kind == "power":
        terms = _POWERS
        columns = ((p, (ns / ns[-1]) ** p) for p in terms)
    else:
        terms = [float(r) for r in np.exp(np.linspace(math.log(1.01), math.log(16.0), 64))]
        columns = ((r, np.exp((ns - ns[-1]) * math.log(r))) for r in terms)
    for term, column in columns:
        coefficients, rss = _nnls_fit(ns, ys, column, offset)
        if best is None or rss < best.rss - 1e-15:
            best = _Fit(term, coefficients, rss)  # type: ignore[arg-type]
    assert best is not None
    # refined around the best grid value, a twentieth of a step at a time
    at = terms.index(best.term)
    low, high = terms[max(at - 1, 0)], terms[min(at + 1, len(terms) - 1)]
    for i in range(41):
        term = low + (high - low) * i / 40
        coefficients, rss = _nnls_fit(ns, ys, _term_column(ns, kind, term), offset)
        if rss < best.rss - 1e-15:
            best = _Fit(round(term, 3), coefficients, rss)  # type: ignore[arg-type]
    return best


def _order_name(exponent: float) -> str:
    if exponent < 1.3:
        return "linear"
    if exponent < 1.6:
        return "superlinear"
    if exponent < 2.5:
        return "quadratic"
    if exponent < 3.5:
        return "cubic"
    return f"polynomial (n^{exponent:.1f})"


def fit_growth(counts: Sequence[int], costs: Sequence[float], base: float, noise: float) -> Growth:
    """The order of growth of ``costs`` in the repetition ``counts``.

    The cost is fitted as ``a + l*n + b*n^p`` and as ``a + l*n + b*r^n``
    (every coefficient non-negative, errors relative): the constant ``a``
    (at least ``base`` less its noise) takes the start-up and whatever does
    not depend on ``n``, the linear
    term the part that is merely proportional, so that a quadratic whose
    linear part still dominates at the sizes measured is seen as quadratic,
    and no start-up, however large, passes for a slower growth.  A term
    counts only when it makes more of the cost at the largest count than the
    noise can (``max(3 * noise, 5 %)`` of it, ``base`` being the cost without
    the part): the fastest such term names the order, the exponential one
    only when it fits clearly better than every power, a power above linear
    only when it leaves under a quarter of a straight line's squared error
    (:data:`POWER_OVER_LINE`).  No term above the
    noise is a constant cost, which is no growth.

    An order above linear must be carried by more than the largest point.
    One point above the noise, however high (a burst of load during the
    longest run, a one-off cost), is fitted best by the steepest term of the
    grid, n^8, which is flat below it; the shape of a growth shows only
    between two points.  So a faster term is believed only when (1) it
    already makes more than the noise of the cost at the second-largest
    count (the measured rise from there to the largest count is then the
    rise the order claims, not the noise of one run), and (2) fitted with
    the same exponent (or factor) on the points without the largest one it
    still makes more than the noise of their largest cost (the points
    below the top grow that way too, rather than lie on a straight line
    the top point leaves).  Otherwise the
    largest point is left out and the rest decide, by the same rule (fewer
    than :data:`MIN_POINTS` left: not measurable).  A true power or
    exponential measured over several points passes both; a linear cost
    with one high point at the top is linear.

    An exponent needs a wide range of counts.  Over counts less than
    :data:`MIN_SPAN` apart (those whose cost is above the noise of the
    start-up, every one of them up to the largest), a few per cent of load on
    the top or bottom points turns the fitted exponent by a whole order (a
    quadratic over 1002..2808 was fitted n^3.1).  Such a power above linear is
    named ``superlinear`` with no exponent; ``at_least`` is the slope of the
    cost over the start-up between those counts (a start-up, a linear term and
    any lower term only flatten it, so the true exponent is about that or
    more).  An exponential is not affected: its factor per repetition is fitted
    from the differences of the counts, not their ratios.
    """
    import numpy as np  # lazy, as above

    points = sorted((k, c) for k, c in zip(counts, costs) if k > 0 and c > 0)
    if len(points) < MIN_POINTS:
        return Growth("not measurable", None, None, None, False)
    ns = np.array([float(k) for k, _ in points])
    ys = np.array([c for _, c in points])
    while True:
        growth, term = _fit(ns, ys, base, noise)
        if term is None or _carried_below_the_top(ns, ys, growth.model, term, base, noise):
            return _within_its_range(growth, ns, ys, base, noise)
        ns, ys = ns[:-1], ys[:-1]
        if len(ns) < MIN_POINTS:
            return Growth("not measurable", None, None, None, False)


def _within_its_range(growth: Growth, ns, ys, base: float, noise: float) -> Growth:
    """``growth`` with the counts it was measured above the noise over; a power above linear over less than
    :data:`MIN_SPAN` of them loses its exponent for a lower bound (see :func:`fit_growth`)."""
    import numpy as np  # lazy, as above

    floor = max(3 * noise, 0.05) * max(base, 0.0)
    above = len(ns)
    while above > 0 and float(ys[above - 1]) - base > floor:
        above -= 1
    if above == len(ns):
        return growth
    low, high = int(ns[above]), int(ns[-1])
    growth.measured = (low, high)
    if growth.model != "power" or growth.exponent is None or growth.order == "linear" or high >= MIN_SPAN * low:
        return growth
    # the least-squares slope of log(cost - start-up) over log(count), on the counts above the noise
    xs = np.log(ns[above:])
    excess = np.log(ys[above:] - base)
    slope = float(np.polyfit(xs, excess, 1)[0]) if len(xs) > 1 else 1.0
    return Growth("superlinear", None, "power", growth.r_square, growth.superlinear, at_least=round(slope, 2),
                  measured=(low, high))


def _term_column(ns, model: str, term: float):
    """The fast term's column over ``ns``, 1 at the largest count: ``(n/n_max)^p`` or ``r^(n-n_max)``."""
    import numpy as np  # lazy, as above

    return (ns / ns[-1]) ** term if model == "power" else np.exp((ns - ns[-1]) * math.log(term))


def _carried_below_the_top(ns, ys, model: str, term: float, base: float, noise: float) -> bool:
    """Whether the fast term (``model`` "power" or "exponential" with ``term``, fitted on every point) shows
    below the largest count: it makes more than the noise of the cost at the second-largest count, and fitted
    again on the points without the largest one (same exponent or factor) it still makes more than the noise
    of their largest cost."""
    relative_floor = max(3 * noise, 0.05)
    offset = _offset(ys, base, noise)
    coefficients, _ = _nnls_fit(ns, ys, _term_column(ns, model, term), offset)
    if coefficients[2] * _term_column(ns, model, term)[-2] <= relative_floor * float(ys[-2]):
        return False
    rest, rest_ys = ns[:-1], ys[:-1]
    coefficients, _ = _nnls_fit(rest, rest_ys, _term_column(rest, model, term), _offset(rest_ys, base, noise))
    return coefficients[2] > relative_floor * float(rest_ys[-1])


def _offset(ys, base: float, noise: float) -> float:
    """The least constant of a fit: the measured cost without the part, less its noise (never above the cost at
    the smallest count)."""
    return max(0.0, min(max(base, 0.0), float(ys[0])) * (1 - max(3 * noise, 0.05)))


def _fit(ns, ys, base: float, noise: float) -> tuple[Growth, float | None]:
    """The fit of :func:`fit_growth` on the points ``ns``, ``ys`` (sorted by count, at least three), and the
    power or factor per step of its term faster than linear (None when the order named is linear or none)."""
    import numpy as np  # lazy, as above

    relative_floor = max(3 * noise, 0.05)
    top = float(ys[-1])
    if top - max(base, 0.0) <= relative_floor * max(base, 1e-12) and top <= (1 + relative_floor) * float(ys[0]):
        return Growth("constant", None, None, None, False), None
    # the constant is at least the measured cost without the part (less its noise): left free, a smaller
    # constant plus a flatter power fits a quadratic over the few-fold range of counts measured as well as the
    # truth does, once the points carry a few per cent of noise (2 fitted as 1.4 on a busy machine)
    offset = _offset(ys, base, noise)
    linear_coefficients, linear_rss = _nnls_fit(ns, ys, None, offset)
    power = _best_fit(ns, ys, "power", offset)
    exponential = _best_fit(ns, ys, "exponential", offset)
    total = float(np.sum(((ys - ys.mean()) / ys) ** 2)) or 1e-30

    def significant(part: float) -> bool:
        return part > relative_floor * top

    def r_square(rss: float) -> float:
        return round(max(0.0, 1.0 - rss / total), 4)

    exp_part = exponential.coefficients[2]  # the column is 1 at the largest count
    if significant(exp_part) and exponential.rss < 0.5 * power.rss and exponential.rss < 0.5 * linear_rss:
        # no power exponent: the factor per repetition says how fast it grows
        return Growth("exponential", None, "exponential", r_square(exponential.rss), exponential.term > 1.0,
                      per_step=round(exponential.term, 4)), exponential.term
    power_part = power.coefficients[2]
    if significant(power_part) and power.rss < POWER_OVER_LINE * linear_rss:
        order = _order_name(power.term)
        return Growth(order, power.term, "power", r_square(power.rss), power.term >= SUPERLINEAR), \
            (power.term if order != "linear" else None)
    if significant(linear_coefficients[1]):
        return Growth("linear", 1.0, "linear", r_square(linear_rss), False), None
    return Growth("constant", None, None, None, False), None


def finding_rank(growth: Growth | None) -> tuple[float, bool]:
    """How findings are ranked: by growth order (the named class: a quadratic fitted n^2.1 and one fitted n^1.9
    are alike, as the fitted exponent wanders with the load), then a growth in one part of the input before
    one of the whole input (it says where the cost comes from)."""
    if growth is not None and growth.exponent is None and growth.at_least is not None:
        # an exponent too loose to name: ranked by the class of the slope it is at least about, never below
        # superlinear (a cubic measured near its top only is not ranked below a quadratic measured widely)
        rank = max(SUPERLINEAR, {"linear": 1.0, "superlinear": 1.5, "quadratic": 2.0,
                                 "cubic": 3.0}.get(_order_name(growth.at_least), float(round(growth.at_least))))
    elif growth is None or growth.order == "exponential" or growth.exponent is None \
            or not math.isfinite(growth.exponent):
        rank = order_rank(growth)
    else:
        classes = {"linear": 1.0, "superlinear": 1.5, "quadratic": 2.0, "cubic": 3.0}
        rank = classes.get(_order_name(growth.exponent), float(round(growth.exponent)))
    return rank, growth is not None and growth.part != WHOLE_INPUT


def order_rank(growth: Growth | None) -> float:
    """A number that sorts growth orders: exponential above every polynomial, higher exponents above lower."""
    if growth is not None and growth.order == "exponential":
        return 1e6 + (growth.per_step or 1.0)
    if growth is not None and growth.exponent is None and growth.at_least is not None:
        return max(SUPERLINEAR, growth.at_least)
    if growth is None or growth.exponent is None:
        return -1.0
    return growth.exponent if math.isfinite(growth.exponent) else -1.0
