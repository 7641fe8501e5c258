"""Profiles for the view tests, one per collector kind, built as documented-JSON dicts.

Every number is fixed (no randomness), so the golden outputs never move.
"""

from __future__ import annotations

import copy

INSERT = "SLList_insert(SLList*, int)"
SEARCH = "SLList_search(SLList*, int)"

#: Models as the regression and regressogram postprocessors store them (rounded).
COMPLEXITY_MODELS = [
    {"uid": INSERT, "model": "constant", "method": "full", "r_square": 0.0,
     "coeffs": [{"name": "b0", "value": 11.9714}, {"name": "b1", "value": 0.0}], "x_interval_start": 0, "x_interval_end": 40},
    {"uid": INSERT, "model": "linear", "method": "full", "r_square": 0.994887,
     "coeffs": [{"name": "b0", "value": 2.04935}, {"name": "b1", "value": 0.496104}], "x_interval_start": 0, "x_interval_end": 40},
    {"uid": INSERT, "model": "quadratic", "method": "full", "r_square": 0.921286,
     "coeffs": [{"name": "b0", "value": 5.67231}, {"name": "b1", "value": 0.0115228}], "x_interval_start": 0, "x_interval_end": 40},
    {"uid": SEARCH, "model": "constant", "method": "full", "r_square": 0.0,
     "coeffs": [{"name": "b0", "value": 11.9333}, {"name": "b1", "value": 0.0}], "x_interval_start": 0, "x_interval_end": 40},
    {"uid": SEARCH, "model": "linear", "method": "full", "r_square": 0.931173,
     "coeffs": [{"name": "b0", "value": -4.14459}, {"name": "b1", "value": 0.803896}], "x_interval_start": 0, "x_interval_end": 40},
    {"uid": SEARCH, "model": "quadratic", "method": "full", "r_square": 0.998336,
     "coeffs": [{"name": "b0", "value": 0.950368}, {"name": "b1", "value": 0.0200908}], "x_interval_start": 0, "x_interval_end": 40},
    {"uid": INSERT, "model": "regressogram", "method": "full", "statistic": "mean", "bin_rule": None,
     "bin_edges": [0.0, 8.0, 16.0, 24.0, 32.0, 40.0], "bin_values": [3.575, 7.5, 11.425, 15.35, 20.0],
     "bin_counts": [4, 4, 4, 4, 5], "r_square": 0.959544, "x_interval_start": 0, "x_interval_end": 40},
    {"uid": SEARCH, "model": "regressogram", "method": "full", "statistic": "mean", "bin_rule": None,
     "bin_edges": [0.0, 8.0, 16.0, 24.0, 32.0, 40.0], "bin_values": [1.205, 3.37, 8.47, 15.755, 27.08],
     "bin_counts": [4, 4, 4, 4, 5], "r_square": 0.939019, "x_interval_start": 0, "x_interval_end": 40},
]


def _noise(size: int) -> float:
    return ((size * 7) % 5 - 2) * 0.3


def complexity_profile(*, models: bool = True) -> dict:
    """A complexity (mixed) profile: two functions over structure sizes 0..40, with their models."""
    resources = []
    for size in range(0, 41, 2):
        resources.append({"amount": round(2 + 0.5 * size + _noise(size), 3), "type": "mixed", "subtype": "time delta",
                          "uid": INSERT, "structure-unit-size": size})
        resources.append({"amount": round(1 + 0.02 * size * size + _noise(size + 1), 3), "type": "mixed",
                          "subtype": "time delta", "uid": SEARCH, "structure-unit-size": size})
    return {
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "./sll", "params": "", "workload": ""},
        "collector_info": {"name": "complexity", "params": {}},
        "postprocessors": [{"name": "regression_analysis", "params": {"method": "full"}}],
        "snapshots": [{"time": "0.0", "resources": resources,
                       "models": copy.deepcopy(COMPLEXITY_MODELS) if models else []}],
    }


def time_profile() -> dict:
    """A time-collector profile: four repetitions of real, user and sys time, and the peak memory of each.

    Like the collector's, the ``max_rss`` rows are of type memory, in bytes
    next to seconds: views must not add them to the times.
    """
    resources = []
    for order in range(1, 5):
        for subtype, base in (("real", 0.5), ("user", 0.3), ("sys", 0.1)):
            resources.append({"amount": round(base + 0.01 * order * order, 4), "type": "time", "subtype": subtype,
                              "uid": "./app", "order": order})
        resources.append({"amount": 5_242_880 + 4096 * order, "type": "memory", "subtype": "max_rss",
                          "uid": "./app", "order": order})
    return {
        "header": {"type": "time", "units": {"time": "s", "memory": "B"}, "cmd": "./app", "params": "-n 10",
                   "workload": "in.txt"},
        "collector_info": {"name": "time", "params": {"repeat": 4, "warmup": 0}},
        "postprocessors": [],
        "snapshots": [{"time": "2.46", "resources": resources, "models": []}],
    }


