"""``perun-core fsck [--repair]``: check the store, remove files of killed writers, repair what is damaged."""

from __future__ import annotations

import click

from .params import FiniteFloatRange

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.command(context_settings=CONTEXT)
@click.option("--repair", is_flag=True,
              help="Rebuild damaged indexes from the objects that can still be read, move damaged objects and "
                   "indexes to .perun/quarantine (dropping the entries that name them), remove objects nothing "
                   "names and pending profiles registered already.")
@click.option("--stale-after", type=FiniteFloatRange(min=0, max=30 * 24 * 3600), default=3600, show_default=True,
              metavar="SECONDS", help="Temporary files of writers that are gone are removed, those of writers "
                                      "still running kept; files that do not name their writer (older perun "
                                      "versions, another machine) are removed once at least this old.")
def fsck(repair: bool, stale_after: float) -> None:
    """Check every object and index of .perun; exit 1 while damage remains."""
    import sys

    # lazy: keeps `perun-core --help` light
    from perun_core import api
    # lazy: keeps `perun-core --help` light
    from perun_core.api import escape_controls

    report = api.fsck(repair=repair, stale_after=stale_after)
    for problem in report.problems:
        label = "repaired" if problem.repaired and problem.damage else "damaged" if problem.damage else "found"
        click.echo(f"{label}: {escape_controls(str(problem))}")
    for path in report.removed:
        click.echo(f"removed stale temporary file {escape_controls(path)}")
    damage, found = len(report.damage), len(report.problems) - len(report.damage)
    click.echo(f"checked {report.objects} object{'s' if report.objects != 1 else ''}, {report.indexes} "
               f"index{'es' if report.indexes != 1 else ''} ({report.entries} entries), {report.pending} pending "
               f"profile{'s' if report.pending != 1 else ''}: "
               + ("no damage" if not damage else f"{damage} problem{'s' if damage != 1 else ''}")
               + (f", {found} thing{'s' if found != 1 else ''} to clean up" if found else ""))
    if not report.ok:
        remaining = [p for p in report.damage if not p.repaired]
        click.echo(f"error: {len(remaining)} problem{'s' if len(remaining) != 1 else ''} in the store"
                   + ("" if repair else "; run 'perun-core fsck --repair' to rebuild what can be rebuilt"), err=True)
        sys.exit(1)
