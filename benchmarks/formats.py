#!/usr/bin/env python3
"""Profile layouts: end-to-end postprocessing, reading and writing, the memory collector.

Three measurements (targets of issue 16 in brackets):

``postprocessby``
    ``perun-core postprocessby <pending profile> regression_analysis -m full``
    as a subprocess, from process start to the new profile written (fsync
    included), on the profile of ``benchmarks/postprocess.py`` (``--uids``
    100 x ``--points`` 10,000 = 1,000,000 resources), the pending input in
    the compact layout (what ``collect`` writes now) and, for comparison, in
    the documented layout.  Wall time (median of ``--repeat`` after a
    warm-up) and peak RSS of the child [0.5 s, 300 MB].  With ``--original
    VENV`` the original Perun (``VENV/bin/perun``) postprocesses the same
    profile converted to its 0.28 layout, side by side (its HOME and config
    directory are private to the run).
``read_write``
    in this process: the same 1,000,000-resource profile read with
    ``load_profile_from_file`` and written with ``store_profile_at``, compact
    and documented [0.15 s each, compact].
``memory``
    ``perun-core collect -c PROGRAM -a N memory`` end to end against the
    plain run of an allocation-heavy C program (``benchmarks/native.py``'s
    ``tree``: a binary tree of N nodes, one malloc per node, freed by a
    recursive walk, so every free has a call stack of its own) [3x or less].
    N is 300,000 (about 0.13 s plain); ``--memory-size N`` (repeatable)
    measures other sizes, as ``memory_N``: perun's own start-up and the
    writing of the profile are a fixed part of the cost, so the factor
    depends on how long the program runs.
    Plain and collect runs alternate (``--repeat`` pairs after a warm-up
    pair); ``factor`` is the ratio of the medians, ``paired_factor`` the
    median of the per-pair ratios, ``cpu_s`` the CPU time (user + system,
    the program and every process perun starts included), which a loaded
    machine inflates less than wall time.  Symbol answers for system libraries are
    cached on disk after the first run (as for a user profiling the same
    program again), the warm-up pair fills that cache.

Usage::

    .venv/bin/python benchmarks/formats.py > formats.json
    .venv/bin/python benchmarks/formats.py --quick
    .venv/bin/python benchmarks/formats.py --original /tmp/orig-venv
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from postprocess import INPUT_NAME, build_profile, run_once  # noqa: E402
from harness import isolate_in, load_average, machine_info, note, venv_bin_with, work_directory  # noqa: E402

TARGETS = {"postprocess_wall_s": 0.5, "postprocess_rss_mb": 300.0, "read_s": 0.15, "write_s": 0.15,
           "memory_factor": 3.0}


def stats(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4), "n": len(values)}


def setup(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """A repository with the profile pending twice (compact and documented); run in a child process."""
    from gitrepo import fast_linear_history

    from perun_core import api
    from perun_core.profile.codec import store_profile_at
    from perun_core.profile.model import Profile

    root = work / "repo"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    [head] = fast_linear_history(root, 1)
    api.init(root)
    note(f"building the profile: {args.uids} uids x {args.points} points")
    profile = Profile.from_dict(build_profile(args.uids, args.points, args.seed, False))
    profile.origin = head
    inputs = {}
    for layout in ("compact", "documented"):
        path = root / ".perun" / "jobs" / f"{layout}-{INPUT_NAME}"
        store_profile_at(profile, path, indent=None, layout=layout)
        inputs[layout] = str(path)
        note(f"pending {layout}: {path.stat().st_size / 1e6:.1f} MB")
    if args.original:
        path = work / "original-0.28.perf"
        path.write_text(json.dumps(to_original_028(profile, head)))
        inputs["original"] = str(path)
    return {"root": str(root), "inputs": inputs}


def to_original_028(profile: Any, origin: str) -> dict:
    """The benchmark profile in the original's 0.28 layout (one resource key per uid)."""
    table = profile.global_region.resources
    uids, sizes, amounts = table.column("uid"), table.column("structure-unit-size"), table.column("amount")
    resources: dict[str, dict] = {}
    type_map: dict[str, dict] = {}
    for uid, size, amount in zip(uids, sizes, amounts):
        key = f"{uid}#0"
        if key not in resources:
            resources[key] = {"amount": [], "structure-unit-size": []}
            type_map[key] = {"subtype": "time delta", "time": "1.0s", "type": "mixed", "uid": uid}
        resources[key]["amount"].append(amount)
        resources[key]["structure-unit-size"].append(size)
    header = {"type": "mixed", "cmd": "./complexity", "exitcode": 0, "workload": "input.txt", "label": "",
              "units": {"mixed(time delta)": "us"}}
    return {"resources": resources, "resource_type_map": type_map, "models": [], "origin": origin,
            "header": header, "machine": {}, "collector_info": {"name": "complexity", "params": {}},
            "postprocessors": []}


