"""`perun-core convert`: rewrite a profile file in another layout."""

from __future__ import annotations

import click

from perun_core.cli.terminal import escape_controls

from .params import OUTPUT_FILE

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.command(context_settings=CONTEXT)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--layout", type=click.Choice(["compact", "documented"]), default="compact", show_default=True,
              help="compact: perun's columnar layout; documented: the JSON of the specification "
                   "(the original Perun reads it).")
@click.option("-o", "--output", type=OUTPUT_FILE, metavar="OUT",
              help="Write to OUT instead of replacing FILE.")
@click.option("--compact-json", is_flag=True, help="No indentation in the documented layout.")
def convert(file: str, layout: str, output: str | None, compact_json: bool) -> None:
    """Rewrite the profile FILE (any layout perun reads, the original Perun's included) in --layout."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    result = api.convert(file, layout=layout, output=output, indent=None if compact_json else 2)
    click.echo(escape_controls(f"{result.source}: {result.layout_read} -> {result.layout_written}, "
                               f"{result.resources} resources, {result.bytes_written} bytes written to {result.target}"))
