"""Nonparametric models (perun_core.analysis.nonparametric) on seeded signals with known truth."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from perun_core.analysis import evaluate_model, plot_points
from perun_core.analysis.bins import BIN_RULES, fit_regressogram, regressogram
from perun_core.analysis.kernel import (
    bandwidth_cv,
    bandwidth_scott,
    bandwidth_silverman,
    fit_kernel_regression,
    kernel_regression,
)
from perun_core.analysis.smoothing import fit_moving_average, moving_average
from perun_core.analysis.points import DegenerateData
from perun_core.errors import InvalidParameter, InvalidProfile
from perun_core.analysis.curves import plot_data_from_coefficients_of


def all_finite(obj) -> bool:
    if isinstance(obj, dict):
        return all(all_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(all_finite(v) for v in obj)
    if isinstance(obj, float):
        return math.isfinite(obj)
    return True


def assert_valid(record: dict, kind: str) -> None:
    assert record["model"] == kind and record["method"] == "full"
    assert all_finite(record)
    json.dumps(record, allow_nan=False)
    assert record["x_interval_start"] <= record["x_interval_end"]
    assert record["r_square"] <= 1.0


def step_signal(n=3000, seed=7):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 30.0, n)
    truth = np.select([x < 10, x < 20], [2.0, 8.0], 5.0)
    return x, truth + rng.normal(0.0, 0.2, n), truth


# -- regressogram -------------------------------------------------------------------------

@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_regressogram_of_a_step_function_recovers_the_step_means(statistic):
    x, y, _truth = step_signal()
    record = fit_regressogram(x, y, bins=3, statistic=statistic, uid="step")
    assert_valid(record, "regressogram")
    assert record["uid"] == "step" and record["statistic"] == statistic and record["bin_rule"] is None
    assert record["bin_values"] == pytest.approx([2.0, 8.0, 5.0], abs=0.03)
    assert len(record["bin_edges"]) == 4 and sum(record["bin_counts"]) == x.size
    assert record["r_square"] > 0.99


def test_regressogram_bin_means_are_exact():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    y = np.array([1.0, 3.0, 10.0, 20.0, 7.0, 7.0])
    record = fit_regressogram(x, y, bins=3)
    assert record["bin_edges"] == pytest.approx([0.0, 5 / 3, 10 / 3, 5.0])
    assert record["bin_values"] == pytest.approx([2.0, 15.0, 7.0])
    median = fit_regressogram(x, [1.0, 3.0, 10.0, 20.0, 6.0, 9.0], bins=1, statistic="median")
    assert median["bin_values"] == [(6.0 + 9.0) / 2]


@pytest.mark.parametrize("rule", BIN_RULES)
def test_regressogram_bin_rules_match_numpy(rule):
    x, y, _ = step_signal(500)
    record = fit_regressogram(x, y, bins=rule)
    assert record["bin_rule"] == rule
    assert record["bin_edges"] == pytest.approx(np.histogram_bin_edges(x, bins=rule).tolist())


def test_regressogram_rules_are_capped():
    x = np.concatenate([np.linspace(0, 1e-6, 1000), [1e6]])
    record = fit_regressogram(x, np.ones_like(x), bins="fd", max_bins=50)
    assert len(record["bin_values"]) == 50


def test_empty_bins_repeat_their_neighbour():
    record = fit_regressogram([0.0, 0.1, 9.9, 10.0], [1.0, 1.0, 4.0, 4.0], bins=5)
    assert record["bin_counts"] == [2, 0, 0, 0, 2]
    assert record["bin_values"] == [1.0, 1.0, 1.0, 1.0, 4.0]


def test_regressogram_evaluates_per_bin():
    record = fit_regressogram([0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 5.0, 5.0], bins=2)
    assert evaluate_model(record, [-5.0, 0.0, 1.4, 1.5, 3.0, 99.0]).tolist() == [1, 1, 1, 5, 5, 5]
    xs, ys = plot_points(record)
    assert xs == [0.0, 1.5, 1.5, 3.0] and ys == [1.0, 1.0, 5.0, 5.0]


def test_regressogram_parameters_are_checked():
    with pytest.raises(InvalidParameter):
        fit_regressogram([1.0], [1.0], bins="magic")
    with pytest.raises(InvalidParameter):
        fit_regressogram([1.0], [1.0], bins=0)
    with pytest.raises(InvalidParameter):
        fit_regressogram([1.0], [1.0], statistic="mode")


def test_regressogram_of_a_single_point():
    record = fit_regressogram([4.0], [2.5])
    assert record["bin_values"] == [2.5] and record["r_square"] == 1.0


# -- moving average -------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["sma", "smm", "ema"])
@pytest.mark.parametrize("width", [1, 2, 5, 50])
def test_moving_average_of_a_constant_is_constant(method, width):
    x = np.arange(40.0)
    record = fit_moving_average(x, np.full(40, 7.25), moving_method=method, window_width=width)
    assert_valid(record, "moving_average")
    assert set(record["y"]) == {7.25}
    assert record["r_square"] == 1.0


def reference_window(y, i, width, center):
    left = width // 2 if center else width - 1
    return y[max(0, i - left):min(len(y), i - left + width)]


@pytest.mark.parametrize("width", [1, 2, 3, 4, 7, 30])
@pytest.mark.parametrize("center", [True, False])
def test_moving_mean_and_median_match_a_direct_computation(width, center):
    rng = np.random.default_rng(width)
    x = np.arange(25.0)
    y = rng.normal(size=25)
    sma = fit_moving_average(x, y, moving_method="sma", window_width=width, center=center)
    smm = fit_moving_average(x, y, moving_method="smm", window_width=width, center=center)
    expected_width = min(width, 25)
    assert sma["window_width"] == expected_width
    windows = [reference_window(y, i, expected_width, center) for i in range(25)]
    assert sma["y"] == pytest.approx([np.mean(w) for w in windows])
    assert smm["y"] == pytest.approx([np.median(w) for w in windows])


def test_exponential_moving_average_follows_its_recursion():
    y = np.array([1.0, 5.0, 2.0, 8.0, 3.0])
    record = fit_moving_average(np.arange(5.0), y, moving_method="ema", window_width=3)
    alpha = 0.5
    expected = [y[0]]
    for value in y[1:]:
        expected.append(alpha * value + (1 - alpha) * expected[-1])
    assert record["y"] == pytest.approx(expected)
    assert record["center"] is False
    with pytest.raises(InvalidParameter):
        fit_moving_average(np.arange(5.0), y, moving_method="ema", center=True)


def test_moving_average_sorts_by_x_and_merges_equal_x():
    x = np.array([3.0, 1.0, 2.0, 1.0])
    y = np.array([30.0, 10.0, 20.0, 12.0])
    record = fit_moving_average(x, y, window_width=1)
    assert record["x"] == [1.0, 2.0, 3.0]
    assert record["y"] == [11.0, 20.0, 30.0]


def test_moving_average_smooths_noise_and_is_thinned():
    rng = np.random.default_rng(11)
    x = np.sort(rng.uniform(0, 10, 5000))
    y = np.sin(x) + rng.normal(0, 0.2, x.size)
    record = fit_moving_average(x, y, window_width=101, max_points=200)
    assert len(record["x"]) == 200 and record["x"][0] == x[0] and record["x"][-1] == x[-1]
    inner = (x > 1) & (x < 9)
    assert np.abs(evaluate_model(record, x[inner]) - np.sin(x[inner])).max() < 0.1
    assert record["window_width"] == 101


def test_moving_average_default_width_is_the_square_root_of_the_count():
    record = fit_moving_average(np.arange(100.0), np.arange(100.0))
    assert record["window_width"] == 10 and record["center"] is True


# -- kernel regression ------------------------------------------------------------------------

def test_bandwidth_rules_match_the_textbook_formulas():
    rng = np.random.default_rng(3)
    x = rng.gamma(2.0, 3.0, 400)
    n = x.size
    sigma = np.std(x, ddof=1)
    iqr = np.percentile(x, 75) - np.percentile(x, 25)
    assert bandwidth_scott(x) == pytest.approx(1.0592 * sigma * n ** (-1 / 5), rel=1e-4)
    assert bandwidth_silverman(x) == pytest.approx(0.9 * min(sigma, iqr / 1.34) * n ** (-1 / 5))
    flat = np.r_[np.zeros(10), [1.0]]  # IQR of 0: sigma alone
    assert bandwidth_silverman(flat) == pytest.approx(0.9 * np.std(flat, ddof=1) * 11 ** (-1 / 5))


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_kernel_regression_of_a_smooth_function_has_small_error(kernel):
    rng = np.random.default_rng(17)
    x = rng.uniform(0.0, 2 * np.pi, 800)
    y = np.sin(x) + rng.normal(0.0, 0.1, x.size)
    record = fit_kernel_regression(x, y, kernel=kernel, bandwidth="cv", cv_sample=400, uid="sin")
    assert_valid(record, "kernel_regression")
    assert record["kernel"] == kernel and record["bandwidth_method"] == "cv"
    grid = np.linspace(0.3, 2 * np.pi - 0.3, 50)
    assert np.abs(evaluate_model(record, grid) - np.sin(grid)).max() < 0.1
    assert record["r_square"] > 0.95


def test_kernel_regression_with_rules_and_fixed_bandwidths():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 10, 300)
    y = 0.5 * x + rng.normal(0, 0.05, 300)
    for bandwidth, method in (("scott", "scott"), ("silverman", "silverman"), (0.4, "fixed")):
        record = fit_kernel_regression(x, y, bandwidth=bandwidth, points=41)
        assert record["bandwidth_method"] == method and len(record["x"]) == 41
        inner = np.linspace(2, 8, 20)
        assert np.abs(evaluate_model(record, inner) - 0.5 * inner).max() < 0.1
    assert fit_kernel_regression(x, y, bandwidth="scott")["bandwidth"] == pytest.approx(bandwidth_scott(x))


def test_kernel_regression_nadaraya_watson_at_grid_points_is_exact():
    x = np.array([0.0, 1.0, 2.0, 4.0])
    y = np.array([1.0, 2.0, 0.0, 3.0])
    record = fit_kernel_regression(x, y, bandwidth=0.8, points=5)
    for gx, gy in zip(record["x"], record["y"]):
        w = np.exp(-0.5 * ((gx - x) / 0.8) ** 2)
        assert gy == pytest.approx(np.sum(w * y) / np.sum(w))


def test_epanechnikov_has_unit_variance_support_and_bridges_gaps():
    x = np.array([0.0, 0.1, 0.2, 9.8, 9.9, 10.0])
    y = np.array([1.0, 1.0, 1.0, 3.0, 3.0, 3.0])
    record = fit_kernel_regression(x, y, kernel="epanechnikov", bandwidth=0.5, points=11)
    assert all_finite(record)
    assert record["y"][0] == pytest.approx(1.0) and record["y"][-1] == pytest.approx(3.0)
    # grid points far from all data are interpolated from their neighbours
    assert all(1.0 <= v <= 3.0 for v in record["y"])


def test_kernel_regression_of_many_points_uses_fine_bins_accurately():
    rng = np.random.default_rng(9)
    x = rng.uniform(0, 100, 50_000)
    y = np.sqrt(x) + rng.normal(0, 0.1, x.size)
    record = fit_kernel_regression(x, y, bandwidth=2.0)
    grid = np.array(record["x"])
    weights = np.exp(-0.5 * ((grid[:, None] - x[None, :]) / 2.0) ** 2)
    exact = weights @ y / weights.sum(axis=1)
    assert np.abs(np.array(record["y"]) - exact).max() < 1e-3


def test_bandwidth_cv_is_reproducible_and_degenerate_x_is_handled():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, 3000)
    y = x**2 + rng.normal(0, 0.01, x.size)
    assert bandwidth_cv(x, y, sample=300, seed=4) == bandwidth_cv(x, y, sample=300, seed=4)
    assert bandwidth_cv(np.ones(5), np.arange(5.0)) == 1.0
    record = fit_kernel_regression(np.full(4, 2.0), [1.0, 2.0, 3.0, 4.0])
    assert record["x"] == [2.0] and record["y"] == [2.5]


def test_kernel_regression_parameters_are_checked():
    with pytest.raises(InvalidParameter):
        fit_kernel_regression([1.0, 2.0], [1.0, 2.0], kernel="box")
    with pytest.raises(InvalidParameter):
        fit_kernel_regression([1.0, 2.0], [1.0, 2.0], bandwidth=-1.0)
    with pytest.raises(InvalidParameter):
        fit_kernel_regression([1.0, 2.0], [1.0, 2.0], bandwidth="magic")


# -- profile-level functions, evaluation and plotting --------------------------------------------

def profile_points():
    x, y, _ = step_signal(600)
    return {"a": (x, y), "b": (x, 2 * y), "empty": ([], [])}


@pytest.mark.parametrize("analyse,kind", [(regressogram, "regressogram"), (moving_average, "moving_average"),
                                          (kernel_regression, "kernel_regression")])
def test_profile_level_functions_cover_every_uid(analyse, kind):
    models, skipped = analyse(profile_points())
    assert [m["uid"] for m in models] == ["a", "b"]
    assert [(s.uid, s.model, s.reason) for s in skipped] == [("empty", kind, "there are no points")]
    for record in models:
        assert_valid(record, kind)
        xs, ys = plot_points(record, 21)
        assert len(xs) == len(ys) and all(map(math.isfinite, xs + ys))
        plotted = plot_data_from_coefficients_of(record, 21)  # registered with analysis.curves
        assert plotted["plot_x"] == xs and plotted["plot_y"] == ys


def test_profile_level_functions_read_profiles():
    resources = [{"uid": "f", "structure-unit-size": i, "amount": 3.0} for i in range(20)]
    profile = {"header": {"type": "mixed"}, "snapshots": [{"resources": resources}]}
    [record] = regressogram(profile, bins=4).models
    assert record["bin_values"] == [3.0] * 4 and record["x_interval_end"] == 19


def test_evaluating_a_malformed_record_raises_invalid_profile():
    with pytest.raises(InvalidProfile):
        evaluate_model({"model": "regressogram", "bin_edges": [0, 1], "bin_values": []}, [0.5])
    with pytest.raises(InvalidProfile):
        evaluate_model({"model": "moving_average", "x": [0.0, 1.0], "y": [1.0]}, [0.5])
    with pytest.raises(InvalidProfile):
        evaluate_model({"model": "cubic-spline"}, [0.5])


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
FITS = [
    lambda x, y: fit_regressogram(x, y),
    lambda x, y: fit_regressogram(x, y, bins="fd", statistic="median"),
    lambda x, y: fit_regressogram(x, y, bins=5),
    lambda x, y: fit_moving_average(x, y),
    lambda x, y: fit_moving_average(x, y, moving_method="smm", window_width=4),
    lambda x, y: fit_moving_average(x, y, moving_method="ema", window_width=3),
    lambda x, y: fit_kernel_regression(x, y),
    lambda x, y: fit_kernel_regression(x, y, kernel="epanechnikov", bandwidth="silverman"),
    lambda x, y: fit_kernel_regression(x, y, bandwidth="cv", cv_sample=30),
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), size=st.integers(0, 25), which=st.integers(0, len(FITS) - 1))
def test_random_finite_arrays_give_finite_records_or_degenerate(data, size, which):
    x = data.draw(hnp.arrays(np.float64, size, elements=finite))
    y = data.draw(hnp.arrays(np.float64, size, elements=finite))
    try:
        with np.errstate(all="raise"):
            record = FITS[which](x, y)
    except DegenerateData as exc:
        assert exc.reason
        return
    assert all_finite(record)
    json.dumps(record, allow_nan=False)
