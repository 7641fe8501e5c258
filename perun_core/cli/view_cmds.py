"""The views of ``perun-core show PROFILE VIEW``: tableof, bars, flow, scatter, flamegraph, heapmap.

Each command is made from its view's declaration in
:mod:`perun_core.views` when it is first named or listed: the view's
parameters become arguments and options, and every view gets the common
``-f/--filename``, ``--width`` and ``--height`` (and ``--format`` when it has
more than one output format).  Only click and the standard library are
imported here at start-up; the views, the API and rich come in when a
command runs.
"""

from __future__ import annotations

import html
import shutil
import sys
from typing import Any

import click

from perun_core import api
from perun_core.api.views import HTML_SUFFIXES, PLAIN_SUFFIXES
from perun_core.cli.terminal import escape_controls, use_colour

from perun_core.params import MAX_HEIGHT, MAX_PIXELS, MAX_WIDTH

from .params import OUTPUT_FILE, DeclaredCommand

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _view(name: str) -> Any:
    return api.view(name)


def _common_params(view: Any) -> list[click.Parameter]:
    own = [suffix for suffix in view.suffixes() if suffix not in (*PLAIN_SUFFIXES, *HTML_SUFFIXES)]
    pictures = "".join(f"; of {fmt} in pixels (default {pixels})" for fmt, pixels in view.pixel_formats.items())
    params: list[click.Parameter] = [
        click.Option(["-f", "--filename", "filename"], type=OUTPUT_FILE, metavar="FILE",
                     help="Write the output to FILE instead (.txt: plain text, .html: with colour"
                          + (f"; {', '.join(own)}: the format they name" if own else "") + ")."),
        click.Option(["--width", "width"], type=click.IntRange(min=20, max=MAX_PIXELS if view.pixel_formats else MAX_WIDTH),
                     metavar="COLUMNS",
                     help=f"Width of the output in columns (default: the terminal's){pictures}."),
        click.Option(["--height", "height"], type=click.IntRange(min=5, max=MAX_HEIGHT), metavar="ROWS",
                     help="Height of a plot or map (default: the terminal's)."),
    ]
    if len(view.formats) > 1:
        params.append(click.Option(["--format", "fmt"], type=click.Choice(view.formats), default=None,
                                   help=f"Output format [default: {view.formats[0]}, or from the --filename suffix]."))
    return params


def _help_text(description: str) -> str:
    """A view's description as click help: reStructuredText quoting dropped, lists kept line by line."""
    paragraphs = description.strip().replace("``", "'").split("\n\n")
    # click rewraps every paragraph but those opened by a \b line
    return "\n\n".join("\b\n" + p if p.lstrip().startswith("* ") else p for p in paragraphs)


class ViewCommand(DeclaredCommand):
    """A command for one view; its parameters and help are read from the view on first use."""

    def __init__(self, name: str) -> None:
        super().__init__(name, declared=lambda: _view(name).params, callback=self._invoke, context_settings=CONTEXT)

    def load(self) -> None:
        if self.loaded:
            return
        view = _view(self.name or "")
        super().load()
        self.params = [*self.params, *_common_params(view)]
        self.short_help = view.summary
        self.help = _help_text(view.description) or view.summary

    def get_short_help_str(self, limit: int = 45) -> str:
        self.load()
        return super().get_short_help_str(limit)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.load()
        super().format_help(ctx, formatter)

    def _invoke(self, filename: str | None, width: int | None, height: int | None, fmt: str | None = None,
                **values: Any) -> None:
        show_view(self.name or "", values, filename=filename, width=width, height=height, fmt=fmt)


def show_view(name: str, values: dict[str, Any], *, filename: str | None, width: int | None, height: int | None,
              fmt: str | None) -> None:
    """``show PROFILE VIEW``: the view of the profile on the terminal, or written to ``filename``."""

    spec, minor = click.get_current_context().meta["profile_spec"]
    columns, lines = shutil.get_terminal_size()
    shown = api.show(
        spec, name, values, minor=minor, fmt=fmt, filename=filename,
        width=width or max(columns, 20),
        # leave a line for the prompt below the picture
        height=height or max(lines - 1, 5),
        # pictures are sized in pixels: only an explicit --width changes them
        pixels=width,
        colour=not filename and use_colour(),
        html_page=html_page,
    )
    if shown.path is not None:
        click.echo(escape_controls(f"Wrote {name} of {shown.source} to {filename}"))
        return
    try:
        sys.stdout.write(shown.text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def html_page(ansi_text: str, title: str) -> str:
    """Terminal text with colours as a standalone HTML page."""
    import io

    from rich.console import Console
    from rich.text import Text

    widest = max((len(line) for line in ansi_text.splitlines()), default=80)
    console = Console(record=True, file=io.StringIO(), width=widest + 1, force_terminal=True,
                      color_system="truecolor", legacy_windows=False)
    console.print(Text.from_ansi(ansi_text), soft_wrap=True)
    # the page is formatted twice: here with the title, then by rich with the code
    title = html.escape(title, quote=False).replace("{", "{{").replace("}", "}}")
    return console.export_html(inline_styles=True, code_format=_HTML_PAGE.format(title=title))


_HTML_PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="UTF-8">
<title>{title}</title>
<style>
{{stylesheet}}
body {{{{ color: {{foreground}}; background-color: {{background}}; }}}}
pre {{{{ font-family: Menlo, "DejaVu Sans Mono", Consolas, monospace; line-height: 1.2; }}}}
</style>
</head>
<body>
<pre><code>{{code}}</code></pre>
</body>
</html>
"""


tableof = ViewCommand("tableof")
bars = ViewCommand("bars")
flow = ViewCommand("flow")
scatter = ViewCommand("scatter")
flamegraph = ViewCommand("flamegraph")
heapmap = ViewCommand("heapmap")
