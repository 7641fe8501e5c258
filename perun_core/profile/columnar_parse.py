"""The columnar layout parsed without making Python strings of its base64 columns.

Most of a columnar document (:mod:`perun_core.profile.codec`) is the base64
text of a few column members: 17 of the 17.3 MB of a million-resource
profile.  A JSON parser copies and checks each into a string, only for
:mod:`~perun_core.profile.packing` to decode the string into bytes.  Base64
needs no escaping in JSON, so such a value lies in the document exactly as
it reads: :func:`parse_columnar` takes the long ones out as they lie,
decodes each strictly (which accepts only the base64 alphabet with its
padding: text a JSON parser reads as the same characters), parses the small
rest and puts each value back where it was, as a
:class:`~perun_core.profile.packing.DecodedText`.  Anything else (another
layout, a value strict decoding refuses, a cut that does not land on a
column's member) gives None, and the caller parses the whole text the
ordinary way, which answers as it always did, errors included.
"""

from __future__ import annotations

import binascii
import os
from typing import Any

from . import fastjson
from .packing import DecodedText

#: How a columnar document perun wrote starts (without spaces).
_START = b'{"perun-columnar":'
#: The column members that hold base64 text (what the writer puts down as it is).
MEMBERS = frozenset(("b", "c", "absent", "flat", "starts", "ends"))
_MEMBER_KEYS = frozenset(member.encode("ascii") for member in MEMBERS)
#: Values shorter than this are left to the parser: taking them out would not pay.
SMALLEST_TAKEN = 1 << 12
#: Other string members looked at before the document is left to the parser: a layout's own members are a few
#: per column, but a table of a million frames (``{"function":"...",...}``) would make a million steps here.
MOST_PASSED = 1 << 10


def parse_columnar(buffer: bytes, start: int = 0) -> dict | None:
    """The columnar document at ``buffer[start:]`` parsed, its long base64 members as DecodedText; or None."""
    if not buffer.startswith(_START, start):
        return None
    mark = f"perun-taken-{os.urandom(8).hex()}-"  # no document holds it but by a 1 in 2**64 chance
    pieces: list[bytes] = []
    taken: list[DecodedText] = []
    copied = position = start
    passed = 0
    while True:
        colon = buffer.find(b'":"', position)
        if colon < 0:
            break
        opening = buffer.rfind(b'"', colon - 8, colon)
        value = colon + 3
        if opening < 1 or buffer[opening + 1:colon] not in _MEMBER_KEYS or buffer[opening - 1] not in b"{,":
            passed += 1
            if passed > MOST_PASSED:
                return None
            position = value
            continue
        closing = buffer.find(b'"', value)
        if closing < 0:
            return None
        if closing - value >= SMALLEST_TAKEN:
            text = buffer[value:closing]
            data = _strictly_decoded(text)
            if data is None:
                return None
            pieces += (buffer[copied:value], b"%s%d" % (mark.encode("ascii"), len(taken)))
            taken.append(DecodedText(text, data))
            copied = closing
        position = closing + 1
    if not taken:
        return None
    pieces.append(buffer[copied:])
    try:
        doc = fastjson.loads(b"".join(pieces))
    except (ValueError, RecursionError):
        return None
    return doc if _put_back(doc, mark, taken) else None


def _put_back(doc: Any, mark: str, taken: list[DecodedText]) -> bool:
    """Put the taken values back in their columns' members, in document order; False unless every one was there."""
    if type(doc) is not dict or type(doc.get("snapshots")) is not list:
        return False
    count = 0
    for region in (*doc["snapshots"], doc.get("global")):
        columns = region.get("cols") if type(region) is dict else None
        for column in columns if type(columns) is list else ():
            if type(column) is not dict:
                continue
            for member, value in column.items():
                if type(value) is str and value.startswith(mark):
                    if member not in MEMBERS or value != f"{mark}{count}":
                        return False
                    column[member] = taken[count]
                    count += 1
    return count == len(taken)


def _strictly_decoded(text: bytes) -> bytes | None:
    """The bytes of base64 ``text`` decoded strictly, or None; a run of ``A`` (zeros: the codes of a dictionary
    column of one value, as a profile's ``type`` often is) is told by counting, without decoding it."""
    padding = 2 if text.endswith(b"==") else 1 if text.endswith(b"=") else 0
    body = len(text) - padding
    if not len(text) % 4 and text.startswith(b"AAAA") and text.count(b"A", 0, body) == body:
        return bytes(len(text) // 4 * 3 - padding)
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except binascii.Error:
        return None
