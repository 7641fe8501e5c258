"""Tests of perun_core.profile.convert (spec 001 §2.3)."""

from __future__ import annotations

import copy
import math
import sys
import types

import pytest
from test_query import (
    EXPONENTIAL_MODEL,
    LINEAR_MODEL,
    SOURCE,
    as_form,
    complexity_profile,
    memory_profile,
    time_profile,
)

from perun_core.errors import ExternalToolError, InvalidProfile, UsageError
from perun_core.analysis.curves import MODEL_PLOTTERS, plot_data_from_coefficients_of, register_model_plotter
from perun_core.profile.convert import (
    resources_to_pandas_dataframe,
    resources_to_table,
    to_flame_graph_format,
    to_heap_map_format,
    to_heat_map_format,
)
from perun_core.profile.query import all_models_of

FORMS = ["dict", "profile", "columnar"]


@pytest.fixture(params=FORMS)
def form(request):
    return request.param


def _frame(function: str, source: str = "unreachable", line: int = 0) -> dict:
    return {"function": function, "source": source, "line": line}


def _memory(snapshots: list[list[dict]], units: dict | None = None) -> dict:
    return {
        "header": {"type": "memory", "units": {"memory": "B"} if units is None else units},
        "snapshots": [{"time": f"{0.025 * (i + 1):.6f}", "resources": res, "models": []} for i, res in enumerate(snapshots)],
    }


def _alloc(address: int, amount, uid_line: int = 10, subtype: str = "malloc", trace: list | None = None) -> dict:
    uid = {"source": "a.c", "function": "f", "line": uid_line}
    return {
        "type": "memory", "subtype": subtype, "address": address, "amount": amount,
        "trace": trace if trace is not None else [_frame("malloc"), _frame("f", "a.c", uid_line), _frame("main", "a.c", 1)],
        "uid": uid,
    }


# -- tables -------------------------------------------------------------------------

def test_resources_to_table_memory_matches_documented_columns(form):
    names, columns = resources_to_table(as_form(memory_profile(), form))
    # the columns of the documented pandas frame, in its (alphabetical) order
    assert names == ["address", "amount", "snapshots", "subtype", "trace", "type", "uid", "uid:function", "uid:line", "uid:source"]
    table = dict(zip(names, columns))
    assert table["address"] == [19284560, 19284560]
    assert table["amount"] == [4, 0]
    assert table["snapshots"] == [0, 1]
    assert table["subtype"] == ["malloc", "free"]
    assert table["trace"][0] == f"unreachable:malloc:0,{SOURCE}:main:22,unreachable:__libc_start_main:0,unreachable:_start:0"
    assert table["uid"] == [f"{SOURCE}:main:22", f"{SOURCE}:main:27"]
    assert table["uid:line"] == [22, 27]
    assert table["uid:function"] == ["main", "main"]


def test_resources_to_table_time_and_sparse(form):
    names, columns = resources_to_table(as_form(time_profile(), form))
    assert names == ["amount", "snapshots", "type", "uid"]
    assert columns == [[0.616, 0.5, 0.125], [0, 0, 0], ["time"] * 3, ["real", "user", "sys"]]

    data = {
        "header": {"type": "mixed"},
        "snapshots": [{"resources": [{"amount": 1}, {"uid": "g"}]}, {"resources": []}, {"resources": [{"extra": True}]}],
        "global": {"resources": [{"amount": 2.5}]},
    }
    names, columns = resources_to_table(as_form(data, form))
    assert dict(zip(names, columns)) == {
        "amount": [1, None, None, 2.5],
        "extra": [None, None, True, None],
        "snapshots": [0, 0, 2, 3],
        "uid": [None, "g", None, None],
    }


def test_resources_to_table_empty_profile():
    assert resources_to_table({"header": {"type": "time"}, "snapshots": []}) == ([], [])


def test_pandas_missing_raises_external_tool_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes "import pandas" fail
    with pytest.raises(ExternalToolError) as info:
        resources_to_pandas_dataframe(time_profile())
    assert info.value.tool == "pandas"
    assert info.value.hint == "pip install pandas"


def test_pandas_dataframe_is_built_from_the_table_columns_in_order(monkeypatch):
    """pandas is optional (documented in the function; neither a dependency nor a test extra): a stand-in
    module records what the DataFrame is made of, so the conversion is tested on every machine."""
    made = {}

    class DataFrame:
        def __init__(self, data, columns):
            made.update(data=data, columns=columns)

    monkeypatch.setitem(sys.modules, "pandas", types.SimpleNamespace(DataFrame=DataFrame))
    frame = resources_to_pandas_dataframe(memory_profile())
    names, columns = resources_to_table(memory_profile())
    assert isinstance(frame, DataFrame)
    assert made["columns"] == names and list(made["data"]) == names
    assert made["data"]["subtype"] == ["malloc", "free"] and made["data"]["uid:line"] == [22, 27]
    assert [made["data"][name] for name in names] == columns


