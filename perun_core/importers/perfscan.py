"""``perf script`` text read in bulk: numpy over the byte positions of line breaks, no Python string per frame.

:func:`scan_perf_script` handles the common text: samples separated by
empty lines, each a header line and frame lines ``ADDRESS SYMBOL (OBJECT)``
indented by spaces or tabs, lines ending in ``\\n``, UTF-8, no whitespace
other than spaces, tabs and line breaks.  Anything else (an odd or broken
line, a sample without frames, CRLF, a period too large) makes it answer
None, and the line-by-line reader of :mod:`perun_core.importers.perf`
reads the file and names any bad line.  Both give the same stacks, frame
numbers and counts.

The steps:

1. the text is cut into lines at its ``\\n`` bytes; the first byte of a
   line tells a header (not indented) from a frame (indented), and every
   sample must be one header followed by frames;
2. the stacks of the samples (their frame lines, as bytes) are numbered
   with a dict, so the frames of each distinct stack are read once;
3. in those, every frame line's symbol (without its ``+0xOFFSET``) and
   object are found as byte ranges by stepping over whole columns of
   lines at once;
4. each (symbol, object) pair gets a 64-bit hash of its bytes, the
   distinct hashes are numbered by ``numpy.unique`` and every pair is
   compared byte for byte with the first pair of its number (a collision
   sends the file to the line-by-line reader);
5. only the distinct pairs become Python strings.
"""

from __future__ import annotations

import re
from typing import Any

from .common import FrameIds
from .foldedscan import _positions
from .tokens import _Buffer, _Keys

__all__ = ["scan_perf_script"]

