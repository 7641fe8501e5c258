"""The one validation of a profile: what every command may rely on.

:func:`validate_profile` runs on the in-memory :class:`~.model.Profile`,
whatever layout it was read from (documented JSON, the columnar store
encoding, a collector's or postprocessor's output), so a profile that passes
is one every command can show, check and store:

* sections have their types (``header`` an object with a known ``type``,
  ``collector_info`` and every postprocessor an object with a string
  ``name``, every region an object with a list of ``resources``);
* every resource has an ``amount`` that is a finite number (not a boolean,
  not NaN, not Infinity) and a ``uid`` that is a non-empty string or an
  object; ``type`` and ``subtype`` are strings where present;
* resources of a memory profile have a non-negative integer ``address`` and
  a ``trace`` that is a list of objects, where present;
* every text is valid Unicode (no lone surrogate, which no file can hold)
  and no value nests deeper than :data:`MAX_DEPTH` levels;
* every other number anywhere in the profile is finite.

Errors are :class:`~perun_core.errors.InvalidProfile` naming the key, and for
resources the region and the resource index
(``snapshots[0].resources[41].amount``).

The checks are column-wise, so that a million resources cost tens of
milliseconds: numbers are checked by type over the whole column and for
finiteness with ``math.isfinite`` mapped in C; strings are checked for lone
surrogates by encoding the column at once; nested values (uids, traces)
are walked once per distinct object.  Only when a column fails is it
searched row by row for the culprit.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import Any

from ..errors import InvalidProfile
from .model import KNOWN_TYPES, Profile, Snapshot, json_kind
from .resources import MISSING, PackedColumn, ResourceTable, StackColumn

__all__ = ["MAX_DEPTH", "validate_profile"]

#: Deepest nesting of objects and lists allowed anywhere in a profile.
MAX_DEPTH = 64

_NUMBER_TYPES = (int, float)
#: A custom profile type: a plain word (no spaces, no control characters).
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]{0,63}")


def validate_profile(profile: Profile, *, path: Path | str | None = None, resources: bool = True) -> Profile:
    """Raise :class:`InvalidProfile` for the first defect of ``profile``; return it unchanged when valid.

    ``resources=False`` leaves out the resource tables (not the regions'
    metadata and models), for a caller that checked them already and changed
    only the header, models or other metadata since (checking a million
    resources again costs a fifth of a second); see :func:`resources_kept`.
    """
    header = profile.header
    if not isinstance(header, dict):
        raise InvalidProfile(path, "header", f"expected an object, got {_kind(header)}")
    kind = header.get("type")
    if kind is None:
        raise InvalidProfile(path, "header.type", "is missing")
    units = header.get("units")
    if kind not in KNOWN_TYPES and not (isinstance(kind, str) and _NAME.fullmatch(kind) and (
            _only_resource_type(profile) == kind or (isinstance(units, dict) and kind in units))):
        raise InvalidProfile(path, "header.type", f"{_shown(kind)} is not a profile type; expected one of "
                             f"{', '.join(KNOWN_TYPES)}, the one type all resources have (e.g. 'throughput' of a regex "
                             "profile), or a metric of header.units (e.g. 'bound' of the original's bounds collector)")
    if units is not None:
        if not isinstance(units, dict):
            raise InvalidProfile(path, "header.units", f"expected an object, got {_kind(units)}")
        for name, unit in units.items():
            if not isinstance(unit, str):
                raise InvalidProfile(path, f"header.units.{name}", f"expected a string, got {_kind(unit)}")
    for key in ("cmd", "args", "params", "workload"):
        value = header.get(key)
        if value is not None and not isinstance(value, str) and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise InvalidProfile(path, f"header.{key}", f"expected a string, got {_kind(value)}")
    _walk(header, "header", path)
    if profile.origin is not None and not isinstance(profile.origin, str):
        raise InvalidProfile(path, "origin", f"expected a string, got {_kind(profile.origin)}")
    info = profile.collector_info
    if not isinstance(info, dict):
        raise InvalidProfile(path, "collector_info", f"expected an object, got {_kind(info)}")
    if "name" in info and not isinstance(info["name"], str):
        raise InvalidProfile(path, "collector_info.name", f"expected a string, got {_kind(info['name'])}")
    if info.get("params") is not None and not isinstance(info["params"], dict):
        raise InvalidProfile(path, "collector_info.params", f"expected an object, got {_kind(info['params'])}")
    _walk(info, "collector_info", path)
    if not isinstance(profile.postprocessors, list):
        raise InvalidProfile(path, "postprocessors", f"expected a list, got {_kind(profile.postprocessors)}")
    for i, unit in enumerate(profile.postprocessors):
        where = f"postprocessors[{i}]"
        if not isinstance(unit, dict):
            raise InvalidProfile(path, where, f"expected an object, got {_kind(unit)}")
        if not isinstance(unit.get("name"), str):
            raise InvalidProfile(path, f"{where}.name", f"expected a string, got {_kind(unit.get('name', MISSING))}")
        _walk(unit, where, path)
    _walk(profile.extra, "", path)
    if not profile.snapshots and profile.global_region is None:
        raise InvalidProfile(path, "global", "is missing, and there are no snapshots: the profile has no resource region")
    memory = kind == "memory"
    # the original tool's bounds collector records symbolic bounds ('1 + max(0, n)'), no measured amount
    symbolic = isinstance(profile.collector_info, dict) and profile.collector_info.get("name") in SYMBOLIC_COLLECTORS
    for number, region in profile.regions():
        where = f"snapshots[{number}]" if number < len(profile.snapshots) else "global"
        _check_region(region, where, memory, path, symbolic=symbolic, table=resources)
    return profile


def resources_kept(checked: Profile, changed: Profile) -> bool:
    """Whether ``changed`` holds the very resource tables of the valid ``checked``, which cannot have changed
    (each holds only packed columns, which are immutable) and are judged by the same rules (the same profile
    type and collector): then validating ``changed`` need not check them again."""
    def judged_by(profile: Profile) -> tuple[Any, Any]:
        header, info = profile.header, profile.collector_info
        return (header.get("type") if isinstance(header, dict) else None,
                info.get("name") if isinstance(info, dict) else None)

    before = [region.resources for _, region in checked.regions()]
    after = [region.resources for _, region in changed.regions()]
    return judged_by(checked) == judged_by(changed) and len(before) == len(after) and all(
        old is new and _only_packed(new) for old, new in zip(before, after))


def _only_packed(table: ResourceTable) -> bool:
    held = table.raw_columns(stacks=True)
    return held is not None and all(isinstance(column, (PackedColumn, StackColumn)) for column in held[1])


def _only_resource_type(profile: Profile) -> str | None:
    """The ``type`` every resource has, when there is exactly one (custom measures, e.g. of the regex collector)."""
    found: set[Any] = set()
    for _, region in profile.regions():
        table = region.resources
        if not isinstance(table, ResourceTable) or not len(table):
            continue
        packed = table.packed("type")
        if packed is not None and packed.kind == "dict":
            found.update(packed.values or [])
        else:
            try:
                found.update(table.column("type"))
            except TypeError:
                return None
        if len(found) > 1:
            return None
    return next(iter(found)) if len(found) == 1 and isinstance(next(iter(found)), str) else None


#: collectors whose resources describe or summarize rather than measure: they need a uid, not an amount
#: (the original's bounds collector writes symbolic bounds, its kernel tracer 'ktrace' per-function
#: statistics such as 'Total Exclusive T [ms]' and 'ncalls' as properties)
SYMBOLIC_COLLECTORS = frozenset({"bounds", "ktrace"})


def _check_region(region: Snapshot, where: str, memory: bool, path: Path | str | None, *,
                  symbolic: bool = False, table: bool = True) -> None:
    if not isinstance(region.meta, dict):
        raise InvalidProfile(path, where, f"expected an object, got {_kind(region.meta)}")
    for key, value in region.meta.items():
        if key in ("time", "timestamp") and not (isinstance(value, (str, *_NUMBER_TYPES)) and not isinstance(value, bool)):
            raise InvalidProfile(path, f"{where}.{key}", f"expected a number or a string, got {_kind(value)}")
    _walk(region.meta, where, path)
    if not isinstance(region.models, list):
        raise InvalidProfile(path, f"{where}.models", f"expected a list, got {_kind(region.models)}")
    for i, model in enumerate(region.models):
        if not isinstance(model, dict):
            raise InvalidProfile(path, f"{where}.models[{i}]", f"expected an object, got {_kind(model)}")
        # every view and check reads a model by its kind and the uid it fits
        if not isinstance(model.get("model"), str) or not model.get("model"):
            raise InvalidProfile(path, f"{where}.models[{i}].model", "is missing" if "model" not in model else
                                 f"expected the model's kind (linear, moving_average, ...), got {_kind(model['model'])}")
        if "uid" in model and not isinstance(model["uid"], str):
            raise InvalidProfile(path, f"{where}.models[{i}].uid", f"expected a string, got {_kind(model['uid'])}")
        _walk(model, f"{where}.models[{i}]", path)
    if not table:
        return
    table = region.resources
    if not isinstance(table, ResourceTable):
        raise InvalidProfile(path, f"{where}.resources", f"expected a list, got {_kind(table)}")
    if not len(table):
        return
    held = table.raw_columns(stacks=True)
    keys, columns = held if held is not None else table.columns()
    present = dict(zip(keys, columns))
    base = f"{where}.resources"
    for required in ("uid",) if symbolic else ("amount", "uid"):
        if required not in present:
            raise InvalidProfile(path, f"{base}[0].{required}", "is missing; every resource needs an amount and a uid")
    for key, column in present.items():
        if not isinstance(key, str):
            raise InvalidProfile(path, base, f"resource key {key!r} is not a string")
        if not key.isascii() and not _encodes(key):
            raise InvalidProfile(path, f"{base}[0]", "has a key with a lone surrogate, which is not valid Unicode text")
        label = f"{base}[{{}}].{key}"
        if isinstance(column, StackColumn):
            if key not in ("amount", "uid") and _stacks_ok(column, key, memory):
                continue
            column = column.to_list()  # a defect: the rows as lists name it
        if isinstance(column, PackedColumn):
            _check_packed(column, key, label, path, memory)
        elif key == "amount":
            _check_amounts(column, label, path)
        else:
            _check_values(column, label, path, **_rule(key, memory))


def _stacks_ok(column: StackColumn, key: str, memory: bool) -> bool:
    """Whether a column of stacks held as frame numbers passes :func:`_check_values`, without making its lists.

    Each trace is a list of entries of the column's frame table, so the
    entries the traces use, checked as one list, are what every trace holds,
    at the same depth.
    """
    import numpy as np

    if _entries_ok([column.frames], key, memory):  # every frame entry passes, so the ones the traces use do
        return True
    flat = np.asarray(column.flat)
    spans = [flat[s:e] for s, e in zip(np.asarray(column.starts).tolist(), np.asarray(column.ends).tolist())] \
        if len(column.starts) and not _covers(column) else [flat]
    picked = np.concatenate(spans) if spans else flat[:0]
    used = np.flatnonzero(np.bincount(picked, minlength=len(column.frames))).tolist() if len(picked) else []
    return _entries_ok([[column.frames[i] for i in used]], key, memory)


def _entries_ok(entries: list, key: str, memory: bool) -> bool:
    if memory and key == "trace" and not _all_items_are(entries, dict):
        return False
    return _nested_values_ok(entries)


def _covers(column: StackColumn) -> bool:
    """Whether the rows of ``column`` together use every number in its ``flat``."""
    import numpy as np

    lengths = np.asarray(column.ends) - np.asarray(column.starts)
    if not len(lengths) or int(lengths.sum()) != len(column.flat):
        return False
    order = np.argsort(np.asarray(column.starts), kind="stable")
    starts, ends = np.asarray(column.starts)[order], np.asarray(column.ends)[order]
    return int(starts[0]) == 0 and bool((starts[1:] == ends[:-1]).all())


def _check_packed(column: PackedColumn, key: str, label: str, path: Path | str | None, memory: bool) -> None:
    """A column as the store decoded it: numbers are checked packed, codes through their distinct values."""
    def absent() -> set[int]:  # only to name a bad row: a sparse column of a million rows lists most of them
        return set(column.absent_rows())

    if key in ("amount", "uid") and column.absent:
        raise InvalidProfile(path, label.format(min(absent())), "is missing; every resource needs an amount and a uid")
    if column.kind in ("int", "f64"):
        rule = _rule(key, memory)
        # the numbers are unpacked (a copy of the column) only where the checks below need them: the packed
        # bytes or a numpy view of them answer the usual case
        numbers = column.numbers
        allowed = rule["allowed"]
        if allowed is not None and (int if column.kind == "int" else float) not in allowed:
            missing = absent()
            row = next(i for i in range(column.length) if i not in missing)
            raise InvalidProfile(path, label.format(row), f"expected {rule['what']}, got a number")
        if rule.get("nonnegative") and column.length and _smallest(column, numbers) < 0:
            missing = absent()
            unpacked = numbers()
            row = next(i for i, v in enumerate(unpacked) if v < 0 and i not in missing)
            raise InvalidProfile(path, label.format(row), f"{unpacked[row]} is negative; expected {rule['what']}")
        if column.kind == "f64" and not _all_finite(column, numbers):
            missing = absent()
            unpacked = numbers()
            bad = [i for i, v in enumerate(unpacked) if not math.isfinite(v) and i not in missing]
            if bad:
                raise InvalidProfile(path, label.format(bad[0]),
                                     f"{unpacked[bad[0]]!r} is not a finite number (NaN and Infinity are refused)")
        return
    values = column.values or []
    used = _used_codes(column, column.numbers)
    if used and (used[0] < 0 or used[-1] >= len(values)):
        raise InvalidProfile(path, label.format(0), "refers to a value the column does not hold")
    distinct = [values[c] for c in used]
    try:
        if key == "amount":  # amounts stored by their distinct values: the same checks as a plain column
            _check_amounts(distinct, "\0{}", path)
        else:
            _check_values(distinct, "\0{}", path, **_rule(key, memory))
    except InvalidProfile as exc:
        position = int(str(exc.key).split("\0", 1)[1].split(".", 1)[0].split("[", 1)[0]) if exc.key else 0
        rest = str(exc.key)[len(f"\0{position}"):] if exc.key else ""
        code = used[position]
        missing = absent()
        row = next(i for i, c in enumerate(column.numbers()) if c == code and i not in missing)
        raise InvalidProfile(path, label.format(row) + rest, exc.reason) from None


#: Columns at least this long are reduced with numpy when numpy is loaded already (never imported here
#: for it: importing costs more than checking a column in Python).
_NUMPY_ROWS = 4096


def _numpy_view(column: PackedColumn) -> Any:
    """``column``'s packed numbers as a numpy array when that is cheap (see _NUMPY_ROWS), else None."""
    numpy = sys.modules.get("numpy")
    if numpy is None or column.length < _NUMPY_ROWS or column.typecode not in "bhiqd":
        return None
    return numpy.frombuffer(column.data, dtype="<" + {"b": "i1", "h": "i2", "i": "i4", "q": "i8", "d": "f8"}[
        column.typecode], count=column.length)


