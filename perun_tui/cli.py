"""The ``perun-tui`` command: ``perun-tui [--repo PATH]`` and ``perun-tui --demo [DIR]``.

Parses the arguments, opens the repository and runs
:class:`~perun_tui.app.PerunApp`.  A demo not built yet is built on a
thread (:class:`~perun_tui.demobuild.DemoBuild`, over
:func:`perun_core.api.build_demo`): the app opens as soon as its history is
written and shows the rest of the build as it lands; quitting stops it.
Errors before the app starts are one ``error:`` line on stderr and exit
status 1 (130 when interrupted).  So is a terminal that cannot draw the app (``TERM=dumb``: an
editor's shell buffer, a CI log; or no terminal on standard output): the
line points to ``perun-core``, which works there.  ``--low-bandwidth`` (or
``PERUN_LOW_BANDWIDTH=1``) makes the app send less (see
:class:`~perun_tui.app.PerunApp`).
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path

from perun_core import api
from perun_core.errors import Interrupted, PerunError

from .bandwidth import cap_frame_rate
from .core import Core
from .demobuild import DemoBuild


def open_demo(path: Path | None) -> tuple[Path, DemoBuild | None]:
    """The demo's root, and its build when it is not built yet (going on, the repository already there).

    The steps before the repository exists (writing its history, a second
    or two) go to stderr, as does a build that must end first because the
    app cannot draw here.
    """
    # lazy: formatting imports textual, which must not load before main() set its frame rate
    from .formatting import display_path

    where = path if path is not None else api.demo_dir()
    if api.demo_is_built(where):
        return api.build_demo(where), None
    build = DemoBuild(where)
    echo = _echo(build, f"perun-tui: building the demo repository in {display_path(where, limit=200)} (once). "
                        f"{api.DEMO_DURATION}. The app opens as soon as its history is written.")
    build.listen(lambda: None if build.root is not None else echo())  # from then on the app shows the steps
    build.start()
    try:
        root = build.wait_ready()
    except KeyboardInterrupt:
        build.stop()
        raise Interrupted("building the demo was interrupted; nothing was left behind") from None
    build.listen(None)
    return root, build


def _echo(build: DemoBuild, announce: str | None = None):
    """A listener printing on stderr the first step of each phase of ``build`` (``building commit 1/12``).

    ``announce`` comes before the first step (a build refused at once says only why, in its error line).
    """
    shown: set[str] = set()

    def echo() -> None:
        steps = build.running_steps(1)
        if steps and api.demo_phase(steps[0]) not in shown:
            if announce is not None and not shown:
                # wrapped between words at the terminal's width: the terminal broke it anywhere (a comma alone)
                print(textwrap.fill(announce, width=_stderr_width(), break_long_words=False, break_on_hyphens=False),
                      file=sys.stderr)
            shown.add(api.demo_phase(steps[0]))
            print(f"  {steps[0]}", file=sys.stderr, flush=True)

    return echo


def _stderr_width() -> int:
    """The columns of the terminal on standard error (``COLUMNS`` first), 80 when it is none."""
    if os.environ.get("COLUMNS", "").isdigit() and int(os.environ["COLUMNS"]) > 0:
        return int(os.environ["COLUMNS"])
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


def finish_demo_build(build: DemoBuild) -> None:
    """Let the build end (printing its steps) where no app shows it; raises what made it fail."""
    build.listen(_echo(build))
    try:
        build.done.wait()
    except KeyboardInterrupt:
        build.stop()
    if build.error is not None:
        raise build.error


def colour_environment(environ: dict[str, str] | os._Environ = os.environ) -> bool:
    """Settle whether the app may use colour, before textual reads the environment; False for none.

    ``NO_COLOR`` with any non-empty value (https://no-color.org) turns
    colour off: textual then draws in the terminal's default colours,
    keeping bold, underline and reverse, and every picture tells its series
    and levels apart by shape.  An empty ``NO_COLOR`` counts as unset
    (textual would take it as set).
    """
    if environ.get("NO_COLOR") == "":
        del environ["NO_COLOR"]
    return not environ.get("NO_COLOR")


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or replaced by something without a descriptor
        return False


def cannot_draw(environ: dict[str, str] | os._Environ = os.environ, stdout=None, stderr=None) -> str | None:
    """Why this terminal cannot show the app, or None when it can.

    ``TERM=dumb`` (an editor's shell buffer, some CI runners), standard
    output that is no terminal (a pipe, a file, a CI log), and standard
    error that is none (textual draws there).
    """
    if environ.get("TERM") == "dumb":
        return "TERM=dumb"
    if not _is_terminal(sys.stdout if stdout is None else stdout):
        return "standard output is not a terminal"
    if not _is_terminal(sys.__stderr__ if stderr is None else stderr):
        return "standard error is not a terminal"
    return None


#: values of PERUN_LOW_BANDWIDTH that leave the mode off (as if unset)
_OFF = ("", "0", "false", "no", "off")


def low_bandwidth_environment(environ: dict[str, str] | os._Environ = os.environ) -> bool:
    """Whether ``PERUN_LOW_BANDWIDTH`` asks for the low-bandwidth mode (any value but empty, 0, false, no, off)."""
    return environ.get("PERUN_LOW_BANDWIDTH", "").strip().lower() not in _OFF


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``perun-tui [--repo PATH]`` and ``perun-tui --demo [DIR]``."""
    parser = argparse.ArgumentParser(
        prog="perun-tui",
        description="Browse the performance history of a perun repository.",
        epilog="NO_COLOR=1 draws without colour (series and levels keep their own markers and shades). "
               "A terminal that cannot draw (TERM=dumb, or no terminal on standard output) gets one line "
               "pointing to perun-core and exit status 1.",
    )
    parser.add_argument("--repo", metavar="PATH",
                        help="the perun repository to open: a directory inside it (default: the current directory)")
    parser.add_argument("--demo", action="store_true",
                        help="build a demo repository (once; later runs reuse it) and open it")
    parser.add_argument("path", nargs="?", metavar="DIR",
                        help="with --demo: where to build the demo repository; without it: the same as --repo")
    parser.add_argument("--low-bandwidth", action="store_true",
                        help="send less to the terminal, for slow links (ssh): no mouse motion reports, no "
                             "animations, at most 10 frames a second, plots without colour; also "
                             "PERUN_LOW_BANDWIDTH=1")
    args = parser.parse_args(argv)
    low_bandwidth = args.low_bandwidth or low_bandwidth_environment()
    if low_bandwidth and "textual" not in sys.modules:
        cap_frame_rate()  # textual reads it when it loads, which is after this (app.py checks it did)
    if args.demo and args.repo:
        parser.error("--repo and --demo exclude each other: --demo opens the demo repository")
    if args.repo and args.path and Path(args.repo).resolve() != Path(args.path).resolve():
        parser.error(f"two repositories given: --repo {args.repo} and {args.path}")
    build: DemoBuild | None = None
    try:
        if args.demo:
            root, build = open_demo(Path(args.path) if args.path else None)
        else:
            root = args.repo or args.path
        core = Core.open(root)
        try:
            core.status()  # a repository without commits, or with a broken config, fails here, briefly
        except PerunError:
            core.close()
            raise
        # after the repository: its errors say more than this one, and a built demo is there for perun-core
        why = cannot_draw()
        if why is not None:
            core.close()
            if build is not None:
                finish_demo_build(build)
            print(f"error: perun-tui cannot draw here ({why}); use perun-core instead, e.g. "
                  f"'perun-core status', 'perun-core log', 'perun-core show 0@i bars'", file=sys.stderr)
            return 1
    except PerunError as error:
        if build is not None and build.running:
            build.stop()
        hint = f"; {error.hint}" if error.hint else ""
        print(f"error: {error.message}{hint}", file=sys.stderr)
        return error.exit_code if isinstance(error, Interrupted) else 1
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    # textual loads only once the arguments and the repository are good: errors come quicker
    from .app import PerunApp

    app = PerunApp(core=core, colour=colour_environment(), low_bandwidth=low_bandwidth, demo_build=build)
    app.run()
    if build is not None and build.running:
        print(textwrap.fill("perun-tui: stopping the demo's build; the next 'perun-tui --demo' (make demo) builds "
                            "it again", width=_stderr_width(), break_long_words=False, break_on_hyphens=False),
              file=sys.stderr, flush=True)
        build.stop()
    return app.return_code or 0


if __name__ == "__main__":
    raise SystemExit(main())
