"""Typed parameters, declared once per unit, view and check method.

Collectors, postprocessors, views and check methods (and every later kind
of plug-in) list their parameters as :class:`Param` objects.  The same
declaration turns into command-line options (``perun-core collect time -r
10``, ``show p.perf bars --of amount``), checks and converts the ``params``
of a job matrix entry in ``local.yml``, of a ``-p``/``-cp`` YAML document or
of a ``degradation.strategies`` rule, and builds the forms of the TUI.

Values are converted by :meth:`Param.convert`, which accepts what YAML and
command lines produce (``"3"`` for an int, ``"yes"`` for a bool, a
comma-separated string for a list) and raises
:class:`~perun_core.errors.InvalidParameter` naming the unit, the parameter,
the value and what was expected.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError, InvalidParameter

__all__ = ["KINDS", "MAX_HEIGHT", "MAX_PIXELS", "MAX_REPEAT", "MAX_TIMEOUT", "MAX_WIDTH", "Param", "convert_params", "find_param",
           "load_params_document", "unit_params", "format_yaml_error"]

#: Bounds shared by units: the most repetitions of a profiled program, the longest timeout (a week), in seconds.
MAX_REPEAT = 1_000_000
MAX_TIMEOUT = 7 * 24 * 3600.0
#: Largest output of a view: columns, rows, and pixels of a picture (a plot of 10^8 columns never ends).
MAX_WIDTH = 1000
MAX_HEIGHT = 1000
MAX_PIXELS = 8000

#: The parameter kinds a unit may declare.
KINDS = ("int", "float", "bool", "str", "choice", "list")

_TRUE = frozenset({"1", "true", "yes", "on", "y"})
_FALSE = frozenset({"0", "false", "no", "off", "n"})


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a unit, view or check method.

    ``name`` is the key in YAML ``params`` and in ``collector_info.params``;
    ``flags`` are the command-line spellings (default ``--name`` with
    underscores as dashes).  ``default`` None means "not set" and is allowed
    for every kind.  ``minimum``/``maximum`` bound numbers (inclusive),
    ``choices`` the values of a ``choice`` (or of the items of a ``list``),
    ``item`` the kind of the items of a ``list`` (int, float or str).
    ``positional`` parameters are command-line arguments instead of options
    (``show p.perf bars sum``); ``off`` holds the spellings that set a
    ``bool`` false (``--grouped`` against ``--stacked``); ``required``
    parameters must be given.  ``check``, when given, is called with
    every converted value that is not None and returns the value to use (a
    canonical spelling, a parsed number); it raises ``ValueError`` whose
    text says what was expected, or
    :class:`~perun_core.errors.InvalidParameter` itself.  It lets a unit
    refuse bad values when its parameters are converted, before any job
    runs, and must return JSON-serializable values.  ``unit`` is what a
    number of this parameter counts (``s``, ``B``, ``runs``, ``x`` for a
    multiple), as :func:`perun_core.amounts.format_amount` takes it: forms
    show it beside the field and the default through that formatter.
    """

    name: str
    kind: str = "str"
    default: Any = None
    help: str = ""
    flags: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    item: str = "str"
    metavar: str | None = None
    aliases: tuple[str, ...] = field(default=())
    positional: bool = False
    off: tuple[str, ...] = ()
    required: bool = False
    check: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)
    unit: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"parameter {self.name!r}: unknown kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"parameter {self.name!r}: a choice needs choices")
        if self.kind == "list" and self.item not in ("int", "float", "str"):
            raise ValueError(f"parameter {self.name!r}: list items must be int, float or str")
        if self.off and (self.kind != "bool" or len(self.off) != len(self.flags)):
            raise ValueError(f"parameter {self.name!r}: 'off' spellings need a bool with as many 'flags'")

    @property
    def cli_flags(self) -> tuple[str, ...]:
        """Command-line spellings, ``--name`` unless declared otherwise (none for a positional one)."""
        if self.positional:
            return ()
        return self.flags or ("--" + self.name.replace("_", "-"),)

    @property
    def is_set_by_default(self) -> bool:
        """Whether the default is a value worth showing (not None, False or empty)."""
        return self.default is not None and self.default is not False and self.default not in ((), [])

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key under which YAML params may give this parameter.

        The name, declared aliases and the long command-line spellings
        (``warm-up-repetition`` for ``--warm-up-repetition``), each also with
        dashes and underscores swapped.
        """
        names = [self.name, *self.aliases]
        names += [flag.lstrip("-") for flag in self.cli_flags if flag.startswith("--")]
        spelled: list[str] = []
        for name in names:
            for variant in (name, name.replace("-", "_"), name.replace("_", "-")):
                if variant not in spelled:
                    spelled.append(variant)
        return tuple(spelled)

    def describe(self) -> str:
        """What a valid value looks like, for error messages and help."""
        bounds = _bounds(self.minimum, self.maximum)
        if self.kind == "int":
            return f"an integer{bounds}"
        if self.kind == "float":
            return f"a number{bounds}"
        if self.kind == "bool":
            return "a boolean (true or false)"
        if self.kind == "choice":
            return f"one of {', '.join(self.choices)}"
        if self.kind == "list" and self.choices:
            return f"a list of items, each one of {', '.join(self.choices)}"
        if self.kind == "list":
            return f"a list of {'strings' if self.item == 'str' else self.item + 's'}{bounds}"
        return "a string"

    def convert(self, value: Any, unit: str) -> Any:
        """``value`` as this parameter's kind; InvalidParameter if it does not fit."""
        if value is None:
            return None
        if self.kind == "list":
            items = _as_list(value)
            if items is None:
                raise InvalidParameter(unit, self.name, value, self.describe())
            converted: Any = [self._scalar(v, self.item, unit, value) for v in items]
            for item in converted:
                if self.choices and item not in self.choices:
                    raise InvalidParameter(unit, self.name, item, f"one of {', '.join(self.choices)}")
        else:
            converted = self._scalar(value, self.kind, unit, value)
        if self.check is not None:
            try:
                converted = self.check(converted)
            except ValueError as exc:
                shown = list(value) if isinstance(value, tuple) else value  # click gives repeated options as tuples
                raise InvalidParameter(unit, self.name, shown, str(exc) or self.describe()) from None
        return converted

    def _scalar(self, value: Any, kind: str, unit: str, original: Any) -> Any:
        def bad() -> InvalidParameter:
            return InvalidParameter(unit, self.name, original, self.describe())

        if kind == "bool":
            if isinstance(value, bool):
                return value
            if type(value) is int and value in (0, 1):
                return bool(value)
            if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
                return value.strip().lower() in _TRUE
            raise bad()
        if kind == "int":
            if isinstance(value, bool):
                raise bad()
            if isinstance(value, int):
                number: Any = value
            elif isinstance(value, float) and value.is_integer():
                number = int(value)
            elif isinstance(value, str):
                try:
                    number = int(value.strip(), 10)
                except ValueError:
                    raise bad() from None
            else:
                raise bad()
            return self._bounded(number, bad)
        if kind == "float":
            if isinstance(value, bool):
                raise bad()
            if isinstance(value, (int, float)):
                number = float(value)
            elif isinstance(value, str):
                try:
                    number = float(value.strip())
                except ValueError:
                    raise bad() from None
            else:
                raise bad()
            if not math.isfinite(number):
                raise bad()
            return self._bounded(number, bad)
        if kind == "choice":
            if isinstance(value, str) and value in self.choices:
                return value
            raise bad()
        # str
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise bad()

    def _bounded(self, number: Any, bad: Any) -> Any:
        if self.minimum is not None and number < self.minimum:
            raise bad()
        if self.maximum is not None and number > self.maximum:
            raise bad()
        return number


