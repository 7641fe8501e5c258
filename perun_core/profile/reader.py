"""Reading big documented-JSON profiles straight into columns.

``json.loads`` of a profile with a million resources builds a million dicts
(and a million copies of every repeated string) and needs the whole file
twice over, as bytes and as text.  :func:`load_columnwise` reads the file in
blocks instead and turns every resource list into the columns of a
:class:`~perun_core.profile.resources.ResourceTable` as it goes:

* the structure around the resource lists (the top-level object, the
  ``snapshots`` list and the region objects) is walked here; every other
  value is parsed by :mod:`json`'s own scanner (``scan_once``);
* a resource list is parsed in blocks of about :data:`CHUNK` bytes: a block
  ends where a resource ends, found as ``}``, a comma and the opening
  ``{"first-key":`` of the list's first resource.  ``json.loads("[" + block
  + "]")`` succeeds only when the cut really is between two resources (a cut
  inside a string or a nested value leaves the text unbalanced), so a wrong
  guess is detected and the next one tried; the rest of a list is parsed
  resource by resource;
* each block's dicts become column values at once (and repeated strings,
  such as uids and types, one shared object), so only the columns stay.

The result is the same profile ``json.loads`` and
:meth:`Profile.from_dict` give (resources compare equal; their keys come in
the table's column order).  Whenever the text is not what this reader
expects, including every kind of error, it returns None and the caller
parses the file the ordinary way, which reports errors exactly.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import IO, Any

from . import fastjson
from ..errors import InvalidProfile
from .model import Profile
from .resources import MISSING, ResourceTable, _rows_to_columns

__all__ = ["CHUNK", "MINIMUM_SIZE", "load_columnwise"]

#: Files smaller than this are left to json.loads.
MINIMUM_SIZE = 16 << 20
#: Bytes of resources parsed at once.
CHUNK = 2 << 20
#: Bytes read from the file at once.
_BLOCK = 4 << 20
#: Guesses of a block end tried before parsing resource by resource.
_ATTEMPTS = 4

_WHITESPACE = re.compile(rb"[ \t\n\r]*")
_TEXT_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SCAN = json.JSONDecoder().scan_once


class _GiveUp(Exception):
    """The text is not in the shape this reader handles (or is not valid)."""


class _Source:
    """The file's bytes, read in blocks; positions are absolute offsets in the file."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.data = b""
        self.base = 0
        self.eof = False
        self.released = 0

    @property
    def end(self) -> int:
        return self.base + len(self.data)

    def fill(self, end: int) -> None:
        """Read until the buffer reaches absolute offset ``end`` (or the end of the file)."""
        if self.end >= end or self.eof:
            return
        keep = max(self.released - self.base, 0)
        parts = [self.data[keep:]]
        self.base += keep
        have = len(parts[0])
        while self.base + have < end and not self.eof:
            more = self.handle.read(max(_BLOCK, end - self.base - have))
            if not more:
                self.eof = True
            parts.append(more)
            have += len(more)
        self.data = b"".join(parts)

    def release(self, position: int) -> None:
        """Bytes before ``position`` are no longer needed."""
        self.released = position

    def byte(self, position: int) -> int | None:
        self.fill(position + 1)
        offset = position - self.base
        return self.data[offset] if offset < len(self.data) else None

    def skip(self, position: int) -> int:
        while True:
            self.fill(position + 1)
            offset = position - self.base
            stop = _WHITESPACE.match(self.data, offset).end()
            position = self.base + stop
            if stop < len(self.data) or self.eof:
                return position

    def expect(self, position: int, char: bytes) -> int:
        if self.byte(position) != char[0]:
            raise _GiveUp
        return position + 1

    def window(self, position: int, size: int) -> tuple[str, bool]:
        """Text of the bytes from ``position`` (up to ``size``); whether it reaches the end of the file."""
        self.fill(position + size)
        offset = position - self.base
        chunk = self.data[offset:offset + size]
        complete = self.eof and offset + size >= len(self.data)
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(chunk, final=complete)
        except UnicodeDecodeError:
            raise _GiveUp from None
        return text, complete

    def value(self, position: int) -> tuple[Any, int]:
        """The JSON value starting at ``position`` and the offset after it."""
        size = 1 << 16
        while True:
            text, complete = self.window(position, size)
            try:
                found, stop = _SCAN(text, 0)
            except (StopIteration, ValueError):
                if complete:
                    raise _GiveUp from None
                size *= 4
                continue
            if stop == len(text) and not complete:
                size *= 4  # a number may go on past the window
                continue
            return found, position + _byte_length(text, stop)

    def slice(self, start: int, stop: int) -> bytes:
        self.fill(stop)
        return self.data[start - self.base:stop - self.base]

    def search(self, pattern: re.Pattern[bytes], start: int, limit: int) -> int | None:
        """Offset of the first match of ``pattern`` starting in ``start .. start + limit``."""
        self.fill(start + limit + 256)
        found = pattern.search(self.data, start - self.base, start - self.base + limit + 256)
        return None if found is None else self.base + found.start()


