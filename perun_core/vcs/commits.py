"""Commits as perun sees them (minor versions), parsed straight from raw git objects, and small git helpers."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class MinorVersion:
    """One commit, as perun sees it."""

    checksum: str
    date: int
    tz_offset: int
    author: str
    email: str
    desc: str
    parents: tuple[str, ...]

    @property
    def short_desc(self) -> str:
        """The first line of the commit message."""
        return self.desc.split("\n", 1)[0]


@dataclass(frozen=True, slots=True)
class SavedState:
    """Where HEAD pointed when :meth:`GitVcs.save_state` ran.

    ``ref`` is the full name of the branch HEAD was attached to (for example
    ``refs/heads/main``), or None when HEAD was detached; ``sha`` is the commit
    HEAD resolved to (None on an unborn branch); ``dirty`` is whether the
    working tree had uncommitted changes to tracked files.
    """

    ref: str | None
    sha: str | None
    dirty: bool

    @property
    def detached(self) -> bool:
        return self.ref is None


# --------------------------------------------------------------------------- helpers


def _tz_seconds(text: bytes) -> int:
    """``+0130`` -> 5400; anything malformed -> 0."""
    try:
        sign = -1 if text[:1] == b"-" else 1
        digits = text.lstrip(b"+-")
        if not digits.isdigit():
            return 0
        hours, minutes = int(digits[:-2] or b"0"), int(digits[-2:])
        return sign * (hours * 3600 + minutes * 60)
    except (ValueError, IndexError):
        return 0


def _split_ident(ident: bytes) -> tuple[bytes, bytes, int, int]:
    """``Name <email> 1700000000 +0100`` -> (name, email, time, tz seconds)."""
    lt = ident.find(b"<")
    gt = ident.rfind(b">")
    if lt < 0 or gt < lt:
        return ident.strip(), b"", 0, 0
    name = ident[:lt].strip()
    email = ident[lt + 1 : gt]
    rest = ident[gt + 1 :].split()
    when = 0
    tz = 0
    if rest:
        try:
            when = int(rest[0])
        except ValueError:
            when = 0
        if len(rest) > 1:
            tz = _tz_seconds(rest[1])
    return name, email, when, tz


def _decode(data: bytes, encoding: str = "utf-8") -> str:
    try:
        return data.decode(encoding, errors="replace")
    except LookupError:  # unknown encoding header
        return data.decode("utf-8", errors="replace")


_SETTERS = None


def _new_minor(
    checksum: str, date: int, tz_offset: int, author: str, email: str, desc: str, parents: tuple[str, ...]
) -> MinorVersion:
    """Build a MinorVersion about 3x faster than its frozen-dataclass ``__init__``.

    Walks and cache loads create tens of thousands of them; setting the slots
    through their descriptors skips ``object.__setattr__`` round trips.  The
    result is indistinguishable from ``MinorVersion(...)``.
    """
    global _SETTERS
    if _SETTERS is None:
        _SETTERS = tuple(
            getattr(MinorVersion, name).__set__
            for name in ("checksum", "date", "tz_offset", "author", "email", "desc", "parents")
        )
    s0, s1, s2, s3, s4, s5, s6 = _SETTERS
    obj = object.__new__(MinorVersion)
    s0(obj, checksum)
    s1(obj, date)
    s2(obj, tz_offset)
    s3(obj, author)
    s4(obj, email)
    s5(obj, desc)
    s6(obj, parents)
    return obj


def _parse_commit(sha: str, raw: bytes) -> tuple[int, MinorVersion]:
    """Parse a raw commit object; returns (committer time, MinorVersion).

    A fast path covers the canonical layout git writes (tree, parents,
    author, committer, no encoding header); anything else takes the general
    path, which gives the same result for canonical commits.
    """
    try:
        sep = raw.find(b"\n\n")
        header = raw[:sep] if sep >= 0 else raw
        a = header.find(b"\nauthor ")
        c = header.find(b"\ncommitter ", a)
        if a >= 0 and c >= 0 and b"\nencoding " not in header:
            lines = header[:a].split(b"\n")
            if all(line.startswith(b"parent ") for line in lines[1:]):
                ident, when, tz = header[a + 8 : c].rsplit(b" ", 2)
                lt = ident.find(b"<")
                if lt > 0 and ident.endswith(b">") and len(tz) == 5 and tz[1:].isdigit():
                    end = header.find(b"\n", c + 1)
                    committer = header[c + 11 :] if end < 0 else header[c + 11 : end]
                    ctime = int(committer.rsplit(b" ", 2)[1])
                    offset = int(tz[1:3]) * 3600 + int(tz[3:5]) * 60
                    message = raw[sep + 2 :].decode("utf-8", "replace").rstrip("\n") if sep >= 0 else ""
                    return ctime, _new_minor(
                        sha,
                        int(when),
                        -offset if tz[:1] == b"-" else offset,
                        ident[:lt].strip().decode("utf-8", "replace"),
                        ident[lt + 1 : -1].decode("utf-8", "replace"),
                        message,
                        tuple([line[7:].strip().decode("ascii") for line in lines[1:]]),
                    )
    except (ValueError, IndexError):
        pass
    return _parse_commit_general(sha, raw)


def _parse_commit_general(sha: str, raw: bytes) -> tuple[int, MinorVersion]:
    sep = raw.find(b"\n\n")
    if sep < 0:
        header, message = raw, b""
    else:
        header, message = raw[:sep], raw[sep + 2 :]
    parents: list[str] = []
    author = committer = b""
    encoding = "utf-8"
    for line in header.split(b"\n"):
        if line.startswith(b"parent "):
            parents.append(line[7:].strip().decode("ascii", errors="replace"))
        elif line.startswith(b"author "):
            author = line[7:]
        elif line.startswith(b"committer "):
            committer = line[10:]
        elif line.startswith(b"encoding "):
            encoding = line[9:].strip().decode("ascii", errors="replace") or "utf-8"
    name, email, date, tz = _split_ident(author)
    commit_time = _split_ident(committer)[2] if committer else date
    info = _new_minor(
        sha,
        date,
        tz,
        _decode(name, encoding),
        _decode(email, encoding),
        _decode(message, encoding).rstrip("\n"),
        tuple(parents),
    )
    return commit_time, info


def _valid_path_element(name: bytes) -> bool:
    """Reject tree entry names that could escape the destination directory."""
    if name in (b"", b".", b".."):
        return False
    if b"/" in name or b"\0" in name:
        return False
    return name.lower() != b".git"


def _blob_id(data: bytes, width: int = 40) -> bytes:
    header = b"blob %d\0" % len(data)
    digest = hashlib.sha256 if width == 64 else hashlib.sha1
    return digest(header + data).hexdigest().encode("ascii")


def _as_ns(value: Any) -> int:
    """An index entry time (tuple, int or float) in nanoseconds."""
    if isinstance(value, tuple):
        return int(value[0]) * 1_000_000_000 + int(value[1])
    return int(value * 1_000_000_000)
