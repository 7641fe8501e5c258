#!/usr/bin/env python3
"""Bytes perun-tui sends to the terminal per action, with and without ``--low-bandwidth``.

What a user on a slow link (ssh over a 56 kbit/s line, a phone tether) pays
for: the real ``perun-tui --demo DIR`` runs in a pseudo-terminal of
``--size`` (80x24) with ``TERM=xterm-256color``, and every byte it writes to
the terminal is counted.  Keys are sent as a terminal sends them; after each
action the count stops once the output has been quiet for ``--quiet``
seconds (0.6), so a figure is everything the action caused, picture workers
included.

Actions, in this order:

* ``first frame``: from the start until quiet (the main screen drawn);
* ``history move``: ``--moves`` (8) presses of down in the history, each
  counted alone (the profiles and commit panes follow the cursor);
* ``profiles move``: ``2`` focuses the profiles pane, then down and up
  presses over its rows;
* ``open plot (scatter)``: back to HEAD and down to the newest commit with
  a trace profile, ``p`` on it (a scatter with its models);
* ``bars``, ``flow``, ``flame graph``: the view keys on the plot screen,
  each counted until its picture is there;
* ``mouse sweep``: back on the main screen, only when the app turned
  any-motion tracking on (mode 1003, the only mode in which a terminal
  reports a mouse that moves without a button held): 40 motion reports
  across the window, as the terminal would send them, and the bytes drawn
  in reply (hover highlights); the reports themselves, which go the other
  way, are ``mouse sweep, sent``.  Without that mode the terminal sends
  nothing and the app draws nothing: 0.
* ``idle 5 s``: five seconds without input.

Per action the table gives the median bytes over ``--repeat`` (3) runs of
the whole sequence (moves: over every press of every run) and
what that takes at 56 kbit/s (7,000 bytes a second).  Timing is not
measured here (see ``benchmarks/tui.py``); the byte counts barely depend on
the machine's load, only on what the app drew.

Run (the demo is built once into ``--demo-dir`` when missing; it needs cc and make)::

    .venv/bin/python benchmarks/bandwidth.py                      # both modes, a markdown table
    .venv/bin/python benchmarks/bandwidth.py --json               # the same as JSON
    .venv/bin/python benchmarks/bandwidth.py --source OTHER_CHECKOUT  # another checkout's perun (before/after)
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import select
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: a 56 kbit/s line moves about 7,000 bytes a second
LINE_BYTES_PER_SECOND = 56_000 / 8
DOWN, UP = "\x1b[B", "\x1b[A"
#: the any-motion mouse mode a terminal needs to report motion without a button held
ANY_MOTION = b"\x1b[?1003h"
_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-B]|\x1b[=>78]")


class Session:
    """``perun-tui`` in a pseudo-terminal; counts what it writes."""

    def __init__(self, argv: list[str], env: dict[str, str], size: tuple[int, int], cwd: Path) -> None:
        master, slave = os.openpty()
        columns, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                        start_new_session=True, close_fds=True, cwd=cwd)
        os.close(slave)
        self.master = master
        self.output = bytearray()

    def _read(self, timeout: float) -> int:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return 0
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the app ended: the pty's other side is gone
            return -1
        self.output += data
        return len(data)

    def settle(self, quiet: float, limit: float = 60.0, until: bytes | None = None) -> int:
        """Bytes written until ``quiet`` seconds pass without output (after ``until`` appeared, if given)."""
        start = len(self.output)
        deadline = time.monotonic() + limit
        last = time.monotonic()
        while time.monotonic() < deadline:
            got = self._read(0.05)
            if got < 0:
                break
            now = time.monotonic()
            if got:
                last = now
                continue
            seen = until is None or until in _ANSI.sub(b"", bytes(self.output[start:]))
            if seen and now - last >= quiet:
                break
        return len(self.output) - start

    def send(self, text: str, quiet: float) -> int:
        os.write(self.master, text.encode())
        return self.settle(quiet)

    def close(self) -> None:
        try:
            os.write(self.master, b"q")
            self.settle(0.3, limit=10)
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


def motion_reports(size: tuple[int, int], count: int = 40) -> list[str]:
    """SGR reports of a mouse moving across the window without a button (what xterm sends in mode 1003)."""
    columns, rows = size
    return [f"\x1b[<35;{1 + i * (columns - 1) // (count - 1)};{1 + i * (rows - 1) // (count - 1)}M"
            for i in range(count)]


def measure(python: str, demo: Path, flags: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """Every action's bytes for one mode."""
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "COLUMNS", "LINES",
                                                                          "PERUN_LOW_BANDWIDTH")}
    env["TERM"] = "xterm-256color"
    if args.source:
        env["PYTHONPATH"] = str(Path(args.source).resolve())
    commit, row = mixed_profile(demo)
    # run where no checkout is: ``python -m`` puts the working directory before PYTHONPATH (--source)
    session = Session([python, "-m", "perun_tui", "--demo", str(demo), *flags], env, args.size, cwd=demo)
    quiet = args.quiet
    result: dict[str, Any] = {}
    try:
        result["first frame"] = [session.settle(max(quiet, 1.5), until=b"Profiles")]
        tracking = ANY_MOTION in session.output
        result["history move"] = [session.send(DOWN, quiet) for _ in range(args.moves)]
        # back to HEAD, down to the commit with a trace profile: scatter with models, flow by uid, flame graph
        session.send("h", quiet)
        for _ in range(commit):
            session.send(DOWN, quiet)
        session.send("2", quiet)
        result["profiles move"] = [session.send(DOWN if i % 2 == 0 else UP, quiet) for i in range(args.moves // 2 * 2)]
        for _ in range(row):
            session.send(DOWN, quiet)
        # a picture arrives from a worker: count until it is there (a chart's frame, the flame graph's header)
        for key, name, drawn in (("p", "open plot (scatter)", "┌"), ("b", "bars", "┌"), ("w", "flow", "┌"),
                                 ("f", "flame graph", "total")):
            os.write(session.master, key.encode())
            result[name] = [session.settle(quiet, until=drawn.encode())]
        os.write(session.master, b"\x1b")  # back to the main screen, once it is drawn
        session.settle(max(quiet, 1.0), until=b"Profiles at")
        reports = motion_reports(args.size) if tracking else []
        drawn = 0
        for report in reports:
            drawn += session.send(report, 0.05)
        drawn += session.settle(quiet)
        result["mouse sweep"] = [drawn]
        result["mouse sweep, sent"] = [sum(len(r) for r in reports)]
        session.settle(quiet)
        start = len(session.output)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if session._read(0.1) < 0:
                break
        result["idle 5 s"] = [len(session.output) - start]
        result["any-motion tracking"] = tracking
    finally:
        session.close()
    return result


def mixed_profile(demo: Path) -> tuple[int, int]:
    """(history row, profiles row) of the first registered mixed (trace) profile, newest commit first."""
    from perun_core import api

    for index, entry in enumerate(api.log(None, with_profiles=True, cwd=demo)):
        for row, info in enumerate(entry.profiles):
            if info.type == "mixed":
                return index, row
    raise SystemExit(f"error: no registered mixed profile in {demo}")


def build_demo(python: str, demo: Path, source: str | None) -> None:
    if (demo / ".perun").is_dir():
        return
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = str(Path(source).resolve())
    subprocess.run([python, "-m", "perun_core.cli.demo", str(demo)], check=True, env=env)


def table(modes: dict[str, dict[str, Any]]) -> str:
    names = list(modes)
    lines = ["| action | " + " | ".join(f"{n}: bytes | {n}: s at 56 kbit/s" for n in names) + " |",
             "|---|" + "---:|---:|" * len(names)]
    for action in modes[names[0]]:
        if action == "any-motion tracking":
            continue
        cells = []
        for name in names:
            median = statistics.median(modes[name][action])
            cells += [f"{median:,.0f}", f"{median / LINE_BYTES_PER_SECOND:.2f}"]
        lines.append(f"| {action} | " + " | ".join(cells) + " |")
    lines.append("| any-motion mouse tracking | " + " | ".join(
        f"{'on' if modes[n]['any-motion tracking'] else 'off'} | " for n in names) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo-dir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "perun-bandwidth-demo",
                        help="the demo repository (built there when missing)")
    parser.add_argument("--size", default="80x24", help="terminal COLUMNSxROWS (default 80x24)")
    parser.add_argument("--moves", type=int, default=8, help="cursor moves per pane (default 8)")
    parser.add_argument("--quiet", type=float, default=0.6, help="seconds of silence that end an action (0.6)")
    parser.add_argument("--source", help="run the perun of this checkout (PYTHONPATH) instead of the installed one")
    parser.add_argument("--only", choices=("default", "low-bandwidth"), help="measure one mode")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the whole sequence per mode (default 3)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a markdown table")
    args = parser.parse_args(argv)
    columns, _, rows = args.size.partition("x")
    args.size = (int(columns), int(rows))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    python = sys.executable
    build_demo(python, args.demo_dir, args.source)
    modes: dict[str, dict[str, Any]] = {}
    for name, flags in (("default", []), ("low-bandwidth", ["--low-bandwidth"])):
        if args.only in (None, name):
            print(f"measuring {name} at {args.size[0]}x{args.size[1]}", file=sys.stderr)
            runs = [measure(python, args.demo_dir, flags, args) for _ in range(args.repeat)]
            # every run's figures of an action together: the median is over runs and presses
            modes[name] = {action: (runs[0][action] if action == "any-motion tracking" else
                                    [value for run in runs for value in run[action]]) for action in runs[0]}
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    if args.json:
        print(json.dumps({"size": args.size, "load": load, "modes": modes}, indent=1))
    else:
        print(table(modes))
        print(f"\n{args.size[0]}x{args.size[1]}; load average {' '.join(load)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
