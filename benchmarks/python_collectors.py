"""Overhead of the pytrace collector on a call-heavy Python program, against no profiler and cProfile.

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

Usage: ``python benchmarks/python_collectors.py [--calls N] [--repeat N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perun_core.runner import events as ev  # noqa: E402
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


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1_000_000, help="calls of leaf (default 1000000)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200000 calls, 3 runs")
    options = parser.parse_args()
    calls, repeat = (200_000, 3) if options.quick else (options.calls, options.repeat)
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
