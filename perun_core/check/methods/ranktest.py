"""A statistical two-sample test on repeated measurements: Mann-Whitney U with an effect-size floor.

Meant for profiles that measure the same thing several times (the time
collector's repeated runs, repeated calls of a function): per location the
amounts of the two profiles are compared as two samples, ignoring input
sizes.  The shift is the Hodges-Lehmann estimate on the log scale, so it
reads as a ratio; it is reported only when the U test is significant at
``alpha`` (0.01) and the change is at least ``floor`` percent (5).  Tiny
samples (under eight runs a side) also count as significant when the two
samples do not overlap at all and Welch's t test on the logs agrees -- three
runs a side cannot be significant by ranks alone.
See :mod:`perun_core.check.compare` for the details.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..compare import compare
from ..data import ProfileData
from ..results import Finding
from .common import SETTINGS, comparison_finding, location_pairs, read_params, settings_from


class RankSumTest:
    name = "rank_sum_test"
    summary = "Mann-Whitney U test of the amounts per location (repeated measurements), with a 5 % floor."
    params = SETTINGS

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterator[Finding]:
        settings = settings_from(read_params(self, params), use_sizes=False)
        for base, new, presence in location_pairs(baseline, target, self.name):
            if presence is not None:
                yield presence
                continue
            assert base is not None and new is not None
            yield comparison_finding(base.location, compare(None, base.y, None, new.y, settings), self.name)


METHOD = RankSumTest()
