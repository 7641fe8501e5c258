"""Tests of perun_core.profile.query against the examples of spec 001 §2.1 and §2.4.

The example profiles are built here as dicts (test_convert imports them) and
every query is run on three forms of each: the plain dict, a Profile parsed
from it, and a Profile that went through the columnar store encoding.
"""

from __future__ import annotations

import copy
import math
import subprocess
import sys

import pytest

from perun_core.errors import InvalidProfile
from perun_core.profile import Profile, ResourceTable, Snapshot
from perun_core.profile.codec import decode_content, encode_columnar
from perun_core.profile.query import (
    all_items_of,
    all_key_values_of,
    all_models_of,
    all_numerical_resource_fields_of,
    all_resource_fields_of,
    all_resources_of,
    as_profile,
    flatten_value,
    numeric_column,
    resource_table,
    unique_model_values_of,
    unique_resource_values_of,
)

SOURCE = "../memory_collect_test.c"


def _frame(function: str, source: str = "unreachable", line: int = 0) -> dict:
    return {"source": source, "function": function, "line": line}


def memory_profile() -> dict:
    """The memory collector example: a malloc in one snapshot, its free in the next."""
    return {
        "origin": "74288675e4074f1ad5bbb0d3b3253911ab42267a",
        "header": {"type": "memory", "workload": "", "cmd": "./mct", "units": {"memory": "B"}, "params": ""},
        "collector_info": {"name": "memory", "params": {"no_func": None, "no_source": None, "all": False, "sampling": 0.025}},
        "postprocessors": [],
        "snapshots": [
            {
                "time": "0.025000",
                "resources": [
                    {
                        "type": "memory",
                        "subtype": "malloc",
                        "address": 19284560,
                        "amount": 4,
                        "trace": [_frame("malloc"), _frame("main", SOURCE, 22), _frame("__libc_start_main"), _frame("_start")],
                        "uid": _frame("main", SOURCE, 22),
                    }
                ],
                "models": [],
            },
            {
                "time": "0.050000",
                "resources": [
                    {
                        "type": "memory",
                        "subtype": "free",
                        "address": 19284560,
                        "amount": 0,
                        "trace": [_frame("free"), _frame("main", SOURCE, 27), _frame("__libc_start_main"), _frame("_start")],
                        "uid": _frame("main", SOURCE, 27),
                    }
                ],
                "models": [],
            },
        ],
    }


def time_profile() -> dict:
    return {
        "header": {"type": "time", "units": {"time": "s"}, "cmd": "perun", "params": "status", "workload": "--short"},
        "collector_info": {"name": "time", "params": {}},
        "postprocessors": [],
        "snapshots": [
            {
                "time": "0.616",
                "resources": [
                    {"amount": 0.616, "type": "time", "uid": "real"},
                    {"amount": 0.500, "type": "time", "uid": "user"},
                    {"amount": 0.125, "type": "time", "uid": "sys"},
                ],
                "models": [],
            }
        ],
    }


COMPLEXITY_UIDS = [
    "SLLList_init(SLLList*)",
    "SLLList_search(SLLList*, int)",
    "SLLList_insert(SLLList*, int)",
    "SLLList_destroy(SLLList*)",
]

CONSTANT_MODEL = {
    "x_interval_start": 0, "model": "constant", "method": "full",
    "coeffs": [{"name": "b0", "value": 0.5644496762801648}, {"name": "b1", "value": 0.0}],
    "uid": "SLLList_insert(SLLList*, int)", "r_square": 0.0, "x_interval_end": 11892,
}
EXPONENTIAL_MODEL = {
    "x_interval_start": 0, "model": "exponential", "method": "full",
    "coeffs": [{"name": "b0", "value": 0.9909792049684152}, {"name": "b1", "value": 1.000004056250301}],
    "uid": "SLLList_insert(SLLList*, int)", "r_square": 0.007076437903106431, "x_interval_end": 11892,
}
LINEAR_MODEL = {
    "uid": "SLLList_insert(SLLList*, int)", "r_square": 0.0017560012128507133,
    "coeffs": [{"value": 0.505375215875552, "name": "b0"}, {"value": 9.935159839322705e-06, "name": "b1"}],
    "x_interval_start": 0, "x_interval_end": 11892, "model": "linear", "method": "full",
}


