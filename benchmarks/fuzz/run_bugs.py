"""Fuzz every bug of :mod:`bugs` on its vulnerable and its fixed version; report what was found.

Usage: ``python benchmarks/fuzz/run_bugs.py [--budget 300] [--lib /tmp/fuzzbugs/lib] [--only NAME ...] [--seed 1]``.
The libraries are installed beforehand, each version in its own directory under ``--lib``
(``pip install --target LIB/urllib3-1.26.4 urllib3==1.26.4``, see ``bugs.library_dir``).  For every
input reported on the vulnerable version the script times it (CPU, best of three) on both versions:
a real finding is at least 5x slower on the vulnerable one.  The input timed is the one a report points a
user at: the largest input its growth analysis measured (``largest``), else the one compared at equal size.
A bug is found when any reported finding passes (``rank`` says which, findings being ranked worst first).  Results go to ``--out`` (results.json).

A finding on the fixed version is not hidden, but labelled (``fixed_findings``): its growth order, whether that is
at least the bug's class (``at_class``; a quadratic on a release that fixed an exponential is another problem), and
its input timed on both versions (``fixed_over_vulnerable``: about 1 when the cost was there before the fix too, a
cost the fix left alone; well above 1 when the fixed release brought it).  ``fixed_at_class`` counts those at the
bug's class or steeper.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bugs import BUGS, library_dir  # noqa: E402

PYTHON = os.path.realpath(sys.executable)


def cpu_of(driver: Path, lib: Path, data: Path, timeout: float = 120.0) -> float:
    """The least CPU seconds of three runs of the driver on ``data``."""
    best = float("inf")
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            subprocess.run([PYTHON, str(driver), str(lib), str(data)], capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return timeout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return best


#: growth classes by steepness (a bug's ``expected`` and the findings' orders); "polynomial" is any order above linear
CLASS_RANK = {"linear": 1.0, "superlinear": 1.5, "polynomial": 1.5, "quadratic": 2.0, "cubic": 3.0, "exponential": 1e6}


def order_rank(order: str, exponent: float | None) -> float:
    """How steep a reported growth is, comparable with :data:`CLASS_RANK` (``polynomial (n^4.2)``: 4.2; a superlinear
    growth measured over too narrow a range to name, the slope it is at least, passed as ``exponent``)."""
    if order == "superlinear" and exponent is not None:
        return max(CLASS_RANK["superlinear"], float(exponent))
    if order in CLASS_RANK:
        return CLASS_RANK[order]
    return float(exponent) if exponent is not None else 0.0


def fuzz(bug: dict, version: str, lib_root: Path, out: Path, budget: float, seed: int = 1) -> dict:
    lib = lib_root / library_dir(bug[version])
    target = out / f"{bug['name']}-{version}"
    command = f"{PYTHON} {HERE / bug['driver']} {lib}"
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "fuzz", "-b", command, "-w", str(HERE / bug["seeds"]),
                           "-o", str(target), "-t", str(budget), "-q", "-np", "--seed", str(seed), "--profiles", "0"],
                          capture_output=True, text=True, cwd=out)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["?"], "wall": time.monotonic() - started}
    results = json.loads((target / "results.json").read_text())
    return {"reported": results["reported"], "executions": results["executions"], "elapsed": results["elapsed"],
            "kept": len(results["findings"]), "dir": str(target), "metric": results["metric"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--lib", type=Path, default=Path("/tmp/fuzzbugs/lib"))
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--out", type=Path, default=Path("/tmp/fuzzbugs/runs"))
    parser.add_argument("--seed", type=int, default=1, help="the fuzzer's random seed (the same for both versions)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    summary = []
    for bug in BUGS:
        if args.only and bug["name"] not in args.only:
            continue
        row = {"bug": bug["name"], "published": bug["published"], "expected": bug["expected"],
               "load": os.getloadavg()[0]}
        for version in ("vulnerable", "fixed"):
            row[version] = fuzz(bug, version, args.lib, args.out, args.budget, args.seed)
        reported = row["vulnerable"].get("reported", [])
        for finding in reported:
            # the input a report points at: the largest one the analysis measured, else the compared one
            shown = (finding.get("largest") or {}).get("file") or finding["file"]
            data = Path(row["vulnerable"]["dir"]) / shown
            slow = cpu_of(HERE / bug["driver"], args.lib / library_dir(bug["vulnerable"]), data)
            fast = cpu_of(HERE / bug["driver"], args.lib / library_dir(bug["fixed"]), data)
            finding["timed_file"], finding["timed_size"] = shown, data.stat().st_size
            finding["vulnerable_over_fixed"] = round(slow / max(fast, 1e-6), 2)
        # found when any reported finding is the bug (5x slower on the vulnerable version); its rank is told
        hits = [i for i, f in enumerate(reported) if f["vulnerable_over_fixed"] >= 5]
        best = reported[hits[0]] if hits else (reported[0] if reported else None)
        # every finding of the fixed version, labelled (see the module's docstring)
        fixed_findings = []
        for finding in row["fixed"].get("reported", []):
            shown = (finding.get("largest") or {}).get("file") or finding["file"]
            data = Path(row["fixed"]["dir"]) / shown
            slow = cpu_of(HERE / bug["driver"], args.lib / library_dir(bug["fixed"]), data)
            fast = cpu_of(HERE / bug["driver"], args.lib / library_dir(bug["vulnerable"]), data)
            growth = finding["growth"]
            fixed_findings.append({
                "order": growth["order"], "exponent": growth["exponent"], "part": growth["part"],
                "ratio_at_equal_size": finding["ratio_at_equal_size"], "timed_size": data.stat().st_size,
                "at_class": order_rank(growth["order"], growth["exponent"] if growth["exponent"] is not None
                                       else growth.get("exponent_at_least")) >= CLASS_RANK[bug["expected"]],
                "fixed_over_vulnerable": round(slow / max(fast, 1e-6), 2)})
            finding["fixed_over_vulnerable"] = fixed_findings[-1]["fixed_over_vulnerable"]
        line = {"bug": bug["name"], "found": bool(hits), "rank": hits[0] + 1 if hits else None,
                "reported": len(reported), "ratio_at_equal_size": best and best["ratio_at_equal_size"],
                "order": best and best["growth"]["order"], "exponent": best and best["growth"]["exponent"],
                "exponent_at_least": best and best["growth"].get("exponent_at_least"),
                "part": best and best["growth"]["part"], "timed_size": best and best["timed_size"],
                "vulnerable_over_fixed": best and best.get("vulnerable_over_fixed"),
                "found_at": best and best["found_at"], "fixed_reported": len(row["fixed"].get("reported", [])),
                "fixed_at_class": sum(f["at_class"] for f in fixed_findings), "fixed_findings": fixed_findings,
                "load": row["load"], "seed": args.seed}
        print(json.dumps(line), flush=True)
        summary.append(row)
    (args.out / "results.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
