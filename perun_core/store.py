"""Content-addressed profile objects in ``.perun/objects`` (spec 000 "Perun Storage").

An object is ``zlib(b"profile <type> <length>\\0" + content)`` stored at
``objects/<sha[:2]>/<sha[2:]>`` where ``sha`` is the SHA-1 of the
uncompressed bytes, so identical profiles are stored once.  ``content`` is
JSON: the columnar encoding of :mod:`perun_core.profile.codec`, or the
documented form for objects written by the original tool.  Every read
recomputes the SHA-1; a mismatch is :class:`~perun_core.errors.CorruptObject`.
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

from .errors import CorruptObject, InvalidProfile
from .fsutil import atomic_write
from .profile.codec import decode_content, encode_columnar
from .profile.model import Profile

_SIGNATURE = b"profile"
# Large objects are compressed faster at a small cost in size, and in
# parallel chunks above a few megabytes.
_FAST_LEVEL_ABOVE = 1 << 20
_PARALLEL_ABOVE = 8 << 20


def compress(raw: bytes) -> bytes:
    """A standard zlib stream of ``raw`` (any zlib.decompress reads it).

    Big inputs are split into chunks deflated on separate threads (zlib
    releases the GIL): each chunk but the last ends on a full flush, so the
    raw deflate pieces concatenate into one valid stream; a zlib header and
    the Adler-32 of the whole input frame them.
    """
    if len(raw) <= _PARALLEL_ABOVE:
        return zlib.compress(raw, 1 if len(raw) > _FAST_LEVEL_ABOVE else 6)
    import os
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, min(os.cpu_count() or 1, 8))
    size = -(-len(raw) // (workers * 2))
    view = memoryview(raw)
    chunks = [view[i : i + size] for i in range(0, len(raw), size)]

    def deflate(item: tuple[int, memoryview]) -> bytes:
        index, chunk = item
        engine = zlib.compressobj(1, zlib.DEFLATED, -15)
        last = index == len(chunks) - 1
        return engine.compress(chunk) + engine.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)

    with ThreadPoolExecutor(workers) as pool:
        pieces = list(pool.map(deflate, enumerate(chunks)))
    header = b"\x78\x01"  # deflate, 32 KiB window, fastest level; the check bits make it divisible by 31
    return header + b"".join(pieces) + zlib.adler32(raw).to_bytes(4, "big")


def object_path(objects_dir: Path, sha: str) -> Path:
    return objects_dir / sha[:2] / sha[2:]


def build_object(profile_type: str, content: bytes) -> tuple[str, bytes]:
    """Header + content and its SHA-1, before compression."""
    raw = b"%s %s %d\0" % (_SIGNATURE, profile_type.encode("utf-8"), len(content)) + content
    return hashlib.sha1(raw).hexdigest(), raw


def parse_object(raw: bytes, sha: str, path: Path) -> tuple[str, bytes]:
    """Split verified, decompressed bytes into (profile type, content)."""
    end = raw.find(b"\0", 0, 512)
    if end < 0 or not raw.startswith(_SIGNATURE + b" "):
        raise CorruptObject(sha, path, "missing 'profile <type> <length>' header")
    fields = raw[len(_SIGNATURE) + 1 : end].rsplit(b" ", 1)
    if len(fields) != 2 or not fields[1].isdigit():
        raise CorruptObject(sha, path, "malformed header")
    content = raw[end + 1 :]
    if int(fields[1]) != len(content):
        raise CorruptObject(sha, path, f"header says {int(fields[1])} bytes, object holds {len(content)}")
    return fields[0].decode("utf-8", "replace"), content


class ObjectStore:
    """Profile objects under one ``objects`` directory."""

    def __init__(self, objects_dir: Path) -> None:
        self.objects_dir = Path(objects_dir)

    def path_of(self, sha: str) -> Path:
        return object_path(self.objects_dir, sha)

    def exists(self, sha: str) -> bool:
        return self.path_of(sha).is_file()

    def write_profile(self, profile: Profile) -> str:
        """Store ``profile`` (its origin is not part of the object); returns the SHA-1."""
        sha, raw = build_object(profile.type, encode_columnar(profile))
        path = self.path_of(sha)
        if path.is_file():
            return sha  # same content already stored: objects are immutable
        atomic_write(path, compress(raw))
        return sha

    def read_raw(self, sha: str) -> tuple[str, bytes]:
        """(profile type, content) of a verified object."""
        path = self.path_of(sha)
        try:
            compressed = path.read_bytes()
        except FileNotFoundError:
            raise CorruptObject(sha, path, "object is missing") from None
        except OSError as exc:
            raise CorruptObject(sha, path, f"cannot be read: {exc.strerror}") from None
        try:
            raw = zlib.decompress(compressed)
        except zlib.error as exc:
            raise CorruptObject(sha, path, f"does not decompress ({exc})") from None
        actual = hashlib.sha1(raw).hexdigest()
        if actual != sha:
            raise CorruptObject(sha, path, f"checksum mismatch (content hashes to {actual})")
        return parse_object(raw, sha, path)

    def read_profile(self, sha: str) -> Profile:
        path = self.path_of(sha)
        _, content = self.read_raw(sha)
        try:
            return decode_content(content, path=path)
        except InvalidProfile as exc:
            raise CorruptObject(sha, path, exc.reason) from None
