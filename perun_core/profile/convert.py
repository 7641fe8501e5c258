"""Conversions of profiles to other representations (spec §2.3).

Every function taking a ``profile`` accepts either a :class:`Profile` or a
plain dict in the documented JSON form.  Flattened keys and joined values
follow the rules of :mod:`perun_core.profile.query`.

* :func:`resources_to_table` / :func:`resources_to_pandas_dataframe`: all
  resources as one flat table;
* :func:`to_flame_graph_format`: folded call stacks for flame graphs;
* :func:`to_heap_map_format` / :func:`to_heat_map_format`: address maps of
  memory profiles;
* :func:`plot_data_from_coefficients_of`: points of a regression model's
  curve, with a registry (:data:`MODEL_PLOTTERS`) other model kinds can join.
"""

from __future__ import annotations

import math
import operator
from itertools import repeat
from typing import TYPE_CHECKING, Any

from ..errors import ExternalToolError, InvalidProfile, UsageError
from .model import Profile, is_finite_number
from .query import _region_flat_columns, as_profile
from .resources import MISSING

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = [
    "resources_to_pandas_dataframe",
    "resources_to_table",
    "to_flame_graph_format",
    "to_heap_map_format",
    "to_heat_map_format",
]


# -- tables -------------------------------------------------------------------------

def resources_to_table(profile: Profile | dict) -> tuple[list[str], list[list]]:
    """All resources flattened into one table, returned column-wise.

    Returns ``(names, columns)``: ``names`` are the flattened keys (see
    :func:`~perun_core.profile.query.all_items_of`) plus ``snapshots`` (the
    region number of each resource), sorted alphabetically; ``columns[i]``
    holds the values of ``names[i]``, one per resource, in region order.
    Dicts and lists appear in joined form; absent keys are ``None``.
    """
    prof = as_profile(profile)
    table: dict[str, list] = {}
    total = 0
    for number, region in prof.regions():
        count = len(region.resources)
        if not count:
            continue
        region_columns = {key: values for key, values, _ in _region_flat_columns(region.resources)}
        region_columns.setdefault("snapshots", [number] * count)
        for key, values in region_columns.items():
            column = table.get(key)
            if column is None:
                column = table[key] = [None] * total
            if MISSING in values:
                values = [None if v is MISSING else v for v in values]
            column.extend(values)
        total += count
        for column in table.values():
            if len(column) < total:
                column.extend([None] * (total - len(column)))
    names = sorted(table)
    return names, [table[name] for name in names]


def resources_to_pandas_dataframe(profile: Profile | dict) -> pandas.DataFrame:
    """The table of :func:`resources_to_table` as a ``pandas.DataFrame``.

    pandas is optional: without it this raises
    :class:`~perun_core.errors.ExternalToolError`.
    """
    try:
        import pandas
    except ImportError:
        raise ExternalToolError("pandas", "pip install pandas") from None
    names, columns = resources_to_table(profile)
    return pandas.DataFrame(dict(zip(names, columns)), columns=names)


# -- flame graphs ---------------------------------------------------------------------


def _frame(entry: Any) -> str:
    if isinstance(entry, dict):
        name = entry.get("function", entry.get("func", entry.get("name", "?")))
        parts = [f"{name}()"]
        source = entry.get("source", entry.get("file"))
        if source is not None:
            parts.append(str(source))
        line = entry.get("line")
        if line is not None:
            parts.append(str(line))
        text = "~".join(parts)
    else:
        text = str(entry)
    # ';' separates frames and a line break ends a record in the folded format.
    return text.replace(";", ",").replace("\n", " ").replace("\r", " ")


