#!/usr/bin/env python3
"""Accuracy of the degradation checks on held-out seeds of the labelled suite.

The suite (``tests/check/labelled.py``) draws pairs of mixed profiles with a
known truth per uid: constant factors from 1.1x to 5x both ways, complexity
class changes, slow-downs only on large inputs, new mixes of input sizes
without a change, new and vanished functions, under log-normal noise, heavy
tails and outliers, with 50 to 1000 measurements a side.  The method was
developed on seeds below 1 000 (the tests use 100-159); seeds 10 000 and
20 000 up were looked at once each and led to two fixes; this script reports
on ``--cases`` seeds from ``--start`` (40 000 by default), which nothing was
tuned on.

For every method (the default strategy, and the original tool's aat and
bmoe for reference) it prints, as one JSON object on stdout:

* ``f1`` / ``precision`` / ``recall`` of the degradation class (a uid
  labelled degradation is a hit when the method says Degradation,
  SevereDegradation or TotalDegradation; ``f1_with_maybe`` also counts
  MaybeDegradation);
* ``false_alarms``: the share of unchanged uids given anything but NoChange
  (Unknown included);
* ``wrong_direction``: degradations called optimizations and vice versa;
* ``not_in_baseline``: the share of new uids reported NotInBaseline;
* ``recall_by_scenario`` for the changed uids;
* ``creeping``: 20-version histories creeping +3 % per version, each a
  repository with a profile per commit, checked with ``perun-core check
  head`` on the newest commit as a user runs it (so the default method's
  drift detector, not a first-against-last comparison, must find the creep):
  the share of creeping uids flagged, the share flagged as a ``creeping``
  drift, and false alarms on the steady uids of the same histories
  (``null`` for a method that compares two versions only).

``--cli N`` also runs N of the cases through ``perun-core check profiles
BASELINE.perf TARGET.perf --format json`` on files and checks that the
command gives the same verdicts.

``classes`` scores the default strategy per class of change that it must
report as a certain Degradation (or Optimization, drawn the other way
round too), with generators written for them here, independent of the
labelled suite's (see :func:`class_case`):

* ``sparse-order``: a complexity change measured at only one or two points
  per input size, 5 to 12 points a side, 5x to 60x slower at the largest
  size;
* ``upper-third``: a slow-down of 1.5x to 3x confined to the upper third of
  the input sizes;
* ``constant``: a constant factor of 10 to 30 % with 10 to 80 points a side
  at a noise CV of 2 to 10 % (with input sizes or without);

each with an unchanged twin drawn from the same generator (the false
alarms); and the classes of ``check_classes.py`` (constant factors 1.3x, 2x
and 3x in four layouts, one point per size, the upper third of a sparse
sweep, no change at 1, 5 and 15 % noise, sampled call stacks).  Per class:
``precision``, ``recall`` (= ``hit``, the share reported as the right
certain change) and ``f1`` (a certain change on an unchanged twin or in the
wrong direction is a false positive), ``maybe`` the share that got only a
Maybe, ``false_alarms`` the share of unchanged twins given anything but
NoChange, ``wrong_direction`` counts changes called the other way.  Seeds
start at ``--start`` + 7 (never used while developing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "check"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import math  # noqa: E402

import numpy as np  # noqa: E402
from labelled import history, make_case, profile_doc  # noqa: E402

from perun_core.check import get_method  # noqa: E402
from perun_core.check.data import ProfileData  # noqa: E402
from perun_core.profile.model import Profile  # noqa: E402

METHODS = ("size_aware_rank_test", "average_amount_threshold", "best_model_order_equality")


def kind_of(result: str) -> str:
    if result == "NotInBaseline":
        return "new"
    if result == "NotInTarget":
        return "gone"
    if result in ("Degradation", "SevereDegradation", "TotalDegradation"):
        return "degradation"
    if result in ("Optimization", "SevereOptimization", "TotalOptimization"):
        return "optimization"
    if result == "MaybeDegradation":
        return "maybe-degradation"
    if result == "MaybeOptimization":
        return "maybe-optimization"
    if result == "Unknown":
        return "unknown"
    return "none"


def verdicts(method: str, baseline: dict, target: dict) -> dict[str, str]:
    base, new = ProfileData(Profile.from_dict(baseline)), ProfileData(Profile.from_dict(target))
    return {f.location: f.result.value for f in get_method(method).check(base, new, {})}


def score(rows: list[tuple[str, str, str]]) -> dict:
    """rows: (label, verdict kind, scenario)."""
    def f1(positive: set[str]) -> tuple[float, float, float]:
        tp = sum(1 for label, got, _ in rows if label == "degradation" and got in positive)
        fp = sum(1 for label, got, _ in rows if label != "degradation" and got in positive)
        fn = sum(1 for label, got, _ in rows if label == "degradation" and got not in positive)
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        return (2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0), precision, recall

    strict, precision, recall = f1({"degradation"})
    lenient, _, _ = f1({"degradation", "maybe-degradation"})
    unchanged = [got for label, got, _ in rows if label == "none"]
    new = [got for label, got, _ in rows if label == "new"]
    wrong = sum(1 for label, got, _ in rows
                if (label == "degradation" and "optimization" in got) or (label == "optimization" and "degradation" in got))
    by_scenario: dict[str, list[bool]] = defaultdict(list)
    for label, got, scenario in rows:
        if label in ("degradation", "optimization"):
            by_scenario[scenario].append(got == label)
    return {
        "f1": round(strict, 4),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1_with_maybe": round(lenient, 4),
        "false_alarms": round(sum(got != "none" for got in unchanged) / max(1, len(unchanged)), 4),
        "false_alarm_kinds": dict(Counter(got for got in unchanged if got != "none")),
        "wrong_direction": wrong,
        "not_in_baseline": round(sum(got == "new" for got in new) / max(1, len(new)), 4),
        "recall_by_scenario": {k: round(sum(v) / len(v), 4) for k, v in sorted(by_scenario.items())},
        "uids": len(rows),
        "unchanged_uids": len(unchanged),
    }


# -- classes of change the default strategy must catch ---------------------------------------------

CLASSES = ("sparse-order", "upper-third", "constant")
#: growth functions for sparse complexity changes, slower growth first
GROWTH = {
    "log": lambda n: np.log2(n + 1.0),
    "sqrt": np.sqrt,
    "linear": lambda n: n,
    "nlogn": lambda n: n * np.log2(n + 1.0),
    "n1.5": lambda n: n**1.5,
    "quadratic": lambda n: n * n,
    "cubic": lambda n: n**3,
}


def _noisy(rng: np.random.Generator, values: np.ndarray, cv: float, heavy: bool) -> np.ndarray:
    """Multiplicative noise of about ``cv``; ``heavy``: a Student-t tail and a rare preempted point."""
    if heavy:
        factor = np.exp(cv * rng.standard_t(4, len(values)) / math.sqrt(2.0))
        preempted = rng.random(len(values)) < 0.03
        factor[preempted] *= rng.uniform(1.5, 4.0, int(preempted.sum()))
    else:
        factor = np.exp(rng.normal(0.0, cv, len(values)))
    return values * factor


def _sized_doc(uid: str, x: np.ndarray, y: np.ndarray) -> dict:
    resources = [{"uid": uid, "type": "mixed", "subtype": "time delta", "amount": float(a),
                  "structure-unit-size": int(s)} for s, a in zip(x, y)]
    return profile_doc(resources)


def _plain_doc(uid: str, y: np.ndarray) -> dict:
    resources = [{"uid": uid, "type": "mixed", "subtype": "time delta", "amount": float(a)} for a in y]
    return profile_doc(resources)


def _sparse_sizes(rng: np.random.Generator, n: int, low: float, high: float) -> np.ndarray:
    """``n`` sizes over [low, high] with one or two measurements each."""
    distinct = max(3, int(math.ceil(n / rng.choice([1.0, 1.5, 2.0]))))
    if rng.random() < 0.5:
        grid = np.unique(np.round(np.geomspace(low, high, distinct)))
    else:
        grid = np.unique(np.round(np.linspace(low, high, distinct)))
    sizes = np.repeat(grid, 2)[:n] if len(grid) * 2 >= n else np.resize(grid, n)
    return np.sort(rng.permutation(sizes)[:n])


def class_case(kind: str, seed: int, changed: bool) -> tuple[dict, dict, str]:
    """(baseline doc, target doc, label) of one uid of class ``kind``; label degradation/optimization/none."""
    rng = np.random.default_rng([seed, CLASSES.index(kind), int(changed)])
    uid = f"{kind}-{seed}"
    flip = rng.random() < 0.3  # an optimization: the same change read backwards
    if kind == "sparse-order":
        names = list(GROWTH)
        while True:
            slow_i = int(rng.integers(0, len(names) - 1))
            fast_i = int(rng.integers(slow_i + 1, len(names)))
            low = float(rng.choice([1, 2, 10, 50, 100]))
            high = low * float(rng.choice([8, 20, 50, 100, 500, 1000]))
            nb, nt = int(rng.integers(5, 13)), int(rng.integers(5, 13))
            xb = _sparse_sizes(rng, nb, low, high)
            xt = xb.copy() if rng.random() < 0.6 else _sparse_sizes(rng, nt, low, high)
            slow, fast = GROWTH[names[slow_i]], GROWTH[names[fast_i]]
            # the curves meet low in the range: the faster-growing one is slower almost everywhere
            meet = low * (high / low) ** rng.uniform(0.0, 0.2)
            scale = slow(np.array([meet]))[0] / max(fast(np.array([meet]))[0], 1e-12)
            ratio = fast(np.array([high]))[0] * scale / slow(np.array([high]))[0]
            if 5.0 <= ratio <= 60.0:
                break
        cv = rng.uniform(0.02, 0.15)
        heavy = rng.random() < 0.4
        base_cost = lambda x: 3.0 * slow(x)  # noqa: E731
        new_cost = (lambda x: 3.0 * scale * fast(x)) if changed else base_cost
        yb, yt = _noisy(rng, base_cost(xb), cv, heavy), _noisy(rng, new_cost(xt), cv, heavy)
        docs = (_sized_doc(uid, xb, yb), _sized_doc(uid, xt, yt))
    elif kind == "upper-third":
        shape = rng.choice(["log", "linear", "nlogn", "quadratic"])
        cost = GROWTH[str(shape)]
        low = float(rng.choice([1, 10, 100]))
        high = low * float(rng.choice([10, 50, 200, 1000]))
        nb, nt = int(rng.integers(30, 301)), int(rng.integers(30, 301))
        if rng.random() < 0.5:
            xb, xt = rng.uniform(low, high, nb), rng.uniform(low, high, nt)
        else:
            grid = np.unique(np.round(np.linspace(low, high, int(rng.integers(6, 25)))))
            xb, xt = rng.choice(grid, nb), rng.choice(grid, nt)
        xb, xt = np.round(xb), np.round(xt)
        threshold = low + (high - low) * 2.0 / 3.0
        factor = rng.uniform(1.5, 3.0) if changed else 1.0
        cv = rng.uniform(0.02, 0.15)
        heavy = rng.random() < 0.4
        yb = _noisy(rng, 5.0 + cost(xb), cv, heavy)
        yt = _noisy(rng, (5.0 + cost(xt)) * np.where(xt > threshold, factor, 1.0), cv, heavy)
        docs = (_sized_doc(uid, xb, yb), _sized_doc(uid, xt, yt))
    else:
        nb, nt = int(rng.integers(10, 81)), int(rng.integers(10, 81))
        factor = rng.uniform(1.10, 1.30) if changed else 1.0
        cv = rng.uniform(0.02, 0.10)
        heavy = rng.random() < 0.3
        level = float(10 ** rng.uniform(-4, 3))
        if rng.random() < 0.5:
            docs = (_plain_doc(uid, _noisy(rng, np.full(nb, level), cv, heavy)),
                    _plain_doc(uid, _noisy(rng, np.full(nt, level * factor), cv, heavy)))
        else:
            cost = GROWTH[str(rng.choice(["log", "linear", "nlogn"]))]
            xb, xt = np.round(rng.uniform(10, 1000, nb)), np.round(rng.uniform(10, 1000, nt))
            docs = (_sized_doc(uid, xb, _noisy(rng, level * cost(xb), cv, heavy)),
                    _sized_doc(uid, xt, _noisy(rng, level * factor * cost(xt), cv, heavy)))
    base, new = docs
    if not changed:
        return base, new, "none"
    if flip:
        return new, base, "optimization"
    return base, new, "degradation"


def _tally(rows: list[tuple[str, str]]) -> dict:
    """Scores of (label, verdict kind) rows: a hit is the right certain change, a false alarm anything
    but NoChange on an unchanged pair."""
    changed = [(label, found) for label, found in rows if label != "none"]
    quiet = [found for label, found in rows if label == "none"]
    tp = sum(found == label for label, found in changed)
    fp = sum(found in ("degradation", "optimization") for found in quiet) + \
        sum(found in ("degradation", "optimization") and found != label for label, found in changed)
    fn = len(changed) - tp
    wrong = sum((label == "degradation" and "optimization" in found) or
                (label == "optimization" and "degradation" in found) for label, found in changed)
    return {"cases": len(changed), "quiet": len(quiet),
            "hit": round(tp / len(changed), 4) if changed else None,
            "maybe": round(sum(found == f"maybe-{label}" for label, found in changed) / len(changed), 4)
            if changed else None,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / len(changed), 4) if changed else None,
            "f1": round(2 * tp / (2 * tp + fp + fn), 4) if changed else None,
            "false_alarms": round(sum(found != "none" for found in quiet) / len(quiet), 4) if quiet else None,
            "wrong_direction": wrong}


def classes(method: str, seeds: range) -> dict:
    from check_classes import NEW_CLASSES, new_class_case

    table = {}
    for kind in CLASSES:
        rows = []
        for seed in seeds:
            for changed in (True, False):
                base, new, label = class_case(kind, seed, changed)
                rows.append((label, kind_of(next(iter(verdicts(method, base, new).values())))))
        table[kind] = _tally(rows)
    for kind in NEW_CLASSES:
        rows = []
        for seed in seeds:
            for changed in (True, False):
                base, new, label, location = new_class_case(kind, seed, changed)
                rows.append((label, kind_of(verdicts(method, base, new).get(location, "Unknown"))))
        table[kind] = _tally(rows)
    return table


def creeping(method: str, seeds: range) -> dict:
    """Each 20-version history as a repository checked by ``perun-core check head``, as a user runs it.

    One commit per version, its profile registered there; ``check head -M
    METHOD --format json`` on the newest commit compares it with its parent
    and, for a method that uses the history (the default), looks for a drift
    over the versions before.  A creeping uid counts as flagged when HEAD's
    verdict is a degradation (the drift detector's ``creeping`` finding, or
    a step); a steady uid given anything but NoChange is a false alarm.
    """
    from gitrepo import fast_linear_history

    from perun_core import api

    flagged = by_drift = steady_alarms = creeping_total = steady_total = 0
    with tempfile.TemporaryDirectory(prefix="perun-accuracy-creep-") as tmp:
        env = dict(os.environ, HOME=str(Path(tmp) / "home"), PERUN_CONFIG_DIR=str(Path(tmp) / "config"))
        for seed in seeds:
            docs, labels = history(seed)
            root = Path(tmp) / f"history-{seed}"
            shas = fast_linear_history(root, len(docs))
            api.init(root)
            for number, (sha, doc) in enumerate(zip(shas, docs)):
                path = Path(tmp) / f"v{number}.perf"
                path.write_text(json.dumps({"origin": sha, **doc}))
                api.add([str(path)], minor=sha, cwd=root)
            done = subprocess.run([sys.executable, "-m", "perun_core.cli.main", "check", "head", "-M", method,
                                   "--format", "json"], cwd=root, env=env, capture_output=True, text=True)
            if done.returncode not in (0, 3):
                raise SystemExit(f"check head failed on history {seed}: {done.stderr}")
            found = {record["uid"]: record for record in json.loads(done.stdout)}
            for uid, label in labels.items():
                got = kind_of(found[uid]["result"])
                if label == "degradation":
                    creeping_total += 1
                    flagged += got == "degradation"
                    by_drift += got == "degradation" and found[uid]["type"] == "creeping"
                else:
                    steady_total += 1
                    steady_alarms += got != "none"
    return {"histories": len(seeds), "through": "perun-core check head",
            "creeping_flagged": round(flagged / max(1, creeping_total), 4),
            "creeping_flagged_as_drift": round(by_drift / max(1, creeping_total), 4),
            "steady_false_alarms": round(steady_alarms / max(1, steady_total), 4)}


def through_cli(cases: list) -> dict:
    """Run cases through the real command on files; count verdicts that differ from the API's."""
    differing = 0
    seconds = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            base, new = Path(tmp) / "BASELINE.perf", Path(tmp) / "TARGET.perf"
            base.write_text(json.dumps(case.baseline))
            new.write_text(json.dumps(case.target))
            started = time.perf_counter()
            result = subprocess.run([sys.executable, "-m", "perun_core.cli.main", "check", "profiles",
                                     "BASELINE.perf", "TARGET.perf", "--format", "json"],
                                    cwd=tmp, capture_output=True, text=True)
            seconds.append(time.perf_counter() - started)
            if result.returncode not in (0, 3):
                raise SystemExit(f"check profiles failed on seed {case.seed}: {result.stderr}")
            got = {r["uid"]: r["result"] for r in json.loads(result.stdout)}
            expected = verdicts(METHODS[0], case.baseline, case.target)
            differing += sum(got[uid] != expected[uid] for uid in expected)
    return {"cases": len(cases), "differing_verdicts": differing,
            "median_seconds": round(sorted(seconds)[len(seconds) // 2], 3) if seconds else None}


def print_classes(table: dict) -> None:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    print(f"{'class':<20}{'cases':>6}{'prec':>7}{'recall':>7}{'f1':>7}{'maybe':>7}{'false al.':>10}{'wrong':>6}",
          file=sys.stderr)
    for kind, row in table.items():
        print(f"{kind:<20}{row['cases'] or row['quiet']:>6}{cell(row['precision']):>7}{cell(row['recall']):>7}"
              f"{cell(row['f1']):>7}{cell(row['maybe']):>7}{cell(row['false_alarms']):>10}"
              f"{row['wrong_direction']:>6}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", type=int, default=40_000, help="first held-out seed")
    parser.add_argument("--cases", type=int, default=400, help="profile pairs to draw")
    parser.add_argument("--histories", type=int, default=40, help="creeping histories to draw")
    parser.add_argument("--cli", type=int, default=10, help="cases to run through the real command too")
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--class-cases", type=int, default=300, help="cases per class of change (and as many "
                                                                         "unchanged twins)")
    parser.add_argument("--only-classes", action="store_true", help="score only the classes of change")
    options = parser.parse_args()

    if options.only_classes:
        first = options.start + 7
        table = classes(METHODS[0], range(first, first + options.class_cases))
        print_classes(table)
        json.dump({"seeds": [first, first + options.class_cases - 1], "classes": table}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    seeds = range(options.start, options.start + options.cases)
    cases = []
    for seed in seeds:
        cases.append(make_case(seed))
    out: dict = {"seeds": [seeds.start, seeds.stop - 1], "methods": {}}
    for method in options.methods:
        started = time.perf_counter()
        rows = []
        for case in cases:
            found = verdicts(method, case.baseline, case.target)
            rows += [(label, kind_of(found[uid]), case.specs[uid].scenario) for uid, label in case.labels.items()]
        result = score(rows)
        if getattr(get_method(method), "uses_history", False):
            result["creeping"] = creeping(method, range(options.start, options.start + options.histories))
        else:  # a method that compares two versions only finds no drift: no need to show it on every history
            result["creeping"] = None
        result["seconds"] = round(time.perf_counter() - started, 1)
        out["methods"][method] = result
        print(f"{method}: f1 {result['f1']}, false alarms {result['false_alarms']}, "
              f"wrong direction {result['wrong_direction']}", file=sys.stderr)
    first = options.start + 7
    out["classes"] = classes(METHODS[0], range(first, first + options.class_cases))
    print_classes(out["classes"])
    if options.cli:
        out["cli"] = through_cli(cases[: options.cli])
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
