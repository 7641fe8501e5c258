#!/usr/bin/env python3
"""Executions per second of fuzzing: the command line against the TUI's fuzz screen, same target, same budget.

The target is CPU-bound and has no pathological inputs (so that no run
hangs and both searches end with their budget): a Python script started
with ``-S`` that sums the bytes of the first 4 KiB of its input 300 times,
seeded with ``java.lang.String``.  Both runs get the same parameters: ``--budget``
seconds, ``--jobs`` parallel runs, a fixed random seed, no profiles of the
best inputs (collecting them is not fuzzing and would take the same time in
both).

* ``cli``: ``perun-core fuzz`` as a subprocess;
* ``tui``: ``perun-tui``'s app headless (``run_test``, the compositor draws
  every frame; only the write to a terminal is skipped), the fuzz screen
  filled in and started with ``ctrl+s`` as a user does, until it is done.

Reported per run: executions (from ``results.json``), executions per second
of the search's own clock (``elapsed``: the budget; the wall time from start
to end, also reported, adds calibration and the analysis of the findings), the CPU seconds of everything (the
front end and the fuzzed programs) and, for the TUI, of its own process
(the search's threads and the UI).  Run the pair ``--repeat`` times, alternating
which goes first; the load average is in ``machine``.

Usage: ``.venv/bin/python benchmarks/fuzz_tui.py [--budget 20] [--jobs 2] [--repeat 2]``; JSON on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: work proportional to the input's size up to 4 KiB: slower inputs exist (longer ones), hangs do not
PROGRAM = """
import sys
with open(sys.argv[1], "rb") as handle:
    data = handle.read()[:4096]
total = 0
for _ in range(300):
    for byte in data:
        total += byte
"""

VENV_BIN = Path(sys.executable).parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _values(work: Path, name: str, args: argparse.Namespace) -> dict[str, str]:
    return {"cmd": str(work / "target.py"), "seeds": str(work / "seed.txt"), "output_dir": str(work / name),
            "timeout": str(args.budget), "jobs": str(args.jobs), "seed": "7", "profiles": "0", "metric": "cpu"}


def _outcome(out: Path, wall: float, front: float | None, children: float) -> dict:
    """What one run did: ``front`` is the front end's own CPU time (None: counted in ``children``)."""
    results = json.loads((out / "results.json").read_text())
    executions = int(results["executions"])
    total = children + (front or 0.0)
    return {"executions": executions, "per_second": round(executions / float(results["elapsed"]), 2),
            "search_s": round(float(results["elapsed"]), 2), "wall_s": round(wall, 2),
            "cpu_total_s": round(total, 2), "front_end_cpu_s": None if front is None else round(front, 2),
            "stopped": results.get("stopped")}


def run_cli(work: Path, name: str, args: argparse.Namespace) -> dict:
    values = _values(work, name, args)
    argv = [str(VENV_BIN / "perun-core"), "fuzz", "-b", values["cmd"], "-w", values["seeds"], "-o",
            values["output_dir"], "-t", values["timeout"], "-j", values["jobs"], "--seed", values["seed"],
            "--profiles", "0", "--metric", "cpu"]
    before = _children_cpu()
    started = time.perf_counter()
    subprocess.run(argv, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    wall = time.perf_counter() - started
    # perun-core waits for the programs it runs: their CPU time is in its own, reported here as the total
    return _outcome(work / name, wall, None, _children_cpu() - before)


async def _drive_tui(repo: Path, values: dict[str, str]) -> float:
    # lazy: the command-line run must not pay for textual's import
    from perun_tui.app import PerunApp
    from perun_tui.screens.fuzz import FuzzScreen

    app = PerunApp(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        app.push_screen(FuzzScreen())
        while not (isinstance(app.screen, FuzzScreen) and app.screen.query("#field-cmd")):
            await pilot.pause(0.05)
        screen = app.screen
        for key, value in values.items():
            screen.query_one(f"#field-{key}").value = value  # an Input, or a Select whose options are the values
        await pilot.pause()
        started = time.perf_counter()
        await pilot.press("ctrl+s")
        while screen.status == "running":
            await pilot.pause(0.1)
        if screen.result is None:
            raise SystemExit(f"the fuzz screen failed: {screen.query_one('#fuzz-status').render()}")
        return time.perf_counter() - started


def run_tui(work: Path, repo: Path, name: str, args: argparse.Namespace) -> dict:
    values = _values(work, name, args)
    before_self, before_children = _self_cpu(), _children_cpu()
    wall = asyncio.run(_drive_tui(repo, values))
    return _outcome(work / name, wall, _self_cpu() - before_self, _children_cpu() - before_children)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of fuzzing per run")
    parser.add_argument("--jobs", type=int, default=2, help="parallel runs of the program")
    parser.add_argument("--repeat", type=int, default=2, help="pairs of runs (alternating order)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="perun-fuzz-tui-") as tmp:
        work = Path(tmp)
        program = work / "target.py"
        program.write_text(f"#!{sys.executable} -S\n{PROGRAM}")
        program.chmod(0o755)
        (work / "seed.txt").write_text("java.lang.String\n")
        repo = work / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        subprocess.run([str(VENV_BIN / "perun-core"), "init"], cwd=repo, check=True, stdout=subprocess.DEVNULL)
        load_before = os.getloadavg()
        runs: dict[str, list[dict]] = {"cli": [], "tui": []}
        for index in range(args.repeat):
            order = ("cli", "tui") if index % 2 == 0 else ("tui", "cli")
            for which in order:
                name = f"{which}-{index}"
                shown = run_cli(work, name, args) if which == "cli" else run_tui(work, repo, name, args)
                runs[which].append(shown)
                print(f"{which}: {shown}", file=sys.stderr, flush=True)
        report = {"budget_s": args.budget, "jobs": args.jobs, "runs": runs,
                  "machine": {"cores": os.cpu_count(), "load_before": load_before, "load_after": os.getloadavg()}}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
