"""Serialization of profiles: the documented JSON form and the columnar form.

Pending profiles (``.perun/jobs``) and anything a user exports use the
documented JSON of spec §2.1.  Objects in the store use a columnar JSON
encoding of the same data, tagged ``{"perun-columnar": VERSION, ...}``:
numeric columns are packed little-endian arrays (base64), repeated values
(strings, uids, traces) are dictionary-coded.  Decoding returns exactly the
profile that was encoded, including int/float distinction and absent keys.
Objects holding documented JSON (written by the original tool) stay readable.

Columnar layout (version 3; version 2 had no "stacks" columns, version 1 no ``origin``)::

    {"perun-columnar": 3, "origin": SHA | null, "header": ..., "collector_info": ...,
     "postprocessors": ..., "snapshots": [REGION...], "global": REGION | null, "extra": {...}}
    REGION  = {"meta": {...}, "models": [...], "has_models": bool,
               "n": rows, "keys": [...], "cols": [COLUMN...]}
    COLUMN  = {"t": "int", "w": W, "b": base64}          all ints, packed at width W
            | {"t": "f64", "b": base64}                  all floats
            | {"t": "dict", "w": W, "v": [values], "c": base64}  codes into v
              (W is an array typecode: b, h, i or q; 1, 2, 4 or 8 bytes)
            | {"t": "raw", "v": [values]}                anything else
            | {"t": "stacks", "frames": [entries], "w": W, "flat": base64,
               "sw": W, "starts": base64, "ends": base64}
              call stacks (traces) as numbers into ``frames``: row i's trace is
              frames[flat[starts[i]]] ... frames[flat[ends[i] - 1]]; rows past
              the last start (given as absent) have none.  Written for stacks
              held columnar (importers): a million distinct stacks cost their
              frame numbers, not a million JSON lists
              + optional "absent": base64 int64 row numbers lacking the key,
                or "absent_runs": [[first, end], ...] the same rows as runs
                first .. end - 1 (version 3; written for one run of rows)
"""

from __future__ import annotations

import binascii
import codecs
import json
import sys
from itertools import compress, repeat
from operator import is_, is_not
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import Any

from ..atomic import atomic_write
from ..errors import InvalidProfile
from ..versions import Versioned
from . import fastjson
from .columnar_parse import parse_columnar
from .model import Profile, Snapshot
from .packing import (check_codes, int_kind, pack, pack_array, packed_bytes, packed_bytes_and_text, packed_rows,
                      runs_as_rows, unpack)
from .resources import MISSING, PackedColumn, ResourceTable, StackColumn
from .validate import MAX_DEPTH, validate_profile

COLUMNAR_VERSION = 3
_TAG = "perun-columnar"
#: File layouts perun can write (``--layout``): compact is the columnar one.
WRITE_LAYOUTS = ("compact", "documented")

COLUMNAR = Versioned("columnar profile layout", newest=COLUMNAR_VERSION)


@COLUMNAR.step(2)
def update_to_2(doc: dict) -> dict:
    """Version 2 keeps the origin of pending profiles (objects in the store have none)."""
    doc.setdefault("origin", None)
    return doc


@COLUMNAR.step(3)
def update_to_3(doc: dict) -> dict:
    """Version 3 adds the "stacks" column type; a version 2 document is a valid version 3 one."""
    return doc


_INT64 = (-(2**63), 2**63 - 1)


# -- documented JSON -----------------------------------------------------------

def to_json_bytes(profile: Profile, *, indent: int | None = None, with_origin: bool = True) -> bytes:
    """The profile as documented JSON (UTF-8); see :func:`iter_json_chunks`."""
    return b"".join(iter_json_chunks(profile, indent=indent, with_origin=with_origin))


