"""``perun-core check head|all|profiles`` and ``perun-core install-hook``: thin front ends over api_check.

Imported by ``perun-core --help``, so only click and the standard library
are imported at module level.

Exit status: 0 when nothing degraded, 3 when a degradation was found
(``--fail-on`` changes which findings count), 1 on errors -- also on
unexpected ones, which are reported in one line (``-v`` for the traceback),
so that a CI job never mistakes a crash for a result.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from typing import Any

import click

from perun_core.cli.terminal import escape_controls, paint_segments, use_colour, wrap_segments
from perun_core.errors import UnknownUnit
from perun_core.params import convert_params

from .params import OUTPUT_FILE, click_params, given

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
FORMATS = ("tree", "json", "junit", "markdown")
FAIL_ON = ("degradation", "maybe", "never")
DEGRADED_EXIT = 3


def _verbosity(ctx: click.Context, local: int) -> int:
    root = ctx.find_root().obj
    return local + (getattr(root, "verbose", 0) if root is not None else 0)


def _report_options() -> list[click.Option]:
    """The options saying how a report is written and when it fails: -f, --fail-on, -o, -v."""
    return [
        click.Option(["output_format", "-f", "--format"], type=click.Choice(FORMATS), default="tree",
                     show_default=True,
                     help="tree: the history with findings; json: one record per finding; junit: XML for CI."),
        click.Option(["--fail-on", "fail_on"], type=click.Choice(FAIL_ON), default="degradation", show_default=True,
                     help="Which findings make the exit status 3: certain degradations, also uncertain ones, or none."),
        click.Option(["-o", "--output", "output"], type=OUTPUT_FILE,
                     help="Write the report to this file."),
        click.Option(["-v", "--verbose", "verbose"], count=True, help="Also list locations without change."),
    ]


def _output_options(function: Callable[..., Any]) -> Callable[..., Any]:
    methods = click.Option(["methods", "-M", "--method"], multiple=True, metavar="METHOD",
                           help="Apply this method instead of the configured strategy (repeatable): full or short "
                                "name, e.g. sart (the default), bmoe, aat, fast, lreg, preg, int, loc, eto, rst, "
                                "cpd.  'check method NAME --help' lists a method's parameters.")
    function.__click_params__ = [*getattr(function, "__click_params__", []), *reversed([methods, *_report_options()])]
    return function


def _explain_options(function: Callable[..., Any]) -> Callable[..., Any]:
    function = click.option("--explain-budget", "explain_budget", type=click.FloatRange(min=0, min_open=True),
                            metavar="SECONDS", default=None,
                            help="With --explain (implied): seconds the profiled runs of the call-level "
                                 "collection may take for all explained jobs together, builds not counted "
                                 "(default 240). The collector is chosen by its expected "
                                 "cost, which is printed first; a callgrind run that would take longer samples "
                                 "with perf or uses a smaller generated workload, and says so.")(function)
    function = click.option("--explain-with", "explain_with", type=click.Choice(("callgrind", "perf", "pytrace")),
                            help="With --explain (implied): use this collector instead of the best available "
                                 "one (cProfile for Python, callgrind, then perf).")(function)
    function = click.option("--register", "explain_register", is_flag=True,
                            help="Register the call-level profiles --explain collects (default: keep them "
                                 "pending).")(function)
    function = click.option("--explain-dir", "explain_dir", type=click.Path(file_okay=False), metavar="DIR",
                            callback=_writable_directory,
                            help="With --explain (implied): write the difference flame graph and the per-function "
                                 "listing of each explained job to DIR.")(function)
    return click.option("--explain", is_flag=True,
                        help="For every time degradation or optimization between commits, collect call-level "
                             "profiles of both commits (callgrind, perf, or cProfile for Python) and list the "
                             "functions that account for the change.")(function)


def _writable_directory(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """--explain-dir, like -o, is refused before the check runs (and records its findings) when it cannot be made."""
    if value is not None:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        if not value.strip():
            raise click.BadParameter("expected a directory name, got an empty one", param=_param)
        api.ensure_writable_directory(value)
    return value


def _explain(report: Any, explain: bool, explain_dir: str | None, register: bool, explain_with: str | None,
             budget: float | None, verbose: int) -> Any:
    if not (explain or explain_dir or register or explain_with or budget is not None):
        return report
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    return api.explain(report, explain_dir=explain_dir, register=register, collector=explain_with,
                       on_event=_collection_printer(verbose), budget=budget)


def _confirm_options(function: Callable[..., Any]) -> Callable[..., Any]:
    function = click.option("--confirm-runs", type=click.IntRange(2, 1000), default=7, show_default=True,
                            metavar="N", help="Interleaved runs a side for --confirm.")(function)
    return click.option("--confirm/--no-confirm", default=None,
                        help="Re-run the jobs of every time-based change, baseline and target alternately, "
                             "and report only what those runs confirm.  By default only the changes a busy "
                             "machine made uncertain are re-run; --no-confirm re-runs nothing.")(function)


def _confirm_mode(confirm: bool | None) -> bool | str:
    """What --confirm / --no-confirm / neither ask of the porcelain."""
    # lazy: keeps `perun-core --help` light
    from perun_core.api import check as api_check

    return api_check.DOUBTFUL if confirm is None else confirm


def _compute_option(function: Callable[..., Any]) -> Callable[..., Any]:
    function = _confirm_options(function)
    function = click.option("--no-pending", "no_pending", is_flag=True,
                            help="Check registered profiles only; by default the pending profiles made at a "
                                 "version (by run or collect) count for it, marked as pending.")(function)
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


def _of_commits(commits: tuple[tuple[str, str], ...]) -> str:
    """`` of 5a817b2 against eb6d7d3``: which versions re-runs are for (several pairs: how many)."""
    if len(commits) == 1:
        (base, target), = commits
        return f" of {target[:7]} against {base[:7]}"
    return f" of {len(commits)} pairs of commits" if commits else ""


def _collection_printer(verbose: int) -> Callable[[Any], None]:
    # lazy: keeps `perun-core --help` light
    from perun_core.api.check_events import CollectionEvent, CollectionStarted, Notice
    # lazy: keeps `perun-core --help` light
    from perun_core.cli.run_render import PlainRenderer

    plain = PlainRenderer(verbose, write=lambda text: click.echo(text, err=True))

    def on_event(event: Any) -> None:
        name = type(event).__name__
        if name == "ConfirmationStarted":
            click.echo(f"Confirming {event.findings} change{'s' if event.findings != 1 else ''}"
                       f"{_of_commits(event.commits)} by interleaved runs ({event.runs} a side)", err=True)
        elif name == "ExplainStarted":
            click.echo(f"Explaining: call-level profiles for {event.jobs} job{'s' if event.jobs != 1 else ''} "
                       f"of {event.pairs} pair{'s' if event.pairs != 1 else ''} of commits", err=True)
        elif name == "ExplainCollecting":
            cost = event.cost()
            click.echo(escape_controls(f"  {event.collector}: {event.command} at {', '.join(event.commits)}"
                                       + (f" ({cost})" if cost else "")), err=True)
            for note in event.notes:
                click.echo(escape_controls(f"    {note}"), err=True)
        elif name == "ExplainRound":
            if verbose:
                click.echo(f"    round {event.round}/{event.rounds}: {event.commit}", err=True)
        elif name == "ExplainFinished":
            click.echo(f"Explained {event.explained} change{'s' if event.explained != 1 else ''}"
                       + (f", could not explain {event.unexplained}" if event.unexplained else ""), err=True)
        elif name == "ConfirmationFinished":
            click.echo(f"Re-runs{_of_commits(event.commits)}: confirmed {event.confirmed}, not confirmed "
                       f"{event.not_confirmed}" + (f", could not check {event.unchecked}" if event.unchecked else ""),
                       err=True)
        elif isinstance(event, CollectionStarted):
            count = len(event.versions)
            click.echo(f"Collecting missing profiles for {count} version{'s' if count != 1 else ''}", err=True)
        elif isinstance(event, CollectionEvent):
            plain(event.event)
        elif isinstance(event, Notice):
            click.echo(f"warning: {escape_controls(event.text)}", err=True)

    return on_event


def _emit_report(report: Any, output_format: str, fail_on: str, output: str | None, verbose: int) -> None:
    # lazy: keeps `perun-core --help` light
    from perun_core.api import check as out

    if output_format in ("json", "junit"):
        for note in report.notes:  # the tree shows them after its summary; here they must not spoil stdout
            click.echo(f"note: {escape_controls(note)}", err=True)
    if output_format == "json":
        import json

        text = json.dumps(out.json_records(report), indent=2, allow_nan=False) + "\n"
    elif output_format == "junit":
        text = out.junit_xml(report, fail_on)
    elif output_format == "markdown":
        text = out.markdown(report, fail_on)
    else:
        color = use_colour() and not output
        # on the terminal's width (80 on a pipe); a file written with -o keeps a line per result
        width = shutil.get_terminal_size((80, 24)).columns if not output else 0
        text = "".join(paint_segments(part, color) + "\n" for line in out.tree_lines(report, verbose=verbose)
                       for part in (wrap_segments(line, width) if width else [line]))
    if output:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        api.write_user_file(output, text.encode("utf-8"))
    else:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())


def _finish(report: Any, fail_on: str) -> None:
    for error in report.errors:
        click.echo(f"error: {escape_controls(error)}", err=True)
    if report.errors:
        sys.exit(1)
    if report.failed(fail_on):
        sys.exit(DEGRADED_EXIT)


@check.command("head", context_settings=CONTEXT)
@click.argument("revision", required=False, metavar="[HASH]")
@_compute_option
@_explain_options
@_output_options
@click.pass_context
def check_head(ctx: click.Context, revision: str | None, compute_here: bool, confirm: bool | None, confirm_runs: int,
               no_pending: bool, explain: bool, explain_dir: str | None, explain_register: bool,
               explain_with: str | None, explain_budget: float | None, methods: tuple[str, ...], output_format: str,
               fail_on: str, output: str | None, verbose: int) -> None:
    """Check the profiles of HASH (default HEAD) against their nearest predecessors."""
    _check_history(ctx, "check_head", revision, compute_here, methods, output_format, fail_on, output, verbose,
                   confirm, confirm_runs, (explain, explain_dir, explain_register, explain_with, explain_budget),
                   include_pending=not no_pending)


@check.command("all", context_settings=CONTEXT)
@click.argument("revision", required=False, metavar="[HASH]")
@_compute_option
@_explain_options
@_output_options
@click.pass_context
def check_all(ctx: click.Context, revision: str | None, compute_here: bool, confirm: bool | None, confirm_runs: int,
              no_pending: bool, explain: bool, explain_dir: str | None, explain_register: bool,
              explain_with: str | None, explain_budget: float | None, methods: tuple[str, ...], output_format: str,
              fail_on: str, output: str | None, verbose: int) -> None:
    """Check every version from HASH (default HEAD) back that has profiles."""
    _check_history(ctx, "check_all", revision, compute_here, methods, output_format, fail_on, output, verbose,
                   confirm, confirm_runs, (explain, explain_dir, explain_register, explain_with, explain_budget),
                   include_pending=not no_pending)


def _refuse_unwritable(output: str | None) -> None:
    """An output file that cannot be written is an error before the check runs (and records findings)."""
    if output:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        api.ensure_writable_target(output)


def _check_history(ctx: click.Context, function: str, revision: str | None, compute_here: bool,
                   methods: tuple[str, ...], output_format: str, fail_on: str, output: str | None,
                   verbose: int, confirm: bool | None = None, confirm_runs: int = 7,
                   explaining: tuple[bool, str | None, bool, str | None, float | None] = (False, None, False, None,
                                                                                          None), *,
                   include_pending: bool = True) -> None:
    """Run api_check.check_head or check_all and report: the shared body of both commands."""
    # lazy: keeps `perun-core --help` light
    from perun_core.api import check as api_check

    verbose = _verbosity(ctx, verbose)
    _refuse_unwritable(output)
    compute = compute_here or bool(ctx.meta.get("check.compute_missing"))
    report = getattr(api_check, function)(revision, methods=list(methods) or None, compute_missing=compute,
                                          confirm=_confirm_mode(confirm),
                                          confirm_runs=confirm_runs,
                                          include_pending=include_pending, on_event=_collection_printer(verbose))
    report = _explain(report, *explaining, verbose)
    _emit_report(report, output_format, fail_on, output, verbose)
    if function == "check_all":
        _note_shallow_history()
    _finish(report, fail_on)


def _note_shallow_history() -> None:
    """One note when the history checked is cut short (a shallow clone): the versions before it were not checked."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    ends = api.shallow_commits()
    if ends:
        listed = ", ".join(sha[:7] for sha in ends[:5]) + (f" and {len(ends) - 5} more" if len(ends) > 5 else "")
        click.echo(f"note: this is a shallow clone: its history ends at {listed}; the parents of "
                   f"{'that commit' if len(ends) == 1 else 'those commits'} and everything older were not checked "
                   "('git fetch --unshallow' brings them)", err=True)