#: Bytes that Python's ``str.strip`` or regular expressions count as whitespace besides " ", "\t" and "\n".
_ODD_SPACES = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
#: The same in UTF-8 beyond ASCII (U+0085, U+00A0, U+1680, U+2000 to U+202F (any U+20xx), U+205F, U+3000).
_ODD_SPACES_UTF8 = (b"\xc2\x85", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f", b"\xe3\x80\x80")
#: Periods are summed per stack as 64-bit integers; larger ones are left to the line-by-line reader to name.
_LARGEST_PERIOD = float(2**62)

_SPACE, _TAB, _NEWLINE, _OPEN, _CLOSE = 32, 9, 10, 40, 41


def _plain(data: bytes) -> bool:
    """Is ``data`` text whose only whitespace is " ", "\\t" and "\\n" (so byte positions are all it takes)?"""
    if b"\x00" in data[:4096] or any(data.find(mark) >= 0 for mark in _ODD_SPACES):
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any(data.find(mark) >= 0 for mark in _ODD_SPACES_UTF8)


def _body_bounds(data: bytes) -> tuple[int, int]:
    """Start and end of the text after the leading ``#`` comment lines, without line breaks around it."""
    start = 0
    while data.startswith(b"#", start):
        end = data.find(b"\n", start)
        start = len(data) if end < 0 else end + 1
    end = len(data)
    while start < end and data[start] == _NEWLINE:
        start += 1
    while end > start and data[end - 1] == _NEWLINE:
        end -= 1
    return start, end


def _lines(buf: Any, start: int, end: int) -> tuple[Any, Any]:
    """Start and end (its ``\\n`` or ``end``) of every line of ``buf[start:end]``."""
    import numpy as np

    breaks = _positions(buf[start:end], _NEWLINE) + start
    starts = np.concatenate(([start], breaks + 1)).astype(np.int64)
    ends = np.concatenate((breaks, [end])).astype(np.int64)
    return starts, ends


class _Samples:
    """The body cut into samples: each one's header line and the byte range of its frame lines."""

    def __init__(self, data: bytes, buf: Any, start: int, end: int) -> None:
        import numpy as np

        starts, ends = _lines(buf, start, end)
        empty = starts == ends
        first = buf[np.minimum(starts, len(buf) - 1)]
        indented = ~empty & ((first == _SPACE) | (first == _TAB))
        header = ~empty & ~indented
        after_empty = np.concatenate(([True], empty[:-1]))
        self.ok = bool(np.array_equal(header, ~empty & after_empty))  # a header starts every sample, and only that
        heads = np.flatnonzero(header)
        gaps = np.flatnonzero(empty)
        last = np.concatenate((gaps, [len(starts)]))[np.searchsorted(gaps, heads)] - 1  # each sample's last line
        self.frames = last - heads
        self.ok = self.ok and bool(len(heads)) and bool((self.frames > 0).all())
        head_starts, head_ends = starts[heads].tolist(), ends[heads].tolist()
        self.heads = [data[s:e] for s, e in zip(head_starts, head_ends)]
        self.stack_starts = (ends[heads] + 1).tolist()
        self.stack_ends = ends[np.maximum(last, 0)].tolist()


def scan_perf_script(data: bytes, header: re.Pattern[bytes]) -> tuple | None:
    """What ``parse_perf_script_text`` answers for ``data``, or None when the line-by-line reader must read it.

    ``header`` is the pattern of a sample's header line (period and event groups).
    """
    import numpy as np

    if not _plain(data):
        return None
    start, end = _body_bounds(data)
    if start == end:
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    samples = _Samples(data, buf, start, end)
    if not samples.ok:
        return None
    found = header.findall(b"\n".join(samples.heads))
    if len(found) != len(samples.heads):
        return None
    events_raw = [e for _, e in found]
    distinct_events = sorted(set(events_raw))
    several = len(distinct_events) > 1
    texts = [data[s:e] for s, e in zip(samples.stack_starts, samples.stack_ends)]
    keys: list[Any] = list(zip(events_raw, texts)) if several else texts
    # each distinct stack text numbered in the order it first occurs (dict and map run in C)
    number = dict(zip(dict.fromkeys(keys), range(len(keys))))
    which = list(map(number.__getitem__, keys))
    del texts, number
    # the first sample of each distinct stack text (texts are numbered in the order they first occur)
    firsts = np.unique(np.asarray(which, dtype=np.int64), return_index=True)[1]
    ids = FrameIds()
    stacks = _stacks(data, samples, firsts, ids)
    if stacks is None:
        return None
    if several:  # stacks of two events stay apart: the event is the root frame
        events_of = [keys[i][0] for i in firsts.tolist()]
        stacks = [frames + (ids[(f"[{event.decode('utf-8', 'replace')}]", "")],)
                  for frames, event in zip(stacks, events_of)]
    periods = None
    period_texts = [p for p, _ in found]
    if b"" not in period_texts:
        period_values = np.array(period_texts, dtype=np.float64)
        if not (period_values <= _LARGEST_PERIOD).all():
            return None
        periods = period_values
    return ids, stacks, which, periods, distinct_events, samples.heads


def _stacks(data: bytes, samples: _Samples, firsts: Any, ids: FrameIds) -> list[tuple[int, ...]] | None:
    """The frame ids of the stack of each sample in ``firsts``; None when a frame line is not the common kind."""
    import numpy as np

    picked = firsts.tolist()
    text = b"\n".join([data[samples.stack_starts[i]:samples.stack_ends[i]] for i in picked]) + b"\n"
    counts = samples.frames[firsts]
    buf = np.frombuffer(text, dtype=np.uint8)
    starts, ends = _lines(buf, 0, len(text) - 1)
    if len(starts) != int(counts.sum()):
        return None
    frames = _frame_ranges(buf, starts, ends)
    if frames is None:
        return None
    codes, pairs = _number_pairs(text, *frames)
    if codes is None:
        return None
    frame_of = np.array([ids[(text[a:b].decode("utf-8") or "[unknown]", text[c:d].decode("utf-8"))]
                         for a, b, c, d in pairs], dtype=np.int64)
    flat = frame_of[codes].tolist()
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    return [tuple(flat[bounds[i]:bounds[i + 1]]) for i in range(len(picked))]


def _table(chars: bytes) -> Any:
    import numpy as np

    table = np.zeros(256, dtype=bool)
    table[np.frombuffer(chars, dtype=np.uint8)] = True
    return table


def _step(buf: Any, at: Any, table: Any, forward: bool) -> Any:
    """``at`` moved over the bytes in ``table``, every line at once (forward: to the first byte not in it;
    backward: to just after the last byte not in it, looking from ``at - 1``)."""
    import numpy as np

    at = at.copy()
    active = np.arange(len(at), dtype=np.int64)
    delta = 1 if forward else -1
    look = 0 if forward else -1
    while len(active):
        active = active[table[buf[at[active] + look]]]
        at[active] += delta
    return at


def _frame_ranges(buf: Any, starts: Any, ends: Any) -> tuple[Any, Any, Any, Any] | None:
    """Symbol (without its offset) and object of every frame line, as byte ranges; None unless each line is
    ``[ \\t]*HEX[ \\t]+SYMBOL (OBJECT)[ \\t]*``, read as the line-by-line reader reads it (the symbol ends at
    the last " (")."""
    import numpy as np

    blank = _table(b" \t")
    hexdigit = _table(b"0123456789abcdefABCDEF")
    address = _step(buf, starts, blank, True)
    gap = _step(buf, address, hexdigit, True)
    symbol = _step(buf, gap, blank, True)
    close = _step(buf, ends, blank, False) - 1
    if not ((gap > address).all() and (symbol > gap).all() and (buf[close] == _CLOSE).all()):
        return None
    opens = _positions(buf, _OPEN)
    last_open = np.searchsorted(opens, close) - 1
    if (last_open < 0).any():
        return None
    opening = opens[last_open]
    if not ((opening >= symbol + 2).all() and (buf[opening - 1] == _SPACE).all()):
        return None
    symbol_end = _step(buf, opening - 1, blank, False)
    digits = _step(buf, symbol_end, hexdigit, False)
    plus = digits - 3
    offset = (digits < symbol_end) & (plus >= symbol)
    offset &= (buf[np.maximum(plus, 0)] == ord("+")) & (buf[np.maximum(plus + 1, 0)] == ord("0"))
    offset &= buf[np.maximum(plus + 2, 0)] == ord("x")
    symbol_end = np.where(offset, plus, symbol_end)
    return symbol, symbol_end, opening + 1, close


_MULTIPLIER = 0x9E3779B97F4A7C15


def _number_pairs(text: bytes, symbol: Any, symbol_end: Any, obj: Any, obj_end: Any) -> tuple[Any, list]:
    """Each line's number of its (symbol, object) pair, numbered by first occurrence, and each pair's byte
    ranges; (None, []) if two different pairs share a hash."""
    import numpy as np

    buffer = _Buffer(text)
    symbols = _Keys(buffer, symbol, symbol_end)
    objects = _Keys(buffer, obj, obj_end)
    hashes = symbols.hashes() * np.uint64(_MULTIPLIER) ^ objects.hashes()
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    leader = first[inverse]
    for keys in (symbols, objects):
        if not keys.equal(keys.lengths[leader], keys.first[leader], keys.last[leader],
                          lambda check, j, keep, keys=keys: keys.buffer.word(keys.starts[leader[check]] + 8 * j,
                                                                            keep)).all():
            return None, []
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(first), dtype=np.int64)
    lines = first[order]
    pairs = list(zip(symbol[lines].tolist(), symbol_end[lines].tolist(), obj[lines].tolist(), obj_end[lines].tolist()))
    return rank[inverse], pairs
