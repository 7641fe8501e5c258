"""``python -m perun_core.cli.demo DIR``: build the demo repository with collected profiles in DIR, quietly.

``make demo`` runs this before it opens perun-tui, so the build is one line
on the terminal: what is built where, or that an earlier build is reused.
The steps go to stderr only with ``-v``; a failure is one ``error:`` line
(exit status 1), an interrupt exits with 130.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from perun_core import api

from perun_core.errors import Interrupted, PerunError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perun_core.cli.demo",
                                     description="Build the demo repository (once; later runs reuse it).")
    parser.add_argument("path", metavar="DIR", help="where to build the demo repository")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every step of the build")
    args = parser.parse_args(argv)
    where = Path(args.path)
    reused = api.demo_is_built(where)
    if reused:
        print(f"perun: reusing the demo repository in {where}", flush=True)
    else:
        print(f"perun: building the demo repository in {where} (once, about 10 to 30 s)", flush=True)
    started = time.monotonic()

    def progress(step: str) -> None:
        if args.verbose:
            print(f"  {step}", file=sys.stderr, flush=True)

    try:
        api.build_demo(where, progress=progress)
    except (Interrupted, KeyboardInterrupt):
        print("error: building the demo was interrupted; nothing was left behind", file=sys.stderr)
        return 130
    except PerunError as exc:
        print(f"error: building the demo failed: {exc}", file=sys.stderr)
        return 1
    if not reused and args.verbose:
        print(f"  built in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
