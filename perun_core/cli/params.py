"""Click arguments and options made from :class:`~perun_core.params.Param` declarations.

Every command whose options come from a declaration (``collect NAME``,
``postprocessby NAME``, ``show PROFILE VIEW``, ``check method NAME``) builds
them here, so one parameter reads the same everywhere.  Click only parses:
an option not given is None (or ``()``), and the values given are converted
and checked afterwards by the declaration (:meth:`Param.convert`), which
names the parameter in its error.  Only click is imported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import click

__all__ = ["OUTPUT_FILE", "DeclaredCommand", "FiniteFloatRange", "click_param", "click_params", "given"]


class OutputFile(click.Path):
    """A file a command writes (``-f FILE``, ``-o FILE``): not a directory, and not an empty name.

    An empty name would otherwise read as "no file given" and send the
    output to the terminal instead.
    """

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("expected a file name, got an empty one", param, ctx)
        return super().convert(value, param, ctx)


OUTPUT_FILE = OutputFile()


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange, refusing nan (which every comparison lets through) and infinities."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"expected a finite number, got {value!r}", param, ctx)
        return number

_TYPES = {"int": click.INT, "float": click.FLOAT, "str": click.STRING}


def click_param(param: Any) -> click.Parameter:
    """The click argument (``positional``) or option for one parameter."""
    if param.kind == "choice":
        kind: Any = click.Choice(param.choices)
    elif param.kind == "list":
        kind = click.Choice(param.choices) if param.choices else _TYPES[param.item]
    else:
        kind = _TYPES.get(param.kind, click.STRING)
    if param.positional:
        return click.Argument([param.name], required=param.required, default=None, type=kind,
                              metavar=param.metavar)
    shown = f" [default: {_shown(param.default)}]" if param.is_set_by_default and param.kind != "bool" else ""
    help_text = f"{param.help}{shown}"
    flags = list(param.cli_flags)
    if param.kind == "bool":
        if param.off:
            flags = [f"{on}/{off}" for on, off in zip(param.flags, param.off)]
        elif param.default is True:
            flags = [f"{flags[-1]}/--no-{flags[-1].lstrip('-')}"]
        return click.Option([param.name, *flags], is_flag=True, default=None, required=param.required,
                            help=help_text)
    return click.Option([param.name, *flags], type=kind, default=None, multiple=param.kind == "list",
                        required=param.required, metavar=param.metavar, help=help_text)


def click_params(params: Iterable[Any]) -> list[click.Parameter]:
    return [click_param(param) for param in params]


class DeclaredCommand(click.Command):
    """A command whose options come from declarations read when it runs or shows its help, not when listed.

    ``declared()`` returns the :class:`~perun_core.params.Param` declarations; their click
    parameters go after ``leading`` (arguments that come first) and before the command's own
    ``params``.  ``perun-core --help`` lists every command by name and short help only, so the
    module holding the declarations (the fuzzing engine, say) is not imported for that listing.
    """

    def __init__(self, name: str, *, declared: Callable[[], Iterable[Any]], leading: Iterable[click.Parameter] = (),
                 **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self._declared: Callable[[], Iterable[Any]] | None = declared
        self._leading = list(leading)

    @property
    def loaded(self) -> bool:
        return self._declared is None

    def load(self) -> None:
        """Build the options from the declarations, once; a subclass reads more of its declaration here."""
        if self._declared is None:
            return
        declared, self._declared = self._declared, None
        self.params = [*self._leading, *click_params(declared()), *self.params]

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        self.load()
        return super().get_params(ctx)


def given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values a command line gave (options left out are None or an empty tuple)."""
    return {name: value for name, value in values.items() if value is not None and value != ()}


def _shown(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)
