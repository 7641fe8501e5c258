"""Folded stacks read in bulk: numpy over the byte positions of separators, no Python string per frame.

:func:`scan_folded` handles the common file: ``frame;frame;... COUNT``
lines ending in ``\\n``, whole-number counts, no blank lines and no line
breaks other than ``\\n``, no ``#`` comments.  Anything else (fractional values, CRLF, an odd
or broken line) makes it answer None, and the line-by-line reader of
:mod:`perun_core.importers.stacks` reads the file and names any bad line.
Both give the same stacks, frame numbers and values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .tokens import intern_tokens

__all__ = ["FoldedScan", "scan_folded"]

#: Line breaks str.splitlines knows besides "\n" (as UTF-8): files with them take the slow path.
_OTHER_BREAKS_ASCII = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")
_OTHER_BREAKS_UTF8 = ("\x85", "\u2028", "\u2029")
#: Longer counts might not fit in int64.
_MAX_DIGITS = 18


@dataclass
class FoldedScan:
    """Distinct stacks of a folded file, each innermost frame first, the last line's stack first.

    ``names`` are the frame names by number (in order of first occurrence in
    ``flat``), ``flat`` the frame numbers of all stacks one after another,
    ``lengths`` the frames per stack, ``values`` what each stack consumed
    (lines of one stack added up), ``lines`` the lines read.
    """

    names: list[str]
    flat: Any
    lengths: Any
    values: Any
    lines: int


def scan_folded(data: bytes) -> FoldedScan | None:
    """The stacks of ``data`` (a folded file, or several joined), or None when the slow path must read it."""
    import numpy as np

    if not data.endswith(b"\n") or any(data.find(mark) >= 0 for mark in _OTHER_BREAKS_ASCII):
        return None
    if not data.isascii():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if any(mark in text for mark in _OTHER_BREAKS_UTF8):
            return None
        del text
    buf = np.frombuffer(data, dtype=np.uint8)
    lines = _line_parts(buf)
    if lines is None:
        return None
    line_starts, value_starts, line_ends, semis, semis_before = lines
    if (buf[line_starts] == 35).any():  # a '#' comment: the line-by-line reader skips it
        return None
    values = _whole_numbers(buf, value_starts, line_ends)
    if values is None:
        return None
    # semis_before[i]: the ';' before line i's value, so also before the start of line i + 1
    semis_before_start = np.concatenate(([0], semis_before[:-1]))
    lengths = semis_before - semis_before_start + 1
    starts, ends = _frame_bounds(line_starts, value_starts - 1, semis)
    del semis, semis_before, semis_before_start  # a hundred megabytes each: freed before the next big arrays
    tokens, codes = intern_tokens(data, starts, ends)
    del starts, ends
    leaders, values = _add_up_repeated(data, codes, lengths, line_starts, value_starts, values)
    if leaders is not None:
        keep = np.zeros(len(lengths), dtype=bool)
        keep[leaders] = True
        codes = codes[np.repeat(keep, lengths)]
        lengths = lengths[leaders]
    # the whole reversed: the last stack first, each innermost frame first; frames renumbered in that order
    flat = codes[::-1]
    first = np.full(len(tokens), len(flat), dtype=np.int64)
    np.minimum.at(first, flat, np.arange(len(flat), dtype=np.int64))
    order = np.argsort(first, kind="stable")
    renumber = np.empty(len(tokens), dtype=np.int64)
    renumber[order] = np.arange(len(tokens), dtype=np.int64)
    names = [tokens[i].decode("utf-8") for i in order.tolist()]
    return FoldedScan(names, renumber[flat], lengths[::-1].copy(), values[::-1].copy(), len(line_starts))


def _line_parts(buf: Any) -> tuple[Any, Any, Any, Any, Any] | None:
    """Start of each line, start of its value (after the last space), its end, every ';' position, and
    per line the number of ';' before its value."""
    import numpy as np

    line_ends = _positions(buf, 10)
    line_starts = np.concatenate(([0], line_ends[:-1] + 1)).astype(np.int64)
    spaces = _positions(buf, 32)
    last = np.searchsorted(spaces, line_ends) - 1
    if not len(line_ends) or (last < 0).any():
        return None
    separators = spaces[last]
    if (separators <= line_starts).any():  # no space on the line, or an empty stack
        return None
    semis = _positions(buf, 59)
    semis_before = np.searchsorted(semis, separators)
    if (semis_before[:-1] != np.searchsorted(semis, line_starts[1:])).any() or \
            (len(semis) and semis[-1] > separators[-1]):
        return None  # a ';' after the value's space
    return line_starts, separators + 1, line_ends, semis, semis_before


#: Bytes compared at once: the temporary mask stays small enough to be reused, not mapped anew.
_CHUNK = 1 << 24


def _positions(buf: Any, byte: int) -> Any:
    """Where ``byte`` occurs in ``buf`` (int64, ascending), found chunk by chunk."""
    import numpy as np

    parts = [np.flatnonzero(buf[lo:lo + _CHUNK] == byte) + lo for lo in range(0, len(buf), _CHUNK)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _whole_numbers(buf: Any, starts: Any, ends: Any) -> Any | None:
    """The decimal digits ``buf[starts[i]:ends[i]]`` as int64 numbers; None unless all are plain digits."""
    import numpy as np

    digits = ends - starts
    if not len(digits) or digits.min() < 1 or digits.max() > _MAX_DIGITS:
        return None
    values = np.zeros(len(starts), dtype=np.int64)
    for j in range(int(digits.max())):
        having = np.flatnonzero(digits > j)
        digit = buf[starts[having] + j].astype(np.int64) - 48
        if ((digit < 0) | (digit > 9)).any():
            return None
        values[having] = values[having] * 10 + digit
    return values


def _frame_bounds(line_starts: Any, stack_ends: Any, semis: Any) -> tuple[Any, Any]:
    """Start and end of every frame: the stacks (``line_starts`` .. ``stack_ends``) split at their ';'."""
    import numpy as np

    # each concatenation is two ascending runs: the stable sort (timsort) only merges them, faster than np.insert
    starts = np.sort(np.concatenate((line_starts, semis + 1)), kind="stable")
    ends = np.sort(np.concatenate((semis, stack_ends)), kind="stable")
    return starts, ends


def _add_up_repeated(data: bytes, codes: Any, lengths: Any, line_starts: Any, stack_ends: Any,
                     values: Any) -> tuple[Any | None, Any]:
    """Lines of one stack added up: the first line of each distinct stack (None: all distinct) and the sums.

    A hash of each line's frame numbers finds the lines that may repeat
    another; only those are compared by their text.
    """
    import numpy as np

    count = len(lengths)
    position = np.arange(len(codes), dtype=np.uint64) - np.repeat(np.cumsum(lengths) - lengths, lengths).astype(np.uint64)
    mixed = (position + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    mixed ^= mixed >> np.uint64(31)
    mixed *= codes.astype(np.uint64) + np.uint64(0xBF58476D1CE4E5B9)
    hashes = np.add.reduceat(mixed ^ (mixed >> np.uint64(29)), np.cumsum(lengths) - lengths)
    hashes ^= lengths.astype(np.uint64) * np.uint64(0x94D049BB133111EB)
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    shared = np.flatnonzero(counts[inverse] > 1)
    if not len(shared):
        return None, values
    group = np.arange(count, dtype=np.int64)
    seen: dict[bytes, int] = {}
    for line, start, end in zip(shared.tolist(), line_starts[shared].tolist(), stack_ends[shared].tolist()):
        group[line] = seen.setdefault(data[start:end - 1], line)
    leaders = np.flatnonzero(group == np.arange(count, dtype=np.int64))
    slot = np.empty(count, dtype=np.int64)
    slot[leaders] = np.arange(len(leaders), dtype=np.int64)
    sums = np.zeros(len(leaders), dtype=np.int64)
    np.add.at(sums, slot[group], values)
    return leaders, sums
