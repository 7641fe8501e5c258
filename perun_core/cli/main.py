"""The ``perun-core`` command line: a thin front end over :mod:`perun_core.api`.

Only click is imported at start-up; every command imports the API, rich and
the rest when it runs, which keeps ``perun-core --help`` fast.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import textwrap
import warnings
from typing import Any

import click

from perun_core.cli.allocator import tune_for_bulk_work
from perun_core.cli.params import OUTPUT_FILE
from perun_core.cli.remote_cmds import status_lines
from perun_core.cli.terminal import escape_controls as escape_text, use_colour
from perun_core.errors import (
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    EnvironmentFailure,
    ExternalToolError,
    PerunError,
    UnknownUnit,
)

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


#: Commands living in other modules, imported only when named (or listed by --help).
LAZY_COMMANDS: dict[str, str] = {
    "collect": "perun_core.cli.run_cmds:collect",
    "run": "perun_core.cli.run_cmds:run",
    "postprocessby": "perun_core.cli.run_cmds:postprocessby",
    "check": "perun_core.cli.check_cmds:check",
    "install-hook": "perun_core.cli.check_cmds:install_hook",
    "convert": "perun_core.cli.format_cmds:convert",
    "import": "perun_core.cli.import_cmds:import_group",
    "diff": "perun_core.cli.diff_cmds:diff",
    "showdiff": "perun_core.cli.diff_cmds:diff",
    "fuzz": "perun_core.cli.fuzz_cmds:fuzz", "deltadebugging": "perun_core.cli.fuzz_cmds:deltadebugging",
    "push": "perun_core.cli.remote_cmds:push",
    "fetch": "perun_core.cli.remote_cmds:fetch",
    "pull": "perun_core.cli.remote_cmds:pull",
    "bisect": "perun_core.cli.bisect_cmds:bisect",
    "fsck": "perun_core.cli.fsck_cmd:fsck",
}


#: Views of `show PROFILE VIEW` living in other modules, imported the same way.
LAZY_VIEWS: dict[str, str] = {
    "tableof": "perun_core.cli.view_cmds:tableof",
    "bars": "perun_core.cli.view_cmds:bars",
    "flow": "perun_core.cli.view_cmds:flow",
    "scatter": "perun_core.cli.view_cmds:scatter",
    "flamegraph": "perun_core.cli.view_cmds:flamegraph",
    "heapmap": "perun_core.cli.view_cmds:heapmap",
}


class LazyGroup(click.Group):
    """A group whose extra commands (from ``lazy``) are imported on first use."""

    lazy: dict[str, str] = LAZY_COMMANDS

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            import importlib

            module_name, attribute = self.lazy[name].split(":")
            self.add_command(getattr(importlib.import_module(module_name), attribute), name)
        return super().get_command(ctx, name)


class LazyViewGroup(LazyGroup):
    lazy = LAZY_VIEWS

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            raise UnknownUnit("view", name, self.list_commands(ctx))
        return super().resolve_command(ctx, args)


class State:
    """Global options shared by every subcommand."""

    def __init__(self, verbose: int, no_pager: bool) -> None:
        self.verbose = verbose
        self.no_pager = no_pager


def _exit_code_epilog() -> str:
    # \b keeps click from rewrapping the table; a meaning goes on under itself, the line within 80 columns with
    # click's indent of two
    return "\b\nExit codes:\n" + "\n".join(
        textwrap.fill(meaning, 78, initial_indent=f"  {code:<4} ", subsequent_indent=" " * 7)
        for code, meaning in EXIT_CODES.items())


@click.group(cls=LazyGroup, context_settings=CONTEXT, epilog=_exit_code_epilog())
@click.option("--no-pager", is_flag=True, help="Never page the output of status and log.")
@click.option("-v", "--verbose", count=True, help="More output; with -v errors show their traceback.")
@click.version_option(package_name="perun", prog_name="perun-core")
@click.pass_context
def cli(ctx: click.Context, no_pager: bool, verbose: int) -> None:
    """perun: performance profiles linked to the commits of a git repository.

    Start with 'perun-core init', collect or drop profiles into .perun/jobs,
    then 'status', 'add', 'log'.
    """
    ctx.obj = State(verbose, no_pager)


# -- init / config -------------------------------------------------------------

@cli.command(context_settings=CONTEXT)
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--vcs-type", default="git", show_default=True, help="Version control system to wrap.")
@click.option("--vcs-path", type=click.Path(file_okay=False), help="Where the wrapped repository lives (default: PATH).")
@click.option("--vcs-param", nargs=2, multiple=True, metavar="KEY VALUE", help="Extra parameter for the VCS initialization.")
@click.option("--vcs-flag", multiple=True, metavar="FLAG", help="Extra flag for the VCS initialization (e.g. bare).")
@click.option("-c", "--configure", is_flag=True, help="Open the new local configuration in the editor.")
@click.option("-t", "--config-template", default="master", show_default=True,
              type=click.Choice(["master", "developer", "user"]), help="Template of the local configuration.")
@click.option("--compat", is_flag=True,
              help="Make a repository the original Perun (perun-toolsuite 0.28) can open and use beside perun.")
@click.pass_obj
def init(state: State, path: str | None, vcs_type: str, vcs_path: str | None, vcs_param: tuple,
         vcs_flag: tuple, configure: bool, config_template: str, compat: bool) -> None:
    """Initialize perun (and git, if missing) at PATH, default the current directory."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    result = api.init(path, vcs_type=vcs_type, vcs_path=vcs_path, vcs_params=dict(vcs_param),
                      vcs_flags=vcs_flag, template=config_template, compat=compat)
    if result.git_created:
        _out(f"Initialized empty git repository in {result.vcs_root}")
    verb = "Reinitialized existing" if result.reinitialized else "Initialized empty"
    _out(f"{verb} perun repository in {result.root / '.perun'}")
    if result.shared_with_original:
        _out("Shared with the original Perun: indexes and objects are written in the forms it reads")
    if configure:
        _edit(api.config_edit_request(scope="local", cwd=result.root), "local")


