"""Every view knows which profiles it can show: declarations, ``api.view_fits``, the CLI's refusal.

Also: scatter without input sizes plots against the run order, and the
flame graph shows profiles with caller edges (pytrace in both modes,
callgrind) by rebuilding their stacks.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from perun_core import api
from perun_core.profile.query import as_profile
from perun_core.views import get_view
from perun_core.views.callgraph import caller_stacks

from .profiles import complexity_profile, empty_profile, memory_profile, perf_profile, time_profile, trace_profile


def _profile(kind: str, resources: list[dict], units: dict | None = None, collector: str = "pytrace") -> dict:
    return {"header": {"type": kind, "units": units or {}, "cmd": "app.py", "params": "", "workload": ""},
            "collector_info": {"name": collector, "params": {}}, "postprocessors": [],
            "snapshots": [{"time": "1", "resources": resources, "models": []}]}


def pytrace_functions_profile() -> dict:
    """pytrace's function mode: one row per call with its caller, inclusive microseconds."""
    calls = [("app:main", "<module>", 100.0), ("app:work", "app:main", 60.0), ("app:work", "app:main", 20.0),
             ("app:leaf", "app:work", 30.0), ("app:leaf", "app:main", 5.0)]
    return _profile("mixed", [{"type": "mixed", "subtype": "time delta", "uid": uid, "caller": caller,
                               "amount": amount, "structure-unit-size": i}
                              for i, (uid, caller, amount) in enumerate(calls)], {"mixed(time delta)": "us"})


def cprofile_profile() -> dict:
    """pytrace's cProfile mode: exclusive/inclusive rows per function and one row per caller edge."""
    rows = []
    for uid, own, whole in (("main", 0.1, 1.0), ("work", 0.6, 0.9), ("leaf", 0.3, 0.3)):
        rows.append({"type": "time", "subtype": "exclusive", "uid": uid, "amount": own, "calls": 1})
        rows.append({"type": "time", "subtype": "inclusive", "uid": uid, "amount": whole, "calls": 1})
    rows.append({"type": "time", "subtype": "call", "uid": "work", "caller": "main", "amount": 0.9, "calls": 1})
    rows.append({"type": "time", "subtype": "call", "uid": "leaf", "caller": "work", "amount": 0.3, "calls": 2})
    return _profile("time", rows, {"time": "s"})


def callgrind_profile() -> dict:
    rows = [{"type": "instructions", "subtype": "function", "uid": "main", "amount": 1000, "exclusive": 100},
            {"type": "instructions", "subtype": "function", "uid": "hot", "amount": 900, "exclusive": 900},
            {"type": "instructions", "subtype": "call", "uid": "hot", "caller": "main", "amount": 900, "calls": 3}]
    return _profile("instructions", rows, {"instructions": "Ir"}, collector="callgrind")


def fits_of(data: dict) -> dict[str, api.ViewFit]:
    return {fit.name: fit for fit in api.view_fits(data)}


def test_time_profile_fits_the_plots_but_not_the_flame_graph_or_the_heap_map():
    fits = fits_of(time_profile())
    assert [name for name, fit in fits.items() if fit.fits] == ["tableof", "bars", "flow", "scatter"]
    assert fits["flamegraph"].reason == "it has no call stacks ('trace') or caller edges ('caller')"
    assert fits["heapmap"].reason.startswith("it is a time profile")
    assert api.fitting_views(time_profile()) == ["tableof", "bars", "flow", "scatter"]


@pytest.mark.parametrize("make", [pytrace_functions_profile, cprofile_profile, callgrind_profile, trace_profile,
                                  perf_profile, memory_profile])
def test_profiles_with_stacks_or_caller_edges_fit_the_flame_graph(make):
    fits = fits_of(make())
    assert fits["flamegraph"].fits, fits["flamegraph"]
    graph = get_view("flamegraph").run(make())
    assert graph.root.total > 0


def test_only_memory_profiles_with_addresses_fit_the_heap_map():
    assert fits_of(memory_profile())["heapmap"].fits
    assert not fits_of(complexity_profile())["heapmap"].fits


