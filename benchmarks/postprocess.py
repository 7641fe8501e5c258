#!/usr/bin/env python3
"""End-to-end benchmark of ``perun-core postprocessby`` on a profile of a million resources.

Builds a repository whose profile has ``--uids`` uids (100) of ``--points``
points (10,000) each: a ``mixed`` complexity profile in the ``global``
region whose resources have ``uid``, ``type``, ``subtype``,
``structure-unit-size`` (an int, 1..10,000) and ``amount``: a known trend
per uid (the seven model kinds in turn) times seeded multiplicative noise,
as a float rounded to 0.001 (``--int-amounts``: whole numbers, as the
original complexity collector's microseconds are).  The same profile is the
input in two forms:

* ``registered``: registered at HEAD and named ``0@i`` (read from the
  columnar object store);
* ``pending``: a documented-JSON file in ``.perun/jobs`` named by its path.

For each input and each command of ``--units`` (default: regression
analysis with the full and the bisection method, regressogram, moving
average, kernel regression) ``perun-core postprocessby SPEC UNIT ...`` runs
as a subprocess (private HOME, compiled bytecode as installed), ``--repeat``
times after one warm-up run.  Timed is the wall time from process start to
exit (the new profile is written, fsync included); the peak resident memory
is the child's ``ru_maxrss`` from :func:`os.wait4`, which also gives its CPU
time (user + system; less sensitive to a busy machine than the wall time).  The profile written is
deleted after each run.  One JSON object goes to stdout, progress notes to
stderr::

    .venv/bin/python benchmarks/postprocess.py > postprocess.json
    .venv/bin/python benchmarks/postprocess.py --quick        # 10 x 1,000 points, a smoke test
    .venv/bin/python benchmarks/postprocess.py --cprofile registered:regression_full

``--cprofile INPUT:LABEL`` runs that one command in this process under
cProfile (after the benchmark) and prints the top functions to stderr.

Targets (from the issue): ``registered`` and ``pending``, each command: at
most 0.5 s wall (median) and 300 MB peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # gitrepo.fast_linear_history
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import isolate_in, load_average, machine_info, note, venv_bin_with, work_directory  # noqa: E402

TARGET_WALL_S = 0.5
TARGET_RSS_MB = 300.0

#: label -> postprocessby arguments after the profile
COMMANDS = {
    "regression_full": ["regression_analysis", "-m", "full"],
    "regression_bisection": ["regression_analysis", "-m", "bisection"],
    "regressogram": ["regressogram"],
    "moving_average": ["moving_average"],
    "kernel_regression": ["kernel_regression"],
}
TRENDS = ("linear", "quadratic", "nlogn", "logarithmic", "power", "constant", "exponential")
INPUT_NAME = "complexity-input.perf"


def trend(kind: str, x: Any) -> Any:
    import numpy as np

    if kind == "linear":
        return 50.0 + 0.5 * x
    if kind == "quadratic":
        return 20.0 + 2e-4 * x * x
    if kind == "nlogn":
        return 10.0 + 0.05 * x * np.log(x)
    if kind == "logarithmic":
        return 5.0 + 40.0 * np.log(x)
    if kind == "power":
        return 3.0 * x**0.75
    if kind == "constant":
        return np.full(x.shape, 250.0)
    return 30.0 * 1.0002**x  # exponential


def build_profile(uids: int, points: int, seed: int, int_amounts: bool) -> dict:
    """The documented-JSON dict of the benchmark profile (see the module docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    names = [f"func_{i:03d}_{TRENDS[i % len(TRENDS)]}(struct list*, int)" for i in range(uids)]
    resources = []
    for i, name in enumerate(names):
        x = rng.integers(1, 10_001, points)
        y = trend(TRENDS[i % len(TRENDS)], x.astype(np.float64)) * (1.0 + rng.normal(0.0, 0.03, points))
        amounts = np.rint(y).astype(np.int64).tolist() if int_amounts else np.round(y, 3).tolist()
        resources.extend(
            {"amount": a, "type": "mixed", "subtype": "time delta", "uid": name, "structure-unit-size": s}
            for a, s in zip(amounts, x.tolist())
        )
    return {
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "./complexity",
                   "params": "", "workload": "input.txt"},
        "collector_info": {"name": "complexity", "params": {"rules": names[:3]}},
        "postprocessors": [],
        "snapshots": [],
        "global": {"timestamp": 1.0, "resources": resources, "models": []},
    }


def setup(work: Path, args: argparse.Namespace) -> tuple[Path, dict[str, str]]:
    """The repository with the profile registered at HEAD and pending as a file; returns (root, specs)."""
    from gitrepo import fast_linear_history

    from perun_core import api
    from perun_core.profile.codec import store_profile_at
    from perun_core.profile.model import Profile
    from perun_core.storage.repository import PerunRepository

    root = work / "repo"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    [head] = fast_linear_history(root, 1)
    api.init(root)
    note(f"building the profile: {args.uids} uids x {args.points} points")
    data = build_profile(args.uids, args.points, args.seed, args.int_amounts)
    profile = Profile.from_dict(data)
    with PerunRepository(root) as repo:
        repo.register(head, profile, INPUT_NAME, time.time())
    profile.origin = head
    pending = root / ".perun" / "jobs" / INPUT_NAME
    store_profile_at(profile, pending, indent=None)
    note(f"pending input: {pending.stat().st_size / 1e6:.1f} MB of documented JSON")
    return root, {"registered": "0@i", "pending": str(pending)}


