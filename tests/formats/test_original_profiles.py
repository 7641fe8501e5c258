"""Every profile the original Perun (0.28.3) wrote, and the variants of its older files, reads correctly."""

from __future__ import annotations

import json
import math

import pytest

from perun_core.errors import InvalidProfile
from perun_core.profile.codec import from_json_bytes, load_profile_from_file

from .conftest import PROFILES

# file -> (layout, resource rows, resource types, models, postprocessors); rows and types as the
# original itself counts them (tests/fixtures/original/README.md, "Counts per profile")
EXPECTED = {
    "bounds-sorter.perf": ("original-0.28", 11, {"local bound", "total bound"}, 0, []),
    "complexity-cplx.perf": ("original-0.28", 40, {"mixed"}, 0, []),
    "complexity-kernel-regression-estimator-settings.perf": ("original-0.28", 40, {"mixed"}, 2, ["kernel_regression"]),
    "complexity-kernel-regression-kernel-ridge.perf": ("original-0.28", 40, {"mixed"}, 2, ["kernel_regression"]),
    "complexity-kernel-regression-kernel-smoothing.perf": ("original-0.28", 40, {"mixed"}, 2, ["kernel_regression"]),
    "complexity-kernel-regression-method-selection.perf": ("original-0.28", 40, {"mixed"}, 2, ["kernel_regression"]),
    "complexity-kernel-regression-user-selection.perf": ("original-0.28", 40, {"mixed"}, 2, ["kernel_regression"]),
    "complexity-moving-average-ema.perf": ("original-0.28", 40, {"mixed"}, 2, ["moving_average"]),
    "complexity-moving-average-sma.perf": ("original-0.28", 40, {"mixed"}, 2, ["moving_average"]),
    "complexity-moving-average-smm.perf": ("original-0.28", 40, {"mixed"}, 2, ["moving_average"]),
    "complexity-regression-analysis-bisection.perf": ("original-0.28", 40, {"mixed"}, 2, ["regression_analysis"]),
    "complexity-regression-analysis-full.perf": ("original-0.28", 40, {"mixed"}, 12, ["regression_analysis"]),
    "complexity-regression-analysis-initial-guess.perf": ("original-0.28", 40, {"mixed"}, 2, ["regression_analysis"]),
    "complexity-regression-analysis-interval.perf": ("original-0.28", 40, {"mixed"}, 8, ["regression_analysis"]),
    "complexity-regression-analysis-iterative.perf": ("original-0.28", 40, {"mixed"}, 2, ["regression_analysis"]),
    "complexity-regression-analysis-then-regressogram.perf": ("original-0.28", 40, {"mixed"}, 14,
                                                              ["regression_analysis", "regressogram"]),
    "complexity-regressogram-auto-median.perf": ("original-0.28", 40, {"mixed"}, 2, ["regressogram"]),
    "complexity-regressogram-user-buckets.perf": ("original-0.28", 40, {"mixed"}, 2, ["regressogram"]),
    "complexity-sorter-zero-sizes.perf": ("original-0.28", 302, {"mixed"}, 0, []),
    "import-perf-record.perf": ("original-0.28", 4, {None}, 0, []),
    "import-perf-script-stats-metadata.perf": ("original-0.28", 4, {None}, 0, []),
    "import-perf-stack.perf": ("original-0.28", 4, {None}, 0, []),
    "kperf-python-empty-exitcode2.perf": ("original-0.28", 0, set(), 0, []),
    "kperf-python-fib.perf": ("original-0.28", 229, {None}, 0, []),
    "kperf-sorter.perf": ("original-0.28", 5, {None}, 0, []),
    "memory-sorter-all-traces.perf": ("original-0.28", 29, {"memory"}, 0, []),
    "memory-sorter.perf": ("original-0.28", 29, {"memory"}, 0, []),
    "synthetic-bounds-bound-type.perf": ("original-0.28", 3, {"local bound", "total bound"}, 0, []),
    "synthetic-flat-text-amounts.perf": ("original-0.28", 3, {None}, 0, []),
    "synthetic-global-list-resources.perf": ("documented", 4, {"mixed"}, 1, []),
    "synthetic-interval-keys-header-params.perf": ("original-0.28", 4, {"mixed"}, 2, ["regression_analysis"]),
    "synthetic-kperf-exitcode-list-stats-metadata.perf": ("original-0.28", 4, {None}, 0, []),
    "synthetic-ktrace-stats.perf": ("original-0.28", 3, {"stats"}, 0, []),
    "synthetic-old-time-empty-params.perf": ("original-0.28", 3, {"time"}, 0, ["filter", "normalizer"]),
    "synthetic-snapshots-memory.perf": ("documented", 3, {"memory"}, 0, []),
    "synthetic-units-list-params-text.perf": ("original-0.28", 3, {"mixed"}, 0, []),
    "time-prog-regression-analysis-all-v2.perf": ("original-0.28", 36, {"time"}, 6, ["regression_analysis"]),
    "time-prog-regression-analysis-all-v3.perf": ("original-0.28", 36, {"time"}, 6, ["regression_analysis"]),
    "time-python-fib-external-generator.perf": ("original-0.28", 18, {"time"}, 0, []),
    "time-sorter-external-generator-regression-analysis-full.perf": ("original-0.28", 36, {"time"}, 2,
                                                                     ["regression_analysis"]),
    "time-sorter-external-generator.perf": ("original-0.28", 36, {"time"}, 0, []),
    "time-sorter-integer-generator.perf": ("original-0.28", 30, {"time"}, 0, []),
    "time-sorter.perf": ("original-0.28", 9, {"time"}, 0, []),
}