def _all_finite(column: PackedColumn, numbers: Callable[[], Any]) -> bool:
    view = _numpy_view(column)
    if view is not None:
        return bool(sys.modules["numpy"].isfinite(view).all())
    if column.typecode == "d" and len(column.data) == 8 * column.length:
        # NaN and infinity have every exponent bit set: the last byte of such a little-endian double is 0x7f
        # or 0xff.  A column without those bytes is finite, found by a C-speed scan; else each value is looked at
        high = column.data[7::8]
        if b"\x7f" not in high and b"\xff" not in high:
            return True
    return all(map(math.isfinite, numbers()))


def _smallest(column: PackedColumn, numbers: Callable[[], Any]) -> Any:
    view = _numpy_view(column)
    return min(numbers()) if view is None else view.min().item()


def _used_codes(column: PackedColumn, codes: Callable[[], Any]) -> list[int]:
    """The distinct codes of a dictionary column, ascending."""
    view = _numpy_view(column)
    if view is None:
        count = len(column.values or ())
        if column.typecode == "b" and count and not column.data.translate(None, bytes(range(min(count, 128)))):
            # one byte per code, each a valid one (nothing is left when they are deleted): which occur is a
            # search for each possible byte, in C, and a present one is found early
            return [code for code in range(min(count, 128)) if bytes((code,)) in column.data]
        return sorted(set(codes()))
    low, high = int(view.min()), int(view.max())
    if low < 0:
        return sorted(set(codes()))
    return (sys.modules["numpy"].flatnonzero(sys.modules["numpy"].bincount(view, minlength=high + 1))).tolist()