# -- flame graphs ----------------------------------------------------------------------------

def test_flame_graph_of_documented_memory_profile(form):
    lines = to_flame_graph_format(as_form(memory_profile(), form))
    # the free record (amount 0) is skipped; frames go root first
    assert lines == [
        f"_start()~unreachable~0;__libc_start_main()~unreachable~0;main()~{SOURCE}~22;malloc()~unreachable~0 4"
    ]


def test_flame_graph_aggregates_identical_stacks(form):
    short = [_frame("malloc"), _frame("main", "t.c", 45)]
    other = [_frame("valloc"), _frame("main", "t.c", 75), _frame("__libc_start_main")]
    data = _memory([
        [_alloc(1, 4, trace=short), _alloc(2, 8, trace=other), _alloc(3, 0, trace=short)],
        [_alloc(4, 6, trace=copy.deepcopy(short)), _alloc(5, 100, subtype="free", trace=short)],
        [{"type": "memory", "amount": 7}, _alloc(6, 1.5, trace=[_frame("main", "t2.c", 79)]), _alloc(7, 9, trace=[])],
    ])
    data["global"] = {"resources": [_alloc(8, 2, trace=other), _alloc(9, -3, trace=other), _alloc(10, "x", trace=other)]}
    assert to_flame_graph_format(as_form(data, form)) == [
        "__libc_start_main()~unreachable~0;main()~t.c~75;valloc()~unreachable~0 10",
        "main()~t.c~45;malloc()~unreachable~0 10",
        "main()~t2.c~79 1.5",
    ]


def test_flame_graph_other_amount_key_and_frame_spellings():
    data = {
        "header": {"type": "time"},
        "snapshots": [{"resources": [
            {"amount": 1, "ncalls": 3, "trace": [{"func": "leaf", "file": "x.py"}, "root;frame"]},
            {"amount": 1, "ncalls": 2, "trace": [{"func": "leaf", "file": "x.py"}, "root;frame"]},
            {"amount": 1, "trace": ["lonely"]},
        ]}],
    }
    assert to_flame_graph_format(data, of="ncalls") == ["root,frame;leaf()~x.py 5"]
    assert to_flame_graph_format(data) == ["lonely 1", "root,frame;leaf()~x.py 2"]
    assert to_flame_graph_format(time_profile()) == []


# -- heap and heat maps ------------------------------------------------------------------------

def test_heap_map_of_documented_memory_profile(form):
    heap = to_heap_map_format(as_form(memory_profile(), form))
    assert heap == {
        "type": "heap",
        "unit": "B",
        "stats": {
            "max_amount": 4, "min_amount": 4, "sum_amount": 4,
            "max_address": 19284563, "min_address": 19284560, "allocations": 1,
        },
        "info": [{"line": 22, "function": "main", "source": SOURCE}],
        "snapshots": [
            {
                "time": "0.025000",
                "max_amount": 4, "min_amount": 4, "sum_amount": 4,
                "max_address": 19284563, "min_address": 19284560,
                "map": [{"address": 19284560, "amount": 4, "uid": 0, "subtype": "malloc"}],
            },
            {
                "time": "0.050000",
                "max_amount": 0, "min_amount": 0, "sum_amount": 0,
                "max_address": 0, "min_address": 0,
                "map": [],
            },
        ],
    }


def test_heap_map_stats_and_uid_indexes(form):
    data = _memory([
        [_alloc(1000, 16, uid_line=1), _alloc(2000, 8, uid_line=2, subtype="calloc"), _alloc(1000, 16, subtype="free")],
        [_alloc(500, 100, uid_line=2), _alloc(3000, 0, uid_line=3), {"type": "memory", "amount": 5}],
    ], units={"memory": "kB"})
    heap = to_heap_map_format(as_form(data, form))
    assert heap["unit"] == "kB"
    assert heap["info"] == [
        {"line": 1, "function": "f", "source": "a.c"},
        {"line": 2, "function": "f", "source": "a.c"},
        {"line": 3, "function": "f", "source": "a.c"},
    ]
    first, second = heap["snapshots"]
    assert [(e["address"], e["uid"], e["subtype"]) for e in first["map"]] == [(1000, 0, "malloc"), (2000, 1, "calloc")]
    assert (first["min_amount"], first["max_amount"], first["sum_amount"]) == (8, 16, 24)
    assert (first["min_address"], first["max_address"]) == (1000, 2007)
    assert [(e["address"], e["amount"], e["uid"]) for e in second["map"]] == [(500, 100, 1), (3000, 0, 2)]
    assert (second["min_address"], second["max_address"]) == (500, 3000)
    assert heap["stats"] == {
        "max_amount": 100, "min_amount": 0, "sum_amount": 124,
        "max_address": 3000, "min_address": 500, "allocations": 4,
    }