@check.command("profiles", context_settings=CONTEXT)
@click.argument("baseline")
@click.argument("target")
@click.option("-m", "--minor", help="Look tags and names up in this minor version's index (default HEAD).")
@_confirm_options
@_explain_options
@_output_options
@click.pass_context
def check_profiles(ctx: click.Context, baseline: str, target: str, minor: str | None, confirm: bool | None,
                   confirm_runs: int, explain: bool, explain_dir: str | None, explain_register: bool,
                   explain_with: str | None, explain_budget: float | None, methods: tuple[str, ...],
                   output_format: str, fail_on: str, output: str | None, verbose: int) -> None:
    """Check TARGET against BASELINE: i@i / i@p tags, names, or profile files anywhere."""
    # lazy: keeps `perun-core --help` light
    from perun_core.api import check as api_check

    verbose = _verbosity(ctx, verbose)
    _refuse_unwritable(output)
    # the command line runs no other threads, so the work may be shared with a forked process
    report = api_check.check_profiles(baseline, target, minor=minor, methods=list(methods) or None, workers=2,
                                      confirm=_confirm_mode(confirm), confirm_runs=confirm_runs,
                                      on_event=_collection_printer(verbose))
    report = _explain(report, explain, explain_dir, explain_register, explain_with, explain_budget, verbose)
    _emit_report(report, output_format, fail_on, output, verbose)
    _finish(report, fail_on)


