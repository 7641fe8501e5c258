"""The default strategy: what ``check`` does when nothing is configured.

It has to work on any profile -- repeated runs of a whole program, per
function samples with input sizes, memory allocations -- without tuning,
find 1.1x changes when the data allow it, and not cry wolf.  Per location:

1. A location of only one profile is NotInBaseline or NotInTarget.
2. The measurements are compared at equal input sizes when the profiles
   have them (``structure-unit-size``), else as two samples of repeated
   measurements: robust shifts on the log scale, Mann-Whitney rank tests,
   Bonferroni over the size ranges tested (see
   :mod:`perun_core.check.compare`).  A change is reported when it is
   significant at 1 %, significantly beyond half the 5 % floor, and at
   least 5 %; one of at least 50 % that the data cannot make significant is
   a Maybe.  One or two measurements per size at five or more sizes both
   profiles measured are compared size by size (paired log ratios, see
   :mod:`perun_core.check.paired`); fewer than 60 a side at sizes the
   profiles do not share are also fitted with one curve of both (see
   :mod:`perun_core.check.fitted`); other few measurements at input sizes
   (up to 24 a side) are also compared curve to curve: robust lines of both
   profiles at the largest size both reach, so a complexity change seen at a
   few points is certain and a chance difference in a few bins is not.
   Profiles of samples or event counts (perf, folded, speedscope,
   callgrind) are compared as counts instead (see
   :mod:`perun_core.check.sampled`).
3. With a history of the configuration (``check head`` and ``check all``),
   a location that did not change at this version is also checked for a
   creeping change: a steady drift of at least 10 % over the last 20
   versions (see :mod:`perun_core.check.methods.changepoint`).

Why these choices: ratios on the log scale treat "twice as slow" and "half
as fast" alike and suit the multiplicative noise of timings; ranks shrug off
outliers and heavy tails that ruin averages; comparing at equal sizes keeps
a new mix of inputs from looking like a change; and the 5 % floor keeps
statistically real but negligible differences (and small biases) quiet.

The method is registered as ``size_aware_rank_test`` (short ``sart``, also
``default`` and ``auto``).  Its parameters: ``alpha``, ``floor`` and
``maybe`` (percent), ``creep_floor`` (percent), ``window`` (versions).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from .compare import compare
from .data import ProfileData
from ..params import Param
from .methods.common import SETTINGS, comparison_finding, location_pairs, read_params, settings_from
from .results import Finding, PerformanceChange
from .sampled import counted_pair

__all__ = ["DEFAULT", "DEFAULT_RULES", "SizeAwareRankTest"]

#: The strategy used when the configuration sets none: this method for every profile.
DEFAULT_RULES = ({"method": "size_aware_rank_test"},)


class SizeAwareRankTest:
    name = "size_aware_rank_test"
    summary = "The default: rank tests at equal input sizes, 5 % floor, creeping drifts over the history."
    uses_history = True
    params = (
        *SETTINGS,
        Param("window", "int", 20, "Versions of history (the target included) searched for a creeping drift.",
              minimum=5, maximum=500),
        Param("creep_floor", "float", 10.0, "Smallest drift over the window reported, in percent.", minimum=0.0),
    )

    def pairwise(self, baseline: ProfileData, target: ProfileData, values: Mapping[str, Any]) -> Iterator[Finding]:
        """The findings of the rank tests alone; ``values`` holds converted :data:`SETTINGS`."""
        settings = settings_from(values, use_sizes=True)
        counts = counted_pair(baseline, target)
        for base, new, presence in location_pairs(baseline, target, self.name):
            if presence is not None:
                yield presence
                continue
            assert base is not None and new is not None
            if counts is not None:
                result = counts.compare(base, new, settings)
            else:
                result = compare(base.x, base.y, new.x, new.y, settings)
            yield comparison_finding(base.location, result, self.name)

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        history = list(params.get("history") or [])
        values = read_params(self, params)
        window = values["window"]
        creep_floor = math.log1p(values["creep_floor"] / 100)
        alpha = values["alpha"]
        versions = [*history[-(window - 1):], target] if history else []
        for finding in self.pairwise(baseline, target, values):
            quiet = finding.result in (PerformanceChange.NO_CHANGE, PerformanceChange.MAYBE_DEGRADATION,
                                       PerformanceChange.MAYBE_OPTIMIZATION)
            if quiet and len(versions) >= 5:
                # only with a history: ``check profiles`` never loads the drift analysis
                from .methods.changepoint import creep_finding

                samples = [data.samples().get(finding.location) for data in versions]
                creep = creep_finding(finding.location, samples, len(versions), self.name,
                                      creep_floor=creep_floor, alpha=alpha)
                if creep is not None:
                    yield creep
                    continue
            yield finding


DEFAULT = SizeAwareRankTest()