def bench_postprocess(work: Path, built: dict, env: dict[str, str], args: argparse.Namespace) -> dict:
    perun = venv_bin_with("perun-core") / "perun-core"
    root = Path(built["root"])
    jobs = root / ".perun" / "jobs"
    keep = {p.name for p in jobs.iterdir()}
    results: dict[str, Any] = {}
    for layout in args.layouts:
        argv = [str(perun), "postprocessby", built["inputs"][layout], "regression_analysis", "-m", "full"]
        note(f"postprocessby ({layout} input)")
        run_once(argv, root, env, jobs, keep)
        walls, rss, cpus = [], [], []
        for _ in range(args.repeat):
            wall, peak, cpu = run_once(argv, root, env, jobs, keep)
            walls.append(wall)
            rss.append(peak)
            cpus.append(cpu)
        results[layout] = {"wall_s": stats(walls), "cpu_s": stats(cpus), "peak_rss_mb": round(max(rss), 1)}
        note(f"  wall {statistics.median(walls):.3f} s, CPU {statistics.median(cpus):.3f} s, "
             f"peak RSS {max(rss):.0f} MB")
    if args.original:
        results["original"] = original_postprocess(work, built, args)
    return results


def original_postprocess(work: Path, built: dict, args: argparse.Namespace) -> dict:
    """The original Perun on the same profile (its 0.28 layout), in a repository of its own."""
    perun = Path(args.original) / "bin" / "perun"
    env = {**os.environ, "HOME": args.original_home, "PERUN_CONFIG_DIR": args.original_config}
    repo = work / "orig-repo"
    if not repo.exists():
        repo.mkdir()
        for command in (["git", "init", "-q", "."],
                        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "s"],
                        [str(perun), "init", "--vcs-type", "git", "."]):
            subprocess.run(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
    argv = [str(perun), "postprocessby", built["inputs"]["original"], "regression-analysis", "-m", "full"]
    walls, rss = [], []
    note("original: " + " ".join(argv[1:]))
    for _ in range(max(1, args.repeat // 2)):
        jobs = repo / ".perun" / "jobs"
        start = time.perf_counter()
        process = subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert process.stderr is not None
        err = process.stderr.read()
        _pid, status, usage = os.wait4(process.pid, 0)
        walls.append(time.perf_counter() - start)
        rss.append(usage.ru_maxrss / 1024.0)
        if os.waitstatus_to_exitcode(status) != 0:
            return {"error": err.decode(errors="replace")[-500:]}
        shutil.rmtree(jobs, ignore_errors=True)
        jobs.mkdir()
    note(f"  wall {statistics.median(walls):.3f} s, peak RSS {max(rss):.0f} MB")
    return {"wall_s": stats(walls), "peak_rss_mb": round(max(rss), 1)}


def bench_read_write(built: dict, args: argparse.Namespace) -> dict:
    import gc

    from perun_core.profile.codec import load_profile_from_file, store_profile_at

    results = {}
    for layout in args.layouts:
        path = Path(built["inputs"][layout])
        reads, read_cpus, writes = [], [], []
        for _ in range(args.repeat):
            gc.collect()
            start, cpu = time.perf_counter(), time.process_time()
            profile = load_profile_from_file(path)
            reads.append(time.perf_counter() - start)
            read_cpus.append(time.process_time() - cpu)
            target = path.with_name(f"written-{layout}.perf")
            start = time.perf_counter()
            store_profile_at(profile, target, indent=None, layout=layout)
            writes.append(time.perf_counter() - start)
            count = profile.resource_count()
            del profile
            target.unlink()
        results[layout] = {"resources": count, "read_s": stats(reads), "read_cpu_s": stats(read_cpus),
                           "write_s": stats(writes), "bytes": path.stat().st_size}
        note(f"{layout}: read {statistics.median(reads):.3f} s ({statistics.median(read_cpus):.3f} s CPU), "
             f"write {statistics.median(writes):.3f} s")
    return results


def bench_memory(work: Path, args: argparse.Namespace) -> dict:
    """Plain run and ``collect ... memory`` end to end, alternating, ``--repeat`` pairs after a warm-up pair.

    The machine may be shared: each pair runs the two back to back, so the
    median of the per-pair ratios is less sensitive to load that comes and
    goes than the ratio of the two medians (both are reported).
    """
    import native

    size = 30000 if args.quick else args.memory_size
    binary = native.compile_c(work, "tree", native.TREE_C)
    argv = [str(binary), str(size)]
    native.cli_seconds(work, argv, 1)  # the scratch repository, the preload library, the caches
    repo, env = work / "cli-repo", native.scratch_env(work / "cli-home")
    command = [*native.perun_cli(), "collect", "-f", "-c", argv[0], "-a", " ".join(argv[1:]), "memory"]
    plain, collect, plain_cpu, collect_cpu = [], [], [], []

    def timed(run: list[str], **options: Any) -> tuple[float, float]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(run, stdout=subprocess.DEVNULL, check=True, **options)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime

    for _ in range(args.repeat + 1):
        wall, cpu = timed(argv)
        plain.append(wall)
        plain_cpu.append(cpu)
        shutil.rmtree(repo / ".perun" / "jobs", ignore_errors=True)
        wall, cpu = timed(command, cwd=repo, env=env)
        collect.append(wall)
        collect_cpu.append(cpu)
    plain, collect, plain_cpu, collect_cpu = plain[1:], collect[1:], plain_cpu[1:], collect_cpu[1:]
    ratios = [c / p for p, c in zip(plain, collect)]
    factor = statistics.median(collect) / statistics.median(plain)
    note(f"memory tree {size}: plain {statistics.median(plain):.3f} s, collect end to end "
         f"{statistics.median(collect):.3f} s ({factor:.1f}x; paired {statistics.median(ratios):.1f}x)")
    return {"allocations": size, "plain_s": stats(plain), "collect_s": stats(collect),
            "factor": round(factor, 2), "paired_factor": stats(ratios),
            "cpu_s": {"plain": stats(plain_cpu), "collect": stats(collect_cpu),
                      "factor": round(statistics.median(collect_cpu) / statistics.median(plain_cpu), 2)}}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uids", type=int, default=100)
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="10 x 1,000 points, 2 repeats, a smaller program")
    parser.add_argument("--original", metavar="VENV", help="also time the original Perun installed in VENV")
    parser.add_argument("--original-home", default="/tmp/orig-home", help="HOME of the original's runs")
    parser.add_argument("--original-config", default="/tmp/orig-cfg", help="PERUN_CONFIG_DIR of the original's runs")
    parser.add_argument("--only", choices=("postprocess", "read_write", "memory"), action="append")
    parser.add_argument("--layout", choices=("compact", "documented"), action="append", dest="layouts",
                        help="layouts of the postprocess and read_write inputs (repeatable; default both)")
    parser.add_argument("--memory-size", type=int, action="append", dest="memory_sizes",
                        help="nodes of the memory benchmark's tree (repeatable: one measurement per size; "
                        "300,000 nodes run about 0.13 s plain)")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.uids, args.points, args.repeat = 10, 1_000, 2
    args.layouts = list(dict.fromkeys(args.layouts or ("compact", "documented")))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work, cleanup = work_directory(args.workdir, "perun-bench-formats-")
    env = isolate_in(work, work / "pycache")
    if args.setup_only:
        print(json.dumps(setup(work, args)))
        return 0
    only = set(args.only or ("postprocess", "read_write", "memory"))
    info = machine_info()
    try:
        child = [sys.executable, __file__, "--setup-only", "--workdir", str(work), "--uids", str(args.uids),
                 "--points", str(args.points), "--seed", str(args.seed),
                 *(["--original", args.original] if args.original else [])]
        built = json.loads(subprocess.run(child, check=True, stdout=subprocess.PIPE, env=env).stdout)
        results: dict[str, Any] = {}
        if "postprocess" in only:
            results["postprocess"] = bench_postprocess(work, built, env, args)
        if "read_write" in only:
            results["read_write"] = bench_read_write(built, args)
        if "memory" in only:
            sizes = list(dict.fromkeys(args.memory_sizes or [300000]))
            for size in sizes:
                args.memory_size = size
                results["memory" if size == sizes[0] else f"memory_{size}"] = bench_memory(work, args)
        if (load := load_average()) is not None:
            info["loadavg_end"] = load
        print(json.dumps({"machine": info, "targets": TARGETS,
                          "config": {"uids": args.uids, "points": args.points, "repeat": args.repeat},
                          "results": results}, indent=2))
    finally:
        if cleanup:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
