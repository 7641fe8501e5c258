"""Per-call wall times of a run the kernel kept preempting: a change no larger than one wait for the CPU is a Maybe."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from hypothesis import given, settings, strategies as st

from perun_core.check.data import ProfileData
from perun_core.check.engine import check_pair
from perun_core.check.strategies import Strategy, parse_rules
from perun_core.profile.model import Profile

from .helpers import MACHINE, mixed

SIZES = [2000.0 * k for k in range(1, 9)]
#: per-call wall times (ms per 1000 elements) of five functions; three calls of each at every size
LEVELS = {"groupby": 0.12, "frequencies": 0.13, "unique": 0.01, "reduceby": 0.17, "merge_with": 0.05}


def traced(factors: dict[str, float], *, load: float = 7.8, preempted: tuple[int, float] | None = None,
           seed: int = 0, calls: int = 3) -> dict:
    """A pytrace-like profile (us): LEVELS' functions, ``calls`` calls a size, the header's preemption record."""
    rng = np.random.default_rng(seed)
    points = {}
    sizes = [size for size in SIZES for _ in range(calls)]
    for uid, level in LEVELS.items():
        points[uid] = (sizes, [1000 * factors.get(uid, 1.0) * level * size / 1000 * (1 + 0.02 * rng.standard_normal())
                               for size in sizes])
    doc = mixed(points)
    doc["header"]["machine"] = {**MACHINE, "load_before": load, "load_after": load}
    if preempted is not None:
        doc["header"]["preemption"] = {"count": preempted[0], "wait_seconds": preempted[1]}
    return doc


def verdicts(base: dict, new: dict) -> dict:
    strategy = Strategy(parse_rules([{"method": "size_aware_rank_test"}]))
    data = [ProfileData(Profile.from_dict(doc)) for doc in (base, new)]
    return {f.location: f for f in check_pair(*data, strategy).findings}


def test_a_call_slower_by_less_than_one_wait_of_a_preempted_run_is_a_maybe_saying_why():
    # 2.6 times about a millisecond is under 2 ms more a call; the target waited 25 ms a preemption
    found = verdicts(traced({}, preempted=(38, 0.25)), traced({"groupby": 2.6}, preempted=(34, 0.84), seed=1))
    groupby = found["groupby"]
    assert groupby.result.value == "MaybeDegradation", groupby
    assert "no more than one wait for the CPU: the target's run was preempted 34 times at load 7.8 on 2 cores, " \
           "24.7 ms off the CPU each on average" in groupby.reason, groupby.reason
    assert "--confirm" in groupby.reason and "--clock cpu" in groupby.reason
    assert {f.result.value for location, f in found.items() if location != "groupby"} == {"NoChange"}


def test_a_change_beyond_one_wait_stays_certain():
    # 60 times slower: over 60 ms more a call, beyond the 25 ms the target waited a preemption
    found = verdicts(traced({}, preempted=(38, 0.25)), traced({"groupby": 60.0}, preempted=(34, 0.84), seed=1))
    assert found["groupby"].result.value == "Degradation", found["groupby"]


def test_a_function_called_more_often_than_the_run_was_preempted_stays_certain():
    # 12 calls a size, 96 calls: 34 preemptions cannot have delayed half of them
    found = verdicts(traced({}, preempted=(38, 0.25), calls=12),
                     traced({"groupby": 2.6}, preempted=(34, 0.84), seed=1, calls=12))
    assert found["groupby"].result.value == "Degradation"


def test_a_quiet_machine_or_a_run_hardly_preempted_keeps_the_verdict():
    quiet = verdicts(traced({}, load=0.5, preempted=(38, 0.25)),
                     traced({"groupby": 2.6}, load=0.6, preempted=(34, 0.84), seed=1))
    hardly = verdicts(traced({}, preempted=(3, 0.01)), traced({"groupby": 2.6}, preempted=(4, 0.02), seed=1))
    unknown = verdicts(traced({}), traced({"groupby": 2.6}, seed=1))
    assert quiet["groupby"].result.value == hardly["groupby"].result.value == unknown["groupby"].result.value \
        == "Degradation"


def test_an_optimization_is_weighed_against_the_baselines_waits():
    found = verdicts(traced({"groupby": 2.6}, preempted=(34, 0.84)), traced({}, preempted=(3, 0.01), seed=1))
    assert found["groupby"].result.value == "MaybeOptimization", found["groupby"]
    assert "the baseline's run was preempted 34 times" in found["groupby"].reason


def test_sleeping_is_not_counted_as_waiting_for_a_core():
    # 10 s off the CPU over 20 preemptions is sleep, not 500 ms waits: at most 50 ms a preemption counts
    found = verdicts(traced({}, preempted=(20, 10.0)), traced({"groupby": 60.0}, preempted=(20, 10.0), seed=1))
    assert found["groupby"].result.value == "Degradation"


@settings(max_examples=30, deadline=None)
@given(factor=st.floats(1.3, 100.0), seed=st.integers(0, 30), count=st.integers(10, 60),
       wait=st.floats(0.01, 1.5))
def test_properties_same_data_swapping_and_bigger_changes(factor, seed, count, wait):
    base = traced({}, preempted=(count, wait), seed=seed)
    same = verdicts(base, traced({}, preempted=(count, wait), seed=seed))
    assert {f.result.value for f in same.values()} == {"NoChange"}
    new = traced({"groupby": factor}, preempted=(count, wait), seed=seed + 1)
    forward, backward = verdicts(base, new)["groupby"].result, verdicts(new, base)["groupby"].result
    if forward.is_change:
        assert backward.is_change and backward.is_degradation != forward.is_degradation
        assert backward.is_maybe == forward.is_maybe
    # a bigger change is never reported less certainly
    bigger = verdicts(base, traced({"groupby": factor * 2}, preempted=(count, wait), seed=seed + 1))["groupby"].result
    if forward.is_change and not forward.is_maybe:
        assert bigger.is_change and not bigger.is_maybe


def test_check_profiles_on_files_says_the_same(tmp_path):
    paths = []
    for name, doc in (("base", traced({}, preempted=(38, 0.25))),
                      ("new", traced({"groupby": 2.6}, preempted=(34, 0.84), seed=1))):
        path = tmp_path / f"{name}.perf"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "check", "profiles", *paths, "-f", "json"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = {record["uid"]: record["result"] for record in json.loads(done.stdout)}
    assert found["groupby"] == "MaybeDegradation", done.stdout
