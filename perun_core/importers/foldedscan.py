"""Folded stacks read in bulk: numpy over the byte positions of separators, no Python string per frame.

:func:`scan_folded` handles the common file: ``frame;frame;... COUNT``
lines ending in ``\\n``, whole-number counts, no blank lines and no line
breaks other than ``\\n``, no ``#`` comments.  Anything else (fractional values, CRLF, an odd
or broken line) makes it answer None, and the line-by-line reader of
:mod:`perun_core.importers.stacks` reads the file and names any bad line.
Both give the same stacks, frame numbers and values.

The file is read in chunks of whole lines (a megabyte or two each), the
last chunk first: each chunk's separators, frames and frame numbers at
once, so that the only array with an entry per frame is the answer's
(int32 frame numbers); a million lines make eleven million frames, and
arrays of them cost as much in fresh memory pages as in computing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .tokens import TokenNumbers

__all__ = ["FoldedScan", "scan_folded", "scan_folded_files"]

#: Line breaks str.splitlines knows besides "\n" (as UTF-8): files with them take the slow path.
_OTHER_BREAKS_ASCII = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")
#: ... and the other characters beyond ASCII str.strip and str.split take for spaces (line breaks among them).
_OTHER_BREAKS_UTF8 = ("\x85", "\xa0", "\u1680", *map(chr, range(0x2000, 0x200B)), "\u2028", "\u2029", "\u202f",
                      "\u205f", "\u3000")
#: The ASCII spaces the line reader strips from a line's ends and from around its value, other than line breaks.
_SPACES = (9, 31, 32)
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


#: Bytes of lines read at once (whole lines: a chunk ends at the first line break from here on).  A chunk's
#: per-frame arrays (a few dozen bytes a frame) stay in the cache and are reused, not mapped anew.
_CHUNK_BYTES = 1 << 21


def scan_folded(data: bytes, chunk_bytes: int | None = None) -> FoldedScan | None:
    """The stacks of ``data`` (a folded file, or several joined), or None when the slow path must read it.

    The lines are read in chunks of about ``chunk_bytes``, the last chunk
    first: each chunk's separators, frames and frame numbers at once, its
    frames reversed, so the chunks' frame numbers one after another are the
    answer's ``flat`` and no other array of one entry per frame is made.
    Frame names are numbered as they first occur in that order.
    """
    if not data.endswith(b"\n"):
        return None
    bounds = _chunk_bounds(data, chunk_bytes or _CHUNK_BYTES)
    return _scan((data[lo:hi] for lo, hi in reversed(bounds)), len(data))


def scan_folded_files(paths: list[Path], chunk_bytes: int | None = None) -> FoldedScan | None:
    """The stacks of the folded files ``paths`` one after another (each as if it ended with a line break), as
    :func:`scan_folded` reads them joined; None when the slow path must read them.

    The files are read piece by piece from their ends into chunks of whole
    lines, never whole: a million lines are over a hundred megabytes, whose
    fresh pages would cost more than reading them.  A file that cannot be
    read, shrinks while it is read or is no regular file (a pipe) is left to
    the slow path too, which reads it whole (and names the problem).
    """
    try:
        with ExitStack() as stack:
            files = [stack.enter_context(path.open("rb")) for path in paths]
            status = [os.fstat(file.fileno()) for file in files]
            if not all(stat.S_ISREG(item.st_mode) for item in status):
                return None
            sizes = [item.st_size for item in status]
            chunks = _chunks_from_the_end(files, sizes, chunk_bytes or _CHUNK_BYTES)
            return _scan(chunks, sum(sizes) + len(sizes))
    except OSError:
        return None


def _chunks_from_the_end(files: list[BinaryIO], sizes: list[int], size: int) -> Iterator[bytes]:
    """Chunks of whole lines of the files, each of about ``size`` bytes, the last file's last chunk first.

    A chunk runs from the first line that starts at or after a multiple of
    ``size`` back from the file's end to where the chunk after it starts
    (that line finished).  The start is found first, by a small read, so
    each chunk is read once, straight into the bytes it is (no line carried
    over from one piece into the next: two copies of the whole file).
    """
    for file, total in zip(reversed(files), reversed(sizes)):
        if not total:  # the empty line a join would make of it: the slow path skips it
            yield b"\n"
        end = total  # where the chunk after the next one starts
        position = total
        while position > 0:
            position = max(0, position - size)
            start = _line_start(file, position, end)
            if start == end:  # one line from before this piece to the next chunk's start
                continue
            file.seek(start)
            chunk = file.read(end - start)
            if len(chunk) != end - start:
                raise OSError("the file got shorter while it was read")
            if end == total and not chunk.endswith(b"\n"):
                chunk += b"\n"
            end = start
            yield chunk


#: Bytes read at once while looking for the line break that ends a chunk's first (partial) line.
_PEEK = 1 << 16


def _line_start(file: BinaryIO, position: int, end: int) -> int:
    """Where the first line that starts at ``position`` or after begins (``end`` at most): ``position`` itself
    at the file's start, else just after the first line break at or after it."""
    if not position:
        return 0
    while position < end:
        file.seek(position)
        piece = file.read(min(_PEEK, end - position))
        if not piece:
            raise OSError("the file got shorter while it was read")
        found = piece.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(piece)
    return end