def _bounds(minimum: float | None, maximum: float | None) -> str:
    def show(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else f"{x:g}"  # 1000000, not 1e+06

    if minimum is not None and maximum is not None:
        return f" from {show(minimum)} to {show(maximum)}"
    if minimum is not None:
        return f" of at least {show(minimum)}"
    if maximum is not None:
        return f" of at most {show(maximum)}"
    return ""


def _as_list(value: Any) -> list | None:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value]
    return None


def find_param(declared: Sequence[Param], name: str) -> Param:
    """The parameter of ``declared`` called ``name`` (or spelled so); KeyError if none is."""
    for param in declared:
        if name == param.name or name in param.keys:
            return param
    raise KeyError(name)


def convert_params(unit: str, declared: Sequence[Param], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """All of ``declared`` in declaration order: ``given`` values converted, defaults elsewhere.

    Keys may be a parameter's name or any of its :attr:`Param.keys`.  An
    unknown key, a parameter given twice, a value of the wrong kind or a
    ``required`` parameter left out raises :class:`InvalidParameter`.
    """
    by_key: dict[str, Param] = {}
    for param in declared:
        for key in param.keys:
            by_key.setdefault(key, param)
    result: dict[str, Any] = {param.name: param.default for param in declared}
    seen: dict[str, str] = {}
    for key, value in (given or {}).items():
        param = by_key.get(str(key))
        if param is None:
            known = ", ".join(p.name for p in declared) or "(none)"
            raise InvalidParameter(unit, str(key), value, f"a known parameter; {unit} has: {known}")
        if param.name in seen:
            raise InvalidParameter(unit, str(key), value, f"one value; '{param.name}' was already given as '{seen[param.name]}'")
        seen[param.name] = str(key)
        result[param.name] = param.convert(value, unit)
    for param in declared:
        if param.required and result[param.name] is None:
            raise InvalidParameter(unit, param.name, None, "a value (it is required)")
    return result


def load_params_document(source: str, *, what: str = "parameters") -> dict[str, Any]:
    """Parse ``-p``/``-cp`` parameters: a YAML file's path, or inline YAML.

    ``source`` naming an existing file is read from it; otherwise it is
    parsed as YAML text (``"repeat: 3"`` or ``"{warmup: 1, repeat: 3}"``).
    Lists of one-key mappings (``[{repeat: 3}]``) are merged.  Empty input is
    an empty mapping.  Raises :class:`ConfigError` for unreadable files,
    invalid YAML or a document that is not a mapping.
    """
    import yaml

    path = Path(source).expanduser() if source and "\n" not in source else None
    origin: str | None = None
    text = source
    if path is not None and path.is_file():
        origin = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(origin, None, f"cannot read {what}: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = origin or f"{what} {_short(source)!r}"
        raise ConfigError(where, None, format_yaml_error(exc)) from None
    if data is None:
        return {}
    if isinstance(data, list) and all(isinstance(item, Mapping) for item in data):
        return unit_params({"params": data})
    if not isinstance(data, Mapping):
        where = origin or f"{what} {_short(source)!r}"
        raise ConfigError(where, None, f"expected a mapping of parameters (e.g. 'repeat: 3'), got {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


def unit_params(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``params`` of a collectors/postprocessors entry as one mapping.

    ``params`` may be a mapping or, the form the original documentation shows, a list of one-key
    mappings, merged in order.
    """
    params = entry.get("params")
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    merged: dict[str, Any] = {}
    for item in params:
        merged.update(item)
    return merged


#: Values a YAML document may hold with its aliases followed (a configuration holds hundreds): an alias of an
#: alias repeated ("a billion laughs") makes a few lines that every reader of the configuration expands.
YAML_MAX_VALUES = 100_000


def yaml_expansion_problem(data: Any, limit: int = YAML_MAX_VALUES) -> str | None:
    """Why ``data`` (from ``yaml.safe_load``) cannot be taken: it refers to itself, or more than ``limit`` values
    with its aliases followed; None when neither.

    safe_load shares one object between an anchor and its aliases, so the document is small in memory; the
    expanded count is found per distinct list or mapping, once each.
    """
    sizes: dict[int, int] = {}
    opened: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, finished = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        key = id(node)
        if finished:
            size = 1 + sum(sizes.get(id(child), 1) for child in children)
            if size > limit:
                return f"holds more than {limit:,} values once its aliases are followed (an alias bomb?)"
            sizes[key] = size
            opened.discard(key)
            continue
        if key in sizes:
            continue
        opened.add(key)
        stack.append((node, True))
        for child in children:
            if isinstance(child, (dict, list)):
                if id(child) in opened:
                    return "holds a value that contains itself (an alias inside its own anchor)"
                if id(child) not in sizes:
                    stack.append((child, False))
    return None


def format_yaml_error(exc: Exception) -> str:
    """One line saying where a YAML text is broken and how (a PyYAML error made readable)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    context = getattr(exc, "context", None)
    if context and context != problem:
        problem = f"{problem} ({context})"
    problem = " ".join(str(problem).split())
    if mark is not None:
        return f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"invalid YAML: {problem}"


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."

