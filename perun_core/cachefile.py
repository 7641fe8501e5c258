"""The files of ``.perun/cache``: one document format, one file signature, one write path.

Everything perun keeps there is derived data, rebuilt whenever it is
missing, damaged, of another version or out of date; a cache is only a
shortcut, so reading one never fails.

* Format: one line of JSON, ``{"format":N,"checksum":"<sha1>",<labels>,"<name>":<payload>}``.
  The checksum covers the exact bytes of the payload, so a reader checks
  it before parsing anything; ``labels`` are short strings naming what the
  payload belongs to (the history cache's ``start`` commit), checked too.
* Out of date: an entry that stands for a file carries the file's
  :func:`file_signature` (size, modification time in nanoseconds, inode and
  mode) and is used only while the file still has it; a file replaced by
  an atomic rename changes inode even within one timestamp tick.  An
  entry that stands for a text (a parsed configuration) is keyed by the
  text's digest instead, which is stronger where the text is read anyway.
* Writing: :func:`write`, through :func:`perun_core.atomic.write_when_done`:
  a command line command writes its caches once it has succeeded, so one
  that fails leaves every file as it was; a process that runs no command
  (the TUI, a library user) writes at once.  A cache that cannot be
  written is a missed speed-up, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from .atomic import write_when_done

__all__ = ["decode", "encode", "file_signature", "read", "signature_of", "write"]

_HEADER = re.compile(rb'\{"format":(\d{1,6}),"checksum":"([0-9a-f]{40})",')
_LABEL = re.compile(rb'"([a-z_]{1,32})":"([^"\\]{0,200})",')
_NAME = re.compile(rb'"([a-z_]{1,32})":')


def signature_of(found: os.stat_result) -> list[int]:
    """The signature of a file from its stat: (size, mtime in ns, inode, mode)."""
    return [found.st_size, found.st_mtime_ns, found.st_ino, found.st_mode]


def file_signature(path: str | bytes | Path, *, follow_symlinks: bool = True) -> list[int] | None:
    """:func:`signature_of` the file at ``path`` (the link itself unless ``follow_symlinks``); None when missing."""
    try:
        return signature_of(os.stat(path, follow_symlinks=follow_symlinks))
    except OSError:
        return None


def encode(version: int, payload: Any, *, name: str = "entries", **labels: str) -> bytes:
    """The document of ``payload`` in the cache format (see the module documentation)."""
    try:
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a file name's undecodable byte) stays escaped
        body = json.dumps(payload, separators=(",", ":")).encode("ascii")
    head = f'{{"format":{version},"checksum":"{hashlib.sha1(body).hexdigest()}",'
    head += "".join(f'"{key}":"{value}",' for key, value in labels.items())
    return f'{head}"{name}":'.encode() + body + b"}"


def decode(data: bytes, version: int, *, name: str = "entries", **labels: str) -> Any | None:
    """The payload of a cache document; None unless it is whole, of ``version``, with these ``labels`` and ``name``."""
    header = _HEADER.match(data)
    if header is None or int(header.group(1)) != version or not data.endswith(b"}"):
        return None
    position = header.end()
    found: dict[str, str] = {}
    while (label := _LABEL.match(data, position)) is not None:
        found[label.group(1).decode()] = label.group(2).decode("utf-8", "replace")
        position = label.end()
    key = _NAME.match(data, position)
    if found != labels or key is None or key.group(1).decode() != name:
        return None
    body = data[key.end():-1]
    if hashlib.sha1(body).hexdigest().encode("ascii") != header.group(2):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def read(path: Path, version: int, *, name: str = "entries", **labels: str) -> Any | None:
    """:func:`decode` the cache file ``path``; None when it is missing or unreadable."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return decode(data, version, name=name, **labels)


def write(path: Path, data: bytes) -> bool:
    """Write a cache document atomically (see the module documentation); False if it could not be written."""
    return write_when_done(path, data)
