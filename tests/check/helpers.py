"""Small profile builders for the check tests."""

from __future__ import annotations

import numpy as np

from perun_core.profile.model import Profile

MACHINE = {"hostname": "ci-1", "cpu": "Some CPU", "cores": 2, "memory": 8 << 30, "os": "Linux 6.1",
           "arch": "x86_64", "python": "CPython 3.11.2", "perun": "0.1.0"}


def mixed(points: dict[str, tuple], *, models: list | None = None, postprocessors: list | None = None,
          cmd: str = "./search", exclusive: dict | None = None) -> dict:
    """A documented mixed profile from ``{uid: (sizes, amounts)}``."""
    resources = []
    for uid, (xs, ys) in points.items():
        for i, (x, y) in enumerate(zip(xs, ys)):
            resource = {"amount": float(y), "uid": uid, "type": "mixed", "subtype": "time delta",
                        "structure-unit-size": int(x)}
            if exclusive is not None:
                resource["exclusive"] = float(exclusive[uid][i])
            resources.append(resource)
    return {
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": cmd, "args": "", "workload": "w"},
        "collector_info": {"name": "trace", "params": {}},
        "postprocessors": postprocessors or [],
        "snapshots": [{"time": "1.0", "resources": resources, "models": models or []}],
    }


def timed(amounts: list[float], *, cmd: str = "./app", origin: str | None = None) -> dict:
    """A time profile of repeated whole-program runs (real, user, sys and max_rss per run)."""
    resources = []
    for order, real in enumerate(amounts, 1):
        for subtype, value in (("real", real), ("user", real * 0.9), ("sys", real * 0.05)):
            resources.append({"amount": value, "type": "time", "subtype": subtype, "uid": cmd, "order": order})
        resources.append({"amount": 2_000_000 + order, "type": "memory", "subtype": "max_rss", "uid": cmd,
                          "order": order})
    doc = {"header": {"type": "time", "units": {"time": "s", "memory": "B"}, "cmd": cmd, "params": "",
                      "workload": "1000"},
           "collector_info": {"name": "time", "params": {"repeat": len(amounts)}}, "postprocessors": [],
           "global": {"timestamp": sum(amounts), "resources": resources, "models": []}}
    if origin is not None:
        doc["origin"] = origin
    return doc


def curve(kind: str, seed: int, scale: float = 1.0, n: int = 160, sigma: float = 0.05) -> tuple:
    """Sizes and noisy amounts of a cost ``kind`` (linear, quadratic, ...)."""
    rng = np.random.default_rng(seed)
    x = np.repeat(np.arange(100, 2100, 100), n // 20).astype(float)
    base = {"constant": np.full_like(x, 500.0), "linear": 2.0 * x, "quadratic": x * x / 400,
            "nlogn": x * np.log(x) / 3}[kind]
    return x, scale * base * np.exp(rng.normal(0, sigma, len(x)))


def time_profile(real, user, sys_=0.002, load=0.3, switches=2, machine=None, cmd="./app", rss=None):
    """A time profile of one command: ``real``/``user`` lists of seconds per run (``rss`` bytes per run, 2 MiB)."""
    rows = []
    peaks = rss or [2 << 20] * len(real)
    for order, (wall, cpu, peak) in enumerate(zip(real, user, peaks), 1):
        for kind, sub, amount in (("time", "real", wall), ("time", "user", cpu), ("time", "sys", sys_),
                                  ("memory", "max_rss", peak)):
            rows.append({"amount": amount, "type": kind, "subtype": sub, "uid": cmd, "order": order,
                         "involuntary_switches": switches})
    header = {"type": "time", "units": {"time": "s", "memory": "B"}, "cmd": cmd, "params": "", "workload": "",
              "machine": {**(machine or MACHINE), "load_before": load, "load_after": load}}
    return Profile.from_dict({"header": header, "collector_info": {"name": "time", "params": {}},
                              "global": {"timestamp": sum(real), "resources": rows}})


def spread(level, n=9, step=0.01):
    return [level * (1 + step * (i - n // 2)) for i in range(n)]
