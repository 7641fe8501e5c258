"""One registry for every kind of pluggable thing: collectors, postprocessors, views, check methods.

A :class:`Registry` maps names to items of one kind.  Built-in items are
listed as ``"module:attribute"`` strings and imported the first time they
are named, so listing the names costs no import.  An item is anything with

* ``name``: the key (no spaces),
* the kind's *phase*: a method the registry requires (``collect``,
  ``postprocess``, ``build``, ``check``); ``None`` requires nothing,
* optionally ``params``: a sequence of :class:`~perun_core.params.Param`,
  the single declaration of its parameters (none may use a ``reserved``
  name of the kind).

Other spellings of a name (aliases) resolve through :meth:`Registry.get`
but are not listed by :meth:`Registry.names`.  Third-party packages add
items through an entry-point group: each entry point names an item, a
class (instantiated without arguments) or a factory; ``selects`` lets
several registries share one group (collectors and postprocessors share
``perun.units``).  A new kind of plug-in needs one line::

    importers = Registry("importer", "load", builtins={"perf": "perun_core.importers.perf:IMPORTER"})
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from .errors import UnitError, UnknownUnit
from .params import Param

__all__ = ["Registry", "instantiate"]

T = TypeVar("T")


def instantiate(obj: Any) -> Any:
    """A class becomes an instance made without arguments; anything else is itself."""
    return obj() if isinstance(obj, type) else obj


class _Lazy:
    """A built-in item not imported yet: where to find it."""

    __slots__ = ("target",)

    def __init__(self, target: str) -> None:
        self.target = target


class Registry(Generic[T]):
    """Items of one ``kind`` by name; see the module documentation.

    ``builtins`` maps names to ``"module:attribute"``; ``aliases`` maps other
    spellings to names.  ``group`` is the entry-point group third-party
    items come from; ``selects`` (an item -> bool) keeps the ones of this
    registry when several share the group, and ``factory`` turns what an
    entry point (or a built-in target) names into the item (default: a
    class is instantiated).  ``normalize`` canonicalizes looked-up names
    (check methods accept any case); ``sort`` lists names sorted, else in
    the order they were declared and registered.
    """

    def __init__(self, kind: str, phase: str | None = None, reserved: Iterable[str] = frozenset(),
                 builtins: Mapping[str, str] | None = None, aliases: Mapping[str, str] | None = None, *,
                 group: str | None = None, selects: Callable[[Any], bool] | None = None,
                 factory: Callable[[Any], Any] = instantiate, normalize: Callable[[str], str] | None = None,
                 sort: bool = True) -> None:
        self.kind = kind
        self.phase = phase
        self.reserved = frozenset(reserved)
        self.group = group
        self._selects = selects
        self._factory = factory
        self._normalize = normalize
        self._sort = sort
        self._entries: dict[str, Any] = {name: _Lazy(target) for name, target in (builtins or {}).items()}
        #: other spellings of registered names (alias -> name)
        self.aliases: dict[str, str] = dict(aliases or {})
        #: entry-point names that failed to load, with the reason
        self.load_errors: dict[str, str] = {}
        self._entry_points_loaded = group is None
        self._lock = threading.RLock()

    # -- registering -----------------------------------------------------------------------
    def check_item(self, item: Any) -> str:
        """The name of ``item``; UnitError when it does not look like an item of this kind."""
        name = getattr(item, "name", None)
        if not isinstance(name, str) or not name or name != name.strip() or " " in name:
            raise UnitError(f"cannot register {item!r} as a {self.kind}: it needs a 'name' without spaces")
        if self.phase is not None and not callable(getattr(item, self.phase, None)):
            raise UnitError(f"cannot register {self.kind} '{name}': it has no {self.phase}() phase")
        params = getattr(item, "params", ())
        if not all(isinstance(p, Param) for p in params):
            raise UnitError(f"cannot register {self.kind} '{name}': 'params' must be a sequence of Param")
        clashes = sorted({p.name for p in params} & self.reserved)
        if clashes:
            raise UnitError(f"cannot register {self.kind} '{name}': parameter name '{clashes[0]}' is reserved")
        return name

    def register(self, item: T, *, replace: bool = False, aliases: Iterable[str] = ()) -> T:
        """Add ``item`` (and ``aliases`` of its name); UnitError if it is no item of this kind or is taken.

        With ``replace`` an item of the same name is replaced (its aliases
        are kept); an alias naming another item is refused either way.
        """
        name = self.check_item(item)
        aliases = tuple(aliases)
        with self._lock:
            if not replace and name in self._entries:
                raise UnitError(f"a {self.kind} named '{name}' is already registered")
            for alias in aliases:
                owner = self.aliases.get(alias)
                if (owner is not None and owner != name) or (alias != name and alias in self._entries):
                    raise UnitError(f"{self.kind} alias '{alias}' already names '{owner or alias}'")
            self._entries[name] = item
            for alias in aliases:
                if alias != name:
                    self.aliases[alias] = name
        return item

    def unregister(self, name: str) -> None:
        """Forget ``name`` and its aliases (nothing happens when it is not registered)."""
        with self._lock:
            self._entries.pop(name, None)
            for alias in [alias for alias, owner in self.aliases.items() if owner == name]:
                del self.aliases[alias]

    # -- looking up ------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every registered name (third-party entry points included), sorted unless the registry keeps order."""
        self.load_entry_points()
        with self._lock:
            names = list(self._entries)
        return sorted(names) if self._sort else names

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def resolve(self, name: str) -> str | None:
        """The registered name ``name`` stands for (itself or through an alias), None if none."""
        key = self._normalize(name) if self._normalize else name
        with self._lock:
            if key in self._entries:
                return key
            if key in self.aliases and self.aliases[key] in self._entries:
                return self.aliases[key]
        if not self._entry_points_loaded:
            self.load_entry_points()
            return self.resolve(name)
        return None

    def get(self, name: str) -> T:
        """The item called ``name`` (or an alias of it); :class:`UnknownUnit` listing the known ones otherwise."""
        found = self.resolve(name)
        if found is None:
            if name in self.load_errors:
                raise UnitError(f"{self.kind} '{name}' could not be loaded: {self.load_errors[name]}")
            raise UnknownUnit(self.kind, name, self.names())
        with self._lock:
            entry = self._entries[found]
        if not isinstance(entry, _Lazy):
            return entry
        module_name, _, attribute = entry.target.partition(":")
        item = self._factory(getattr(importlib.import_module(module_name), attribute))
        with self._lock:
            if self._entries.get(found) is entry:
                self._entries[found] = item
            return self._entries.get(found, item)

    def items(self) -> list[T]:
        """Every item, in the order of :meth:`names` (imports the built-in ones)."""
        return [self.get(name) for name in self.names()]

    # -- plug-ins --------------------------------------------------------------------------
    def load_entry_points(self, *, force: bool = False) -> None:
        """Register the items of the entry-point group (once; again with ``force``).

        An entry point that fails to import or to register is recorded in
        :attr:`load_errors` instead of breaking the listing of the others.
        """
        if self.group is None:
            return
        with self._lock:
            if self._entry_points_loaded and not force:
                return
            self._entry_points_loaded = True
        from importlib.metadata import entry_points

        for point in entry_points(group=self.group):
            try:
                item = self._factory(point.load())
            except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break the others
                self.load_errors[point.name] = f"{type(exc).__name__}: {exc}"
                continue
            if self._selects is not None and not self._selects(item):
                continue
            with self._lock:
                current = self._entries.get(getattr(item, "name", None))
            if current is not None and not isinstance(current, _Lazy):
                continue  # registered already (by a forced reload or explicitly)
            try:
                self.register(item)
            except UnitError as exc:
                self.load_errors[point.name] = exc.message
