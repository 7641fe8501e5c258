#!/usr/bin/env python3
"""Time the two set-up commands of README.md: ``make demo`` from a fresh clone, and ``make test``.

``setup``: clones this checkout (its committed HEAD) into a temporary
directory and runs ``make demo`` there in a detached tmux session (the demo
ends in a full-screen TUI), reading the screen every tenth of a second.  It
reports when each phase's first line appeared -- installing, opening
perun-tui, building the demo -- when the TUI's first frame (the main
screen's history) was on screen, when the TUI showed the first commit
profiled (the build's line counting ``commit 2/12``) and when it said the
demo is built, in seconds from the start; then it quits the TUI with ``q``
(``--quit-at first_frame`` quits at the first frame, which stops the
build).  make's three steps (the venv, the install, the demo) run one after
the other under ``/usr/bin/time``, so the CPU time of each (with its
children) is reported too: on a loaded machine it says more than the wall
time.  pip's download cache is the user's, as for anyone trying the project
a second time; ``--no-pip-cache`` downloads every package.

``suite``: runs ``make test`` in this checkout (or ``--pytest-args`` with
the venv's pytest) and reports its wall time, the counts of its closing line
and its 20 slowest tests (``--durations=20``).

Both print one JSON object on stdout with the cores and the load average
before and after; progress goes to stderr.  Timings on a shared machine
depend on its load: read them with it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the lines make demo prints when a phase begins, and what the TUI's main screen shows
PHASES = {"install": "perun: installing perun", "open": "perun: opening the demo",
          "build": "building the demo repository", "reuse": "perun: reusing the demo",
          "first_frame": "History of main", "first_profiled": "time profiles: commit 2/12",
          "built": "The demo is built"}
#: make's steps, each timed on its own: the venv, the install, the demo (perun-tui)
STEPS = (("venv", ".venv/bin/python"), ("install", ".venv/.installed"), ("demo", "demo"))
TIMEOUT = 1800.0


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-S", socket, *args], capture_output=True, text=True, timeout=60).stdout


def time_setup(no_pip_cache: bool, quit_at: str = "built") -> dict:
    """Seconds from ``make demo``'s start to each phase's first line and to the TUI's first frame and built demo."""
    work = Path(tempfile.mkdtemp(prefix="perun-setup-"))
    clone = work / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    socket = str(work / "tmux.sock")
    env = "PIP_NO_CACHE_DIR=1 " if no_pip_cache else ""
    seen: dict[str, float] = {}
    started = time.monotonic()
    timed = " && ".join(f"/usr/bin/time -f '%e %U %S' -o {work / step}.cpu make --no-print-directory {target}"
                        for step, target in STEPS)
    tmux(socket, "-f", "/dev/null", "new-session", "-d", "-s", "setup", "-x", "120", "-y", "40",
         f"cd {clone} && {env}{timed}; sleep 600")
    cpu: dict[str, dict[str, float]] = {}
    try:
        while quit_at not in seen:
            if time.monotonic() - started > TIMEOUT:
                raise SystemExit(f"no first frame after {TIMEOUT:.0f} s:\n{tmux(socket, 'capture-pane', '-p')}")
            screen = tmux(socket, "capture-pane", "-p", "-S", "-200")
            for phase, text in PHASES.items():
                if phase not in seen and text in screen:
                    seen[phase] = round(time.monotonic() - started, 1)
                    note(f"{seen[phase]:6.1f} s  {phase}")
            time.sleep(0.1)
        tmux(socket, "send-keys", "-t", "setup", "q")
        cpu = _cpu_times(work, started)
    finally:
        tmux(socket, "kill-server")
        shutil.rmtree(work, ignore_errors=True)
    return {"seconds_from_start": seen, "cpu_s": cpu, "pip_cache": not no_pip_cache}


def _cpu_times(work: Path, started: float) -> dict[str, dict[str, float]]:
    """Wall, user and system seconds of each of make's steps, once the last one has ended (q was sent)."""
    last = work / f"{STEPS[-1][0]}.cpu"
    while not last.exists() or not last.read_text().strip():
        if time.monotonic() - started > TIMEOUT:
            raise SystemExit("make demo did not end after q")
        time.sleep(0.2)
    times = {}
    for step, _target in STEPS:
        wall, user, system = (float(x) for x in (work / f"{step}.cpu").read_text().split()[-3:])
        times[step] = {"wall": wall, "user": user, "system": system}
    return times


def time_suite(pytest_args: list[str] | None) -> dict:
    """``make test`` (or the venv's pytest with ``pytest_args``): wall time, closing counts, 20 slowest."""
    if pytest_args is None:
        command = ["make", "--no-print-directory", "test"]
    else:
        command = [str(ROOT / ".venv" / "bin" / "python"), "-m", "pytest", "--durations=20", *pytest_args]
    started = time.monotonic()
    ran = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - started
    lines = ran.stdout.splitlines()
    closing = next((line for line in reversed(lines) if re.search(r"\d+ (passed|failed)", line)), "")
    counts = {word: int(number) for number, word in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed)",
                                                                closing)}
    slowest = []
    for line in lines[next((i for i, line in enumerate(lines) if "slowest" in line), len(lines)) + 1:]:
        match = re.match(r"([\d.]+)s (call|setup|teardown)\s+(\S+)", line)
        if match:
            slowest.append({"seconds": float(match[1]), "phase": match[2], "test": match[3]})
    return {"command": " ".join(command), "exit_status": ran.returncode, "wall_s": round(wall, 1),
            "closing_line": closing.strip("= "), "counts": counts, "slowest": slowest[:20]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["setup", "suite"])
    parser.add_argument("--no-pip-cache", action="store_true", help="setup: download every package")
    parser.add_argument("--quit-at", choices=["first_frame", "built"], default="built",
                        help="setup: quit the TUI at its first frame (stopping the build) or once the demo is built")
    parser.add_argument("--pytest-args", nargs=argparse.REMAINDER,
                        help="suite: run the venv's pytest with these arguments instead of make test")
    args = parser.parse_args(argv)
    before = loadavg()
    result = time_setup(args.no_pip_cache, args.quit_at) if args.what == "setup" else time_suite(args.pytest_args)
    report = {"what": args.what, "cores": os.cpu_count(), "load_before": before, "load_after": loadavg(), **result}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
