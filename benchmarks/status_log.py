#!/usr/bin/env python3
"""``status`` and ``log -s`` side by side with the original Perun, as a user runs them.

Builds once, in a temporary directory (or ``--workdir``), a git repository of
``--commits`` linear commits (200) with ``--profiles`` time profiles (50,
two per commit on every k-th commit, HEAD included) and ``--pending``
pending profiles of HEAD (3) plus as many of an older commit:

``shared``
    ``perun-core init --compat``, the repository both tools read; its
    profiles are registered by the original's own ``perun add -m SHA``
    (with ``--original``; otherwise by ``perun-core add``), so its indexes
    and objects are the original's.
``native``
    plain ``perun-core init``, the same profiles registered by
    ``perun-core add``: perun's own layout, as a perun user has it.

Each command is then run ``--repeat`` times as a new process (stdout to
/dev/null, no terminal, so neither tool pages or colours), the tools taking
turns in every round so load that comes and goes hits both alike, after one
untimed warm-up run each (bytecode, page cache, perun's history cache).
Reported per tool and command: wall and CPU time (user + system of the
child) as median, min and max; ``speedup`` is the original's median over
perun's on the shared repository, wall and CPU.  The load average is taken
at the start and the end.

Usage::

    .venv/bin/python benchmarks/status_log.py --original /path/to/orig-venv \\
        --original-home /scratch/home --original-config /scratch/home/cfg > status_log.json
    .venv/bin/python benchmarks/status_log.py --quick      # perun alone, 3 runs
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

from harness import note, session, venv_bin_with  # noqa: E402

COMMANDS = {"status": ["status"], "log_short": ["log", "-s"]}
CMDS = ("./sort", "./search", "./hash", "./tree")


def profile_028(origin: str, cmd: str, seed: int) -> dict:
    """A time profile in the original's 0.28 layout (both tools read it), with three runs."""
    amounts = [round(0.05 + (seed * 7919 + i * 104729) % 10007 / 1e5, 6) for i in range(3)]
    key = f"{cmd}#0"
    return {
        "origin": origin,
        "header": {"type": "time", "cmd": cmd, "workload": "input.txt", "exitcode": 0, "label": "",
                   "units": {"time": "s"}},
        "resources": {key: {"amount": amounts}},
        "resource_type_map": {key: {"type": "time", "subtype": "real", "uid": cmd, "time": "1.0s"}},
        "models": [], "machine": {}, "postprocessors": [],
        "collector_info": {"name": "time", "params": {"repeat": 3, "warmup": 1}},
    }


def pending_name(cmd: str, number: int) -> str:
    return f"{cmd[2:]}-[input.txt]-2024-01-{number % 28 + 1:02d}-12-{number // 28 % 60:02d}-{number % 60:02d}.perf"


def write_profiles(jobs: Path, sha: str, count: int, first: int) -> list[str]:
    """``count`` pending profiles of commit ``sha`` in ``jobs``; their file names."""
    names = []
    for i in range(first, first + count):
        cmd = CMDS[i % len(CMDS)]
        name = pending_name(cmd, i)
        (jobs / name).write_text(json.dumps(profile_028(sha, cmd, i)))
        names.append(name)
    return names