def test_every_fixture_is_listed():
    assert sorted(p.name for p in PROFILES.glob("*.perf")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_reads_with_the_original_counts_and_types(name):
    layout, rows, types, models, postprocessors = EXPECTED[name]
    profile = load_profile_from_file(PROFILES / name)
    assert profile.layout == layout
    assert profile.resource_count() == rows
    resources = [r for _, region in profile.regions() for r in region.resources]
    assert {r.get("type") for r in resources} == types
    assert sum(len(region.models) for _, region in profile.regions()) == models
    assert profile.postprocessor_names == postprocessors
    assert isinstance(profile.collector_info.get("params", {}), dict)  # "" read as {}


def rows_of(name):
    profile = load_profile_from_file(PROFILES / name)
    return [r for _, region in profile.regions() for r in region.resources]


def test_resource_rows_join_columns_and_persistent_properties():
    rows = rows_of("complexity-cplx.perf")
    by_uid: dict = {}
    for row in rows:
        by_uid.setdefault(row["uid"], []).append(row["structure-unit-size"])
        assert row["subtype"] == "time delta" and isinstance(row["amount"], (int, float))
    assert len(by_uid) == 2
    assert all(sizes == list(range(100, 2001, 100)) for sizes in by_uid.values())


def test_unequal_columns_are_cut_to_the_shortest_as_the_original_does():
    data = json.loads((PROFILES / "time-sorter-external-generator.perf").read_text())
    key = next(iter(data["resources"]))
    assert len(data["resources"][key]["amount"]) == 12 and len(data["resources"][key]["n"]) == 24
    rows = rows_of("time-sorter-external-generator.perf")
    assert len(rows) == 36 and all("n" in r and "amount" in r for r in rows)


def test_memory_rows_keep_uids_traces_and_addresses():
    rows = rows_of("memory-sorter.perf")
    assert all(isinstance(r["uid"], dict) and isinstance(r["trace"], list) and type(r["address"]) is int for r in rows)


def test_bounds_resources_without_columns_are_one_row_of_their_properties():
    rows = rows_of("bounds-sorter.perf")
    assert len(rows) == 11 and all("bound" in r and "class" in r for r in rows)


def test_bare_nan_tokens_are_read():
    profile = load_profile_from_file(PROFILES / "complexity-moving-average-sma.perf")
    stats = [v for m in profile.global_region.models for v in m["bucket_stats"]]
    # the NaN of a window not yet full is read as "no value" (null), which every command can handle
    assert None in stats and all(v is None or math.isfinite(v) for v in stats)
    # our evaluation gets the smoothed curve without the NaN points
    assert all(math.isfinite(v) for m in profile.global_region.models for v in m["y"])


def test_machine_header_and_exitcode_forms_are_kept():
    profile = load_profile_from_file(PROFILES / "complexity-cplx.perf")
    assert profile.header["exitcode"] == 0 and "architecture" in profile.extra["machine"]
    assert load_profile_from_file(PROFILES / "kperf-python-empty-exitcode2.perf").header["exitcode"] == 2
    listed = load_profile_from_file(PROFILES / "synthetic-kperf-exitcode-list-stats-metadata.perf")
    assert isinstance(listed.header["exitcode"], list)
    assert isinstance(listed.extra["stats"], list) and isinstance(listed.extra["metadata"], list)


def test_regressogram_without_bin_edges_gets_equal_width_buckets():
    from perun_core.analysis.nonparametric import evaluate_nonparametric

    profile = load_profile_from_file(PROFILES / "complexity-regressogram-user-buckets.perf")
    for model in profile.global_region.models:
        assert model["model"] == "regressogram" and "bucket_stats" in model
        assert len(model["bin_edges"]) == len(model["bucket_stats"]) + 1
        assert model["bin_edges"][0] == model["x_start"] and model["bin_edges"][-1] == model["x_end"]
        assert float(evaluate_nonparametric(model, [model["x_start"]])[0]) == model["bucket_stats"][0]


def test_interval_models_and_old_range_names_plot():
    from perun_core.analysis.curves import plot_data_from_coefficients_of

    for name in ("complexity-regression-analysis-interval.perf", "synthetic-interval-keys-header-params.perf"):
        models = load_profile_from_file(PROFILES / name).global_region.models
        for model in models:
            plotted = plot_data_from_coefficients_of(model, 5)
            assert plotted["plot_x"] and len(plotted["plot_x"]) == len(plotted["plot_y"])


def test_kernel_stats_and_dashed_model_kinds_are_read_as_ours():
    text = json.dumps({
        "resources": {"f#0": {"amount": [1, 2, 3], "structure-unit-size": [1, 2, 3]}},
        "resource_type_map": {"f#0": {"uid": "f", "type": "mixed", "time": "0.1"}},
        "models": [{"model": "kernel-regression", "uid": "f", "kernel_stats": [1.0, 2.0, 3.0],
                    "x_start": 1, "x_end": 3, "per_key": "structure-unit-size", "r_square": 1.0}],
        "header": {"type": "mixed", "cmd": "x", "workload": "", "units": {}},
        "collector_info": {"name": "complexity", "params": ""}, "postprocessors": []})
    model = from_json_bytes(text.encode()).global_region.models[0]
    assert model["model"] == "kernel_regression" and model["bucket_stats"] == [1.0, 2.0, 3.0]
    assert model["x"] == [1.0, 2.0, 3.0] and model["x_interval_start"] == 1


def test_the_oldest_flat_layout_gets_a_header():
    text = json.dumps({"type": "time", "cmd": "ls", "param": "-l", "workload": "/", "minor_version": "x",
                       "collector": {"name": "time", "params": ""},
                       "snapshots": [{"time": "0.1", "resources": [{"amount": "0.616s", "uid": "ls"}]}]})
    profile = from_json_bytes(text.encode())
    assert profile.layout == "flat" and profile.type == "time" and profile.args == "-l"
    assert profile.collector == "time" and profile.resource_count() == 1


@pytest.mark.parametrize("document", [{"results": [], "data": {}}, {}, {"time": 1, "collector_info": {}}])
def test_an_unknown_layout_is_a_clean_error_naming_the_keys(tmp_path, document):
    path = tmp_path / "odd.perf"
    path.write_text(json.dumps(document))
    with pytest.raises(InvalidProfile) as info:
        load_profile_from_file(path)
    message = str(info.value)
    assert str(path) in message
    for key in document:
        assert key in message


def test_a_damaged_028_layout_names_the_key():
    with pytest.raises(InvalidProfile) as info:
        from_json_bytes(json.dumps({"resources": 3, "resource_type_map": {}, "header": {"type": "t"}}).encode())
    assert info.value.key == "resources"


def test_an_unknown_layout_through_the_cli_is_one_error_line(tmp_path):
    from conftest import run_cli

    path = tmp_path / "odd.perf"
    path.write_text(json.dumps({"results": [1, 2], "meta": {}}))
    result = run_cli("show", str(path), "tableof", "resources", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and "meta, results" in result.stderr and "Traceback" not in result.stderr


# -- the kinds this perun used to refuse: the old bounds type 'bound', ktrace statistics, the oldest
# -- flat files with text amounts; and checks of profiles holding nonparametric models

def test_kinds_once_refused_read_with_their_values():
    ktrace = rows_of("synthetic-ktrace-stats.perf")
    assert {r["uid"]: r["ncalls"] for r in ktrace} == {"parse_line": 400, "hash_insert": 1000, "main": 1}
    assert all("amount" not in r and r["Total Exclusive T [ms]"] > 0 for r in ktrace)
    bounds = load_profile_from_file(PROFILES / "synthetic-bounds-bound-type.perf")
    assert bounds.type == "bound" and bounds.units == {"bound": "iterations"}
    flat = load_profile_from_file(PROFILES / "synthetic-flat-text-amounts.perf")
    assert flat.args == "-n 5" and flat.collector == "time"
    assert [r["amount"] for r in rows_of("synthetic-flat-text-amounts.perf")] == [0.25, 0.18, 0.04]
    old = load_profile_from_file(PROFILES / "synthetic-units-list-params-text.perf")
    assert "units" not in old.header and old.collector_info["params"] == {"command_line": "-t ./build -r count"}


def test_a_profile_type_must_still_be_a_type_its_resources_or_units_name():
    from perun_core.profile.validate import validate_profile

    data = json.loads((PROFILES / "synthetic-bounds-bound-type.perf").read_text())
    data["header"]["type"] = "loops"
    with pytest.raises(InvalidProfile) as info:
        validate_profile(from_json_bytes(json.dumps(data).encode()))
    assert info.value.key == "header.type" and "header.units" in info.value.reason
    data = json.loads((PROFILES / "synthetic-ktrace-stats.perf").read_text())
    data["collector_info"]["name"] = "time"  # statistics without an amount are a ktrace profile's only
    with pytest.raises(InvalidProfile) as info:
        validate_profile(from_json_bytes(json.dumps(data).encode()))
    assert info.value.key.endswith(".amount")


@pytest.mark.parametrize("name", ["synthetic-ktrace-stats.perf", "synthetic-bounds-bound-type.perf",
                                  "synthetic-flat-text-amounts.perf", "synthetic-units-list-params-text.perf"])
def test_kinds_once_refused_show_through_the_cli(tmp_path, name):
    from conftest import run_cli

    result = run_cli("show", str(PROFILES / name), "tableof", "resources", "--format", "csv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) == 4  # a header and three rows


@pytest.mark.parametrize("name", ["complexity-moving-average-sma.perf", "complexity-regressogram-user-buckets.perf",
                                  "complexity-kernel-regression-kernel-ridge.perf",
                                  "complexity-regression-analysis-then-regressogram.perf"])
def test_profiles_with_nonparametric_models_check_and_plot_through_the_cli(tmp_path, name):
    from conftest import run_cli

    check = run_cli("check", "profiles", str(PROFILES / name), str(PROFILES / name), cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert "0 degradations" in check.stdout
    scatter = run_cli("show", str(PROFILES / name), "scatter", cwd=tmp_path)
    assert scatter.returncode == 0, scatter.stderr


def test_a_moving_average_over_other_points_spreads_its_values_over_its_range():
    text = json.dumps({
        "resources": {"f#0": {"amount": [1, 2, 3, 4], "structure-unit-size": [1, 2, 3, 4]}},
        "resource_type_map": {"f#0": {"uid": "f", "type": "mixed", "time": "0.1"}},
        "models": [{"model": "moving_average", "uid": "f", "bucket_stats": [1.0, 2.0, 5.0], "moving_method": "sma",
                    "window_width": 1, "x_start": 10, "x_end": 30, "per_key": "structure-unit-size", "r_square": 1.0}],
        "header": {"type": "mixed", "cmd": "x", "workload": "", "units": {}},
        "collector_info": {"name": "complexity", "params": {}}, "postprocessors": []})
    model = from_json_bytes(text.encode()).global_region.models[0]
    assert model["x"] == [10.0, 20.0, 30.0] and model["y"] == [1.0, 2.0, 5.0]


@pytest.mark.parametrize("name", ["kperf-sorter.perf", "import-perf-record.perf", "import-perf-script-stats-metadata.perf",
                                  "import-perf-stack.perf"])
def test_the_originals_sampled_stacks_make_flame_graphs(tmp_path, name):
    from conftest import run_cli

    data = json.loads((PROFILES / name).read_text())
    samples = {props["uid"]: sum(data["resources"][key]["amount"]) for key, props in data["resource_type_map"].items()}
    result = run_cli("show", str(PROFILES / name), "flamegraph", "--format", "folded", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    folded = {}
    for line in result.stdout.splitlines():
        stack, _, amount = line.rpartition(" ")
        folded[stack] = float(amount)
    # one folded line per sampled stack, root first, with its samples (our labels end frames in '()')
    expected = {";".join(f"{f[:-2] if f.endswith('()') else f}()" for f in uid.split(";")): float(total)
                for uid, total in samples.items()}
    assert folded == expected


def test_perf_imports_of_the_original_keep_stats_and_metadata():
    profile = load_profile_from_file(PROFILES / "import-perf-script-stats-metadata.perf")
    assert profile.extra["stats"][0]["name"] == "total" and profile.extra["stats"][0]["value"] == [12.5]
    assert profile.extra["metadata"][0]["value"] == "ci-1" and profile.header["exitcode"] == ["0"]
