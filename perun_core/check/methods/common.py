"""Helpers every method uses: which locations to compare, presence findings, parameters."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ...errors import InvalidParameter
from ..results import Finding, PerformanceChange

if TYPE_CHECKING:  # pragma: no cover
    from ..data import ProfileData, Sample

__all__ = ["float_param", "location_pairs", "presence_finding", "relative", "typical"]


def float_param(method: str, params: Mapping[str, Any], name: str, default: float, *,
                minimum: float | None = None, maximum: float | None = None) -> float:
    """A numeric parameter of a method, checked; raises InvalidParameter."""
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidParameter(method, name, value, "a number")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = f"between {minimum:g} and {maximum:g}" if minimum is not None and maximum is not None else \
            f"at least {minimum:g}" if minimum is not None else f"at most {maximum:g}"
        raise InvalidParameter(method, name, value, f"a number {bounds}")
    return float(value)


def typical(sample: Sample) -> float:
    """The median amount of a sample."""
    from ..stats import median

    return median(sample.y) if len(sample.y) else math.nan


def relative(before: float, after: float) -> float | None:
    """``after`` relative to ``before`` in percent (None when ``before`` is 0)."""
    if before == 0 or not math.isfinite(before) or not math.isfinite(after):
        return None
    return (after - before) / abs(before) * 100.0


def presence_finding(sample: Sample, new: bool, method: str) -> Finding:
    """NotInBaseline (a new location) or NotInTarget (a location that disappeared)."""
    value = typical(sample)
    if new:
        return Finding(PerformanceChange.NOT_IN_BASELINE, "presence", sample.location, None, value, value, None,
                       method=method, reason="the location only appears in the target")
    return Finding(PerformanceChange.NOT_IN_TARGET, "presence", sample.location, value, None, -value, None,
                   method=method, reason="the location only appears in the baseline")


def location_pairs(baseline: ProfileData, target: ProfileData, method: str,
                   ) -> Iterator[tuple[Sample | None, Sample | None, Finding | None]]:
    """Every location of either profile: ``(base sample, target sample, presence finding)``.

    Locations of both come in the baseline's order, then the new ones; for a
    location of only one profile the presence finding is given.
    """
    base = baseline.samples()
    new = target.samples()
    for location, sample in base.items():
        other = new.get(location)
        if other is None:
            yield sample, None, presence_finding(sample, False, method)
        else:
            yield sample, other, None
    for location, sample in new.items():
        if location not in base:
            yield None, sample, presence_finding(sample, True, method)


def model_pairs(baseline: ProfileData, target: ProfileData, method: str, finding_type: str,
                ) -> Iterator[tuple[Finding | None, Any, Any, Any, Any]]:
    """Every location with the best regression model of each side.

    Yields ``(finding, base sample, target sample, base model, target
    model)``: a ready finding (the location is in one profile only, or a
    side has no model) with the rest None, or None and all four to compare.
    """
    best_base, best_target = baseline.best_models(), target.best_models()
    for base, new, presence in location_pairs(baseline, target, method):
        if presence is not None:
            yield presence, None, None, None, None
            continue
        assert base is not None and new is not None
        before, after = best_base.get(base.location), best_target.get(new.location)
        if before is None or after is None:
            yield (Finding(PerformanceChange.UNKNOWN, finding_type, base.location, method=method,
                           reason="no regression model: the resources need input sizes (structure-unit-size)"),
                   None, None, None, None)
            continue
        yield None, base, new, before, after


def settings_from(method: str, params: Mapping[str, Any], *, use_sizes: bool):
    """:class:`~perun_core.check.compare.Settings` from a method's parameters.

    ``alpha`` (0.01), ``floor`` (smallest reported change, percent: 5) and
    ``maybe`` (percent from which an insignificant change is a Maybe: 50).
    """
    from ..compare import Settings

    alpha = float_param(method, params, "alpha", 0.01, minimum=1e-12, maximum=0.5)
    floor = float_param(method, params, "floor", 5.0, minimum=0.0, maximum=1000.0)
    maybe = float_param(method, params, "maybe", 50.0, minimum=0.0, maximum=10000.0)
    return Settings(alpha, math.log1p(floor / 100.0), math.log1p(maybe / 100.0), use_sizes)


def comparison_finding(location: str, comparison: Any, method: str) -> Finding:
    """A finding from a :class:`~perun_core.check.compare.Comparison`."""
    before = comparison.base_level
    if comparison.verdict is PerformanceChange.UNKNOWN:
        return Finding(PerformanceChange.UNKNOWN, comparison.kind, location, before if math.isfinite(before) else None,
                       None, None, None, "1-p", 0.0, method, comparison.reason)
    after = comparison.target_level
    delta = after - before if math.isfinite(after) and math.isfinite(before) else None
    rel = (math.exp(comparison.effect) - 1.0) * 100.0
    where = ""
    region = comparison.region
    if region is not None and region.x_low is not None and region.name not in ("all", "all sizes"):
        low, high = f"{region.x_low:.6g}", f"{region.x_high:.6g}"
        where = f"at size {low}" if low == high else f"at sizes {low}-{high}"
    return Finding(comparison.verdict, comparison.kind, location, before, after, delta, rel, "1-p",
                   max(0.0, 1.0 - comparison.p), method, comparison.reason or where,
                   {"ratio": comparison.ratio, "p": comparison.p})
