"""Units on axes and titles: a view never adds up or labels values of different units as one."""

from __future__ import annotations

import pytest

from perun_core.errors import InvalidParameter
from perun_core.profile import Profile
from perun_core.views import get_view
from perun_core.views.base import amount_unit, amount_units, select_type

from .profiles import complexity_profile, memory_profile, perf_profile, time_profile, trace_profile

#: Sums of the time profile's rows: seconds of real, user and sys time; bytes of max_rss.
SECONDS = 0.51 + 0.31 + 0.11 + 0.54 + 0.34 + 0.14 + 0.59 + 0.39 + 0.19 + 0.66 + 0.46 + 0.26
BYTES = 4 * 5_242_880 + 4096 * (1 + 2 + 3 + 4)


def plot(view: str, profile: dict, params: dict | None = None):
    figure = get_view(view).run(profile, params or {})
    assert len(figure.plots) == 1
    return figure.plots[0]


def test_amount_units_by_type():
    assert amount_units(Profile.from_dict(time_profile())) == {"time": {"s"}, "memory": {"B"}}
    assert amount_units(Profile.from_dict(complexity_profile())) == {"mixed": {"us"}}
    assert amount_units(Profile.from_dict(perf_profile())) == {"time": {"samples"}, "counter": {"events"}}
    # only the resources with a trace: the stacks perf sampled
    assert amount_units(Profile.from_dict(perf_profile()), having="trace") == {"time": {"samples"}}


def test_amount_unit_says_when_units_are_mixed():
    profile = Profile.from_dict(time_profile())
    assert amount_unit(profile, "amount") == "mixed units: B, s"
    assert amount_unit(profile, "order") == ""
    assert amount_unit(Profile.from_dict(trace_profile()), "exclusive") == "ns"
    assert amount_unit(Profile.from_dict(trace_profile()), "amount") == "ns"


def test_time_profiles_show_their_times_by_default():
    # real, user and sys seconds are not added up: a bar per subtype, the mean of its 4 runs (a sum of runs
    # grows with their number)
    bars = plot("bars", time_profile())
    assert bars.categories == ["real", "sys", "user"]
    assert bars.series[0].y.tolist() == pytest.approx([(0.51 + 0.54 + 0.59 + 0.66) / 4, (0.11 + 0.14 + 0.19 + 0.26) / 4,
                                                       (0.31 + 0.34 + 0.39 + 0.46) / 4])
    assert sum(bars.series[0].y.tolist()) == pytest.approx(SECONDS / 4)
    assert bars.ylabel == "mean(amount) [s]" and bars.title == "mean of amount per subtype (time only)"
    assert bars.unit == "s"
    # asked for explicitly, one bar per snapshot still adds them
    every = plot("bars", time_profile(), {"func": "sum", "per": "snapshots"})
    assert every.series[0].y.tolist() == [pytest.approx(SECONDS)]
    by_subtype = plot("bars", time_profile(), {"per": "subtype"})
    assert by_subtype.categories == ["real", "sys", "user"]
    flow = plot("flow", time_profile(), {"through": "order", "by": "subtype"})
    assert [s.name for s in flow.series] == ["real", "sys", "user"] and flow.ylabel == "mean(amount) [s]"
    # the same by default: through the runs, a line per kind of time, never real + user + sys in one point
    default_flow = plot("flow", time_profile())
    assert [s.name for s in default_flow.series] == ["real", "sys", "user"] and default_flow.xlabel == "order"
    assert default_flow.series[0].y.tolist() == pytest.approx([0.51, 0.54, 0.59, 0.66])
    assert plot("flow", time_profile(), {"func": "sum", "through": "snapshots", "by": "subtype"}).series[0].y.tolist() \
        == pytest.approx([0.51 + 0.54 + 0.59 + 0.66])
    # one plot per measured quantity of the uid (see the scatter test below)
    scatters = get_view("scatter").run(time_profile(), {"per": "order"}).plots
    assert [p.title for p in scatters] == [f"amount per order; uid: ./app [{s}] (time only)"
                                           for s in ("real", "user", "sys")]
    assert all(max(p.series[0].y) < 1 and p.ylabel == "amount [s]" for p in scatters)


def test_another_type_or_all_of_them_on_request():
    memory = plot("bars", time_profile(), {"type": "memory"})
    assert memory.series[0].y.tolist() == [BYTES / 4]
    assert memory.ylabel == "mean(amount) [B]" and memory.title.endswith("(memory only)")
    assert plot("bars", time_profile(), {"func": "sum", "type": "memory"}).series[0].y.tolist() == [BYTES]
    every = plot("bars", time_profile(), {"func": "max", "per": "subtype", "type": "all"})
    assert every.categories == ["max_rss", "real", "sys", "user"]
    assert every.ylabel == "max(amount) [mixed units: B, s]" and "only" not in every.title
    flow = plot("flow", time_profile(), {"through": "order", "by": "subtype", "type": "memory"})
    assert [s.name for s in flow.series] == ["max_rss"] and flow.title.endswith("(memory only)")


