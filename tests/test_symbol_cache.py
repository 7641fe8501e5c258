"""addr2line answers for system libraries are kept on disk per object version and reused."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tools import machine_cannot

from perun_core.collect import symbols

pytestmark = pytest.mark.tools("addr2line")


def system_library() -> tuple[str, int]:
    """A system library mapped executable into this process, and a virtual address inside its code."""
    maps = symbols.ProcessMaps.from_text(Path("/proc/self/maps").read_text())
    for region in maps.regions:
        if os.path.realpath(region.path).startswith(symbols.STABLE_DIRS) and region.end - region.start > 0x2000:
            path, offset = maps.locate(region.start + 0x1000)
            return path, symbols.file_offset_to_vaddr(path, offset)
    machine_cannot("a system library mapped executable in this process", "none in /proc/self/maps")


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DEBUGINFOD_URLS", raising=False)
    return tmp_path / "cache" / "perun" / "symbols"


def test_answers_for_a_system_library_come_from_the_cache_the_second_time(cache_home, monkeypatch):
    path, vaddr = system_library()
    first = symbols.addr2line(path, [vaddr, vaddr + 16])
    assert len(list(cache_home.iterdir())) == 1
    asked = []
    real = symbols._run_addr2line
    monkeypatch.setattr(symbols, "_run_addr2line", lambda tool, p, addresses, *a: asked.append(list(addresses))
                        or real(tool, p, addresses, *a))
    assert symbols.addr2line(path, [vaddr, vaddr + 16]) == first
    assert asked == []
    more = symbols.addr2line(path, [vaddr, vaddr + 32])
    assert asked == [[vaddr + 32]]  # only what the cache does not hold is asked
    assert {vaddr: first.get(vaddr)} == {vaddr: more.get(vaddr)}
    assert symbols.addr2line(path, [vaddr], inlines=False) is not None
    assert len(list(cache_home.iterdir())) == 2  # with and without inlined frames are kept apart


def test_the_program_itself_and_debuginfod_answers_are_not_cached(cache_home, tmp_path, monkeypatch):
    program = tmp_path / "prog"
    shutil.copy(shutil.which("true") or "/bin/true", program)
    assert symbols._cache_file(str(program), True) is None
    path, _ = system_library()
    assert symbols._cache_file(path, True) is not None
    monkeypatch.setenv("DEBUGINFOD_URLS", "https://debuginfod.example.org")
    assert symbols._cache_file(path, True) is None


def test_a_changed_library_or_new_debug_information_is_looked_up_afresh(cache_home, tmp_path, monkeypatch):
    library = tmp_path / "lib" / "libx.so"
    library.parent.mkdir()
    library.write_bytes(b"\x7fELF" + bytes(60))
    monkeypatch.setattr(symbols, "STABLE_DIRS", (str(tmp_path / "lib") + "/",))
    before = symbols._cache_file(str(library), True)
    assert before is not None and before == symbols._cache_file(str(library), True)
    library.write_bytes(b"\x7fELF" + bytes(61))
    changed = symbols._cache_file(str(library), True)
    assert changed != before
    debug_root = tmp_path / "debug"
    monkeypatch.setattr(symbols, "_DEBUG_ROOT", str(debug_root))
    without = symbols._cache_file(str(library), True)
    (debug_root / str(library.parent).lstrip("/")).mkdir(parents=True)
    (debug_root / str(library).lstrip("/")).with_name("libx.so.debug").write_bytes(b"debug")
    assert symbols._cache_file(str(library), True) != without


def test_a_damaged_cache_file_is_asked_again(cache_home):
    path, vaddr = system_library()
    first = symbols.addr2line(path, [vaddr])
    cached = next(cache_home.iterdir())
    cached.write_text("{not json")
    assert symbols.addr2line(path, [vaddr]) == first


@pytest.mark.tools("readelf")
def test_the_build_id_is_read_from_the_notes_as_readelf_shows_it():
    import subprocess

    path, _ = system_library()
    shown = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    ids = [line.split(":", 1)[1].strip() for line in shown.splitlines() if "Build ID:" in line]
    assert symbols._build_id(path) == (ids[0] if ids else None)
    assert symbols._build_id("/proc/self/status") is None