def complexity_profile() -> dict:
    resources = []
    for size in range(3):
        for i, uid in enumerate(COMPLEXITY_UIDS):
            resources.append(
                {"amount": 11 + i + size, "subtype": "time delta", "type": "mixed", "uid": uid, "structure-unit-size": size}
            )
    return {
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "./sll", "params": "", "workload": ""},
        "collector_info": {"name": "complexity", "params": {}},
        "postprocessors": [{"name": "regression_analysis", "params": {"method": "full", "models": ["constant", "linear"]}}],
        "snapshots": [{"time": "0.0", "resources": resources, "models": [CONSTANT_MODEL, EXPONENTIAL_MODEL]}],
        "global": {"time": "0.0", "resources": [], "models": [LINEAR_MODEL]},
    }


def as_form(data: dict, form: str):
    if form == "dict":
        return copy.deepcopy(data)
    if form == "profile":
        return Profile.from_dict(copy.deepcopy(data))
    return decode_content(encode_columnar(Profile.from_dict(copy.deepcopy(data))))


FORMS = ["dict", "profile", "columnar"]


@pytest.fixture(params=FORMS)
def form(request):
    return request.param


# -- items and key paths --------------------------------------------------------------

def test_all_items_of_doc_example():
    resource = {"type": "memory", "amount": 4, "uid": {"source": ".../memory_collect_test.c", "function": "main", "line": 22}}
    assert list(all_items_of(resource)) == [
        ("type", "memory"),
        ("amount", 4),
        ("uid", ".../memory_collect_test.c:main:22"),
        ("uid:source", ".../memory_collect_test.c"),
        ("uid:function", "main"),
        ("uid:line", 22),
    ]


def test_all_items_of_trace_and_deeper_nesting():
    resource = {
        "trace": [{"function": "main", "source": "file.c", "line": 22}, {"function": "_start", "source": "?", "line": 0}],
        "a": {"b": {"c": 1, "d": [1, 2]}},
    }
    assert list(all_items_of(resource)) == [
        ("trace", "main:file.c:22,_start:?:0"),
        ("a", "1:1,2"),
        ("a:b", "1:1,2"),
        ("a:b:c", 1),
        ("a:b:d", "1,2"),
    ]


def test_flatten_value_scalars_unchanged():
    assert flatten_value(3) == 3
    assert flatten_value(None) is None
    assert flatten_value([]) == ""


def test_all_key_values_of_doc_example():
    mres = memory_profile()["snapshots"][1]["resources"][0]
    assert all_key_values_of(mres, "trace::function") == ["free", "main", "__libc_start_main", "_start"]
    assert all_key_values_of(mres, "trace::line") == [0, 27, 0, 0]
    assert all_key_values_of(mres, "uid:line") == [27]
    assert all_key_values_of(mres, "uid") == [f"{SOURCE}:main:27"]
    assert all_key_values_of(mres, "subtype") == ["free"]
    assert all_key_values_of(mres, "nothing") == []
    assert all_key_values_of(mres, "uid:nothing") == []
    assert all_key_values_of(mres, "trace::nothing") == []
    # ':' does not step into lists, '::' does not step into scalars
    assert all_key_values_of(mres, "trace:function") == []
    assert all_key_values_of(mres, "amount::x") == []


def test_all_key_values_of_prefers_literal_keys():
    assert all_key_values_of({"a:b": 1, "a": {"b": 2}}, "a:b") == [1]


# -- resources -------------------------------------------------------------------------

def test_all_resources_of_numbers_snapshots_then_global(form):
    data = memory_profile()
    data["global"] = {"time": "1.0", "resources": [{"amount": 1, "type": "memory"}], "models": []}
    got = list(all_resources_of(as_form(data, form)))
    assert [number for number, _ in got] == [0, 1, 2]
    assert got[0][1] == data["snapshots"][0]["resources"][0]
    assert got[1][1]["subtype"] == "free"
    assert got[2][1] == {"amount": 1, "type": "memory"}