def _byte_length(text: str, characters: int) -> int:
    prefix = text[:characters]
    return characters if prefix.isascii() else len(prefix.encode("utf-8"))


class _Columns:
    """Resources added in blocks of dicts, kept as columns."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.columns: list[list] = []
        self.index: dict[str, int] = {}
        self.length = 0
        self.sparse = False
        #: key -> its strings (one object each), or None for a key whose strings are not shared
        self.shared: dict[str, dict[str, str] | None] = {}

    def add(self, rows: list) -> None:
        if not rows:
            return
        if set(map(type, rows)) != {dict}:
            raise _GiveUp  # the ordinary parser names the offending resource
        keys, columns, sparse = _rows_to_columns(rows)
        self.sparse = self.sparse or sparse
        for key, column in zip(keys, columns):
            column = self._share(key, column)
            position = self.index.get(key)
            if position is None:
                self.index[key] = len(self.keys)
                self.keys.append(key)
                self.columns.append([MISSING] * self.length + column)
                self.sparse = self.sparse or self.length > 0
            else:
                self.columns[position].extend(column)
        total = self.length + len(rows)
        for column in self.columns:
            if len(column) < total:
                column.extend([MISSING] * (total - len(column)))
                self.sparse = True
        self.length = total

    def _share(self, key: str, column: list) -> list:
        """Repeated strings (uids, types) become one object each.

        Whether a key's strings repeat is judged on its first block; keys
        with many distinct strings are left alone from then on.
        """
        known = self.shared.get(key)
        if known is None:
            if key in self.shared or type(column[0]) is not str or set(map(type, column)) != {str}:
                return column
            if len(dict.fromkeys(column)) * 4 > len(column):
                self.shared[key] = None  # type: ignore[assignment]
                return column
            known = self.shared[key] = {}
        elif set(map(type, column)) != {str}:
            return column
        shared = list(map(known.setdefault, column, column))
        if len(known) > 1 << 16:
            self.shared[key] = None  # type: ignore[assignment]
        return shared

    def table(self) -> ResourceTable:
        return ResourceTable.from_columns(self.length, self.keys, self.columns, sparse=self.sparse)


class _Reader:
    def __init__(self, source: _Source) -> None:
        self.source = source
        #: id of a region dict -> the dict (kept alive, so ids stay unique) and the table of its resources
        self.tables: dict[int, tuple[dict, ResourceTable]] = {}

    def document(self) -> dict:
        source = self.source
        position = source.skip(0)
        document, position = self.members(position, self.top_member)
        position = source.skip(position)
        if source.byte(position) is not None:
            raise _GiveUp  # extra data
        return document

    def members(self, position: int, member: Any) -> tuple[dict, int]:
        """An object at ``position``; ``member(key, position)`` parses each value."""
        source = self.source
        position = source.skip(source.expect(position, b"{"))
        out: dict = {}
        if source.byte(position) == ord("}"):
            return out, position + 1
        while True:
            if source.byte(position) != ord('"'):
                raise _GiveUp
            key, position = source.value(position)
            position = source.skip(source.expect(source.skip(position), b":"))
            value, position = member(key, position)
            out[key] = value
            position = source.skip(position)
            char = source.byte(position)
            if char == ord(","):
                position = source.skip(position + 1)
            elif char == ord("}"):
                return out, position + 1
            else:
                raise _GiveUp

    def top_member(self, key: str, position: int) -> tuple[Any, int]:
        char = self.source.byte(position)
        if key == "snapshots" and char == ord("["):
            return self.regions(position)
        if key == "global" and char == ord("{"):
            return self.region(position)
        return self.source.value(position)

    def regions(self, position: int) -> tuple[list, int]:
        source = self.source
        position = source.skip(source.expect(position, b"["))
        out: list = []
        if source.byte(position) == ord("]"):
            return out, position + 1
        while True:
            if source.byte(position) == ord("{"):
                region, position = self.region(position)
            else:
                region, position = source.value(position)
            out.append(region)
            position = source.skip(position)
            char = source.byte(position)
            if char == ord(","):
                position = source.skip(position + 1)
            elif char == ord("]"):
                return out, position + 1
            else:
                raise _GiveUp

    def region(self, position: int) -> tuple[dict, int]:
        tables: list[ResourceTable] = []

        def member(key: str, at: int) -> tuple[Any, int]:
            if key == "resources" and self.source.byte(at) == ord("["):
                table, end = self.resources(at)
                tables.append(table)
                return [], end  # Profile.from_dict sees an empty list; the table is put in afterwards
            return self.source.value(at)

        region, position = self.members(position, member)
        if tables:
            self.tables[id(region)] = (region, tables[-1])  # a repeated key counts once, the last time
        return region, position

    def resources(self, position: int) -> tuple[ResourceTable, int]:
        source = self.source
        position = source.skip(source.expect(position, b"["))
        columns = _Columns()
        if source.byte(position) == ord("]"):
            return columns.table(), position + 1
        # where the first resource's first key starts the next ones are found
        text, _complete = source.window(position, 4096)
        opening = re.match(r'\{\s*"(?:[^"\\]|\\.)*"\s*:', text)
        boundary = None
        if opening is not None:
            head = opening.group(0).encode("utf-8")
            boundary = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*" + re.escape(head))
        while True:
            source.release(position)
            if boundary is not None:
                cut = self.block(position, boundary, columns)
                if cut is not None:
                    position = cut
                    continue
            return self.one_by_one(position, columns)

    def block(self, position: int, boundary: re.Pattern[bytes], columns: _Columns) -> int | None:
        """Parse about CHUNK bytes of resources; the position of the next resource, or None to go one by one."""
        source = self.source
        start = position + CHUNK
        for _ in range(_ATTEMPTS):
            cut = source.search(boundary, start, CHUNK)
            if cut is None:
                return None
            try:
                rows = fastjson.loads(b"[" + source.slice(position, cut + 1) + b"]")
            except ValueError:
                start = cut + 1  # inside a string or a nested value: try the next one
                continue
            columns.add(rows)
            return source.skip(source.expect(source.skip(cut + 1), b","))
        return None

    def one_by_one(self, position: int, columns: _Columns) -> tuple[ResourceTable, int]:
        """The rest of a resource list, resource by resource (at most about CHUNK bytes, usually)."""
        source = self.source
        size = CHUNK
        while True:
            text, complete = source.window(position, size)
            rows: list = []
            done = 0  # characters of ``text`` taken by the rows in ``rows``
            offset = 0
            while True:
                try:
                    row, stop = _SCAN(text, offset)
                except (StopIteration, ValueError):
                    if complete:
                        raise _GiveUp from None
                    break
                after = _TEXT_WHITESPACE.match(text, stop).end()
                if after >= len(text):
                    if complete:
                        raise _GiveUp
                    break
                char = text[after]
                if char == "]":
                    rows.append(row)
                    columns.add(rows)
                    return columns.table(), position + _byte_length(text, after + 1)
                if char != ",":
                    raise _GiveUp
                rows.append(row)
                offset = done = _TEXT_WHITESPACE.match(text, after + 1).end()
            if rows:
                columns.add(rows)
                position += _byte_length(text, done)
                source.release(position)
            else:
                size *= 4  # one resource is bigger than the window


def load_columnwise(path: Path | str) -> Profile | None:
    """The profile in the documented-JSON file ``path``, resources read into columns; None to parse it as usual."""

    try:
        with open(path, "rb") as handle:
            source = _Source(handle)
            start = source.slice(0, 4)
            if start.startswith(codecs.BOM_UTF8) or json.detect_encoding(start) != "utf-8":
                return None
            reader = _Reader(source)
            document = reader.document()
    except (_GiveUp, OSError, RecursionError):
        return None
    try:
        profile = Profile.from_dict(document, path=path)
    except InvalidProfile:
        return None
    regions = list(document.get("snapshots") or [])
    if isinstance(document.get("global"), dict):
        regions.append(document["global"])
    snapshots = [*profile.snapshots, *([profile.global_region] if profile.global_region is not None else [])]
    for raw, snapshot in zip(regions, snapshots):
        found = reader.tables.get(id(raw))
        if found is not None and found[0] is raw:
            snapshot.resources = found[1]
    return profile
