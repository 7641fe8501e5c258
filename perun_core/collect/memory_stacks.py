"""Call stacks of the memory collector as sequences of symbolized frames, and the traces built from them.

Every distinct return address is symbolized once (:mod:`.symbols`, one
addr2line run per object file, all at the same time).  Addresses with the
same frames and the same system-library flag form a "frame class": they
build the same trace pieces.  Each stack becomes a sequence of classes, and
the distinct sequences are found with numpy (a 64-bit hash per sequence,
checked against a representative), so the recursion of a tree walk, whose
return addresses differ on every path, has only as many sequences as
depths.  In a version 2 log (stacks as a tree of suffixes) a node's
sequence is its own class followed by its parent's, so the sequences are
numbered depth by depth from the pairs (class, parent's sequence), without
expanding any stack.  :class:`_Traces` then builds a trace and uid once per
distinct sequence (and allocator, with ``--all``).
"""

from __future__ import annotations

import os
from itertools import chain
from typing import Any

from .memory_log import KINDS, TREE_VERSION, stack_records, stack_tree
from .nativelog import ProcessLog
from .symbols import Frame, ProcessMaps, Symbolizer

__all__ = ["SYSTEM_DIRS", "StackClasses", "stack_classes"]

#: Frames in objects under these directories (the C library, libstdc++, ...) are left out of
#: default traces, so that a trace starts where the program itself allocated.
SYSTEM_DIRS = ("/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libexec/")


class StackClasses:
    """The stacks of one process: ``ids`` (numpy), the number of each one's class sequence
    (``sequence_of``), the distinct ``sequences`` and the frame ``classes`` they are made of
    (``(frames, system library)`` each)."""

    __slots__ = ("ids", "sequence_of", "sequences", "classes")

    def __init__(self, ids: Any, sequence_of: Any, sequences: list[tuple[int, ...]],
                 classes: list[tuple[tuple[Frame, ...], bool]]) -> None:
        self.ids = ids
        self.sequence_of = sequence_of
        self.sequences = sequences
        self.classes = classes


def stack_classes(log: ProcessLog) -> StackClasses:
    """Every stack defined in ``log`` as a sequence of frame classes."""
    if log.version >= TREE_VERSION:
        return _tree_classes(log)
    ids, counts, flat = stack_records(log)
    classes, flat_classes = _frame_classes(log, flat)
    sequence_of, sequences = _distinct_sequences(flat_classes, counts)
    return StackClasses(ids, sequence_of, sequences, classes)


def _tree_classes(log: ProcessLog) -> StackClasses:
    """:func:`stack_classes` of a version 2 log: one pass per depth over the nodes of the stack tree.

    A node's class sequence is its own class followed by its parent's
    sequence, so the distinct sequences of one depth are the distinct pairs
    (class, parent's sequence number) of the nodes at that depth.
    """
    import numpy as np

    tree = stack_tree(log)
    framed = np.flatnonzero(tree.depth > 0)
    classes, framed_classes = _frame_classes(log, tree.address[framed])
    node_class = np.zeros(len(tree.ids), dtype=np.int64)
    node_class[framed] = framed_classes
    sequence_of = np.zeros(len(tree.ids), dtype=np.int64)
    sequences: list[tuple[int, ...]] = []
    narrow = tree.depth.astype(np.uint16) if not len(tree.depth) or int(tree.depth.max()) < 1 << 16 else tree.depth
    order = np.argsort(narrow, kind="stable")  # a radix sort for 16-bit keys
    depths = narrow[order]
    edges = [0, *(np.flatnonzero(depths[1:] != depths[:-1]) + 1).tolist(), len(order)] if len(order) else [0]
    for low, high in zip(edges[:-1], edges[1:]):
        nodes = order[low:high]
        if depths[low] == 0:
            sequence_of[nodes] = len(sequences)
            sequences.append(())
            continue
        own = node_class[nodes]
        parents = tree.parent[nodes]
        outer = np.where(parents >= 0, sequence_of[np.maximum(parents, 0)], 0)
        keys = own * (len(sequences) + 1) + outer
        _, number = _distinct_numbers(keys.view(np.uint64))
        firsts = np.empty(int(number.max()) + 1, dtype=np.int64)
        firsts[number] = np.arange(len(number))  # any node of each pair: they all have the same
        sequence_of[nodes] = len(sequences) + number
        if depths[low] == 1:
            sequences.extend((c,) for c in own[firsts].tolist())
        else:
            sequences.extend((c, *sequences[o]) for c, o in zip(own[firsts].tolist(), outer[firsts].tolist()))
    return StackClasses(tree.ids, sequence_of, sequences, classes)


