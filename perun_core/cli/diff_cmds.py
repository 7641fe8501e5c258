"""``perun-core diff BASELINE TARGET [VIEW]`` (alias ``showdiff``): what changed between two profiles."""

from __future__ import annotations

import shutil
import sys

import click

from perun_core.cli.terminal import escape_controls, use_colour
from perun_core.errors import UsageError
from perun_core.params import MAX_HEIGHT, MAX_PIXELS, MAX_WIDTH

from .params import OUTPUT_FILE
from .run_cmds import CONTEXT

VIEWS = ("short", "flamegraph", "bars", "report")
#: file suffix -> (view it implies, format)
#: more rows than any profile has uids: a larger -n is a typo, not a request
MAX_ROWS = 1_000_000
SUFFIXES = {".svg": "svg", ".folded": "folded", ".collapsed": "folded", ".html": "html", ".txt": None}


@click.command("diff", context_settings=CONTEXT)
@click.argument("baseline")
@click.argument("target")
@click.argument("view", required=False, default="short", type=click.Choice(VIEWS))
@click.option("-m", "--minor", "minors", metavar="REV", multiple=True,
              help="Commit whose tags (0@i) and registered names both refer to.")
@click.option("--baseline-minor", metavar="REV", help="Commit of the baseline's tag or name (overrides -m).")
@click.option("--target-minor", metavar="REV", help="Commit of the target's tag or name (overrides -m).")
@click.option("--format", "fmt", type=click.Choice(("text", "icicle", "svg", "folded", "html")),
              help="Output format: flamegraph has icicle (default), svg and folded (the folded pair); report is html.")
@click.option("-f", "--filename", metavar="FILE", type=OUTPUT_FILE,
              help="Write to FILE (its suffix picks the format: .svg, .folded, .html, .txt).")
@click.option("-n", "--limit", type=click.IntRange(0, MAX_ROWS),
              help="Rows to show (0: all) [default: 30; bars 15].")
@click.option("--width", type=click.IntRange(20, MAX_PIXELS),
              help=f"Columns (default: the terminal's, at most {MAX_WIDTH}); SVG: pixels.")
@click.option("--height", type=click.IntRange(5, MAX_HEIGHT), help="Rows of the icicle (default: the terminal's).")
@click.option("--noise-floor", type=click.FloatRange(0, 100), default=1.0, show_default=True, metavar="PERCENT",
              help="A value that moved by less than this percentage of its baseline counts as unchanged (two runs "
                   "of one program differ by about 1 %).")
def diff(baseline: str, target: str, view: str, minors: tuple[str, ...], baseline_minor: str | None,
         target_minor: str | None, fmt: str | None, filename: str | None, limit: int | None, width: int | None,
         height: int | None, noise_floor: float) -> None:
    """What changed between two profiles.

    \b
    VIEW is one of
      short       a table per uid and subtype: baseline, target, change,
                  by impact; then the functions
      flamegraph  the difference flame graph (width from the target;
                  +/red grew, -/blue shrank)
      bars        baseline and target side by side per uid
      report      one self-contained HTML file with all of them
    Profiles are tags (0@i, 1@p), names or files, as for 'check profiles'.
    """
    from pathlib import Path

    # lazy: keeps `perun-core --help` light
    from perun_core import api

    if len(minors) > 1:
        # the last one silently won before, and both tags then named one commit's profile: a diff of it with itself
        raise UsageError(f"-m given {len(minors)} times ({', '.join(minors)}): it names one commit for both "
                         "profiles; compare two commits with --baseline-minor and --target-minor")
    minor = minors[0] if minors else None
    if filename and fmt is None:
        fmt = SUFFIXES.get(Path(filename).suffix.lower())
    if fmt in ("text", None):
        fmt = None
    allowed = api.diff_formats(view)
    if fmt is not None and fmt not in allowed:
        raise UsageError(f"the {view} view has no format '{fmt}'; expected one of {', '.join(allowed)}")
    if width is not None and fmt != "svg" and width > MAX_WIDTH:
        raise click.BadParameter(f"{width} is not in the range 20<=x<={MAX_WIDTH} (up to {MAX_PIXELS} for SVG pixels)",
                                 param_hint="'--width'")
    if view == "report" and not filename and sys.stdout.isatty():
        raise UsageError("the report is an HTML file: give it a name with -f FILE.html")
    comparison = api.diff_profiles(baseline, target, minor=minor, baseline_minor=baseline_minor,
                                   target_minor=target_minor, noise_floor=noise_floor / 100)
    size = shutil.get_terminal_size((100, 30))

    color = filename is None and use_colour()
    pixels = width if fmt == "svg" else None
    text = api.render_diff(comparison, view, fmt=fmt, width=width or size.columns, height=height or size.lines,
                           color=color, limit=limit, pixels=pixels)
    if filename:
        api.write_output(filename, text.encode("utf-8"))
        click.echo(escape_controls(f"wrote {filename}"))
    else:
        click.echo(text)
