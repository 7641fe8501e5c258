#!/usr/bin/env python3
"""Timings of the degradation checks, as a user runs them.

* ``check_profiles``: ``perun-core check profiles A.perf B.perf --format
  json`` on two documented-format mixed profiles of ``--uids`` (100) uids x
  ``--points`` (1000) measurements each, a tenth of the uids 1.3x slower --
  the issue's target: under 1 s wall;
* ``check_profiles_one_process``: the same through the API with one process
  (what the TUI gets), for comparison;
* ``check_all``: ``perun-core check all --format json`` over a repository of
  ``--versions`` (200) commits with one registered profile each (a time
  profile of five runs, a 2x step half way) -- target: under 10 s wall.

Every timing is the wall clock of ``--repeat`` runs (median, min, max) in
seconds, with the median CPU time (user + sys) of the commands; also the
machine's load average, since a busy machine stretches them.  Commands run
as the installed ``perun-core`` console script with a private HOME and a
bytecode cache of their own (compiled by one warm-up run), as an installed
perun runs, even where the caller sets PYTHONDONTWRITEBYTECODE.  One JSON
object goes to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import isolated_env  # noqa: E402

PERUN = str(Path(sys.executable).parent / "perun-core")
ENV: dict[str, str] = dict(os.environ)  # replaced by main() with the isolated environment

TARGETS = {"check_profiles": 1.0, "check_all": 10.0}


def mixed_profile(uids: int, points: int, seed: int, slower: float) -> dict:
    rnd = random.Random(seed)
    resources = []
    for u in range(uids):
        factor = slower if u % 10 == 0 else 1.0
        for _ in range(points):
            size = rnd.randint(1, 1000)
            amount = (0.5 + size * (1 + u / 10)) * rnd.lognormvariate(0, 0.1) * factor
            resources.append({"amount": amount, "type": "mixed", "subtype": "time delta",
                              "uid": f"module::function_{u}(int, char const*)", "structure-unit-size": size})
    return {"header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "./bench", "args": "",
                       "workload": "synthetic"},
            "collector_info": {"name": "trace", "params": {}}, "postprocessors": [],
            "snapshots": [{"time": "1.0", "resources": resources, "models": []}]}


def timed_runs(command: list[str], cwd: Path, repeat: int) -> dict:
    seconds, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV)
        seconds.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # user + sys of the command and the processes it waited for: on a shared machine the
        # wall clock mostly measures the neighbours, this does much less
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if result.returncode not in (0, 3):
            raise SystemExit(f"{' '.join(command)} failed: {result.stderr}")
    return {"median": round(statistics.median(seconds), 3), "min": round(min(seconds), 3),
            "max": round(max(seconds), 3), "cpu_median": round(statistics.median(cpu), 3), "n": repeat}


def bench_profiles(workdir: Path, uids: int, points: int, repeat: int) -> dict:
    base, target = workdir / "BASELINE.perf", workdir / "TARGET.perf"
    base.write_text(json.dumps(mixed_profile(uids, points, 1, 1.0), indent=2))
    target.write_text(json.dumps(mixed_profile(uids, points, 2, 1.3), indent=2))
    command = [PERUN, "check", "profiles", "BASELINE.perf", "TARGET.perf", "--format", "json"]
    subprocess.run(command, cwd=workdir, capture_output=True, env=ENV)  # warm-up: bytecode, page cache
    out = {"check_profiles": timed_runs(command, workdir, repeat)}
    from perun_core.api import check as api_check

    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        api_check.check_profiles(str(base), str(target), cwd=workdir)
        seconds.append(time.perf_counter() - started)
    out["check_profiles_one_process"] = {"median": round(statistics.median(seconds), 3),
                                         "min": round(min(seconds), 3), "max": round(max(seconds), 3),
                                         "n": repeat, "note": "API in this (warm) process"}
    out["profile_mb"] = round(base.stat().st_size / 1e6, 1)
    return out


def bench_all(workdir: Path, versions: int, repeat: int) -> dict:
    from gitrepo import fast_linear_history

    from perun_core import api
    from perun_core.profile.model import Profile
    from perun_core.storage.repository import PerunRepository

    root = workdir / "history"
    shas = fast_linear_history(root, versions)
    api.init(root)
    rnd = random.Random(5)
    with PerunRepository(root) as repo:
        for index, sha in enumerate(shas):
            factor = 2.0 if index >= versions // 2 else 1.0
            resources = []
            for order in range(1, 6):
                real = 0.2 * factor * rnd.gauss(1.0, 0.02)
                for subtype, amount in (("real", real), ("user", real * 0.9), ("sys", real * 0.05)):
                    resources.append({"amount": amount, "type": "time", "subtype": subtype, "uid": "./app",
                                      "order": order})
            doc = {"header": {"type": "time", "units": {"time": "s"}, "cmd": "./app", "params": "", "workload": "in"},
                   "collector_info": {"name": "time", "params": {"repeat": 5}}, "postprocessors": [],
                   "global": {"timestamp": 1.0, "resources": resources, "models": []}, "origin": sha}
            repo.register(sha, Profile.from_dict(doc), f"time-{index}.perf", 1_700_000_000 + index)
    command = [PERUN, "check", "all", "--format", "json"]
    subprocess.run(command, cwd=root, capture_output=True, env=ENV)  # warm-up
    result = timed_runs(command, root, repeat)
    check = subprocess.run(command, cwd=root, capture_output=True, text=True, env=ENV)
    found = [r for r in json.loads(check.stdout) if r["result"] != "NoChange"]
    return {"check_all": result, "versions": versions,
            "changes_found": [(r["target"].split(":")[1], r["uid"], r["result"]) for r in found]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", "--repeat", type=int, default=5)
    parser.add_argument("--uids", type=int, default=100)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=200)
    parser.add_argument("--only", nargs="*", choices=("profiles", "all"), default=("profiles", "all"))
    options = parser.parse_args()
    out: dict = {"targets": TARGETS, "load_average_before": os.getloadavg()[0], "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        global ENV
        workdir = Path(tmp)
        ENV = isolated_env(workdir / "home", workdir / "pycache")
        os.environ["PERUN_CONFIG_DIR"] = ENV["PERUN_CONFIG_DIR"]
        if "profiles" in options.only:
            print("check profiles ...", file=sys.stderr)
            out.update(bench_profiles(workdir, options.uids, options.points, options.repeat))
        if "all" in options.only:
            print("check all ...", file=sys.stderr)
            out.update(bench_all(workdir, options.versions, options.repeat))
    out["load_average_after"] = os.getloadavg()[0]
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