def _frame_classes(log: ProcessLog, flat: Any) -> tuple[list[tuple[tuple[Frame, ...], bool]], Any]:
    """The frame classes of the return addresses ``flat`` (numpy), and the class of each entry."""
    import numpy as np

    addresses, inverse = _distinct_numbers(flat)
    symbolizer = Symbolizer(ProcessMaps.from_text(log.maps_text))
    resolved = symbolizer.resolve(addresses.tolist())
    class_of: dict[tuple, int] = {}
    classes = []
    numbers = []
    for address in addresses.tolist():
        where = symbolizer.maps.locate(address)
        key = (resolved[address], where is not None and where[0].startswith(SYSTEM_DIRS))
        number = class_of.get(key)
        if number is None:
            number = class_of[key] = len(classes)
            classes.append(key)
        numbers.append(number)
    flat_classes = np.asarray(numbers, dtype=np.int32)[inverse] if numbers else np.zeros(0, dtype=np.int32)
    return classes, flat_classes


#: Odd multipliers tried, one after the other, for a collision-free table of the distinct addresses.
_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9)


def _distinct_numbers(flat: Any) -> tuple[Any, Any]:
    """The distinct values of ``flat`` (uint64, sorted) and, per entry, the position of its value among them.

    A call stack array holds millions of return addresses but only tens or
    hundreds of distinct ones (and hundreds of thousands of stacks have only
    tens of distinct hashes).  Instead of sorting all of them, the distinct
    values of a sample go into a small collision-free hash table (a
    multiplicative hash); every entry is looked up there and checked, and
    the values the sample missed are added until none is missing.
    """
    import numpy as np

    if len(flat) < 4096:
        distinct = np.sort(np.asarray(sorted(set(flat.tolist())), dtype=np.uint64))
        return distinct, np.searchsorted(distinct, flat)
    known = np.asarray(sorted(set(flat[::97].tolist())), dtype=np.uint64)
    for _ in range(8):
        bits = max(4, (4 * len(known)).bit_length())
        if bits > 20:
            break
        shift = np.uint64(64 - bits)
        for multiplier in map(np.uint64, _MULTIPLIERS):
            slots = (known * multiplier) >> shift
            if len(set(slots.tolist())) == len(known):
                break
        else:
            break
        table = np.zeros(1 << bits, dtype=np.int64)
        table[slots.astype(np.int64)] = np.arange(len(known))
        slot_of = flat * multiplier
        slot_of >>= shift
        found = table[slot_of.view(np.int64)]
        missed = known[found] != flat
        misses = int(np.count_nonzero(missed))
        if not misses:
            return known, found
        if misses > 65536:
            break
        known = np.asarray(sorted(set(known.tolist()) | set(flat[missed].tolist())), dtype=np.uint64)
    distinct = np.unique(flat)
    return distinct, np.searchsorted(distinct, flat)


def _distinct_sequences(classes: Any, counts: Any) -> tuple[Any, list[tuple[int, ...]]]:
    """Per stack record, the number of its class sequence; and the distinct sequences.

    ``classes`` is flat (record after record, ``counts`` entries each).
    Records are grouped by a 64-bit hash of their sequence, and every record
    is then compared with a representative of its group, so a hash collision is
    noticed (and the exact but slower grouping by content used instead).
    """
    import numpy as np

    n = len(counts)
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    begins = np.cumsum(counts) - counts
    within = np.arange(len(classes), dtype=np.int64) - np.repeat(begins, counts)
    mixed = (classes.astype(np.uint64) + np.uint64(1)) * _position_multipliers()[within]
    hashes = counts.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    filled = np.flatnonzero(counts)
    if len(filled):
        hashes[filled] += np.add.reduceat(mixed, begins[filled])
    distinct, group = _distinct_numbers(hashes)
    first = np.empty(len(distinct), dtype=np.int64)  # a record of each group (any one: all are compared)
    first[group] = np.arange(n, dtype=np.int64)
    representative = first[group]
    same = (counts[representative] == counts).all() and (
        classes == classes[np.repeat(begins[representative], counts) + within]).all()
    if not same:  # pragma: no cover - a 64-bit hash collision
        return _distinct_sequences_exactly(classes, counts)
    sequences = [tuple(classes[b:b + c].tolist()) for b, c in zip(begins[first].tolist(), counts[first].tolist())]
    return group.astype(np.int64), sequences


_MIXERS: list = []


