"""The postprocessor units: regression analysis, clusterizer, filter, regressogram, moving average, kernel regression.

The analyses run through their units on Profile objects built from
synthetic signals with known truth (each model class times seeded
multiplicative noise), through ``api_run.postprocess`` in a repository, and
their parameter declarations through the converter the CLI and YAML share.
Subprocess tests of the command line are in test_postprocess_cli.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conftest import write_pending
from runhelpers import run_env, documented  # noqa: F401 - autouse fixture

from perun_core import api, units
from perun_core.api import run as api_run
from perun_core.analysis import best_model, evaluate_model, points_by_uid
from perun_core.errors import InvalidParameter, PostprocessError
from perun_core.postprocess.common import model_region
from perun_core.profile.model import Profile
from perun_core.runner.jobs import unit_config
from perun_core.units import UnitContext
from perun_core.params import convert_params

SEED = 20240917
NOISE = 0.02  # relative (multiplicative) noise of the synthetic amounts

#: kind -> (formula, true coefficients b0, b1)
TRUTH = {
    "constant": (lambda x: np.full(x.shape, 50.0), (50.0, 0.0)),
    "linear": (lambda x: 200.0 + 3.0 * x, (200.0, 3.0)),
    "logarithmic": (lambda x: 10.0 + 20.0 * np.log(x), (10.0, 20.0)),
    "quadratic": (lambda x: 500.0 + 0.01 * x * x, (500.0, 0.01)),
    "nlogn": (lambda x: 100.0 + 0.5 * x * np.log(x), (100.0, 0.5)),
    "power": (lambda x: 2.0 * x**1.5, (2.0, 1.5)),
    "exponential": (lambda x: 5.0 * 1.004**x, (5.0, 1.004)),
}


def synthetic_rows(kinds=tuple(TRUTH), points: int = 4000, seed: int = SEED) -> list[dict]:
    """Resources of one uid per kind: x in 1..1000, amount = truth(x) * (1 + noise)."""
    rng = np.random.default_rng(seed)
    rows = []
    for kind in kinds:
        formula, _ = TRUTH[kind]
        x = rng.integers(1, 1001, points)
        y = formula(x.astype(float)) * (1.0 + rng.normal(0.0, NOISE, points))
        rows.extend({"uid": kind, "type": "mixed", "subtype": "time delta", "structure-unit-size": int(s),
                     "amount": float(a)} for s, a in zip(x, y))
    return rows


def complexity_profile(rows: list[dict], *, in_global: bool = True, origin: str | None = None) -> dict:
    region = {"resources": rows, "models": []}
    data = {
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "./app", "params": "",
                   "workload": "in"},
        "collector_info": {"name": "complexity", "params": {}},
        "postprocessors": [],
        "snapshots": [] if in_global else [{"time": "1", **region}],
    }
    if in_global:
        data["global"] = {"timestamp": 1, **region}
    if origin is not None:
        data = {"origin": origin, **data}
    return data


def run_unit(name: str, profile: Profile, **params) -> tuple[Profile, dict]:
    """The unit's output profile and its ``info`` (after converting ``params`` like the runner does)."""
    unit = units.get_postprocessor(name)
    converted = unit_config("postprocessor", name, params).params
    result = unit.postprocess(UnitContext(cwd=None), {**converted, "profile": profile})
    assert result.status == 0, result.message
    return result.kwargs["profile"], result.kwargs.get("info", {})


def models_of(profile: Profile) -> list[dict]:
    return [model for _, region in profile.regions() for model in region.models]


def coeffs(record: dict) -> dict[str, float]:
    return {c["name"]: c["value"] for c in record["coeffs"]}


def finite_json(obj) -> bool:
    json.dumps(obj, allow_nan=False)
    return True


@pytest.fixture(scope="module")
def synthetic_profile() -> Profile:
    return Profile.from_dict(complexity_profile(synthetic_rows()))


