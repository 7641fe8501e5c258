"""``perun-core import KIND FILE...``: one subcommand per importer, its options from the importer's params."""

from __future__ import annotations

from typing import Any

import click

from perun_core.errors import UnknownUnit

from .params import click_param, given
from .run_cmds import CONTEXT


class ImporterGroup(click.Group):
    """``import`` with one subcommand per registered importer, made on demand."""

    def _infos(self) -> dict[str, Any]:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        return {info.name: info for info in api.importer_kinds()}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._infos())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        try:
            info = api.importer_info(name)  # loads the one importer named, not all of them
        except UnknownUnit:
            return None
        common = [
            click.Argument(["files"], nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="FILE..."),
            click.Option(["-m", "--minor", "minor"], metavar="REV",
                         help="The commit the measurements belong to (origin) [default: HEAD]."),
            click.Option(["-c", "--cmd", "cmd"], metavar="TEXT",
                         help="The command that was measured [default: what the file records, else the kind]."),
            click.Option(["-w", "--workload", "workload"], metavar="TEXT", help="Its workload."),
            click.Option(["--register"], is_flag=True, help="Register the profile at the commit instead of "
                                                            "keeping it pending."),
        ]
        return click.Command(name, params=[*common, *(click_param(p) for p in info.params)], callback=_callback(name),
                             help=f"{info.summary}\n\n{info.description}".replace("``", "'"),
                             short_help=info.summary, context_settings=CONTEXT)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple:
        name = args[0] if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            raise UnknownUnit("importer", name, self.list_commands(ctx))
        return super().resolve_command(ctx, args)


def _callback(kind: str) -> Any:
    def callback(files: tuple[str, ...], minor: str | None, cmd: str | None, workload: str | None, register: bool,
                 **values: Any) -> None:
        # lazy: keeps `perun-core --help` light
        from perun_core import api

        result = api.import_profiles(kind, list(files), minor=minor, cmd=cmd, workload=workload, register=register,
                                     options=given(values))
        units = ", ".join(f"{k}: {v}" for k, v in result.units.items())
        where = f"registered at {result.origin[:7]} ({result.checksum[:7] if result.checksum else ''})" \
            if result.registered else f"pending as {result.path}"
        click.echo(f"imported {len(result.files)} {kind} file{'s' if len(result.files) != 1 else ''}: "
                   f"{result.type} profile of {result.resources} resources ({units}), origin {result.origin[:7]}, "
                   f"{where}")

    return callback


@click.group("import", cls=ImporterGroup, context_settings=CONTEXT)
def import_group() -> None:
    """Import what other tools measured (perf, callgrind, py-spy, speedscope, folded stacks, benchmark harnesses,
    memray) as a profile."""