class MethodGroup(click.Group):
    """``check method NAME``: one command per check method, its options made from the method's parameters."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        # lazy: keeps `perun-core --help` light
        from perun_core.api import check as api_check

        return [info.name for info in api_check.check_methods()]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        # lazy: keeps `perun-core --help` light
        from perun_core.api import check as api_check

        try:
            info = api_check.check_method(name)
        except UnknownUnit:
            return None
        also = f"\n\nAlso called: {', '.join(info.aliases)}." if info.aliases else ""
        return click.Command(
            info.name,
            params=[click.Argument(["baseline"]), click.Argument(["target"]),
                    click.Option(["-m", "--minor", "minor"],
                                 help="Look tags and names up in this minor version's index (default HEAD)."),
                    *_report_options(), *click_params(info.params)],
            callback=_method_callback(info.name, info.params),
            help=f"{info.summary}\n\n{_help_text(info.description)}{also}" if info.description else info.summary + also,
            short_help=info.summary,
            context_settings=CONTEXT,
        )

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            # lazy: keeps `perun-core --help` light
            from perun_core.api import check as api_check

            api_check.check_method(name)  # raises UnknownUnit naming the known methods
        return super().resolve_command(ctx, args)


def _help_text(text: str) -> str:
    """A module's documentation as click help: reStructuredText quoting dropped, tables kept as they are."""
    paragraphs = text.strip().replace("``", "'").split("\n\n")
    return "\n\n".join("\b\n" + p if "\n" in p and p.lstrip()[:1] in "=*-" else p for p in paragraphs)


