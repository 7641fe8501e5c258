"""More classes of change for ``check_accuracy.py``: constant factors in every layout, sparse sweeps, samples.

Written apart from the default strategy's code and from the labelled suite,
to score it on data it was not shaped on.  Each generator draws one pair of
profiles and names the location to judge:

* ``constant-1.3x`` / ``constant-2x`` / ``constant-3x``: a constant factor
  (drawn +-3 % around it) in one of five layouts -- repeated runs without
  sizes, repeated runs at a few sizes, one point per size, two points per
  size, 6 to 40 sizes drawn by each profile on its own ("apart") -- at a
  noise of 1 to 5 %, sometimes heavy-tailed;
* ``sparse-one-point``: one measurement per size at 5 to 12 sizes, a factor
  of 1.3 to 3 over a curved cost (``a + b n^k``), noise 0 to 5 %;
* ``upper-third-sparse``: one or two measurements per size at 6 to 12 sizes,
  or 6 to 40 sizes apart, 1.5x to 3x only in the upper third of the sizes;
* ``no-change-1%`` / ``-5%`` / ``-15%``: nothing changed, any layout above,
  at that noise (only false alarms are counted);
* ``sampled``: two profiles of sampled call stacks (perf's layout: a
  ``samples`` resource per stack, a ``function`` resource per function) of
  4 to 12 functions, 500 to 20 000 samples, one function 1.5x to 3x slower,
  the recording sometimes longer or shorter; the unchanged twin judges a
  random function of a redrawn pair.

A third of the changes are read backwards (optimizations).
"""

from __future__ import annotations

import math

import numpy as np

NEW_CLASSES = ("constant-1.3x", "constant-2x", "constant-3x", "sparse-one-point", "upper-third-sparse",
               "no-change-1%", "no-change-5%", "no-change-15%", "sampled")
#: classes that only draw unchanged pairs
QUIET = ("no-change-1%", "no-change-5%", "no-change-15%")
LAYOUTS = ("runs", "sized-runs", "one-point", "two-points", "apart")
UID = "work"


def _doc(resources: list[dict], units: dict | None = None, kind: str = "mixed") -> dict:
    return {"header": {"type": kind, "units": units or {"mixed(time delta)": "us"}, "cmd": "./app", "args": "",
                       "workload": "w"},
            "collector_info": {"name": "bench", "params": {}}, "postprocessors": [],
            "snapshots": [{"time": "1.0", "resources": resources, "models": []}]}


def _rows(x: np.ndarray | None, y: np.ndarray) -> list[dict]:
    rows = []
    for i, amount in enumerate(y):
        row = {"uid": UID, "type": "mixed", "subtype": "time delta", "amount": float(amount)}
        if x is not None:
            row["structure-unit-size"] = int(x[i])
        rows.append(row)
    return rows


def _noise(rng: np.random.Generator, n: int, cv: float, heavy: bool) -> np.ndarray:
    if heavy:
        return np.exp(cv * rng.standard_t(5, n) / math.sqrt(5 / 3))
    return np.exp(rng.normal(0.0, cv, n))


def _cost(rng: np.random.Generator):
    a, b, k = 10 ** rng.uniform(-1, 3), 10 ** rng.uniform(-3, 1), float(rng.choice([0.5, 1, 1.5, 2, 3]))
    return lambda n: a + b * n**k


def _grid(rng: np.random.Generator, count: int) -> np.ndarray:
    low = float(rng.choice([1, 10, 100]))
    high = low * float(rng.choice([10, 50, 200, 1000]))
    spaced = np.geomspace(low, high, count) if rng.random() < 0.5 else np.linspace(low, high, count)
    grid = np.unique(np.round(spaced))
    while len(grid) < count:  # rounding merged sizes: fill in distinct ones
        grid = np.unique(np.append(grid, grid[-1] + len(grid)))
    return grid


def _layout_pair(rng: np.random.Generator, layout: str, cv: float, heavy: bool, factor_at) -> tuple[dict, dict]:
    """Baseline and target documents of one layout; ``factor_at(sizes)`` gives the target's factor."""
    cost = _cost(rng)
    if layout == "runs":
        nb, nt = int(rng.integers(5, 41)), int(rng.integers(5, 41))
        level = 10 ** rng.uniform(-3, 3)
        yb = level * _noise(rng, nb, cv, heavy)
        yt = level * factor_at(np.full(nt, 1.0)) * _noise(rng, nt, cv, heavy)
        return _doc(_rows(None, yb)), _doc(_rows(None, yt))
    if layout == "sized-runs":
        grid = _grid(rng, int(rng.integers(3, 9)))
        xb, xt = np.repeat(grid, int(rng.integers(3, 11))), np.repeat(grid, int(rng.integers(3, 11)))
    elif layout == "apart":
        # each profile drew its own sizes: hardly any size is measured by both
        grid = _grid(rng, 2)
        xb = np.round(rng.uniform(grid[0], grid[-1], int(rng.integers(6, 41))))
        xt = np.round(rng.uniform(grid[0], grid[-1], int(rng.integers(6, 41))))
    else:
        grid = _grid(rng, int(rng.integers(5, 13)))
        per = 1 if layout == "one-point" else 2
        xb, xt = np.repeat(grid, per), np.repeat(grid, per)
    yb = cost(xb) * _noise(rng, len(xb), cv, heavy)
    yt = cost(xt) * factor_at(xt) * _noise(rng, len(xt), cv, heavy)
    return _doc(_rows(xb, yb)), _doc(_rows(xt, yt))


