"""Invariants of the default strategy's verdicts, drawn by hypothesis, on profile files as perun writes them.

One property goes through ``perun-core check profiles`` as a subprocess (few
examples: a process each); the others call :func:`perun_core.api.check.check_profiles`,
which the command calls, on the same kind of files with more examples.
Layouts: one or two points per size at 5 to 12 sizes (a sweep), repeated
runs at a few sizes, repeated runs without sizes, 12 to 30 sizes drawn by
each side on its own; documented or compact JSON; resources in one snapshot
or spread over several.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perun_core.api.check import check_profiles
from perun_core.profile.codec import store_profile_at
from perun_core.profile.model import Profile

#: verdicts by how strongly they say "slower"
RANK = {"Optimization": -2, "MaybeOptimization": -1, "NoChange": 0, "MaybeDegradation": 1, "Degradation": 2}
CERTAIN = ("Degradation", "Optimization")
FLIPPED = {"Degradation": "Optimization", "Optimization": "Degradation", "MaybeDegradation": "MaybeOptimization",
           "MaybeOptimization": "MaybeDegradation", "NoChange": "NoChange"}
FEW = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
SOME = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@st.composite
def measurements(draw, *, layouts=("sweep", "runs-at-sizes", "runs", "apart")) -> dict:
    """Sizes, the cost at them and the noise of both sides (multiplicative, log-normal)."""
    layout = draw(st.sampled_from(layouts))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    cv = draw(st.sampled_from([0.0, 0.01, 0.02]))
    if layout == "sweep":
        count = draw(st.integers(5, 12))
        sizes = np.unique(np.round(np.geomspace(10, 10 * draw(st.sampled_from([20, 100, 1000])), count)))
        xb = np.repeat(sizes, draw(st.integers(1, 2)))
        xt = np.repeat(sizes, draw(st.integers(1, 2)))
    elif layout == "runs-at-sizes":
        sizes = np.array([100.0, 200, 400, 800])[: draw(st.integers(2, 4))]
        xb, xt = np.repeat(sizes, draw(st.integers(5, 10))), np.repeat(sizes, draw(st.integers(5, 10)))
    elif layout == "apart":
        # each side drew its own sizes
        high = 10 * draw(st.sampled_from([20, 100, 1000]))
        xb = np.sort(np.round(rng.uniform(10, high, draw(st.integers(12, 30)))))
        xt = np.sort(np.round(rng.uniform(10, high, draw(st.integers(12, 30)))))
    else:
        xb, xt = None, None
    nb = len(xb) if xb is not None else draw(st.integers(5, 30))
    nt = len(xt) if xt is not None else draw(st.integers(5, 30))
    constant, slope, power = 10 ** rng.uniform(0, 3), 10 ** rng.uniform(-2, 1), float(rng.choice([0.5, 1, 2]))
    return {"layout": layout, "xb": xb, "xt": xt, "cost": lambda x: constant + slope * x**power,
            "level": 10 ** rng.uniform(-3, 3), "noise_b": np.exp(rng.normal(0, cv, nb)),
            "noise_t": np.exp(rng.normal(0, cv, nt)), "shuffle": rng.permutation(max(nb, nt)),
            "compact": bool(draw(st.booleans())), "split": bool(draw(st.booleans()))}


def amounts(m: dict, side: str, factor) -> tuple[np.ndarray | None, np.ndarray]:
    """``(sizes, amounts)`` of one side; ``factor`` a number or a function of the sizes (target only)."""
    x = m["xb"] if side == "b" else m["xt"]
    noise = m["noise_b"] if side == "b" else m["noise_t"]
    base = m["cost"](x) if x is not None else np.full(len(noise), m["level"])
    times = factor(x) if callable(factor) else factor
    return x, base * times * noise


def write(path: Path, m: dict, x, y, *, scale: float = 1.0, reorder: bool = False, twice: bool = False) -> str:
    rows = [{"uid": "work", "type": "mixed", "subtype": "time delta", "amount": float(a) * scale}
            for a in y]
    if x is not None:
        for row, size in zip(rows, x):
            row["structure-unit-size"] = int(size)
    if twice:
        rows = [dict(row) for row in rows for _ in range(2)]
    if reorder:
        rows = [rows[i] for i in np.argsort(m["shuffle"][: len(rows)] if len(rows) <= len(m["shuffle"])
                                                 else np.arange(len(rows))[::-1])]
    cut = len(rows) // 2 if m["split"] else len(rows)
    parts = [part for part in (rows[:cut], rows[cut:]) if part]
    doc = {"header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "./app", "args": "",
                      "workload": "w"},
           "collector_info": {"name": "trace", "params": {}}, "postprocessors": [],
           "snapshots": [{"time": f"{i}.0", "resources": part, "models": []} for i, part in enumerate(parts)]}
    store_profile_at(Profile.from_dict(doc), path, layout="compact" if m["compact"] else "documented")
    return str(path)


def verdict(baseline: str, target: str) -> str:
    report = check_profiles(baseline, target)
    results = [finding.result.value for _version, _pair, finding in report.findings()]
    assert len(results) == 1, results
    return results[0]


def pair(tmp: Path, m: dict, factor, name: str, **options) -> tuple[str, str]:
    base = write(tmp / f"{name}-base.perf", m, *amounts(m, "b", 1.0), **options)
    new = write(tmp / f"{name}-new.perf", m, *amounts(m, "t", factor), **options)
    return base, new


def cli_verdict(where: Path, baseline: str, target: str) -> tuple[str, int]:
    result = run_cli("check", "profiles", baseline, target, "--format", "json", cwd=where)
    assert result.returncode in (0, 3), result.stderr
    records = json.loads(result.stdout)
    assert len(records) == 1, records
    return records[0]["result"], result.returncode


@FEW
@given(m=measurements(), factor=st.sampled_from([1.3, 1.6, 2.0, 3.0, 0.77, 0.5, 0.33]))
def test_through_the_command_a_uniform_factor_is_certain_and_swapping_flips_it(tmp_path_factory, m, factor):
    tmp = tmp_path_factory.mktemp("cli")
    base, new = pair(tmp, m, factor, "f")
    expected = "Degradation" if factor > 1 else "Optimization"
    assert cli_verdict(tmp, base, new) == (expected, 3 if factor > 1 else 0)
    assert cli_verdict(tmp, new, base)[0] == FLIPPED[expected]


@SOME
@given(m=measurements())
def test_the_same_measurements_on_both_sides_are_never_a_certain_change(tmp_path_factory, m):
    tmp = tmp_path_factory.mktemp("same")
    x, y = amounts(m, "b", 1.0)
    path = write(tmp / "a.perf", m, x, y)
    other = write(tmp / "b.perf", m, x, y, reorder=True)
    assert verdict(path, other) not in CERTAIN
    # two independent draws of the same cost, at a small noise
    base, new = pair(tmp, m, 1.0, "twin")
    assert verdict(base, new) not in CERTAIN


@SOME
@given(m=measurements(), factor=st.floats(1.3, 4.0))
def test_a_uniform_factor_is_certain_both_ways_and_swapping_flips_it(tmp_path_factory, m, factor):
    tmp = tmp_path_factory.mktemp("factor")
    slower = pair(tmp, m, factor, "up")
    assert verdict(*slower) == "Degradation"
    assert verdict(slower[1], slower[0]) == "Optimization"
    faster = pair(tmp, m, 1 / factor if factor > 1.3 else 0.77, "down")
    assert verdict(*faster) == "Optimization"
    assert verdict(faster[1], faster[0]) == "Degradation"


@SOME
@given(m=measurements(), factor=st.sampled_from([1.0, 1.05, 1.2, 1.5, 2.0, 0.8, 0.5]))
def test_scaling_reordering_and_duplicating_change_nothing(tmp_path_factory, m, factor):
    tmp = tmp_path_factory.mktemp("same-verdict")
    plain = verdict(*pair(tmp, m, factor, "plain"))
    assert verdict(*pair(tmp, m, factor, "scaled", scale=1000.0)) == plain
    assert verdict(*pair(tmp, m, factor, "reordered", reorder=True)) == plain
    if m["layout"] == "sweep":
        # one or two points per size: a copy of each says nothing new (repeated runs would, as more runs)
        assert verdict(*pair(tmp, m, factor, "twice", twice=True)) == plain


@SOME
@given(m=measurements(), low=st.floats(1.0, 3.0), step=st.floats(0.05, 1.0))
def test_a_larger_factor_is_never_reported_less_certainly(tmp_path_factory, m, low, step):
    tmp = tmp_path_factory.mktemp("monotone")
    smaller = verdict(*pair(tmp, m, low, "small"))
    larger = verdict(*pair(tmp, m, low * (1 + step), "large"))
    assert RANK[larger] >= RANK[smaller]
    # and the same read backwards, as optimizations
    smaller_back = verdict(*pair(tmp, m, 1 / low, "small-back"))
    larger_back = verdict(*pair(tmp, m, 1 / (low * (1 + step)), "large-back"))
    assert RANK[larger_back] <= RANK[smaller_back]


@SOME
@given(m=measurements(layouts=("sweep",)), factor=st.floats(1.5, 3.0))
def test_a_change_confined_to_the_upper_third_of_the_sizes_is_found(tmp_path_factory, m, factor):
    sizes = np.unique(m["xb"])
    first = sizes[len(sizes) - max(2, math.ceil(len(sizes) / 3))]

    def upper(x: np.ndarray) -> np.ndarray:
        return np.where(x >= first, factor, 1.0)

    tmp = tmp_path_factory.mktemp("upper")
    base, new = pair(tmp, m, upper, "u")
    assert verdict(base, new) == "Degradation"
    assert verdict(new, base) == "Optimization"


def test_eight_sizes_once_each_at_exactly_twice_the_cost_are_a_degradation(tmp_path):
    """The report that started it: a sweep of 8 sizes, no noise, the target exactly 2x (a curved cost)."""
    sizes = np.array([10.0, 20, 50, 100, 200, 500, 1000, 2000])
    m = {"xb": sizes, "xt": sizes, "cost": lambda x: 400 + 0.01 * x**2, "noise_b": np.ones(8),
         "noise_t": np.ones(8), "shuffle": np.arange(8), "compact": False, "split": False, "layout": "sweep"}
    assert cli_verdict(tmp_path, *pair(tmp_path, m, 2.0, "twice")) == ("Degradation", 3)
    assert cli_verdict(tmp_path, *pair(tmp_path, m, 1.0, "same")) == ("NoChange", 0)
    for factor, expected in ((1.3, "Degradation"), (3.0, "Degradation"), (0.5, "Optimization")):
        assert verdict(*pair(tmp_path, m, factor, f"x{factor}")) == expected


def test_a_change_of_exactly_the_floor_does_not_depend_on_the_scale_of_the_amounts():
    """Found by the scaling property: 5 % exactly, noise-free, was a change at one scale and none at another."""
    from perun_core.check.compare import compare

    for level in (0.003560374261641088, 3.560374261641088, 1e6):
        same = np.full(5, level)
        assert compare(None, same, None, same * 1.05).verdict.value == "Degradation"
        assert compare(None, same * 1.05, None, same).verdict.value == "Optimization"
