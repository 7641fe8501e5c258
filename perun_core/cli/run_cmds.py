"""``collect``, ``run job``/``run matrix`` and ``postprocessby``.

The subcommands of ``collect`` and ``postprocessby`` are built from the unit
registries when they are named or listed: one command per collector or
postprocessor, its options generated from the unit's parameter declaration.
Only click is imported here at start-up (``perun-core --help`` loads this
module for the short help of its commands); the API, the units and rich come
in when a command runs.
"""

from __future__ import annotations

from typing import Any

import click

from perun_core.cli.terminal import escape_controls
from perun_core.errors import UnitError, UnknownUnit, UsageError

from perun_core.params import convert_params, load_params_document

from .params import click_params, given as _given

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


# -- commands generated from unit declarations ---------------------------------------

class UnitGroup(click.Group):
    """A group with one subcommand per unit of a registry, made on demand."""

    def __init__(self, *args: Any, kind: str, make_callback: Any, extra_params: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind
        self.make_callback = make_callback
        self.extra_params = extra_params or (lambda: [])

    def list_commands(self, ctx: click.Context) -> list[str]:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        return api.unit_names(self.kind)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        try:
            unit = api.get_unit(self.kind, name)
        except UnknownUnit:
            return None
        summary = str(getattr(unit, "summary", "") or "")
        description = str(getattr(unit, "description", "") or "")
        return click.Command(
            name,
            params=[*self.extra_params(), *click_params(getattr(unit, "params", ()))],
            callback=self.make_callback(name),
            help=f"{summary}\n\n{description}" if description else summary,
            short_help=summary,
            context_settings={**CONTEXT, "allow_interspersed_args": False},
        )

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            # lazy: keeps `perun-core --help` light
            from perun_core import api

            raise UnknownUnit(self.kind, name, api.unit_names(self.kind))
        return super().resolve_command(ctx, args)


def _verbosity(ctx: click.Context) -> int:
    root = ctx.find_root()
    return int(getattr(root.obj, "verbose", 0) or 0)


def _report_run(result: Any) -> None:
    if not result.profiles and not result.failures:
        click.echo("No profiles were collected")


# -- collect --------------------------------------------------------------------------

def _collect_callback(name: str) -> Any:
    @click.pass_context
    def callback(ctx: click.Context, command: tuple[str, ...] = (), check: bool = False, **values: Any) -> None:
        import shlex

        if check:
            _report_requirements(ctx, name)
        for key in ("output_filename_template", "minor_version", "crawl_parents", "force_dirty", "shard"):
            values.pop(key, None)

        # lazy: keeps `perun-core --help` light
        from perun_core.api import run as api_run
        # lazy: keeps `perun-core --help` light
        from perun_core.cli.run_render import renderer
        # lazy: keeps `perun-core --help` light
        from perun_core.api import catalog as api_units

        group = ctx.parent.params if ctx.parent else {}
        cmds, args = list(group.get("cmd") or ()), list(group.get("args") or ())
        if command:
            if cmds:
                raise UsageError("give the command either with -c/--cmd or after the collector, not both")
            cmds = [command[0]]
            if len(command) > 1:
                if args:
                    raise UsageError("give the arguments either with -a/--args or after the command, not both")
                args = [shlex.join(command[1:])]
        unit = api_units.get_unit("collector", name)
        if not cmds:
            raise UsageError(f"no command to profile; e.g. 'perun-core collect {name} -r 3 ./build/app'",
                             hint=_module_hint(ctx, name, unit))
        params = convert_params(name, unit.params, load_params_document(group["params"], what="collector parameters")
                                if group.get("params") else {})
        params.update(_given(values))
        with renderer(_verbosity(ctx)) as on_event:
            result = api_run.collect(name, cmds, args, list(group.get("workload") or ()), params,
                                     on_event=on_event, **_run_options(ctx))
        _report_run(result)

    return callback


def _module_hint(ctx: click.Context, name: str, unit: Any) -> str | None:
    """For a collector of Python programs (one with a ``python`` parameter): a -m value was meant as a module."""
    import re

    if not any(getattr(param, "name", None) == "python" for param in getattr(unit, "params", ())):
        return None
    taken = [rev for rev in _run_options(ctx)["minor_versions"] if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", rev)]
    if not taken:
        return None
    return (f"-m {taken[0]} was read as collect's -m/--minor-version (a commit); to profile the module, "
            f"use -- before -m MODULE: perun-core collect {name} -- -m {taken[0]} [ARGS]")


def _report_requirements(ctx: click.Context, name: str) -> None:
    """``collect NAME --check``: what the collector needs, whether it is here; exit 1 when something is missing."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    result = api.unit_requirements("collector", name)
    verdict = "this machine has what it needs" if result.usable else "something it needs is missing"
    click.echo(f"{name}: {verdict}" if result.requirements else f"{name}: needs nothing beyond perun")
    for item in result.requirements:
        state = "ok" if item.ok else ("optional" if item.optional else "MISSING")
        click.echo(f"  {state:<9}{item.name}: {item.detail}")
        if not item.ok and item.how_to_get:
            click.echo(f"  {'':<9}-> {item.how_to_get}")
    if not result.usable:
        missing = ", ".join(r.name for r in result.requirements if not r.ok and not r.optional)
        raise UnitError(f"collector '{name}' cannot run on this machine: {missing} is missing")
    ctx.exit(0)


def _collector_params() -> list[click.Parameter]:
    return [
        click.Option(["check", "--check"], is_flag=True,
                     help="Report whether this machine has what the collector needs, then exit."),
        *_version_params("--crawl-parents"),
        click.Argument(["command"], nargs=-1, type=click.UNPROCESSED, metavar="[COMMAND [ARGS]...]"),
    ]


def _version_params(*crawl_flags: str) -> list[click.Option]:
    """-ot, -m, --crawl-parents (spelled ``crawl_flags``) and -f: accepted by the groups and their commands."""
    return [
        click.Option(["output_filename_template", "-ot", "--output-filename-template"], metavar="TEMPLATE",
                     help="Name of the generated profiles (tags of format.output_profile_template)."),
        click.Option(["minor_version", "-m", "--minor-version"], multiple=True, metavar="REV",
                     help="Profile this commit, in a temporary worktree (repeatable)."),
        click.Option(["crawl_parents", *crawl_flags], is_flag=True,
                     help="Also profile every ancestor of the -m commits (of HEAD without -m), "
                          "each in a temporary worktree."),
        click.Option(["force_dirty", "-f", "--force-dirty"], is_flag=True,
                     help="Profile the working tree even if it has uncommitted changes."),
        click.Option(["shard", "--shard"], metavar="K/N",
                     help="Run only the K-th of N deterministic slices of commits x jobs (for N CI jobs)."),
    ]


def _with_params(params: list[click.Option]) -> Any:
    def decorate(function: Any) -> Any:
        function.__click_params__ = [*getattr(function, "__click_params__", []), *reversed(params)]
        return function

    return decorate


def _run_options(ctx: click.Context) -> dict[str, Any]:
    """The version options given to the group and to the command, merged."""
    group = ctx.parent.params if ctx.parent else {}
    mine = ctx.params
    return {
        "minor_versions": [v for v in (*(group.get("minor_version") or ()), *(mine.get("minor_version") or ())) if v],
        "crawl_parents": bool(group.get("crawl_parents") or mine.get("crawl_parents")),
        "force_dirty": bool(group.get("force_dirty") or mine.get("force_dirty")),
        "output_template": mine.get("output_filename_template") or group.get("output_filename_template"),
        # an empty --shard (an unset CI variable) is refused, not taken for "no shard"
        "shard": mine.get("shard") if mine.get("shard") is not None else group.get("shard"),
    }


@click.group(cls=UnitGroup, kind="collector", make_callback=_collect_callback, extra_params=_collector_params,
             context_settings=CONTEXT)
@click.option("-c", "--cmd", multiple=True, metavar="CMD", help="Command to profile, e.g. ./build/app (repeatable).")
@click.option("-a", "--args", multiple=True, metavar="ARGS", help="Arguments of the command (repeatable).")
@click.option("-w", "--workload", multiple=True, metavar="WORKLOAD", help="Workload given to the command (repeatable).")
@click.option("-p", "--params", metavar="YAML", help="Collector parameters: a YAML file or inline YAML ('repeat: 5').")
@_with_params(_version_params("--crawl-parents"))
def collect(**_: Any) -> None:
    """Collect a profile of a command with one collector.

    \b
    perun-core collect time -w 2 -r 10 ./build/app input.txt
    perun-core collect -c ./build/app -w small.in -w big.in time -r 5

    Every command x args x workload is profiled once; the profiles land in
    .perun/jobs with origin = the profiled commit.  Commands run in the
    root of the working tree (or of a temporary worktree with -m), so
    relative paths are relative to it.  Run 'perun-core collect COLLECTOR
    --help' for a collector's options.
    """


# -- run ------------------------------------------------------------------------------

@click.group(context_settings=CONTEXT)
@_with_params(_version_params("-c", "--crawl-parents"))
def run(**_: Any) -> None:
    """Run a batch of jobs (job) or the job matrix of local.yml (matrix).

    Before the jobs of each commit, the execute.pre_run commands run in its
    tree (without a shell); a failing one stops the run.  Each job's profile
    is postprocessed, written to .perun/jobs (origin = the commit) and, with
    profiles.register_after_run, registered at that commit.
    """


def _unit_params(pairs: tuple[tuple[str, str], ...], names: tuple[str, ...], what: str) -> dict[str, dict[str, Any]]:
    params: dict[str, dict[str, Any]] = {}
    for name, source in pairs:
        if name not in names:
            raise UsageError(f"parameters for {what} '{name}', which is not used (add it with its option first)")
        params.setdefault(name, {}).update(load_params_document(source, what=f"{what} parameters"))
    return params


@run.command("job", context_settings=CONTEXT)
@click.option("-b", "--cmd", multiple=True, required=True, metavar="CMD", help="Command to profile (repeatable).")
@click.option("-a", "--args", multiple=True, metavar="ARGS", help="Arguments of the command (repeatable).")
@click.option("-w", "--workload", multiple=True, metavar="WORKLOAD", help="Workload of the command (repeatable).")
@click.option("-c", "--collector", multiple=True, required=True, metavar="NAME", help="Collector (repeatable).")
@click.option("-cp", "--collector-params", nargs=2, multiple=True, metavar="NAME YAML",
              help="Parameters of collector NAME: a YAML file or inline YAML.")
@click.option("-p", "--postprocessor", multiple=True, metavar="NAME", help="Postprocessor, applied in order (repeatable).")
@click.option("-pp", "--postprocessor-params", nargs=2, multiple=True, metavar="NAME YAML",
              help="Parameters of postprocessor NAME: a YAML file or inline YAML.")
@_with_params(_version_params("--crawl-parents"))
@click.pass_context
def run_job(ctx: click.Context, cmd: tuple[str, ...], args: tuple[str, ...], workload: tuple[str, ...],
            collector: tuple[str, ...], collector_params: tuple, postprocessor: tuple[str, ...],
            postprocessor_params: tuple, **_: Any) -> None:
    """Run the jobs CMD x ARGS x WORKLOAD x COLLECTOR, each postprocessed in order.

    \b
    perun-core run job -c time -b ./mybin -w file.in -w file2.in -p normalizer
    perun-core run job -c time -cp time 'repeat: 5' -b ./mybin
    """
    # lazy: keeps `perun-core --help` light
    from perun_core.api import run as api_run
    # lazy: keeps `perun-core --help` light
    from perun_core.cli.run_render import renderer

    cparams = _unit_params(collector_params, collector, "collector")
    pparams = _unit_params(postprocessor_params, postprocessor, "postprocessor")
    with renderer(_verbosity(ctx)) as on_event:
        result = api_run.run_job(
            list(cmd), list(args), list(workload),
            [(name, cparams.get(name)) for name in collector], [(name, pparams.get(name)) for name in postprocessor],
            on_event=on_event, **_run_options(ctx),
        )
    _report_run(result)


@run.command("matrix", context_settings=CONTEXT)
@click.option("-q", "--without-vcs-history", is_flag=True, help="Accepted for compatibility; history is never printed.")
@_with_params(_version_params("-c", "--crawl-parents"))
@click.pass_context
def run_matrix(ctx: click.Context, without_vcs_history: bool, **_: Any) -> None:
    """Run the job matrix of the local configuration (cmds, args, workloads, collectors, postprocessors)."""
    # lazy: keeps `perun-core --help` light
    from perun_core.api import run as api_run
    # lazy: keeps `perun-core --help` light
    from perun_core.cli.run_render import renderer

    with renderer(_verbosity(ctx)) as on_event:
        result = api_run.run_matrix(on_event=on_event, **_run_options(ctx))
    _report_run(result)


# -- postprocessby --------------------------------------------------------------------------

def _postprocess_callback(name: str) -> Any:
    @click.pass_context
    def callback(ctx: click.Context, **values: Any) -> None:
        # lazy: keeps `perun-core --help` light
        from perun_core.api import postprocessing

        group = ctx.parent.params if ctx.parent else {}
        done = postprocessing.postprocess(group["profile"], name, _given(values), minor=group.get("minor"),
                                   output_template=group.get("output_filename_template"))
        click.echo(escape_controls(f"Postprocessed {done.source} by {name} into {done.path.name}"))

    return callback


@click.group(cls=UnitGroup, kind="postprocessor", make_callback=_postprocess_callback, context_settings=CONTEXT)
@click.argument("profile")
@click.option("-m", "--minor", metavar="REV", help="Look PROFILE up in this commit's index (default HEAD).")
@click.option("-ot", "--output-filename-template", metavar="TEMPLATE",
              help="Name of the new profile (tags as in format.output_profile_template).")
def postprocessby(**_: Any) -> None:
    """Postprocess PROFILE (i@i, i@p, a name or a path) with a postprocessor.

    The result is a new pending profile in .perun/jobs with the same origin
    and the postprocessor appended to its 'postprocessors'.
    """
