"""The statistics under the checks, against values worked out by hand or by definition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from perun_core.check import stats
from perun_core.check.data import Sample
from perun_core.check.history import change_points, creeping, levels, mann_kendall, sen_slope
from perun_core.check.methods.changepoint import creep_finding


def brute_force_p(a, b) -> float:
    """Exact two-sided p of U by enumerating every split of the pooled values."""
    from itertools import combinations

    pooled = list(a) + list(b)
    m = len(a)
    observed = sum((y > x) + 0.5 * (y == x) for x in a for y in b)
    mean = m * len(b) / 2
    total = extreme = 0
    for chosen in combinations(range(len(pooled)), m):
        first = [pooled[i] for i in chosen]
        second = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        u = sum((y > x) + 0.5 * (y == x) for x in first for y in second)
        total += 1
        extreme += abs(u - mean) >= abs(observed - mean) - 1e-9
    return extreme / total


@pytest.mark.parametrize("seed", range(6))
def test_exact_mann_whitney_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=4), rng.normal(0.8, size=5)
    assert stats.mann_whitney(a, b).p == pytest.approx(brute_force_p(a, b), abs=1e-12)


def test_mann_whitney_direction_and_separation():
    low, high = np.arange(10.0), np.arange(10.0) + 100
    test = stats.mann_whitney(low, high)
    assert test.z > 0 and test.separated and test.p < 1e-4
    assert stats.mann_whitney(high, low).z < 0
    same = stats.mann_whitney(np.ones(30), np.ones(30))
    assert same.p == 1.0 and not same.separated


def test_average_ranks_with_ties():
    ranks, groups = stats.average_ranks(np.array([3.0, 1.0, 3.0, 2.0, 3.0]))
    assert ranks.tolist() == [4.0, 1.0, 4.0, 2.0, 4.0]
    assert sorted(groups.tolist()) == [1, 1, 3]


def test_hodges_lehmann_and_median():
    a = np.array([1.0, 2.0, 3.0])
    assert stats.hodges_lehmann(a, a + 5) == 5.0
    rng = np.random.default_rng(3)
    big = rng.normal(size=2000)
    # thinning keeps the estimate close to the full one
    assert stats.hodges_lehmann(big, big + 0.3) == pytest.approx(0.3, abs=0.02)
    for n in (1, 2, 5, 6, 101):
        values = rng.normal(size=n)
        assert stats.median(values) == pytest.approx(float(np.median(values)))


def test_huber_fit_shrugs_off_outliers():
    rng = np.random.default_rng(1)
    x = np.linspace(0, 10, 200)
    y = 2.0 + 0.5 * x + rng.normal(0, 0.05, 200)
    y[::20] += 50.0  # 5 % wild outliers
    design = np.column_stack((np.ones_like(x), x))
    coef = stats.huber_fit(design, y)
    assert coef[0] == pytest.approx(2.0, abs=0.1) and coef[1] == pytest.approx(0.5, abs=0.02)
    assert stats.full_rank(design) and not stats.full_rank(np.column_stack((x, 2 * x)))


def test_welch_t_on_tiny_samples():
    t, p = stats.welch_t(np.log([1.0, 1.02, 0.98]), np.log([5.0, 5.1, 4.9]))
    assert t > 0 and p < 1e-4
    assert stats.welch_t(np.array([1.0, 1.0]), np.array([1.0, 1.0])) == (0.0, 1.0)


@settings(max_examples=300, deadline=None)
@given(t=st.floats(-300, 300), df=st.floats(0.5, 1e8))
def test_student_t_p_values_match_scipy_for_any_degrees_of_freedom(t, df):
    from scipy.special import stdtr

    expected = float(min(1.0, 2 * stdtr(df, -abs(t))))
    got = stats.student_t_p(t, df)
    assert got == pytest.approx(expected, rel=1e-7, abs=1e-300)
    assert stats.student_t_p(-t, df) == got  # two-sided


@settings(max_examples=300, deadline=None)
@given(a=st.floats(0.05, 5000), b=st.floats(0.05, 5000), x=st.floats(0, 1))
def test_incomplete_beta_matches_scipy(a, b, x):
    from scipy.special import betainc

    expected = float(betainc(a, b, x))
    assert stats.incomplete_beta(a, b, x) == pytest.approx(expected, rel=1e-9, abs=1e-290)


def test_trend_tests():
    rising = np.arange(20) * 0.03
    z, p = mann_kendall(rising)
    assert z > 0 and p < 1e-6
    assert sen_slope(rising) == pytest.approx(0.03)
    rng = np.random.default_rng(0)
    flat = rng.normal(0, 0.01, 20)
    assert mann_kendall(flat)[1] > 0.01


def test_creeping_sees_a_drift_but_not_a_step():
    rng = np.random.default_rng(2)
    creep = np.log(1.03) * np.arange(20) + rng.normal(0, 0.005, 20)
    trend = creeping(creep)
    assert trend is not None and trend.p < 0.01 and trend.drift == pytest.approx(19 * math.log(1.03), rel=0.1)
    step = np.where(np.arange(20) >= 10, math.log(2.0), 0.0) + rng.normal(0, 0.005, 20)
    trend = creeping(step)
    assert trend is not None and trend.steps == 1 and abs(trend.drift) < math.log(1.05)


def _below_resolution_history(rng, versions: int, ticks: list[float]) -> list[Sample]:
    # sys time of a short program: zero in most runs, a tick or two in a few
    def version(i: int) -> Sample:
        y = np.zeros(7)
        hits = rng.choice(7, size=int(rng.integers(1, 3)), replace=False)
        y[hits] = rng.choice(ticks, size=len(hits))
        return Sample(f"v{i}", "./app [sys]", y, None)
    return [version(i) for i in range(versions)]


def test_a_history_of_amounts_mostly_below_resolution_does_not_creep():
    # seen on the demo: the newest version's only non-zero run was its smallest, so its level (the median,
    # a zero) sat higher on the log scale than its predecessors' zeros and the history "crept" by 29 %
    samples = _below_resolution_history(np.random.default_rng(3), 11, [0.0036, 0.0039, 0.0042])
    samples.append(Sample("v11", "./app [sys]", np.array([0.008548, 0, 0, 0, 0, 0, 0]), None))
    series = levels(samples)
    assert series is not None and np.allclose(series, 0.0)
    assert creep_finding("./app [sys]", samples, len(samples), "cpd", creep_floor=math.log(1.1), alpha=0.01) is None


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), versions=st.integers(5, 20),
       ticks=st.lists(st.floats(1e-4, 1e-2), min_size=1, max_size=5))
def test_versions_whose_median_is_zero_all_lie_at_one_level(seed, versions, ticks):
    series = levels(_below_resolution_history(np.random.default_rng(seed), versions, ticks))
    assert series is not None and np.allclose(series, 0.0)


def test_change_points_find_a_step():
    rng = np.random.default_rng(4)
    series = np.where(np.arange(24) >= 15, 0.7, 0.0) + rng.normal(0, 0.02, 24)
    found = change_points(series)
    assert found and found[0].index == 15 and found[0].shift == pytest.approx(0.7, abs=0.05)
    assert change_points(rng.normal(0, 0.02, 24)) == []


@pytest.mark.parametrize("seed", range(6))
def test_distinct_and_quantiles_equal_numpys_own(seed):
    # the checks use these instead of np.unique / np.quantile (which import numpy.ma): any
    # difference, even in the last bit, would change verdicts
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 7, 64, 401, 1000):
        for values in (rng.normal(size=n), rng.integers(0, 6, size=n).astype(float), np.log1p(rng.random(n))):
            assert np.array_equal(stats.distinct(values), np.unique(values))
            for q in (np.linspace(0.0, 1.0, 8)[1:-1], np.linspace(0.0, 1.0, 3), np.array([0.0, 0.25, 0.5, 1.0])):
                assert np.array_equal(stats.quantiles(values, q), np.quantile(values, q))


def test_median_equals_numpys_own():
    rng = np.random.default_rng(7)
    for n in range(1, 40):
        values = rng.lognormal(size=n)
        assert stats.median(values) == float(np.median(values))
