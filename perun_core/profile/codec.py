"""Serialization of profiles: the documented JSON form and the columnar form.

Pending profiles (``.perun/jobs``) and anything a user exports use the
documented JSON of spec §2.1.  Objects in the store use a columnar JSON
encoding of the same data, tagged ``{"perun-columnar": VERSION, ...}``:
numeric columns are packed little-endian arrays (base64), repeated values
(strings, uids, traces) are dictionary-coded.  Decoding returns exactly the
profile that was encoded, including int/float distinction and absent keys.
Objects holding documented JSON (written by the original tool) stay readable.

Columnar layout (version 1)::

    {"perun-columnar": 1, "header": ..., "collector_info": ..., "postprocessors": ...,
     "snapshots": [REGION...], "global": REGION | null, "extra": {...}}
    REGION  = {"meta": {...}, "models": [...], "has_models": bool,
               "n": rows, "keys": [...], "cols": [COLUMN...]}
    COLUMN  = {"t": "int", "w": W, "b": base64}          all ints, packed at width W
            | {"t": "f64", "b": base64}                  all floats
            | {"t": "dict", "w": W, "v": [values], "c": base64}  codes into v
              (W is an array typecode: b, h, i or q; 1, 2, 4 or 8 bytes)
            | {"t": "raw", "v": [values]}                anything else
              + optional "absent": base64 int64 row numbers lacking the key
"""

from __future__ import annotations

import binascii
import json
import sys
from array import array
from pathlib import Path
from typing import Any

from ..errors import InvalidProfile, UnsupportedFormatVersion
from .model import Profile, Snapshot
from .resources import MISSING, ResourceTable

COLUMNAR_VERSION = 1
_TAG = "perun-columnar"
_INT64 = (-(2**63), 2**63 - 1)
_LITTLE = sys.byteorder == "little"


# -- documented JSON -----------------------------------------------------------