@cli.group(context_settings={"help_option_names": ["--help"], "max_content_width": 100},
           invoke_without_command=True)
@click.option("-l", "--local", "scope", flag_value="local", help="Use the local configuration (.perun/local.yml).")
@click.option("-h", "--shared", "scope", flag_value="shared", help="Use the shared configuration (shared.yml).")
@click.option("-n", "--nearest", "scope", flag_value="nearest", default=True, help="Use the nearest configuration (default).")
@click.pass_context
def config(ctx: click.Context, scope: str) -> None:
    """Get, set, edit or reset the local and shared configuration.

    Without a command: lists the keys of the configuration files that this
    perun does not read (kept in the files as they are).
    """
    ctx.meta["scope"] = scope
    if ctx.invoked_subcommand is None:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        unused = api.unused_config_keys()
        for path, keys in unused.items():
            _out(f"{path}: not used by this perun (kept as they are): {', '.join(keys)}")
        if not unused:
            _out("every configuration key is in use")
        _out("commands: get, set, edit, reset (see 'perun-core config --help')")


def _scope() -> str:
    return click.get_current_context().meta.get("scope", "nearest")


@config.command("get", context_settings={"help_option_names": ["--help"]})
@click.argument("key")
def config_get(key: str) -> None:
    """Print the value of KEY (sections separated by dots, e.g. format.status)."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    found = api.config_get(key, scope=_scope())
    _out(f"{key}: {_yaml_scalar(found.value)}")


@config.command("set", context_settings={"help_option_names": ["--help"]})
@click.argument("key")
@click.argument("value")
def config_set(key: str, value: str) -> None:
    """Set KEY to VALUE (parsed as YAML: true, 3, [a, b] ...)."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    stored = api.config_set(key, api.parse_config_value(value), scope=_scope())
    _out(f"{key}: {_yaml_scalar(stored.value)}")


