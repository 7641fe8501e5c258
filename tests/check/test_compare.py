"""The comparison engine on seeded synthetic measurements with a known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perun_core.check.compare import Settings, compare
from perun_core.check.results import PerformanceChange as PC


def sizes(rng, n, low=10, high=2000):
    return np.round(np.exp(rng.uniform(math.log(low), math.log(high), n)))


def noisy(rng, values, sigma=0.1):
    return values * np.exp(rng.normal(0, sigma, len(values)))


@pytest.mark.parametrize("factor", [1.1, 1.25, 2.0, 5.0, 1 / 1.1, 1 / 2.0, 1 / 5.0])
def test_constant_factors_are_found_in_the_right_direction(factor):
    rng = np.random.default_rng(int(factor * 1000))
    xb, xt = sizes(rng, 300), sizes(rng, 300)
    result = compare(xb, noisy(rng, 3.0 * xb), xt, noisy(rng, 3.0 * xt * factor))
    assert result.verdict is (PC.DEGRADATION if factor > 1 else PC.OPTIMIZATION)
    assert result.ratio == pytest.approx(factor, rel=0.05)


def test_unchanged_functions_rarely_alarm():
    alarms = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        xb, xt = sizes(rng, 200), sizes(rng, 200)
        cost = lambda x: 0.5 + 0.01 * x * np.log(x)  # noqa: E731
        result = compare(xb, noisy(rng, cost(xb), 0.15), xt, noisy(rng, cost(xt), 0.15))
        alarms += result.verdict is not PC.NO_CHANGE
    assert alarms <= 1


def test_a_new_mix_of_input_sizes_is_not_a_change():
    rng = np.random.default_rng(7)
    xb = sizes(rng, 400, 10, 1000)
    xt = sizes(rng, 400, 200, 5000)  # mostly larger inputs now
    result = compare(xb, noisy(rng, xb**2), xt, noisy(rng, xt**2))
    assert result.verdict is PC.NO_CHANGE
    # the averages alone would say "25 times slower"
    assert np.mean(xt**2) / np.mean(xb**2) > 10


def test_discrete_sizes_with_new_weights():
    rng = np.random.default_rng(8)
    grid = np.array([16, 64, 256, 1024, 4096.0])
    xb = rng.choice(grid, 300)
    xt = rng.choice(grid, 300, p=[0.05, 0.05, 0.1, 0.3, 0.5])
    result = compare(xb, noisy(rng, xb), xt, noisy(rng, xt))
    assert result.verdict is PC.NO_CHANGE


def test_slowdown_on_large_inputs_only():
    rng = np.random.default_rng(9)
    xb, xt = sizes(rng, 400), sizes(rng, 400)
    yt = np.where(xt > 800, 2.0, 1.0) * xt
    result = compare(xb, noisy(rng, xb), xt, noisy(rng, yt))
    assert result.verdict is PC.DEGRADATION
    assert result.region is not None and result.region.x_low >= 500


def test_complexity_change_goes_by_the_largest_inputs():
    rng = np.random.default_rng(10)
    xb, xt = sizes(rng, 400), sizes(rng, 400)
    # quadratic, cheaper than the old linear cost on small inputs, far dearer on large ones
    result = compare(xb, noisy(rng, 20 * xb), xt, noisy(rng, xt**2 / 10))
    assert result.verdict is PC.DEGRADATION and result.kind == "scaling"


def test_repeated_runs_without_sizes():
    rng = np.random.default_rng(11)
    before, after = noisy(rng, np.full(5, 0.42), 0.02), noisy(rng, np.full(5, 0.84), 0.02)
    assert compare(None, before, None, after).verdict is PC.DEGRADATION
    # three runs a side cannot be significant by ranks alone; separation plus Welch's t decides
    result = compare(None, np.array([0.031, 0.030, 0.032]), None, np.array([0.155, 0.151, 0.158]))
    assert result.verdict is PC.DEGRADATION and result.ratio == pytest.approx(5.0, rel=0.05)
    same = compare(None, np.array([0.031, 0.030, 0.032]), None, np.array([0.0305, 0.0312, 0.0309]))
    assert same.verdict is PC.NO_CHANGE


def test_small_changes_stay_below_the_floor():
    rng = np.random.default_rng(12)
    x = sizes(rng, 2000)
    result = compare(x, noisy(rng, x, 0.02), x, noisy(rng, x * 1.02, 0.02), Settings(max_points=0))
    assert result.p < 0.01  # real ...
    assert result.verdict is PC.NO_CHANGE  # ... but below the 5 % floor


def test_edge_cases():
    assert compare(None, np.array([]), None, np.array([1.0])).verdict is PC.UNKNOWN
    assert compare(None, np.zeros(5), None, np.zeros(5)).verdict is PC.NO_CHANGE
    zeros_then_work = compare(None, np.zeros(10), None, np.full(10, 3.0))
    assert zeros_then_work.verdict is PC.DEGRADATION
    single = compare(None, np.array([1.0]), None, np.array([4.0]))
    assert single.verdict is PC.MAYBE_DEGRADATION
    apart = compare(np.arange(1, 50.0), np.arange(1, 50.0), np.arange(1000, 1050.0), np.arange(1000, 1050.0))
    assert apart.verdict is PC.UNKNOWN and "overlap" in apart.reason


def test_work_that_drops_to_zero_reads_zero_and_minus_100_percent():
    # sys time of 3.4 ms in every run, then none: shown as '3.38 ms -> -4.34e-10 ns (-68.6%)', the level a
    # rounding of zero and the percentage that of the amounts plus the shift the zeros needed
    from perun_core.check.methods.common import comparison_finding

    work = np.array([0.00338, 0.0034, 0.0031, 0.0035, 0.0033, 0.0032, 0.0036])
    dropped = compare(None, work, None, np.zeros(7))
    assert dropped.verdict is PC.OPTIMIZATION and dropped.target_level == 0.0
    finding = comparison_finding("./app [sys]", dropped, "sart")
    assert finding.to == 0.0 and finding.delta_rel == pytest.approx(-100.0)
    grown = comparison_finding("./app [sys]", compare(None, np.zeros(7), None, work), "sart")
    assert grown.result is PC.DEGRADATION and grown.to > 0  # from 0: 'below resolution', as before


def test_one_step_of_coarse_measurements_is_no_change():
    # system time counted in 4 ms ticks: 0, 0, 4 ms against 4, 4, 4 ms says nothing
    ticks = compare(None, np.array([0.0, 0.0, 0.004]), None, np.array([0.004, 0.004, 0.004]))
    assert ticks.verdict is PC.NO_CHANGE and "resolution" in ticks.reason
    # exactly repeatable counts that moved are a change
    counts = compare(None, np.array([1000.0, 1000.0, 1000.0]), None, np.array([1100.0, 1100.0, 1100.0]))
    assert counts.verdict is PC.DEGRADATION