def _sampled_doc(counts: dict[str, int]) -> dict:
    """perf's layout for a flat program: ``main`` calls every function, each sampled ``counts[f]`` times."""
    rows = []
    for name, count in counts.items():
        if count:
            rows.append({"type": "time", "subtype": "samples", "uid": name, "amount": int(count),
                         "trace": [{"function": name}, {"function": "main"}], "period": int(count) * 1_000_000})
    total = sum(counts.values())
    rows.append({"type": "time", "subtype": "function", "uid": "main", "amount": int(total), "exclusive": 0})
    for name, count in counts.items():
        if count:
            rows.append({"type": "time", "subtype": "function", "uid": name, "amount": int(count),
                         "exclusive": int(count)})
    doc = _doc(rows, {"time": "samples"}, "time")
    doc["collector_info"] = {"name": "perf", "params": {}}
    return doc


def _sampled_case(rng: np.random.Generator, changed: bool) -> tuple[dict, dict, str]:
    names = [f"fn_{i}" for i in range(int(rng.integers(4, 13)))]
    shares = rng.dirichlet(np.full(len(names), 1.5))
    total = 10 ** rng.uniform(math.log10(500), math.log10(20_000))
    chosen = int(rng.integers(len(names)))
    factor = rng.uniform(1.5, 3.0) if changed else 1.0
    longer = rng.uniform(0.5, 2.0) if rng.random() < 0.5 else 1.0
    rates_b = total * shares
    rates_t = total * shares * longer
    rates_t[chosen] *= factor
    base = {n: int(rng.poisson(r)) for n, r in zip(names, rates_b)}
    new = {n: int(rng.poisson(r)) for n, r in zip(names, rates_t)}
    base[names[chosen]] = max(base[names[chosen]], 1)
    new[names[chosen]] = max(new[names[chosen]], 1)
    return _sampled_doc(base), _sampled_doc(new), f"{names[chosen]} [function]"


def new_class_case(kind: str, seed: int, changed: bool) -> tuple[dict, dict, str, str]:
    """(baseline doc, target doc, label, location to judge) of one case of class ``kind``."""
    rng = np.random.default_rng([seed, 1000 + NEW_CLASSES.index(kind), int(changed)])
    flip = rng.random() < 1 / 3
    changed = changed and kind not in QUIET
    location = UID
    if kind.startswith("constant-"):
        nominal = {"constant-1.3x": 1.3, "constant-2x": 2.0, "constant-3x": 3.0}[kind]
        factor = nominal * rng.uniform(0.97, 1.03) if changed else 1.0
        cv, heavy = float(rng.choice([0.01, 0.02, 0.05])), rng.random() < 0.2
        base, new = _layout_pair(rng, str(rng.choice(LAYOUTS)), cv, heavy, lambda x: np.full(len(x), factor))
    elif kind == "sparse-one-point":
        factor = rng.uniform(1.3, 3.0) if changed else 1.0
        cv = float(rng.uniform(0.0, 0.05))
        base, new = _layout_pair(rng, "one-point", cv, False, lambda x: np.full(len(x), factor))
    elif kind == "upper-third-sparse":
        factor = rng.uniform(1.5, 3.0) if changed else 1.0
        cv = float(rng.uniform(0.01, 0.05))

        def upper(x: np.ndarray) -> np.ndarray:
            sizes = np.unique(x)
            first = sizes[len(sizes) - max(2, int(math.ceil(len(sizes) / 3)))]
            return np.where(x >= first, factor, 1.0)

        layout = str(rng.choice(["one-point", "two-points", "apart"]))
        base, new = _layout_pair(rng, layout, cv, rng.random() < 0.2, upper)
    elif kind in QUIET:
        cv = float(kind.split("-")[-1].rstrip("%")) / 100
        base, new = _layout_pair(rng, str(rng.choice(LAYOUTS)), cv, rng.random() < 0.3, lambda x: np.ones(len(x)))
    else:
        base, new, location = _sampled_case(rng, changed)
        if not changed:
            both = [{r["uid"] for r in doc["snapshots"][0]["resources"]} for doc in (base, new)]
            location = f"{rng.choice(sorted((both[0] & both[1]) - {'main'}))} [function]"
    if not changed:
        return base, new, "none", location
    if flip:
        return new, base, "optimization", location
    return base, new, "degradation", location