def _method_callback(name: str, declared: tuple[Any, ...]) -> Callable[..., Any]:
    @click.pass_context
    def callback(ctx: click.Context, baseline: str, target: str, minor: str | None, output_format: str,
                 fail_on: str, output: str | None, verbose: int, **values: Any) -> None:
        # lazy: keeps `perun-core --help` light
        from perun_core.api import check as api_check

        given_values = given(values)
        convert_params(name, declared, given_values)  # a bad value names the parameter before anything loads
        verbose = _verbosity(ctx, verbose)
        _refuse_unwritable(output)
        rule = {"method": name, "params": given_values}
        report = api_check.check_profiles(baseline, target, minor=minor, methods=[rule], workers=2)
        _emit_report(report, output_format, fail_on, output, verbose)
        _finish(report, fail_on)

    return callback


check.add_command(MethodGroup("method", context_settings=CONTEXT, help=(
    "Check TARGET against BASELINE with one method and its parameters.\n\n"
    "'check method NAME --help' describes a method and lists its parameters (also the keys of the "
    "'params' of a rule in degradation.strategies).  Profiles are looked up as by 'check profiles'."),
    short_help="Check two profiles with one method and its parameters."))


@click.command("install-hook", context_settings=CONTEXT)
@click.option("--uninstall", is_flag=True, help="Remove perun's block from the hook instead.")
@click.option("--command", "command", metavar="CMD",
              help="How the hook calls perun-core (default: this Python running perun_core.cli.main).")
@click.option("-y", "--yes", is_flag=True,
              help="Install without asking (the commands the hook will run are still listed).")
def install_hook(uninstall: bool, command: str | None, yes: bool) -> None:
    """Install a git post-commit hook that collects and checks every new commit.

    The hook runs 'perun-core check --compute-missing head': the job matrix
    for the new commit, then the check.  Installing twice changes nothing;
    an existing hook keeps its content.
    """
    # lazy: keeps `perun-core --help` light
    from perun_core.api import check as api_check

    if uninstall:
        result = api_check.uninstall_hook()
        click.echo(f"Removed perun's block from {result.path}" if result.action == "removed"
                   else f"No perun block in {result.path}")
        return
    # the hook runs the job matrix after every commit: name what that executes and ask first
    commands = api_check.matrix_commands()
    click.echo("After every commit the hook will run the job matrix, that is:", err=True)
    for line in commands or ["(no commands: the job matrix is empty)"]:
        click.echo(f"  {escape_controls(line)}", err=True)
    if not yes:
        if not sys.stdin.isatty():
            raise click.ClickException("install-hook needs a confirmation; pass --yes to install without asking")
        if not click.confirm("Install the hook?", default=False, err=True):
            raise click.ClickException("not installed")
    result = api_check.install_hook(command=command)
    verb = {"created": "Created", "updated": "Updated", "unchanged": "Already installed:"}[result.action]
    click.echo(f"{verb} {result.path}")