class Tool:
    """One command-line tool: how to start it, in which environment."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        self.name, self.argv, self.env = name, argv, env

    def run(self, args: list[str], cwd: Path) -> tuple[float, float, str]:
        """Run once as a new process: (wall seconds, CPU seconds of the child, stderr); exits on failure."""
        start = time.perf_counter()
        process = subprocess.Popen([*self.argv, *args], cwd=cwd, env=self.env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert process.stderr is not None
        err = process.stderr.read()
        _pid, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{self.name} {' '.join(args)} failed in {cwd}:\n{err.decode(errors='replace')}")
        return wall, usage.ru_utime + usage.ru_stime, err.decode(errors="replace")

    def output(self, args: list[str], cwd: Path) -> str:
        done = subprocess.run([*self.argv, *args], cwd=cwd, env=self.env, capture_output=True, text=True,
                              timeout=600, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{self.name} {' '.join(args)} failed in {cwd}:\n{done.stderr}")
        return done.stdout


def build(work: Path, ours: Tool, original: Tool | None, args: argparse.Namespace) -> dict[str, Path]:
    """The ``shared`` and ``native`` repositories (see the module's docstring)."""
    from gitrepo import fast_linear_history

    repos = {}
    for kind in ("shared", "native"):
        root = work / kind
        shutil.rmtree(root, ignore_errors=True)
        shas = fast_linear_history(root, args.commits)
        ours.output(["init", *(["--compat"] if kind == "shared" else []), str(root)], work)
        registrar = original if kind == "shared" and original is not None else ours
        jobs = root / ".perun" / "jobs"
        per_commit = 2
        # every k-th commit counted back from HEAD, as many as the profiles need
        step = max(1, args.commits * per_commit // max(args.profiles, 1))
        targets = shas[::-step][: -(-args.profiles // per_commit)]
        note(f"{kind}: registering {args.profiles} profiles on {len(targets)} commits with {registrar.name}")
        written = 0
        for sha in targets:
            count = min(per_commit, args.profiles - written)
            names = write_profiles(jobs, sha, count, written)
            registrar.output(["add", "-m", sha, *(str(jobs / n) for n in names)], root)
            written += count
        write_profiles(jobs, shas[-1], args.pending, 1000)
        write_profiles(jobs, shas[len(shas) // 2], args.pending, 2000)
        repos[kind] = root
    return repos


def summary(samples: list[float]) -> dict[str, Any]:
    return {"median": round(statistics.median(samples), 4), "min": round(min(samples), 4),
            "max": round(max(samples), 4), "n": len(samples)}


def time_side_by_side(tools: list[tuple[Tool, Path]], args: list[str], repeat: int) -> dict[str, dict]:
    """Each (tool, repository) runs ``args`` once untimed, then ``repeat`` rounds in turn."""
    for tool, root in tools:
        tool.run(args, root)
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for _ in range(repeat):
        for tool, root in tools:
            key = f"{tool.name}@{root.name}"
            wall, cpu, _err = tool.run(args, root)
            walls.setdefault(key, []).append(wall)
            cpus.setdefault(key, []).append(cpu)
    return {key: {"wall_s": summary(walls[key]), "cpu_s": summary(cpus[key])} for key in walls}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--profiles", type=int, default=50)
    parser.add_argument("--pending", type=int, default=3, help="pending profiles of HEAD and of one older commit")
    parser.add_argument("-n", "--repeat", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="3 runs")
    parser.add_argument("--original", metavar="VENV", help="also time the original Perun installed in VENV")
    parser.add_argument("--original-home", default="/tmp/orig-home", help="HOME of the original's runs")
    parser.add_argument("--original-config", default="/tmp/orig-cfg", help="PERUN_CONFIG_DIR of the original's runs")
    parser.add_argument("--workdir", type=Path, help="build (or rebuild) here and keep it")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat = 3
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with session(args.workdir, "perun-bench-status-") as run:
        work, env, result = run.work, run.env, run.result
        ours = Tool("perun", [str(venv_bin_with("perun-core") / "perun-core"), "--no-pager"], env)
        original = None
        if args.original:
            original_env = {**env, "HOME": args.original_home, "PERUN_CONFIG_DIR": args.original_config, "TZ": "UTC"}
            Path(args.original_config).mkdir(parents=True, exist_ok=True)
            original = Tool("original", [str(Path(args.original) / "bin" / "perun"), "--no-color"], original_env)
        result["config"] = {"commits": args.commits, "profiles": args.profiles, "pending": args.pending,
                            "repeat": args.repeat}
        repos = build(work, ours, original, args)
        for name, command in COMMANDS.items():
            tools = [(ours, repos["shared"]), (ours, repos["native"])]
            if original is not None:
                tools.insert(0, (original, repos["shared"]))
            note(f"timing {' '.join(command)}: {args.repeat} rounds of {len(tools)}")
            timings = time_side_by_side(tools, command, args.repeat)
            if original is not None:
                theirs, mine = timings["original@shared"], timings["perun@shared"]
                timings["speedup"] = {
                    unit: round(theirs[unit]["median"] / mine[unit]["median"], 2) for unit in ("wall_s", "cpu_s")}
            result[name] = timings
            note(f"{name}: " + json.dumps({k: v.get("wall_s", v) for k, v in timings.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