def test_resource_fields_memory(form):
    fields = all_resource_fields_of(as_form(memory_profile(), form))
    assert fields == ["type", "subtype", "address", "amount", "trace", "uid", "uid:source", "uid:function", "uid:line"]
    documented = ["type", "address", "amount", "uid:function", "uid:source", "uid:line", "uid", "trace", "subtype"]
    assert sorted(fields) == sorted(documented)


def test_resource_fields_time_and_complexity(form):
    assert sorted(all_resource_fields_of(as_form(time_profile(), form))) == sorted(["type", "amount", "uid"])
    assert sorted(all_resource_fields_of(as_form(complexity_profile(), form))) == sorted(
        ["type", "amount", "structure-unit-size", "subtype", "uid"]
    )


def test_numerical_fields_documented(form):
    assert all_numerical_resource_fields_of(as_form(memory_profile(), form)) == ["address", "amount", "uid:line"]
    assert all_numerical_resource_fields_of(as_form(time_profile(), form)) == ["amount"]
    assert all_numerical_resource_fields_of(as_form(complexity_profile(), form)) == ["amount", "structure-unit-size"]


def test_numerical_fields_exclude_bools_and_mixed_values(form):
    data = time_profile()
    data["snapshots"][0]["resources"][0]["flag"] = True
    data["snapshots"][0]["resources"][1]["order"] = 2
    data["snapshots"].append({"time": "1", "resources": [{"amount": "n/a", "order": 3.5}], "models": []})
    fields = all_numerical_resource_fields_of(as_form(data, form))
    assert fields == ["order"]


def test_unique_resource_values_documented(form):
    mprof = as_form(memory_profile(), form)
    tprof = as_form(time_profile(), form)
    cprof = as_form(complexity_profile(), form)
    assert unique_resource_values_of(mprof, "subtype") == ["malloc", "free"]
    assert unique_resource_values_of(tprof, "amount") == [0.616, 0.500, 0.125]
    assert unique_resource_values_of(cprof, "uid") == COMPLEXITY_UIDS
    assert unique_resource_values_of(cprof, "structure-unit-size") == [0, 1, 2]


def test_unique_resource_values_nested_paths(form):
    mprof = as_form(memory_profile(), form)
    assert unique_resource_values_of(mprof, "trace::function") == ["malloc", "main", "__libc_start_main", "_start", "free"]
    assert unique_resource_values_of(mprof, "trace::line") == [0, 22, 27]
    assert unique_resource_values_of(mprof, "uid:line") == [22, 27]
    assert unique_resource_values_of(mprof, "uid") == [f"{SOURCE}:main:22", f"{SOURCE}:main:27"]
    assert unique_resource_values_of(mprof, "missing") == []
    assert unique_resource_values_of(mprof, "missing::x") == []


def test_sparse_resources(form):
    data = {
        "header": {"type": "mixed"},
        "snapshots": [
            {"resources": [{"amount": 1, "uid": "f"}, {"amount": 2}, {"uid": {"function": "g", "line": 3}}]},
        ],
    }
    prof = as_form(data, form)
    assert all_resource_fields_of(prof) == ["amount", "uid", "uid:function", "uid:line"]
    assert all_numerical_resource_fields_of(prof) == ["amount", "uid:line"]
    assert unique_resource_values_of(prof, "uid") == ["f", "g:3"]
    assert unique_resource_values_of(prof, "uid:function") == ["g"]
    assert resource_table(prof, ["amount", "uid", "uid:line"]) == {
        "amount": [1, 2, None],
        "uid": ["f", None, "g:3"],
        "uid:line": [None, None, 3],
    }


# -- models ----------------------------------------------------------------------------------

def test_all_models_of_numbers_across_regions(form):
    got = list(all_models_of(as_form(complexity_profile(), form)))
    assert got == [(0, CONSTANT_MODEL), (1, EXPONENTIAL_MODEL), (2, LINEAR_MODEL)]


def test_all_models_of_is_a_generator():
    gen = all_models_of(complexity_profile())
    assert gen.__next__() == (0, CONSTANT_MODEL)
    assert next(gen) == (1, EXPONENTIAL_MODEL)