def _rule(key: str, memory: bool = False) -> dict[str, Any]:
    if key == "amount":
        return {"allowed": _NUMBER_TYPES, "what": "a finite number", "required": True}
    if key == "uid":
        return {"allowed": (str, dict), "what": "a string or an object", "nonempty": True, "required": True}
    if key in ("type", "subtype"):
        return {"allowed": (str,), "what": "a string"}
    if memory and key == "address":
        return {"allowed": (int,), "what": "a non-negative integer", "nonnegative": True}
    if memory and key == "trace":
        return {"allowed": (list,), "what": "a list of objects", "items": dict}
    return {"allowed": None, "what": ""}


#: the largest finite double: an integer amount beyond it cannot be analysed
_DOUBLE_MAX = int(sys.float_info.max)


def _check_amounts(column: list, label: str, path: Path | str | None) -> None:
    kinds = set(map(type, column))
    # JSON integers have no bound, but every analysis computes in doubles (max and min: a fast look first)
    if int in kinds and kinds <= {int, float} and column and (max(column) > _DOUBLE_MAX or min(column) < -_DOUBLE_MAX):
        row = next((i for i, v in enumerate(column) if type(v) is int and abs(v) > _DOUBLE_MAX), None)
        if row is not None:
            raise InvalidProfile(path, label.format(row), f"an integer of {column[row].bit_length()} bits is beyond "
                                 "the range of a double (about 1.8e308)")
    if kinds <= {int}:
        return
    if kinds <= {int, float}:
        if all(map(math.isfinite, column)):
            return
        row = next(i for i, v in enumerate(column) if not math.isfinite(v))
        raise InvalidProfile(path, label.format(row), f"{column[row]!r} is not a finite number (NaN and Infinity are refused)")
    row = next(i for i, v in enumerate(column) if type(v) not in (int, float))
    if column[row] is MISSING:
        raise InvalidProfile(path, label.format(row), "is missing; every resource needs an amount and a uid")
    raise InvalidProfile(path, label.format(row), f"expected a finite number, got {_kind(column[row])}")