def test_an_unknown_type_lists_the_profile_types():
    with pytest.raises(InvalidParameter) as caught:
        get_view("bars").run(time_profile(), {"type": "cpu"})
    assert caught.value.message == ("bars: parameter 'type' = 'cpu': expected a resource type of this profile: "
                                    "memory, time, or all")


def test_counting_and_keys_with_one_unit_keep_every_type():
    # a count has no unit, and 'order' is the same kind of number in every row
    count = plot("bars", time_profile(), {"func": "count", "per": "subtype"})
    assert count.categories == ["max_rss", "real", "sys", "user"] and count.ylabel == "count(amount)"
    orders = plot("bars", time_profile(), {"func": "max", "of": "order", "per": "subtype"})
    assert orders.categories == ["max_rss", "real", "sys", "user"] and "only" not in orders.title


def test_profiles_of_one_unit_are_shown_whole():
    for make in (memory_profile, complexity_profile, trace_profile):
        selection = select_type("bars", Profile.from_dict(make()), "amount", None)
        assert selection.only is None and selection.note() == ""
    assert plot("bars", memory_profile()).ylabel == "sum(amount) [B]"


def test_a_mixed_profile_shows_the_first_type_its_units_name():
    # perf profiles are of type mixed: samples (type time) come before the counters (events)
    bars = plot("bars", perf_profile(), {"per": "subtype"})
    assert bars.categories == ["function", "samples"] and bars.ylabel == "sum(amount) [samples]"
    assert bars.title.endswith("(time only)")
    counters = plot("bars", perf_profile(), {"per": "subtype", "type": "counter"})
    assert counters.ylabel == "sum(amount) [events]" and len(counters.categories) == 5


def test_scatter_plots_each_measured_quantity_of_a_uid_with_its_own_models():
    """regression_analysis models real, user and sys apart (postprocess.common); scatter shows them apart."""
    from perun_core import units
    from perun_core.runner.jobs import unit_config
    from perun_core.units import UnitContext

    rows = []
    for order, n in enumerate(range(100, 1100, 100), 1):
        for subtype, amount in (("real", 2e-6 * n * n), ("user", 1e-6 * n * n), ("sys", 1e-3 * n)):
            rows.append({"uid": "./quad", "type": "time", "subtype": subtype, "amount": amount, "order": order,
                         "structure-unit-size": n})
        rows.append({"uid": "./quad", "type": "memory", "subtype": "max_rss", "amount": 1000 + n, "order": order,
                     "structure-unit-size": n})
    profile = Profile.from_dict({"header": {"type": "time", "units": {"time": "s", "memory": "B"}},
                                 "collector_info": {}, "postprocessors": [],
                                 "global": {"timestamp": 1, "resources": rows}})
    unit = units.get_postprocessor("regression_analysis")
    params = unit_config("postprocessor", "regression_analysis", {"regression_models": ["linear", "quadratic"]}).params
    modelled = unit.postprocess(UnitContext(cwd=None), {**params, "profile": profile}).kwargs["profile"]
    figure = get_view("scatter").run(modelled, {})
    by_title = {p.title.split("uid: ")[1].split(" (")[0]: p for p in figure.plots}
    assert set(by_title) == {"./quad [real]", "./quad [user]", "./quad [sys]"}
    for label, shape in (("real", "quadratic"), ("user", "quadratic"), ("sys", "linear")):
        curves = by_title[f"./quad [{label}]"].curves
        assert sorted(c.name.split(" ")[0] for c in curves) == ["linear", "quadratic"]
        assert max(curves, key=lambda c: float(c.name.split("=")[1].rstrip(")"))).name.startswith(shape)
    assert len(get_view("scatter").run(modelled, {"uid": "./quad"}).plots) == 3
    assert len(get_view("scatter").run(modelled, {"uid": "./quad [user]"}).plots) == 1
    memory = get_view("scatter").run(modelled, {"type": "memory"})
    assert [len(p.curves) for p in memory.plots] == [2]


def test_several_snapshots_keep_the_subtypes_side_by_side_by_default():
    from .profiles import memory_profile

    bars = plot("bars", memory_profile())
    assert bars.xlabel == "snapshots" and not bars.stacked
    assert sorted(s.name for s in bars.series) == sorted({r["subtype"] for snap in memory_profile()["snapshots"]
                                                          for r in snap["resources"]})