# -- regression analysis ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", list(TRUTH))
def test_the_best_model_is_the_generating_class_with_coefficients_within_5_percent(synthetic_profile, kind):
    out, info = run_unit("regression_analysis", synthetic_profile, method="full")
    records = [m for m in models_of(out) if m["uid"] == kind]
    assert {m["model"] for m in records} <= set(TRUTH)
    best = best_model(records)
    assert best["model"] == kind
    got = coeffs(best)
    b0, b1 = TRUTH[kind][1]
    assert got["b0"] == pytest.approx(b0, rel=0.05)
    if kind == "constant":
        assert got["b1"] == 0.0
    else:
        assert got["b1"] == pytest.approx(b1, rel=0.05)
    assert best["r_square"] > 0.9 or kind == "constant"


def test_records_have_the_documented_form_and_go_to_the_global_region(synthetic_profile):
    out, info = run_unit("regression_analysis", synthetic_profile, method="full")
    assert out.snapshots == [] and len(out.global_region.models) == 7 * 7
    points = points_by_uid(synthetic_profile)
    for record in out.global_region.models:
        x = points[record["uid"]][0]
        assert set(record) - {"r_square_error"} == {"uid", "model", "method", "r_square", "coeffs",
                                                    "x_interval_start", "x_interval_end", "per_key", "of_key",
                                                    "downweighted"}
        assert [c["name"] for c in record["coeffs"]] == ["b0", "b1"] and record["method"] == "full"
        assert (record["x_interval_start"], record["x_interval_end"]) == (x.min(), x.max())
        assert type(record["x_interval_start"]) is int
        assert (record["per_key"], record["of_key"]) == ("structure-unit-size", "amount")
        assert finite_json(record)
    # the input is untouched and shares its resources
    assert synthetic_profile.global_region.models == []
    assert out.global_region.resources is synthetic_profile.global_region.resources
    assert info == {}


def time_profile_with_sizes(packed: bool = False) -> Profile:
    """What the time collector over an integer generator gives: one uid, seconds and bytes per size."""
    rng = np.random.default_rng(SEED)
    rows = []
    for order, n in enumerate(range(100, 2100, 100), 1):
        wall = 2e-9 * n * n * (1.0 + rng.normal(0.0, NOISE))
        for kind, subtype, amount in (("time", "real", wall), ("time", "user", 0.9 * wall),
                                      ("time", "sys", 1e-4 * (1.0 + rng.normal(0.0, NOISE))),
                                      ("memory", "max_rss", float(2_000_000 + 8 * n))):
            rows.append({"uid": "./quad", "type": kind, "subtype": subtype, "amount": amount, "order": order,
                         "structure-unit-size": n})
    data = complexity_profile(rows)
    data["header"] = {"type": "time", "units": {"time": "s", "memory": "B"}, "cmd": "./quad", "params": "",
                      "workload": ""}
    profile = Profile.from_dict(data)
    if packed:
        from perun_core.profile.codec import decode_content, encode_columnar
        profile = decode_content(encode_columnar(profile))
        assert profile.global_region.resources.packed("subtype") is not None
    return profile


@pytest.mark.parametrize("packed", [False, True], ids=["rows", "packed"])
def test_a_uid_measuring_seconds_and_bytes_is_modelled_per_subtype(packed):
    out, info = run_unit("regression_analysis", time_profile_with_sizes(packed), method="full")
    by_subtype: dict = {}
    for record in models_of(out):
        assert record["uid"] == "./quad"
        by_subtype.setdefault((record["resource_type"], record["subtype"]), []).append(record)
    assert set(by_subtype) == {("time", "real"), ("time", "user"), ("time", "sys"), ("memory", "max_rss")}
    for subtype in ("real", "user"):
        best = best_model(by_subtype[("time", subtype)])
        assert best["model"] in ("quadratic", "power") and best["r_square"] > 0.99
        if best["model"] == "power":
            assert coeffs(best)["b1"] == pytest.approx(2.0, rel=0.05)
    assert best_model(by_subtype[("memory", "max_rss")])["model"] == "linear"
    assert all(s["uid"].startswith("./quad [") for s in info.get("skipped", []))


