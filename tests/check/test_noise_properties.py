"""Properties of the busy-machine rules (perun_core.check.noise) over time profiles with per-run rows.

Any pair of batches of runs, quiet or busy on either side, preempted or not,
waiting or not: identical runs are never a certain change, swapping the
sides flips every verdict's direction, a larger CPU-time factor is never
reported less certainly, and scaling every time of both sides alike changes
nothing (amounts well above the rules' absolute floor of 10 ms a run, and
preemptions counted per second of the run, so a longer run has more).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perun_core.check.data import ProfileData
from perun_core.check.engine import check_pair
from perun_core.check.strategies import Strategy, parse_rules

from .helpers import spread, time_profile

SOME = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
STRATEGY = Strategy(parse_rules([{"method": "size_aware_rank_test"}]))
FLIPPED = {"Degradation": "Optimization", "Optimization": "Degradation", "MaybeDegradation": "MaybeOptimization",
           "MaybeOptimization": "MaybeDegradation", "NoChange": "NoChange"}
CERTAIN = {"Degradation", "Optimization", "SevereDegradation", "TotalDegradation"}

#: one side's batch: CPU time a run, how many times longer its wall time was, the load, and how often the kernel
#: preempted it per second of wall time (a program doing more work, or measured in longer runs, on the same
#: machine is preempted as often per second, so more often per run)
side = st.fixed_dictionaries({
    "cpu": st.floats(0.05, 1.0),
    "stretch": st.floats(1.0, 6.0),
    "load": st.sampled_from([0.2, 1.5, 3.0, 5.0, 9.0]),
    "preemptions": st.sampled_from([0.0, 60.0, 200.0, 600.0]),
})


def _profile(batch: dict, *, factor: float = 1.0, scale: float = 1.0):
    cpu = batch["cpu"] * factor * scale
    wall = cpu * batch["stretch"]
    return time_profile(spread(wall), spread(cpu), sys_=0.001 * scale, load=batch["load"],
                        switches=batch["preemptions"] * wall)


def _verdicts(base, target) -> dict[str, str]:
    outcome = check_pair(ProfileData(base), ProfileData(target), STRATEGY)
    return {f.location: f.result.value for f in outcome.findings if f.location.endswith(("[real]", "[user]"))}


def _certainty(value: str, direction: str) -> int:
    """0 no change (or the other way), 1 a Maybe of ``direction``, 2 certain in ``direction``."""
    if value.startswith("Maybe"):
        return 1 if value.endswith(direction) else 0
    return 2 if value.endswith(direction) else 0


@SOME
@given(batch=side)
def test_identical_runs_are_never_a_certain_change(batch):
    assert not set(_verdicts(_profile(batch), _profile(batch)).values()) & CERTAIN


@SOME
@given(base=side, target=side, factor=st.floats(0.25, 4.0))
def test_swapping_the_sides_flips_every_verdict(base, target, factor):
    forth = _verdicts(_profile(base), _profile(target, factor=factor))
    back = _verdicts(_profile(target, factor=factor), _profile(base))
    assert {k: FLIPPED[v] for k, v in forth.items()} == back


@SOME
@given(base=side, target=side, low=st.floats(1.0, 3.0), step=st.floats(0.05, 2.0))
def test_a_larger_cpu_factor_is_never_reported_less_certainly(base, target, low, step):
    # the target's runs as the same program doing more work: its batch shape (waiting, load, preemptions) kept
    target = {**target, "cpu": base["cpu"]}
    smaller = _verdicts(_profile(base), _profile(target, factor=low))
    larger = _verdicts(_profile(base), _profile(target, factor=low + step))
    assert _certainty(larger["./app [user]"], "Degradation") >= _certainty(smaller["./app [user]"], "Degradation")


@SOME
@given(base=side, target=side, factor=st.floats(0.25, 4.0), scale=st.floats(1.0, 8.0))
def test_scaling_every_time_of_both_sides_changes_nothing(base, target, factor, scale):
    plain = _verdicts(_profile(base), _profile(target, factor=factor))
    scaled = _verdicts(_profile(base, scale=scale), _profile(target, factor=factor, scale=scale))
    assert scaled == plain


def test_contention_of_the_side_with_less_cpu_time_does_not_excuse_a_slow_down():
    """Found by the property above with a fixed count of preemptions a run: the baseline preempted 22 times a
    run, the target 4 times, its runs three times their CPU time long.  At three times the work the target was
    preempted so much less often per CPU-second that the baseline counted as contended, and the target's
    waiting was then taken to excuse its CPU time: a Maybe, where twice the work was certain.  Contention of
    the side with less CPU time could only have hidden a slow-down."""
    base = time_profile(spread(1.0), spread(1.0), sys_=0.001, switches=22)
    for factor in (2.0, 3.0):
        target = time_profile(spread(3.0 * factor), spread(factor), sys_=0.001, switches=4)
        assert _verdicts(base, target)["./app [user]"] == "Degradation", factor


def test_a_wall_time_slow_down_measured_against_a_busy_baseline_stays_certain():
    """The baseline alone measured under contention (load 4.9, preempted 300 times a run), the target on a quiet
    machine and still a third slower in wall time, its CPU time unchanged (it now sleeps or waits on I/O
    longer): the contention could only have hidden that change.  The other way round it is a Maybe."""
    busy_base = time_profile(spread(0.30), spread(0.095), load=4.9, switches=300)
    quiet_slower = time_profile(spread(0.40), spread(0.095), load=0.3, switches=1)
    assert _verdicts(busy_base, quiet_slower)["./app [real]"] == "Degradation"
    quiet_base = time_profile(spread(0.30), spread(0.095), load=0.3, switches=1)
    busy_slower = time_profile(spread(0.40), spread(0.095), load=4.9, switches=300)
    assert _verdicts(quiet_base, busy_slower)["./app [real]"] == "MaybeDegradation"