def test_heat_map_bucketing(form):
    data = _memory([[_alloc(100, 10), _alloc(105, 10)], [_alloc(200, 1), _alloc(100, 5, subtype="free")]])
    heat = to_heat_map_format(as_form(data, form), cells=10)
    # range 100..200 (101 bytes) in cells of ceil(101/10) = 11 bytes -> 10 cells
    assert heat == {
        "type": "heat",
        "unit": "B",
        "stats": {"min_address": 100, "max_address": 200, "cell_size": 11, "cells": 10, "max_count": 2, "allocations": 3},
        "map": [2, 1, 0, 0, 0, 0, 0, 0, 0, 1],
    }
    fine = to_heat_map_format(as_form(data, form))
    assert fine["stats"]["cell_size"] == 1 and fine["stats"]["cells"] == 101
    assert fine["map"][:5] == [1] * 5 and fine["map"][5:10] == [2] * 5 and fine["map"][10:15] == [1] * 5
    assert fine["map"][15:100] == [0] * 85 and fine["map"][100] == 1


def test_heat_map_empty_and_bad_cells():
    heat = to_heat_map_format(_memory([[_alloc(1, 4, subtype="free")]]))
    assert heat["map"] == [] and heat["stats"]["allocations"] == 0 and heat["stats"]["cells"] == 0
    with pytest.raises(UsageError):
        to_heat_map_format(memory_profile(), cells=0)


@pytest.mark.parametrize("convert", [to_heap_map_format, to_heat_map_format])
def test_maps_need_a_memory_profile(convert):
    with pytest.raises(InvalidProfile) as info:
        convert(time_profile())
    assert info.value.key == "header.type"
    assert info.value.reason == "expected a memory profile, got time"


# -- plot data ------------------------------------------------------------------------------------

def _model(kind: str, interval=(0, 4), **coeffs) -> dict:
    return {
        "uid": "f", "model": kind, "method": "full", "r_square": 1.0,
        "x_interval_start": interval[0], "x_interval_end": interval[1],
        "coeffs": [{"name": name, "value": value} for name, value in coeffs.items()],
    }