def test_checks_pair_per_subtype_models_with_their_location():
    from perun_core.check.data import ProfileData

    out, _ = run_unit("regression_analysis", time_profile_with_sizes(), method="full")
    stored = ProfileData(out).stored_models()
    assert set(stored) == {"./quad [real]", "./quad [user]", "./quad [sys]", "./quad [max_rss]"}
    assert {m["subtype"] for m in stored["./quad [real]"]} == {"real"}


def test_models_go_to_the_snapshot_holding_the_resources_without_a_global_region():
    rows = synthetic_rows(("linear",), points=200)
    data = complexity_profile(rows, in_global=False)
    data["snapshots"].insert(0, {"time": "0", "resources": [], "models": [{"model": "old"}]})
    profile = Profile.from_dict(data)
    assert model_region(profile) == 1
    out, _ = run_unit("regression_analysis", profile, regression_models=["linear"])
    assert out.snapshots[0].models == [{"model": "old"}]
    assert [m["model"] for m in out.snapshots[1].models] == ["linear"]
    assert out.global_region is None
    # models already stored stay: a second run appends
    again, _ = run_unit("regression_analysis", out, regression_models=["constant"])
    assert [m["model"] for m in again.snapshots[1].models] == ["linear", "constant"]


def test_points_of_all_regions_are_modelled_together():
    rows = synthetic_rows(("linear",), points=400)
    data = complexity_profile(rows[200:])
    data["snapshots"] = [{"time": "0", "resources": rows[:200]}]
    out, _ = run_unit("regression_analysis", Profile.from_dict(data), regression_models="linear")
    [record] = out.global_region.models
    assert coeffs(record)["b1"] == pytest.approx(3.0, rel=0.05)


@pytest.mark.parametrize("method", ["interval", "bisection"])
def test_interval_and_bisection_cover_the_x_range_without_gaps_or_overlaps(method):
    rng = np.random.default_rng(SEED)
    x = rng.integers(0, 2001, 6000)
    # linear, then quadratic, then constant: the best model changes along x
    y = np.where(x < 700, 50 + 2.0 * x, np.where(x < 1400, 1450 + 0.004 * (x - 700) ** 2, 3400.0))
    y = y * (1 + rng.normal(0, 0.01, x.size))
    rows = [{"uid": "f", "structure-unit-size": int(a), "amount": float(b)} for a, b in zip(x, y)]
    out, _ = run_unit("regression_analysis", Profile.from_dict(complexity_profile(rows)), method=method, steps=5)
    records = sorted(out.global_region.models, key=lambda m: m["x_interval_start"])
    assert len(records) >= 2 and all(m["method"] == method for m in records)
    starts = np.array([m["x_interval_start"] for m in records])
    ends = np.array([m["x_interval_end"] for m in records])
    assert starts[0] == x.min() and ends[-1] == x.max()
    assert (starts <= ends).all() and (ends[:-1] < starts[1:]).all()
    # every data point lies in exactly one interval, and no point lies between two intervals
    covering = ((x[:, None] >= starts[None, :]) & (x[:, None] <= ends[None, :])).sum(axis=1)
    assert (covering == 1).all()
    distinct = np.unique(x)
    for end, start in zip(ends[:-1], starts[1:]):
        assert distinct[np.searchsorted(distinct, end) + 1] == start
    if method == "interval":
        assert len(records) == 5