def run_once(argv: list[str], cwd: Path, env: dict[str, str], jobs: Path, keep: set[str]) -> tuple[float, float, float]:
    """(wall seconds, peak RSS in MB, user + system CPU seconds) of one run; the profiles it wrote are removed."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    stderr = process.stderr.read()
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stderr.close()
    if process.returncode != 0:
        raise SystemExit(f"benchmark command failed ({process.returncode}): {' '.join(argv)}\n"
                         f"{stderr.decode(errors='replace')}")
    written = [p for p in jobs.iterdir() if p.name not in keep]
    if len(written) != 1:
        raise SystemExit(f"expected one new profile in {jobs}, found {[p.name for p in written]}")
    for path in written:
        path.unlink()
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime  # Linux reports KiB


def stats(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4), "n": len(values)}


def cprofile(root: Path, spec: str, command: list[str], top: int) -> None:
    import cProfile
    import io
    import pstats

    from perun_core.api import run as api_run
    from perun_core.cli.main import cli

    del api_run  # imported for its side effects: the same modules as the subprocess
    jobs = root / ".perun" / "jobs"
    keep = {p.name for p in jobs.iterdir()}
    argv = ["postprocessby", spec, *command]
    profiler = cProfile.Profile()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        profiler.enable()
        try:
            cli.main(argv, standalone_mode=False)
        finally:
            profiler.disable()
    finally:
        os.chdir(cwd)
    for path in jobs.iterdir():
        if path.name not in keep:
            path.unlink()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    out.write("\n--- by own time ---\n")
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    sys.stderr.write(out.getvalue())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--repeat", type=int, default=None, help="timed runs per command (default 5; quick 2)")
    parser.add_argument("--uids", type=int, default=None, help="uids in the profile (default 100; quick 10)")
    parser.add_argument("--points", type=int, default=None, help="points per uid (default 10000; quick 1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--int-amounts", action="store_true", help="whole-number amounts instead of floats")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test, not a benchmark")
    parser.add_argument("--inputs", nargs="+", choices=("registered", "pending"), default=["registered", "pending"])
    parser.add_argument("--units", nargs="+", choices=tuple(COMMANDS), default=list(COMMANDS),
                        help="commands to time (default: all)")
    parser.add_argument("--workdir", type=Path, help="build here and keep it (default: a temporary directory)")
    parser.add_argument("--cprofile", metavar="INPUT:LABEL", help="also profile this command in-process (stderr)")
    parser.add_argument("--top", type=int, default=35, help="functions listed by --cprofile")
    parser.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    quick = args.quick
    args.repeat = args.repeat or (2 if quick else 5)
    args.uids = args.uids or (10 if quick else 100)
    args.points = args.points or (1000 if quick else 10_000)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    perun = venv_bin_with("perun-core") / "perun-core"
    work, cleanup = work_directory(args.workdir, "perun-bench-pp-")
    env = isolate_in(work, work / "pycache")
    if args.setup_only:
        root, specs = setup(work, args)
        print(json.dumps({"root": str(root), "specs": specs}))
        return 0
    info = machine_info()
    try:
        # The profile is built in a child process: a child forked from a big parent would
        # report the parent's memory as its own peak RSS.
        child = [sys.executable, __file__, "--setup-only", "--workdir", str(work), "--uids", str(args.uids),
                 "--points", str(args.points), "--seed", str(args.seed), *(["--int-amounts"] if args.int_amounts else [])]
        built = json.loads(subprocess.run(child, check=True, stdout=subprocess.PIPE, env=env).stdout)
        root, specs = Path(built["root"]), built["specs"]
        jobs = root / ".perun" / "jobs"
        keep = {p.name for p in jobs.iterdir()}
        results: dict[str, Any] = {}
        for kind in args.inputs:
            results[kind] = {}
            for label in args.units:
                argv = [str(perun), "postprocessby", specs[kind], *COMMANDS[label]]
                note(f"{kind}: {' '.join(argv[1:])}")
                run_once(argv, root, env, jobs, keep)  # warm-up: bytecode, page cache
                walls, rss, cpu = [], [], []
                for _ in range(args.repeat):
                    wall, peak, used = run_once(argv, root, env, jobs, keep)
                    walls.append(wall)
                    rss.append(peak)
                    cpu.append(used)
                results[kind][label] = {
                    "wall_s": stats(walls),
                    "cpu_s": stats(cpu),
                    "peak_rss_mb": stats(rss),
                    "ok_wall": statistics.median(walls) <= TARGET_WALL_S,
                    "ok_rss": max(rss) <= TARGET_RSS_MB,
                }
                note(f"  wall {statistics.median(walls):.3f} s (cpu {statistics.median(cpu):.3f} s), "
                     f"peak RSS {max(rss):.0f} MB")
        if (load := load_average()) is not None:
            info["loadavg_end"] = load
        output = {
            "machine": info,
            "config": {"uids": args.uids, "points": args.points, "resources": args.uids * args.points,
                       "amounts": "int" if args.int_amounts else "float (0.001)", "repeat": args.repeat,
                       "pending_bytes": (jobs / INPUT_NAME).stat().st_size},
            "targets": {"wall_s": TARGET_WALL_S, "peak_rss_mb": TARGET_RSS_MB},
            "results": results,
        }
        print(json.dumps(output, indent=2))
        if args.cprofile:
            kind, _, label = args.cprofile.partition(":")
            cprofile(root, specs[kind], COMMANDS[label], args.top)
    finally:
        if cleanup:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
