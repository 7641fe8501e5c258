"""Per-function times of a whole run that moved together on a busy machine (a trace profile measured at another load)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from perun_core.check.data import ProfileData
from perun_core.check.engine import check_pair
from perun_core.check.strategies import Strategy, parse_rules
from perun_core.profile.model import Profile

from .helpers import MACHINE, mixed

SIZES = [1000.0 * k for k in range(1, 9)]
#: per-call times of four functions at each size (us), with a little scatter that is not a change
LEVELS = {"init": 0.4, "insert": 1.2, "search": 2.0, "destroy": 12.0}


def traced(factors: dict[str, float], *, load: float | None, seed: int = 0, scale: float = 1.0,
           calls: int = 1) -> ProfileData:
    """A trace of LEVELS' functions, ``calls`` calls of each at every size (more calls on one side than the other)."""
    rng = np.random.default_rng(seed)
    points = {}
    sizes = [size for size in SIZES for _ in range(calls)]
    for uid, level in LEVELS.items():
        ys = [scale * factors.get(uid, 1.0) * level * size / 1000 * (1 + 0.02 * rng.standard_normal())
              for size in sizes]
        points[uid] = (sizes, ys)
    doc = mixed(points)
    machine = dict(MACHINE)
    if load is not None:
        machine.update(load_before=load, load_after=load)
    doc["header"]["machine"] = machine
    return ProfileData(Profile.from_dict(doc))


def verdicts(base: ProfileData, new: ProfileData) -> dict[str, object]:
    strategy = Strategy(parse_rules([{"method": "size_aware_rank_test"}]))
    return {f.location: f for f in check_pair(base, new, strategy).findings}


def everything(factor: float) -> dict[str, float]:
    return dict.fromkeys(LEVELS, factor)


def test_a_whole_run_faster_on_a_quieter_machine_is_a_maybe_at_every_function_with_the_reason():
    found = verdicts(traced(everything(1.0), load=4.6, calls=2), traced(everything(0.55), load=0.8, seed=1))
    assert {f.result.value for f in found.values()} == {"MaybeOptimization"}
    reason = found["destroy"].reason
    assert "-45 % here, the rest of the profile -45 % (median of 3 other functions)" in reason, reason
    assert "load 4.6 on 2 cores (baseline)" in reason


def test_the_function_that_changed_beyond_the_rest_stays_certain():
    factors = {**everything(0.55), "insert": 0.55 * 40}
    found = verdicts(traced(everything(1.0), load=4.6), traced(factors, load=0.8, seed=1))
    assert found["insert"].result.value == "Degradation"
    assert found["destroy"].result.value == "MaybeOptimization"


def test_calls_timed_by_their_cpu_time_keep_their_certain_verdicts_on_a_busy_machine():
    base, new = traced(everything(1.0), load=4.6), traced(everything(0.55), load=0.8, seed=1)
    for data in (base, new):
        data.profile.collector_info = {"name": "pytrace", "params": {"clock": "cpu"}}
    assert {f.result.value for f in verdicts(base, new).values()} == {"Optimization"}


def test_the_same_run_on_a_quiet_machine_keeps_its_certain_verdicts():
    found = verdicts(traced(everything(1.0), load=0.5), traced(everything(0.55), load=0.8, seed=1))
    assert {f.result.value for f in found.values()} == {"Optimization"}


def test_one_function_changed_alone_on_a_busy_machine_stays_certain():
    found = verdicts(traced(everything(1.0), load=4.6), traced({"destroy": 0.5}, load=4.2, seed=1))
    assert found["destroy"].result.value == "Optimization"
    assert found["insert"].result.value == "NoChange"


def test_the_rule_needs_two_other_functions():
    doubled = [2 * s for s in SIZES]
    base = ProfileData(Profile.from_dict(mixed({"a": (SIZES, SIZES), "b": (SIZES, SIZES)})))
    new = ProfileData(Profile.from_dict(mixed({"a": (SIZES, doubled), "b": (SIZES, doubled)})))
    for data in (base, new):
        data.profile.header["machine"] = {**MACHINE, "load_before": 5.0, "load_after": 5.0}
    found = verdicts(base, new)
    assert {f.result.value for f in found.values()} == {"Degradation"}


@settings(max_examples=40, deadline=None)
@given(factor=st.floats(0.3, 3.0), whole=st.sampled_from([0.5, 1.0, 1.8]), scale=st.floats(0.01, 100.0),
       seed=st.integers(0, 50))
def test_properties_same_data_scaling_and_swapping(factor, whole, scale, seed):
    base = traced(everything(1.0), load=4.6, seed=seed, scale=scale)
    same = verdicts(base, traced(everything(1.0), load=4.6, seed=seed, scale=scale))
    assert {f.result.value for f in same.values()} == {"NoChange"}
    changed = {**everything(whole), "destroy": whole * factor}
    new = traced(changed, load=0.8, seed=seed + 1, scale=scale)
    forward, backward = verdicts(base, new), verdicts(new, base)
    scaled = verdicts(traced(everything(1.0), load=4.6, seed=seed, scale=scale * 7),
                      traced(changed, load=0.8, seed=seed + 1, scale=scale * 7))
    for location, finding in forward.items():
        assert scaled[location].result == finding.result
        flipped = backward[location].result
        if finding.result.is_change:
            assert flipped.is_change and flipped.is_degradation != finding.result.is_degradation
            assert flipped.is_maybe == finding.result.is_maybe