@pytest.mark.parametrize("method", ["iterative", "initial_guess"])
def test_sampling_methods_store_the_best_model_fitted_on_all_points(synthetic_profile, method):
    out, _ = run_unit("regression_analysis", synthetic_profile, method=method, steps=4)
    records = out.global_region.models
    assert sorted(m["uid"] for m in records) == sorted(TRUTH)
    for record in records:
        assert record["method"] == method
        # pure noise around a constant is undecidable on a sample: any model explains ~nothing
        if record["uid"] != "constant":
            assert record["model"] == record["uid"]
            assert coeffs(record)["b1"] == pytest.approx(TRUTH[record["uid"]][1][1], rel=0.05)


def test_depending_on_and_of_choose_the_keys_and_are_recorded():
    rows = [{"uid": "f", "size": float(s), "time": 3.0 + 2.0 * s, "amount": 1.0} for s in range(1, 50)]
    out, _ = run_unit("regression_analysis", Profile.from_dict(complexity_profile(rows)),
                      depending_on="size", of="time", regression_models="linear")
    [record] = out.global_region.models
    assert coeffs(record) == pytest.approx({"b0": 3.0, "b1": 2.0})
    assert (record["per_key"], record["of_key"]) == ("size", "time")


def test_flattened_keys_work_as_variables():
    rows = [{"uid": {"function": "f", "line": 3}, "input": {"size": s}, "amount": 4.0 * s} for s in range(1, 30)]
    out, _ = run_unit("regression_analysis", Profile.from_dict(complexity_profile(rows)),
                      depending_on="input:size", regression_models="linear")
    [record] = out.global_region.models
    assert record["uid"] == "f:3" and coeffs(record)["b1"] == pytest.approx(4.0)


def test_degenerate_models_are_skipped_with_reasons_in_the_postprocessors_entry(perun_repo):
    root, shas = perun_repo
    rows = [{"uid": "neg", "structure-unit-size": s, "amount": -1.0 - s} for s in range(1, 20)]
    rows += [{"uid": "flat", "structure-unit-size": 5, "amount": 1.0 + i} for i in range(5)]
    write_pending(root, "d.perf", complexity_profile(rows, origin=shas[-1]))
    done = api_run.postprocess("d.perf", "regression_analysis", {"method": "full"}, cwd=root)
    saved = documented(done.path)
    [entry] = saved["postprocessors"]
    assert entry["name"] == "regression_analysis" and entry["params"]["method"] == "full"
    skipped = {(s["uid"], s["model"]): s["reason"] for s in entry["skipped"]}
    assert skipped[("neg", "power")] == skipped[("neg", "exponential")] == "ln y is undefined: some y values are <= 0"
    assert skipped[("flat", "linear")] == "all x values are equal"
    stored = {(m["uid"], m["model"]) for m in saved["global"]["models"]}
    assert ("neg", "linear") in stored and ("flat", "constant") in stored and ("flat", "linear") not in stored
    assert not stored & set(skipped)
    assert finite_json(saved)


def test_nothing_fittable_is_an_error_naming_the_reasons():
    rows = [{"uid": "f", "structure-unit-size": s, "amount": -float(s)} for s in range(1, 10)]
    profile = Profile.from_dict(complexity_profile(rows))
    with pytest.raises(PostprocessError, match=r"no model could be fitted for uid 'f': power: ln y is undefined"):
        run_unit("regression_analysis", profile, regression_models="power")


@pytest.mark.parametrize("params, message", [
    ({"depending_on": "size"}, r"parameter 'depending_on' = 'size': expected a numeric resource key, but no "
                               r"resource has the key 'size'; the numeric keys of this profile are "
                               r"'structure-unit-size', 'amount'"),
    ({"of": "uid"}, r"parameter 'of' = 'uid': expected a numeric resource key, but 'uid' holds no numbers"),
])
def test_bad_keys_name_the_numeric_keys(params, message):
    rows = [{"uid": "f", "structure-unit-size": s, "amount": float(s)} for s in range(1, 10)]
    with pytest.raises(InvalidParameter, match=message):
        run_unit("regression_analysis", Profile.from_dict(complexity_profile(rows)), **params)


