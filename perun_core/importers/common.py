"""What the importers share: their base class, reading files, JSON with key paths in errors, profiles of call stacks.

:class:`Importer` holds what every importer class has alike (its kind, no
options unless it declares some, its module's documentation as its
description); :func:`table_profile` and :func:`tool_header` build the
profile and the header's ``tool`` entry the same way for every format.

:func:`stack_table` turns call stacks (frame ids, innermost first) with
their amounts into the resources the perf collector makes, so flame graphs,
checks and the difference views treat imported stacks like collected ones::

    {"type": "time", "subtype": "samples", "uid": "leaf", "amount": 12, "trace": [frame, ...]}
    {"type": "time", "subtype": "function", "uid": "leaf", "object": "/bin/app", "amount": 40,
     "exclusive": 12}

It is vectorized with numpy: the inclusive amount of a function counts each
stack once however often the function occurs on it (recursion), found as
the unique (stack, function) pairs.  A function is a (function, object,
source) triple: frames of one function at different lines (py-spy,
speedscope) are one function resource.  The traces stay columnar (frame
numbers into one table of frame dicts,
:class:`~perun_core.profile.resources.StackColumn`): a million distinct
stacks would otherwise be a million lists of a dozen entries each, built
whether anyone reads them or not.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar

from ..errors import ImportFailed
from ..params import Param
from ..profile import fastjson
from ..profile.model import Profile, Snapshot, json_kind
from ..profile.resources import ResourceTable, StackColumn, packed_codes, packed_numbers

__all__ = ["FrameIds", "Importer", "JsonDoc", "flatten", "read_bytes", "read_json", "stack_table", "table_profile",
           "tool_header"]


class Importer:
    """The base of the built-in importers: a subclass gives ``name``, ``summary`` and ``load(files, options)``.

    ``description`` is the documentation of the subclass's module (where
    each format is described) unless the class sets its own; ``params`` is
    empty unless the class declares options.  Third-party importers need
    not derive from it: the registry asks only for ``name`` and ``load``.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    kind: ClassVar[str] = "importer"
    description: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "description" not in cls.__dict__:
            cls.description = sys.modules[cls.__module__].__doc__ or ""


def table_profile(header: dict[str, Any], rows: list[dict] | ResourceTable) -> Profile:
    """A profile of one snapshot holding ``rows`` (resource dicts or a ready table), without models."""
    table = rows if isinstance(rows, ResourceTable) else ResourceTable(rows)
    return Profile(header=header, global_region=Snapshot(table, [], {}))


def stored_file_name(path: Path) -> str:
    """``path``'s name as a profile stores it: valid Unicode even when its bytes are not UTF-8.

    A file name is bytes on POSIX; Python hands the bytes that are not UTF-8
    over as lone surrogates, which no profile can hold.  Each such byte is
    written ``\\xNN`` instead, so the import goes through and the name still
    says which file it was.
    """
    return os.fsencode(path.name).decode("utf-8", "backslashreplace")


def tool_header(name: str, described: list[dict[str, Any]]) -> dict[str, Any]:
    """The header's ``tool``: the one file's description inline, or the descriptions of several under ``files``."""
    return {"name": name, **(described[0] if len(described) == 1 else {"files": described})}


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise ImportFailed(path, None, "is a directory, expected a file") from None
    except OSError as exc:
        raise ImportFailed(path, None, f"cannot be read: {exc.strerror or exc}") from None


