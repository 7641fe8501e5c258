"""Robust models: preempted measurements do not move the models, clean data keep least squares."""

from __future__ import annotations

import numpy as np
import pytest

from perun_core.analysis.bins import regressogram
from perun_core.analysis.regression import fit_model, fit_models


def _quadratic(seed: int, repeated: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.repeat(np.arange(100.0, 2100.0, 100.0), 10) if repeated else rng.uniform(100, 2000, 300)
    truth = 50.0 + 3e-3 * x * x
    return x, truth * (1 + rng.normal(0, 0.03, len(x)))


def _preempted(y: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 1000)
    out = y.copy()
    hit = rng.choice(len(y), len(y) // 10, replace=False)
    out[hit] *= rng.uniform(3, 8, len(hit))
    return out


@pytest.mark.parametrize("repeated", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_ten_percent_of_points_three_to_eight_times_slower_leave_the_quadratic_model(seed, repeated):
    x, y = _quadratic(seed, repeated)
    models, _skipped = fit_models(x, _preempted(y, seed), regression_models=["all"])
    best = max(models, key=lambda m: m["r_square"])
    assert best["model"] == "quadratic"
    coeffs = {c["name"]: c["value"] for c in best["coeffs"]}
    assert coeffs["b1"] == pytest.approx(3e-3, rel=0.05)
    assert coeffs["b0"] == pytest.approx(50.0, abs=0.05 * 3e-3 * 2000**2)  # within 5 % of the largest value
    assert best["r_square"] > 0.95
    assert best["downweighted"] >= len(x) // 10 * 0.9


@pytest.mark.parametrize("repeated", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_clean_data_give_the_plain_least_squares_coefficients(seed, repeated):
    x, y = _quadratic(seed, repeated)
    record = fit_model(x, y, "quadratic")
    plain = np.polyfit(x * x, y, 1)
    coeffs = {c["name"]: c["value"] for c in record["coeffs"]}
    assert record["downweighted"] == 0
    assert coeffs["b1"] == pytest.approx(plain[0], rel=1e-9)
    assert coeffs["b0"] == pytest.approx(plain[1], rel=1e-9)


def test_the_outliers_would_ruin_plain_least_squares():
    """The test data are hard: without the weights the quadratic model is far off (guards the tests above)."""
    x, y = _quadratic(0, True)
    dirty = _preempted(y, 0)
    slope, _intercept = np.polyfit(x * x, dirty, 1)
    assert abs(slope / 3e-3 - 1) > 0.05 or np.corrcoef(x * x, dirty)[0, 1] ** 2 < 0.9


def test_nonparametric_models_leave_out_preempted_points_and_say_how_many():
    x, y = _quadratic(3, True)
    dirty = _preempted(y, 3)
    profile = {"header": {"type": "mixed", "units": {"mixed(time delta)": "us"}},
               "snapshots": [{"resources": [{"uid": "f", "structure-unit-size": float(a), "amount": float(b)}
                                             for a, b in zip(x, dirty)], "models": []}]}
    clean_profile = {**profile, "snapshots": [{"resources": [{"uid": "f", "structure-unit-size": float(a),
                                                              "amount": float(b)} for a, b in zip(x, y)],
                                               "models": []}]}
    result = regressogram(profile)
    clean = regressogram(clean_profile)
    model = result.models[0]
    assert model["downweighted"] >= 18 and clean.models[0]["downweighted"] == 0
    assert model["r_square"] > 0.95
