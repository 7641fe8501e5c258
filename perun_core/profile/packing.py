"""Numbers packed little-endian and written as base64: the arrays inside the columnar layout.

:mod:`perun_core.profile.codec` builds and reads the layout; the helpers
here turn integer and float arrays into base64 text and back, pick the
narrowest integer width, and check what a file claims (lengths, codes,
runs of absent rows) before anything trusts it.
"""

from __future__ import annotations

import binascii
import itertools
import sys
from array import array
from typing import Any

LITTLE = sys.byteorder == "little"


def pack_array(kind: str, values: Any) -> bytes:
    """``values`` (a numpy integer array within the range of ``kind``) packed as :func:`pack` packs a list, as
    ASCII bytes: the array's memory is encoded as it is and the text is written as it comes (a million stacks'
    frame numbers are tens of megabytes, and a copy into bytes and one into a str and back cost as much as the
    encoding itself)."""
    import numpy as np

    packed = np.ascontiguousarray(values, dtype=np.dtype(kind).newbyteorder("<"))
    return binascii.b2a_base64(packed.data.cast("B"), newline=False)


def pack(kind: str, values: Any) -> str:
    """Python numbers as base64 of a little-endian array of typecode ``kind``."""
    packed = array(kind, values)
    if not LITTLE:
        packed.byteswap()
    return binascii.b2a_base64(packed.tobytes(), newline=False).decode("ascii")


def unpack(kind: str, text: str | bytes, length: int, *, raw: bool = False) -> Any:
    """What :func:`pack` packed, as a list (``raw``: ``text`` is the bytes, the answer an array); ``length``
    values are expected unless it is negative."""
    packed = array(kind)
    packed.frombytes(text if raw else binascii.a2b_base64(text))  # type: ignore[arg-type]
    if not LITTLE:
        packed.byteswap()
    if length >= 0 and len(packed) != length:
        raise ValueError(f"column holds {len(packed)} values, expected {length}")
    return packed if raw else packed.tolist()


WIDTHS = (("b", 2**7), ("h", 2**15), ("i", 2**31), ("q", 2**63))


def int_kind(low: int, high: int) -> str:
    """The typecode of the narrowest integer array that holds ``low`` .. ``high``."""
    for kind, bound in WIDTHS:
        if -bound <= low and high < bound:
            return kind
    raise OverflowError  # callers check the int64 range first


ITEM_SIZES = {"b": 1, "h": 2, "i": 4, "q": 8, "d": 8}


def packed_bytes(kind: str, text: str | DecodedText, length: int) -> bytes:
    """The bytes of a packed array of typecode ``kind`` from its base64, checked to hold ``length`` values."""
    return packed_bytes_and_text(kind, text, length)[0]


class DecodedText:
    """Base64 ``text`` (ASCII bytes) that decodes strictly to ``data``: a column member taken out of a columnar
    document as it lies, decoded while it was taken (:mod:`perun_core.profile.columnar_parse`)."""

    __slots__ = ("text", "data")

    def __init__(self, text: bytes, data: bytes) -> None:
        self.text = text
        self.data = data


def packed_bytes_and_text(kind: str, text: str | DecodedText, length: int) -> tuple[bytes, str | bytes | None]:
    """:func:`packed_bytes`, and ``text`` itself when it is exactly what encoding those bytes gives (else None):
    such text can be written back as it is, without encoding megabytes again (a :class:`DecodedText`'s as
    bytes)."""
    if kind not in ITEM_SIZES:
        raise ValueError(f"unknown array width {kind!r}")
    kept: str | bytes
    if type(text) is DecodedText:
        data, kept = text.data, text.text
        canonical = _canonical(kept, data)
    elif length > 0 and _encodes_zeros(text, length * ITEM_SIZES[kind]):
        return bytes(length * ITEM_SIZES[kind]), text  # type: ignore[return-value]  # _encodes_zeros: a str
    else:
        data, canonical = _decode_base64(text)
        kept = text  # type: ignore[assignment]
    if length >= 0 and len(data) != length * ITEM_SIZES[kind]:
        raise ValueError(f"column holds {len(data) // ITEM_SIZES[kind]} values, expected {length}")
    if len(data) % ITEM_SIZES[kind]:
        raise ValueError("packed column is cut short")
    return data, kept if canonical and (type(kept) is str or type(text) is DecodedText) else None


#: The canonical base64 of the last one or two bytes of zeros (``A`` is six zero bits).
_ZERO_TAILS = ("", "AA==", "AAA=")


def _encodes_zeros(text: str | bytes, size: int) -> bool:
    """Whether ``text`` is exactly the canonical base64 of ``size`` zero bytes: the codes of a dictionary column
    of one value (a profile's ``type`` or ``subtype`` often is), told by comparing text, without decoding it."""
    whole, rest = divmod(size, 3)
    if type(text) is not str or len(text) != 4 * whole + (4 if rest else 0) or not text.startswith("AAAA"):
        return False
    return text.count("A", 0, 4 * whole) == 4 * whole and text.endswith(_ZERO_TAILS[rest])


def _decode_base64(text: str | bytes) -> tuple[bytes, bool]:
    """The bytes of base64 ``text`` and whether ``text`` is what :func:`binascii.b2a_base64` makes of them.

    Strict decoding (as fast as the lenient one) refuses anything but the
    alphabet and padding at the end; what it accepts is canonical when its
    length fits and its last group carries no stray bits.  Text strict
    decoding refuses is decoded leniently, as always.
    """
    try:
        data = binascii.a2b_base64(text, strict_mode=True)
    except binascii.Error:
        return binascii.a2b_base64(text), False
    return data, _canonical(text, data)


def _canonical(text: str | bytes, data: bytes) -> bool:
    """Whether ``text``, which decodes strictly to ``data``, is what :func:`binascii.b2a_base64` makes of it."""
    size = len(data)
    if len(text) != (size + 2) // 3 * 4:
        return False
    if not size:
        return True
    last = binascii.b2a_base64(data[(size - 1) // 3 * 3:], newline=False)
    tail = text[-4:]
    return (tail.encode("ascii") if isinstance(tail, str) else tail) == last


def check_codes(kind: str, data: bytes, count: int) -> None:
    """ValueError unless every code is an index into ``count`` values."""
    if not data:
        return
    if kind == "b":
        # one byte per code: delete the valid ones, nothing may remain (runs in C)
        if data.translate(None, bytes(range(min(count, 128)))):
            raise ValueError("a code points past the dictionary of the column")
        return
    codes = unpack(kind, data, -1, raw=True)
    if min(codes) < 0 or max(codes) >= count:
        raise ValueError("a code points past the dictionary of the column")


def packed_rows(rows: Any) -> bytes:
    """Row numbers as the bytes of a little-endian int64 array (how absent rows are held)."""
    packed = array("q", rows)
    if not LITTLE:
        packed.byteswap()
    return packed.tobytes()


def runs_as_rows(runs: Any, length: int) -> bytes:
    """The packed row numbers of "absent_runs" (ascending, inside the column, not overlapping)."""
    if not isinstance(runs, list):
        raise TypeError("absent_runs must be a list of [first, end] pairs")
    rows: list[range] = []
    previous = 0
    for run in runs:
        if not (isinstance(run, list) and len(run) == 2 and all(type(v) is int for v in run)):
            raise TypeError("absent_runs must be a list of [first, end] pairs")
        first, end = run
        if not previous <= first < end <= length:
            raise ValueError("an absent run is out of range or out of order")
        rows.append(range(first, end))
        previous = end
    return packed_rows(itertools.chain.from_iterable(rows))
