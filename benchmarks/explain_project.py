#!/usr/bin/env python3
"""Explain a known regression of a real C++ project: cpp-peglib's "Fix #286" (6201458).

That commit made ``peg::Trie::match`` (the dictionary rule ``'Jan' |
'January' | ...``) copy the rest of the input into a ``std::string`` at
every character it tries, so parsing lines of a large buffer one by one
grows quadratically with the buffer.  Given a clone of cpp-peglib
(``--peglib``; its history is not fetched here), this script

1. clones it into a scratch directory at 6201458, so ``check head``
   compares the commit before (4e305b4) with it;
2. configures perun to build a small program of its own (kept outside the
   repository, so only peglib.h is the project's code) at each commit with
   ``g++ -O2 -g`` and to time it on ``--lines`` lines of month names;
3. runs ``check -c head`` (the time profiles; untimed), then
   ``check head --explain --explain-budget SECONDS`` (timed: wall and CPU of
   the perun process and its children), with the collector explain chooses.

Printed as one JSON object: the function named first (expected:
``peg::Trie::match``, with file and line in peglib.h), the collector, its
notes, the totals, the time taken and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from run import isolated_env  # noqa: E402

PERUN = str(Path(sys.executable).parent / "perun-core")
REGRESSION = "6201458f3b685ddc93d1729893e292ded7c9c609"
PROGRAM = r'''// Lines of month names parsed one by one with a dictionary rule, all of them in one buffer.
#include <cstdio>
#include <cstdlib>
#include <string>
#include "peglib.h"

int main(int argc, char **argv) {
    size_t lines = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
    peg::parser parser(R"(
        START <- (MONTH / ' ')*
        MONTH <- 'January' | 'February' | 'March' | 'April' | 'May' | 'June' | 'July' | 'August' |
                 'September' | 'October' | 'November' | 'December' | 'Jan' | 'Feb' | 'Mar' | 'Apr' |
                 'Jun' | 'Jul' | 'Aug' | 'Sep' | 'Oct' | 'Nov' | 'Dec'
    )");
    if (!parser) return 2;
    const std::string line = "January Feb March Apr May June Jul August Sep October\n";
    std::string text;
    for (size_t i = 0; i < lines; i++) text += line;
    size_t parsed = 0;
    for (size_t at = 0; at < text.size(); at += line.size())
        parsed += parser.parse_n(text.data() + at, line.size() - 1);
    std::printf("%zu of %zu lines\n", parsed, lines);
    return parsed == lines ? 0 : 1;
}
'''


def perun(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PERUN, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peglib", required=True, type=Path, help="a clone of github.com/yhirose/cpp-peglib")
    parser.add_argument("--lines", type=int, default=2000, help="lines of month names the program parses")
    parser.add_argument("--budget", type=float, default=240.0, help="--explain-budget in seconds")
    options = parser.parse_args()
    out: dict = {"load_average_before": os.getloadavg()[0], "cpus": os.cpu_count(), "lines": options.lines,
                 "budget_s": options.budget}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        env = isolated_env(workdir / "home", workdir / "pycache")
        env["TMPDIR"] = str(workdir)
        root = workdir / "cpp-peglib"
        subprocess.run(["git", "-c", "advice.detachedHead=false", "clone", "-q", "--no-local", str(options.peglib),
                        str(root)], check=True, env=env)
        subprocess.run(["git", "checkout", "-q", "-B", "regression", REGRESSION], cwd=root, check=True, env=env)
        program = workdir / "months.cc"
        program.write_text(PROGRAM)
        perun(env, root, "init")
        settings = {"execute.pre_run": [f"g++ -O2 -g -std=c++17 -I. -o months {program}"], "cmds": ["./months"],
                    "workloads": [str(options.lines)], "collectors": [{"name": "time", "params": {"repeat": 3}}]}
        for key, value in settings.items():
            done = perun(env, root, "config", "--local", "set", key, json.dumps(value))
            if done.returncode != 0:
                sys.exit(f"config set {key} failed: {done.stderr.strip()}")
        print("building both commits and timing them (check -c head) ...", file=sys.stderr)
        checked = perun(env, root, "check", "-c", "head", "--format", "json")
        if checked.returncode != 3:
            sys.exit(f"the check found no degradation (exit {checked.returncode}): {checked.stderr.strip()}")
        print("explaining ...", file=sys.stderr)
        cpu = children_cpu()
        started = time.perf_counter()
        done = perun(env, root, "check", "head", "--explain", "--explain-budget", f"{options.budget:g}",
                     "--format", "json")
        out["explain_wall_s"] = round(time.perf_counter() - started, 2)
        out["explain_cpu_s"] = round(children_cpu() - cpu, 2)
        out["progress"] = [line for line in done.stderr.splitlines() if line.strip()]
        if done.returncode != 3:
            sys.exit(f"check head --explain exited {done.returncode}: {done.stderr.strip()}")
        record = next(r for r in json.loads(done.stdout) if r["result"] == "Degradation")
        explanation = record["explanation"]
        out["collector"] = explanation["collector"]
        out["message"] = explanation["message"]
        out["notes"] = explanation["notes"]
        out["totals"] = [explanation["baseline_total"], explanation["target_total"], explanation["unit"]]
        out["functions"] = [{key: entry[key] for key in ("function", "file", "line", "share", "owned")}
                            | {"through": [t["function"] for t in entry["through"]]}
                            for entry in record["explained_by"]]
    out["load_average_after"] = os.getloadavg()[0]
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
