"""The part of a slow input that makes it slow, scaled, and how the cost grows with it.

A slow input found by mutation nearly always holds a repeated shape: a run of
one character, a substring repeated many times, delimiters nested many deep.
:func:`periodic_regions` finds the longest such region (a unit of up to 32
code points repeated at least three times) and the other regions repeated
just as often (the closing half of a nesting), which :func:`scaled` grows or
shrinks together to ``k`` repetitions.

:func:`fit_growth` fits the cost above the input without the part against
``k`` with the project's regression models
(:func:`perun_core.analysis.regression.fit_models`): the power model's
exponent says how fast the cost grows (about 1 linear, 2 quadratic, 3
cubic); an exponential model that fits at least as well as the power model,
with an exponent beyond polynomial reach, says exponential.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..safetext import escape_controls

__all__ = ["Growth", "Region", "describe", "fit_growth", "order_rank", "periodic_regions", "periodic_regions_without",
           "scaled"]

MAX_PERIOD = 32
MIN_COUNT = 3
#: a growth claim needs at least this many points above the noise floor
MIN_POINTS = 4
#: an exponent at least this big is superlinear
SUPERLINEAR = 1.5
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
    on other lines, the closing half of a nesting); [] if none.

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
        if abs(other.count - main.count) > tolerance:
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


def describe(text: str, regions: Sequence[Region]) -> str:
    """``the run of 'a' on line 3`` / ``the repeats of '<b>'`` (with the parts scaled with it)."""
    if not regions:
        return "copies of the whole input"
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

    def as_json(self) -> dict:
        return {"order": self.order, "exponent": self.exponent, "model": self.model, "r_square": self.r_square,
                "superlinear": self.superlinear, "part": self.part, "counts": self.counts, "sizes": self.sizes,
                "costs": self.costs, "base_cost": self.base, "factor_per_repetition": self.per_step}


def _coefficient(record: dict, name: str) -> float:
    return next(float(c["value"]) for c in record["coeffs"] if c["name"] == name)


def _order_name(exponent: float) -> str:
    if exponent < 1.3:
        return "linear"
    if exponent < 1.6:
        return "superlinear"
    if exponent < 2.5:
        return "quadratic"
    if exponent < 3.5:
        return "cubic"
    return "polynomial"


def fit_growth(counts: Sequence[int], costs: Sequence[float], base: float, noise: float) -> Growth:
    """Fit the cost above ``base`` against the repetition ``counts``; points within the noise are left out."""
    # lazy: the regression models bring numpy, which the fuzzer's start-up does not need
    from ..analysis.regression import fit_models

    floor = max(3 * noise, 0.05) * max(base, 1e-12)
    points = [(k, c - base) for k, c in zip(counts, costs) if k > 0 and c - base > floor]
    if len(points) < MIN_POINTS:
        return Growth("not measurable", None, None, None, False)
    # the order is what the largest counts show (a linear term or the noise dominates small ones): fit the
    # upper half of the points, at least MIN_POINTS of them
    points = sorted(points)[-max(MIN_POINTS, len(points) // 2):]
    xs = [float(k) for k, _ in points]
    ys = [e for _, e in points]
    models, _ = fit_models(xs, ys, regression_models=("linear", "quadratic", "power", "exponential"))
    by_kind = {m["model"]: m for m in models}
    power = by_kind.get("power")
    if power is None:
        return Growth("not measurable", None, None, None, False)
    exponent = _coefficient(power, "b1")
    exponential = by_kind.get("exponential")
    if exponential is not None and exponential["r_square"] >= power["r_square"] - 0.01 and exponent > 3.5:
        factor = _coefficient(exponential, "b1")
        return Growth("exponential", round(exponent, 2), "exponential", round(exponential["r_square"], 4),
                      factor > 1.0, per_step=round(factor, 4))
    r_square = power["r_square"]
    order = _order_name(exponent)
    if order == "polynomial":
        order = f"polynomial (n^{exponent:.1f})"
    return Growth(order, round(exponent, 2), "power", round(r_square, 4),
                  exponent >= SUPERLINEAR and r_square >= 0.8)


def order_rank(growth: Growth | None) -> float:
    """A number that sorts growth orders: exponential above every polynomial, higher exponents above lower."""
    if growth is None or growth.exponent is None:
        return -1.0
    if growth.order == "exponential":
        return 1e6 + (growth.per_step or 1.0)
    return growth.exponent if math.isfinite(growth.exponent) else -1.0