@config.command("edit", context_settings={"help_option_names": ["--help"]})
def config_edit() -> None:
    """Open the configuration in $VISUAL, $EDITOR or general.editor."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    scope = _scope()
    request = api.config_edit_request(scope=scope)
    _edit(request, "shared" if scope == "shared" or ".perun" not in request.path.parts else "local")


@config.command("reset", context_settings={"help_option_names": ["--help"]})
@click.option("-t", "--config-template", default="master", show_default=True,
              type=click.Choice(["master", "developer", "user"]), help="Template for a local configuration.")
def config_reset(config_template: str) -> None:
    """Reset the configuration to its template (local) or the defaults (shared)."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    path = api.config_reset(scope=_scope(), template=config_template)
    _out(f"Reset {path}")


def _edit(request: Any, kind: str) -> None:
    import subprocess

    # lazy: keeps `perun-core --help` light
    from perun_core import api

    try:
        code = subprocess.call(request.command)
    except FileNotFoundError:
        raise ExternalToolError(request.command[0], "set $EDITOR or 'general.editor' to an installed editor") from None
    if code != 0:
        raise click.ClickException(f"editor '{request.command[0]}' exited with status {code}")
    api.validate_config_file(request.path, kind)


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, (dict, list)):
        import yaml

        return "\n" + yaml.safe_dump(value, default_flow_style=False, sort_keys=False).rstrip()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- add / rm -----------------------------------------------------------------

@cli.command(context_settings=CONTEXT)
@click.argument("profiles", nargs=-1, required=True, metavar="PROFILE...")
@click.option("-m", "--minor", help="Register at this minor version (default HEAD).")
@click.option("--keep-profile", is_flag=True, help="Keep the profile file after registering it.")
@click.option("-f", "--force", is_flag=True, help="Register even if the profile's origin is another commit.")
def add(profiles: tuple[str, ...], minor: str | None, keep_profile: bool, force: bool) -> None:
    """Register PROFILEs (i@p tags or paths) at a minor version."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    for added in api.add(list(profiles), minor=minor, keep_profile=keep_profile, force=force):
        _out(f"Registered {added.source} at {added.minor[:7]} as {added.checksum[:12]}")


@cli.command(context_settings=CONTEXT)
@click.argument("profiles", nargs=-1, required=True, metavar="PROFILE...")
@click.option("-m", "--minor", help="Unlink from this minor version (default HEAD).")
@click.option("-A", "--remove-all", is_flag=True, help="Remove every index entry of PROFILE, not just the first.")
def rm(profiles: tuple[str, ...], minor: str | None, remove_all: bool) -> None:
    """Unlink PROFILEs (i@i tags or names) from a minor version; i@p deletes a pending file."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    for removed in api.remove(list(profiles), minor=minor, remove_all=remove_all):
        if removed.pending:
            _out(f"Deleted pending profile {removed.source}")
        else:
            _out(f"Removed {removed.source} from {removed.minor[:7] if removed.minor else '?'} (object kept)")


# -- status / log ----------------------------------------------------------------

