"""Golden outputs of every view on profiles of every collector kind it supports.

Plain text (no colour) at fixed sizes, compared exactly with the files in
``golden/``.  After an intended change, regenerate them with
``PERUN_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/views/test_golden.py``
and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_query import as_form

from perun_core.views import get_view

from .profiles import INSERT, PROFILES, SEARCH

GOLDEN = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("PERUN_UPDATE_GOLDEN"))

# name: (profile, view, parameters, format, width, height)
CASES = {
    "tableof_time": ("time", "tableof", {}, None, 80, 24),
    "tableof_memory_sorted": ("memory", "tableof",
                              {"keys": ("snapshots", "subtype", "address", "amount", "uid"), "sort_by": "amount"},
                              None, 80, 24),
    "tableof_memory_narrow": ("memory", "tableof", {"filters": ("subtype=malloc",)}, None, 60, 24),
    "tableof_complexity_models": ("complexity", "tableof", {"what": "models"}, None, 110, 24),
    "tableof_complexity_csv": ("complexity", "tableof", {"limit": 5}, "csv", 80, 24),
    "tableof_memory_markdown": ("memory", "tableof", {"keys": ("snapshots", "subtype", "amount", "uid:function")},
                                "markdown", 80, 24),
    "tableof_time_json": ("time", "tableof", {"limit": 2}, "json", 80, 24),
    "tableof_trace_calls": ("trace", "tableof", {"keys": ("call-order", "uid", "caller", "depth", "amount",
                                                         "exclusive")}, None, 80, 24),
    "tableof_perf_functions": ("perf", "tableof", {"keys": ("subtype", "uid", "object", "amount", "exclusive"),
                                                   "filters": ("subtype=function",)}, None, 80, 24),
    "bars_time_default": ("time", "bars", {}, None, 70, 14),
    "bars_time_mean_per_subtype": ("time", "bars", {"func": "mean", "per": "subtype"}, None, 70, 18),
    "bars_trace_exclusive_per_uid": ("trace", "bars", {"of": "exclusive", "per": "uid"}, None, 70, 16),
    "bars_perf_counters": ("perf", "bars", {"per": "subtype", "type": "counter"}, None, 76, 16),
    "bars_memory_stacked_by_subtype": ("memory", "bars", {"by": "subtype"}, None, 70, 18),
    "bars_memory_grouped_by_subtype": ("memory", "bars", {"by": "subtype", "stacked": False}, None, 70, 18),
    "bars_complexity_max_per_uid": ("complexity", "bars",
                                    {"func": "max", "per": "uid", "x_label": "function", "title": "Slowest call"},
                                    None, 70, 16),
    "flow_time_through_order_by_subtype": ("time", "flow", {"through": "order", "by": "subtype"}, None, 70, 18),
    "flow_complexity_mean_by_uid": ("complexity", "flow",
                                    {"func": "mean", "through": "structure-unit-size", "by": "uid"}, None, 70, 18),
    "flow_memory_accumulated_stacked": ("memory", "flow", {"by": "subtype", "accumulate": True, "stacked": True},
                                        None, 70, 18),
    "scatter_complexity": ("complexity", "scatter", {}, None, 76, 22),
    "scatter_complexity_search_filtered": ("complexity", "scatter",
                                           {"uid": SEARCH, "models": ("quadratic", "regressogram")}, None, 76, 22),
    "scatter_complexity_insert_no_models": ("complexity", "scatter", {"uid": INSERT, "models": ("power",)},
                                            None, 60, 16),
    "scatter_time_per_order": ("time", "scatter", {"per": "order", "y_label": "seconds"}, None, 60, 16),
    "scatter_trace_insert_per_call_order": ("trace", "scatter", {"per": "call-order", "uid": "insert"}, None, 60, 14),
    "flamegraph_memory_icicle": ("memory", "flamegraph", {}, None, 80, 12),
    "flamegraph_memory_shallow": ("memory", "flamegraph", {}, None, 60, 5),
    "flamegraph_memory_folded": ("memory", "flamegraph", {}, "folded", 80, 24),
    "flamegraph_sampling_icicle": ("sampling", "flamegraph", {"title": "CPU samples"}, None, 72, 10),
    "flamegraph_trace_icicle": ("trace", "flamegraph", {}, None, 72, 7),
    "flamegraph_trace_folded": ("trace", "flamegraph", {}, "folded", 80, 24),
    "flamegraph_perf_icicle": ("perf", "flamegraph", {}, None, 72, 8),
    "heapmap_memory": ("memory", "heapmap", {}, None, 72, 10),
    "heapmap_memory_snapshot": ("memory", "heapmap", {"snapshot": 1}, None, 50, 12),
    "heapmap_memory_heat": ("memory", "heapmap", {"mode": "heat"}, None, 72, 10),
}


def render(case: str, form: str = "dict") -> str:
    kind, name, params, fmt, width, height = CASES[case]
    view = get_view(name)
    result = view.run(as_form(PROFILES[kind](), form), params)
    return view.render(result, fmt=fmt, width=width, height=height, theme=None)


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case):
    text = render(case)
    path = GOLDEN / f"{case}.txt"
    if UPDATE:
        path.write_text(text + "\n", encoding="utf-8")
    assert path.exists(), f"no golden output {path.name}; run with PERUN_UPDATE_GOLDEN=1 to create it"
    assert text + "\n" == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", sorted(CASES))
def test_plain_text_fits_the_size(case):
    kind, name, params, fmt, width, height = CASES[case]
    text = render(case)
    assert "\x1b" not in text
    if fmt is None and name != "tableof":
        # plots and maps stay within the asked width; a plot takes exactly the asked height
        assert max(len(line) for line in text.splitlines()) <= width
    if name in ("bars", "flow"):
        assert len(text.splitlines()) == height


@pytest.mark.parametrize("case", ["tableof_memory_sorted", "bars_memory_stacked_by_subtype", "scatter_complexity",
                                  "flamegraph_memory_icicle", "heapmap_memory", "flow_complexity_mean_by_uid",
                                  "bars_time_default", "flamegraph_trace_icicle", "bars_perf_counters"])
@pytest.mark.parametrize("form", ["profile", "columnar"])
def test_same_output_from_every_profile_form(case, form):
    # a profile fresh from JSON holds rows, one from the object store holds columns
    assert render(case, form) == render(case)