def test_an_empty_profile_fits_no_plot():
    fits = fits_of(empty_profile())
    assert not any(fit.fits for fit in fits.values())
    assert fits["bars"].reason == "it has no resources"


def test_stacks_rebuilt_from_pytrace_calls_keep_the_callers_shares():
    lines = dict(line.rsplit(" ", 1) for line in caller_stacks(as_profile(pytrace_functions_profile())))
    # work: 80 us inclusive, 30 of it in leaf; main: 100 less work (80) and leaf (5)
    assert float(lines["<module>;app:main;app:work"]) == pytest.approx(50.0)
    assert float(lines["<module>;app:main;app:work;app:leaf"]) == pytest.approx(30.0)
    assert float(lines["<module>;app:main;app:leaf"]) == pytest.approx(5.0)
    assert float(lines["<module>;app:main"]) == pytest.approx(15.0)
    total = sum(float(v) for v in lines.values())
    assert total == pytest.approx(100.0)


def test_stacks_from_cprofile_and_callgrind_use_their_exclusive_amounts():
    cp = dict(line.rsplit(" ", 1) for line in caller_stacks(as_profile(cprofile_profile())))
    assert {k: round(float(v), 6) for k, v in cp.items()} == {"main": 0.1, "main;work": 0.6, "main;work;leaf": 0.3}
    cg = dict(line.rsplit(" ", 1) for line in caller_stacks(as_profile(callgrind_profile())))
    assert {k: float(v) for k, v in cg.items()} == {"main": 100.0, "main;hot": 900.0}


def test_recursion_does_not_loop():
    rows = [{"type": "time", "uid": "fib", "caller": "fib", "amount": 5.0},
            {"type": "time", "uid": "fib", "caller": "main", "amount": 8.0},
            {"type": "time", "uid": "a", "caller": "b", "amount": 2.0},
            {"type": "time", "uid": "b", "caller": "a", "amount": 3.0},
            {"type": "time", "uid": "b", "caller": "main", "amount": 4.0}]
    lines = caller_stacks(as_profile(_profile("time", rows)))
    assert lines and all(line.startswith("main") for line in lines)


def test_scatter_without_sizes_plots_against_the_run_order():
    figure = get_view("scatter").run(time_profile())
    assert figure.plots and all(plot.xlabel == "run order" for plot in figure.plots)
    assert all("per run order" in plot.title for plot in figure.plots)
    # no 'order' key either: the resources' order
    rows = [{"type": "time", "subtype": "real", "uid": "job", "amount": a} for a in (3.0, 1.0, 2.0)]
    (plot,) = get_view("scatter").run(_profile("time", rows, {"time": "s"})).plots
    assert list(plot.series[0].x) == [1.0, 2.0, 3.0] and list(plot.series[0].y) == [3.0, 1.0, 2.0]


def test_show_of_a_view_that_cannot_show_the_profile_names_the_views_that_can(tmp_path):
    path = tmp_path / "time.perf"
    path.write_text(json.dumps(time_profile()))
    result = run_cli("show", str(path), "flamegraph", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines()[0] == (
        "error: view 'flamegraph' cannot show this time profile: it has no call stacks ('trace') or caller edges "
        "('caller'); views that can show it: tableof, bars, flow, scatter")


def test_flame_graph_of_a_real_cprofile_run(tmp_path):
    from gitrepo import make_repo

    root = tmp_path / "project"
    make_repo(root, [{"files": {"app.py": "def leaf(n):\n    return sum(range(n))\n\n\ndef work():\n"
                                          "    return [leaf(20000) for _ in range(30)]\n\n\nwork()\n"},
                      "message": "app"}])
    assert run_cli("init", cwd=root).returncode == 0
    collected = run_cli("collect", "pytrace", "app.py", cwd=root)
    assert collected.returncode == 0, collected.stderr
    fits = {fit.name: fit for fit in api.view_fits("0@p", cwd=root)}
    assert fits["flamegraph"].fits and not fits["heapmap"].fits
    shown = run_cli("show", "0@p", "flamegraph", "--format", "folded", cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert any("work" in line and "leaf" in line for line in shown.stdout.splitlines()), shown.stdout
