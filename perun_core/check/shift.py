"""A whole profile that moved together on a busy machine: per-function times measured at another moment of load.

A tracer or a profiler that records the wall time of each call (the trace
collector, pytrace with its default clock) measures every function of the
program at the moment the program ran.  When the machine was busier for one
of the two runs (other jobs, a CI runner's parallel tests, caches and cores
shared with them), *every* function of that run is slower by about the same
factor, changed or not.  Such a profile has no CPU time beside the wall
time, so the rules of :mod:`perun_core.check.noise` cannot tell load from
work; but the profile's other functions can: a function whose change is no
larger than the one the rest of the program shows, in the same direction,
carries no sign of its own.

:func:`shifted_together` makes such a certain change a Maybe, with the
profile-wide change and the load in words, when the load average recorded on
either side exceeded its cores.  A function that changed beyond the rest
(the regression itself: ``sll_insert`` 100 times slower while everything
else is 1.8 times faster) stays certain, and so does every change measured
on a quiet machine, and calls timed by their CPU time (pytrace ``--clock
cpu``).  The time collector's own locations (``[real]``,
``[user]``, ``[sys]``, ``[max_rss]``) are judged by the CPU-time rules of
:mod:`~perun_core.check.noise` instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..amounts import unit_family
from .noise import CONTENTION_MARGIN, busy, machine_of, maybe
from .results import Finding
from .stats import median

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from .data import ProfileData, Sample

__all__ = ["MIN_OTHERS", "shifted_together"]

#: The rest of the profile is known well enough from this many other functions with times on both sides.
MIN_OTHERS = 2
#: Locations of the time collector, which carry CPU time and have rules of their own.
_TIME_COLLECTOR = (" [real]", " [user]", " [sys]", " [max_rss]")


def shifted_together(baseline: ProfileData, target: ProfileData, findings: Iterable[Finding]) -> list[Finding]:
    """The findings, with certain time changes no larger than the whole profile's made Maybe on a busy machine."""
    found = list(findings)
    candidates = {id(f) for f in found if f.result.is_change and not f.result.is_maybe
                  and not f.location.endswith(_TIME_COLLECTOR)}
    if not candidates or _cpu_clock(baseline) or _cpu_clock(target):
        return found
    loads = [(name, busy(machine_of(data)), machine_of(data).get("cores"))
             for name, data in (("baseline", baseline), ("target", target))]
    load_words = "; ".join(f"load {load:.1f} on {cores} cores ({name})" for name, load, cores in loads
                           if load is not None)
    if not load_words:
        return found
    ratios = _log_ratios(baseline, target)
    samples = target.samples()
    out = []
    for finding in found:
        if id(finding) not in candidates or finding.location not in ratios:
            out.append(finding)
            continue
        uid = samples[finding.location].uid
        others = [r for location, r in ratios.items() if samples[location].uid != uid]
        own = ratios[finding.location]
        if len(others) < MIN_OTHERS:
            out.append(finding)
            continue
        common = float(median(_array(others)))
        direction = 1.0 if finding.result.is_degradation else -1.0
        # the change of this function in its own direction, beyond what the rest of the program did that way
        beyond = direction * own - max(0.0, direction * common)
        if direction * common <= 0 or beyond > math.log(CONTENTION_MARGIN):
            out.append(finding)
            continue
        out.append(maybe(finding, f"{_percent(own)} here, the rest of the profile {_percent(common)} "
                                  f"(median of {len(others)} other functions): the whole run moved, as on a busy "
                                  f"machine: {load_words}; compare instruction counts (callgrind) or CPU time"))
    return out


def _cpu_clock(data: ProfileData) -> bool:
    """Whether the calls were timed by the CPU time of their thread (pytrace ``--clock cpu``), which waiting for
    a core does not stretch."""
    params = (data.profile.collector_info or {}).get("params")
    return isinstance(params, dict) and params.get("clock") == "cpu"


def _percent(log_ratio: float) -> str:
    return f"{math.expm1(log_ratio) * 100:+.0f} %"


def _array(values: list[float]) -> numpy.ndarray:
    import numpy as np

    return np.asarray(values, dtype=float)


def _log_ratios(baseline: ProfileData, target: ProfileData) -> dict[str, float]:
    """The log ratio target/baseline of every location with times on both sides."""
    before, after = baseline.samples(), target.samples()
    ratios = {}
    for location, sample in after.items():
        other = before.get(location)
        if other is None or location.endswith(_TIME_COLLECTOR) or unit_family(sample.unit or other.unit) != "time":
            continue
        ratio = _log_ratio(other, sample)
        if ratio is not None:
            ratios[location] = ratio
    return ratios


def _log_ratio(base: Sample, new: Sample) -> float | None:
    """The median over the sizes both measured of log(target median / baseline median); overall medians without sizes."""
    if base.x is not None and new.x is not None:
        before, after = _medians_by_size(base), _medians_by_size(new)
        by_size = [math.log(after[size] / before[size]) for size in before.keys() & after.keys()]
        if by_size:
            return float(median(_array(by_size)))
    b, t = base.y[base.y > 0], new.y[new.y > 0]
    if not len(b) or not len(t):
        return None
    return math.log(median(t) / median(b))


def _medians_by_size(sample: Sample) -> dict[float, float]:
    """The median of the positive amounts at each size (one sort, then a slice a size)."""
    import numpy as np

    keep = sample.y > 0
    x, y = sample.x[keep], sample.y[keep]  # type: ignore[index]
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    starts = np.flatnonzero(np.concatenate(([True], x[1:] != x[:-1]))) if len(x) else np.array([], dtype=int)
    ends = np.append(starts[1:], len(x))
    return {float(x[a]): median(y[a:b]) for a, b in zip(starts, ends)}
