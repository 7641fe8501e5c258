#!/usr/bin/env python3
"""Timings of sharing profiles through a git remote, and the cost of a bisect in collections.

* ``push``: ``perun-core push`` of ``--profiles`` (1,000) registered profiles
  totalling about ``--megabytes`` (50) MB of objects, spread over 20 commits,
  from a clone to a local bare repository;
* ``pull``: ``perun-core pull`` of all of them into a second clone;
* ``push_incremental``: ``perun-core push`` after 10 more profiles were
  registered in the first clone (what a CI job does after a collection);
* ``bisect``: ``perun-core bisect`` (the API, the default strategy) over a
  history of ``--commits`` (64) commits whose program (a Python loop;
  CPU-bound) runs ``--factor`` (2) times longer from one commit on, nothing
  stored, ``--repeat`` times: whether it names the culprit each time (and
  whether a wrong one was reported as certain), the measurement windows
  run (the ideal is about log2 of the commits, plus GOOD against BAD and the
  re-check), the wall time, which depends on the machine.

Commands run as the installed ``perun-core`` console script in an isolated
environment (private HOME); the wall time of each is reported with the
machine's load average.  One JSON object goes to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import statistics
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import note, repeat_bisects, session, venv_bin_with  # noqa: E402
from run import Runner  # noqa: E402


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def profile_dict(seed: int, values: int) -> dict:
    """A time profile of ``values`` random run times: about 9 compressed bytes per value."""
    rng = random.Random(seed)
    resources = [{"amount": rng.random(), "type": "time", "subtype": "real", "uid": f"./bench{seed % 7}",
                  "order": i + 1} for i in range(values)]
    return {"header": {"type": "time", "units": {"time": "s"}, "cmd": f"./bench{seed % 7}", "params": str(seed),
                       "workload": "input"},
            "collector_info": {"name": "time", "params": {"repeat": values}}, "postprocessors": [],
            "global": {"timestamp": 1.0, "resources": resources, "models": []}}


def register(root: Path, shas: list[str], first: int, count: int, values: int) -> int:
    from perun_core.profile.model import Profile
    from perun_core.storage.repository import PerunRepository

    total = 0
    with PerunRepository(root) as repo:
        for i in range(first, first + count):
            entry = repo.register(shas[i % len(shas)], Profile.from_dict(profile_dict(i, values)), f"p{i}.perf",
                                  1_700_000_000.0 + i)
            total += repo.objects.path_of(entry.checksum).stat().st_size
    return total


def setup_clones(work: Path, commits: int) -> tuple[Path, Path, Path, list[str]]:
    from perun_core import api

    remote, a, b = work / "remote.git", work / "a", work / "b"
    for path in (remote, a, b):
        shutil.rmtree(path, ignore_errors=True)
    git("init", "-q", "--bare", "-b", "master", str(remote), cwd=work)
    a.mkdir()
    git("init", "-q", "-b", "master", cwd=a)
    for number in range(commits):
        (a / "n.txt").write_text(f"{number}\n")
        git("add", "n.txt", cwd=a)
        git("-c", "user.name=B", "-c", "user.email=b@example.com", "commit", "-q", "-m", f"c{number}", cwd=a)
    git("remote", "add", "origin", str(remote), cwd=a)
    git("push", "-q", "origin", "master", cwd=a)
    git("clone", "-q", str(remote), str(b), cwd=work)
    api.init(a)
    api.init(b)
    return remote, a, b, git("rev-list", "--reverse", "HEAD", cwd=a).split()


def bench_transfer(runner: Runner, work: Path, args: argparse.Namespace) -> dict:
    remote, a, b, shas = setup_clones(work, 20)
    values = max(10, int(args.megabytes * 1e6 / args.profiles / 9))
    note(f"registering {args.profiles} profiles of {values} values each")
    size = register(a, shas, 0, args.profiles, values)
    note(f"{size / 1e6:.1f} MB of objects; pushing")
    result: dict = {"profiles": args.profiles, "objects_mb": round(size / 1e6, 1)}
    result["push_s"] = round(runner.time_once([runner.perun, "push", "-q"], a), 2)
    result["remote_mb"] = round(sum(p.stat().st_size for p in remote.rglob("*") if p.is_file()) / 1e6, 1)
    note("pulling into the second clone")
    result["pull_s"] = round(runner.time_once([runner.perun, "pull", "-q"], b), 2)
    pulled = sum(1 for p in (b / ".perun" / "objects").rglob("*") if p.is_file())
    result["pulled_files"] = pulled
    register(a, shas, args.profiles, 10, values)
    note("incremental push of 10 more")
    result["push_incremental_s"] = round(runner.time_once([runner.perun, "push", "-q"], a), 2)
    result["pull_incremental_s"] = round(runner.time_once([runner.perun, "pull", "-q"], b), 2)
    result["status_s"] = round(runner.time_once([runner.perun, "--no-pager", "status"], b), 2)
    return result


WORK_PY = "import sys\nn = 0\nfor i in range({loops}):\n    n += i\n"


def bench_bisect(work: Path, args: argparse.Namespace) -> dict:
    from gitrepo import make_repo

    from perun_core import api

    root = work / "bisect"
    shutil.rmtree(root, ignore_errors=True)
    culprit_at = args.commits * 5 // 8
    loops = 1_000_000
    make_repo(root, [{"files": {"work.py": WORK_PY.format(loops=int(loops * (args.factor if i >= culprit_at else 1))),
                                "n.txt": f"{i}\n"}, "message": f"c{i}"} for i in range(args.commits)])
    api.init(root)
    for key, value in {"cmds": [sys.executable], "args": ["work.py"],
                       "collectors": [{"name": "time", "params": {"warmup": 0, "repeat": 3}}]}.items():
        api.config_set(key, value, scope="local", cwd=root)
    shas = git("rev-list", "--reverse", "HEAD", cwd=root).split()

    def bisect_once() -> dict:
        result = api.bisect(shas[0], shas[-1], cwd=root)
        named = shas.index(result.culprit) if result.culprit in shas else None
        return {"found": result.culprit == shas[culprit_at], "named": named, "certain": result.certain,
                "collections": result.collections, "tested": len({s.commit for s in result.steps}) + 1}

    runs = repeat_bisects(args.repeat, f"{len(shas)} commits (x{args.factor} slower from c{culprit_at})", bisect_once)
    return {"commits": len(shas), "factor": args.factor, "culprit": culprit_at,
            "found": sum(run["found"] for run in runs), "wrong_and_certain": sum(
                1 for run in runs if run["named"] is not None and not run["found"] and run["certain"]),
            "bisects": len(runs), "ideal_collections": 2 + (len(shas) - 2).bit_length(),
            "median_collections": statistics.median(run["collections"] for run in runs),
            "median_wall_s": round(statistics.median(run["wall_s"] for run in runs), 2), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--megabytes", type=float, default=50.0)
    parser.add_argument("--commits", type=int, default=64)
    parser.add_argument("--factor", type=float, default=2.0, help="how much slower the culprit makes the program")
    parser.add_argument("--repeat", type=int, default=1, help="bisects run in one process")
    parser.add_argument("--only", choices=("transfer", "bisect"))
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    with session(args.workdir, "perun-bench-remote-") as run:
        runner = Runner(run.env, venv_bin_with("perun-core"))
        if args.only in (None, "transfer"):
            run.result["transfer"] = bench_transfer(runner, run.work, args)
        if args.only in (None, "bisect"):
            run.result["bisect"] = bench_bisect(run.work, args)


if __name__ == "__main__":
    main()
