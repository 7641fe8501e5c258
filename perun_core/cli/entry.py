"""The ``perun-core`` console script: answers ``perun-core --help`` from a cache, runs the CLI otherwise.

``perun-core --help`` is what people type most often and wait for most
visibly; rendering it needs click (about half of the start-up time) and
the short help of every command.  The rendered text depends only on the
CLI's sources and the terminal width, so the first run stores it in
``$XDG_CACHE_HOME/perun`` (``~/.cache/perun``) under a key made of
perun's version, the size and modification time of every CLI module, and
the width; later runs print the stored text without importing click.  Any
problem with the cache (unwritable, damaged, stale) falls back to click, so
the cache can only make help faster, never different.
"""

from __future__ import annotations

import os
import sys

from perun_core import __version__

_HELP_ARGS = (["--help"], ["-h"])


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in _HELP_ARGS:
        if not _print_cached_help():
            _render_help()
        return
    # lazy: keeps `perun-core --help` light
    from .main import main as run_cli

    run_cli(argv)


def _render_help() -> None:
    """What click prints for ``perun-core --help``, printed and cached."""
    import click

    # lazy: keeps `perun-core --help` light
    from .main import cli

    context = cli.context_class(cli, info_name="perun-core", **cli.context_settings)
    text = cli.get_help(context)
    click.echo(text, color=context.color)
    store_help(text)


def cached_help_path() -> str | None:
    """Where the help for this CLI and this terminal width is cached; None when the sources cannot be read."""

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        stamps = []
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(here, name))
                stamps.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    except OSError:
        return None
    import zlib

    key = zlib.crc32("|".join([__version__, here, str(terminal_width()), *stamps]).encode())
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "perun", f"cli-help-{key:08x}.txt")


def terminal_width() -> int:
    """The width click formats help for: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


def _print_cached_help() -> bool:
    path = cached_help_path()
    if path is None:
        return False
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError):
        return False
    # a file cut short by a crash or a full disk lacks the marker: render afresh
    if not text.endswith("\n\n"):
        return False
    sys.stdout.write(text[:-1])
    sys.stdout.flush()
    return True


def store_help(text: str) -> None:
    """Cache the top-level help just rendered by click (best effort: failures are ignored)."""
    path = cached_help_path()
    if path is None:
        return
    try:
        # lazy: keeps `perun-core --help` and `perun-core status` light
        from perun_core.api.files import atomic_write

        atomic_write(path, (text + "\n\n").encode())
    except OSError:
        pass


if __name__ == "__main__":
    main()
