"""Writing profiles as documented JSON without building a dict per resource.

``json.dumps(profile.to_dict())`` needs every resource as a dict, and a
profile read from the object store holds columns: building a million dicts
just to serialize them costs more than everything else a postprocessor
does.  :func:`iter_json` writes the same JSON column-wise instead:

* the profile without its resources goes through :func:`json.dumps`, with a
  unique placeholder string where each region's resource list belongs;
* each resource list is generated from the table's columns: every column
  becomes a list of JSON tokens (numbers as :mod:`json` writes them, or as
  orjson does where it is faster: :func:`~perun_core.profile.fastjson.number_tokens`;
  strings and nested values encoded once per distinct value), and the
  tokens of a block of rows are interleaved with the ``{"key":`` separators
  and joined;
* the text is produced in blocks of :data:`BLOCK_ROWS` rows, so memory stays
  bounded.

The output parses to exactly what ``json.dumps(profile.to_dict())`` would;
only the layout differs: with ``indent`` every resource is written on one
line (``{"amount": 1.5, "uid": "f"}``) instead of one line per key, and keys
follow the table's column order.  Tables whose resources do not all have
the same keys are written row by row through :mod:`json`'s C encoder.  Like
:func:`json.dumps` with ``allow_nan=False``, NaN and infinite numbers raise
:class:`ValueError`.

Number columns whose values repeat (sizes, rounded amounts) are tokenized
once per distinct value.
"""

from __future__ import annotations

import json
import math
import uuid
from array import array
from collections.abc import Callable, Iterator
from typing import Any

from .fastjson import number_tokens
from .model import Profile, Snapshot
from .original_keys import with_original_keys
from .resources import PackedColumn, ResourceTable

__all__ = ["BLOCK_ROWS", "iter_json", "resources_json"]

#: Rows whose text is generated at once.
BLOCK_ROWS = 65536

_encode_string = json.encoder.encode_basestring  # ensure_ascii=False: what json.dumps uses


def iter_json(profile: Profile, *, indent: int | None = None, with_origin: bool = True) -> Iterator[bytes]:
    """The profile as documented JSON (UTF-8), in chunks; see the module docstring."""
    tag = f"@@perun-resources:{uuid.uuid4().hex}:"
    regions: list[ResourceTable] = []

    def region_dict(snapshot: Snapshot) -> dict:
        region = dict(snapshot.meta)
        region["resources"] = f"{tag}{len(regions)}"
        regions.append(snapshot.resources)
        if snapshot.has_models_key or snapshot.models:
            region["models"] = with_original_keys(snapshot.models)
        return region

    doc: dict[str, Any] = {}
    if with_origin and profile.origin is not None:
        doc["origin"] = profile.origin
    doc["header"] = profile.header
    doc["collector_info"] = profile.collector_info
    doc["postprocessors"] = profile.postprocessors
    doc["snapshots"] = [region_dict(s) for s in profile.snapshots]
    if profile.global_region is not None:
        doc["global"] = region_dict(profile.global_region)
    for key, value in profile.extra.items():
        doc.setdefault(key, value)
    separators = (",", ": ") if indent is not None else (",", ":")
    skeleton = json.dumps(doc, indent=indent, separators=separators, ensure_ascii=False, allow_nan=False)
    placeholders = [json.dumps(f"{tag}{i}") for i in range(len(regions))]
    if any(skeleton.count(p) != 1 for p in placeholders):  # pragma: no cover - a 128-bit collision
        yield json.dumps(profile.to_dict(with_origin=with_origin), indent=indent, separators=separators,
                         ensure_ascii=False, allow_nan=False).encode("utf-8")
        return
    position = 0
    for placeholder, table in zip(placeholders, regions):
        start = skeleton.index(placeholder, position)
        yield skeleton[position:start].encode("utf-8")
        line_start = skeleton.rfind("\n", 0, start) + 1
        depth = len(skeleton[line_start:start]) - len(skeleton[line_start:start].lstrip(" "))
        for text in resources_json(table, indent=indent, depth=depth):
            yield text.encode("utf-8")
        position = start + len(placeholder)
    yield skeleton[position:].encode("utf-8")


def resources_json(table: ResourceTable, *, indent: int | None = None, depth: int = 0) -> Iterator[str]:
    """The JSON text of the table's resource list, in pieces.

    With ``indent`` the list is laid out for a line at ``depth`` spaces:
    one resource per line at ``depth + indent`` spaces, the closing bracket
    at ``depth``.
    """
    n = len(table)
    if n == 0:
        yield "[]"
        return
    if indent is not None:
        opening, row_separator, closing = "[\n" + " " * (depth + indent), ",\n" + " " * (depth + indent), \
            "\n" + " " * depth + "]"
        key_separator, item_separator = ": ", ", "
    else:
        opening, row_separator, closing = "[", ",", "]"
        key_separator, item_separator = ":", ","
    held = table.raw_columns()
    if held is None:
        keys, columns = table.columns()
    else:
        keys, columns = held
    if table.sparse or not keys or not all(type(k) is str for k in keys):
        yield from _rows_one_by_one(table, opening, row_separator, closing, key_separator, item_separator)
        return
    prefixes = [
        ("{" if i == 0 else item_separator) + _encode_string(key) + key_separator for i, key in enumerate(keys)
    ]
    tokenizers = [_tokenizer(column, item_separator, key_separator) for column in columns]
    yield opening
    for start in range(0, n, BLOCK_ROWS):
        stop = min(start + BLOCK_ROWS, n)
        count = stop - start
        width = 2 * len(keys) + 1
        parts: list[str] = [""] * (count * width)
        for i, tokens in enumerate(tokenizers):
            parts[2 * i::width] = [prefixes[i]] * count
            parts[2 * i + 1::width] = tokens(start, stop)
        parts[width - 1::width] = ["}" + row_separator] * count
        if stop == n:
            parts[-1] = "}"
        yield "".join(parts)
    yield closing


