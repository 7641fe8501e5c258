"""The clusterizer (perun_core.analysis.clusterizer, spec 001 §5.1.3)."""

from __future__ import annotations

import numpy as np
import pytest

from perun_core.analysis import regression_analysis
from perun_core.analysis.clusterizer import cluster_values, clusterize_profile, clusterize_table, with_column
from perun_core.analysis.regression import best_model
from perun_core.errors import InvalidParameter
from perun_core.profile import Profile, ResourceTable


def test_sort_order_numbers_resources_by_amount_within_each_group():
    amounts = [30, 10, 20, 5, 10]
    groups = ["a", "a", "a", "b", "a"]
    # ties keep profile order: the 10 at index 1 comes before the 10 at index 4
    assert cluster_values(amounts, groups).tolist() == [4, 1, 3, 1, 2]


def test_non_finite_amounts_get_no_cluster():
    assert cluster_values([3.0, np.nan, 1.0]).tolist() == [2, 0, 1]


def test_sliding_window_with_absolute_width():
    amounts = [1, 2, 3, 4, 5, 6, 7]
    clusters = cluster_values(amounts, strategy="sliding_window", window_width=3, width_measure="absolute",
                              window_height=100, height_measure="absolute")
    assert clusters.tolist() == [1, 1, 1, 2, 2, 2, 3]


def test_sliding_window_with_relative_width_takes_a_share_of_the_group():
    amounts = np.arange(20.0)
    clusters = cluster_values(amounts, strategy="sliding_window", window_width=0.25, width_measure="relative",
                              window_height=1000, height_measure="absolute")
    assert clusters.tolist() == [1] * 5 + [2] * 5 + [3] * 5 + [4] * 5


def test_sliding_window_with_absolute_height():
    amounts = [0.0, 0.5, 1.0, 1.1, 5.0, 5.9, 7.0]
    clusters = cluster_values(amounts, strategy="sliding_window", window_width=100, width_measure="absolute",
                              window_height=1.0, height_measure="absolute")
    assert clusters.tolist() == [1, 1, 1, 2, 3, 3, 4]


def test_sliding_window_with_relative_height_follows_the_documented_example():
    # height 0.1 and a first amount of 100: amounts up to 110 join the cluster
    amounts = [100, 105, 110, 111, 120, 125]
    clusters = cluster_values(amounts, strategy="sliding_window", window_width=10, width_measure="absolute",
                              window_height=0.1, height_measure="relative")
    assert clusters.tolist() == [1, 1, 1, 2, 2, 3]


def test_weighted_width_cuts_frequent_amounts_finer():
    amounts = [1.0] * 8 + [2.0, 3.0]
    clusters = cluster_values(amounts, strategy="sliding_window", window_width=0.5, width_measure="weighted",
                              window_height=10, height_measure="absolute")
    # a window opening at the frequent amount 1.0 (p = 0.8) holds ceil(0.5*10*0.2) = 1 resource;
    # one opening at a rare amount (p = 0.1) holds ceil(0.5*10*0.9) = 5
    assert clusters.tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 9]
    relative = cluster_values(amounts, strategy="sliding_window", window_width=0.5, width_measure="relative",
                              window_height=10, height_measure="absolute")
    assert relative.max() < clusters.max()


def test_parameters_are_checked():
    with pytest.raises(InvalidParameter):
        cluster_values([1.0], strategy="kmeans")
    with pytest.raises(InvalidParameter):
        cluster_values([1.0], strategy="sliding_window", width_measure="huge")
    with pytest.raises(InvalidParameter):
        cluster_values([1.0], strategy="sliding_window", height_measure="weighted")
    with pytest.raises(InvalidParameter):
        cluster_values([1.0], window_width=0)


def memory_profile() -> dict:
    rng = np.random.default_rng(4)
    resources = []
    for amount in rng.permutation(np.repeat(np.arange(1, 11) * 64, 5)).tolist():
        resources.append({"amount": amount, "type": "memory", "subtype": "malloc",
                          "uid": {"source": "a.c", "function": "main", "line": 22}, "address": 1000})
    resources.append({"amount": 8, "type": "memory", "subtype": "free", "uid": "other"})
    resources.append({"amount": None, "type": "memory", "subtype": "malloc", "uid": "broken"})
    return {"header": {"type": "memory", "units": {"memory": "B"}},
            "snapshots": [{"time": "1", "resources": resources[:30]}, {"time": "2", "resources": resources[30:]}]}


def test_clusters_of_a_profile_span_its_regions_and_align_with_resources():
    data = memory_profile()
    per_region = clusterize_profile(data)
    assert [len(c) for c in per_region] == [30, 22]
    flat = per_region[0] + per_region[1]
    resources = data["snapshots"][0]["resources"] + data["snapshots"][1]["resources"]
    main = [(r["amount"], c) for r, c in zip(resources, flat) if isinstance(r["uid"], dict)]
    assert sorted(c for _, c in main) == list(range(1, 51))
    # a bigger amount never has a smaller cluster
    ordered = sorted(main)
    assert all(a[1] < b[1] for a, b in zip(ordered, ordered[1:]))
    assert flat[-2] == 1 and flat[-1] is None  # own group; amount that is not a number


def test_clusters_serve_as_the_independent_variable_for_regression():
    data = memory_profile()
    profile = Profile.from_dict(data)
    clusters = clusterize_profile(profile, strategy="sliding_window", window_width=5, width_measure="absolute",
                                  window_height=0.01, height_measure="relative")
    for (_, region), values in zip(profile.regions(), clusters):
        region.resources = with_column(region.resources, "cluster", values)
    rows = profile.snapshots[1].resources.rows()
    assert "cluster" not in rows[-1] and rows[-2]["cluster"] == 1
    models, _ = regression_analysis(profile, "full", ["constant", "linear", "quadratic"], depending_on="cluster")
    main = [m for m in models if m["uid"] == "a.c:main:22"]
    assert best_model(main)["model"] == "linear"  # the spec's example outcome
    assert {m["x_interval_end"] for m in main} == {10}


def test_clusterize_table_and_with_column_keep_the_original_untouched():
    table = ResourceTable([{"uid": "f", "type": "time", "amount": a} for a in (3, 1, 2)])
    clusters = clusterize_table(table)
    assert clusters == [3, 1, 2]
    updated = with_column(table, "cluster", clusters)
    assert [r["cluster"] for r in updated.rows()] == [3, 1, 2]
    assert "cluster" not in table.rows()[0]
    assert clusterize_table(ResourceTable([])) == []


def test_many_resources_are_clustered_quickly():
    import time

    rng = np.random.default_rng(0)
    n = 300_000
    amounts = rng.integers(0, 1000, n).astype(float)
    groups = [f"u{i % 7}" for i in range(n)]
    started = time.process_time()  # CPU time: a busy machine does not inflate it
    sort_order = cluster_values(amounts, groups)
    window = cluster_values(amounts, groups, strategy="sliding_window", window_width=0.001)
    assert time.process_time() - started < 3.0
    assert sort_order.min() == 1 and window.min() == 1
