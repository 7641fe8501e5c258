"""A seeded generator of labelled profile pairs for judging degradation checks.

Every case is a baseline and a target *mixed* profile in the documented
format (resources with ``uid``, ``structure-unit-size`` and ``amount``)
plus the truth per uid: ``degradation``, ``optimization``, ``none``,
``new`` (only in the target) or ``gone`` (only in the baseline).  Each uid
draws its own shape of cost (constant to exponential), input sizes
(uniform, log-uniform, a few discrete sizes, powers of two), sample sizes,
multiplicative noise, outliers and heavy tails, and one scenario:

* ``same``: nothing changes;
* ``factor``: the cost is multiplied by 1.1x-5x, or divided by it;
* ``order``: the complexity class changes (linear -> quadratic, quadratic
  -> n log n, ...); the two curves meet at a size among the smallest fifth of
  the inputs, so the class with the higher growth is slower on nearly all
  inputs, and ever more so;
* ``large``: only inputs above a size threshold get 1.5x-4x slower (or faster);
* ``mix``: the sizes of the inputs change (range or distribution), the cost
  function does not;
* ``mix+factor``: both at once;
* ``new`` / ``gone``: the function appears or disappears.

:func:`history` makes 20-version histories where some uids creep by +3 %
per version.  Nothing here is tuned to a detector: the parameters are drawn
from wide ranges and the benchmark uses seeds the tests never touch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SHAPES = ("constant", "logarithmic", "linear", "nlogn", "quadratic", "power15", "cubic", "exponential")
#: Complexity classes ordered by growth, for order changes.
ORDERED = ("logarithmic", "linear", "nlogn", "power15", "quadratic", "cubic")
SCENARIOS = ("same", "same", "same", "factor", "factor", "order", "large", "mix", "mix", "mix+factor", "new", "gone")


def cost(shape: str, x: np.ndarray, high: float = 1000.0) -> np.ndarray:
    """The noiseless cost of ``shape`` at sizes ``x`` (all sizes are >= 1); ``high`` scales the exponential."""
    if shape == "constant":
        return np.ones_like(x)
    if shape == "logarithmic":
        return 1.0 + np.log(x)
    if shape == "linear":
        return x
    if shape == "nlogn":
        return x * (1.0 + np.log(x))
    if shape == "quadratic":
        return x * x
    if shape == "power15":
        return x**1.5
    if shape == "cubic":
        return x**3
    if shape == "exponential":
        return np.exp(x / high * 4.0)
    raise ValueError(shape)


@dataclass
class UidSpec:
    """Everything drawn for one uid of one case."""

    uid: str
    scenario: str
    label: str
    shape: str
    target_shape: str
    factor: float
    threshold: float
    scale: float
    offset: float
    sizes: dict[str, Any]
    target_sizes: dict[str, Any]
    n_base: int
    n_target: int
    sigma: float
    heavy: float
    outliers: float


@dataclass
class Case:
    seed: int
    baseline: dict
    target: dict
    labels: dict[str, str]
    specs: dict[str, UidSpec] = field(default_factory=dict)


def _sizes_spec(rng: np.random.Generator) -> dict[str, Any]:
    kind = rng.choice(["uniform", "loguniform", "discrete", "pow2"])
    low = int(rng.integers(1, 40))
    high = int(low * 10 ** rng.uniform(1.0, 3.0))
    return {"kind": str(kind), "low": low, "high": high, "count": int(rng.integers(4, 20))}


def _draw_sizes(rng: np.random.Generator, spec: dict[str, Any], n: int) -> np.ndarray:
    low, high = spec["low"], spec["high"]
    kind = spec["kind"]
    if kind == "uniform":
        return rng.integers(low, high + 1, n).astype(float)
    if kind == "loguniform":
        return np.round(np.exp(rng.uniform(math.log(low), math.log(high), n)))
    if kind == "discrete":
        grid = np.unique(np.round(np.geomspace(low, high, spec["count"])))
        weights = spec.get("weights")
        p = None if weights is None else np.asarray(weights[: len(grid)], dtype=float)
        if p is not None:
            p = p / p.sum()
        return rng.choice(grid, n, p=p)
    exponents = np.arange(int(math.log2(max(low, 1))), int(math.log2(high)) + 1)
    return 2.0 ** rng.choice(exponents, n)


def _shifted_sizes(rng: np.random.Generator, spec: dict[str, Any]) -> dict[str, Any]:
    """Another mix of input sizes: a moved range, a narrower one, or other weights."""
    new = dict(spec)
    how = rng.choice(["up", "down", "narrow", "weights"])
    span = spec["high"] / spec["low"]
    if how == "up":
        new["low"] = int(spec["low"] * span ** rng.uniform(0.2, 0.5))
        new["high"] = int(spec["high"] * rng.uniform(1.0, 1.5))
    elif how == "down":
        new["high"] = max(new["low"] + 4, int(spec["high"] / span ** rng.uniform(0.2, 0.5)))
    elif how == "narrow":
        new["low"] = int(spec["low"] * span ** rng.uniform(0.1, 0.3))
        new["high"] = max(new["low"] + 4, int(spec["high"] / span ** rng.uniform(0.1, 0.3)))
    else:
        new["kind"] = "discrete"
        new["weights"] = list(rng.dirichlet(np.full(spec["count"], 0.5)))
    return new


def _noise(rng: np.random.Generator, spec: UidSpec, n: int) -> np.ndarray:
    """Multiplicative noise: log-normal, sometimes heavy-tailed, with upward outliers."""
    if spec.heavy > 0:
        logs = spec.sigma * rng.standard_t(spec.heavy, n) / math.sqrt(2.0)
    else:
        logs = rng.normal(0.0, spec.sigma, n)
    factor = np.exp(logs)
    if spec.outliers > 0:
        hit = rng.random(n) < spec.outliers
        factor[hit] *= rng.uniform(3.0, 30.0, int(hit.sum()))
    return factor


def _amounts(rng: np.random.Generator, spec: UidSpec, x: np.ndarray, target: bool) -> np.ndarray:
    shape = spec.target_shape if target else spec.shape
    high = float(spec.sizes["high"])
    base = spec.offset + spec.scale * cost(shape, x, high)
    if target and spec.scenario == "order":
        # the curves meet at the threshold size: beyond it the faster-growing class is slower
        at = np.array([spec.threshold])
        old = spec.offset + spec.scale * cost(spec.shape, at, high)
        new = spec.offset + spec.scale * cost(shape, at, high)
        base = spec.offset + (base - spec.offset) * ((old - spec.offset) / (new - spec.offset))[0]
    if target and spec.scenario in ("factor", "mix+factor"):
        base = base * spec.factor
    if target and spec.scenario == "large":
        base = np.where(x > spec.threshold, base * spec.factor, base)
    return base * _noise(rng, spec, len(x))


def _spec(rng: np.random.Generator, uid: str, scenario: str) -> UidSpec:
    shape = str(rng.choice(SHAPES))
    sizes = _sizes_spec(rng)
    target_sizes = sizes
    factor = 1.0
    threshold = 0.0
    target_shape = shape
    label = "none"
    if scenario in ("factor", "mix+factor"):
        factor = float(rng.uniform(1.1, 5.0))
        if rng.random() < 0.5:
            factor = 1.0 / factor
        label = "degradation" if factor > 1 else "optimization"
    if scenario in ("mix", "mix+factor"):
        target_sizes = _shifted_sizes(rng, sizes)
    if scenario == "order":
        i, j = rng.choice(len(ORDERED), 2, replace=False)
        shape, target_shape = ORDERED[i], ORDERED[j]
        label = "degradation" if j > i else "optimization"
        # the curves meet low in the distribution of sizes: the faster-growing class is slower on
        # at least four fifths of the inputs, and ever more so
        sample = _draw_sizes(np.random.default_rng(int(rng.integers(1 << 30))), sizes, 2000)
        threshold = float(np.quantile(sample, rng.uniform(0.0, 0.2)))
    if scenario == "large":
        factor = float(rng.uniform(1.5, 4.0))
        if rng.random() < 0.3:
            factor = 1.0 / factor
        label = "degradation" if factor > 1 else "optimization"
        q = rng.uniform(0.5, 0.85)
        threshold = float(sizes["low"] * (sizes["high"] / sizes["low"]) ** q) if sizes["kind"] != "uniform" else \
            float(sizes["low"] + (sizes["high"] - sizes["low"]) * q)
    if scenario == "new":
        label = "new"
    if scenario == "gone":
        label = "gone"
    n_base = int(round(10 ** rng.uniform(1.7, 3.0)))
    n_target = n_base if rng.random() < 0.6 else int(round(10 ** rng.uniform(1.7, 3.0)))
    heavy = float(rng.choice([0, 0, 0, 2.5, 4.0]))
    outliers = float(rng.choice([0.0, 0.0, 0.01, 0.03]))
    return UidSpec(uid, scenario, label, shape, target_shape, factor, threshold, float(10 ** rng.uniform(-3, 2)),
                   float(10 ** rng.uniform(-2, 1)) if rng.random() < 0.5 else 0.0, sizes, target_sizes, n_base, n_target,
                   float(rng.uniform(0.02, 0.15)), heavy, outliers)


def _resources(uid: str, x: np.ndarray, y: np.ndarray) -> list[dict]:
    return [{"amount": float(a), "uid": uid, "type": "mixed", "subtype": "time delta",
             "structure-unit-size": int(s)} for s, a in zip(x, y)]


def profile_doc(resources: list[dict], *, cmd: str = "./bench", workload: str = "synthetic") -> dict:
    """A documented-format mixed profile holding ``resources``."""
    return {
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": cmd, "args": "",
                   "workload": workload},
        "collector_info": {"name": "trace", "params": {}},
        "postprocessors": [],
        "snapshots": [{"time": "1.0", "resources": resources, "models": []}],
    }


def make_case(seed: int, *, uids: int | None = None) -> Case:
    """One labelled pair of profiles drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    count = uids if uids is not None else int(rng.integers(3, 13))
    base_res: list[dict] = []
    target_res: list[dict] = []
    labels: dict[str, str] = {}
    specs: dict[str, UidSpec] = {}
    for number in range(count):
        uid = f"fn_{seed}_{number}(int)"
        spec = _spec(rng, uid, str(rng.choice(SCENARIOS)))
        specs[uid] = spec
        labels[uid] = spec.label
        if spec.scenario != "new":
            xb = _draw_sizes(rng, spec.sizes, spec.n_base)
            base_res.extend(_resources(uid, xb, _amounts(rng, spec, xb, False)))
        if spec.scenario != "gone":
            xt = _draw_sizes(rng, spec.target_sizes, spec.n_target)
            target_res.extend(_resources(uid, xt, _amounts(rng, spec, xt, True)))
    return Case(seed, profile_doc(base_res), profile_doc(target_res), labels, specs)


def history(seed: int, versions: int = 20, creep: float = 0.03, uids: int = 4) -> tuple[list[dict], dict[str, str]]:
    """``versions`` profiles of one configuration; half the uids get ``creep`` slower per version.

    Returns the profiles (oldest first) and the label of every uid when the
    first and the last version are compared.
    """
    rng = np.random.default_rng(seed)
    specs = []
    labels = {}
    for number in range(uids):
        uid = f"creep_{seed}_{number}()"
        spec = _spec(rng, uid, "same")
        creeping = number % 2 == 0
        specs.append((spec, creeping))
        labels[uid] = "degradation" if creeping else "none"
    docs = []
    for version in range(versions):
        resources: list[dict] = []
        for spec, creeping in specs:
            x = _draw_sizes(rng, spec.sizes, spec.n_base)
            y = _amounts(rng, spec, x, False) * ((1.0 + creep) ** version if creeping else 1.0)
            resources.extend(_resources(spec.uid, x, y))
        docs.append(profile_doc(resources))
    return docs, labels