def _rows_one_by_one(table: ResourceTable, opening: str, row_separator: str, closing: str,
                     key_separator: str, item_separator: str) -> Iterator[str]:
    encode = json.JSONEncoder(separators=(item_separator, key_separator), ensure_ascii=False,
                              allow_nan=False).encode
    rows = table.rows()
    yield opening
    for start in range(0, len(rows), BLOCK_ROWS):
        yield ("" if start == 0 else row_separator) + row_separator.join(map(encode, rows[start:start + BLOCK_ROWS]))
    yield closing


# -- tokens of one column ---------------------------------------------------------------

Tokenizer = Callable[[int, int], "list[str]"]

#: Values sampled to decide whether a number column repeats enough to tokenize distinct values once.
_SAMPLE = 4096


def _finite_floats(values: Any) -> None:
    """ValueError like json.dumps(allow_nan=False) when a float is NaN or infinite."""
    try:
        total = math.fsum(values)
    except (OverflowError, ValueError):
        total = math.inf
    if math.isfinite(total):
        return
    for value in values:
        if not math.isfinite(value):
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")


def _tokenizer(column: list | PackedColumn, item_separator: str, key_separator: str) -> Tokenizer:
    """A function giving the JSON tokens of rows ``start:stop`` of ``column``."""

    def encode(value: Any) -> str:
        return json.dumps(value, separators=(item_separator, key_separator), ensure_ascii=False, allow_nan=False)

    if isinstance(column, PackedColumn):
        numbers = column.numbers()
        if column.kind == "dict":
            table = [encode(v) for v in column.values or ()]
            return lambda start, stop: list(map(table.__getitem__, numbers[start:stop]))
        return _number_tokenizer(numbers, column.kind == "f64")
    kinds = set(map(type, column))
    if kinds == {float} or kinds == {int}:
        return _number_tokenizer(column, kinds == {float})
    if kinds == {str}:
        strings = {value: _encode_string(value) for value in dict.fromkeys(column)}
        return lambda start, stop: list(map(strings.__getitem__, column[start:stop]))
    return _generic_tokenizer(column, encode)


def _number_tokenizer(numbers: Any, floats: bool) -> Tokenizer:
    represent = float.__repr__ if floats else int.__repr__
    if not floats and len(numbers) > _SAMPLE:
        low, high = min(numbers), max(numbers)
        if high - low < len(numbers) // 4:
            # integers of a narrow range (sizes, counts): one token per possible value
            table = {value: represent(value) for value in range(low, high + 1)}
            return lambda start, stop: list(map(table.__getitem__, numbers[start:stop]))
    sample = dict.fromkeys(numbers[:_SAMPLE])
    # repeated values (sizes, rounded amounts): each distinct one is written once; 0.0 and -0.0
    # are equal keys, so columns holding a zero take the plain way
    if len(sample) * 4 < min(len(numbers), _SAMPLE) and not (floats and 0.0 in sample):
        cache: dict[Any, str] = {}

        def repeated(start: int, stop: int) -> list[str]:
            block = numbers[start:stop]
            if floats:
                _finite_floats(block)
            for value in dict.fromkeys(block):
                if value not in cache:
                    if floats and value == 0.0:
                        return list(map(represent, block))
                    cache[value] = represent(value)
            return list(map(cache.__getitem__, block))

        return repeated

    def plain(start: int, stop: int) -> list[str]:
        block = numbers[start:stop]
        if floats:
            _finite_floats(block)
        return number_tokens(block.tolist() if isinstance(block, array) else block)

    return plain


def _generic_tokenizer(column: list, encode: Callable[[Any], str]) -> Tokenizer:
    # each distinct value once; nested values shared between rows are recognised by identity,
    # scalars by (type, value) so 1, 1.0 and True stay apart
    by_identity: dict[int, str] = {}
    by_value: dict[tuple, str] = {}

    def tokens(start: int, stop: int) -> list[str]:
        out = []
        append = out.append
        for value in column[start:stop]:
            kind = type(value)
            if kind is dict or kind is list:
                token = by_identity.get(id(value))
                if token is None:
                    token = by_identity[id(value)] = encode(value)
            else:
                try:
                    token = by_value.get((kind, value))
                    if token is None:
                        token = by_value[(kind, value)] = encode(value)
                except TypeError:  # unhashable
                    token = encode(value)
            append(token)
        return out

    return tokens
