"""Per-run overhead of the time collector, compared with hyperfine.

Runs the equivalent of ``perun-core collect time -w 2 -r N true`` through the
runner (``collect_job``, no repository needed) with the C spawn helper
(``perun``) and without it (``perun_without_helper``, the Python fallback),
and ``hyperfine -N --warmup 2 --runs N true`` (when hyperfine is installed).
The ``--runs`` runs of each are split into ``--blocks`` blocks and the three
take turns block by block (in a rotating order), so that they see the same
load on a busy machine.  Per-run samples of all blocks are pooled.

Metrics, per perun variant:

* ``recorded``: the wall times perun stores for the command (what a profile
  says it took);
* ``loop_per_run``: what perun spends per run in all (spawning, measuring,
  reading output, reporting events): the time between consecutive repetition
  events;
* ``collection_per_run`` (not checked): the wall time of the whole
  ``collect_job`` call (before and after phases included) over all its runs,
  warm-ups included; for hyperfine the wall time of the hyperfine process.

Each of ``recorded`` and ``loop_per_run`` is checked against the target
(mean within 1 ms of hyperfine's mean), and so are the medians.  The result
is one JSON object on stdout (``checks`` holds one pass/fail entry per
metric); a readable summary goes to stderr.  The exit status is 0 even when
a check fails.

Usage: ``python benchmarks/time_overhead.py [--runs N] [--blocks B] [--command CMD] [--no-fallback]``.
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

from perun_core import events as ev  # noqa: E402
from perun_core.runner.helper import spawn_helper  # noqa: E402
from perun_core.runner.jobs import Job, unit_config  # noqa: E402
from perun_core.runner.run import collect_job  # noqa: E402
from perun_core.units import UnitContext  # noqa: E402

WARMUP = 2
TARGET_S = 0.001


def stats(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100) if len(values) > 1 else values * 99
    return {
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "p90": cuts[89],
        "p99": cuts[98],
        "min": min(values),
        "max": max(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "n": len(values),
    }


def loadavg() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


class Perun:
    """One perun variant: collects blocks and pools their samples."""

    def __init__(self, name: str, command: str, workdir: Path, *, helper: bool) -> None:
        self.name, self.command, self.workdir, self.helper = name, command, workdir, helper
        self.recorded: list[float] = []
        self.loop: list[float] = []
        self.collection: list[float] = []

    def block(self, runs: int) -> None:
        if self.helper:
            os.environ.pop("PERUN_NO_SPAWN_HELPER", None)
        else:
            os.environ["PERUN_NO_SPAWN_HELPER"] = "1"
        stamps: list[int] = []

        def on_event(event: object) -> None:
            if isinstance(event, ev.Repetition) and not event.warmup:
                stamps.append(time.monotonic_ns())
            elif isinstance(event, ev.PhaseStarted) and event.phase == "after":
                stamps.append(time.monotonic_ns())

        job = Job(self.command, "", "", unit_config("collector", "time", {"warmup": WARMUP, "repeat": runs}))
        started = time.monotonic_ns()
        try:
            profile = collect_job(job, UnitContext(cwd=self.workdir, emit=on_event, label="benchmark"), "0" * 40)
        finally:
            os.environ.pop("PERUN_NO_SPAWN_HELPER", None)
        self.collection.append((time.monotonic_ns() - started) / 1e9 / (runs + WARMUP))
        self.recorded += [r["amount"] for r in profile.global_region.resources if r["subtype"] == "real"]
        self.loop += [(b - a) / 1e9 for a, b in zip(stamps, stamps[1:])]

    def report(self) -> dict:
        return {"helper": self.helper, "recorded_s": stats(self.recorded), "loop_per_run_s": stats(self.loop),
                "collection_per_run_s": stats(self.collection)}


class Hyperfine:
    name = "hyperfine"

    def __init__(self, binary: str, command: str, workdir: Path) -> None:
        self.binary, self.command, self.workdir = binary, command, workdir
        self.times: list[float] = []
        self.collection: list[float] = []
        self.version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()

    def block(self, runs: int) -> None:
        export = self.workdir / "hyperfine.json"
        started = time.monotonic_ns()
        subprocess.run([self.binary, "-N", "--warmup", str(WARMUP), "--runs", str(runs), "--export-json", str(export),
                        "--style", "none", self.command], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, cwd=self.workdir)
        self.collection.append((time.monotonic_ns() - started) / 1e9 / (runs + WARMUP))
        self.times += json.loads(export.read_text())["results"][0]["times"]

    def report(self) -> dict:
        return {"version": self.version, "times_s": stats(self.times), "collection_per_run_s": stats(self.collection)}


def checks(variants: list[Perun], hyperfine: dict) -> list[dict]:
    found = []
    for variant in variants:
        data = variant.report()
        for metric in ("recorded_s", "loop_per_run_s"):
            for statistic in ("mean", "median"):
                ours, theirs = data[metric][statistic], hyperfine["times_s"][statistic]
                found.append({
                    "variant": variant.name, "metric": metric.removesuffix("_s"), "statistic": statistic,
                    "perun_ms": ours * 1e3, "hyperfine_ms": theirs * 1e3, "difference_ms": (ours - theirs) * 1e3,
                    "target_ms": TARGET_S * 1e3, "pass": ours - theirs <= TARGET_S,
                })
    return found


def summary(report: dict) -> str:
    lines = [f"{report['runs']} runs of {report['command']!r} in {report['blocks']} blocks; "
             f"load {report['loadavg_start']} -> {report['loadavg_end']} on {report['cpus']} CPUs"]
    if report["hyperfine"]:
        times = report["hyperfine"]["times_s"]
        lines.append(f"  hyperfine: mean {times['mean'] * 1e3:.3f} ms, median {times['median'] * 1e3:.3f} ms, "
                     f"p90 {times['p90'] * 1e3:.3f} ms")
    for name in ("perun", "perun_without_helper"):
        data = report.get(name)
        if data:
            for metric in ("recorded_s", "loop_per_run_s", "collection_per_run_s"):
                lines.append(f"  {name} {metric.removesuffix('_s')}: mean {data[metric]['mean'] * 1e3:.3f} ms, "
                             f"median {data[metric]['median'] * 1e3:.3f} ms, p90 {data[metric]['p90'] * 1e3:.3f} ms")
    for check in report.get("checks", ()):
        lines.append(f"  {'PASS' if check['pass'] else 'FAIL'} {check['variant']} {check['metric']} "
                     f"{check['statistic']}: {check['perun_ms']:.3f} ms vs hyperfine {check['hyperfine_ms']:.3f} ms "
                     f"({check['difference_ms']:+.3f} ms, target +{check['target_ms']:g} ms)")
    if "note" in report:
        lines.append(f"  {report['note']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="measured runs per tool, in all (default 1000)")
    parser.add_argument("--blocks", type=int, default=10, help="blocks the runs are split into (default 10)")
    parser.add_argument("--command", default="true", help="the command (no shell; default 'true')")
    parser.add_argument("--no-fallback", action="store_true", help="skip perun without the spawn helper")
    options = parser.parse_args()
    blocks = max(1, min(options.blocks, options.runs))
    sizes = [options.runs // blocks + (1 if i < options.runs % blocks else 0) for i in range(blocks)]
    start_load = loadavg()
    with tempfile.TemporaryDirectory(prefix="perun-bench-") as work:
        workdir = Path(work)
        tools: list = []
        if spawn_helper() is not None:
            tools.append(Perun("perun", options.command, workdir, helper=True))
        if not options.no_fallback:
            tools.append(Perun("perun_without_helper", options.command, workdir, helper=False))
        binary = shutil.which("hyperfine")
        hyperfine = Hyperfine(binary, options.command, workdir) if binary else None
        if hyperfine is not None:
            tools.append(hyperfine)
        for number, size in enumerate(sizes):
            for tool in tools[number % len(tools):] + tools[:number % len(tools)]:
                print(f"block {number + 1}/{blocks}: {tool.name} x {size}", file=sys.stderr)
                tool.block(size)
    variants = [tool for tool in tools if isinstance(tool, Perun)]
    report: dict = {
        "benchmark": "time collector per-run overhead",
        "command": options.command,
        "runs": options.runs,
        "blocks": blocks,
        "warmup_per_block": WARMUP,
        "cpus": os.cpu_count(),
        "loadavg_start": start_load,
        "loadavg_end": loadavg(),
        "hyperfine": hyperfine.report() if hyperfine else None,
    }
    for variant in variants:
        report[variant.name] = variant.report()
    if hyperfine is None:
        report["note"] = "hyperfine is not installed (e.g. 'apt-get install hyperfine'); no comparison made"
    else:
        report["checks"] = checks(variants, report["hyperfine"])
    print(summary(report), file=sys.stderr)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