def _frame(function: str, source: str = "unreachable", line: int = 0) -> dict:
    return {"function": function, "source": source, "line": line}


def _alloc(subtype: str, address: int, amount: int, trace: list[dict]) -> dict:
    # the uid is the innermost frame in the program (the caller of the allocator)
    return {"type": "memory", "subtype": subtype, "address": address, "amount": amount,
            "trace": trace, "uid": dict(trace[1]) if len(trace) > 1 else dict(trace[0])}


def _stack(*frames: dict) -> list[dict]:
    return [*frames, _frame("main", "app.c", 40), _frame("__libc_start_main"), _frame("_start")]


#: Traces, innermost call first, as the memory collector records them.
MALLOC_IN_LOAD = _stack(_frame("malloc"), _frame("load", "io.c", 12), _frame("read_all", "io.c", 30))
CALLOC_IN_PARSE = _stack(_frame("calloc"), _frame("parse", "parse.c", 7))
MALLOC_IN_NODE = _stack(_frame("malloc"), _frame("new_node", "list.c", 21), _frame("insert", "list.c", 44))
REALLOC_IN_GROW = _stack(_frame("realloc"), _frame("grow", "vec.c", 9))
FREE_IN_MAIN = [_frame("free"), _frame("main", "app.c", 52), _frame("__libc_start_main"), _frame("_start")]


def memory_profile() -> dict:
    """A memory-collector profile: three snapshots of allocations (with traces) and frees."""
    base = 0x5000
    snapshots = [
        [
            _alloc("malloc", base, 256, MALLOC_IN_LOAD),
            _alloc("calloc", base + 0x200, 64, CALLOC_IN_PARSE),
            _alloc("malloc", base + 0x300, 32, MALLOC_IN_NODE),
        ],
        [
            _alloc("malloc", base + 0x340, 32, MALLOC_IN_NODE),
            _alloc("realloc", base + 0x400, 512, REALLOC_IN_GROW),
            _alloc("free", base + 0x200, 0, FREE_IN_MAIN),
        ],
        [
            _alloc("malloc", base + 0x380, 32, MALLOC_IN_NODE),
            _alloc("calloc", base + 0x200, 48, CALLOC_IN_PARSE),
            _alloc("free", base, 0, FREE_IN_MAIN),
        ],
    ]
    # fresh copies: tests change traces, and the traces above are shared
    return copy.deepcopy({
        "header": {"type": "memory", "units": {"memory": "B"}, "cmd": "./app", "params": "", "workload": "in.txt"},
        "collector_info": {"name": "memory", "params": {"sampling": 0.025}},
        "postprocessors": [],
        "snapshots": [{"time": f"{0.025 * (i + 1):.6f}", "resources": res, "models": []}
                      for i, res in enumerate(snapshots)],
    })


def sampling_profile() -> dict:
    """A sampling profile (type time): samples per call stack, as a perf-like collector records them."""
    stacks = [
        (40, [_frame("compute", "calc.c", 10), _frame("run", "app.c", 5), _frame("main", "app.c", 1)]),
        (25, [_frame("sort", "calc.c", 30), _frame("compute", "calc.c", 11), _frame("run", "app.c", 5),
              _frame("main", "app.c", 1)]),
        (20, [_frame("write", "io.c", 3), _frame("flush", "io.c", 8), _frame("main", "app.c", 2)]),
        (15, [_frame("main", "app.c", 3)]),
    ]
    resources = [{"type": "time", "subtype": "samples", "amount": count, "trace": trace, "uid": trace[0]["function"]}
                 for count, trace in stacks]
    return {
        "header": {"type": "time", "units": {"time": "samples"}, "cmd": "./app", "params": "", "workload": ""},
        "collector_info": {"name": "sampling", "params": {}},
        "postprocessors": [],
        "snapshots": [{"time": "1.0", "resources": resources, "models": []}],
    }


#: A traced program: ``(function, start, end, calls)`` in nanoseconds, ``calls`` made from inside it.
TRACED_CALLS = ("main", 0, 10_000, (
    ("init", 100, 1_100, ()),
    ("build", 1_200, 6_200, (
        ("insert", 1_300, 2_300, ()),
        ("insert", 2_400, 3_900, ()),
        ("insert", 4_000, 6_000, ()),
    )),
    ("search", 6_300, 9_300, (
        ("compare", 6_400, 6_900, ()),
        ("compare", 7_000, 7_800, ()),
    )),
))