def test_unique_model_values(form):
    cprof = as_form(complexity_profile(), form)
    assert unique_model_values_of(cprof, "model") == ["constant", "exponential", "linear"]
    assert unique_model_values_of(cprof, "r_square") == [0.0, 0.007076437903106431, 0.0017560012128507133]
    assert unique_model_values_of(cprof, "coeffs::name") == ["b0", "b1"]
    assert unique_model_values_of(cprof, "uid") == ["SLLList_insert(SLLList*, int)"]
    assert unique_model_values_of(cprof, "nothing") == []


# -- tables for analysis --------------------------------------------------------------------------

def test_resource_table_memory(form):
    table = resource_table(as_form(memory_profile(), form), ["amount", "uid:line", "uid", "trace::function", "snapshots", "x"])
    assert table == {
        "amount": [4, 0],
        "uid:line": [22, 27],
        "uid": [f"{SOURCE}:main:22", f"{SOURCE}:main:27"],
        "trace::function": [["malloc", "main", "__libc_start_main", "_start"], ["free", "main", "__libc_start_main", "_start"]],
        "snapshots": [0, 1],
        "x": [None, None],
    }


def test_resource_table_does_not_alter_the_profile(form):
    prof = as_form(memory_profile(), form)
    table = resource_table(prof, ["amount"])
    table["amount"].append(99)
    assert resource_table(prof, ["amount"]) == {"amount": [4, 0]}


def test_numeric_column(form):
    data = time_profile()
    data["snapshots"][0]["resources"].append({"amount": "many", "type": "time"})
    data["snapshots"][0]["resources"].append({"amount": True, "type": "time"})
    data["snapshots"][0]["resources"].append({"type": "time"})
    column = numeric_column(as_form(data, form), "amount")
    assert str(column.dtype) == "float64"
    assert column[:3].tolist() == [0.616, 0.5, 0.125]
    assert all(math.isnan(v) for v in column[3:])
    assert numeric_column(as_form(complexity_profile(), form), "structure-unit-size").tolist() == [0.0] * 4 + [1.0] * 4 + [2.0] * 4


def test_invalid_input_is_reported():
    with pytest.raises(InvalidProfile):
        all_resource_fields_of({"snapshots": []})
    with pytest.raises(InvalidProfile):
        list(all_resources_of([1, 2]))
    prof = Profile.from_dict(time_profile())
    assert as_profile(prof) is prof


def test_query_modules_import_without_numpy():
    code = (
        "import sys, perun_core.profile.query, perun_core.profile.convert\n"
        "assert 'numpy' not in sys.modules and 'pandas' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# -- a big profile ----------------------------------------------------------------------------------

def test_resource_table_on_a_million_resources():
    n = 500_000
    uids = [{"function": f"f{i}", "source": "s.c", "line": i} for i in range(8)]

    def region(offset: int) -> Snapshot:
        sizes = list(range(offset, offset + n))
        amounts = [float(i % 1000) for i in range(n)]
        table = ResourceTable.from_columns(
            n,
            ["amount", "structure-unit-size", "uid", "type", "subtype"],
            [amounts, sizes, [uids[i % 8] for i in range(n)], ["mixed"] * n, ["time delta"] * n],
        )
        return Snapshot(table, [], {"time": str(offset)})

    prof = Profile(header={"type": "mixed"}, snapshots=[region(0), region(n)])
    table = resource_table(prof, ["amount", "structure-unit-size"])
    assert len(table["amount"]) == len(table["structure-unit-size"]) == 2 * n
    assert table["structure-unit-size"] == list(range(2 * n))
    assert table["amount"][999] == 999.0 and table["amount"][n + 1001] == 1.0
    lines = resource_table(prof, ["uid:line"])["uid:line"]
    assert lines[:9] == [0, 1, 2, 3, 4, 5, 6, 7, 0] and len(lines) == 2 * n
    assert all_numerical_resource_fields_of(prof) == ["amount", "structure-unit-size", "uid:line"]
    assert numeric_column(prof, "amount").sum() == 2 * (n // 1000) * sum(range(1000))