XS = [0.0, 1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize(
    ("model", "plot_x", "plot_y"),
    [
        (_model("constant", b0=3.0, b1=0.0), XS, [3.0] * 5),
        (_model("linear", b0=1, b1=2), XS, [1.0, 3.0, 5.0, 7.0, 9.0]),
        (_model("quadratic", b0=1, b1=2), XS, [1.0, 3.0, 9.0, 19.0, 33.0]),
        (_model("quadratic", b0=1, b1=2, b2=3), XS, [1.0, 6.0, 17.0, 34.0, 57.0]),
        (_model("power", b0=2, b1=3), XS, [0.0, 2.0, 16.0, 54.0, 128.0]),
        (_model("power", b0=2, b1=-1), XS[1:], [2.0, 1.0, 2 / 3, 0.5]),
        (_model("exponential", b0=2, b1=3), XS, [2.0, 6.0, 18.0, 54.0, 162.0]),
        (_model("logarithmic", b0=1, b1=2), XS[1:], [1.0, 1 + 2 * math.log(2.0), 1 + 2 * math.log(3.0), 1 + 2 * math.log(4.0)]),
        (_model("n log n", b0=1, b1=2), XS[1:], [1.0, 1 + 4 * math.log(2.0), 1 + 6 * math.log(3.0), 1 + 8 * math.log(4.0)]),
        (_model("nlogn", b0=0, b1=1), XS[1:], [0.0, 2 * math.log(2.0), 3 * math.log(3.0), 4 * math.log(4.0)]),
        (_model("linearithmic", b0=0, b1=1), XS[1:], [0.0, 2 * math.log(2.0), 3 * math.log(3.0), 4 * math.log(4.0)]),
    ],
)
def test_plot_data_of_each_kind(model, plot_x, plot_y):
    original = copy.deepcopy(model)
    result = plot_data_from_coefficients_of(model, points=5)
    assert result["plot_x"] == plot_x
    assert result["plot_y"] == plot_y
    assert model == original  # the input is not changed
    assert {k: v for k, v in result.items() if not k.startswith("plot_")} == original


def test_plot_data_looks_up_coefficients_by_name():
    model = _model("linear", b1=2, b0=1)
    assert [c["name"] for c in model["coeffs"]] == ["b1", "b0"]
    assert plot_data_from_coefficients_of(model, points=5)["plot_y"] == [1.0, 3.0, 5.0, 7.0, 9.0]


def test_plot_data_of_documented_models():
    result = plot_data_from_coefficients_of(LINEAR_MODEL)
    assert len(result["plot_x"]) == len(result["plot_y"]) == 51
    assert result["plot_x"][0] == 0.0 and result["plot_x"][-1] == 11892.0
    assert result["plot_y"][0] == 0.505375215875552
    assert result["plot_x"][25] == 5946.0
    exponential = plot_data_from_coefficients_of(EXPONENTIAL_MODEL, points=3)
    assert exponential["plot_y"] == [0.9909792049684152 * 1.000004056250301**x for x in (0.0, 5946.0, 11892.0)]
    for _, model in all_models_of(complexity_profile()):
        data = plot_data_from_coefficients_of(model)
        assert len(data["plot_x"]) == 51


@pytest.mark.parametrize(
    "model",
    [
        _model("power", interval=(-2, 2), b0=1, b1=0.5),
        _model("power", interval=(0, 2), b0=1, b1=-2),
        _model("exponential", interval=(0, 1000), b0=1, b1=10),
        _model("exponential", interval=(-3, 3), b0=1, b1=-2.5),
        _model("logarithmic", interval=(-5, 5), b0=1, b1=1),
        _model("n log n", interval=(-5, 5), b0=1, b1=1),
        _model("quadratic", interval=(0, 1e200), b0=1, b1=1),
        _model("linear", interval=(0, 1e308), b0=1e308, b1=10),
    ],
)
def test_plot_data_never_holds_nan_or_inf(model):
    result = plot_data_from_coefficients_of(model)
    assert len(result["plot_x"]) == len(result["plot_y"]) < 51
    assert all(isinstance(v, float) and math.isfinite(v) for v in result["plot_x"] + result["plot_y"])


def test_plot_data_single_point_and_bad_arguments():
    assert plot_data_from_coefficients_of(_model("linear", b0=1, b1=1), points=1)["plot_x"] == [0.0]
    with pytest.raises(UsageError):
        plot_data_from_coefficients_of(_model("linear", b0=1, b1=1), points=0)
    with pytest.raises(InvalidProfile) as info:
        plot_data_from_coefficients_of(_model("bogus", b0=1))
    assert info.value.key == "model" and "unknown model kind 'bogus'" in info.value.reason
    with pytest.raises(InvalidProfile) as info:
        plot_data_from_coefficients_of(_model("linear", b0=1))
    assert "b1" in info.value.reason
    no_interval = _model("linear", b0=1, b1=1)
    del no_interval["x_interval_end"]
    with pytest.raises(InvalidProfile):
        plot_data_from_coefficients_of(no_interval)
    with pytest.raises(InvalidProfile):
        plot_data_from_coefficients_of(_model("linear", b0="one", b1=1))


def test_plot_data_registry_accepts_new_kinds(monkeypatch):
    monkeypatch.setattr("perun_core.analysis.curves.MODEL_PLOTTERS", dict(MODEL_PLOTTERS))
    from perun_core.analysis import curves

    def bins(model, points):
        return [float(x) for x in model["bins"]], [float(y) for y in model["heights"]]

    register_model_plotter("Histogram", bins)
    assert "histogram" in curves.MODEL_PLOTTERS and "histogram" not in MODEL_PLOTTERS
    result = plot_data_from_coefficients_of({"model": "histogram", "bins": [1, 2], "heights": [3, 4]})
    assert (result["plot_x"], result["plot_y"]) == ([1.0, 2.0], [3.0, 4.0])


def test_nonparametric_kinds_plot_without_importing_their_module_first():
    import subprocess
    import sys

    code = ("from perun_core.analysis.curves import plot_data_from_coefficients_of as p\n"
            "m = {'model': 'regressogram', 'uid': 'f', 'bin_edges': [0, 1, 2], 'bin_values': [1.0, 2.0],"
            " 'bin_counts': [1, 1], 'x_interval_start': 0, 'x_interval_end': 2, 'r_square': 1.0,"
            " 'statistic': 'mean', 'bin_rule': '2', 'method': 'full'}\n"
            "print(sorted(set(p(m)['plot_y'])))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[1.0, 2.0]"