def trace_profile() -> dict:
    """A trace-collector profile: one resource per call of :data:`TRACED_CALLS`, as the collector writes them.

    ``amount`` is the inclusive duration, ``exclusive`` the duration minus
    that of the calls made inside; the totals of ``exclusive`` add up to
    main's 10,000 ns, those of ``amount`` to 24,800 (nested calls counted
    again in every caller).
    """
    calls: list[tuple[int, dict]] = []

    def record(call: tuple, callers: list[dict]) -> None:
        function, start, end, inner = call
        trace = [{"function": function}, *callers]
        # the keys in the collector's order; roots have no caller
        row = {"type": "mixed", "subtype": "time delta", "uid": function, "amount": end - start,
               "exclusive": end - start - sum(e - s for _, s, e, _ in inner),
               **({"caller": callers[0]["function"]} if callers else {}),
               "depth": len(callers), "thread": 1, "call-order": 0, "trace": trace, "structure-unit-size": 30}
        calls.append((start, row))
        for nested in inner:
            record(nested, trace)

    record(TRACED_CALLS, [])
    resources = [row for _, row in sorted(calls, key=lambda call: call[0])]
    for order, row in enumerate(resources, start=1):
        row["call-order"] = order
    return copy.deepcopy({
        "header": {"type": "mixed", "units": {"mixed(time delta)": "ns", "exclusive": "ns"}, "cmd": "./sll",
                   "params": "", "workload": "30", "engine": "instrument"},
        "collector_info": {"name": "trace", "params": {"engine": "instrument", "rules": []}},
        "postprocessors": [],
        "snapshots": [],
        "global": {"time": "0.000010s", "resources": resources, "models": []},
    })


def _perf_frame(function: str, obj: str = "/src/busy") -> dict:
    return {"function": function, "object": obj}


#: Sampled stacks, innermost first, with their sample counts and period sums (cpu-clock: nanoseconds).
PERF_STACKS = [
    (120, ["hot", "work", "main"]),
    (60, ["memcpy", "copy", "work", "main"]),
    (15, ["work", "main"]),
    (5, ["write", "main"]),
]
#: ``perf stat`` counts: (event, amount, unit).
PERF_COUNTERS = [("task-clock", 201.5, "msec"), ("context-switches", 3, ""), ("page-faults", 148, ""),
                 ("instructions", 702_311_040, ""), ("cycles", 455_129_870, "")]


def perf_profile() -> dict:
    """A perf-collector profile of both modes: sampled stacks, per-function samples and counters.

    Shaped as ``perun_core.collect.perf`` writes it (type mixed): ``samples``
    rows carry a trace, ``function`` rows the inclusive ``amount`` and the
    ``exclusive`` samples of each function (no trace), ``counter`` rows the
    ``perf stat`` events (another unit: events, not samples).
    """
    objects = {"memcpy": "/usr/lib/libc.so.6", "write": "/usr/lib/libc.so.6"}
    rows: list[dict] = []
    inclusive: dict[str, int] = {}
    exclusive: dict[str, int] = {}
    for count, stack in PERF_STACKS:
        trace = [_perf_frame(f, objects.get(f, "/src/busy")) for f in stack]
        rows.append({"type": "time", "subtype": "samples", "uid": stack[0], "amount": count,
                     "period": count * 1_010_101, "trace": trace})
        for function in set(stack):
            inclusive[function] = inclusive.get(function, 0) + count
        exclusive[stack[0]] = exclusive.get(stack[0], 0) + count
    for function, count in sorted(inclusive.items(), key=lambda item: (-item[1], item[0])):
        rows.append({"type": "time", "subtype": "function", "uid": function,
                     "object": objects.get(function, "/src/busy"), "amount": count,
                     "exclusive": exclusive.get(function, 0)})
    for event, amount, unit in PERF_COUNTERS:
        rows.append({"type": "counter", "subtype": event, "amount": amount, **({"unit": unit} if unit else {}),
                     "uid": "./busy"})
    return copy.deepcopy({
        "header": {"cmd": "./busy", "params": "", "workload": "", "event": "cpu-clock",
                   "unsupported_events": ["cache-misses", "branch-misses"], "type": "mixed",
                   "units": {"time": "samples", "counter": "events"}},
        "collector_info": {"name": "perf", "params": {"mode": "both", "frequency": 999}},
        "postprocessors": [],
        "snapshots": [],
        "global": {"time": "0.2", "resources": rows, "models": []},
    })


def empty_profile(kind: str = "time") -> dict:
    return {"header": {"type": kind, "units": {}, "cmd": "./app"}, "collector_info": {"name": kind},
            "postprocessors": [], "snapshots": [{"time": "0", "resources": [], "models": []}]}


PROFILES = {
    "time": time_profile,
    "complexity": complexity_profile,
    "memory": memory_profile,
    "sampling": sampling_profile,
    "trace": trace_profile,
    "perf": perf_profile,
}