def _format_amount(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    if value.is_integer():
        return str(int(value))
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text


def to_flame_graph_format(profile: Profile | dict, *, of: str = "amount") -> list[str]:
    """Folded call stacks (Brendan Gregg's format): ``"root;...;leaf value"`` lines.

    Every resource with a non-empty ``trace`` list and a positive finite
    numeric ``of`` value contributes; others are skipped, and so are
    deallocation records (``subtype`` ``"free"``), which consume nothing.
    A trace entry dict becomes the frame ``function()~source~line`` (parts
    that are absent are left out, ``func``/``file`` are accepted as the other
    spellings); any other entry becomes its string.  Traces are stored
    innermost call first, so frames are reversed to put the root first.
    Values of identical stacks are summed; lines come sorted, without
    trailing newlines.
    """
    return folded_stacks(profile, of)[0]


def folded_stacks(profile: Profile | dict, of: str = "amount") -> tuple[list[str], dict[str, Any]]:
    """The lines of :func:`to_flame_graph_format` and the trace entry behind each frame label (the first met)."""
    prof = as_profile(profile)
    totals: dict[str, int | float] = {}
    labels: dict[int, str] = {}  # by id of a trace entry: collectors share entries between traces
    entries: dict[str, Any] = {}
    for _, region in prof.regions():
        table = region.resources
        if not len(table):
            continue
        traces = table.column("trace")
        amounts = table.column(of)
        subtypes = table.column("subtype")
        per_trace = _whole_amounts_by_trace(traces, amounts, subtypes)
        if per_trace is None:
            per_trace = _amounts_by_trace(traces, amounts, subtypes)
        for trace, amount in per_trace:
            if isinstance(trace, list) and trace:
                stack = ";".join(_labels(trace, labels, entries))
                totals[stack] = totals.get(stack, 0) + amount
    return sorted(f"{stack} {_format_amount(value)}" for stack, value in totals.items()), entries


def _labels(trace: list, labels: dict[int, str], entries: dict[str, Any]) -> list[str]:
    """The frames of ``trace`` root first, each entry made a label once (``labels`` by id of the entry).

    ``entries`` gets the first entry of each label.
    """
    out = list(map(labels.get, map(id, reversed(trace))))
    if None in out:  # entries not met before
        for number, entry in enumerate(reversed(trace)):
            if out[number] is None:
                text = out[number] = labels[id(entry)] = _frame(entry)
                entries.setdefault(text, entry)
    return out


def _amounts_by_trace(traces: list, amounts: list, subtypes: list) -> list[tuple[Any, int | float]]:
    """(trace, total) of each distinct trace object with positive finite amounts, in order of first use."""
    found: dict[int, list] = {}
    for trace, amount, subtype in zip(traces, amounts, subtypes):
        if not is_finite_number(amount) or amount <= 0 or subtype == "free":
            continue
        entry = found.get(id(trace))
        if entry is None:
            found[id(trace)] = [trace, amount]
        else:
            entry[1] += amount
    return [(trace, amount) for trace, amount in found.values()]


def _whole_amounts_by_trace(traces: list, amounts: list, subtypes: list) -> list[tuple[Any, int]] | None:
    """:func:`_amounts_by_trace` with numpy when every amount is a whole number (sums stay exact); else None.

    Collectors share one trace list between the resources of one stack, so
    traces are grouped by identity; equal traces in different lists are
    added up by their folded text later, as in the general case.
    """
    import numpy as np

    if set(map(type, amounts)) != {int}:
        return None
    try:
        values = np.array(amounts, dtype=np.int64)
    except OverflowError:
        return None
    keep = values > 0
    if "free" in dict.fromkeys(subtypes):
        keep &= np.fromiter(map(operator.ne, subtypes, repeat("free")), dtype=bool, count=len(subtypes))
    rows = np.flatnonzero(keep)
    identities = np.fromiter(map(id, traces), dtype=np.uint64, count=len(traces))[rows]
    distinct, which = np.unique(identities, return_inverse=True)
    sums = np.zeros(len(distinct), dtype=np.int64)
    np.add.at(sums, which, values[rows])
    first = np.full(len(distinct), len(rows), dtype=np.int64)
    np.minimum.at(first, which, np.arange(len(rows), dtype=np.int64))
    order = np.argsort(first, kind="stable")
    return list(zip(map(traces.__getitem__, rows[first[order]].tolist()), sums[order].tolist()))


# -- heap and heat maps --------------------------------------------------------------------

def _memory_profile(profile: Profile | dict) -> Profile:
    prof = as_profile(profile)
    if prof.type != "memory":
        raise InvalidProfile(None, "header.type", f"expected a memory profile, got {prof.type}")
    return prof


def _memory_unit(prof: Profile) -> str:
    unit = prof.units.get("memory")
    return str(unit) if unit else "B"


def _uid_info(uid: Any) -> dict:
    if isinstance(uid, dict):
        return {
            "line": uid.get("line", 0),
            "function": str(uid.get("function", "")),
            "source": str(uid.get("source", "")),
        }
    if uid is MISSING or uid is None:
        return {"line": 0, "function": "", "source": ""}
    return {"line": 0, "function": str(uid), "source": ""}


class _Allocations:
    """Allocation records of memory profiles, with their uids numbered once."""

    def __init__(self) -> None:
        self.info: list[dict] = []
        self._index: dict[tuple, int] = {}

    def uid_index(self, uid: Any) -> int:
        info = _uid_info(uid)
        key = (info["source"], info["function"], repr(info["line"]))
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.info)
            self.info.append(info)
        return index

    def of_region(self, region: Any) -> list[dict]:
        """Map entries of one region: records with an int address and a
        non-negative numeric amount, other than ``free``, in recorded order."""
        table = region.resources
        if not len(table):
            return []
        cache: dict[int, int] = {}
        entries = []
        for address, amount, uid, subtype in zip(
            table.column("address"), table.column("amount"), table.column("uid"), table.column("subtype")
        ):
            if subtype == "free" or type(address) is not int or not is_finite_number(amount) or amount < 0:
                continue
            ident = id(uid)
            index = cache.get(ident)
            if index is None:
                index = self.uid_index(uid)
                if isinstance(uid, dict):
                    cache[ident] = index
            entries.append({
                "address": address,
                "amount": amount,
                "uid": index,
                "subtype": "" if subtype is MISSING else subtype,
            })
        return entries