@cli.command(context_settings=CONTEXT)
@click.option("-s", "--short", is_flag=True, help="Only the essentials.")
@click.option("-sb", "--sort-by", help="Order the listed profiles by this attribute (tags keep their numbers).")
@click.pass_obj
def status(state: State, short: bool, sort_by: str | None) -> None:
    """Show HEAD, its registered profiles and the pending ones."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api
    # lazy: keeps `perun-core --help` light
    from perun_core.cli.render import render_status

    import itertools

    report = api.status(sort_by=sort_by)
    width = shutil.get_terminal_size((80, 24)).columns
    _page(state, "status", itertools.chain(render_status(report, short=short, color=use_colour(), width=width),
                                           status_lines()))
    if report.damaged:
        # The listing is still useful, but a damaged store must not pass silently.
        for problem in report.damaged:
            click.echo(f"error: {problem}", err=True)
        click.echo("hint: run 'perun-core fsck' to check the store ('fsck --repair' rebuilds damaged indexes)", err=True)
        sys.exit(1)


@cli.command(context_settings=CONTEXT)
@click.argument("revision", required=False, metavar="[HASH]")
@click.option("-s", "--short", is_flag=True, help="One line per minor version (format.shortlog).")
@click.option("-g/-G", "--graph/--no-graph", default=True, show_default=True, help="Draw merge history.")
@click.option("-n", "--max-count", type=click.IntRange(min=1), help="Show at most this many versions.")
@click.pass_obj
def log(state: State, revision: str | None, short: bool, graph: bool, max_count: int | None) -> None:
    """Show the history from HASH (default HEAD) with the profiles of each version."""
    # lazy: keeps `perun-core --help` light
    from perun_core.cli.render import render_log

    _page(state, "log", render_log(revision, short=short, graph=graph, limit=max_count, color=use_colour(),
                                   width=shutil.get_terminal_size((80, 24)).columns))


# -- show ---------------------------------------------------------------------------

@cli.group(cls=LazyViewGroup, context_settings=CONTEXT)
@click.argument("profile")
@click.option("-m", "--minor", help="Look PROFILE up in this minor version's index (default HEAD).")
@click.pass_context
def show(ctx: click.Context, profile: str, minor: str | None) -> None:
    """Show PROFILE (i@i, i@p, a name or a path) with a VIEW."""
    ctx.meta["profile_spec"] = (profile, minor)


@show.command("raw", context_settings=CONTEXT)
@click.option("-f", "--filename", type=OUTPUT_FILE, metavar="FILE",
              help="Write the JSON to FILE instead.")
# the first spelling of --filename, kept working but no longer listed
@click.option("-o", "--output", type=OUTPUT_FILE, hidden=True)
@click.option("--compact", is_flag=True, help="No indentation.")
@click.option("--layout", type=click.Choice(["compact", "documented"]), default=None,
              help="Layout of FILE: compact (columnar, the default with -f) or documented (the JSON of the "
                   "specification, which the original Perun reads too). Printing is always documented.")
def show_raw(filename: str | None, output: str | None, compact: bool, layout: str | None) -> None:
    """The profile in the documented JSON form (or, with -f, the compact layout unless --layout documented).

    On a terminal the JSON is highlighted, unless NO_COLOR is set.
    """
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    if filename and output:
        raise click.UsageError("-o/--output is another name of -f/--filename: give one of them")
    filename = filename or output
    spec, minor = click.get_current_context().meta["profile_spec"]
    loaded = api.load_profile(spec, minor=minor)
    if filename:
        chosen = layout or "compact"
        data = api.profile_bytes(loaded.profile, chosen, indent=None if compact else 2) + b"\n"
        api.write_output(filename, data)
        click.echo(api.escape_controls(f"Wrote {loaded.source} as JSON to {filename}"))
        return
    if layout == "compact":
        raise click.UsageError("--layout compact needs -f FILE (the terminal gets the documented form)")
    data = api.profile_json(loaded.profile, indent=None if compact else 2) + b"\n"
    # json leaves DEL and C1 controls (U+009B starts a terminal sequence) raw: written as \\uXXXX, and not
    # highlighted, as the highlighter would write them raw again
    safe = api.json_bytes_safe(data)
    # Highlighting re-parses the JSON: past a few megabytes it costs more than it helps.
    if safe is data and sys.stdout.isatty() and not os.environ.get("NO_COLOR") and len(data) <= 8_000_000:
        from rich.console import Console
        from rich.json import JSON

        Console(soft_wrap=True).print(JSON(data.decode("utf-8"), indent=None if compact else 2))
        return
    sys.stdout.buffer.write(safe)
    sys.stdout.flush()


# -- output helpers ---------------------------------------------------------------

def _out(text: str) -> None:
    """A line (or lines) naming the user's paths, keys and values: their control characters escaped."""
    click.echo("\n".join(escape_text(line) for line in text.split("\n")))


def _page(state: State, command: str, lines: Any) -> None:
    """Print lines, through the pager when configured and on a terminal."""
    paging = "never"
    if not state.no_pager and sys.stdout.isatty():
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        try:
            paging = str(api.config_get("general.paging").value)
        except Exception:  # noqa: BLE001 - a broken config must not stop output
            paging = "only-log"
    if paging == "always" or paging == f"only-{command}":
        import shlex
        import subprocess

        pager = shlex.split(os.environ.get("PAGER") or "less -R")
        try:
            process = subprocess.Popen(pager, stdin=subprocess.PIPE)
        except FileNotFoundError:
            pass
        else:
            assert process.stdin is not None
            try:
                for line in lines:
                    process.stdin.write((line + "\n").encode("utf-8", "replace"))
                process.stdin.close()
            except BrokenPipeError:
                pass
            process.wait()
            return
    write = sys.stdout.write
    try:
        for line in lines:
            write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # `perun-core log | head` closes the pipe early: not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


