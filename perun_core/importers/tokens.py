"""Numbering millions of substrings of one byte buffer without a Python object per substring.

The importers of stack files meet the same few thousand frame names
millions of times.  Splitting the text into strings and looking each up in
a dict costs a second per ten million frames; :class:`TokenNumbers` does
the same with numpy over the token boundaries instead:

1. each token gets a 64-bit hash of its bytes, read eight at a time
   through an unaligned ``uint64`` view of the buffer;
2. a bucket table keeps, per hash bucket, the first token that falls in
   it (and never replaces it); every token is compared byte for byte (its
   length, first and last eight bytes, and the eight-byte words between
   for longer ones) with the token its bucket kept.  Tokens go through in
   chunks (the tables last from one call to the next: a caller can feed
   them chunk by chunk too), so the temporary arrays stay small and are
   reused;
3. tokens unlike the one kept (two names in one bucket) go round again
   with other bits of the hash; the few left after that are looked up in
   a dict.

So equal tokens always get one number and different tokens never share one:
hashes only choose whom to compare with.  A new number goes to the first
token of its text, so a caller can order the numbers by first occurrence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["TokenNumbers"]

_MULTIPLIER = 0x9E3779B97F4A7C15
_MIX = 0xBF58476D1CE4E5B9
#: Per round, the bucket table's size (2**bits entries) and the hash bits it takes (from the shift up); then a dict.
#: The first table is small: a few thousand names (the common case) fit it and it stays in the cache, where a
#: large one would be touched all over (fresh pages to fault in).  Names that meet another name in their
#: bucket go round again in larger tables.
_ROUNDS = ((16, 42), (20, 21), (22, 0))


class _Buffer:
    """The buffer read as little-endian ``uint64`` words at any byte offset (an unaligned view, no copy)."""

    def __init__(self, data: bytes) -> None:
        import numpy as np

        if len(data) < 8:
            data += bytes(8)
        self.data = data
        self.limit = len(data) - 8  # the last offset a whole word can be read at
        self.words = np.ndarray(shape=(self.limit + 1,), dtype="<u8", buffer=data, strides=(1,))
        self.masks = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)

    def word(self, offsets: Any, keep: Any) -> Any:
        """The eight bytes at each offset, only the first ``keep`` (0 to 8) of them, the rest zeros.

        Near the end a word is read from further back and shifted down
        (``keep`` never reaches past the end).
        """
        import numpy as np

        safe = np.minimum(offsets, self.limit)
        back = (np.minimum(offsets - safe, 7) << 3).astype(np.uint64)
        return (self.words[safe] >> back) & self.masks[keep]

    def first_words(self, offsets: Any, lengths: Any) -> Any:
        """:meth:`word` of each offset keeping ``min(lengths, 8)`` bytes; one read per offset when none is near
        the end, and a mask only for the tokens under eight bytes."""
        import numpy as np

        if not len(offsets) or int(offsets.max()) > self.limit:
            return self.word(offsets, np.minimum(lengths, 8))
        words = self.words[offsets]
        short = np.flatnonzero(lengths < 8)
        if len(short):
            words[short] &= self.masks[lengths[short]]
        return words


class _Keys:
    """What identifies each token: its length, first eight bytes and last eight bytes (exact up to 16 bytes)."""

    def __init__(self, buffer: _Buffer, starts: Any, ends: Any) -> None:
        import numpy as np

        self.buffer = buffer
        self.data = buffer.data
        self.starts = starts
        self.lengths = lengths = ends - starts
        self.first = buffer.first_words(starts, lengths)
        self.longest = int(lengths.max()) if len(lengths) else 0
        # tokens of more than eight bytes: their last eight bytes overlap or follow the first eight
        if len(lengths) and int(lengths.min()) > 8:  # all of them, as most names are: read at once
            self.last = buffer.words[ends - 8]
        else:
            long = np.flatnonzero(lengths > 8)
            self.last = np.zeros(len(starts), dtype=np.uint64)
            self.last[long] = buffer.words[ends[long] - 8]

    def hashes(self) -> Any:
        import numpy as np

        hashes = (self.lengths.astype(np.uint64) * np.uint64(_MULTIPLIER)) ^ self.first
        hashes *= np.uint64(_MIX)
        hashes ^= self.last
        hashes *= np.uint64(_MULTIPLIER)
        index = np.flatnonzero(self.lengths > 16) if self.longest > 16 else None
        for j in range(1, (self.longest - 1) // 8):  # words between the first and the last eight bytes
            index = index[self.lengths[index] > 8 * j + 8]
            words = self.buffer.word(self.starts[index] + 8 * j, np.minimum(self.lengths[index] - 8 * j, 8))
            hashes[index] = (hashes[index] ^ words) * np.uint64(_MIX)
        return hashes ^ (hashes >> np.uint64(29))

    def equal(self, lengths: Any, first: Any, last: Any, words_of: Callable[[Any, int, Any], Any]) -> Any:
        """Is each token equal to the other token given by its ``lengths``, ``first`` and ``last``, and its words
        (``words_of(indices, j, keep)``: the ``j``-th eight bytes, ``keep`` of them, of the others of the tokens at
        those indices, asked only for tokens longer than 16 bytes)?"""
        import numpy as np

        same = self.lengths == lengths
        same &= self.first == first
        same &= self.last == last
        if self.longest <= 16:  # the lengths, first and last eight bytes are all the bytes
            return same
        check = np.flatnonzero(same & (self.lengths > 16))
        for j in range(1, (self.longest - 1) // 8):
            check = check[self.lengths[check] > 8 * j + 8]
            if not len(check):
                break
            keep = np.minimum(self.lengths[check] - 8 * j, 8)
            same[check] &= self.buffer.word(self.starts[check] + 8 * j, keep) == words_of(check, j, keep)
        return same


class _Archive:
    """Copies of the kept tokens of more than 16 bytes (the tables compare later tokens with their middle words,
    and the text the tokens were read from is gone by then), one after another in a growing array."""

    def __init__(self) -> None:
        import numpy as np

        self.bytes = np.zeros(1 << 12, dtype=np.uint8)
        self.used = 0
        self.buffer = _Buffer(self.bytes)

    def add(self, data: bytes, starts: Any, lengths: Any) -> Any:
        """Where the tokens ``data[starts[i]:starts[i] + lengths[i]]`` of more than 16 bytes are kept (0 for the
        others)."""
        import numpy as np

        offsets = np.zeros(len(starts), dtype=np.int64)
        for i in np.flatnonzero(lengths > 16).tolist():
            start, length = int(starts[i]), int(lengths[i])
            if self.used + length + 8 > len(self.bytes):  # room to read a word at any offset in use
                grown = np.zeros(2 * (self.used + length + 8), dtype=np.uint8)
                grown[:self.used] = self.bytes[:self.used]
                self.bytes, self.buffer = grown, _Buffer(grown)
            self.bytes[self.used:self.used + length] = np.frombuffer(data, dtype=np.uint8, count=length, offset=start)
            offsets[i] = self.used
            self.used += length
        return offsets


class _Table:
    """Per hash bucket, the number of the token kept for it (-1: none yet) and that token's keys."""

    def __init__(self, bits: int) -> None:
        import numpy as np

        size = 1 << bits
        self.number = np.full(size, -1, dtype=np.int64)
        self.lengths = np.zeros(size, dtype=np.int64)
        self.first = np.zeros(size, dtype=np.uint64)
        self.last = np.zeros(size, dtype=np.uint64)
        self.starts = np.zeros(size, dtype=np.int64)

    def match(self, keys: _Keys, hashes: Any, shift: int, numbering: _Numbering, tokens: Any,
              archive: _Archive) -> tuple[Any, Any]:
        """Keep a token in each empty bucket, numbered anew by ``numbering`` (``tokens`` are the tokens' indices);
        the number of the token kept in each one's bucket, and whether it is equal.  A kept token is never
        replaced, so equal tokens always meet the same one, and a bucket still empty holds no token seen
        before: the token kept there is new."""
        import numpy as np

        bucket = ((hashes >> np.uint64(shift)) & np.uint64(len(self.number) - 1)).astype(np.intp)
        kept = self.number[bucket]
        fresh = np.flatnonzero(kept < 0)
        if len(fresh):
            # of several tokens for one empty bucket the first stays, with its keys: a number goes to the first
            # token of its text (callers order new numbers by where their text first occurs)
            slots, index = np.unique(bucket[fresh], return_index=True)
            winner = fresh[index]
            self.lengths[slots] = keys.lengths[winner]
            self.first[slots] = keys.first[winner]
            self.last[slots] = keys.last[winner]
            self.starts[slots] = archive.add(keys.data, keys.starts[winner], keys.lengths[winner])
            self.number[slots] = numbering.add(tokens[winner])
            kept[fresh] = self.number[bucket[fresh]]
        same = keys.equal(self.lengths[bucket], self.first[bucket], self.last[bucket],
                          lambda check, j, keep: archive.buffer.word(self.starts[bucket[check]] + 8 * j, keep))
        return kept, same