def test_empty_profiles_and_nan_amounts_are_refused():
    with pytest.raises(PostprocessError, match="the profile has no resources"):
        run_unit("regression_analysis", Profile.from_dict(complexity_profile([])))
    rows = [{"uid": "f", "structure-unit-size": s, "amount": float(s)} for s in range(1, 10)]
    rows[3]["amount"] = math.nan
    rows[4]["amount"] = math.inf
    for name in ("regression_analysis", "regressogram", "moving_average", "kernel_regression"):
        with pytest.raises(PostprocessError, match="'amount' is NaN or infinite in 2 resources"):
            run_unit(name, Profile.from_dict(complexity_profile(rows)))


def test_resources_without_numbers_are_left_out_and_uids_without_points_skipped():
    rows = [{"uid": "f", "structure-unit-size": s, "amount": 2.0 * s} for s in range(1, 10)]
    rows += [{"uid": "f", "structure-unit-size": "big", "amount": 1.0}, {"uid": "g", "amount": 3.0},
             {"structure-unit-size": 3, "amount": 3.0}]
    out, info = run_unit("regression_analysis", Profile.from_dict(complexity_profile(rows)), regression_models="linear")
    [record] = out.global_region.models
    assert record["uid"] == "f" and coeffs(record)["b1"] == pytest.approx(2.0)
    assert info["skipped"] == [{"uid": "g", "model": "linear", "reason": "there are no points"}]


def test_regression_parameters_convert_from_cli_and_yaml_spellings():
    declared = units.get_postprocessor("regression_analysis").params
    assert [(p.name, p.cli_flags) for p in declared] == [
        ("method", ("-m", "--method")), ("regression_models", ("-r", "--regression_models", "--regression-models")),
        ("steps", ("-s", "--steps")), ("depending_on", ("-dp", "--depending-on")), ("of", ("-o", "--of"))]
    got = convert_params("regression_analysis", declared,
                         {"method": "bisection", "models": ["linear,quadratic", "n log n", "linear"], "per_key": "n",
                          "of_key": "t", "steps": "4"})
    assert got == {"method": "bisection", "regression_models": ["linear", "quadratic", "nlogn"], "steps": 4,
                   "depending_on": "n", "of": "t"}
    assert convert_params("regression_analysis", declared, {"regression_models": "all"})["regression_models"] == ["all"]
    defaults = convert_params("regression_analysis", declared, None)
    assert defaults == {"method": "full", "regression_models": None, "steps": 3,
                        "depending_on": "structure-unit-size", "of": "amount"}
    with pytest.raises(InvalidParameter, match=r"'regression_models' = \['cubic'\]: expected model names"):
        convert_params("regression_analysis", declared, {"regression_models": ["cubic"]})
    with pytest.raises(InvalidParameter, match="'method' = 'bmoe'"):
        convert_params("regression_analysis", declared, {"method": "bmoe"})
    with pytest.raises(InvalidParameter, match="'steps' = 0"):
        convert_params("regression_analysis", declared, {"steps": 0})


def test_the_dashed_alias_names_the_same_unit(perun_repo):
    root, shas = perun_repo
    assert units.get_postprocessor("regression-analysis") is units.get_postprocessor("regression_analysis")
    assert "regression-analysis" in units.postprocessors
    assert "regression-analysis" not in units.postprocessors.names()
    rows = synthetic_rows(("linear",), points=100)
    write_pending(root, "a.perf", complexity_profile(rows, origin=shas[-1]))
    done = api_run.postprocess("a.perf", "regression-analysis", {"regression_models": "linear"}, cwd=root)
    assert documented(done.path)["postprocessors"][0]["name"] == "regression_analysis"