# -- entry point --------------------------------------------------------------------

def _usage_message(exc: click.UsageError) -> str:
    """click's message, except that a group called without its subcommand names the ones it expects."""
    group = exc.ctx.command if exc.ctx else None
    if isinstance(group, click.Group) and exc.format_message() == "Missing command.":
        names = ", ".join(group.list_commands(exc.ctx))
        return f"{exc.ctx.command_path}: missing a command after the arguments; expected one of: {names}"
    return exc.format_message()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI: one-line errors on stderr and the exit codes of :data:`perun_core.errors.EXIT_CODES`."""

    verbose = any(a in ("-v", "--verbose") or (a.startswith("-v") and set(a[1:]) == {"v"}) for a in (argv or sys.argv[1:]))
    tune_for_bulk_work()
    if not verbose:
        # numpy's floating-point warnings (an overflow while squaring amounts near 1e300 for a variance) are
        # lines of its source on stderr, not the user's business: -v shows them
        warnings.filterwarnings("ignore", category=RuntimeWarning)
    # lazy: perun_core.api loads its names on first use (`perun-core --help` stays light)
    from perun_core.api.files import command_scope, write_deferred

    try:
        with command_scope():
            cli.main(args=argv, prog_name="perun-core", standalone_mode=False)
            write_deferred()  # what the command learnt is kept only now that it succeeded
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "perun-core"
        click.echo(escape_text(f"error: {_usage_message(exc)}"), err=True)
        click.echo(escape_text(f"hint: see '{command} --help'"), err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        click.echo(escape_text(f"error: {exc.format_message()}"), err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - the one place that turns errors into exit codes
        # lazy: keeps `perun-core --help` light
        from perun_core.api.text import escape_controls, escape_lines

        if verbose:
            import traceback

            traceback.print_exc()
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            # the operating system said no (EROFS, ENOSPC, EACCES, ENOENT...): not a bug
            if exc.filename is None and _raised_writing_stdout(exc):
                exc.filename = _stdout_name()
                _silence_stdout()
            exc = EnvironmentFailure.from_os_error(exc)
        if isinstance(exc, PerunError):
            click.echo(f"error: {escape_lines(exc.message)}", err=True)
            if exc.hint:
                click.echo(f"hint: {escape_lines(exc.hint)}", err=True)
            sys.exit(exc.exit_code)
        click.echo(f"error: internal error: {type(exc).__name__}: {escape_controls(str(exc))}", err=True)
        if not verbose:
            click.echo("hint: this is a bug; run with -v for the traceback, and please report it", err=True)
        sys.exit(EXIT_INTERNAL)


def _raised_writing_stdout(exc: BaseException) -> bool:
    """Whether ``exc`` (an OSError naming no file: a full disk) came from writing standard output.

    Writes to stdout are made by ``click.echo`` (whose ``file`` is the stream),
    by ``sys.stdout.write`` or its bound method: the frame the error left holds
    or names one of them.
    """
    import linecache

    trace = exc.__traceback__
    if trace is None:
        return False
    while trace.tb_next is not None:
        trace = trace.tb_next
    frame = trace.tb_frame
    streams = {id(sys.stdout), id(sys.__stdout__)}
    held = frame.f_locals.values()
    if any(id(value) in streams or id(getattr(value, "__self__", None)) in streams for value in held):
        return True
    return "stdout" in linecache.getline(frame.f_code.co_filename, trace.tb_lineno)


def _silence_stdout() -> None:
    """Point standard output at /dev/null: the interpreter's last flush must not print a second error."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _stdout_name() -> str:
    """``standard output`` and, where the system says, the file it goes to."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return f"standard output ({os.readlink(f'/proc/self/fd/{sys.stdout.fileno()}')})"
    return "standard output"


if __name__ == "__main__":
    main()
