"""A check's figure and an explanation's figure of one change say what each of them measured."""

from __future__ import annotations

import math
from types import SimpleNamespace

from perun_core.check.compare import Region
from perun_core.check.explain_result import Explanation
from perun_core.check.methods.common import comparison_finding
from perun_core.check.results import PerformanceChange


def test_a_level_at_one_size_says_it_is_per_call_or_run():
    """sll_insert's +14387 % is one call's level at size 8000; the same change summed over every call and size
    is far smaller: the finding says which it is."""
    region = Region("8000", 30, 30, math.log(145.0), 5.0, 1e-6, 30.0, 8000.0, 8000.0)
    compared = SimpleNamespace(verdict=PerformanceChange.DEGRADATION, kind="ratio", base_level=30.0,
                               target_level=4350.0, effect=math.log(145.0), region=region, p=1e-6, ratio=145.0,
                               reason="", shift=0.0)
    finding = comparison_finding("sll_insert", compared, "size_aware_rank_test")
    assert finding.reason == "per call or run, at size 8000"
    region = Region("1000-2000", 30, 30, 0.5, 5.0, 1e-6, 30.0, 1000.0, 2000.0)
    assert comparison_finding("f", SimpleNamespace(**{**vars(compared), "region": region}), "m").reason == \
        "per call or run, at sizes 1000-2000"


def test_an_explanation_names_its_total_as_the_whole_programs():
    explained = Explanation("perf", "samples", 132.0, 545.0)
    assert explained.headline() == \
        "explained by (perf, the whole program's total: 132 samples -> 545 samples (+313%)):"