def test_a_registered_profile_is_modelled_from_its_packed_columns(perun_repo):
    root, shas = perun_repo
    write_pending(root, "r.perf", complexity_profile(synthetic_rows(), origin=shas[0]))
    api.add(["r.perf"], minor=shas[0], cwd=root)
    done = api_run.postprocess("0@i", "regression_analysis", minor=shas[0], cwd=root)
    saved = documented(done.path)
    assert saved["origin"] == shas[0]
    assert {m["uid"]: m for m in saved["global"]["models"]}.keys() == set(TRUTH)
    for kind in TRUTH:
        assert best_model([m for m in saved["global"]["models"] if m["uid"] == kind])["model"] == kind
    rows = saved["global"]["resources"]
    assert len(rows) == 7 * 4000 and set(rows[0]) == {"uid", "type", "subtype", "structure-unit-size", "amount"}


def test_run_job_postprocesses_with_yaml_params(perun_repo):
    root, _ = perun_repo
    result = api_run.run_job(["true"], collectors=["time"], postprocessors=[
        ("filter", {"subtype": "real"}),
        ("regression_analysis", {"per_key": "order", "models": "constant,linear"}),
    ], cwd=root)
    saved = documented(result.profiles[0].path)
    assert [p["name"] for p in saved["postprocessors"]] == ["filter", "regression_analysis"]
    assert {r["subtype"] for r in saved["global"]["resources"]} == {"real"}
    assert {m["model"] for m in saved["global"]["models"]} <= {"constant", "linear"}


# -- nonparametric models ------------------------------------------------------------------------

def smooth_rows(points: int = 6000) -> tuple[list[dict], callable]:
    rng = np.random.default_rng(SEED)
    truth = lambda x: 300.0 + 100.0 * np.sin(x / 150.0)  # noqa: E731
    x = rng.uniform(0.0, 1000.0, points)
    y = truth(x) * (1.0 + rng.normal(0.0, NOISE, points))
    return [{"uid": "wave", "structure-unit-size": float(a), "amount": float(b)} for a, b in zip(x, y)], truth


@pytest.mark.parametrize("name, params", [
    ("regressogram", {}),
    ("regressogram", {"bins": "40", "statistic": "median"}),
    ("regressogram", {"bins": "sturges"}),
    ("moving_average", {}),
    ("moving_average", {"moving_method": "smm", "window_width": 101}),
    ("moving_average", {"moving_method": "ema", "window_width": 41}),
    ("kernel_regression", {}),
    ("kernel_regression", {"kernel": "epanechnikov", "bandwidth": "silverman"}),
    ("kernel_regression", {"bandwidth": "cv"}),
    ("kernel_regression", {"bandwidth": "20"}),
])
def test_nonparametric_models_track_a_known_smooth_curve(name, params):
    rows, truth = smooth_rows()
    out, info = run_unit(name, Profile.from_dict(complexity_profile(rows)), **params)
    [record] = out.global_region.models
    assert record["model"] == name and record["uid"] == "wave" and info == {}
    assert (record["per_key"], record["of_key"]) == ("structure-unit-size", "amount")
    assert finite_json(record)
    if name == "regressogram":
        # a step function matches the curve at the middle of its bins
        edges = np.array(record["bin_edges"])
        grid = (edges[1:] + edges[:-1]) / 2
        grid = grid[(grid >= 100.0) & (grid <= 900.0)]
    else:
        grid = np.linspace(100.0, 900.0, 300)  # away from the ends, where windows and kernels are cut short
    error = np.abs(evaluate_model(record, grid) - truth(grid))
    # the curve spans 200: at most 5 % off anywhere, 3 % on average
    assert len(grid) >= 10 and error.max() < 10.0 and np.sqrt(np.mean(error**2)) < 6.0
    assert record["r_square"] > 0.95


