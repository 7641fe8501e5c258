"""Content-addressed profile objects in ``.perun/objects`` (spec 000 "Perun Storage").

An object is ``zlib(b"profile <type> <length>\\0" + content)`` stored at
``objects/<sha[:2]>/<sha[2:]>`` where ``sha`` is the SHA-1 of the
uncompressed bytes, so identical profiles are stored once.  ``content`` is
JSON: the columnar encoding of :mod:`perun_core.profile.codec`, or the
documented form (objects written by the original tool, and ours in a
repository shared with it, since the original reads that form and not the
columnar one).  Every read
recomputes the SHA-1; a mismatch is :class:`~perun_core.errors.CorruptObject`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CorruptObject, InvalidProfile
from ..atomic import atomic_write

if TYPE_CHECKING:
    from ..profile.model import Profile

_SIGNATURE = b"profile"
# Large objects are compressed faster at a small cost in size, and in
# parallel chunks above a few megabytes.
_FAST_LEVEL_ABOVE = 1 << 20
_PARALLEL_ABOVE = 8 << 20


def compress(raw: bytes) -> bytes:
    """A standard zlib stream of ``raw`` (any zlib.decompress reads it); big inputs on several threads."""
    deflater = Deflater()
    deflater.feed(raw)
    return deflater.finish()


class Deflater:
    """Compresses bytes fed piece by piece into one standard zlib stream.

    Small inputs are compressed in one go at the end.  Past a few megabytes
    the input is cut into chunks deflated on worker threads (zlib releases
    the GIL) while the caller goes on producing pieces: every chunk but the
    last ends on a full flush, so the raw deflate pieces concatenate into
    one valid stream, framed by a zlib header and the Adler-32 of the whole.
    ``prefix`` bytes can be put in front at :meth:`finish`, when they are
    known (an object's header holds the length of what follows).
    """

    CHUNK = 4 << 20

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.size = 0
        self._unsent: list[bytes] = []
        self._unsent_size = 0
        self._pool: Any = None
        self._chunks: list[Any] = []

    def feed(self, piece: bytes) -> None:
        self.pieces.append(piece)
        self.size += len(piece)
        self._unsent.append(piece)
        self._unsent_size += len(piece)
        if self.size > _PARALLEL_ABOVE and self._unsent_size >= self.CHUNK:
            data = b"".join(self._unsent)
            whole = len(data) - len(data) % self.CHUNK
            for start in range(0, whole, self.CHUNK):
                self._submit(memoryview(data)[start:start + self.CHUNK], last=False)
            rest = data[whole:]
            self._unsent, self._unsent_size = [rest], len(rest)

    def _submit(self, chunk: Any, *, last: bool) -> None:
        if self._pool is None:
            import os
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max(1, min(os.cpu_count() or 1, 8)))
        self._chunks.append(self._pool.submit(_deflate_raw, chunk, last))

    def content(self, prefix: bytes = b"") -> bytes:
        """``prefix`` and everything fed, as one bytes object."""
        return prefix + b"".join(self.pieces)

    def finish(self, prefix: bytes = b"") -> bytes:
        """The zlib stream of ``prefix`` followed by everything fed."""
        if self._pool is None:
            raw = self.content(prefix)
            return zlib.compress(raw, 1 if len(raw) > _FAST_LEVEL_ABOVE else 6)
        try:
            self._submit(b"".join(self._unsent), last=True)
            head = _deflate_raw(prefix, False) if prefix else b""
            checksum = zlib.adler32(prefix)
            for piece in self.pieces:
                checksum = zlib.adler32(piece, checksum)
            body = b"".join(future.result() for future in self._chunks)
        finally:
            self._pool.shutdown(wait=True)
            self._pool = None
        header = b"\x78\x01"  # deflate, 32 KiB window, fastest level; the check bits make it divisible by 31
        return header + head + body + checksum.to_bytes(4, "big")


def _deflate_raw(chunk: Any, last: bool) -> bytes:
    engine = zlib.compressobj(1, zlib.DEFLATED, -15)
    return engine.compress(chunk) + engine.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)


def object_checksum(profile: Profile, *, with_origin: bool = True) -> str:
    """The name ``profile`` has (or would have) as a columnar object, computed without storing it.

    Objects carry the commit they are registered at as their origin (so
    fsck can tell where an object no index names belongs); those perun
    wrote before that carry none: ``with_origin=False`` gives their name.
    """
    # lazy: listing and verifying objects (status, log) never encodes a profile
    from ..profile.codec import iter_columnar

    pieces = list(iter_columnar(profile, with_origin=with_origin))
    digest = hashlib.sha1(object_prefix(profile.type, sum(map(len, pieces))))
    for piece in pieces:
        digest.update(piece)
    return digest.hexdigest()


def object_checksums(profile: Profile) -> set[str]:
    """Every name ``profile`` may have as a stored object: with its origin, and as older objects had it."""
    return {object_checksum(profile), object_checksum(profile, with_origin=False)}


def object_path(objects_dir: Path, sha: str) -> Path:
    return objects_dir / sha[:2] / sha[2:]


def object_prefix(profile_type: str, length: int) -> bytes:
    """The header an object's content of ``length`` bytes is stored behind."""
    return b"%s %s %d\0" % (_SIGNATURE, profile_type.encode("utf-8"), length)


def parse_object(raw: bytes, sha: str, path: Path | str) -> tuple[str, memoryview]:
    """Split verified, decompressed bytes into (profile type, content); the content is a view into ``raw``
    (an object's content is megabytes, which a slice would copy)."""
    end = raw.find(b"\0", 0, 512)
    if end < 0 or not raw.startswith(_SIGNATURE + b" "):
        raise CorruptObject(sha, path, "missing 'profile <type> <length>' header")
    fields = raw[len(_SIGNATURE) + 1 : end].rsplit(b" ", 1)
    if len(fields) != 2 or not fields[1].isdigit():
        raise CorruptObject(sha, path, "malformed header")
    content = memoryview(raw)[end + 1 :]
    if int(fields[1]) != len(content) and int(fields[1]) != _characters(content):
        raise CorruptObject(sha, path, f"header says {int(fields[1])} bytes, object holds {len(content)}")
    return fields[0].decode("utf-8", "replace"), content


def _characters(content: bytes | memoryview) -> int:
    """How many characters the UTF-8 ``content`` holds (-1 if it is not UTF-8).

    The original Perun's object header counts the characters of the JSON,
    not its bytes; the two differ only for text outside ASCII.
    """
    if isinstance(content, memoryview):
        content = content.tobytes()
    if content.isascii():
        return len(content)
    try:
        return len(content.decode("utf-8"))
    except UnicodeDecodeError:
        return -1


class ObjectStore:
    """Profile objects under one ``objects`` directory."""

    def __init__(self, objects_dir: Path) -> None:
        self.objects_dir = Path(objects_dir)

    def path_of(self, sha: str) -> Path:
        return object_path(self.objects_dir, sha)

    def exists(self, sha: str) -> bool:
        return self.path_of(sha).is_file()

    def write_profile(self, profile: Profile, *, layout: str = "columnar") -> str:
        """Store ``profile`` with its origin as ``columnar`` or ``documented`` JSON; returns the SHA-1.

        The original Perun drops the origin when it registers a profile; perun
        keeps it (the commit the profile is registered at), so that an object
        an index lost can be put back where it belongs.  The original ignores
        the extra key when it reads such an object.
        """
        sha, compressed = self.encode_profile(profile, layout=layout)
        self.write_encoded(sha, compressed)
        return sha

    def encode_profile(self, profile: Profile, *, layout: str = "columnar") -> tuple[str, bytes]:
        """(SHA-1, compressed object) of ``profile`` as :meth:`write_profile` stores it, nothing written."""
        # lazy: listing and verifying objects (status, log) never encodes a profile
        from ..profile.codec import iter_columnar, iter_json_chunks

        if layout == "columnar":
            pieces = iter_columnar(profile, with_origin=True)
        elif layout == "documented":
            pieces = iter_json_chunks(profile, with_origin=True)
        else:
            raise ValueError(f"unknown object layout {layout!r}; expected 'columnar' or 'documented'")
        # the pieces already encoded are compressed on other threads while the next ones are encoded
        deflater = Deflater()
        for piece in pieces:
            deflater.feed(piece)
        # documented objects are for the original too, whose header counts characters
        length = deflater.size if layout == "columnar" else _characters(deflater.content())
        prefix = object_prefix(profile.type, length)
        return hashlib.sha1(deflater.content(prefix)).hexdigest(), deflater.finish(prefix)

    def write_encoded(self, sha: str, compressed: bytes) -> bool:
        """Store an object :meth:`encode_profile` made; whether it was written (False: it was there already)."""
        path = self.path_of(sha)
        if path.is_file():
            # same content already stored (objects are immutable); its time is renewed, as fsck removes
            # only objects no index names that are older than its --stale-after: this one is about to be named
            with contextlib.suppress(OSError):
                os.utime(path)
            return False
        atomic_write(path, compressed)
        return True

    def read_raw(self, sha: str) -> tuple[str, memoryview]:
        """(profile type, content) of a verified object; the content is a view of the decompressed bytes."""
        return parse_object(verified_raw(self._stored(sha), sha, self.path_of(sha)), sha, self.path_of(sha))

    def read_profile(self, sha: str) -> Profile:
        return profile_of_object(self._stored(sha), sha, self.path_of(sha))

    def _stored(self, sha: str) -> bytes:
        path = self.path_of(sha)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise CorruptObject(sha, path, "object is missing") from None
        except OSError as exc:
            raise CorruptObject(sha, path, f"cannot be read: {exc.strerror}") from None


def verified_raw(compressed: bytes, sha: str, path: Path | str) -> bytes:
    """The decompressed bytes of a stored object, after they hashed to ``sha``; else CorruptObject."""
    try:
        raw = zlib.decompress(compressed, bufsize=_inflated_size(compressed))
    except zlib.error as exc:
        raise CorruptObject(sha, path, f"does not decompress ({exc})") from None
    actual = hashlib.sha1(raw).hexdigest()
    if actual != sha:
        raise CorruptObject(sha, path, f"checksum mismatch (content hashes to {actual})")
    return raw


#: Decompressed bytes enough to hold any object header perun or the original writes.
_HEADER_ROOM = 512
#: The most bytes deflate can make of one compressed byte.
_DEFLATE_MAX_RATIO = 1032


def _inflated_size(compressed: bytes) -> int:
    """How many bytes ``compressed`` inflates to, as its header says, for the size of the output buffer.

    When the buffer is exactly as long as the output, zlib inflates into it
    and hands it over; otherwise the output is gathered in blocks of growing
    size and copied into one at the end.  For the 17 MB content of a
    million-resource profile the estimate saves a sixth of the time
    decompressing takes.  A header that claims more than deflate could
    produce from the stream, or none at all (damage), gives zlib's default
    start, as does a header counting characters (the original's objects
    with text beyond ASCII): the buffer then grows as the output needs.
    """
    try:
        head = zlib.decompressobj().decompress(compressed[:4 * _HEADER_ROOM], _HEADER_ROOM)
    except zlib.error:
        return zlib.DEF_BUF_SIZE  # the whole stream is decompressed next, which reports it
    end = head.find(b"\0")
    fields = head[:end].rsplit(b" ", 1) if end > 0 else []
    if len(fields) != 2 or not fields[1].isdigit():
        return zlib.DEF_BUF_SIZE
    size = end + 1 + int(fields[1])
    return size if size <= len(compressed) * _DEFLATE_MAX_RATIO else zlib.DEF_BUF_SIZE


def profile_of_object(compressed: bytes, sha: str, path: Path | str) -> Profile:
    """The valid profile that the stored bytes of object ``sha`` hold; any damage is CorruptObject.

    The one check every object passes, whether read from ``.perun/objects``
    or received from a remote before it may be stored there.
    """
    # lazy (both): listing and verifying objects (status, log) never decodes a profile
    from ..profile.codec import decode_content
    from ..profile.validate import validate_profile  # lazy: as the line above

    raw = verified_raw(compressed, sha, path)
    _, content = parse_object(raw, sha, Path(path))
    try:
        return validate_profile(decode_content(raw, start=len(raw) - len(content), path=path), path=path)
    except InvalidProfile as exc:
        key = f"key '{exc.key}': " if exc.key else ""
        raise CorruptObject(sha, path, f"invalid profile: {key}{exc.reason}") from None