def _position_multipliers() -> Any:
    """Odd 64-bit multipliers per frame position (splitmix64 of the position: fixed, so runs are repeatable)."""
    import numpy as np

    if not _MIXERS:
        x = np.arange(1, 257, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        _MIXERS.append((x ^ (x >> np.uint64(31))) | np.uint64(1))
    return _MIXERS[0]


def _distinct_sequences_exactly(classes: Any, counts: Any) -> tuple[Any, list[tuple[int, ...]]]:
    """:func:`_distinct_sequences` by comparing the sequences themselves, records of one length at a time."""
    import numpy as np

    sequence_of = np.zeros(len(counts), dtype=np.int64)
    sequences: list[tuple[int, ...]] = []
    begins = np.cumsum(counts) - counts
    order = np.argsort(counts, kind="stable")
    ordered = counts[order]
    edges = [0, *(np.flatnonzero(ordered[1:] != ordered[:-1]) + 1).tolist(), len(order)]
    for low, high in zip(edges[:-1], edges[1:]):
        records = order[low:high]
        width = int(ordered[low])
        if width == 0:
            sequence_of[records] = len(sequences)
            sequences.append(())
            continue
        matrix = np.ascontiguousarray(classes[begins[records][:, None] + np.arange(width)])
        rows = matrix.view(np.dtype((np.void, matrix.itemsize * width))).ravel()
        _, firsts, inverse = np.unique(rows, return_index=True, return_inverse=True)
        sequence_of[records] = len(sequences) + inverse.reshape(-1)
        sequences.extend(map(tuple, matrix[firsts].tolist()))
    return sequence_of, sequences


def _lookup(keys: Any, known: Any, values: Any, missing: int) -> Any:
    """``values[i]`` where ``keys == known[i]``, ``missing`` where a key is not known (known >= 0)."""
    import numpy as np

    if not len(known):
        return np.full(len(keys), missing, dtype=np.int64)
    top = int(known.max())
    if top <= 4 * len(known) + 65536:
        dense = np.full(top + 2, missing, dtype=np.int64)
        dense[known] = values
        return dense[np.clip(keys, 0, top + 1)] if len(keys) else np.zeros(0, dtype=np.int64)
    order = np.argsort(known, kind="stable")
    ordered = known[order]
    at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    return np.where(ordered[at] == keys, values[order][at], missing)

def _matches_source(source: str, patterns: list[str]) -> bool:
    return any(source == p or os.path.basename(source) == p or source.endswith("/" + p.lstrip("/"))
               for p in patterns)


_UNKNOWN_UID = {"function": "?", "source": "unreachable", "line": 0}


class _Traces:
    """Traces and uids per (frame class sequence, kind).

    A frame class stands for every address with the same frames (and the
    same system-library flag), so its trace pieces are built once.  Frame
    dicts are shared through ``shared`` (by frame), so equal traces hold
    the same dicts.
    """

    def __init__(self, classes: list[tuple[tuple[Frame, ...], bool]], full: bool, no_func: list[str],
                 no_source: list[str], shared: dict[Any, dict]) -> None:
        self.full = full
        #: per class: all its frames, those with line information, those of them outside system
        #: libraries, and whether a filter excludes it
        self.all_of: list[list[dict]] = []
        self.sourced_of: list[list[dict]] = []
        self.lined_of: list[list[dict]] = []
        self.excluded_of: list[bool] = []
        self.shared = shared
        functions = set(no_func)
        for frames, system in classes:
            dicts = [shared.setdefault(f, f.as_dict()) for f in frames]
            sourced = [d for f, d in zip(frames, dicts) if f.source is not None]
            self.all_of.append(dicts)
            self.sourced_of.append(sourced)
            self.lined_of.append([] if system else sourced)
            self.excluded_of.append(any(
                f.function in functions or (bool(no_source) and f.source is not None
                                            and _matches_source(f.source, no_source)) for f in frames))
        self.filtering = bool(functions or no_source)

    def get(self, sequence: tuple[int, ...], kind: int) -> tuple[list, dict, bool]:
        """(trace, uid, excluded) of events with this class sequence and kind."""
        lined = list(chain.from_iterable(map(self.lined_of.__getitem__, sequence)))
        if not lined:
            lined = list(chain.from_iterable(map(self.sourced_of.__getitem__, sequence)))
        frames = list(chain.from_iterable(map(self.all_of.__getitem__, sequence))) if self.full or not lined else []
        with_lines = lined or frames
        # frames without line information only count for the filters when none has it
        kept = {id(d) for d in with_lines}
        excluded = self.filtering and any(self.excluded_of[c] for c in sequence
                                          if any(id(d) in kept for d in self.all_of[c]))
        uid = with_lines[0] if with_lines else _UNKNOWN_UID
        if self.full:
            name = KINDS.get(kind, "?")
            head = self.shared.setdefault(("allocator", name), {"function": name, "source": "unreachable", "line": 0})
            trace = [head, *frames]
        else:
            trace = with_lines
        return trace, uid, excluded


class _Values:
    """Distinct traces or uids of a profile, numbered; equal ones (built from the same dicts) share a number."""

    def __init__(self) -> None:
        self.values: list = []
        self._number: dict[Any, int] = {}

    def number(self, value: Any) -> int:
        key = tuple(map(id, value)) if isinstance(value, list) else id(value)
        found = self._number.get(key)
        if found is None:
            found = self._number[key] = len(self.values)
            self.values.append(value)
        return found

