"""``perun-core check head|all|profiles`` and ``perun-core install-hook``: thin front ends over api_check.

Imported by ``perun-core --help``, so only click and the standard library
are imported at module level.

Exit status: 0 when nothing degraded, 3 when a degradation was found
(``--fail-on`` changes which findings count), 1 on errors -- also on
unexpected ones, which are reported in one line (``-v`` for the traceback),
so that a CI job never mistakes a crash for a result.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

import click

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
FORMATS = ("tree", "json", "junit", "markdown")
FAIL_ON = ("degradation", "maybe", "never")
DEGRADED_EXIT = 3

_ANSI = {
    "degradation": "\x1b[1;31m",
    "optimization": "\x1b[1;32m",
    "maybe": "\x1b[33m",
    "notice": "\x1b[36m",
    "error": "\x1b[31m",
    "muted": "\x1b[2m",
    "checksum": "\x1b[33m",
    "heading": "\x1b[1m",
    "graph": "\x1b[34m",
}


def _color() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _paint(segments: list[tuple[str, str]], color: bool) -> str:
    if not color:
        return "".join(text for text, _style in segments)
    return "".join(f"{_ANSI[style]}{text}\x1b[0m" if style in _ANSI and text else text for text, style in segments)


def _verbosity(ctx: click.Context, local: int) -> int:
    root = ctx.find_root().obj
    return local + (getattr(root, "verbose", 0) if root is not None else 0)


def _guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    """Unexpected exceptions become a one-line error with exit status 1 (not the generic 3)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from perun_core.errors import PerunError

        try:
            return function(*args, **kwargs)
        except (PerunError, click.ClickException, click.exceptions.Exit, KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - never let a crash look like "degradation found"
            ctx = click.get_current_context(silent=True)
            if ctx is not None and _verbosity(ctx, 0):
                import traceback

                traceback.print_exc()
            raise click.ClickException(f"internal error in check: {type(exc).__name__}: {exc}") from None

    return wrapper


def _output_options(function: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("-M", "--method", "methods", multiple=True, metavar="METHOD",
                     help="Apply this method instead of the configured strategy (repeatable): full or short "
                          "name, e.g. sart (the default), bmoe, aat, fast, lreg, preg, int, loc, eto, rst, cpd."),
        click.option("-f", "--format", "output_format", type=click.Choice(FORMATS), default="tree", show_default=True,
                     help="tree: the history with findings; json: one record per finding; junit: XML for CI; "
                          "markdown: a table for pull-request comments and $GITHUB_STEP_SUMMARY."),
        click.option("--fail-on", type=click.Choice(FAIL_ON), default="degradation", show_default=True,
                     help="Which findings make the exit status 3: certain degradations, also uncertain ones, or none."),
        click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to this file."),
        click.option("-v", "--verbose", count=True, help="Also list locations without change."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _compute_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("-c", "--compute-missing", "compute_here", is_flag=True,
                        help="Collect missing profiles with the job matrix before checking.")(function)


@click.group(context_settings=CONTEXT)
@click.option("-c", "--compute-missing", is_flag=True,
              help="Run the job matrix first for versions that lack its profiles (and register them).")
@click.pass_context
def check(ctx: click.Context, compute_missing: bool) -> None:
    """Check versions or profiles for performance changes.

    For each profile of a version (the target) the nearest predecessor with
    a profile of the same configuration is its baseline; the methods of
    'degradation.strategies' (or -M) compare them.  Exit status: 0 when
    nothing degraded, 3 when something did, 1 on errors.
    """
    ctx.meta["check.compute_missing"] = compute_missing


def _collection_printer(verbose: int) -> Callable[[Any], None]:
    from perun_core.check.events import CollectionEvent, CollectionStarted
    from perun_core.cli.run_render import PlainRenderer

    plain = PlainRenderer(verbose, write=lambda text: click.echo(text, err=True))

    def on_event(event: Any) -> None:
        if isinstance(event, CollectionStarted):
            count = len(event.versions)
            click.echo(f"Collecting missing profiles for {count} version{'s' if count != 1 else ''}", err=True)
        elif isinstance(event, CollectionEvent):
            plain(event.event)

    return on_event


def _emit_report(report: Any, output_format: str, fail_on: str, output: str | None, verbose: int) -> None:
    from perun_core.check import output as out

    if output_format == "json":
        import json

        text = json.dumps(out.json_records(report), indent=2, allow_nan=False) + "\n"
    elif output_format == "junit":
        text = out.junit_xml(report, fail_on)
    elif output_format == "markdown":
        text = out.markdown(report, fail_on)
    else:
        color = _color() and not output
        text = "".join(_paint(line, color) + "\n" for line in out.tree_lines(report, verbose=verbose))
    if output:
        from perun_core.storage.atomic import atomic_write_text

        atomic_write_text(output, text)
    else:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())


def _finish(report: Any, fail_on: str) -> None:
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
    if report.errors:
        sys.exit(1)
    if report.failed(fail_on):
        sys.exit(DEGRADED_EXIT)


@check.command("head", context_settings=CONTEXT)
@click.argument("revision", required=False, metavar="[HASH]")
@_compute_option
@_output_options
@click.pass_context
@_guarded
def check_head(ctx: click.Context, revision: str | None, compute_here: bool, methods: tuple[str, ...],
               output_format: str, fail_on: str, output: str | None, verbose: int) -> None:
    """Check the profiles of HASH (default HEAD) against their nearest predecessors."""
    _check_history(ctx, "check_head", revision, compute_here, methods, output_format, fail_on, output, verbose)


@check.command("all", context_settings=CONTEXT)
@click.argument("revision", required=False, metavar="[HASH]")
@_compute_option
@_output_options
@click.pass_context
@_guarded
def check_all(ctx: click.Context, revision: str | None, compute_here: bool, methods: tuple[str, ...],
              output_format: str, fail_on: str, output: str | None, verbose: int) -> None:
    """Check every version from HASH (default HEAD) back that has profiles."""
    _check_history(ctx, "check_all", revision, compute_here, methods, output_format, fail_on, output, verbose)


def _check_history(ctx: click.Context, function: str, revision: str | None, compute_here: bool,
                   methods: tuple[str, ...], output_format: str, fail_on: str, output: str | None,
                   verbose: int) -> None:
    """Run api_check.check_head or check_all and report: the shared body of both commands."""
    from perun_core.api import check as api_check

    verbose = _verbosity(ctx, verbose)
    compute = compute_here or bool(ctx.meta.get("check.compute_missing"))
    report = getattr(api_check, function)(revision, methods=list(methods) or None, compute_missing=compute,
                                          on_event=_collection_printer(verbose))
    _emit_report(report, output_format, fail_on, output, verbose)
    _finish(report, fail_on)


@check.command("profiles", context_settings=CONTEXT)
@click.argument("baseline")
@click.argument("target")
@click.option("-m", "--minor", help="Look tags and names up in this minor version's index (default HEAD).")
@_output_options
@click.pass_context
@_guarded
def check_profiles(ctx: click.Context, baseline: str, target: str, minor: str | None, methods: tuple[str, ...],
                   output_format: str, fail_on: str, output: str | None, verbose: int) -> None:
    """Check TARGET against BASELINE: i@i / i@p tags, names, or profile files anywhere."""
    from perun_core.api import check as api_check

    verbose = _verbosity(ctx, verbose)
    # the command line runs no other threads, so the work may be shared with a forked process
    report = api_check.check_profiles(baseline, target, minor=minor, methods=list(methods) or None, workers=2)
    _emit_report(report, output_format, fail_on, output, verbose)
    _finish(report, fail_on)


@click.command("install-hook", context_settings=CONTEXT)
@click.option("--uninstall", is_flag=True, help="Remove perun's block from the hook instead.")
@click.option("--command", "command", metavar="CMD",
              help="How the hook calls perun-core (default: this Python running perun_core.cli.main).")
@_guarded
def install_hook(uninstall: bool, command: str | None) -> None:
    """Install a git post-commit hook that collects and checks every new commit.

    The hook runs 'perun-core check --compute-missing head': the job matrix
    for the new commit, then the check.  Installing twice changes nothing;
    an existing hook keeps its content.
    """
    from perun_core.api import check as api_check

    if uninstall:
        result = api_check.uninstall_hook()
        click.echo(f"Removed perun's block from {result.path}" if result.action == "removed"
                   else f"No perun block in {result.path}")
        return
    result = api_check.install_hook(command=command)
    verb = {"created": "Created", "updated": "Updated", "unchanged": "Already installed:"}[result.action]
    click.echo(f"{verb} {result.path}")
