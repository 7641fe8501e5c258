"""memray's statistics (``memray stats --json``) as a memory profile.

``memray run -o capture.bin script.py`` records every allocation of a
Python program; ``memray stats --json -o stats.json capture.bin`` sums it
up, and that summary is what this importer reads (it has no call stacks:
the largest allocating places, not the stacks that led there)::

    {"type": "memory", "subtype": "location", "uid": "<listcomp> (alloc.py:9)", "function": "<listcomp>",
     "source": "alloc.py", "line": 9, "amount": 329346}
    {"type": "allocations", "subtype": "location", "uid": "<listcomp> (alloc.py:9)", "function": "<listcomp>",
     "source": "alloc.py", "line": 9, "amount": 310}

* ``location``: the places that allocated the most bytes
  (``top_allocations_by_size``, type ``memory`` in ``B``) and the most
  times (``top_allocations_by_count``, type ``allocations``); memray's
  ``function:file:line`` is split into ``function``, ``source`` and
  ``line``, the uid naming all three (two places of one function differ);
* ``module``: bytes (and, as ``allocations``, the number) allocated per
  module, from both module lists;
* ``size``: how many allocations fell in each bucket of the size
  histogram, the uid naming the bucket (``512-1448 B``);
* ``allocator``: how many allocations each allocator made (``MALLOC``);
* ``total``: the bytes allocated, the number of allocations and the peak
  memory (``peak``).

``memray stats -n N`` sets how many places and modules the lists hold.
The header keeps memray's metadata (command line, pid, times, allocator).
A negative size or count is refused, naming its key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..profile.model import Profile
from .common import Importer, JsonDoc, read_json, stored_file_name, table_profile, tool_header

__all__ = ["MemrayStatsImporter", "split_location"]


def split_location(location: str) -> dict[str, Any]:
    """memray's ``function:file:line`` as uid, function, source and line (file names may hold colons)."""
    head, sep, line = location.rpartition(":")
    function, sep_source, source = head.partition(":")
    if not sep or not line.isdigit() or not sep_source:
        return {"uid": location, "function": location}
    return {"uid": f"{function} ({source}:{line})", "function": function, "source": source, "line": int(line)}


class MemrayStatsImporter(Importer):
    name = "memray-stats"
    summary = "memray stats --json files: bytes and allocations per place, module, size and allocator."

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        rows: list[dict] = []
        metas = []
        for number, path in enumerate(files, start=1):
            doc = read_json(path)
            root = doc.get({"": doc.data}, "", "", dict)
            extra = {"process": number} if len(files) > 1 else {}
            rows += [{**row, **extra} for row in _stats_rows(doc, root)]
            metas.append({"file": stored_file_name(path), **doc.get(root, "metadata", "", dict, optional=True, default={})})
        tool = tool_header("memray", metas)
        if len(metas) == 1 and metas[0].get("command_line"):
            tool["command"] = metas[0]["command_line"]
        header = {"type": "memory", "units": {"memory": "B", "allocations": "allocations"}, "tool": tool}
        return table_profile(header, rows)


def _stats_rows(doc: JsonDoc, root: dict) -> list[dict]:
    """The resources of one ``memray stats --json`` file."""
    rows = []
    for key, kind, value_key in (("top_allocations_by_size", "memory", "size"),
                                 ("top_allocations_by_count", "allocations", "count")):
        places = doc.get(root, key, "", list)
        for i, _ in enumerate(places):
            place = doc.get(places, i, key, dict)
            where = f"{key}[{i}]"
            rows.append({"type": kind, "subtype": "location", **split_location(doc.get(place, "location", where, str)),
                         "amount": doc.amount(place, value_key, where)})
    modules: dict[str, tuple[Any, Any]] = {}
    for key in ("top_modules_by_allocation_size", "top_modules_by_allocation_count"):
        listed = doc.get(root, key, "", list, optional=True, default=[])
        for i, _ in enumerate(listed):
            module = doc.get(listed, i, key, dict)
            where = f"{key}[{i}]"
            modules.setdefault(doc.get(module, "module", where, str),
                               (doc.amount(module, "total_bytes", where), doc.amount(module, "num_allocations", where)))
    for name, (size, count) in modules.items():
        rows.append({"type": "memory", "subtype": "module", "uid": name, "amount": size})
        rows.append({"type": "allocations", "subtype": "module", "uid": name, "amount": count})
    histogram = doc.get(root, "allocation_size_histogram", "", list, optional=True, default=[])
    for i, _ in enumerate(histogram):
        bucket = doc.get(histogram, i, "allocation_size_histogram", dict)
        where = f"allocation_size_histogram[{i}]"
        low, high = doc.amount(bucket, "min_bytes", where), doc.amount(bucket, "max_bytes", where)
        rows.append({"type": "allocations", "subtype": "size", "uid": f"{low}-{high} B", "amount":
                     doc.amount(bucket, "count", where), "min_bytes": low, "max_bytes": high})
    allocators = doc.get(root, "allocator_type_distribution", "", dict, optional=True, default={})
    for name in allocators:
        rows.append({"type": "allocations", "subtype": "allocator", "uid": name,
                     "amount": doc.amount(allocators, name, "allocator_type_distribution")})
    rows.append({"type": "memory", "subtype": "total", "uid": "allocated",
                 "amount": doc.amount(root, "total_bytes_allocated", "")})
    rows.append({"type": "allocations", "subtype": "total", "uid": "allocations",
                 "amount": doc.amount(root, "total_num_allocations", "")})
    metadata = doc.get(root, "metadata", "", dict, optional=True, default={})
    peak = doc.amount(metadata, "peak_memory", "metadata", optional=True)
    if peak is not None:
        rows.append({"type": "memory", "subtype": "total", "uid": "peak", "amount": peak})
    return rows
