"""Generated profiles of the synthetic demo: time, traced (with models) and memory, from a seed."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

__all__ = ["file_name", "mixed_profile", "profiles_of", "time_profile"]

_BENCH = "./sll-bench"
_FUNCTIONS = (
    ("sll_insert(SLList*, int)", 0.8, 0.0),
    ("sll_search(SLList*, int)", 3.0, 0.02),
    ("sll_destroy(SLList*)", 1.5, 0.01),
)


def time_profile(rnd: random.Random, factor: float, workload: str) -> dict[str, Any]:
    base = 0.42 if workload == "workloads/small.txt" else 1.9
    resources = []
    for run in range(5):
        real = round(base * factor * rnd.gauss(1.0, 0.02), 5)
        user = round(real * 0.83 * rnd.gauss(1.0, 0.01), 5)
        sys_ = round(real * 0.12 * rnd.gauss(1.0, 0.05), 5)
        for subtype, amount in (("real", real), ("user", user), ("sys", sys_)):
            resources.append({"amount": amount, "type": "time", "subtype": subtype, "uid": _BENCH, "order": run + 1})
    return {
        "header": {"type": "time", "units": {"time": "s"}, "cmd": _BENCH, "args": "--iterations 1000",
                   "workload": workload},
        "collector_info": {"name": "time", "params": {"repeat": 5, "warmup": 1}},
        "postprocessors": [],
        "snapshots": [{"time": f"{base * factor * 5:.6f}", "resources": resources, "models": []}],
    }


def mixed_profile(rnd: random.Random, factor: float, with_models: bool) -> dict[str, Any]:
    resources = []
    points: dict[str, list[tuple[int, float]]] = {}
    for uid, constant, slope in _FUNCTIONS:
        scale = factor if uid.startswith("sll_search") else 1.0
        for size in range(0, 160, 8):
            amount = round((constant + slope * scale * size) * rnd.gauss(1.0, 0.04), 4)
            resources.append({"amount": amount, "type": "mixed", "subtype": "time delta", "uid": uid,
                              "structure-unit-size": size})
            points.setdefault(uid, []).append((size, amount))
    postprocessors: list[dict[str, Any]] = []
    models: list[dict[str, Any]] = []
    if with_models:
        postprocessors.append({"name": "regression_analysis",
                               "params": {"method": "full", "models": ["constant", "linear"]}})
        for uid, pts in points.items():
            models.extend(_fit(uid, pts))
    return {
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": _BENCH,
                   "args": "--iterations 1000", "workload": "workloads/small.txt"},
        "collector_info": {"name": "trace", "params": {"method": "custom", "sampling": [{"func": "sll_search",
                                                                                          "sample": 1}]}},
        "postprocessors": postprocessors,
        "snapshots": [{"time": "0.500000", "resources": resources, "models": models}],
    }


def _fit(uid: str, points: list[tuple[int, float]]) -> list[dict[str, Any]]:
    """Constant and linear least-squares models of ``points``, as regression analysis records them."""
    n = len(points)
    xs = [float(x) for x, _ in points]
    ys = [y for _, y in points]
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    syy = sum((y - mean_y) ** 2 for y in ys)
    b1 = sxy / sxx if sxx else 0.0
    b0 = mean_y - b1 * mean_x
    r_square = (sxy * sxy) / (sxx * syy) if sxx and syy else 0.0
    common = {"uid": uid, "method": "full", "x_start": min(xs), "x_end": max(xs)}
    return [
        {**common, "model": "constant", "r_square": 0.0, "coeffs": [{"name": "b0", "value": round(mean_y, 6)}]},
        {**common, "model": "linear", "r_square": round(r_square, 6),
         "coeffs": [{"name": "b0", "value": round(b0, 6)}, {"name": "b1", "value": round(b1, 6)}]},
    ]


def _memory_profile(rnd: random.Random, nodes: int) -> dict[str, Any]:
    insert = {"function": "sll_insert", "source": "src/sll.c", "line": 10}
    main = {"function": "main", "source": "src/bench.c", "line": 10}
    snapshots = []
    address = 0x55D4A000
    live: list[int] = []
    for number in range(3):
        resources = []
        for _ in range(nodes):
            resources.append({"type": "memory", "subtype": "malloc", "address": address, "amount": 16,
                              "uid": dict(insert), "trace": [dict(insert), dict(main)]})
            live.append(address)
            address += 32
        if number == 2:
            destroy = {"function": "sll_destroy", "source": "src/sll.c", "line": 28}
            for freed in live[: nodes // 2 + rnd.randrange(3)]:
                resources.append({"type": "memory", "subtype": "free", "address": freed, "amount": 0,
                                  "uid": dict(destroy), "trace": [dict(destroy), dict(main)]})
        snapshots.append({"time": f"{0.025 * (number + 1):.6f}", "resources": resources, "models": []})
    return {
        "header": {"type": "memory", "units": {"memory": "B"}, "cmd": _BENCH, "args": "--iterations 1000",
                   "workload": "workloads/small.txt"},
        "collector_info": {"name": "memory", "params": {"sampling": 0.025, "all": False}},
        "postprocessors": [],
        "snapshots": snapshots,
    }


def profiles_of(commit: Any, index: int, seed: int) -> Iterator[tuple[str, dict[str, Any]]]:
    rnd = random.Random(seed * 100_003 + index)
    for kind in commit.profiles:
        if kind == "time":
            yield "time-small", time_profile(rnd, commit.factor, "workloads/small.txt")
        elif kind.startswith("mixed"):
            yield "trace-small", mixed_profile(rnd, commit.factor, kind == "mixed-models")
        else:
            yield "memory-small", _memory_profile(rnd, 4 + index % 3)


def file_name(label: str, when: int) -> str:
    import time

    stamp = time.strftime("%Y-%m-%d-%H-%M-%S", time.gmtime(when))
    return f"sll-bench-{label}-{stamp}.perf"
