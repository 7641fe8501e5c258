#!/usr/bin/env python3
"""check all and bisect on a real project's history around a documented slow-down.

The project is lizard (a code-complexity analyser in pure Python, no build
step).  Its pull request #248, merged on the first-parent line as fbfffa9,
added a lazy ``<...>...</...>`` alternative to the tokenizer's regular
expression; issue terryyin/lizard#253 reported the release slowed down
about tenfold (2 min 25 s to 24 min 40 s on 3910 files) and 03fe38e
("fix the performance issue") removed the alternative again.

Give the path of a clone of https://github.com/terryyin/lizard.  The
script clones it once more into a work directory (the given clone is not
touched) and, with the ``perun-core`` console script in an isolated
environment (private HOME):

1. ``init``; a job matrix of one time job: this Python runs a small driver
   that imports the commit's ``lizard`` (the temporary worktree is the
   current directory) and analyses a generated C file of ``--lines``
   functions, every fourth with a ``<`` comparison (the character the slow
   alternative starts at);
2. ``run -m C ... matrix`` at each commit of the first-parent line from
   ``--first`` to ``--last`` (the profiles stay pending, with their commit
   as origin);
3. ``check all``, whose output is printed;
4. ``bisect GOOD BAD`` ``--bisects`` times (GOOD the first commit, BAD the
   fix's parent), each in a fresh copy of the repository with only GOOD's
   and BAD's pending profiles, so every bisect measures its candidates: the
   commit each names, whether it was certain, its measurement windows and
   wall time.

One JSON object goes to stdout, progress and the commands' output to stderr.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import note, repeat_bisects, session, venv_bin_with  # noqa: E402

#: The first-parent line examined: 13 commits before the fix, the fix, one after.
FIRST, LAST = "e34de63", "8608bf0"
CULPRIT, FIX = "fbfffa9", "03fe38e"
SOURCE = "https://github.com/terryyin/lizard/issues/253 (fixed by 03fe38e; the alternative came with PR #248)"

DRIVER = """import os
import sys

sys.path.insert(0, os.getcwd())  # the commit's worktree
import lizard

with open(sys.argv[1]) as source:
    code = source.read()
print(len(lizard.analyze_file.analyze_source_code("input.c", code).function_list))
"""


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def input_file(lines: int) -> str:
    body = []
    for number in range(lines):
        test = "a < b" if number % 4 == 0 else "a != b"
        body.append(f"int f{number}(int a, int b) {{ if ({test}) return a - b; return b + a * {number}; }}")
    return "\n".join(body) + "\n"


def flagged_changes(report: str) -> dict[str, list[str]]:
    """``check all``'s changes by commit (short sha): e.g. ``Degradation [user] x3.4``."""
    flagged: dict[str, list[str]] = {}
    commit = ""
    change = ""
    for row in report.splitlines():
        header = re.match(r"\* ([0-9a-f]{7,}):", row)
        if header:
            commit = header.group(1)[:7]
        found = re.match(r"\|\s+[-+~]\s+(\w+)\s+at .*?(\[\w+\])?$", row)
        if found and ("Degradation" in found.group(1) or "Optimization" in found.group(1)):
            change = f"{found.group(1)} {found.group(2) or ''}".strip()
            flagged.setdefault(commit, []).append(change)
        ratio = re.search(r"\(x([0-9.]+),", row)
        if ratio and change and flagged.get(commit):
            flagged[commit][-1] = f"{change} x{ratio.group(1)}"
            change = ""
    return flagged


def perun(env: dict, binary: Path, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(binary / "perun-core"), *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise SystemExit(f"perun-core {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done


def fresh_copy(base: Path, copy: Path, good: str, bad: str) -> None:
    """``copy`` made anew from ``base``, keeping only GOOD's and BAD's pending profiles."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(base, copy, symlinks=True)
    jobs = copy / ".perun" / "jobs"
    for path in jobs.iterdir():
        text = path.read_text(errors="replace")
        if good not in text and bad not in text:
            path.unlink()


def bisect_once(env: dict, binary: Path, copy: Path, good: str, bad: str) -> dict:
    """``perun-core bisect GOOD BAD`` in ``copy``: its exit code, the commit it named, how certain, windows run."""
    done = perun(env, binary, "bisect", good, bad, cwd=copy, check=False)
    sys.stderr.write(done.stderr + done.stdout)
    named = re.search(r"first degraded commit: ([0-9a-f]{40})", done.stdout)
    windows = re.search(r"(\d+) collections? run", done.stdout)
    return {"exit": done.returncode, "named": named.group(1)[:7] if named else None,
            "certain": bool(named) and "uncertain:" not in done.stdout,
            "windows": int(windows.group(1)) if windows else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", type=Path, help="a clone of https://github.com/terryyin/lizard")
    parser.add_argument("--first", default=FIRST)
    parser.add_argument("--last", default=LAST)
    parser.add_argument("--lines", type=int, default=600, help="functions in the analysed C file")
    parser.add_argument("--bisects", type=int, default=5)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    with session(args.workdir, "perun-bench-history-") as run:
        work, env = run.work, run.env
        binary = venv_bin_with("perun-core")
        repo = work / "lizard"
        shutil.rmtree(repo, ignore_errors=True)
        git("clone", "-q", str(args.clone.resolve()), str(repo), cwd=work)
        git("checkout", "-q", args.last, cwd=repo)
        line = git("rev-list", "--first-parent", "--reverse", f"{args.first}~1..{args.last}", cwd=repo).split()
        fix = git("rev-parse", FIX, cwd=repo)
        culprit = git("rev-parse", CULPRIT, cwd=repo)
        (work / "driver.py").write_text(DRIVER)
        (work / "input.c").write_text(input_file(args.lines))
        perun(env, binary, "init", cwd=repo)
        for key, value in (("cmds", f"['{sys.executable}']"), ("args", f"['{work / 'driver.py'}']"),
                           ("workloads", f"['{work / 'input.c'}']"),
                           ("collectors", "[{name: time, params: {warmup: 1, repeat: 5}}]")):
            perun(env, binary, "config", "--local", "set", key, value, cwd=repo)
        note(f"collecting at {len(line)} commits of lizard ({line[0][:7]}..{line[-1][:7]})")
        collect_started = time.perf_counter()
        perun(env, binary, "run", *[arg for sha in line for arg in ("-m", sha)], "matrix", cwd=repo)
        collect_s = time.perf_counter() - collect_started
        note("check all")
        checked = perun(env, binary, "--no-pager", "check", "all", cwd=repo, check=False)
        sys.stderr.write(checked.stdout)
        flagged = flagged_changes(checked.stdout)
        good, bad = line[0], (line[line.index(fix) - 1] if fix in line else line[-1])
        copy = work / "copy"
        runs = repeat_bisects(args.bisects, f"{good[:7]}..{bad[:7]} (documented culprit {culprit[:7]})",
                              lambda: bisect_once(env, binary, copy, good, bad),
                              prepare=lambda: fresh_copy(repo, copy, good, bad), digits=1)
        run.result |= {"project": "terryyin/lizard", "regression": SOURCE,
                  "commits": [sha[:7] for sha in line], "culprit": culprit[:7], "fix": fix[:7],
                  "collect_s": round(collect_s, 1), "check_all_exit": checked.returncode,
                  "check_all_flagged": flagged,
                  "bisect": {"good": good[:7], "bad": bad[:7], "found": sum(r["named"] == culprit[:7] for r in runs),
                             "certain_and_wrong": sum(r["certain"] and r["named"] != culprit[:7] for r in runs),
                             "runs": runs}}


if __name__ == "__main__":
    main()
