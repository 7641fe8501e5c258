"""The paired test of sweeps (one or two points per size) and the shared-curve model of sizes apart."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perun_core.check.compare import Settings, compare
from perun_core.check.fitted import fitted_comparison
from perun_core.check.paired import paired_sizes, t_p


@pytest.mark.parametrize("t", [0.3, 1.0, 2.5, 12.0])
def test_student_t_p_values_match_the_closed_forms(t):
    assert t_p(t, 1) == pytest.approx(1 - 2 / math.pi * math.atan(t), rel=1e-12)
    assert t_p(-t, 2) == pytest.approx(1 - t / math.sqrt(t * t + 2), rel=1e-12)
    from scipy.special import stdtr

    for df in (3, 4, 9, 30, 401):
        assert t_p(t, df) == pytest.approx(2 * stdtr(df, -t), rel=1e-6)
    assert t_p(0.0, 5) == 1.0 and t_p(math.inf, 5) == 0.0


def test_only_a_sweep_is_paired():
    sizes = np.array([10.0, 20, 40, 80, 160, 320])
    u = np.log(sizes)
    assert paired_sizes(sizes, u, sizes, u + 0.1) is not None
    # three distinct runs at every size: repeated runs, for the rank tests
    runs = np.repeat(sizes, 3)
    noisy = np.log(runs) + np.tile([0.0, 0.01, 0.02], len(sizes))
    assert paired_sizes(runs, noisy, runs, noisy) is None
    # the same runs repeated exactly (deterministic counts) are still one amount per size
    assert paired_sizes(runs, np.log(runs), runs, np.log(runs)) is not None
    # four shared sizes are too few
    assert paired_sizes(sizes[:4], u[:4], sizes[:4], u[:4]) is None


def test_a_sweep_of_a_curved_cost_at_a_constant_factor_is_certain_however_small_the_noise():
    sizes = np.array([10.0, 20, 50, 100, 200, 500, 1000, 2000])
    cost = 5000 + 0.04 * sizes**3  # far from a line on log-log axes
    for factor in (1.3, 2.0, 3.0):
        assert compare(sizes, cost, sizes, factor * cost).verdict.value == "Degradation"
        assert compare(sizes, factor * cost, sizes, cost).verdict.value == "Optimization"
    assert compare(sizes, cost, sizes, cost).verdict.value == "NoChange"


def test_sizes_apart_are_compared_through_one_curve_of_both():
    rng = np.random.default_rng(5)
    xb, xt = np.sort(rng.uniform(10, 5000, 14)).round(), np.sort(rng.uniform(10, 5000, 11)).round()

    def cost(x):
        return 300 + x * np.log(x)

    noise_b, noise_t = np.exp(rng.normal(0, 0.02, 14)), np.exp(rng.normal(0, 0.02, 11))
    yb = cost(xb) * noise_b
    assert fitted_comparison(xb, np.log(yb), yb, xt, np.log(1.3 * cost(xt) * noise_t), Settings()).verdict.value \
        == "Degradation"
    same = fitted_comparison(xb, np.log(yb), yb, xt, np.log(cost(xt) * noise_t), Settings())
    assert same.verdict.value == "NoChange"
    # twice as slow only above 2/3 of the sizes
    upper = np.where(xt > xt[int(len(xt) * 2 / 3)] - 1, 2.0, 1.0)
    found = compare(xb, yb, xt, cost(xt) * upper * noise_t)
    assert found.verdict.value == "Degradation" and found.region.name == "larger sizes"


def test_the_larger_sizes_are_not_read_off_a_curve_that_only_one_profile_shapes():
    """The baseline measured nothing among the larger shared sizes: only the uniform factor is tested."""
    xb = np.array([10.0, 10, 30, 30, 71, 71, 500, 500])
    xt = np.array([10.0, 10, 108, 108, 206, 206, 304, 304])

    def cost(x):
        return 2.0 * x**0.7

    found = fitted_comparison(xb, np.log(cost(xb)), cost(xb), xt, np.log(cost(xt) * np.where(xt > 200, 0.6, 1.0)),
                              Settings())
    assert [region.name for region in found.regions] == ["all sizes"]
    # and with too little of the baseline where both measured, nothing is fitted at all
    assert fitted_comparison(xb[2:], np.log(cost(xb[2:])), cost(xb[2:]), xt, np.log(cost(xt)), Settings()) is None