def _check_values(column: list, label: str, path: Path | str | None, *, allowed: tuple[type, ...] | None,
                  what: str, nonempty: bool = False, nonnegative: bool = False, items: type | None = None,
                  required: bool = False) -> None:
    """Check one column: types (``allowed``, None for anything JSON), text, numbers and nesting."""
    kinds = set(map(type, column))
    mixed = len(kinds) > 1
    if MISSING.__class__ in kinds:
        if required:
            row = next(i for i, v in enumerate(column) if v is MISSING)
            raise InvalidProfile(path, label.format(row), "is missing; every resource needs an amount and a uid")
        kinds.discard(MISSING.__class__)
    if allowed is not None:
        wrong = [k for k in kinds if k not in allowed or (k is bool and bool not in allowed)]
        if wrong:
            row, value = next((i, v) for i, v in enumerate(column) if v is not MISSING and type(v) in wrong)
            raise InvalidProfile(path, label.format(row), f"expected {what}, got {_kind(value)}")
    if str in kinds:
        strings = [v for v in column if type(v) is str] if mixed else column
        if nonempty and "" in strings:
            row = column.index("")
            raise InvalidProfile(path, label.format(row), "is empty; expected a non-empty string or an object")
        try:
            "\n".join(strings).encode("utf-8")
        except UnicodeEncodeError:
            row, value = next((i, v) for i, v in enumerate(column) if type(v) is str and not _encodes(v))
            raise InvalidProfile(path, label.format(row), "holds a lone surrogate, which is not valid Unicode text")
    if float in kinds:
        floats = [v for v in column if type(v) is float] if mixed else column
        if not all(map(math.isfinite, floats)):
            row, value = next((i, v) for i, v in enumerate(column) if type(v) is float and not math.isfinite(v))
            raise InvalidProfile(path, label.format(row), f"{value!r} is not a finite number (NaN and Infinity are refused)")
    if nonnegative and int in kinds and min(v for v in column if type(v) is int) < 0:
        row, value = next((i, v) for i, v in enumerate(column) if type(v) is int and v < 0)
        raise InvalidProfile(path, label.format(row), f"{value} is negative; expected {what}")
    if dict in kinds or list in kinds:
        nested = [v for v in column if type(v) in (dict, list)] if mixed or kinds - {dict, list} else column
        if items is not None and not _all_items_are(nested, items):
            row = next(i for i, v in enumerate(column) if type(v) is list and not all(type(x) is items for x in v))
            raise InvalidProfile(path, label.format(row), f"expected {what}")
        if _nested_values_ok(nested):
            return
        for row, value in enumerate(column):  # find and name the culprit
            if type(value) not in (dict, list):
                continue
            try:
                _walk(value, "", path, depth=1)
            except InvalidProfile as exc:
                sub = exc.key or ""
                key = label.format(row) + (sub if not sub or sub.startswith("[") else f".{sub}")
                raise InvalidProfile(path, key, exc.reason) from None


