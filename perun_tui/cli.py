"""The ``perun-tui`` command: ``perun-tui [--repo PATH]`` and ``perun-tui --demo [DIR]``.

Parses the arguments, opens the repository (or builds the demo through
:func:`perun_core.api.build_demo`) and runs :class:`~perun_tui.app.PerunApp`;
errors before the app starts are one ``error:`` line on stderr and exit
status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from perun_core import api
from perun_core.errors import PerunError

from .core import Core
from .formatting import display_path


def open_demo(path: Path | None) -> Path:
    """Build the demo (its profiles collected by the real collectors) unless built before; say so on stderr."""
    where = path if path is not None else api.demo_dir()
    announced = False

    def progress(step: str) -> None:
        nonlocal announced
        if not announced:
            print(f"perun-tui: building the demo repository in {display_path(where, limit=200)} "
                  "(once, about half a minute; ctrl+c stops it)", file=sys.stderr)
            announced = True
        print(f"  {step}", file=sys.stderr, flush=True)

    return api.build_demo(where, progress=progress)


def colour_environment(environ: dict[str, str] | os._Environ = os.environ) -> bool:
    """Settle whether the app may use colour, before textual reads the environment; False for none.

    ``NO_COLOR`` with any non-empty value (https://no-color.org) and
    ``TERM=dumb`` turn colour off: textual then draws in the terminal's
    default colours, keeping bold, underline and reverse.  An empty
    ``NO_COLOR`` counts as unset (textual would take it as set), and
    ``TERM=dumb`` sets ``NO_COLOR`` so that textual sees one switch.
    """
    if environ.get("NO_COLOR") == "":
        del environ["NO_COLOR"]
    if environ.get("TERM") == "dumb" and not environ.get("NO_COLOR"):
        environ["NO_COLOR"] = "1"
    return not environ.get("NO_COLOR")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``perun-tui [--repo PATH]`` and ``perun-tui --demo [DIR]``."""
    parser = argparse.ArgumentParser(
        prog="perun-tui",
        description="Browse the performance history of a perun repository.",
    )
    parser.add_argument("--repo", metavar="PATH",
                        help="the perun repository to open: a directory inside it (default: the current directory)")
    parser.add_argument("--demo", action="store_true",
                        help="build a demo repository (once; later runs reuse it) and open it")
    parser.add_argument("path", nargs="?", metavar="DIR",
                        help="with --demo: where to build the demo repository; without it: the same as --repo")
    args = parser.parse_args(argv)
    if args.demo and args.repo:
        parser.error("--repo and --demo exclude each other: --demo opens the demo repository")
    if args.repo and args.path and Path(args.repo).resolve() != Path(args.path).resolve():
        parser.error(f"two repositories given: --repo {args.repo} and {args.path}")
    try:
        if args.demo:
            root: Path | str | None = open_demo(Path(args.path) if args.path else None)
        else:
            root = args.repo or args.path
        core = Core.open(root)
        try:
            core.status()  # a repository without commits, or with a broken config, fails here, briefly
        except PerunError:
            core.close()
            raise
    except PerunError as error:
        hint = f"; {error.hint}" if error.hint else ""
        print(f"error: {error.message}{hint}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    # textual loads only once the arguments and the repository are good: errors come quicker
    from .app import PerunApp

    app = PerunApp(core=core, colour=colour_environment())
    app.run()
    return app.return_code or 0


if __name__ == "__main__":
    raise SystemExit(main())
