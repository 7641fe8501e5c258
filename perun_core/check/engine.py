"""Checking one pair of profiles with a strategy: the methods that apply, their findings, cut-offs."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from . import noise, preemption, shift
from ..errors import IncomparableProfiles, PerunError
from .results import Finding, PerformanceChange
from .strategies import Strategy, apply_cutoff

if TYPE_CHECKING:  # pragma: no cover
    from .data import ProfileData

__all__ = ["PairOutcome", "check_pair", "with_units"]


@dataclass(slots=True)
class PairOutcome:
    methods: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: one-line warnings about the pair (different machines) and advice (noisy measurements)
    notes: list[str] = field(default_factory=list)


def check_pair(baseline: ProfileData, target: ProfileData, strategy: Strategy, *, baseline_name: str = "baseline",
               target_name: str = "target", history: list[ProfileData] | None = None,
               temper: bool = True) -> PairOutcome:
    """Apply the strategy's rules for ``target`` to the pair.

    Raises :class:`IncomparableProfiles` for profiles of different types and
    the errors of methods (bad parameters); a method that fails otherwise
    gives one Unknown finding and an entry in ``errors``.  Wall-time changes
    of time profiles that CPU time does not back on a busy machine are made
    Maybe (see :mod:`perun_core.check.noise`), unless ``temper`` is False
    (runs made interleaved, which a busy machine disturbs alike); so are
    per-function time changes no larger than the whole profile's on a busy
    machine (:mod:`perun_core.check.shift`).  Peak-memory
    changes within the jitter of identical runs are Maybe on every path.
    """

    if baseline.type != target.type:
        raise IncomparableProfiles(baseline_name, target_name,
                                   f"a {baseline.type or 'untyped'} profile cannot be compared with a "
                                   f"{target.type or 'untyped'} one")
    outcome = PairOutcome()
    for rule in strategy.rules_for(target.profile):
        method = rule.method
        params: dict[str, Any] = dict(rule.params)
        if getattr(method, "uses_history", False) and history:
            params["history"] = history
        cutoff = rule.cutoff if rule.cutoff is not None else strategy.cutoff
        cutoff_abs = rule.cutoff_abs if rule.cutoff_abs is not None else strategy.cutoff_abs
        outcome.methods.append(method.name)
        try:
            found = [apply_cutoff(f.with_method(method.name), cutoff, cutoff_abs)
                     for f in method.check(baseline, target, params)]
        except PerunError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken method must not hide the others' results
            reason = f"method '{method.name}' failed: {type(exc).__name__}: {exc}"
            outcome.errors.append(reason)
            found = [Finding(PerformanceChange.UNKNOWN, "error", "*", method=method.name, reason=reason)]
        found = noise.steady_memory(baseline, target, with_units(found, baseline, target))
        if temper:
            found = shift.shifted_together(baseline, target, noise.temper(baseline, target, found))
            found = preemption.within_one_wait(baseline, target, found)
        outcome.findings.extend(found)
    outcome.notes.extend(strategy.notes)
    different = noise.machine_difference(baseline, target)
    if different is not None:
        outcome.notes.append(f"baseline and target were measured on different machines ({different})")
    advice = noise.advice((baseline, target))
    if advice is not None:
        outcome.notes.append(advice)
    return outcome


def with_units(findings: list[Finding], baseline: ProfileData, target: ProfileData) -> list[Finding]:
    """The findings with the unit of their location's amounts (the target's, else the baseline's) where they lack one."""
    if all(f.unit for f in findings):
        return findings
    units = {location: sample.unit for location, sample in baseline.samples().items()}
    units.update((location, sample.unit) for location, sample in target.samples().items() if sample.unit)
    fallback = target.unit() or baseline.unit()
    return [f if f.unit else replace(f, unit=units.get(f.location) or fallback) for f in findings]
