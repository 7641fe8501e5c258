"""``python -m perun_core.cli.demo DIR``: build the demo repository with collected profiles in DIR.

It builds the demo without opening it (a benchmark, a cache filled ahead);
``make demo`` opens perun-tui instead, which builds it while it shows it.
The build shows one line per phase with the seconds since it began (on a
terminal the line of the running phase counts its commits in place;
elsewhere each phase is printed once, when it starts), or one line saying
an earlier build is reused.  With
``-v`` every step gets a line of its own.  A failure is one ``error:`` line
(exit status 1), an interrupt exits with 130.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from perun_core import api

from perun_core.errors import Interrupted, PerunError


class PhaseLines:
    """The build's progress callback: a line per phase (``collecting time profiles``), with the elapsed seconds.

    A step names its phase and, after it, which commit of how many
    (``collecting time profiles: commit 3/12 (ae868f3)``).  On a terminal
    the steps of the phase on the last line rewrite that line; elsewhere
    (a log, CI) a phase is printed when it starts and not again.  With
    ``every_step`` each step is a line of its own.
    """

    def __init__(self, stream: TextIO, *, every_step: bool = False) -> None:
        self.stream = stream
        self.rewrite = stream.isatty() and not every_step
        self.every_step = every_step
        self.started = time.monotonic()
        self.seen: set[str] = set()
        self.last: str | None = None

    def __call__(self, step: str) -> None:
        phase = api.demo_phase(step)
        line = f"  {time.monotonic() - self.started:5.1f} s  {step}"
        if self.every_step:
            print(line, file=self.stream, flush=True)
        elif self.rewrite:
            if phase == self.last:
                self.stream.write("\r\x1b[K" + line)
            else:
                self.stream.write(("\n" if self.last is not None else "") + line)
            self.stream.flush()
        elif phase not in self.seen:
            print(line, file=self.stream, flush=True)
        self.seen.add(phase)
        self.last = phase

    def close(self, final: str) -> None:
        """End the open line (on a terminal) and print ``final`` with the elapsed seconds."""
        if self.rewrite and self.last is not None:
            self.stream.write("\n")
        print(f"  {time.monotonic() - self.started:5.1f} s  {final}", file=self.stream, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perun_core.cli.demo",
                                     description="Build the demo repository (once; later runs reuse it).")
    parser.add_argument("path", metavar="DIR", help="where to build the demo repository")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every step of the build on a line")
    args = parser.parse_args(argv)
    where = Path(args.path)
    reused = api.demo_is_built(where)
    if reused:
        print(f"perun: reusing the demo repository in {where}", flush=True)
    else:
        print(f"perun: building the demo repository in {where} (once). {api.DEMO_DURATION}.", flush=True)
    progress = PhaseLines(sys.stdout, every_step=args.verbose)
    try:
        api.build_demo(where, progress=progress)
    except (Interrupted, KeyboardInterrupt):
        print("error: building the demo was interrupted; nothing was left behind", file=sys.stderr)
        return 130
    except PerunError as exc:
        print(f"error: building the demo failed: {exc}", file=sys.stderr)
        return 1
    if not reused:
        progress.close("built")
    return 0


if __name__ == "__main__":
    sys.exit(main())