class FrameIds(dict):
    """Frame ids by key (function, object), made on first lookup; ``frames`` holds the trace entries."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[dict[str, Any]] = []

    def __missing__(self, key: tuple[str, str] | str) -> int:
        number = self[key] = len(self.frames)
        function, obj = (key, "") if type(key) is str else key
        entry: dict[str, Any] = {"function": function}
        if obj:
            entry["object"] = obj
        self.frames.append(entry)
        return number


def flatten(stacks: Sequence[Sequence[int]]) -> tuple[Any, Any]:
    """Stacks of frame ids as one flat numpy array and the length of each stack."""
    import numpy as np

    lengths = np.fromiter(map(len, stacks), dtype=np.int64, count=len(stacks))
    flat = np.fromiter(chain.from_iterable(stacks), dtype=np.int64, count=int(lengths.sum()))
    return flat, lengths


def stack_table(
    ids: FrameIds,
    flat: Any,
    lengths: Any,
    amounts: Sequence[int | float],
    *,
    kind: str = "time",
    periods: Sequence[int] | None = None,
) -> ResourceTable:
    """Resources of the stacks in ``flat`` (frame ids, each stack innermost first) and of every function on them.

    ``lengths[i]`` is the number of frames of stack ``i``, ``amounts[i]``
    what it consumed; ``periods`` (optional) the sum of sampling periods.
    Stacks must be distinct.  The traces stay columnar (a
    :class:`~perun_core.profile.resources.StackColumn` over ``ids.frames``)
    until someone reads them as lists.
    """
    import numpy as np

    count = len(lengths)
    amount = np.asarray(amounts)
    if amount.dtype.kind not in "if":
        amount = amount.astype(np.float64)
    flat = np.asarray(flat)
    if flat.dtype not in (np.int32, np.int64):  # the folded reader's frame numbers stay int32
        flat = flat.astype(np.int64)
    ends = np.cumsum(lengths, dtype=np.int64)
    starts = ends - lengths
    leaves = flat[starts] if count else np.zeros(0, dtype=np.int64)
    frames = ids.frames
    # a function is its name, object and source: frames of one function at different lines count as one
    function_of, firsts = function_numbers(frames)
    # most frame tables hold each function once: then a frame's number is its function's
    same = len(firsts) == len(frames) and bool((function_of == np.arange(len(frames))).all())
    inclusive, exclusive = function_amounts(len(firsts), flat if same else function_of[flat], lengths,
                                            leaves if same else function_of[leaves], amount)
    integral = amount.dtype.kind == "i"
    order = _largest_first(amount)
    used = np.flatnonzero(inclusive > 0)
    used = used[np.lexsort((used, -inclusive[used]))]
    m = len(used)
    # every column packed from numpy: a million rows never become a million Python objects
    stack_rows, function_rows = np.arange(count, dtype=np.int64), np.arange(count, count + m, dtype=np.int64)
    as_numbers = (lambda a: np.rint(a).astype(np.int64)) if integral else (lambda a: a.astype(np.float64))
    inclusive, exclusive, used = inclusive[used], exclusive[used], firsts[used]  # functions by their first frame
    objects = list(dict.fromkeys(frames[i].get("object", "") for i in used.tolist()))
    object_codes = {name: code for code, name in enumerate(objects)}
    keys_ = ["type", "subtype", "uid", "amount", "trace", "object", "exclusive"]
    columns: list[Any] = [
        packed_codes(np.zeros(count + m, dtype=np.int8), [kind]),
        packed_codes(np.repeat(np.array([0, 1], dtype=np.int8), [count, m]), ["samples", "function"]),
        packed_codes(np.concatenate((leaves[order], used)), [entry["function"] for entry in frames]),
        packed_numbers(np.concatenate((amount[order], as_numbers(inclusive)))),
        StackColumn(frames, flat, starts[order], ends[order], count + m),
        packed_codes(np.concatenate((np.zeros(count, dtype=np.int64), np.fromiter(
            (object_codes[frames[i].get("object", "")] for i in used.tolist()), dtype=np.int64, count=m))),
            objects or [""], stack_rows),
        packed_numbers(np.concatenate((np.zeros(count, dtype=np.int64), as_numbers(exclusive))), stack_rows),
    ]
    if periods is not None:
        keys_.append("period")
        columns.append(packed_numbers(np.concatenate((np.asarray(periods, dtype=np.int64)[order],
                                                      np.zeros(m, dtype=np.int64))), function_rows))
    return ResourceTable.from_columns(count + m, keys_, columns, sparse=True)


def _largest_first(amount: Any) -> Any:
    """The rows by amount, largest first, rows of equal amounts in their order (a stable sort)."""
    import numpy as np

    if amount.dtype.kind == "i" and len(amount):
        low, high = int(amount.min()), int(amount.max())
        if high - low < 1 << 16:  # 16-bit keys numpy sorts stably by radix: several times faster
            return np.argsort((high - amount).astype(np.uint16), kind="stable")
    return np.argsort(-amount, kind="stable")


def function_numbers(frames: list[dict[str, Any]]) -> tuple[Any, Any]:
    """Each frame's function number, and each function's first frame (int64 arrays).

    A function is a (function, object, source) triple: the line of a frame
    (py-spy, speedscope) tells where in the function it was, not which one.
    """
    import numpy as np

    numbers: dict[tuple[Any, Any, Any], int] = {}
    function_of = np.fromiter((numbers.setdefault((f["function"], f.get("object"), f.get("source")), len(numbers))
                               for f in frames), dtype=np.int64, count=len(frames))
    firsts = np.full(len(numbers), len(frames), dtype=np.int64)
    np.minimum.at(firsts, function_of, np.arange(len(frames), dtype=np.int64))
    return function_of, firsts


def function_amounts(functions: int, flat: Any, lengths: Any, leaves: Any, amount: Any) -> tuple[Any, Any]:
    """Inclusive and exclusive amount of every function (float arrays indexed by frame id).

    The inclusive amount counts each stack once however often the function
    occurs on it (recursion): the unique (stack, function) pairs.
    """
    import numpy as np

    functions = max(functions, 1)
    weights = amount.astype(np.float64)
    count = len(lengths)
    # whole amounts whose total a float holds exactly add up to the same sums in any order: their stacks go in
    # chunks, whose per-frame arrays stay in the cache; other amounts in one pass, added in the order they always were
    exact = amount.dtype.kind in "iu" and float(np.abs(weights).sum()) < 2.0 ** 52
    step = max(min(_STACKS_AT_ONCE, (1 << 32) // functions), 1) if exact else max(count, 1)
    key_type = np.uint32 if step * functions <= 1 << 32 else np.uint64
    ends = np.cumsum(lengths, dtype=np.int64)
    inclusive = np.zeros(functions, dtype=np.float64)
    again_stacks, again_functions = [], []
    for lo in range(0, count, step):
        hi = min(lo + step, count)
        part = flat[(int(ends[lo - 1]) if lo else 0):int(ends[hi - 1])]
        # unique (stack, function) pairs: equal keys side by side after a sort (any sort: numpy's vectorized
        # one of 32-bit keys is the fastest)
        keys = np.repeat(np.arange(hi - lo, dtype=key_type), lengths[lo:hi])
        keys *= key_type(functions)
        keys += part.astype(key_type, copy=False)
        keys.sort()
        repeated = keys[1:][keys[1:] == keys[:-1]]  # a function met again on one stack (recursion)
        del keys
        if len(repeated):
            again_stacks.append((repeated // key_type(functions)).astype(np.int64) + lo)
            again_functions.append((repeated % key_type(functions)).astype(np.int64))
        inclusive += np.bincount(part, weights=np.repeat(weights[lo:hi], lengths[lo:hi]), minlength=functions)
    if again_stacks:
        inclusive -= np.bincount(np.concatenate(again_functions), weights=weights[np.concatenate(again_stacks)],
                                 minlength=functions)
    exclusive = np.bincount(leaves, weights=weights, minlength=functions)
    return inclusive, exclusive


#: Stacks whose (stack, function) pairs are sorted at once (some hundred thousand frames).
_STACKS_AT_ONCE = 1 << 15


class JsonDoc:
    """A parsed JSON file whose accessors raise ImportFailed naming the file and the key path."""

    def __init__(self, path: Path, data: Any) -> None:
        self.path = path
        self.data = data

    def fail(self, key: str, reason: str) -> ImportFailed:
        return ImportFailed(self.path, f"key '{key}'" if key else None, reason)

    def amount(self, container: Any, key: str | int, where: str, *, optional: bool = False) -> Any:
        """A number that measures something (a time, a size, a count): 0 or more and finite."""
        value = self.get(container, key, where, (int, float), optional=optional)
        if value is not None and not 0 <= value < float("inf"):
            what = "a negative value" if value < 0 else "not a finite number"
            raise self.fail(_place(where, key), f"{what} ({value}): expected 0 or more")
        return value

    def get(self, container: Any, key: str | int, where: str, kind: type | tuple[type, ...],
            *, optional: bool = False, default: Any = None) -> Any:
        place = _place(where, key)
        if isinstance(key, int):
            value = container[key] if -len(container) <= key < len(container) else None
        else:
            if not isinstance(container, dict):
                raise self.fail(where, "expected an object")
            if key not in container:
                if optional:
                    return default
                raise self.fail(place, "is missing")
            value = container[key]
        if value is None and optional:
            return default
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise self.fail(place, f"expected {_names(kinds)}, got {json_kind(value)}")
        return value


def _place(where: str, key: str | int) -> str:
    return f"{where}[{key}]" if isinstance(key, int) else (f"{where}.{key}" if where else key)


def read_json(path: Path) -> JsonDoc:
    """The JSON of ``path``; a one-line ImportFailed with the line of a syntax error or truncation."""
    import json

    raw = read_bytes(path)
    try:
        return JsonDoc(path, fastjson.json_loads(raw))
    except UnicodeDecodeError as exc:
        raise ImportFailed(path, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(raw.rstrip()) or not raw.rstrip().endswith((b"}", b"]"))
        what = "ends early (truncated?)" if cut else f"is not valid JSON: {exc.msg}"
        raise ImportFailed(path, f"line {exc.lineno}", what) from None
    except RecursionError:
        raise ImportFailed(path, None, "nests JSON arrays or objects deeper than Python can read") from None


def _names(kinds: tuple[type, ...]) -> str:
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
             bool: "a boolean"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))