def to_json_bytes(profile: Profile, *, indent: int | None = None, with_origin: bool = True) -> bytes:
    """The profile as documented JSON (UTF-8)."""
    if indent is not None and profile.resource_count() > 20000:
        # json's C encoder is only used without indent; big profiles stay compact.
        indent = None
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(
        profile.to_dict(with_origin=with_origin), indent=indent, separators=separators, ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def from_json_bytes(data: bytes | str, *, path: Path | str | None = None) -> Profile:
    """Parse documented JSON into a profile, naming ``path`` in any error."""
    try:
        parsed = json.loads(data)
    except UnicodeDecodeError as exc:
        raise InvalidProfile(path, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InvalidProfile(path, None, f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    return Profile.from_dict(parsed, path=path)


def load_profile_from_file(path: Path | str) -> Profile:
    """Read a documented-JSON profile file (spec §2.2 ``load_profile_from_file``)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidProfile(path, None, "no such file") from None
    except IsADirectoryError:
        raise InvalidProfile(path, None, "is a directory, not a profile") from None
    except OSError as exc:
        raise InvalidProfile(path, None, f"cannot be read: {exc.strerror}") from None
    return from_json_bytes(data, path=path)


def store_profile_at(profile: Profile, path: Path | str, *, indent: int | None = 2, exclusive: bool = False) -> None:
    """Write the profile as documented JSON, atomically."""
    from ..fsutil import atomic_write

    atomic_write(path, to_json_bytes(profile, indent=indent), exclusive=exclusive)


# -- columnar store encoding ---------------------------------------------------

def encode_columnar(profile: Profile) -> bytes:
    """Store encoding of ``profile`` (without its origin, as registered profiles have none)."""
    doc = {
        _TAG: COLUMNAR_VERSION,
        "header": profile.header,
        "collector_info": profile.collector_info,
        "postprocessors": profile.postprocessors,
        "snapshots": [_encode_region(s) for s in profile.snapshots],
        "global": _encode_region(profile.global_region) if profile.global_region is not None else None,
        "extra": profile.extra,
    }
    # ASCII output is faster to produce, and the bulk (base64 columns) is ASCII anyway.
    return json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("ascii")


def decode_content(content: bytes, *, path: Path | str | None = None) -> Profile:
    """Decode object content: columnar (any version we wrote) or documented JSON."""
    try:
        doc = json.loads(content)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidProfile(path, None, f"stored content is not JSON: {exc}") from None
    if not isinstance(doc, dict) or _TAG not in doc:
        return Profile.from_dict(doc, path=path)
    version = doc[_TAG]
    if not isinstance(version, int) or version < 1:
        raise InvalidProfile(path, _TAG, f"invalid encoding version {version!r}")
    if version > COLUMNAR_VERSION:
        raise UnsupportedFormatVersion(path or "<object>", "profile encoding", version, COLUMNAR_VERSION)
    try:
        snapshots = [_decode_region(r) for r in doc["snapshots"]]
        global_region = _decode_region(doc["global"]) if doc.get("global") is not None else None
        return Profile(
            header=doc["header"],
            collector_info=doc["collector_info"],
            postprocessors=doc["postprocessors"],
            snapshots=snapshots,
            global_region=global_region,
            extra=doc.get("extra") or {},
        )
    except (KeyError, TypeError, ValueError, IndexError, binascii.Error) as exc:
        raise InvalidProfile(path, None, f"damaged columnar encoding ({type(exc).__name__}: {exc})") from None


def _encode_region(region: Snapshot) -> dict:
    keys, columns = region.resources.columns()
    return {
        "meta": region.meta,
        "models": region.models,
        "has_models": region.has_models_key,
        "n": len(region.resources),
        "keys": keys,
        "cols": [_encode_column(c, region.resources.sparse) for c in columns],
    }


def _decode_region(doc: dict) -> Snapshot:
    length = doc["n"]
    columns = [_decode_column(c, length) for c in doc["cols"]]
    sparse = any("absent" in c for c in doc["cols"])
    table = ResourceTable.from_columns(length, doc["keys"], columns, sparse=sparse)
    return Snapshot(table, doc["models"], doc["meta"], has_models_key=doc.get("has_models", True))


def _pack(kind: str, values: Any) -> str:
    packed = array(kind, values)
    if not _LITTLE:
        packed.byteswap()
    return binascii.b2a_base64(packed.tobytes(), newline=False).decode("ascii")


def _unpack(kind: str, text: str, length: int) -> list:
    packed = array(kind)
    packed.frombytes(binascii.a2b_base64(text))
    if not _LITTLE:
        packed.byteswap()
    if length >= 0 and len(packed) != length:
        raise ValueError(f"column holds {len(packed)} values, expected {length}")
    return packed.tolist()


_WIDTHS = (("b", 2**7), ("h", 2**15), ("i", 2**31), ("q", 2**63))


def _int_kind(low: int, high: int) -> str:
    for kind, bound in _WIDTHS:
        if -bound <= low and high < bound:
            return kind
    raise OverflowError  # callers check the int64 range first


def _encode_column(values: list, sparse: bool) -> dict:
    absent: list[int] = []
    if sparse:
        absent = [i for i, v in enumerate(values) if v is MISSING]
    present = [v for v in values if v is not MISSING] if absent else values
    kinds = set(map(type, present))
    out: dict[str, Any]
    if kinds == {int} and _INT64[0] <= min(present) and max(present) <= _INT64[1]:
        kind = _int_kind(min(present), max(present))
        out = {"t": "int", "w": kind, "b": _pack(kind, _fill(values, absent, 0))}
    elif kinds == {float}:
        out = {"t": "f64", "b": _pack("d", _fill(values, absent, 0.0))}
    elif kinds == {str}:
        out = _dictionary_column(_fill(values, absent, present[0]), strings_only=True)
    elif kinds and kinds <= {str, dict, list, bool, type(None), int, float}:
        out = _dictionary_column(_fill(values, absent, present[0]), strings_only=False)
    else:
        out = {"t": "raw", "v": _fill(values, absent, None)}
    if absent:
        out["absent"] = _pack("q", absent)
    return out


def _fill(values: list, absent: list[int], filler: Any) -> list:
    if not absent:
        return values
    filled = list(values)
    for i in absent:
        filled[i] = filler
    return filled


def _dictionary_column(values: list, *, strings_only: bool) -> dict:
    if strings_only:
        # dict.fromkeys and map run in C: the common case of repeated names.
        distinct = list(dict.fromkeys(values))
        if len(distinct) > len(values) // 2 and len(values) > 64:
            return {"t": "raw", "v": values}
        position = {value: i for i, value in enumerate(distinct)}
        codes = list(map(position.__getitem__, values))
    else:
        distinct, codes = _code_mixed(values)
        if len(distinct) > len(values) // 2 and len(values) > 64:
            return {"t": "raw", "v": values}
    kind = _int_kind(0, max(len(distinct) - 1, 0))
    return {"t": "dict", "w": kind, "v": distinct, "c": _pack(kind, codes)}


def _code_mixed(values: list) -> tuple[list, list[int]]:
    # Equal nested values (uids, traces) get one code.  Objects shared between
    # rows (as decoding produces) are recognised by identity first; the key
    # keeps 1, 1.0 and True apart although Python finds them equal.
    index: dict[Any, int] = {}
    by_identity: dict[int, int] = {}
    distinct: list[Any] = []
    codes: list[int] = []
    append = codes.append
    for value in values:
        kind = type(value)
        if kind is dict or kind is list:
            code = by_identity.get(id(value))
            if code is None:
                key: Any = ("json", json.dumps(value, separators=(",", ":"), allow_nan=False))
                code = index.get(key)
                if code is None:
                    code = index[key] = len(distinct)
                    distinct.append(value)
                by_identity[id(value)] = code
            append(code)
            continue
        key = value if kind is str else (kind.__name__, value)
        code = index.get(key)
        if code is None:
            code = index[key] = len(distinct)
            distinct.append(value)
        append(code)
    return distinct, codes


def _decode_column(doc: dict, length: int) -> list:
    kind = doc["t"]
    if kind == "int":
        values = _unpack(doc["w"], doc["b"], length)
    elif kind == "f64":
        values = _unpack("d", doc["b"], length)
    elif kind == "dict":
        values = list(map(doc["v"].__getitem__, _unpack(doc["w"], doc["c"], length)))
    elif kind == "raw":
        values = doc["v"]
        if len(values) != length:
            raise ValueError(f"column holds {len(values)} values, expected {length}")
    else:
        raise ValueError(f"unknown column type {kind!r}")
    if "absent" in doc:
        for i in _unpack("q", doc["absent"], -1):
            values[i] = MISSING
    return values
