#!/usr/bin/env python3
"""Time to explain one finding: ``check head --explain`` on a C program made slower in one function.

A repository of two commits of a C program with five functions (the second
makes ``middle`` three times slower) is built; the workload is calibrated so
that the slower commit runs about ``--seconds`` (1.0) natively.  The time
profiles are collected and checked first (``check -c head``), untimed; then
``check head --explain --explain-with COLLECTOR`` is timed for callgrind and
perf (where this machine has them; perf where the kernel lets this user
profile), each run starting without call-level profiles to reuse.  Reported
per collector: wall seconds of ``--repeat`` runs (median, min, max), the
function named first with its file, line and share of the change, and the
interleaved rounds a side (perf runs three, callgrind one); also the machine's load
average, since a busy machine stretches the runs.  One JSON object goes to
stdout, progress to stderr.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import isolated_env  # noqa: E402
from runhelpers import FIVE_FUNCTIONS_C, FIVE_FUNCTIONS_MAKEFILE  # noqa: E402

PERUN = str(Path(sys.executable).parent / "perun-core")

PROGRAM = FIVE_FUNCTIONS_C
MAKEFILE = FIVE_FUNCTIONS_MAKEFILE


def perun(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PERUN, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


def calibrate(workdir: Path, seconds: float) -> int:
    """The workload that makes the slower commit run about ``seconds``."""
    source = workdir / "calibrate.c"
    source.write_text(PROGRAM.replace("REPEAT", "3"))
    binary = workdir / "calibrate"
    subprocess.run(["cc", "-O1", "-o", str(binary), str(source)], check=True)
    n = 1_000_000
    while True:
        started = time.perf_counter()
        subprocess.run([str(binary), str(n)], check=True, capture_output=True)
        took = time.perf_counter() - started
        if took > 0.2:
            return max(1, int(n * seconds / took))
        n *= 4


def project(workdir: Path, env: dict[str, str], workload: int) -> Path:
    from gitrepo import make_repo

    root = workdir / "project"
    files = {"Makefile": MAKEFILE, ".gitignore": "app\n"}
    make_repo(root, [{"files": {**files, "app.c": PROGRAM.replace("REPEAT", "1")}, "message": "v1"},
                     {"files": {**files, "app.c": PROGRAM.replace("REPEAT", "3")}, "message": "v2: middle 3x"}])
    perun(env, root, "init")
    for key, value in (("execute.pre_run", ["make"]), ("cmds", ["./app"]), ("workloads", [str(workload)]),
                       ("collectors", [{"name": "time", "params": {"repeat": 3}}])):
        done = perun(env, root, "config", "--local", "set", key, json.dumps(value))
        if done.returncode != 0:
            sys.exit(f"config set {key} failed: {done.stderr.strip()}")
    checked = perun(env, root, "check", "-c", "head", "--format", "json")
    if checked.returncode != 3:
        sys.exit(f"the check found no degradation (exit {checked.returncode}): {checked.stderr.strip()}")
    return root


def available() -> list[str]:
    found = []
    if shutil.which("valgrind"):
        found.append("callgrind")
    if shutil.which("perf"):
        from perun_core.collect.perf import perf_permission

        if perf_permission()[0]:
            found.append("perf")
    return found


def bench(env: dict[str, str], root: Path, collector: str, repeat: int) -> dict:
    walls = []
    first = None
    message = None
    for _ in range(repeat):
        for path in (root / ".perun" / "jobs").iterdir():
            if path.name.startswith(collector):
                path.unlink()
        started = time.perf_counter()
        done = perun(env, root, "check", "head", "--explain-with", collector, "--format", "json")
        walls.append(time.perf_counter() - started)
        if done.returncode != 3:
            sys.exit(f"check head --explain-with {collector} exited {done.returncode}: {done.stderr.strip()}")
        record = next(r for r in json.loads(done.stdout) if r["result"] == "Degradation")
        message = record["explanation"]["message"]
        if record["explained_by"]:
            top = record["explained_by"][0]
            first = {"function": top["function"], "share": round(top["share"], 4), "file": top["file"],
                     "line": top["line"], "rounds": record["explanation"].get("rounds")}
    return {"wall_s": {"median": round(statistics.median(walls), 3), "min": round(min(walls), 3),
                       "max": round(max(walls), 3)}, "first_function": first, "message": message}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", "--repeat", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=1.0, help="native run time of the slower commit")
    parser.add_argument("--only", nargs="*", choices=("callgrind", "perf"))
    options = parser.parse_args()
    if not shutil.which("cc") or not shutil.which("make"):
        sys.exit("needs cc and make")
    collectors = [c for c in available() if not options.only or c in options.only]
    out: dict = {"load_average_before": os.getloadavg()[0], "cpus": os.cpu_count(), "collectors": {}}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        env = isolated_env(workdir / "home", workdir / "pycache")
        env["TMPDIR"] = str(workdir)
        workload = calibrate(workdir, options.seconds)
        out["workload"] = workload
        print(f"building the project (workload {workload}) and checking it ...", file=sys.stderr)
        root = project(workdir, env, workload)
        for collector in collectors:
            print(f"explaining with {collector} ...", file=sys.stderr)
            out["collectors"][collector] = bench(env, root, collector, options.repeat)
    out["load_average_after"] = os.getloadavg()[0]
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
