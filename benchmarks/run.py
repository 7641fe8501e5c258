#!/usr/bin/env python3
"""Performance benchmarks of perun-core.

Builds throw-away scenarios (git repositories with many commits and
registered profiles, a profile with a million resources) in a temporary
directory (or ``--workdir``), times them and prints ONE JSON object to
stdout.  Progress notes go to stderr, so ``run.py > result.json`` works.

Every timing is in seconds, measured with :func:`time.perf_counter`, and
reported as the median (plus min and max) of ``--repeat`` runs.  Command-line
scenarios run ``perun-core`` as a subprocess, exactly as a user would, with a
private HOME / PERUN_CONFIG_DIR so the developer's configuration cannot leak
in.  See benchmarks/README.md for what each scenario measures and its target.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # for gitrepo.fast_linear_history
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import note, session, venv_bin_with  # noqa: E402

SCENARIOS = ("help", "status", "log_short", "profile_1m")

#: Targets from the issue (seconds, median, on a 2-core machine).
TARGETS = {
    "help": 0.1,
    "status": 0.3,
    "log_short": 1.0,
    "profile_1m": 1.5,
}

FULL_SIZES = {
    "status_commits": 1000,
    "status_profiles": 2000,
    "status_pending": 3,
    "log_commits": 10000,
    "log_every": 10,
    "resources": 1_000_000,
}

QUICK_SIZES = {
    "status_commits": 100,
    "status_profiles": 200,
    "status_pending": 3,
    "log_commits": 1000,
    "log_every": 10,
    "resources": 50_000,
}

#: 37 distinct uids, shaped like what the tracing collectors record.
UIDS = [
    f"{name}({sig})"
    for name, sig in [
        ("SLList_init", "SLList*"), ("SLList_insert", "SLList*, int"), ("SLList_search", "SLList*, int"),
        ("SLList_remove", "SLList*, int"), ("SLList_destroy", "SLList*"), ("SLListcls::SLListcls", ""),
        ("SLListcls::Insert", "int"), ("SLListcls::Remove", "int"), ("SLListcls::Search", "int"),
        ("SLListcls::~SLListcls", ""), ("QuickSortRecursive", "int*, int, int"), ("QuickSort", "int*, int"),
        ("Partition", "int*, int, int"), ("BubbleSort", "int*, int"), ("InsertSort", "int*, int"),
        ("HeapSort", "int*, int"), ("Heapify", "int*, int, int"), ("MergeSort", "int*, int, int"),
        ("Merge", "int*, int, int, int"), ("BinarySearch", "int*, int, int"), ("HashTable::Get", "const char*"),
        ("HashTable::Put", "const char*, int"), ("HashTable::Rehash", "unsigned long"),
        ("HashTable::Hash", "const char*"), ("Vector::PushBack", "int"), ("Vector::Grow", "unsigned long"),
        ("Vector::At", "unsigned long"), ("Tree::Insert", "int"), ("Tree::Find", "int"), ("Tree::Rotate", "Node*"),
        ("Tree::Balance", "Node*"), ("Graph::Bfs", "int"), ("Graph::Dfs", "int"), ("Graph::AddEdge", "int, int"),
        ("Matrix::Multiply", "const Matrix&"), ("Matrix::Transpose", ""), ("main", "int, char**"),
    ]
]
assert len(set(UIDS)) == 37


# -- helpers -----------------------------------------------------------------------

def summary(samples: list[float]) -> dict[str, Any]:
    return {
        "median": round(statistics.median(samples), 4),
        "min": round(min(samples), 4),
        "max": round(max(samples), 4),
        "n": len(samples),
    }


def measure(fn: Callable[[], Any], repeat: int, *, before: Callable[[], Any] | None = None,
            after: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """Time ``fn`` ``repeat`` times; ``before``/``after`` run untimed around each call."""
    samples = []
    for _ in range(repeat):
        if before is not None:
            before()
        gc.collect()
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
        if after is not None:
            after(result)
        del result
    return summary(samples)


class Runner:
    """Runs commands as subprocesses in the isolated environment and times them."""

    def __init__(self, env: dict[str, str], venv_bin: Path) -> None:
        self.env = env
        self.perun = str(venv_bin / "perun-core")
        self.python = str(venv_bin / "python")

    def check(self, argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
        """Run once with output captured; fail loudly if the command fails."""
        done = subprocess.run(argv, cwd=cwd, env=self.env, capture_output=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(
                f"benchmark command failed ({done.returncode}): {' '.join(argv)}\n"
                f"{done.stderr.decode(errors='replace')}"
            )
        return done

    def time_once(self, argv: list[str], cwd: Path) -> float:
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=self.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=600)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(argv)}\n"
                             f"{done.stderr.decode(errors='replace')}")
        return elapsed

    def timed(self, argv: list[str], cwd: Path, repeat: int, before: Callable[[], Any] | None = None) -> dict:
        samples = []
        for _ in range(repeat):
            if before is not None:
                before()
            samples.append(self.time_once(argv, cwd))
        return summary(samples)


def time_profile_dict(cmd: str, origin: str | None, seed: int, *, workload: str = "input.txt") -> dict:
    """A small documented-JSON time profile; ``seed`` makes its content (and object) unique."""
    amounts = [round(0.01 + (seed * 7919 + i * 104729) % 10007 / 1e5, 6) for i in range(3)]
    data: dict[str, Any] = {
        "header": {"type": "time", "units": {"time": "s"}, "cmd": cmd, "params": "-O2", "workload": workload},
        "collector_info": {"name": "time", "params": {"repeat": 3, "warmup": 1}},
        "postprocessors": [],
        "snapshots": [{
            "time": "0.1",
            "resources": [
                {"amount": a, "type": "time", "subtype": s, "uid": cmd, "order": i + 1}
                for i, (a, s) in enumerate(zip(amounts, ("real", "user", "sys")))
            ],
            "models": [],
        }],
    }
    if origin is not None:
        data = {"origin": origin, **data}
    return data


def build_history(root: Path, commits: int) -> list[str]:
    from gitrepo import fast_linear_history

    from perun_core import api

    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    shas = fast_linear_history(root, commits)
    api.init(root)
    return shas


def register_profiles(root: Path, shas: list[str], count: int, *, every: int = 1) -> int:
    """Register ``count`` small time profiles round-robin over every ``every``-th commit."""
    from perun_core.profile.model import Profile
    from perun_core.storage.repository import PerunRepository

    targets = shas[::every] or shas[-1:]
    cmds = ("./sort", "./search", "./hash", "./tree")
    with PerunRepository(root) as repo:
        for i in range(count):
            minor = targets[i % len(targets)]
            round_no = i // len(targets)
            cmd = cmds[round_no % len(cmds)]
            profile = Profile.from_dict(time_profile_dict(cmd, None, i))
            repo.register(minor, profile, f"{cmd[2:]}-[input.txt]-{i}.perf", 1_700_000_000.0 + i)
    return count


def write_pending(root: Path, head: str, count: int) -> None:
    jobs = root / ".perun" / "jobs"
    for i in range(count):
        cmd = ("./sort", "./search", "./hash")[i % 3]
        name = f"{cmd[2:]}-[input.txt]-2024-01-0{i + 1}-12-00-00.perf"
        (jobs / name).write_text(json.dumps(time_profile_dict(cmd, head, 100_000 + i), indent=2))


# -- scenarios ------------------------------------------------------------------

def bench_help(runner: Runner, work: Path, args: argparse.Namespace) -> dict:
    note("help: perun-core --help and python -c pass")
    runner.check([runner.perun, "--help"], work)  # warm-up (pyc, page cache)
    runner.check([runner.python, "-c", "pass"], work)
    baseline = runner.timed([runner.python, "-c", "pass"], work, args.repeat)
    result = runner.timed([runner.perun, "--help"], work, args.repeat)
    return {
        "perun_core_help": result,
        "python_pass": baseline,
        "over_baseline_median": round(result["median"] - baseline["median"], 4),
        "target": TARGETS["help"],
        "ok": result["median"] < TARGETS["help"],
    }


def bench_status(runner: Runner, work: Path, args: argparse.Namespace) -> dict:
    root = work / "status-repo"
    n_commits, n_profiles, n_pending = args.status_commits, args.status_profiles, args.status_pending
    note(f"status: building {n_commits} commits")
    t0 = time.perf_counter()
    shas = build_history(root, n_commits)
    t1 = time.perf_counter()
    note(f"status: registering {n_profiles} profiles ({t1 - t0:.1f} s so far)")
    register_profiles(root, shas, n_profiles)
    write_pending(root, shas[-1], n_pending)
    t2 = time.perf_counter()
    note(f"status: setup done in {t2 - t0:.1f} s; timing perun-core --no-pager status")
    argv = [runner.perun, "--no-pager", "status"]
    out = runner.check(argv, root).stdout.decode(errors="replace")  # warm-up: fills the caches
    pending_listed = sum(1 for line in out.splitlines() if "@p" in line)
    tracked_listed = sum(1 for line in out.splitlines() if "@i" in line)
    result = runner.timed(argv, root, args.repeat)
    return {
        "status": result,
        "target": TARGETS["status"],
        "ok": result["median"] < TARGETS["status"],
        "setup": {
            "commits": n_commits,
            "registered_profiles": n_profiles,
            "pending_profiles": n_pending,
            "listed_tracked_at_head": tracked_listed,
            "listed_pending": pending_listed,
            "build_history_s": round(t1 - t0, 2),
            "register_s": round(t2 - t1, 2),
        },
    }


def bench_log_short(runner: Runner, work: Path, args: argparse.Namespace) -> dict:
    root = work / "log-repo"
    n_commits, every = args.log_commits, args.log_every
    note(f"log_short: building {n_commits} commits")
    t0 = time.perf_counter()
    shas = build_history(root, n_commits)
    t1 = time.perf_counter()
    n_profiles = len(shas[::every]) if every > 0 else 0
    note(f"log_short: registering {n_profiles} profiles (one on every {every}th commit)")
    if n_profiles:
        register_profiles(root, shas, n_profiles, every=every)
    t2 = time.perf_counter()
    cache = root / ".perun" / "cache"

    def drop_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    argv = [runner.perun, "--no-pager", "log", "-s"]
    note(f"log_short: setup done in {t2 - t0:.1f} s; timing cold runs (cache deleted before each)")
    runner.check(argv, root)  # bytecode and page cache warm; the cold runs drop the history cache again
    cold = runner.timed(argv, root, args.repeat, before=drop_cache)
    note("log_short: timing warm runs")
    out = runner.check(argv, root).stdout.decode(errors="replace")  # warm-up + sanity check
    lines = len(out.splitlines())
    warm = runner.timed(argv, root, args.repeat)
    return {
        "cold": cold,
        "warm": warm,
        "target": TARGETS["log_short"],
        "ok": warm["median"] < TARGETS["log_short"] and cold["median"] < TARGETS["log_short"],
        "ok_warm": warm["median"] < TARGETS["log_short"],
        "ok_cold": cold["median"] < TARGETS["log_short"],
        "setup": {
            "commits": n_commits,
            "registered_profiles": n_profiles,
            "output_lines": lines,
            "build_history_s": round(t1 - t0, 2),
            "register_s": round(t2 - t1, 2),
        },
    }


def make_big_profile_dict(n: int, seed: int = 1) -> dict:
    """A mixed profile with ``n`` resources: type/subtype/amount(float)/uid(37)/structure-unit-size(int)."""
    rng = random.Random(seed)
    rand = rng.random
    randrange = rng.randrange
    uids = UIDS
    subtypes = ("time delta", "time delta", "time delta", "time")
    resources = [
        {
            "type": "mixed",
            "subtype": subtypes[i & 3],
            "amount": rand() * 1000.0,
            "uid": uids[randrange(37)],
            "structure-unit-size": randrange(100_000),
        }
        for i in range(n)
    ]
    return {
        "origin": "0" * 40,
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us", "mixed(time)": "us"},
                   "cmd": "./complexity", "params": "", "workload": "input.txt"},
        "collector_info": {"name": "trace", "params": {"method": "custom", "rules": list(UIDS)}},
        "postprocessors": [],
        "snapshots": [{"time": "5.0", "resources": resources, "models": []}],
    }


def bench_profile(work: Path, args: argparse.Namespace) -> dict:
    from perun_core.profile.codec import load_profile_from_file, store_profile_at
    from perun_core.profile.model import Profile
    from perun_core.storage.objects import ObjectStore

    n = args.resources
    base = work / "profile"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    note(f"profile_1m: generating {n} resources")
    data = make_big_profile_dict(n)
    Profile.from_dict(data)  # validate once

    def fresh_profile() -> Profile:
        # A new Profile per run: the table caches its columns after the first encode.
        return Profile.from_dict(data)

    # (a) store into the object store: encode (columnar) + SHA-1 + zlib + atomic write (fsync)
    note("profile_1m: (a) ObjectStore.write_profile")
    pending: list[Any] = []
    counter = iter(range(10**9))

    def prepare_store() -> None:
        store_dir = base / f"store-{next(counter)}"
        pending[:] = [ObjectStore(store_dir), fresh_profile(), store_dir]

    def do_store() -> str:
        return pending[0].write_profile(pending[1])

    def cleanup_store(_sha: Any) -> None:
        shutil.rmtree(pending[2], ignore_errors=True)
        pending.clear()

    store_obj = measure(do_store, args.repeat, before=prepare_store, after=cleanup_store)

    # the object the load benchmarks read
    objects = ObjectStore(base / "objects")
    sha = objects.write_profile(fresh_profile())
    object_bytes = objects.path_of(sha).stat().st_size
    check = objects.read_profile(sha)
    assert len(check.snapshots[0].resources) == n
    if n <= 200_000:  # full equality check is slow for 1M rows
        assert check.snapshots[0].resources.rows() == data["snapshots"][0]["resources"]
    del check

    # (b) load from the object store, lazily (columns) and with all rows materialized
    note("profile_1m: (b) ObjectStore.read_profile (+ rows())")
    load_obj = measure(lambda: objects.read_profile(sha), args.repeat)

    def load_rows() -> Profile:
        profile = objects.read_profile(sha)
        profile.snapshots[0].resources.rows()
        return profile

    load_obj_rows = measure(load_rows, args.repeat)

    # (c) store as documented JSON
    note("profile_1m: (c) store_profile_at(indent=None)")
    json_path = base / "big.perf"
    json_profile = fresh_profile()

    def drop_json() -> None:
        with contextlib.suppress(FileNotFoundError):
            json_path.unlink()

    store_json = measure(lambda: store_profile_at(json_profile, json_path, indent=None), args.repeat,
                         before=drop_json)
    json_bytes = json_path.stat().st_size
    del json_profile

    # (d) load documented JSON
    note("profile_1m: (d) load_profile_from_file")
    load_json = measure(lambda: load_profile_from_file(json_path), args.repeat)

    target = TARGETS["profile_1m"]
    checked = {"store_object": store_obj, "load_object": load_obj, "load_object_rows": load_obj_rows,
               "store_json": store_json, "load_json": load_json}
    return {
        **checked,
        "resources": n,
        "object_bytes": object_bytes,
        "json_bytes": json_bytes,
        "target": target,
        "ok": {name: stats["median"] < target for name, stats in checked.items()},
    }


# -- main -------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--repeat", type=int, default=None,
                        help="timed runs per measurement, median reported (default 5; --quick: 3)")
    parser.add_argument("--quick", action="store_true", help="small sizes and 3 runs: a smoke test, not a benchmark")
    parser.add_argument("--workdir", type=Path, help="build scenarios here and keep them (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="keep the caller's bytecode settings (e.g. PYTHONDONTWRITEBYTECODE=1 makes every "
                             "perun-core run compile its modules) instead of a private PYTHONPYCACHEPREFIX")
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, default=list(SCENARIOS), help="scenarios to run (default: all)")
    for key, value in FULL_SIZES.items():
        parser.add_argument("--" + key.replace("_", "-"), type=int, default=None,
                            help=f"(default {value}; --quick: {QUICK_SIZES[key]})")
    args = parser.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    for key, value in sizes.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.repeat is None:
        args.repeat = 3 if args.quick else 5
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    venv_bin = venv_bin_with("perun-core")
    caller_no_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    with session(args.workdir, "perun-bench-", keep=args.keep, pycache=not args.no_bytecode_cache) as run:
        work, env = run.work, run.env
        note(f"work directory: {work}; {args.repeat} runs per measurement")
        run.result |= {
            "config": {
                "repeat": args.repeat,
                "quick": args.quick,
                "bytecode_cache": None if args.no_bytecode_cache else env["PYTHONPYCACHEPREFIX"],
                "caller_PYTHONDONTWRITEBYTECODE": caller_no_bytecode,
                "workdir": str(work),
                **{key: getattr(args, key) for key in FULL_SIZES},
            },
            "targets": TARGETS,
            "scenarios": {},
        }
        runner = Runner(env, venv_bin)
        scenarios = run.result["scenarios"]
        for name in args.only:
            if name == "help":
                scenarios["help"] = bench_help(runner, work, args)
            elif name == "status":
                scenarios["status"] = bench_status(runner, work, args)
            elif name == "log_short":
                scenarios["log_short"] = bench_log_short(runner, work, args)
            elif name == "profile_1m":
                scenarios["profile_1m"] = bench_profile(work, args)
            gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
