"""The classes of change the default strategy must report as certain (benchmarks/check_accuracy.py's generators).

The benchmark scores them on held-out seeds; these tests use their own few
seeds so that a change of the method that loses a class fails here first.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from check_accuracy import CLASSES, class_case, kind_of, verdicts  # noqa: E402

SEEDS = range(700, 740)


@pytest.mark.parametrize("kind", CLASSES)
def test_each_class_is_caught_as_a_certain_change_without_false_alarms(kind):
    hits = wrong = alarms = 0
    for seed in SEEDS:
        for changed in (True, False):
            base, new, label = class_case(kind, seed, changed)
            found = kind_of(next(iter(verdicts("size_aware_rank_test", base, new).values())))
            if label == "none":
                alarms += found != "none"
            else:
                hits += found == label
                wrong += ("optimization" in found) if label == "degradation" else ("degradation" in found)
    assert wrong == 0
    assert alarms == 0
    assert hits >= 0.9 * len(SEEDS), (kind, hits)


def test_a_sparse_complexity_change_is_a_degradation_not_a_maybe():
    """Seven sizes measured once each: linear before, quadratic after, 20x slower at the largest size."""
    import numpy as np

    from perun_core.check.compare import compare

    x = np.array([100.0, 200, 400, 800, 1200, 1600, 2000])
    base = 2.0 * x * np.array([1.02, 0.97, 1.01, 0.99, 1.03, 0.98, 1.0])
    new = 2.0 * x * x / 100 * np.array([0.99, 1.02, 0.98, 1.01, 1.0, 1.03, 0.97])
    result = compare(x, base, x, new)
    assert result.verdict.value == "Degradation"
    assert result.ratio > 3
    same = compare(x, base, x, 2.0 * x * np.array([0.98, 1.01, 1.02, 0.97, 1.0, 1.01, 0.99]))
    assert same.verdict.value == "NoChange"
