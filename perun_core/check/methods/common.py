"""Helpers every method uses: which locations to compare, presence findings, parameters.

A method declares its parameters as ``params``, a tuple of
:class:`~perun_core.params.Param` (the shared ones are here), and reads them
with :func:`read_params`: the values given in the rule's ``params``
converted and checked by the declaration, defaults for the rest.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ...params import Param, convert_params
from ..compare import EDGE, Settings
from ..results import Finding, PerformanceChange
from ..stats import median

if TYPE_CHECKING:  # pragma: no cover
    from ..data import ProfileData, Sample

__all__ = ["ALPHA", "FLOOR", "MAYBE", "RUNTIME_KEYS", "SETTINGS", "location_pairs", "model_locations",
           "presence_finding", "read_params", "relative", "threshold_param", "typical"]

#: Keys the checker adds to a method's parameters itself (never declared, never given in a rule).
RUNTIME_KEYS = frozenset({"history"})

ALPHA = Param("alpha", "float", 0.01, "Significance level a change must reach.", minimum=1e-12, maximum=0.5)
FLOOR = Param("floor", "float", 5.0, "Smallest change reported, in percent.", minimum=0.0, maximum=1000.0)
MAYBE = Param("maybe", "float", 50.0, "Change in percent from which an insignificant change is a Maybe.",
              minimum=0.0, maximum=10000.0)
#: What :func:`settings_from` reads.
SETTINGS = (ALPHA, FLOOR, MAYBE)


def threshold_param(default: float, help: str, *, minimum: float = 0.0) -> Param:
    """The ``threshold`` parameter most methods have, with its default."""
    return Param("threshold", "float", default, help, minimum=minimum)


def read_params(method: Any, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every declared parameter of ``method``: given values converted and checked, defaults for the rest.

    Keys the checker adds (``history``) are left out; an unknown key or a
    bad value raises :class:`~perun_core.errors.InvalidParameter` naming it.
    """
    given = {key: value for key, value in (params or {}).items() if key not in RUNTIME_KEYS}
    return convert_params(method.name, getattr(method, "params", ()), given)


def typical(sample: Sample) -> float:
    """The median amount of a sample."""

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


def model_locations(baseline: ProfileData, target: ProfileData, method: str,
                    ) -> Iterator[tuple[Sample | None, Sample | None, Finding | None]]:
    """:func:`location_pairs` for the methods comparing stored models.

    A uid split into locations by subtype whose models describe it whole on both sides (the original
    Perun's time profiles: real, user and sys seconds fitted together) is compared once, at the uid,
    with all its measurements; its locations, which have no models of their own, are left out.
    """
    base_models, target_models = baseline.best_models(), target.best_models()
    whole = {uid: (baseline.whole_uid_sample(uid), target.whole_uid_sample(uid))
             for uid in base_models.keys() & target_models.keys()}
    whole = {uid: pair for uid, pair in whole.items() if pair[0] is not None and pair[1] is not None}
    for base, new, presence in location_pairs(baseline, target, method):
        sample = base if base is not None else new
        assert sample is not None
        covered = sample.uid in whole and sample.location not in base_models and sample.location not in target_models
        if not covered:
            yield base, new, presence
    for base, new in whole.values():
        yield base, new, None


def model_pairs(baseline: ProfileData, target: ProfileData, method: str, finding_type: str,
                ) -> Iterator[tuple[Finding | None, Any, Any, Any, Any]]:
    """Every location with the best regression model of each side.

    Yields ``(finding, base sample, target sample, base model, target
    model)``: a ready finding (the location is in one profile only, or a
    side has no model) with the rest None, or None and all four to compare.
    """
    best_base, best_target = baseline.best_models(), target.best_models()
    for base, new, presence in model_locations(baseline, target, method):
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


def settings_from(values: Mapping[str, Any], *, use_sizes: bool):
    """:class:`~perun_core.check.compare.Settings` from a method's converted parameters (:data:`SETTINGS`).

    ``alpha`` (0.01), ``floor`` (smallest reported change, percent: 5) and
    ``maybe`` (percent from which an insignificant change is a Maybe: 50).
    """

    alpha, floor, maybe = (values.get(p.name, p.default) for p in SETTINGS)
    edge = 1 - EDGE
    return Settings(alpha, math.log1p(floor / 100.0) * edge, math.log1p(maybe / 100.0) * edge, use_sizes)


def comparison_finding(location: str, comparison: Any, method: str) -> Finding:
    """A finding from a :class:`~perun_core.check.compare.Comparison`."""
    before = comparison.base_level
    if comparison.verdict is PerformanceChange.UNKNOWN:
        return Finding(PerformanceChange.UNKNOWN, comparison.kind, location, before if math.isfinite(before) else None,
                       None, None, None, "1-p", 0.0, method, comparison.reason)
    after = comparison.target_level
    delta = after - before if math.isfinite(after) and math.isfinite(before) else None
    rel = (math.exp(comparison.effect) - 1.0) * 100.0
    if comparison.shift > 0 and before > 0 and math.isfinite(after):
        # the effect is a ratio of the amounts plus the shift that zeros needed; the change the user reads
        # beside 'from -> to' is that of the amounts themselves (3.38 ms -> 0 s is -100 %, not -68.6 %)
        rel = (after - before) / before * 100.0
    where = ""
    region = comparison.region
    if region is not None and region.x_low is not None and region.name not in ("all", "all sizes"):
        low, high = f"{region.x_low:.6g}", f"{region.x_high:.6g}"
        # the levels are those of one call or run there, not the profile's total over every size
        where = f"per call or run, at size {low}" if low == high else f"per call or run, at sizes {low}-{high}"
    return Finding(comparison.verdict, comparison.kind, location, before, after, delta, rel, "1-p",
                   max(0.0, 1.0 - comparison.p), method, comparison.reason or where,
                   {"ratio": comparison.ratio, "p": comparison.p})