class _Numbering:
    """Numbers handed out to distinct tokens in turn (from ``count`` on), with the index of the token that got each."""

    def __init__(self, count: int) -> None:
        self.firsts: list[Any] = []
        self.count = count

    def add(self, tokens: Any) -> Any:
        import numpy as np

        self.firsts.append(tokens)
        self.count += len(tokens)
        return np.arange(self.count - len(tokens), self.count, dtype=np.int64)


#: Tokens handled at once: the temporary arrays of a chunk stay small enough to be reused, not mapped anew,
#: and to stay in the cache (a million folded lines: 2**21 tokens a chunk touched 500 MB, 2**18 touch 140 MB
#: and take 40 % less time).
_CHUNK = 1 << 18


class TokenNumbers:
    """Numbers for tokens, handed out over any number of calls of :meth:`number`, each on its own text.

    The bucket tables and the dict after them last from call to call, so a
    token of a later call meets the token of an earlier call that its text
    first turned up as, and gets its number: a caller can feed a large
    file's tokens chunk by chunk, and let go of each chunk's text.
    """

    def __init__(self) -> None:
        self.tables: list[_Table] = []  # made when a round is first needed: the later ones are large
        self.archive = _Archive()
        self.seen: dict[bytes, int] = {}
        self.texts: list[bytes] = []  # the text of each number
        self.count = 0

    def number(self, data: bytes, starts: Any, ends: Any) -> tuple[Any, Any]:
        """Each token's number (an int64 array) for the tokens ``data[starts[i]:ends[i]]``, and, for the numbers
        new in this call (``count`` before it on, in order), the index of the first token of their text.

        Each token is numbered as its text first turns up in a bucket table
        (or the dict after them): no pass over all tokens afterwards.
        """
        import numpy as np

        buffer = _Buffer(data)
        count = len(starts)
        numbering = _Numbering(self.count)
        number = np.empty(count, dtype=np.int64)
        pending = None  # all tokens, in the first round: taken by slices, not gathered
        for round_index, (bits, shift) in enumerate(_ROUNDS):
            if round_index == len(self.tables):
                self.tables.append(_Table(bits))
            table = self.tables[round_index]
            left = []
            total = count if pending is None else len(pending)
            step = _CHUNK if pending is None else max(total, 1)
            for lo in range(0, total, step):
                if pending is None:
                    hi = min(lo + step, count)
                    tokens = np.arange(lo, hi, dtype=np.int64)
                    keys = _Keys(buffer, starts[lo:hi], ends[lo:hi])
                else:
                    tokens = pending[lo:lo + step]
                    keys = _Keys(buffer, starts[tokens], ends[tokens])
                kept, same = table.match(keys, keys.hashes(), shift, numbering, tokens, self.archive)
                if pending is None:  # the tokens unlike the one kept get their numbers in a later round
                    number[lo:hi] = kept
                    left.append(np.flatnonzero(~same) + lo)
                else:
                    number[tokens[same]] = kept[same]
                    left.append(tokens[~same])
            pending = np.concatenate(left) if left else np.zeros(0, dtype=np.int64)
            if not len(pending):
                break
        if pending is not None and len(pending):
            self._number_in_dict(data, pending, starts, ends, number, numbering)
        firsts = np.concatenate(numbering.firsts) if numbering.firsts else np.zeros(0, dtype=np.int64)
        self.count = numbering.count
        self.texts += [data[s:e] for s, e in zip(starts[firsts].tolist(), ends[firsts].tolist())]
        return number, firsts

    def _number_in_dict(self, data: bytes, pending: Any, starts: Any, ends: Any, number: Any,
                        numbering: _Numbering) -> None:
        """The tokens left after the bucket tables, in their order: a new text is numbered at its first token."""
        import numpy as np

        new: list[int] = []
        for token, start, end in zip(pending.tolist(), starts[pending].tolist(), ends[pending].tolist()):
            text = data[start:end]
            found = self.seen.get(text)
            if found is None:
                found = self.seen[text] = numbering.count + len(new)
                new.append(token)
            number[token] = found
        numbering.add(np.array(new, dtype=np.int64))

    def tokens(self) -> list[bytes]:
        """The text of every number handed out so far, by number."""
        return self.texts
