"""Overhead of the Python collectors: pytrace on a call-heavy program, pymemory on many live objects.

**pytrace** (the default, ``--suite pytrace``): overhead against no profiler and cProfile.

The program calls a tiny function ``leaf`` CALLS times, a thousand at a time
from ``work``, and prints how long that took (its own ``perf_counter``, so
interpreter start-up is not counted).  It runs

* ``plain``: unprofiled (``python calls.py``);
* ``cprofile``: under ``python -m cProfile -o FILE calls.py``, which profiles
  every call;
* ``pytrace_leaf``: under the pytrace collector with ``--function calls:leaf``,
  recording every one of the CALLS calls (the worst case for wrapping);
* ``pytrace_work``: pytrace with ``--function calls:work=len(args[0])``, the
  typical use: a few sizeable functions with a size each (CALLS / 1000
  records);
* ``pytrace_cprofile``: pytrace's whole-program mode.

Each runs ``--repeat`` times.  The report (one JSON object on stdout) gives
per variant the median of the program's own time (``program_s``) and of the
whole process (``process_s``; for pytrace: the complete collection, reading
the records and building the profile included), and the factors
``program_s / plain`` and ``program_s / cprofile``.

**pymemory** (``--suite pymemory``): a program builds a list of N distinct
ints (N live blocks, which every tracemalloc snapshot walks), sums it and
keeps it until it exits.  For each N of ``--sizes`` it runs

* ``plain``: ``python ints.py N``;
* ``tracemalloc``: ``python -X tracemalloc=16 ints.py N``, the floor for any
  tracemalloc-based collector (16 frames, as pymemory's default);
* ``pymemory``: the pymemory collector with its default interval (0.1 s);
* ``pymemory_i100``: pymemory with ``--interval 100`` (only the snapshots the
  budget and the peaks call for, and the final one).

and reports per variant the medians of the program's own time
(``program_s``), of the whole run (``process_s``) and of the CPU time of the
profiled process (``child_cpu_s``, user + system: what a busy machine does not
inflate), and for pymemory the number of snapshots, the header's ``peak``,
the bytes of the largest snapshot and the bytes the list's line holds in it
(``list_line_bytes``; about 36 bytes per element: the int and its pointer).

Usage: ``python benchmarks/python_collectors.py [--suite pytrace|pymemory] [--calls N] [--sizes N,N]
[--repeat N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perun_core import events as ev  # noqa: E402
from perun_core.runner.jobs import Job, unit_config  # noqa: E402
from perun_core.runner.run import collect_job  # noqa: E402
from perun_core.units import UnitContext  # noqa: E402

PROGRAM = """\
import sys
import time


def leaf(x):
    return x + 1


def work(items):
    total = 0
    for item in items:
        total += leaf(item)
    return total