def _scan(chunks: Iterable[bytes], size: int) -> FoldedScan | None:
    """The stacks of ``chunks`` of whole lines (the last lines first) of ``size`` bytes in all, or None."""
    reader = _ChunkReader(size)
    for chunk in chunks:
        if not reader.read(chunk):
            return None
    return reader.result() if reader.frames else None


def _chunk_bounds(data: bytes, size: int) -> list[tuple[int, int]]:
    """Byte ranges of whole lines, each ending at the first line break at least ``size`` bytes on."""
    bounds = []
    lo = 0
    while lo < len(data):
        hi = data.find(b"\n", min(lo + size, len(data)) - 1) + 1
        bounds.append((lo, hi))
        lo = hi
    return bounds


class _ChunkReader:
    """The stacks of chunks of lines read one after another, the file's last chunk first.

    Kept per chunk (reversed: its last line first, each line's last frame
    first): the frame numbers (int32, written into one array), and per line
    its frames, value and a hash of its frame numbers.
    """

    def __init__(self, size: int) -> None:
        import numpy as np

        self.numbers = TokenNumbers()
        self.code_type = np.int32 if size < 1 << 31 else np.int64  # a token number is below the bytes
        self.final = np.zeros(0, dtype=self.code_type)  # a token's number -> its place in order of first occurrence
        # every frame takes two bytes at least (a name and a separator): room for all of them, of which only the
        # pages written are ever mapped; cut to the frames read at the end, without a copy
        self.flat = np.empty(size // 2 + 1, dtype=self.code_type)
        self.frames = 0
        self.parts: dict[str, list[Any]] = {key: [] for key in ("lengths", "values", "hashes")}

    def read(self, chunk: bytes) -> bool:
        """Read the lines ``chunk``; False when the slow path must read the file."""
        import numpy as np

        if not chunk.isascii():
            try:
                text = chunk.decode("utf-8")  # a chunk is whole lines: no character is cut in two
            except UnicodeDecodeError:
                return False
            if any(mark in text for mark in _OTHER_BREAKS_UTF8):
                return False
            del text
        buf = np.frombuffer(chunk, dtype=np.uint8)
        found = _frames(buf)
        if found is None:
            return False
        line_starts, value_starts, line_ends, lengths, starts, ends = found
        del found
        if (buf[line_starts] == 35).any():  # a '#' comment: the line-by-line reader skips it
            return False
        # control characters other than the line breaks (tabs, and the other line breaks the line reader knows)
        # are rare: the chunk is searched for those breaks only when it has any
        if np.count_nonzero(buf < 32) != len(line_starts) and \
                any(chunk.find(mark) >= 0 for mark in _OTHER_BREAKS_ASCII):
            return False
        values = _whole_numbers(buf, value_starts, line_ends)
        if values is None:
            return False
        numbers, firsts = self.numbers.number(chunk, starts[::-1].copy(), ends[::-1].copy())
        if len(firsts):  # new names, ordered by where they first occur
            before = len(self.final)
            self.final = np.concatenate((self.final, np.empty(len(firsts), dtype=self.code_type)))
            self.final[before + np.argsort(firsts, kind="stable")] = np.arange(before, before + len(firsts))
        codes = np.take(self.final, numbers, out=self.flat[self.frames:self.frames + len(numbers)], mode="clip")
        self.frames += len(numbers)
        lengths = lengths[::-1]
        parts = self.parts
        parts["lengths"].append(lengths)
        parts["values"].append(values[::-1])
        parts["hashes"].append(_line_hashes(codes, lengths))
        return True

    def result(self) -> FoldedScan:
        """The stacks read, lines of one stack added up."""
        import numpy as np

        joined = {key: np.concatenate(parts) for key, parts in self.parts.items()}
        self.parts.clear()
        flat, self.flat = self.flat, None
        flat.resize(self.frames, refcheck=False)
        lengths, values = joined["lengths"], joined["values"]
        tokens = self.numbers.tokens()
        order = np.empty(len(self.final), dtype=np.int64)
        order[self.final] = np.arange(len(self.final))
        lines = len(lengths)
        leaders, values = _add_up_repeated(flat, lengths, joined["hashes"], values)
        if leaders is not None:  # only the last line of a stack stays: renumber the frames in their new order
            keep = np.zeros(len(lengths), dtype=bool)
            keep[leaders] = True
            flat = flat[np.repeat(keep, lengths)]
            lengths = lengths[leaders]
            first = np.full(len(order), len(flat), dtype=np.int64)
            np.minimum.at(first, flat, np.arange(len(flat), dtype=np.int64))
            renumber = np.argsort(first, kind="stable")
            order = order[renumber]
            placed = np.empty(len(renumber), dtype=flat.dtype)
            placed[renumber] = np.arange(len(renumber))
            flat = placed[flat]
        names = [tokens[i].decode("utf-8") for i in order.tolist()]
        return FoldedScan(names, flat, lengths, values, lines)


def _frames(buf: Any) -> tuple[Any, Any, Any, Any, Any, Any] | None:
    """Start of each line, start of its value, its end, its number of frames, and the start and end of every
    frame; None when a line has no space before its value or an empty stack.

    One pass finds every line break, space and ';' (in that order of the
    text).  The last of them before a line break must be the space before
    the value (a ';' there would be inside the value); the frames end at
    each ';' and at that space, and start after each ';' and line break.
    Spaces inside frame names are neither.
    """
    import numpy as np

    found = _positions_of_any(buf, (10, 32, 59))
    kind = buf[found]
    breaks = np.flatnonzero(kind == 10)
    if not len(breaks) or breaks[0] == 0:
        return None
    before = breaks - 1  # the last space or ';' of each line: the space before its value
    if (kind[before] != 32).any():
        return None
    line_ends = found[breaks]
    line_starts = np.concatenate(([0], line_ends[:-1] + 1)).astype(np.int64)
    separators = found[before]
    if (separators <= line_starts).any():  # an empty stack
        return None
    # the line reader strips spaces from a line's start and from the end of its stack (a run of spaces or a
    # tab before the value): names are read the same only without them
    if np.isin(buf[line_starts], _SPACES).any() or np.isin(buf[separators - 1], _SPACES).any():
        return None
    semis = kind == 59
    first = np.concatenate(([0], breaks[:-1] + 1))  # each line's first mark
    lengths = np.add.reduceat(semis, first, dtype=np.int64) + 1  # one frame more than ";" on each line
    semis[before] = True
    ends = found[semis]
    del semis, found
    # a frame starts after the end of the one before it, or at its line's start (a million lines make ten
    # million frames, 90 MB an array of them: written in place, without a temporary of that size)
    starts = np.empty(len(ends), dtype=np.int64)
    starts[0] = 0
    np.add(ends[:-1], 1, out=starts[1:])
    starts[np.cumsum(lengths[:-1])] = line_starts[1:]
    return line_starts, separators + 1, line_ends, lengths, starts, ends


def _positions_of_any(buf: Any, marks: tuple[int, ...]) -> Any:
    """Where any byte of ``marks`` occurs in ``buf`` (int64, ascending), found chunk by chunk."""
    import numpy as np

    parts = []
    hit = np.empty(min(len(buf), _CHUNK), dtype=bool)
    other = np.empty_like(hit)
    for lo in range(0, len(buf), _CHUNK):
        chunk = buf[lo:lo + _CHUNK]
        size = len(chunk)
        np.equal(chunk, marks[0], out=hit[:size])
        for mark in marks[1:]:
            hit[:size] |= np.equal(chunk, mark, out=other[:size])
        parts.append(np.flatnonzero(hit[:size]) + lo)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


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


def _line_hashes(codes: Any, lengths: Any) -> Any:
    """A 64-bit hash of each line's frame numbers (``codes``, ``lengths[i]`` of them per line): equal stacks always
    get equal hashes."""
    import numpy as np

    firsts = np.cumsum(lengths) - lengths  # where each line's frames start in ``codes``
    # each frame mixed with the one before it on its line (a line's first frame with a fixed number): the sum
    # over a line depends on the order of its frames
    before = np.empty(len(codes), dtype=np.uint64)
    before[1:] = codes[:-1]
    before[firsts] = np.uint64(0x2545F4914F6CDD1D)
    before *= np.uint64(0x9E3779B97F4A7C15)
    mixed = codes.astype(np.uint64)
    mixed += np.uint64(0xBF58476D1CE4E5B9)
    mixed ^= before
    mixed *= np.uint64(0x94D049BB133111EB)
    mixed ^= mixed >> np.uint64(29)
    hashes = np.add.reduceat(mixed, firsts)
    hashes ^= lengths.astype(np.uint64) * np.uint64(0x94D049BB133111EB)
    return hashes


def _add_up_repeated(flat: Any, lengths: Any, hashes: Any, values: Any) -> tuple[Any | None, Any]:
    """Lines of one stack added up: of each distinct stack the line that comes first in the file (the last one
    here: the lines are in reverse order; None: all distinct), and the sums.

    The hashes find the lines that may repeat another; only those are
    compared by their frame numbers (equal numbers, equal names: the same
    text, as the bulk reader reads only lines without spaces around their
    frames).
    """
    import numpy as np

    count = len(hashes)
    ordered = np.sort(hashes)
    again = ordered[1:] == ordered[:-1]
    if not again.any():  # the common file: every line a stack of its own
        return None, values
    shared = np.flatnonzero(np.isin(hashes, ordered[1:][again]))[::-1]  # in the file's order
    ends = np.cumsum(lengths)
    group = np.arange(count, dtype=np.int64)
    seen: dict[bytes, int] = {}
    for line, end, length in zip(shared.tolist(), ends[shared].tolist(), lengths[shared].tolist()):
        group[line] = seen.setdefault(flat[end - length:end].tobytes(), line)
    leaders = np.flatnonzero(group == np.arange(count, dtype=np.int64))
    slot = np.empty(count, dtype=np.int64)
    slot[leaders] = np.arange(len(leaders), dtype=np.int64)
    sums = np.zeros(len(leaders), dtype=np.int64)
    np.add.at(sums, slot[group], values)
    return leaders, sums