def test_nonparametric_records_keep_their_settings():
    rows, _ = smooth_rows(1000)
    profile = Profile.from_dict(complexity_profile(rows))
    [gram] = run_unit("regressogram", profile, bins=25)[0].global_region.models
    assert len(gram["bin_values"]) == 25 and gram["statistic"] == "mean"
    [moving] = run_unit("moving_average", profile, moving_method="ema", window_width=9)[0].global_region.models
    assert (moving["moving_method"], moving["window_width"], moving["center"]) == ("ema", 9, False)
    [trailing] = run_unit("moving_average", profile, center=False)[0].global_region.models
    assert trailing["center"] is False
    [kernel] = run_unit("kernel_regression", profile, bandwidth=12.5, points=51)[0].global_region.models
    assert (kernel["bandwidth"], kernel["bandwidth_method"], len(kernel["x"])) == (12.5, "fixed", 51)


@pytest.mark.parametrize("name, params, message", [
    ("regressogram", {"bins": "0"}, "'bins' = '0': expected a positive number of bins or a rule"),
    ("regressogram", {"bins": "many"}, "'bins' = 'many'"),
    ("moving_average", {"moving_method": "wma"}, "'moving_method' = 'wma'"),
    ("moving_average", {"window_width": 0}, "'window_width' = 0"),
    ("kernel_regression", {"bandwidth": "-2"}, "'bandwidth' = '-2': expected a positive number or a rule"),
    ("kernel_regression", {"kernel": "box"}, "'kernel' = 'box'"),
    ("clusterizer", {"strategy": "kmeans"}, "'strategy' = 'kmeans'"),
    ("clusterizer", {"window_width": 0}, "'window_width' = 0"),
    ("filter", {"condition": "amount ~ 3"}, "'conditions' = 'amount ~ 3': expected conditions 'KEY OP VALUE'"),
    ("filter", {"mode": "hide"}, "'mode' = 'hide'"),
])
def test_parameters_are_checked_when_converted(name, params, message):
    with pytest.raises(InvalidParameter, match=message):
        unit_config("postprocessor", name, params)


def test_every_unit_declares_its_parameters_once_for_cli_and_yaml():
    for name in ("regression_analysis", "clusterizer", "filter", "regressogram", "moving_average",
                 "kernel_regression"):
        unit = units.get_postprocessor(name)
        assert unit.name == name and unit.summary and unit.description
        flags = [flag for param in unit.params for flag in param.cli_flags]
        assert len(flags) == len(set(flags)), name
        defaults = convert_params(name, unit.params, None)
        assert list(defaults) == [p.name for p in unit.params]


# -- clusterizer ---------------------------------------------------------------------------------

def test_sort_order_clusters_number_each_group_by_amount():
    rows = [{"uid": "f", "type": "t", "amount": a} for a in (5.0, 1.0, 3.0)]
    rows += [{"uid": "g", "type": "t", "amount": a} for a in (2.0, 9.0)]
    rows.append({"uid": "g", "type": "t", "amount": "n/a"})
    data = complexity_profile(rows[:3], in_global=False)
    data["global"] = {"resources": rows[3:]}
    out, _ = run_unit("clusterizer", Profile.from_dict(data))
    assert [r["cluster"] for r in out.snapshots[0].resources] == [3, 1, 2]
    assert [r.get("cluster") for r in out.global_region.resources] == [1, 2, None]
    assert "cluster" not in Profile.from_dict(data).snapshots[0].resources.rows()[0]


def test_sliding_window_clusters_with_absolute_and_relative_measures():
    rows = [{"uid": "f", "amount": float(a)} for a in (1, 2, 3, 10, 11, 12, 13, 40)]
    profile = Profile.from_dict(complexity_profile(rows))
    out, _ = run_unit("clusterizer", profile, strategy="sliding_window", window_width=3, width_measure="absolute",
                      window_height=5, height_measure="absolute")
    assert [r["cluster"] for r in out.global_region.resources] == [1, 1, 1, 2, 2, 2, 3, 4]
    out, _ = run_unit("clusterizer", profile, strategy="sliding_window", window_width=0.5, width_measure="relative",
                      window_height=0.5, height_measure="relative")
    # windows of up to 4 resources, amounts up to 1.5 times the first
    assert [r["cluster"] for r in out.global_region.resources] == [1, 2, 2, 3, 3, 3, 3, 4]
    out, _ = run_unit("clusterizer", profile, strategy="sliding_window", window_width=0.5, width_measure="weighted",
                      window_height=100, height_measure="absolute")
    assert [r["cluster"] for r in out.global_region.resources] == [1, 1, 1, 1, 2, 2, 2, 2]


