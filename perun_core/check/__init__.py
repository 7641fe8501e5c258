"""Degradation checks: methods that compare a baseline and a target profile (spec 001 chapter 8).

A method is any object that follows :class:`CheckMethod`: a ``name`` (words
joined by ``_``), a one-line ``summary`` and ``check(baseline, target,
params)`` yielding :class:`~perun_core.check.results.Finding` objects, one
or more per location.  Methods that look at the history of a configuration
(creeping degradations) also set ``uses_history`` and accept the older
profiles in ``params["history"]``.

Methods are registered by name in an explicit table.  Each is also known by
its *short name*, the first letters of the words of its name (§8.3:
``best_model_order_equality`` is ``bmoe``), and by the aliases it is
registered with (``fast``, ``lreg``, ``int`` ... as the original tool spells
them).  Third-party methods register with :func:`register_method`, or
through the ``perun.check_methods`` entry point group (a callable returning
the method object).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import UnknownUnit

if TYPE_CHECKING:  # pragma: no cover
    from .data import ProfileData
    from .results import Finding

__all__ = ["CheckMethod", "get_method", "method_names", "register_method", "short_name", "unregister_method"]

#: Built-in methods: (module, attribute, aliases besides the short name).
_BUILTINS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("perun_core.check.default", "DEFAULT", ("default", "auto")),
    ("perun_core.check.methods.bmoe", "METHOD", ()),
    ("perun_core.check.methods.aat", "METHOD", ()),
    ("perun_core.check.methods.fast", "METHOD", ("fast",)),
    ("perun_core.check.methods.regressions", "LINEAR", ("lreg",)),
    ("perun_core.check.methods.regressions", "POLYNOMIAL", ("preg",)),
    ("perun_core.check.methods.integral", "METHOD", ("int",)),
    ("perun_core.check.methods.local", "METHOD", ("loc",)),
    ("perun_core.check.methods.eto", "METHOD", ()),
    ("perun_core.check.methods.ranktest", "METHOD", ("mwu", "rank")),
    ("perun_core.check.methods.changepoint", "METHOD", ("creep",)),
)

ENTRY_POINT_GROUP = "perun.check_methods"


@runtime_checkable
class CheckMethod(Protocol):
    """What the checker needs of a detection method (spec 001 §8.4)."""

    name: str
    summary: str

    def check(self, baseline: ProfileData, target: ProfileData, params: Mapping[str, Any]) -> Iterable[Finding]:
        """Findings about the target compared with the baseline."""
        ...


_methods: dict[str, CheckMethod] = {}
_aliases: dict[str, str] = {}
#: The built-in methods registered so far (in the order of _BUILTINS).
_builtins_loaded: list[CheckMethod] = []
_entry_points_loaded = False


def short_name(name: str) -> str:
    """The first letters of the words of ``name``: ``average_amount_threshold`` -> ``aat``."""
    return "".join(word[0] for word in name.replace("-", "_").split("_") if word)


def register_method(method: CheckMethod, aliases: Iterable[str] = ()) -> None:
    """Register ``method`` under its name, its short name and ``aliases``.

    A later registration of the same name replaces the earlier one.  Raises
    ValueError when an alias already names another method.
    """
    if not isinstance(method, CheckMethod):
        raise TypeError(f"{method!r} is not a check method (it needs name, summary and check())")
    name = method.name
    for alias in (short_name(name), *aliases):
        owner = _aliases.get(alias)
        if owner is not None and owner != name:
            raise ValueError(f"check method alias '{alias}' already names '{owner}'")
    _methods[name] = method
    for alias in (short_name(name), *aliases):
        _aliases[alias] = name


def unregister_method(name: str) -> None:
    """Forget the method ``name`` and its aliases (no error when it is not registered)."""
    _methods.pop(name, None)
    for alias in [alias for alias, owner in _aliases.items() if owner == name]:
        del _aliases[alias]


def _load_builtins(until: str | None = None) -> None:
    """Register the built-in methods; with ``until``, stop once that name is a built-in one.

    The default method comes first, so a check with the default strategy
    does not import (or, without bytecode caches, compile) the other ten.
    The table order is kept, so what a name resolves to does not change.
    """
    import importlib

    while True:
        if until is not None:
            found = _lookup(until)
            if found is not None and any(found is method for method in _builtins_loaded):
                return
        if len(_builtins_loaded) >= len(_BUILTINS):
            return
        module_name, attribute, aliases = _BUILTINS[len(_builtins_loaded)]
        method = getattr(importlib.import_module(module_name), attribute)
        _builtins_loaded.append(method)
        register_method(method, aliases)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            factory = entry.load()
            register_method(factory() if callable(factory) and not isinstance(factory, CheckMethod) else factory)
        except Exception:  # noqa: BLE001 - a broken plug-in must not break the built-in checks
            continue


def _lookup(name: str) -> CheckMethod | None:
    key = name.strip().lower()
    if key in _methods:
        return _methods[key]
    if key in _aliases:
        return _methods[_aliases[key]]
    return None


def get_method(name: str) -> CheckMethod:
    """The method named ``name`` (full name, short name or alias, any case).

    Raises :class:`~perun_core.errors.UnknownUnit` listing the known names.
    """
    _load_builtins(until=name)
    found = _lookup(name)
    if found is None:
        _load_entry_points()
        found = _lookup(name)
    if found is None:
        raise UnknownUnit("check method", name, method_names(with_short=True))
    return found


def method_names(*, with_short: bool = False) -> list[str]:
    """Names of the registered methods (and their short names and aliases)."""
    _load_builtins()
    names = sorted(_methods)
    if with_short:
        names += sorted(alias for alias in _aliases if alias not in _methods)
    return names


def methods() -> list[CheckMethod]:
    """Every registered method, by name."""
    _load_builtins()
    return [_methods[name] for name in sorted(_methods)]
