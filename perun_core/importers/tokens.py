"""Numbering millions of substrings of one byte buffer without a Python object per substring.

The importers of stack files meet the same few thousand frame names
millions of times.  Splitting the text into strings and looking each up in
a dict costs a second per ten million frames; :func:`intern_tokens` does the
same with numpy over the token boundaries instead:

1. each token gets a 64-bit hash of its bytes, read eight at a time
   through an unaligned ``uint64`` view of the buffer;
2. a bucket table keeps, per hash bucket, one token that falls in it;
   every token is compared byte for byte (its length, first and last eight
   bytes, and the eight-byte words between for longer ones) with the token
   its bucket kept;
3. tokens unlike the one kept (two names in one bucket) go round again
   with other bits of the hash; the few left after that are looked up in
   a dict.

So equal tokens always get one number and different tokens never share one:
hashes only choose whom to compare with.
"""

from __future__ import annotations

from typing import Any

__all__ = ["intern_tokens"]

_MULTIPLIER = 0x9E3779B97F4A7C15
_MIX = 0xBF58476D1CE4E5B9
#: Bucket table size (2**_BUCKET_BITS entries); the hash bits each round takes (from the shift up); then a dict.
_BUCKET_BITS = 22
_SHIFTS = (42, 21, 0)


class _Buffer:
    """The buffer read as little-endian ``uint64`` words at any byte offset (an unaligned view)."""

    def __init__(self, data: bytes) -> None:
        import numpy as np

        padded = data + bytes(16)
        self.words = np.ndarray(shape=(len(data) + 8,), dtype="<u8", buffer=padded, strides=(1,))
        self.masks = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)

    def word(self, offsets: Any, keep: Any) -> Any:
        """The eight bytes at each offset, only the first ``keep`` (0 to 8) of them, the rest zeros."""
        return self.words[offsets] & self.masks[keep]


class _Keys:
    """What identifies each token: its length, first eight bytes and last eight bytes (exact up to 16 bytes)."""

    def __init__(self, buffer: _Buffer, starts: Any, ends: Any) -> None:
        import numpy as np

        self.buffer = buffer
        self.starts = starts
        self.lengths = lengths = (ends - starts).astype(np.int32)
        self.first = buffer.word(starts, np.minimum(lengths, 8))
        self.last = np.zeros(len(starts), dtype=np.uint64)
        self.long = np.flatnonzero(lengths > 8)  # their last eight bytes overlap or follow the first eight
        self.last[self.long] = buffer.words[ends[self.long] - 8]
        self.longest = int(lengths.max()) if len(lengths) else 0

    def middle(self, tokens: Any, j: int) -> Any:
        """Bytes ``8j .. 8j+8`` of each of ``tokens`` (all longer than ``8j + 8``)."""
        import numpy as np

        return self.buffer.word(self.starts[tokens] + 8 * j, np.minimum(self.lengths[tokens] - 8 * j, 8))

    def hashes(self) -> Any:
        import numpy as np

        hashes = (self.lengths.astype(np.uint64) * np.uint64(_MULTIPLIER)) ^ self.first
        hashes *= np.uint64(_MIX)
        hashes ^= self.last
        hashes *= np.uint64(_MULTIPLIER)
        index = self.long
        for j in range(1, (self.longest - 1) // 8):  # words between the first and the last eight bytes
            index = index[self.lengths[index] > 8 * j + 8]
            hashes[index] = (hashes[index] ^ self.middle(index, j)) * np.uint64(_MIX)
        return hashes ^ (hashes >> np.uint64(29))

    def same(self, a: Any, b: Any, *, every: bool = False) -> Any:
        """For each pair (``a[i]``, ``b[i]``) of token numbers: are their bytes equal?

        ``every`` says that ``a`` is every token in order (nothing to gather).
        """
        import numpy as np

        lengths, first, last = (self.lengths, self.first, self.last) if every else \
            (self.lengths[a], self.first[a], self.last[a])
        same = lengths == self.lengths[b]
        same &= first == self.first[b]
        same &= last == self.last[b]
        check = np.flatnonzero(same & (lengths > 16))
        for j in range(1, (self.longest - 1) // 8):
            check = check[self.lengths[a[check]] > 8 * j + 8]
            if not len(check):
                break
            x, y = a[check], b[check]
            same[check] &= self.middle(x, j) == self.middle(y, j)
        return same


def intern_tokens(data: bytes, starts: Any, ends: Any) -> tuple[list[bytes], Any]:
    """The distinct tokens ``data[starts[i]:ends[i]]`` and each token's number (an int64 array).

    ``starts`` and ``ends`` are int64 numpy arrays.  The numbering is
    arbitrary (callers renumber in the order they need).
    """
    import numpy as np

    count = len(starts)
    keys = _Keys(_Buffer(data), starts, ends)
    hashes = keys.hashes()
    first = np.arange(count, dtype=np.int64)  # each token's leader: an equal token, the same for all equal ones
    pending = first
    size = 1 << _BUCKET_BITS
    table = np.zeros(size, dtype=np.int64)
    for shift in _SHIFTS:
        if not len(pending):
            break
        every = len(pending) == count
        bucket = ((hashes if every else hashes[pending]) >> np.uint64(shift)) & np.uint64(size - 1)
        bucket = bucket.astype(np.intp)
        table[bucket] = pending  # any token of the bucket may stay: it only has to be one of them
        candidate = table[bucket]
        same = keys.same(pending, candidate, every=every)
        if every:
            first = candidate
            first[~same] = pending[~same]
        else:
            first[pending[same]] = candidate[same]
        pending = pending[~same]
    if len(pending):
        seen: dict[bytes, int] = {}
        for token, start, end in zip(pending.tolist(), starts[pending].tolist(), ends[pending].tolist()):
            first[token] = seen.setdefault(data[start:end], token)
    leaders = np.flatnonzero(first == np.arange(count, dtype=np.int64))
    number = np.empty(count, dtype=np.int64)
    number[leaders] = np.arange(len(leaders), dtype=np.int64)
    tokens = [data[s:e] for s, e in zip(starts[leaders].tolist(), ends[leaders].tolist())]
    return tokens, number[first]