def iter_json_chunks(profile: Profile, *, indent: int | None = None, with_origin: bool = True) -> Iterator[bytes]:
    """The profile as documented JSON (UTF-8), in chunks of bounded size.

    Resources are written column-wise (:mod:`perun_core.profile.writer`),
    one per line when ``indent`` is given; profiles of more than 20,000
    resources are always written compactly.
    """
    # lazy: keeps `perun-core status`, the TUI's first frame and `perun-core check profiles` light
    from .writer import iter_json

    if indent is not None and profile.resource_count() > 20000:
        indent = None
    return iter_json(profile, indent=indent, with_origin=with_origin)


def from_json_bytes(data: bytes | str, *, path: Path | str | None = None) -> Profile:
    """Parse documented JSON (or the columnar layout) into a profile, naming ``path`` in any error."""
    try:
        parsed = (parse_columnar(data) if type(data) is bytes else None) or fastjson.loads(data)
    except UnicodeDecodeError as exc:
        raise InvalidProfile(path, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InvalidProfile(path, None, f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise InvalidProfile(path, None, f"nests deeper than {MAX_DEPTH} levels") from None
    return Profile.from_dict(parsed, path=path)


def load_profile_from_file(path: Path | str) -> Profile:
    """Read a documented-JSON profile file (spec §2.2 ``load_profile_from_file``).

    Big files are read block by block straight into columns
    (:mod:`perun_core.profile.reader`); anything that reader does not
    expect, errors included, is parsed here the ordinary way.
    """
    # lazy: keeps `perun-core status` and the TUI's first frame light
    from .reader import MINIMUM_SIZE, load_columnwise

    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():
        # a named pipe with no writer would block the read forever; a device never ends
        raise InvalidProfile(path, None, "is not a regular file (a pipe, device or socket), not a profile")
    _refuse_what_cannot_be_json(path)
    try:
        if path.stat().st_size >= MINIMUM_SIZE and not _is_columnar_file(path):
            found = load_columnwise(path)
            if found is not None:
                return validate_profile(found, path=path)
    except OSError:
        pass  # reported below
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidProfile(path, None, "no such file") from None
    except IsADirectoryError:
        raise InvalidProfile(path, None, "is a directory, not a profile") from None
    except OSError as exc:
        raise InvalidProfile(path, None, f"cannot be read: {exc.strerror}") from None
    encoding = json.detect_encoding(data)
    if encoding == "utf-8" and not data.startswith(codecs.BOM_UTF8):
        return validate_profile(from_json_bytes(data, path=path), path=path)
    # Decode first and let the bytes go: a big profile is then held once, not twice, while parsing.
    try:
        text = data.decode(encoding, "surrogatepass")
    except UnicodeDecodeError as exc:
        raise InvalidProfile(path, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    del data
    return validate_profile(from_json_bytes(text, path=path), path=path)


def _refuse_what_cannot_be_json(path: Path) -> None:
    """Refuse a large file whose first text is not ``{`` before any of it is parsed.

    A profile is one JSON object.  Reading a large file of something else
    (a core dump, a file of NULs) whole, decoding it and handing it to the
    parser cost several times its size in memory before the same error; its
    first bytes already decide.  Small files go to the parser, whose errors
    say more (the line and column).
    """
    try:
        if path.stat().st_size < _SNIFF_FROM:
            return
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return  # the full read names the problem
    text = head.decode(json.detect_encoding(head), "ignore").lstrip("\ufeff \t\r\n")
    if text and not text.startswith("{"):
        shown = text[:8].encode("unicode_escape").decode("ascii")
        raise InvalidProfile(path, None, f"malformed JSON: expected a JSON object, '{{', at the start; found '{shown}'")


#: files from this size on are looked at before they are read whole
_SNIFF_FROM = 1 << 20
#: enough of a file to see its first character past any amount of indentation a writer would use
_SNIFF_BYTES = 4096


def _is_columnar_file(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(_TAG) + 8).lstrip(b" \t\r\n{").startswith(b'"%s"' % _TAG.encode())


def load_profile_head(path: Path | str) -> Profile:
    """The profile at ``path`` without its resources and models where that is cheap (compact files:
    only the bytes before the first region are read), else the whole profile."""
    path = Path(path)
    try:
        if _is_columnar_file(path):
            with open(path, "rb") as handle:
                head = handle.read(1 << 20)
            found = _columnar_head(head, path)
            if found is not None:
                return found
    except OSError:
        pass  # load_profile_from_file reports it
    return load_profile_from_file(path)


def _columnar_head(data: bytes, path: Path) -> Profile | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data[:exc.start].decode("utf-8")
    decoder = json.JSONDecoder()
    position = text.index("{") + 1
    members: dict[str, Any] = {}
    try:
        while True:
            key, position = decoder.raw_decode(text, position)
            if text[position] != ":":
                return None
            if key == "snapshots":
                break
            members[key], position = decoder.raw_decode(text, position + 1)
            if text[position] != ",":
                return None
            position += 1
    except (ValueError, IndexError):
        return None
    if not isinstance(members.get("header"), dict):
        return None
    COLUMNAR.check(members.get(_TAG), path, invalid=lambda reason: InvalidProfile(path, _TAG, reason))
    return Profile(header=members["header"], collector_info=members.get("collector_info") or {},
                   postprocessors=members.get("postprocessors") or [], origin=members.get("origin"),
                   layout="columnar")


def store_profile_at(profile: Profile, path: Path | str, *, indent: int | None = 2, exclusive: bool = False,
                     layout: str = "documented") -> None:
    """Write the profile atomically, as documented JSON or in the compact columnar layout (with its origin)."""

    atomic_write(path, iter_layout(profile, layout, indent=indent), exclusive=exclusive)


def iter_layout(profile: Profile, layout: str, *, indent: int | None = 2) -> Iterator[bytes]:
    """The bytes of ``profile`` in one of :data:`WRITE_LAYOUTS`, in pieces."""
    if layout == "compact":
        return iter_columnar(profile, with_origin=True)
    if layout == "documented":
        return iter_json_chunks(profile, indent=indent)
    raise ValueError(f"unknown profile layout {layout!r}; expected one of {', '.join(WRITE_LAYOUTS)}")


# -- columnar store encoding ---------------------------------------------------

def encode_columnar(profile: Profile) -> bytes:
    """The columnar encoding of ``profile`` without its origin (the form of objects perun stored before they kept it)."""
    return b"".join(iter_columnar(profile))


def iter_columnar(profile: Profile, *, with_origin: bool = False) -> Iterator[bytes]:
    """The bytes of :func:`encode_columnar` in pieces, one resource column at a time.

    The pieces join to exactly what ``json.dumps`` of the whole document
    gives (the tests hold them to it); producing them one column at a time
    lets a caller compress the columns already encoded while the next ones
    are being encoded.
    """
    def dump(value: Any) -> bytes:
        # ASCII output is faster to produce, and the bulk (base64 columns) is ASCII anyway.
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")

    origin = profile.origin if with_origin else None
    yield b'{%s:%s,"origin":%s,"header":%s,"collector_info":%s,"postprocessors":%s,"snapshots":[' % (
        dump(_TAG), dump(COLUMNAR_VERSION), dump(origin), dump(profile.header), dump(profile.collector_info),
        dump(profile.postprocessors))
    for index, snapshot in enumerate(profile.snapshots):
        if index:
            yield b","
        yield from _iter_region(snapshot, dump)
    yield b'],"global":'
    if profile.global_region is None:
        yield b"null"
    else:
        yield from _iter_region(profile.global_region, dump)
    yield b',"extra":%s}' % dump(profile.extra)


def _iter_region(region: Snapshot, dump: Callable[[Any], bytes]) -> Iterator[bytes]:
    table = region.resources
    held = table.raw_columns(stacks=True)
    keys, columns = held if held is not None else table.columns()
    sparse = table.sparse
    yield b'{"meta":%s,"models":%s,"has_models":%s,"n":%d,"keys":%s,"cols":[' % (
        dump(region.meta), dump(region.models), dump(region.has_models_key), len(table), dump(keys))
    for index, column in enumerate(columns):
        if index:
            yield b","
        if isinstance(column, StackColumn):
            encoded = _stack_column_doc(column, sparse)
            if encoded is not None:
                yield from _column_pieces(encoded, dump)
                continue
            column = column.to_list()
        yield from _column_pieces(
            _encode_packed(column) if isinstance(column, PackedColumn) else _encode_column(column, sparse), dump)
    yield b"]}"


def _stack_column_doc(column: StackColumn, sparse: bool) -> dict[str, Any] | None:
    """A column of stacks held as frame numbers, as a "stacks" column: the frame table once, numbers packed.

    None for columns the general path must take (missing rows in a table
    that is not sparse, no trace at all).
    """
    import numpy as np

    count = len(column.starts)
    if not count or (count < column.length and not sparse):
        return None
    flat = np.asarray(column.flat)  # any integer type: packed at the width of the frame table
    starts = np.asarray(column.starts, dtype=np.int64)
    ends = np.asarray(column.ends, dtype=np.int64)
    width = int_kind(0, max(len(column.frames) - 1, 0))
    span_width = int_kind(0, max(int(ends.max()), int(starts.max()), 0))
    out: dict[str, Any] = {"t": "stacks", "frames": column.frames, "w": width, "flat": pack_array(width, flat),
                           "sw": span_width, "starts": pack_array(span_width, starts),
                           "ends": pack_array(span_width, ends)}
    if count < column.length:
        _add_absent(out, count, column.length - 1, column.length - count, lambda: "")  # always one run
    return out


def _stack_column(doc: dict, length: int, absent: bytes) -> StackColumn:
    """A "stacks" column, checked: every frame number in the table, every span inside ``flat``."""
    import numpy as np

    frames = doc["frames"]
    if not isinstance(frames, list):
        raise TypeError("the frames of a stacks column must be a list")
    for key in ("w", "sw"):
        if doc[key] not in ("b", "h", "i", "q"):
            raise ValueError(f"unknown integer width {doc[key]!r}")

    def numbers(kind: str, text: str, count: int) -> Any:
        return np.frombuffer(packed_bytes(kind, text, count), dtype=np.dtype(kind).newbyteorder("<")).astype(np.int64)

    missing = len(absent) // 8
    flat = numbers(doc["w"], doc["flat"], -1)
    starts = numbers(doc["sw"], doc["starts"], length - missing)
    ends = numbers(doc["sw"], doc["ends"], length - missing)
    if missing and unpack("q", absent, -1, raw=True).tolist() != list(range(length - missing, length)):
        raise ValueError("the rows without a stack must be the last ones")
    if len(flat) and (flat.min() < 0 or flat.max() >= len(frames)):
        raise ValueError("a frame number points past the frames of the column")
    if len(starts) and (starts.min() < 0 or (ends < starts).any() or ends.max() > len(flat)):
        raise ValueError("a stack reaches outside the frame numbers of the column")
    return StackColumn(frames, flat, starts, ends, length)


#: Members of a column holding base64 text: written as they are (base64 needs no JSON escaping),
#: which saves json's scan of megabytes of text per column.
_BASE64_MEMBERS = ("b", "c", "absent", "flat", "starts", "ends")


def _column_pieces(column: dict, dump: Callable[[Any], bytes]) -> Iterator[bytes]:
    """``dump(column)`` exactly, in pieces, faster for the base64 members: each is a piece of its own, not copied
    into a joined column (a million-frame stack column is tens of megabytes of it).  A base64 member may be
    ASCII bytes (:func:`~perun_core.profile.packing.pack_array`): written as the str of those bytes would be."""
    yield b"{"
    for index, (key, value) in enumerate(column.items()):
        if index:
            yield b","
        if key in _BASE64_MEMBERS and type(value) in (str, bytes):
            yield b'"%s":"' % key.encode("ascii")
            yield value if type(value) is bytes else value.encode("ascii")
            yield b'"'
        else:
            yield b"%s:%s" % (dump(key), dump(value))
    yield b"}"


def decode_content(content: bytes | memoryview, *, path: Path | str | None = None, start: int = 0) -> Profile:
    """Decode object content: columnar (any version we wrote) or documented JSON; ``start``: where the content
    begins in ``content`` (bytes holding an object's header first)."""
    try:
        doc = parse_columnar(content, start) if type(content) is bytes else None
        if doc is None:
            doc = fastjson.loads(memoryview(content)[start:] if start else content)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidProfile(path, None, f"stored content is not JSON: {exc}") from None
    except RecursionError:
        raise InvalidProfile(path, None, f"nests deeper than {MAX_DEPTH} levels") from None
    return Profile.from_dict(doc, path=path)


def decode_document(doc: dict, *, path: Path | str | None = None) -> Profile:
    """A parsed columnar document (any version we wrote) as a profile."""
    doc = COLUMNAR.upgrade(dict(doc), doc[_TAG], path=path or "<object>",
                           invalid=lambda reason: InvalidProfile(path, _TAG, reason))
    try:
        snapshots = [_decode_region(r) for r in doc["snapshots"]]
        global_region = _decode_region(doc["global"]) if doc.get("global") is not None else None
        profile = Profile(
            header=doc["header"],
            collector_info=doc["collector_info"],
            postprocessors=doc["postprocessors"],
            snapshots=snapshots,
            global_region=global_region,
            origin=doc.get("origin"),
            extra=_extra_members(doc.get("extra")),
            layout="columnar",
        )
    except (KeyError, TypeError, ValueError, IndexError, binascii.Error) as exc:
        raise InvalidProfile(path, None, f"damaged columnar encoding ({type(exc).__name__}: {exc})") from None
    return profile


def _encode_packed(column: PackedColumn) -> dict:
    """A column that is still packed as it was decoded: its bytes are written back as they are."""
    def text(data: bytes) -> str:
        return binascii.b2a_base64(data, newline=False).decode("ascii")

    packed = column.text if column.text is not None else text(column.data)
    out: dict[str, Any]
    if column.kind == "dict":
        out = {"t": "dict", "w": column.typecode, "v": column.values, "c": packed}
    elif column.kind == "f64":
        out = {"t": "f64", "b": packed}
    else:
        out = {"t": "int", "w": column.typecode, "b": packed}
    if column.absent:
        # rows read from a file need not ascend: a run only when the bytes are exactly first .. last
        first, last = unpack("q", column.absent[:8], 1, raw=True)[0], unpack("q", column.absent[-8:], 1, raw=True)[0]
        run = first <= last and _is_run(column.absent, first, last)
        _add_absent(out, first, last, len(column.absent) // 8 if run else -1, lambda: text(column.absent))
    return out


def _is_run(absent: bytes, first: int, last: int) -> bool:
    """Whether the packed rows ``absent`` are exactly ``first`` .. ``last``, ascending."""
    if (last - first + 1) * 8 != len(absent):
        return False
    numpy = sys.modules.get("numpy")  # a million rows: compared in C either way, numpy without a copy
    if numpy is not None:
        return bool((numpy.diff(numpy.frombuffer(absent, dtype="<i8")) == 1).all())
    return packed_rows(range(first, last + 1)) == absent


def _add_absent(out: dict, first: int, last: int, count: int, packed: Callable[[], str]) -> None:
    """Name the ``count`` rows (ascending, distinct, ``first`` .. ``last``) that lack the key: as one run when
    they are every row in between, else as ``packed()``, their base64 row numbers (``count`` -1: never a run)."""
    if last - first + 1 == count:
        out["absent_runs"] = [[first, last + 1]]
    else:
        out["absent"] = packed()


def _extra_members(extra: Any) -> dict:
    """The members a profile has beyond the known sections: an object of them, or none written."""
    if extra is None:
        return {}
    if type(extra) is not dict:
        raise TypeError(f'"extra" must be an object, not {type(extra).__name__}')
    return extra


def _decode_region(doc: dict) -> Snapshot:
    length = doc["n"]
    if type(length) is not int or length < 0:
        raise ValueError(f"the row count n must be a whole number 0 or more, not {length!r:.40}")
    keys, cols = doc["keys"], doc["cols"]
    if type(keys) is not list or type(cols) is not list or len(keys) != len(cols):
        raise ValueError("keys and cols must be lists of the same length")
    if not all(type(key) is str for key in keys) or len(set(keys)) != len(keys):
        raise ValueError("keys must be distinct strings")
    columns = [_decode_column(c, length) for c in cols]
    sparse = any("absent" in c or "absent_runs" in c for c in doc["cols"])
    table = ResourceTable.from_columns(length, doc["keys"], columns, sparse=sparse)
    return Snapshot(table, doc["models"], doc["meta"], has_models_key=doc.get("has_models", True))


def _encode_column(values: list, sparse: bool) -> dict:
    absent: list[int] = []
    if sparse:
        # compress and map run in C: sparse columns of a million rows are common (importers' function rows)
        absent = list(compress(range(len(values)), map(is_, values, repeat(MISSING))))
    present = list(compress(values, map(is_not, values, repeat(MISSING)))) if absent else values
    kinds = set(map(type, present))
    out: dict[str, Any]
    if kinds == {int} and _INT64[0] <= min(present) and max(present) <= _INT64[1]:
        kind = int_kind(min(present), max(present))
        out = {"t": "int", "w": kind, "b": pack(kind, _fill(values, absent, 0))}
    elif kinds == {float}:
        out = {"t": "f64", "b": pack("d", _fill(values, absent, 0.0))}
    elif kinds == {str}:
        out = _dictionary_column(_fill(values, absent, present[0]), strings_only=True)
    elif kinds and kinds <= {str, dict, list, bool, type(None), int, float}:
        out = _dictionary_column(_fill(values, absent, present[0]), strings_only=False)
    else:
        out = {"t": "raw", "v": _fill(values, absent, None)}
    if absent:
        _add_absent(out, absent[0], absent[-1], len(absent), lambda: pack("q", absent))
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
    kind = int_kind(0, max(len(distinct) - 1, 0))
    return {"t": "dict", "w": kind, "v": distinct, "c": pack(kind, codes)}


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


def _decode_column(doc: dict, length: int) -> list | PackedColumn | StackColumn:
    """A column: packed numbers and codes stay packed (validated now, unpacked on demand)."""
    kind = doc["t"]
    absent = b""
    if "absent_runs" in doc:
        absent = runs_as_rows(doc["absent_runs"], length)
    elif "absent" in doc:
        absent = packed_bytes("q", doc["absent"], -1)
        rows = unpack("q", absent, -1, raw=True)
        if rows and (min(rows) < 0 or max(rows) >= length):
            raise ValueError("an absent row number is out of range")
    if kind in ("int", "dict") and doc["w"] not in ("b", "h", "i", "q"):
        raise ValueError(f"unknown integer width {doc['w']!r}")
    if kind in ("int", "f64"):
        typecode = doc["w"] if kind == "int" else "d"
        data, text = packed_bytes_and_text(typecode, doc["b"], length)
        return PackedColumn(kind, typecode, data, length, None, absent, text)
    if kind == "dict":
        values = doc["v"]
        if not isinstance(values, list):
            raise TypeError("the dictionary of a column must be a list")
        codes, text = packed_bytes_and_text(doc["w"], doc["c"], length)
        check_codes(doc["w"], codes, len(values))
        return PackedColumn("dict", doc["w"], codes, length, values, absent, text)
    if kind == "stacks":
        return _stack_column(doc, length, absent)
    if kind == "raw":
        values = doc["v"]
        if len(values) != length:
            raise ValueError(f"column holds {len(values)} values, expected {length}")
    else:
        raise ValueError(f"unknown column type {kind!r}")
    for i in unpack("q", absent, -1, raw=True) if absent else ():
        values[i] = MISSING
    return values
