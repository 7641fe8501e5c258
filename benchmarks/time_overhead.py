"""Per-run overhead of the time collector, compared with hyperfine.

Runs the equivalent of ``perun-core collect time -w 2 -r RUNS true`` through
the runner (``collect_job``, no repository needed) with and without the C
spawn helper, and ``hyperfine -N --warmup 2 --runs RUNS true`` when hyperfine
is installed, then prints one JSON object:

* ``recorded``: statistics of the wall times perun stores for ``true``
  (what a profile says the command took),
* ``loop_per_run_s``: how long perun spends per run in all (spawning,
  measuring, reading output, reporting events), from the time between
  consecutive repetition events,
* ``hyperfine``: hyperfine's statistics for the same command, or null,
* ``overhead``: recorded mean minus hyperfine's mean, and the loop cost minus
  hyperfine's mean, in seconds.

Usage: ``python benchmarks/time_overhead.py [--runs N] [--command CMD]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perun_core.runner import events as ev  # noqa: E402
from perun_core.runner.helper import spawn_helper  # noqa: E402
from perun_core.runner.jobs import Job, unit_config  # noqa: E402
from perun_core.runner.run import collect_job  # noqa: E402
from perun_core.units import UnitContext  # noqa: E402


def stats(values: list[float]) -> dict[str, float]:
    return {
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
    }


def perun_runs(command: str, runs: int, workdir: Path, *, helper: bool) -> dict:
    if helper:
        os.environ.pop("PERUN_NO_SPAWN_HELPER", None)
    else:
        os.environ["PERUN_NO_SPAWN_HELPER"] = "1"
    stamps: list[int] = []

    def on_event(event: object) -> None:
        if isinstance(event, ev.Repetition) and not event.warmup:
            stamps.append(time.monotonic_ns())
        elif isinstance(event, ev.PhaseStarted) and event.phase == "after":
            stamps.append(time.monotonic_ns())

    job = Job(command, "", "", unit_config("collector", "time", {"warmup": 2, "repeat": runs}))
    profile = collect_job(job, UnitContext(cwd=workdir, emit=on_event, label="benchmark"), "0" * 40)
    real = [r["amount"] for r in profile.global_region.resources if r["subtype"] == "real"]
    loop = [(b - a) / 1e9 for a, b in zip(stamps, stamps[1:])]
    return {"helper": helper, "recorded_s": stats(real), "loop_per_run_s": stats(loop)}


def hyperfine_runs(command: str, runs: int, workdir: Path) -> dict | None:
    binary = shutil.which("hyperfine")
    if binary is None:
        return None
    export = workdir / "hyperfine.json"
    subprocess.run([binary, "-N", "--warmup", "2", "--runs", str(runs), "--export-json", str(export), "--style", "none",
                    command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
    result = json.loads(export.read_text())["results"][0]
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    return {"version": version, "mean": result["mean"], "median": result["median"], "min": result["min"],
            "max": result["max"], "stdev": result["stddev"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--command", default="true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perun-bench-") as work:
        workdir = Path(work)
        with_helper = perun_runs(options.command, options.runs, workdir, helper=True) if spawn_helper() else None
        without_helper = perun_runs(options.command, options.runs, workdir, helper=False)
        hyperfine = hyperfine_runs(options.command, options.runs, workdir)
    report: dict = {
        "benchmark": "time collector per-run overhead",
        "command": options.command,
        "runs": options.runs,
        "warmup": 2,
        "cpus": os.cpu_count(),
        "perun": with_helper,
        "perun_without_helper": without_helper,
        "hyperfine": hyperfine,
    }
    if hyperfine is None:
        report["note"] = "hyperfine is not installed (e.g. 'apt-get install hyperfine'); no comparison made"
    else:
        report["overhead"] = {
            name: {
                "recorded_mean_minus_hyperfine_mean_s": data["recorded_s"]["mean"] - hyperfine["mean"],
                "loop_mean_minus_hyperfine_mean_s": data["loop_per_run_s"]["mean"] - hyperfine["mean"],
            }
            for name, data in (("perun", with_helper), ("perun_without_helper", without_helper)) if data
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
