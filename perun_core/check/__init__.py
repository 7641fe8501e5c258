"""Degradation checks: methods that compare a baseline and a target profile (spec 001 chapter 8).

A method is any object that follows :class:`CheckMethod`: a ``name`` (words
joined by ``_``), a one-line ``summary`` and ``check(baseline, target,
params)`` yielding :class:`~perun_core.check.results.Finding` objects, one
or more per location.  Methods that look at the history of a configuration
(creeping degradations) also set ``uses_history`` and accept the older
profiles in ``params["history"]``.

A method declares its parameters as ``params``, a tuple of
:class:`~perun_core.params.Param`: the ``params`` of a rule are checked
against it when the strategy is read, ``check method NAME --help`` lists
them, and the method reads them through it
(:func:`~perun_core.check.methods.common.read_params`).  Methods without
``params`` get the rule's mapping as it is.

Methods are registered by name in :data:`methods_registry`, a
:class:`~perun_core.registry.Registry` that imports a built-in method the
first time it is named.  Each is also known by its *short name*, the first
letters of the words of its name (§8.3: ``best_model_order_equality`` is
``bmoe``), and by the aliases it is registered with (``fast``, ``lreg``,
``int`` ... as the original tool spells them); names are looked up in any
case.  Third-party methods register with :func:`register_method`, or
through the ``perun.check_methods`` entry point group (a callable returning
the method object).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import UnitError, UnknownUnit
from ..registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from .data import ProfileData
    from .results import Finding

__all__ = ["CheckMethod", "get_method", "method_names", "methods", "methods_registry", "register_method",
           "short_name", "unregister_method"]

#: Built-in methods: name -> (module:attribute, aliases besides the short name).
_BUILTINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "size_aware_rank_test": ("perun_core.check.default:DEFAULT", ("default", "auto")),
    "best_model_order_equality": ("perun_core.check.methods.bmoe:METHOD", ()),
    "average_amount_threshold": ("perun_core.check.methods.aat:METHOD", ()),
    "fast_check": ("perun_core.check.methods.fast:METHOD", ("fast",)),
    "linear_regression": ("perun_core.check.methods.regressions:LINEAR", ("lreg",)),
    "polynomial_regression": ("perun_core.check.methods.regressions:POLYNOMIAL", ("preg",)),
    "integral_comparison": ("perun_core.check.methods.integral:METHOD", ("int",)),
    "local_statistics": ("perun_core.check.methods.local:METHOD", ("loc",)),
    "exclusive_time_outliers": ("perun_core.check.methods.eto:METHOD", ()),
    "rank_sum_test": ("perun_core.check.methods.ranktest:METHOD", ("mwu", "rank")),
    "change_point_detection": ("perun_core.check.methods.changepoint:METHOD", ("creep",)),
}

ENTRY_POINT_GROUP = "perun.check_methods"


@runtime_checkable
class CheckMethod(Protocol):
    """What the checker needs of a detection method (spec 001 §8.4)."""

    name: str
    summary: str

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterable[Finding]:
        """Findings about the target compared with the baseline."""
        ...


def short_name(name: str) -> str:
    """The first letters of the words of ``name``: ``average_amount_threshold`` -> ``aat``."""
    return "".join(word[0] for word in name.replace("-", "_").split("_") if word)


def _from_entry_point(obj: Any) -> Any:
    return obj() if callable(obj) and not isinstance(obj, CheckMethod) else obj


#: Every check method by name (short names and aliases resolve too).
methods_registry: Registry[CheckMethod] = Registry(
    "check method", "check", frozenset({"history"}),
    {name: target for name, (target, _) in _BUILTINS.items()},
    {alias: name for name, (_, aliases) in _BUILTINS.items() for alias in (short_name(name), *aliases)},
    group=ENTRY_POINT_GROUP, factory=_from_entry_point, normalize=lambda name: name.strip().lower(),
)


def register_method(method: CheckMethod, aliases: Iterable[str] = ()) -> None:
    """Register ``method`` under its name, its short name and ``aliases``.

    A later registration of the same name replaces the earlier one.  Raises
    TypeError for an object that is no method and ValueError when an alias
    already names another method (or the method is not fit to register).
    """
    if not isinstance(method, CheckMethod):
        raise TypeError(f"{method!r} is not a check method (it needs name, summary and check())")
    try:
        methods_registry.register(method, replace=True, aliases=(short_name(method.name), *aliases))
    except UnitError as exc:
        raise ValueError(exc.message) from None


def unregister_method(name: str) -> None:
    """Forget the method ``name`` and its aliases (no error when it is not registered)."""
    methods_registry.unregister(name)


def get_method(name: str) -> CheckMethod:
    """The method named ``name`` (full name, short name or alias, any case).

    Raises :class:`~perun_core.errors.UnknownUnit` listing the known names.
    """
    try:
        return methods_registry.get(name)
    except UnknownUnit:
        raise UnknownUnit("check method", name, method_names(with_short=True)) from None


def method_names(*, with_short: bool = False) -> list[str]:
    """Names of the registered methods (and their short names and aliases)."""
    names = methods_registry.names()
    if with_short:
        names += sorted(alias for alias, owner in methods_registry.aliases.items()
                        if alias not in names and owner in names)
    return names


def methods() -> list[CheckMethod]:
    """Every registered method, by name."""
    return methods_registry.items()
