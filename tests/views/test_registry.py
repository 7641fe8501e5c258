"""The registry of views, parameter declarations and the checks every view shares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from perun_core.errors import EmptyProfile, InvalidParameter, UnknownUnit, UnsupportedProfile
from perun_core.views import VIEWS, Param, View, get_view, register_view, view_names

from .profiles import complexity_profile, empty_profile, memory_profile, time_profile

ROOT = Path(__file__).resolve().parents[2]


def test_builtin_views_in_order():
    assert view_names() == ["tableof", "bars", "flow", "scatter", "flamegraph", "heapmap"]


def test_unknown_view_names_the_known_ones():
    with pytest.raises(UnknownUnit) as caught:
        get_view("pie")
    assert str(caught.value) == "unknown view 'pie'; known: bars, flamegraph, flow, heapmap, raw, scatter, tableof"


@pytest.mark.parametrize("name", list(VIEWS))
def test_parameters_are_declared_once_with_distinct_names_and_flags(name):
    view = get_view(name)
    names = [p.name for p in view.params]
    flags = [f for p in view.params for f in (*p.flags, *p.off)]
    assert len(names) == len(set(names))
    assert len(flags) == len(set(flags))
    # the common options of the CLI must stay free
    assert not {"-f", "--filename", "--width", "--height", "--format", "-h", "--help"} & set(flags)
    assert view.summary and view.formats[0] in view.textual


def test_register_view_refuses_a_taken_name():
    with pytest.raises(ValueError):
        register_view(get_view("bars"))


def test_register_and_run_a_third_party_view():
    view = View(name="count", summary="How many resources.", params=(Param("scale", kind="int", help="Multiply.", default=1),),
                build=lambda profile, scale: profile.resource_count() * scale,
                render_result=lambda result, options: f"{result} resources")
    register_view(view)
    try:
        assert get_view("count").render(get_view("count").run(time_profile(), {"scale": "2"})) == "32 resources"
    finally:
        VIEWS.unregister("count")


def test_bind_checks_and_converts_values():
    bars = get_view("bars")
    bound = bars.bind({"func": "max", "stacked": 0})
    assert bound["func"] == "max" and bound["stacked"] is False and bound["of"] == "amount" and bound["by"] is None
    with pytest.raises(InvalidParameter, match="parameter 'func' = 'avg': expected one of sum, count"):
        bars.bind({"func": "avg"})
    with pytest.raises(InvalidParameter, match="parameter 'colour'"):
        bars.bind({"colour": "red"})
    with pytest.raises(InvalidParameter, match="an integer of at least 0"):
        get_view("heapmap").bind({"snapshot": -1})
    with pytest.raises(InvalidParameter, match="'pie': expected one of constant"):
        get_view("scatter").bind({"models": ["linear", "pie"]})


@pytest.mark.parametrize(("name", "profile", "message"), [
    ("heapmap", time_profile, "view 'heapmap' cannot show a time profile; it supports: memory"),
    ("heapmap", complexity_profile, "view 'heapmap' cannot show a mixed profile; it supports: memory"),
    ("flamegraph", time_profile, "view 'flamegraph' cannot show this time profile: its resources carry no call "
                                 "stacks ('trace') or caller edges ('caller')"),
    ("flamegraph", complexity_profile, "view 'flamegraph' cannot show this mixed profile"),
])
def test_views_refuse_profiles_they_cannot_show(name, profile, message):
    with pytest.raises(UnsupportedProfile) as caught:
        get_view(name).run(profile())
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("name", ["bars", "flow", "scatter", "heapmap", "flamegraph", "tableof"])
def test_empty_profiles_are_refused(name):
    kind = "memory" if name in ("heapmap", "flamegraph") else "time"
    with pytest.raises(EmptyProfile, match=f"view '{name}': the profile has no resources to show"):
        get_view(name).run(empty_profile(kind))


@pytest.mark.parametrize(("name", "params", "message"), [
    ("bars", {"of": "amout"}, "bars: parameter 'of' = 'amout': expected a numeric resource key: amount, order"),
    ("bars", {"of": "subtype"}, "bars: parameter 'of' = 'subtype': expected a numeric resource key: amount, order"),
    ("bars", {"per": "kind"}, "bars: parameter 'per' = 'kind': expected a resource key: amount, type, subtype, uid, "
                              "order, snapshots"),
    ("flow", {"by": "nope"}, "flow: parameter 'by' = 'nope'"),
    # without --per a profile lacking sizes plots against the run order (test_fits.py); a named key must exist
    ("scatter", {"per": "size"}, "scatter: parameter 'per' = 'size': expected a numeric resource key: amount, order"),
    ("scatter", {"per": "order", "uid": "ls"}, "scatter: parameter 'uid' = 'ls': expected a uid with points: ./app"),
    ("tableof", {"keys": ("cmd",)}, "tableof: parameter 'key' = 'cmd': expected a resource key"),
    ("tableof", {"sort_by": "uid:line"}, "tableof: parameter 'sort_by' = 'uid:line': expected one of the columns"),
    ("tableof", {"filters": ("uid",)}, "tableof: parameter 'filter' = 'uid': expected KEY=VALUE"),
])
def test_unknown_keys_name_what_is_accepted(name, params, message):
    with pytest.raises(InvalidParameter) as caught:
        get_view(name).run(time_profile(), params)
    assert str(caught.value).startswith(message)


def test_count_accepts_any_key_and_snapshots():
    figure = get_view("bars").run(memory_profile(), {"func": "count", "of": "subtype", "per": "snapshots"})
    assert figure.plots[0].series[0].y.tolist() == [3.0, 3.0, 3.0]


def test_render_checks_size_and_format():
    bars = get_view("bars")
    figure = bars.run(time_profile())
    with pytest.raises(InvalidParameter, match="width"):
        bars.render(figure, width=5)
    with pytest.raises(InvalidParameter, match="format"):
        bars.render(figure, fmt="svg")


def test_format_for_follows_the_file_suffix():
    flame = get_view("flamegraph")
    assert flame.format_for(None, "out.svg") == "svg"
    assert flame.format_for(None, "out.speedscope.json") == "speedscope"
    assert flame.format_for(None, "out.folded") == "folded"
    assert flame.format_for(None, "out.txt") == "icicle"
    assert flame.format_for("folded", "out.svg") == "folded"
    assert get_view("tableof").format_for(None, "x.md") == "markdown"
    assert get_view("bars").format_for(None, "x.html") == "text"
    assert get_view("bars").format_for(None, "PLOT.HTM") == "text"
    assert get_view("bars").format_for(None, "plot") == "text"
    assert get_view("bars").format_for(None, "out.d/plot") == "text"


def test_format_for_refuses_suffixes_the_view_cannot_write():
    with pytest.raises(InvalidParameter, match=r"'b\.svg': expected a file name ending in one of \.txt, \.html, \.htm$"):
        get_view("bars").format_for(None, "b.svg")
    assert get_view("bars").suffixes() == [".txt", ".html", ".htm"]
    assert get_view("flamegraph").suffixes() == [".txt", ".html", ".htm", ".svg", ".folded", ".collapsed", ".json"]
    # an explicit format wins over the name
    assert get_view("flamegraph").format_for("icicle", "x.png") == "icicle"


def test_importing_the_views_loads_nothing_heavy():
    code = ("import perun_core.views, perun_core.cli.view_cmds, sys\n"
            "print(' '.join(m for m in sys.modules if m.split('.')[0] in ('numpy', 'plotext', 'rich', 'textual')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == ""


def test_show_help_lists_views_without_loading_plotting():
    code = ("import sys\nfrom perun_core.cli.main import cli\n"
            "try:\n    cli.main(['show', 'p', 'scatter', '--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "try:\n    cli.main(['show', '--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "print('LOADED', ' '.join(m for m in sys.modules if m.split('.')[0] in ('numpy', 'plotext')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "--uid UID" in out and "flamegraph" in out and "heapmap" in out
    assert out.strip().endswith("LOADED")