def _all_items_are(lists: list, kind: type) -> bool:
    if set(map(type, lists)) != {list}:
        return False
    return set(map(type, chain.from_iterable(lists))) <= {kind}


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _nested_values_ok(values: list) -> bool:
    """Whether every value nested in ``values`` (dicts and lists) is sound; checked in C.

    One JSON encoding refuses non-JSON values, NaN, Infinity and lone
    surrogates; then the levels are walked breadth-first (keys must be
    strings, at most :data:`MAX_DEPTH` levels).  False means "search row by
    row": :func:`_walk` then names the culprit.
    """
    try:
        json.dumps(values, ensure_ascii=False, allow_nan=False, check_circular=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        return False
    level = 1
    kinds = set(map(type, values))
    while values:
        if level >= MAX_DEPTH:
            return False
        if kinds == {dict}:
            dicts, lists = values, []
        elif kinds <= {list, tuple}:
            dicts, lists = [], values
        else:
            dicts = [v for v in values if type(v) is dict]
            lists = [v for v in values if type(v) is not dict]
        if dicts and set(map(type, chain.from_iterable(dicts))) != {str}:
            return False
        children = list(chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(lists)))
        kinds = set(map(type, children))
        containers = kinds & {dict, list, tuple}
        if not containers:
            return True
        values = children if kinds == containers else [c for c in children if type(c) in containers]
        kinds = containers
        level += 1
    return True