def main(calls):
    chunk = list(range(1000))
    started = time.perf_counter()
    for _ in range(calls // 1000):
        work(chunk)
    sys.stdout.write(f"elapsed {time.perf_counter() - started:.6f}\\n")


main(int(sys.argv[1]))
"""


INTS = """\
import sys
import time


def build(n):
    return [i * 7 + 1000 for i in range(n)]


def main(n):
    started = time.perf_counter()
    items = build(n)
    total = sum(items)
    sys.stdout.write(f"elapsed {time.perf_counter() - started:.6f} {total}\\n")
    return items


kept = main(int(sys.argv[1]))
"""
LIST_LINE = 6          # the line of INTS that allocates the list and its ints


def _elapsed(lines: list[str]) -> float:
    for line in lines:
        if line.startswith("elapsed "):
            return float(line.split()[1])
    raise RuntimeError(f"the program did not report its time: {lines!r}")


def run_plain(workdir: Path, calls: int, profiler: bool) -> tuple[float, float]:
    argv = [sys.executable]
    if profiler:
        argv += ["-m", "cProfile", "-o", str(workdir / "cprofile.out")]
    started = time.perf_counter()
    done = subprocess.run([*argv, "calls.py", str(calls)], cwd=workdir, capture_output=True, text=True, check=True)
    return _elapsed(done.stdout.splitlines()), time.perf_counter() - started


def run_pytrace(workdir: Path, calls: int, params: dict) -> tuple[float, float, int]:
    lines: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, ev.OutputLine):
            lines.append(event.text)

    job = Job(f"{sys.executable} calls.py", str(calls), "", unit_config("collector", "pytrace", params))
    started = time.perf_counter()
    profile = collect_job(job, UnitContext(cwd=workdir, emit=on_event, label="benchmark"), "0" * 40)
    return _elapsed(lines), time.perf_counter() - started, profile.resource_count()


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_ints_plain(workdir: Path, size: int, tracemalloc: bool) -> dict:
    argv = [sys.executable] + (["-X", "tracemalloc=16"] if tracemalloc else []) + ["ints.py", str(size)]
    cpu, started = _child_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, check=True)
    return {"process_s": time.perf_counter() - started, "child_cpu_s": _child_cpu() - cpu,
            "program_s": _elapsed(done.stdout.splitlines())}


def run_ints_pymemory(workdir: Path, size: int, params: dict) -> dict:
    lines: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, ev.OutputLine):
            lines.append(event.text)

    job = Job(f"{sys.executable} ints.py", str(size), "", unit_config("collector", "pymemory", params))
    cpu, started = _child_cpu(), time.perf_counter()
    profile = collect_job(job, UnitContext(cwd=workdir, emit=on_event, label="benchmark"), "0" * 40)
    measured = {"process_s": time.perf_counter() - started, "child_cpu_s": _child_cpu() - cpu,
                "program_s": _elapsed(lines)}
    snapshots = profile.to_dict()["snapshots"]
    totals = [sum(r["amount"] for r in s["resources"]) for s in snapshots]
    largest = snapshots[totals.index(max(totals))]
    measured.update(snapshots=len(snapshots), header_peak_mb=profile.header["peak"] / 1e6,
                    largest_snapshot_mb=max(totals) / 1e6,
                    list_line_mb=sum(r["amount"] for r in largest["resources"]
                                     if r["uid"]["source"] == "ints.py" and r["uid"]["line"] == LIST_LINE) / 1e6)
    return measured


def pymemory_suite(sizes: list[int], repeat: int) -> dict:
    variants = {
        "plain": lambda w, n: run_ints_plain(w, n, False),
        "tracemalloc": lambda w, n: run_ints_plain(w, n, True),
        "pymemory": lambda w, n: run_ints_pymemory(w, n, {}),
        "pymemory_i100": lambda w, n: run_ints_pymemory(w, n, {"interval": 100.0}),
    }
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="perun-bench-python-") as work:
        workdir = Path(work)
        (workdir / "ints.py").write_text(INTS)
        for size in sizes:
            measured: dict[str, list[dict]] = {name: [] for name in variants}
            for _ in range(repeat):
                for name, run in variants.items():
                    sys.stderr.write(f"{size} {name}...\n")
                    measured[name].append(run(workdir, size))
            per_size = {}
            for name, runs in measured.items():
                entry = {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
                per_size[name] = entry
            floor = per_size["tracemalloc"]["child_cpu_s"]
            for name in ("pymemory", "pymemory_i100"):
                per_size[name]["cpu_vs_tracemalloc"] = round(per_size[name]["child_cpu_s"] / floor, 2)
            results[str(size)] = per_size
    return results


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=("pytrace", "pymemory"), default="pytrace")
    parser.add_argument("--calls", type=int, default=1_000_000, help="pytrace: calls of leaf (default 1000000)")
    parser.add_argument("--sizes", default="500000,2000000", help="pymemory: list lengths (default 500000,2000000)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per variant (pytrace 5, pymemory 1)")
    parser.add_argument("--quick", action="store_true", help="pytrace: 200000 calls, 3 runs; pymemory: 100000")
    options = parser.parse_args()
    if options.suite == "pymemory":
        sizes = [100_000] if options.quick else [int(size) for size in options.sizes.split(",")]
        repeat = options.repeat or 1
        report = {
            "benchmark": "pymemory on a list of distinct ints (many live blocks)",
            "repeat": repeat,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_start": os.getloadavg(),
            "sizes": pymemory_suite(sizes, repeat),
            "load_average_end": os.getloadavg(),
        }
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    calls, repeat = (200_000, 3) if options.quick else (options.calls, options.repeat or 5)
    variants = {
        "plain": lambda w: run_plain(w, calls, False),
        "cprofile": lambda w: run_plain(w, calls, True),
        "pytrace_leaf": lambda w: run_pytrace(w, calls, {"functions": ["calls:leaf"]}),
        "pytrace_work": lambda w: run_pytrace(w, calls, {"functions": ["calls:work=len(args[0])"]}),
        "pytrace_cprofile": lambda w: run_pytrace(w, calls, {"mode": "cprofile"}),
    }
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="perun-bench-python-") as work:
        workdir = Path(work)
        (workdir / "calls.py").write_text(PROGRAM)
        measured: dict[str, list[tuple]] = {name: [] for name in variants}
        for _ in range(repeat):          # interleaved, so a busy moment does not hit one variant only
            for name, run in variants.items():
                sys.stderr.write(f"{name}...\n")
                measured[name].append(run(workdir))
        for name, runs in measured.items():
            entry = {"program_s": summary([r[0] for r in runs]), "process_s": summary([r[1] for r in runs])}
            if len(runs[0]) > 2:
                entry["resources"] = runs[0][2]
            results[name] = entry
    plain = results["plain"]["program_s"]["median"]
    cprofile = results["cprofile"]["program_s"]["median"]
    for entry in results.values():
        median = entry["program_s"]["median"]
        entry["factor_vs_plain"] = round(median / plain, 2)
        entry["factor_vs_cprofile"] = round(median / cprofile, 2)
    report = {
        "benchmark": "pytrace overhead on a call-heavy Python program",
        "calls_of_leaf": calls,
        "calls_of_work": calls // 1000,
        "repeat": repeat,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "variants": results,
        "per_recorded_call_overhead_us": round(
            (results["pytrace_leaf"]["program_s"]["median"] - plain) / calls * 1e6, 3),
    }
    sys.stdout.write(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