def test_clusters_serve_as_the_independent_variable_of_regression():
    rng = np.random.default_rng(SEED)
    amounts = rng.uniform(10.0, 1000.0, 500)
    rows = [{"uid": "alloc", "type": "memory", "amount": float(a)} for a in amounts]
    clustered, _ = run_unit("clusterizer", Profile.from_dict(complexity_profile(rows)))
    out, _ = run_unit("regression_analysis", clustered, depending_on="cluster", regression_models="linear")
    [record] = out.global_region.models
    assert record["per_key"] == "cluster" and record["r_square"] > 0.99
    assert coeffs(record)["b1"] == pytest.approx(990.0 / 500, rel=0.1)


def test_clusterizer_refuses_a_non_numeric_amount_key():
    rows = [{"uid": "f", "amount": 1.0, "name": "x"}]
    with pytest.raises(InvalidParameter, match="'of' = 'name'"):
        run_unit("clusterizer", Profile.from_dict(complexity_profile(rows)), of="name")


# -- filter ---------------------------------------------------------------------------------------

FILTER_ROWS = [
    {"uid": "f", "type": "time", "subtype": "real", "amount": 1.0},
    {"uid": "f", "type": "time", "subtype": "user", "amount": 20.0},
    {"uid": "g", "type": "memory", "subtype": "malloc", "amount": 300},
    {"uid": {"function": "h", "line": 7}, "type": "memory", "subtype": "free", "amount": 0},
    {"uid": "g", "type": "memory", "subtype": "malloc"},
]


@pytest.mark.parametrize("params, kept", [
    ({"uid": ["g"]}, [2, 4]),
    ({"uid": ["h:7"]}, [3]),
    ({"type": "memory", "subtype": ["malloc", "free"]}, [2, 3, 4]),
    ({"condition": ["amount >= 10"]}, [1, 2]),
    ({"condition": ["amount >= 10", "amount < 100"]}, [1]),
    ({"condition": ["subtype == 'real'"]}, [0]),
    ({"condition": ["amount >= 10"], "mode": "drop"}, [0, 3, 4]),
    ({"uid": "f", "mode": "drop"}, [2, 3, 4]),
    ({}, [0, 1, 2, 3, 4]),
])
def test_filter_keeps_or_drops_matching_resources(params, kept):
    profile = Profile.from_dict(complexity_profile(FILTER_ROWS))
    profile.global_region.models.append({"model": "constant", "uid": "f"})
    out, _ = run_unit("filter", profile, **params)
    assert out.global_region.resources.rows() == [FILTER_ROWS[i] for i in kept]
    assert out.global_region.models == [{"model": "constant", "uid": "f"}]


def test_filter_refuses_conditions_on_keys_no_resource_has():
    profile = Profile.from_dict(complexity_profile(FILTER_ROWS))
    with pytest.raises(InvalidParameter, match=r"no resource has a number under 'amout'; the numeric keys of "
                                               r"this profile are 'uid:line', 'amount'"):
        run_unit("filter", profile, condition="amout > 3")
    with pytest.raises(InvalidParameter, match="no resource has the key 'kind'"):
        run_unit("filter", profile, condition="kind == x")
    with pytest.raises(PostprocessError, match="no resources"):
        run_unit("filter", Profile.from_dict(complexity_profile([])))