def _last_byte(entry: dict) -> int:
    # an allocation of n bytes at a covers a .. a+n-1; empty ones still mark a
    return entry["address"] + max(math.ceil(entry["amount"]), 1) - 1


def _summary(entries: list[dict]) -> dict:
    if not entries:
        return {"max_amount": 0, "min_amount": 0, "sum_amount": 0, "max_address": 0, "min_address": 0}
    amounts = [e["amount"] for e in entries]
    return {
        "max_amount": max(amounts),
        "min_amount": min(amounts),
        "sum_amount": sum(amounts),
        "max_address": max(map(_last_byte, entries)),
        "min_address": min(e["address"] for e in entries),
    }


def _region_time(number: int, region: Any) -> str:
    time = region.time
    return str(number) if time is None else str(time)


def to_heap_map_format(profile: Profile | dict) -> dict:
    """The memory profile as a heap map: allocations per snapshot (spec §2.3).

    ::

        {"type": "heap", "unit": "B",
         "stats": {"max_amount", "min_amount", "sum_amount", "max_address",
                   "min_address", "allocations"},
         "info": [{"line", "function", "source"}, ...],      # distinct uids
         "snapshots": [{"time", "max_amount", "min_amount", "sum_amount",
                        "max_address", "min_address",
                        "map": [{"address", "amount", "uid", "subtype"}, ...]}]}

    Each snapshot maps the allocation records of that snapshot (the
    ``global`` region, when it holds resources, comes last); ``uid`` is an
    index into ``info``.  ``free`` records and records without an integer
    ``address`` or a non-negative numeric ``amount`` are left out.
    ``min_address`` is the lowest start address, ``max_address`` the last
    byte allocated (``address + amount - 1``; an empty allocation counts its
    start).  Empty snapshots have zeros.  ``stats`` sums up all snapshots.
    ``time`` is the snapshot's time as a string (its number when it has none).
    """
    prof = _memory_profile(profile)
    allocations = _Allocations()
    snapshots = []
    everything: list[dict] = []
    for number, region in prof.regions():
        if region is prof.global_region and not len(region.resources):
            continue
        entries = allocations.of_region(region)
        everything.extend(entries)
        snapshot = {"time": _region_time(number, region)}
        snapshot.update(_summary(entries))
        snapshot["map"] = entries
        snapshots.append(snapshot)
    stats = _summary(everything)
    stats["allocations"] = len(everything)
    return {
        "type": "heap",
        "unit": _memory_unit(prof),
        "stats": stats,
        "info": allocations.info,
        "snapshots": snapshots,
    }


def to_heat_map_format(profile: Profile | dict, *, cells: int = 1024) -> dict:
    """Allocations of all snapshots aggregated over the address space.

    ::

        {"type": "heat", "unit": "B",
         "stats": {"min_address", "max_address", "cell_size", "cells",
                   "max_count", "allocations"},
         "map": [count, ...]}

    Bucketing: the allocated address range ``min_address .. max_address``
    (both inclusive, as in :func:`to_heap_map_format`) is cut into at most
    ``cells`` equal cells of ``cell_size = ceil(span / cells)`` bytes, where
    ``span = max_address - min_address + 1``; ``map[i]`` counts the
    allocations (over all snapshots) overlapping bytes ``min_address +
    i * cell_size`` .. ``min_address + (i + 1) * cell_size - 1``.  The hotter
    a cell, the more often memory there was allocated.  Without allocations
    the map is empty and the stats are zeros.
    """
    if type(cells) is not int or cells < 1:
        raise UsageError(f"cells must be a positive integer, got {cells!r}")
    prof = _memory_profile(profile)
    allocations = _Allocations()
    spans: list[tuple[int, int]] = []
    for _, region in prof.regions():
        for entry in allocations.of_region(region):
            spans.append((entry["address"], _last_byte(entry)))
    stats = {"min_address": 0, "max_address": 0, "cell_size": 0, "cells": 0, "max_count": 0, "allocations": len(spans)}
    heat: list[int] = []
    if spans:
        low = min(first for first, _ in spans)
        high = max(last for _, last in spans)
        span = high - low + 1
        size = -(-span // cells)
        count = -(-span // size)
        diff = [0] * (count + 1)
        for first, last in spans:
            diff[(first - low) // size] += 1
            diff[(last - low) // size + 1] -= 1
        running = 0
        for step in diff[:-1]:
            running += step
            heat.append(running)
        stats.update(min_address=low, max_address=high, cell_size=size, cells=count, max_count=max(heat))
    return {"type": "heat", "unit": _memory_unit(prof), "stats": stats, "map": heat}