def _all_encode(strings: list) -> bool:
    try:
        "\n".join(strings).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _walk(value: Any, where: str, path: Path | str | None, depth: int = 0) -> None:
    """Refuse non-JSON values, non-finite floats, lone surrogates and nesting beyond MAX_DEPTH under ``value``."""
    # Depth errors name the key just under ``where`` (a section's member) or the value itself, not a path of [0]s.
    # Where a value sits is kept as (parent, key or index) and spelled out only for an error: a profile's models
    # hold thousands of values, and naming each one costs more than checking it.
    stack: list[tuple[Any, Any, int, Any]] = [(value, where, depth, where)]
    while stack:
        node, at, level, anchor = stack.pop()
        kind = type(node)
        if kind is str:
            if not node.isascii() and not _encodes(node):
                raise InvalidProfile(path, _spelled(at) or None, "holds a lone surrogate, which is not valid Unicode text")
        elif kind is float:
            if not math.isfinite(node):
                raise InvalidProfile(path, _spelled(at) or None,
                                     f"{node!r} is not a finite number (NaN and Infinity are refused)")
        elif kind is dict:
            if level >= MAX_DEPTH:
                raise InvalidProfile(path, _spelled(anchor) or None, f"nests deeper than {MAX_DEPTH} levels")
            below = at if where and level <= depth + 1 else anchor
            for key, item in node.items():
                if type(key) is not str:
                    raise InvalidProfile(path, _spelled(at) or None, f"has a key {key!r} that is not a string")
                if not key.isascii() and not _encodes(key):
                    raise InvalidProfile(path, _spelled(at) or None,
                                         "has a key with a lone surrogate, which is not valid Unicode text")
                stack.append((item, (at, key), level + 1, below))
        elif kind is list or kind is tuple:  # a tuple is written as a list
            if level >= MAX_DEPTH:
                raise InvalidProfile(path, _spelled(anchor) or None, f"nests deeper than {MAX_DEPTH} levels")
            below = at if where and level <= depth + 1 else anchor
            for i, item in enumerate(node):
                stack.append((item, (at, i), level + 1, below))
        elif node is None or kind is int or kind is bool:
            pass
        elif isinstance(node, (str, int, float)):
            pass  # subclasses (enum values, numpy scalars converted upstream) serialize as their base
        else:
            raise InvalidProfile(path, _spelled(at) or None, f"holds a {kind.__name__}, which is not a JSON value")


def _spelled(place: Any) -> str:
    """The text of a place :func:`_walk` keeps as nested (parent, key or index) pairs: ``a.b[2].c``."""
    steps = []
    while type(place) is tuple:
        place, step = place
        steps.append(step)
    text = place
    for step in reversed(steps):
        if type(step) is int:
            text = f"{text}[{step}]"
        else:
            text = f"{text}.{step}" if text else step
    return text


def _kind(value: Any) -> str:
    if value is MISSING:
        return "nothing (the key is missing)"
    return json_kind(value)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        # lazy: keeps the TUI's first frame and `perun-core check profiles` light
        from ..safetext import escape_controls

        return f"'{escape_controls(value)}'"
    return _kind(value)
