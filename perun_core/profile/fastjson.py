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
  beyond 64 bits as floats, without an error: text with a run of 19 or more
  digits goes to json straight away (a scan of a few milliseconds per
  megabyte; floats as json or orjson write them have at most 17 digits).
* :func:`number_tokens` gives, per number, a token that parses back to the
  same value (orjson spells some floats differently: ``1e-5`` where json
  writes ``1e-05``).  Callers check NaN and infinity before, as orjson would
  write them as ``null``.

Without orjson (a platform without a wheel) everything goes through json.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; this keeps perun usable without it
    _orjson = None

__all__ = ["available", "loads", "number_tokens"]


def available() -> bool:
    return _orjson is not None


#: Maps ASCII digits to b"0" and every other byte to a space.
_DIGITS_ONLY = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
#: orjson reads an integer beyond 64 bits as a float; such integers need at least 19 digits.
_LONG_RUN = b"0" * 19


def loads(data: bytes | str) -> Any:
    """``json.loads(data)``, faster for UTF-8 bytes."""
    if _orjson is not None and isinstance(data, bytes) and data.translate(_DIGITS_ONLY).find(_LONG_RUN) < 0:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(data)


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
