"""orjson where it gives the same values as :mod:`json`, :mod:`json` everywhere else.

Why: parsing and writing documented-JSON profiles is most of what
``check profiles`` on two files and ``postprocessby`` on a big profile
spend; orjson parses such text in about 60 % of json's time and writes
number lists ten times faster.  The two are not interchangeable, so every
use here keeps json's results exactly:

* :func:`loads` gives what ``json.loads`` gives.  orjson refuses some text
  json accepts (``NaN`` and ``Infinity`` literals, ``1e400``, lone
  surrogate escapes); any text orjson refuses goes to json, which then
  parses it or raises its own, precise error.  orjson also reads integers
  beyond 64 bits as floats, without an error.  Such a float is at least
  2**63 in size, so a result without one is json's; a result with one goes
  to json again.  Looking at every value of a result with many small values
  (documented resources) costs more than scanning the text for a run of 19
  or more digits (a few milliseconds per megabyte; floats as json or orjson
  write them have at most 17 digits), so such results are judged by the
  scan instead; results with few values (the columnar layout, whose bulk is
  a handful of base64 strings) skip it.
* :func:`number_tokens` gives, per number, a token that parses back to the
  same value (orjson spells some floats differently: ``1e-5`` where json
  writes ``1e-05``).  Callers check NaN and infinity before, as orjson would
  write them as ``null``.

Without orjson (a platform without a wheel) everything goes through json.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; this keeps perun usable without it
    _orjson = None

__all__ = ["available", "json_loads", "loads", "number_tokens"]


def available() -> bool:
    return _orjson is not None


#: Maps ASCII digits to b"0" and every other byte to a space.
_DIGITS_ONLY = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
#: orjson reads an integer beyond 64 bits as a float; such integers need at least 19 digits.
_LONG_RUN = b"0" * 19
#: ... and the float is at least this large (-2**63 - 1 becomes -2**63).
_BEYOND_64_BITS = float(2**63)
#: Values of a result looked at per byte of its text at most, before the digit scan is the cheaper check.
_VALUES_PER_BYTE = 1 / 1024


def loads(data: bytes | memoryview | str) -> Any:
    """``json.loads(data)``, faster for UTF-8 bytes.

    A memoryview (of bytes) is read where it lies: the content of a stored
    object is a view past its header, not a copy of megabytes.
    """
    if _orjson is not None and isinstance(data, (bytes, memoryview)):
        try:
            parsed = _orjson.loads(data)
        except _orjson.JSONDecodeError:
            return json_loads(bytes(data))
        exact = _no_wide_floats(parsed, int(len(data) * _VALUES_PER_BYTE))
        if exact is None:
            exact = bytes(data).translate(_DIGITS_ONLY).find(_LONG_RUN) < 0
        if exact:
            return parsed
    return json_loads(bytes(data) if isinstance(data, memoryview) else data)


def json_loads(data: bytes | str) -> Any:
    """``json.loads(data)``, with an integer longer than Python converts from text (4,300 digits by default) a
    ``json.JSONDecodeError`` at that integer like any other error of the text, not a bare ValueError."""
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        limit = sys.get_int_max_str_digits()
        text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else data
        found = re.search(r"[0-9]{%d,}" % (limit + 1), text) if limit else None
        if found is None:
            raise
        raise json.JSONDecodeError(f"an integer of more than {limit:,} digits", text, found.start()) from exc


def _no_wide_floats(parsed: Any, budget: int) -> bool | None:
    """Whether ``parsed`` holds no float of 2**63 or more in size; None when it holds more than ``budget``
    values (looking at them all would cost more than the scan of its text)."""
    pending = [parsed]
    seen = 0
    while pending:
        node = pending.pop()
        kind = type(node)
        values = node.values() if kind is dict else node if kind is list else (node,)
        seen += len(values)
        if seen > budget:
            return None
        for value in values:
            kind = type(value)
            if kind is float:
                if not -_BEYOND_64_BITS < value < _BEYOND_64_BITS:
                    return False
            elif kind is dict or kind is list:
                pending.append(value)
    return True


def number_tokens(values: list) -> list[str]:
    """JSON tokens of finite ints or floats, one per value; they parse back to the same numbers.

    Integers beyond 64 bits (which orjson cannot write) and anything else
    orjson refuses go through ``repr`` as json writes them.
    """
    if _orjson is not None and values:
        try:
            text = _orjson.dumps(values).decode("ascii")
        except (_orjson.JSONEncodeError, TypeError):
            pass
        else:
            return text[1:-1].split(",")
    return [value.__repr__() for value in values]
