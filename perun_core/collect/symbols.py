"""Addresses of a finished process as functions, source files and lines.

The native collectors record raw addresses plus a copy of the process's
``/proc/<pid>/maps``.  :class:`ProcessMaps` finds the object file and file
offset of an address, :func:`file_offset_to_vaddr` turns that offset into
the object's own virtual address (from its ``PT_LOAD`` program headers, so
position-independent executables, shared libraries and objects linked with
unusual layouts all work), and :func:`addr2line` asks binutils' addr2line
for function, file and line, one batch per object file.  Inlined calls
become frames of their own (innermost first), as ``addr2line -i`` reports
them.  :class:`Symbolizer` ties these together and caches every answer.

Answers for objects of the system's library directories (the C library,
libstdc++, ...) are also kept on disk, in ``symbols/`` of perun's cache
directory (see :func:`perun_core.native.build.cache_dir`): the C library's
debug information alone takes addr2line tens of milliseconds to load, on
every run, for the same few addresses.  A file of the cache belongs to one
object as it is now (path, inode, size, modification time) and to the
separate debug files addr2line would read for it, so a changed library or
newly installed debug information is looked up afresh.  With
``DEBUGINFOD_URLS`` set (answers may come from a server) nothing is cached.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import os
import shutil
import struct
import subprocess
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..atomic import atomic_write
from ..errors import ExternalToolError
from ..native.build import cache_dir

__all__ = [
    "Frame",
    "HOW_TO_GET_BINUTILS",
    "ProcessMaps",
    "Region",
    "Symbolizer",
    "add_function_lines",
    "addr2line",
    "function_lines",
    "file_offset_to_vaddr",
    "load_segments",
    "parse_maps",
]

HOW_TO_GET_BINUTILS = "install binutils (Debian/Ubuntu: apt-get install binutils)"
#: Objects under these directories have their answers kept on disk (see the module docstring).
STABLE_DIRS = ("/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libexec/")
_DEBUG_ROOT = "/usr/lib/debug"


@dataclass(frozen=True, slots=True)
class Region:
    """An executable, file-backed mapping of a process."""

    start: int
    end: int
    offset: int
    path: str


@dataclass(frozen=True, slots=True)
class Frame:
    """One symbolized frame; ``source`` is None when the object has no line information."""

    function: str
    source: str | None
    line: int

    def as_dict(self) -> dict:
        """The frame in the documented form (``unreachable`` / 0 without line information)."""
        return {"function": self.function, "source": self.source or "unreachable", "line": self.line}


def parse_maps(text: str) -> list[Region]:
    """The executable file mappings listed in ``text`` (one or more copies of a maps file).

    When copies disagree about an address range, the later one wins.
    """
    found: dict[tuple[int, int], Region] = {}
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/"):
            continue
        low, _, high = parts[0].partition("-")
        try:
            region = Region(int(low, 16), int(high, 16), int(parts[2], 16), parts[5].strip())
        except ValueError:
            continue
        for key in [k for k in found if k[0] < region.end and region.start < k[1]]:
            del found[key]
        found[(region.start, region.end)] = region
    return sorted(found.values(), key=lambda r: r.start)


class ProcessMaps:
    """The executable mappings of one process, searchable by address."""

    def __init__(self, regions: Sequence[Region]) -> None:
        self.regions = sorted(regions, key=lambda r: r.start)
        self._starts = [r.start for r in self.regions]

    @classmethod
    def from_text(cls, text: str) -> ProcessMaps:
        return cls(parse_maps(text))

    def locate(self, address: int) -> tuple[str, int] | None:
        """``(object path, file offset)`` of ``address``, or None outside every mapping."""
        index = bisect.bisect_right(self._starts, address) - 1
        if index < 0:
            return None
        region = self.regions[index]
        if not region.start <= address < region.end:
            return None
        return region.path, address - region.start + region.offset


@functools.lru_cache(maxsize=256)
def load_segments(path: str) -> tuple[tuple[int, int, int], ...]:
    """``(file offset, virtual address, file size)`` of each PT_LOAD segment of an ELF file.

    Empty when the file cannot be read or is not ELF.
    """
    try:
        with open(path, "rb") as handle:
            ident = handle.read(64)
            if len(ident) < 52 or ident[:4] != b"\x7fELF":
                return ()
            wide = ident[4] == 2
            order = "<" if ident[5] == 1 else ">"
            if wide:
                phoff, = struct.unpack_from(order + "Q", ident, 32)
                phentsize, phnum = struct.unpack_from(order + "HH", ident, 54)
            else:
                phoff, = struct.unpack_from(order + "I", ident, 28)
                phentsize, phnum = struct.unpack_from(order + "HH", ident, 42)
            handle.seek(phoff)
            table = handle.read(phentsize * phnum)
    except OSError:
        return ()
    segments = []
    for index in range(phnum):
        entry = table[index * phentsize:(index + 1) * phentsize]
        if len(entry) < (56 if wide else 32):
            break
        if wide:
            kind, _, offset, vaddr, _, filesz = struct.unpack_from(order + "IIQQQQ", entry)
        else:
            kind, offset, vaddr, _, filesz = struct.unpack_from(order + "IIIII", entry)
        if kind == 1:  # PT_LOAD
            segments.append((offset, vaddr, filesz))
    return tuple(segments)


def file_offset_to_vaddr(path: str, offset: int) -> int:
    """The virtual address (as the object's symbols and line tables use it) of a file offset.

    Falls back to the offset itself when no segment contains it (what
    ``addr2line`` expects of the usual layouts anyway).
    """
    for segment_offset, vaddr, size in load_segments(path):
        if segment_offset <= offset < segment_offset + max(size, 1):
            return offset - segment_offset + vaddr
    return offset


def _parse_location(text: str) -> tuple[str | None, int]:
    location = text.split(" (discriminator", 1)[0].strip()
    source, _, line = location.rpartition(":")
    if not source or source == "??":
        return None, 0
    return source, int(line) if line.isdigit() else 0


def addr2line(path: str, addresses: Sequence[int], *, inlines: bool = True,
              timeout: float = 300) -> dict[int, list[tuple[str | None, str | None, int]]]:
    """``(function, source, line)`` frames per address of the object ``path``, innermost first.

    Unknown functions and sources are None (line 0).  Addresses are the
    object's virtual addresses.  Raises ExternalToolError without addr2line.
    Answers for system libraries come from (and go to) the disk cache.
    """
    tool = shutil.which("addr2line")
    if tool is None:
        raise ExternalToolError("addr2line", HOW_TO_GET_BINUTILS)
    if not addresses or not os.path.isfile(path):
        return {}
    cache = _cache_file(path, inlines)
    known = _read_cache(cache) if cache is not None else {}
    missing = [a for a in addresses if a not in known]
    if missing:
        answers = _run_addr2line(tool, path, missing, inlines, timeout)
        if answers is None:
            return {a: known[a] for a in addresses if a in known}
        for address in missing:
            known[address] = answers.get(address, [])
        if cache is not None:
            _write_cache(cache, known)
    return {a: known[a] for a in addresses if known.get(a)}


def _run_addr2line(tool: str, path: str, addresses: Sequence[int], inlines: bool,
                   timeout: float) -> dict[int, list[tuple[str | None, str | None, int]]] | None:
    """What addr2line answers for ``addresses``; None when it cannot be run."""
    command = [tool, "-e", path, "-a", "-f", "-C"] + (["-i"] if inlines else [])
    try:
        done = subprocess.run(command, input="\n".join(f"{a:#x}" for a in addresses), capture_output=True,
                              text=True, errors="replace", timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    result: dict[int, list[tuple[str | None, str | None, int]]] = {}
    current: list | None = None
    lines = done.stdout.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("0x") and _is_hex(line[2:]):
            current = result.setdefault(int(line, 16), [])
            index += 1
            continue
        if current is None or index + 1 >= len(lines):
            break
        function = None if line.strip() == "??" else line.strip()
        source, number = _parse_location(lines[index + 1])
        current.append((function, source, number))
        index += 2
    return result


def _cache_file(path: str, inlines: bool) -> str | None:
    """The cache file of the answers for object ``path``, None when its answers are not cached."""
    real = os.path.realpath(path)
    if os.environ.get("DEBUGINFOD_URLS") or not real.startswith(STABLE_DIRS):
        return None
    try:
        info = os.stat(real)
    except OSError:
        return None
    key = [real, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, inlines]
    for debug in _debug_files(real):
        try:
            found = os.stat(debug)
        except OSError:
            continue
        key += [debug, found.st_size, found.st_mtime_ns]

    digest = hashlib.sha1(json.dumps(key).encode()).hexdigest()[:24]
    return str(cache_dir() / "symbols" / f"{os.path.basename(real)}-{digest}.json")


def _debug_files(path: str) -> list[str]:
    """Where separate debug information for ``path`` may be: by build id and by debug link."""
    found = [f"{_DEBUG_ROOT}{path}.debug", f"{_DEBUG_ROOT}{os.path.dirname(path)}"]
    build_id = _build_id(path)
    if build_id:
        found.append(f"{_DEBUG_ROOT}/.build-id/{build_id[:2]}/{build_id[2:]}.debug")
    return found


def _build_id(path: str) -> str | None:
    """The GNU build id of an ELF file (hex), from its PT_NOTE segments; None when it has none."""
    try:
        with open(path, "rb") as handle:
            ident = handle.read(64)
            if len(ident) < 64 or ident[:4] != b"\x7fELF" or ident[4] != 2:
                return None
            order = "<" if ident[5] == 1 else ">"
            phoff, = struct.unpack_from(order + "Q", ident, 32)
            phentsize, phnum = struct.unpack_from(order + "HH", ident, 54)
            handle.seek(phoff)
            table = handle.read(phentsize * phnum)
            for index in range(phnum):
                entry = table[index * phentsize:(index + 1) * phentsize]
                if len(entry) < 56:
                    break
                kind, _, offset, _, _, size = struct.unpack_from(order + "IIQQQQ", entry)
                if kind != 4 or size > 1 << 16:  # PT_NOTE
                    continue
                handle.seek(offset)
                notes = handle.read(size)
                at = 0
                while at + 12 <= len(notes):
                    name_size, desc_size, note_type = struct.unpack_from(order + "III", notes, at)
                    name_at = at + 12
                    desc_at = name_at + (name_size + 3) // 4 * 4
                    if note_type == 3 and notes[name_at:name_at + name_size] == b"GNU\0":
                        return notes[desc_at:desc_at + desc_size].hex() or None
                    at = desc_at + (desc_size + 3) // 4 * 4
    except (OSError, struct.error):
        return None
    return None


def _read_cache(cache: str) -> dict[int, list[tuple[str | None, str | None, int]]]:
    try:
        with open(cache, "rb") as handle:
            stored = json.loads(handle.read())
        return {int(address): [(f, s, int(n)) for f, s, n in frames] for address, frames in stored.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def _write_cache(cache: str, known: dict[int, list[tuple[str | None, str | None, int]]]) -> None:
    data = json.dumps({str(address): frames for address, frames in known.items()}).encode()
    try:
        atomic_write(cache, data, mode=0o600, sync_dir=False)
    except OSError:
        pass


def _is_hex(text: str) -> bool:
    return bool(text) and all(c in "0123456789abcdefABCDEF" for c in text)


class Symbolizer:
    """Frames of the addresses of one process, computed in batches and cached."""

    def __init__(self, maps: ProcessMaps, *, inlines: bool = True) -> None:
        self.maps = maps
        self.inlines = inlines
        self._cache: dict[tuple[int, bool], tuple[Frame, ...]] = {}

    def resolve(self, addresses: Iterable[int], *, return_addresses: bool = True) -> dict[int, tuple[Frame, ...]]:
        """Frames of every address (innermost first; at least one each).

        Return addresses point after their call instruction, so with
        ``return_addresses`` the line of the byte before is looked up.
        """
        addresses = list(addresses)
        wanted = {a for a in addresses if (a, return_addresses) not in self._cache}
        by_object: dict[str, dict[int, list[int]]] = {}
        for address in wanted:
            where = self.maps.locate(address)
            if where is None:
                self._cache[(address, return_addresses)] = (Frame(f"{address:#x}", None, 0),)
                continue
            path, offset = where
            vaddr = file_offset_to_vaddr(path, offset - 1 if return_addresses and offset else offset)
            by_object.setdefault(path, {}).setdefault(vaddr, []).append(address)
        found = self._ask(by_object)
        for path, vaddrs in by_object.items():
            answers = found[path]
            name = os.path.basename(path)
            for vaddr, originals in vaddrs.items():
                for address in originals:
                    offset = self.maps.locate(address)[1]  # type: ignore[index]
                    frames = tuple(
                        Frame(function or f"{name}+{offset:#x}", source, line)
                        for function, source, line in answers.get(vaddr, ())
                    ) or (Frame(f"{name}+{offset:#x}", None, 0),)
                    self._cache[(address, return_addresses)] = frames
        return {a: self._cache[(a, return_addresses)] for a in addresses}

    def _ask(self, by_object: dict[str, dict[int, list[int]]]) -> dict[str, dict]:
        """addr2line's answers per object, the objects asked at the same time (one run each)."""
        found: dict[str, dict] = {}
        failed: list[BaseException] = []

        def ask(path: str) -> None:
            try:
                found[path] = addr2line(path, sorted(by_object[path]), inlines=self.inlines)
            except BaseException as exc:  # re-raised in the calling thread
                failed.append(exc)

        paths = list(by_object)
        workers = [threading.Thread(target=ask, args=(path,), daemon=True) for path in paths[1:]]
        for worker in workers:
            worker.start()
        if paths:
            ask(paths[0])
        for worker in workers:
            worker.join()
        if failed:
            raise failed[0]
        return found

def function_lines(path: str, names: Iterable[str], *, timeout: float = 120) -> dict[str, tuple[str, int]]:
    """``name -> (source file, line)`` of the functions of the object ``path`` named in ``names``.

    The line is the one of the function's first instruction (where its
    definition starts), from the symbol table (``nm``) and the line table
    (``addr2line``) of the object.  Functions the object does not define,
    objects without debug information and missing binutils give nothing:
    callers fall back to the bare name.
    """
    wanted = set(names)
    if not wanted or not os.path.isfile(path) or shutil.which("nm") is None or shutil.which("addr2line") is None:
        return {}
    try:
        done = subprocess.run(["nm", "--defined-only", "-C", path], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    addresses: dict[int, str] = {}
    for line in done.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "TtWwi" and parts[2] in wanted and _is_hex(parts[0]):
            addresses.setdefault(int(parts[0], 16), parts[2])
    if not addresses:
        return {}
    try:
        answers = addr2line(path, sorted(addresses), inlines=False, timeout=timeout)
    except ExternalToolError:
        return {}
    found: dict[str, tuple[str, int]] = {}
    for address, name in addresses.items():
        frames = answers.get(address) or []
        if frames and frames[0][1] and frames[0][2] > 0:
            found.setdefault(name, (str(frames[0][1]), int(frames[0][2])))
    return found


def add_function_lines(rows: Iterable[dict]) -> None:
    """Give the ``function`` rows of a native profile (``uid``, ``object``) the ``source`` and ``line`` of the
    function's definition where the object's debug information knows them (see :func:`function_lines`)."""
    by_object: dict[str, list[dict]] = {}
    for row in rows:
        if row.get("subtype") == "function" and isinstance(row.get("object"), str) and row["object"].startswith("/"):
            by_object.setdefault(row["object"], []).append(row)
    for path, found in by_object.items():
        lines = function_lines(path, {str(row["uid"]) for row in found})
        for row in found:
            where = lines.get(str(row["uid"]))
            if where is not None:
                row.setdefault("source", where[0])
                row["line"] = where[1]
