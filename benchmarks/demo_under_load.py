#!/usr/bin/env python3
"""Build the collected demo (``perun-tui --demo``) on a busy machine and report the marks of each build.

The demo's history has one commit that makes building a list quadratic
("Drop the tail pointer ...") and one that undoes it ("Keep a tail pointer
again ..."); every other commit leaves the benchmark's speed alone.  A
trustworthy check marks exactly those two: ``-`` and ``+``.

While the demo is built, ``--load`` busy loops (four by default) run, each
started in a session of its own (``setsid``) as other users' work would be:
Linux's autogroup schedules sessions against each other, so busy loops of
our own session would hardly disturb the time collector's runs, which run in
sessions of their own too.  The loops are stopped after each build (also on
Ctrl-C or an error).

Prints one line per build (its marks per commit and whether they are
exactly the expected ones) on stderr and a JSON summary on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perun_core import api  # noqa: E402
from perun_core.api._demo.collected import build_collected_demo  # noqa: E402

SLOW = "Drop the tail pointer"
FAST = "Keep a tail pointer again"


def start_load(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(count)]


def stop_load(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def marks_of(path: Path) -> list[tuple[str, str]]:
    """(subject, marks) per commit, oldest first, as ``log`` shows them."""
    from perun_core.storage.changes import read_changes

    out = []
    with api.open_repository(path) as repo:
        for version in repo.vcs.walk_minor_versions(repo.resolve_minor(None)):
            out.append((version.short_desc, read_changes(repo, version.checksum)))
    return list(reversed(out))


def expected(subject: str) -> str:
    if subject.startswith(SLOW):
        return "-"
    if subject.startswith(FAST):
        return "+"
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--builds", type=int, default=5, help="demo builds to make")
    parser.add_argument("--load", type=int, default=4, help="busy processes, each in its own session")
    options = parser.parse_args()

    results = []
    for build in range(1, options.builds + 1):
        with tempfile.TemporaryDirectory(prefix="perun-demo-load-") as tmp:
            load = start_load(options.load)
            started = time.monotonic()
            try:
                time.sleep(1.0)  # let the load average see the loops
                before = os.getloadavg()[0]
                path = build_collected_demo(Path(tmp) / "demo")
                after = os.getloadavg()[0]
            finally:
                stop_load(load)
            seconds = time.monotonic() - started
            marks = marks_of(path)
        wrong = [(subject, got) for subject, got in marks if set(got) != set(expected(subject))]
        exact = not wrong
        results.append({"build": build, "exact": exact, "seconds": round(seconds, 1),
                        "load_before": round(before, 2), "load_after": round(after, 2),
                        "marks": [{"commit": subject, "marks": got} for subject, got in marks if got],
                        "wrong": [{"commit": subject, "marks": got} for subject, got in wrong]})
        shown = ", ".join(f"{subject[:32]!r} {got}" for subject, got in marks if got) or "no marks"
        print(f"build {build}: {'exact' if exact else 'WRONG'} ({seconds:.0f} s, load {before:.1f} -> {after:.1f}): "
              f"{shown}", file=sys.stderr)
    summary = {"builds": len(results), "exact": sum(r["exact"] for r in results), "load_processes": options.load,
               "cores": os.cpu_count(), "results": results}
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
