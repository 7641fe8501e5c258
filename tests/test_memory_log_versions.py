"""Both layouts of the memory collector's stacks give the same profile; damaged logs read cleanly.

Logs are written here byte by byte in the layout memory.c writes (see its
header comment): version 1 defines every stack whole (a record pointing to
its return addresses in a third stream), version 2 as a tree of suffixes
(id, parent id, address per node).  The same stacks and events written
both ways must give the same resources.  Symbolization is replaced by a
fake one that names each address, so every frame is told apart.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from perun_core.collect import memory, memory_log, memory_stacks
from perun_core.collect.nativelog import BLOCK_MAGIC, FILE_MAGIC, read_logs
from perun_core.collect.symbols import Frame

BLOCK = 4096
PAYLOAD = BLOCK - 32
START = 1_000_000_000

#: distinct stacks by their version 1 ids, innermost first: shared suffixes, a stack that is the outer
#: part of others, the empty stack, the same stack defined twice (a crowded table), a deep one
STACKS = {
    1: (0x1010, 0x1020, 0x1030),
    2: (0x1011, 0x1020, 0x1030),
    3: (0x1020, 0x1030),
    4: (),
    5: (0x1012, 0x1011, 0x1020, 0x1030),
    6: (0x1010, 0x1020, 0x1030),
    7: tuple(0x2000 + 16 * k for k in range(40)),
    8: (0x1030,),
}


def events(count: int = 600) -> list[tuple[int, int, int, int, int]]:
    """(kind, v1 stack id, time, address, size): mallocs and frees over all stacks."""
    rng = np.random.default_rng(3)
    out = []
    for k in range(count):
        stack = int(rng.integers(1, len(STACKS) + 1))
        kind = 4 if k % 3 == 2 else int(rng.choice([1, 2, 3]))
        address = 0x5555_0000 + 16 * int(rng.integers(0, 50))
        out.append((kind, stack, START + 1000 * (k + 1), address, 0 if kind == 4 else int(rng.integers(1, 900))))
    return out


def file_header(version: int) -> bytes:
    head = struct.pack("<IIIIQQQ16sQ", FILE_MAGIC, version, 4242, 1, START, BLOCK, 0, b"memory", 1)
    return head.ljust(BLOCK, b"\0")


def blocks(stream: int, chunks: list[bytes], first_sequence: int = 0, tid: int = 7) -> list[bytes]:
    return [(struct.pack("<IIQIIQ", BLOCK_MAGIC, tid, first_sequence + k, stream, 0, 0) + chunk).ljust(BLOCK, b"\0")
            for k, chunk in enumerate(chunks)]


def pack_records(records: list[bytes]) -> list[bytes]:
    chunks, current = [], b""
    for record in records:
        if len(current) + len(record) > PAYLOAD:
            chunks.append(current)
            current = b""
        current += record
    return [*chunks, current] if current else chunks


def event_records(found: list[tuple[int, int, int, int, int]], stack_id: dict[int, int]) -> list[bytes]:
    return [struct.pack("<QQQQ", kind | stack_id[stack] << 32, time, address, size)
            for kind, stack, time, address, size in found]


def write_v1(path: Path, found: list) -> None:
    frame_chunks, places = [], {}
    current = b""
    for sid, stack in STACKS.items():
        run = b"".join(struct.pack("<Q", a) for a in stack)
        if len(current) + len(run) > PAYLOAD:
            frame_chunks.append(current)
            current = b""
        places[sid] = (1 + len(frame_chunks), len(current))  # file block 0 is the header
        current += run
    frame_chunks.append(current)
    stack_records = [struct.pack("<QQ", 1 | len(stack) << 8 | sid << 32, places[sid][0] | places[sid][1] << 32)
                     for sid, stack in STACKS.items()]
    parts = [file_header(1), *blocks(2, frame_chunks), *blocks(1, pack_records(stack_records)),
             *blocks(0, pack_records(event_records(found, {sid: sid for sid in STACKS})))]
    path.write_bytes(b"".join(parts))


def tree_nodes() -> tuple[list[tuple[int, int, int]], dict[int, int]]:
    """(id, parent, address) nodes as memory.c writes them, and the node id of each v1 stack id."""
    nodes: list[tuple[int, int, int]] = []
    known: dict[tuple[int, ...], int] = {}
    node_of = {}
    for sid, stack in STACKS.items():
        if not stack:
            nodes.append((len(nodes) + 1, len(nodes) + 1, 0))
            node_of[sid] = len(nodes)
            continue
        parent = 0
        for i in range(len(stack) - 1, -1, -1):
            suffix = stack[i:]
            if suffix not in known:
                nodes.append((len(nodes) + 1, parent, stack[i]))
                known[suffix] = len(nodes)
            parent = known[suffix]
        node_of[sid] = parent
    return nodes, node_of


def write_v2(path: Path, found: list, lose: int = 0, scale: int = 1, threads: int = 1) -> None:
    """A version 2 log; ``lose``: the node with this id was never finished (its record reads as zeros).

    ``scale`` multiplies every id (ids far apart); with ``threads`` the nodes
    are dealt out to that many threads, so they are not read in id order.
    """
    nodes, node_of = tree_nodes()
    records = [[] for _ in range(threads)]
    for k, (nid, parent, address) in enumerate(nodes):
        unfinished = nid == lose
        record = struct.pack("<IIQ", 0, 0, 0) if unfinished else struct.pack("<IIQ", nid * scale, parent * scale, address)
        records[(k * 7 + 3) % threads].append(record)
    node_of = {sid: nid * scale for sid, nid in node_of.items()}
    stacks = [b for t, part in enumerate(reversed(records)) for b in blocks(1, pack_records(part), tid=20 - t)]
    parts = [file_header(2), *stacks, *blocks(0, pack_records(event_records(found, node_of)))]
    path.write_bytes(b"".join(parts))


class NamingSymbolizer:
    """Names each address ``f<hex>`` (no addr2line)."""

    def __init__(self, maps) -> None:
        self.maps = maps

    def resolve(self, addresses, **_):
        return {a: (Frame(f"f{a:x}", "/src/prog.c", a & 0xFFF),) for a in addresses}


@pytest.fixture
def naming(monkeypatch):
    monkeypatch.setattr(memory_stacks, "Symbolizer", NamingSymbolizer)


def rows(profile) -> list[dict]:
    return [row for _, region in profile.regions() for row in region.resources.rows()]


def read_one(directory: Path):
    logs = read_logs(directory, "memory")
    assert len(logs) == 1
    return logs[0]


@pytest.mark.parametrize(("full", "scale", "threads"), [(False, 1, 1), (True, 1, 1), (False, 1, 3), (False, 1000, 2)])
def test_both_layouts_give_the_same_profile(tmp_path, naming, full, scale, threads):
    found = events()
    (tmp_path / "v1").mkdir()
    (tmp_path / "v2").mkdir()
    write_v1(tmp_path / "v1" / "memory.4242.log", found)
    write_v2(tmp_path / "v2" / "memory.4242.log", found, scale=scale, threads=threads)
    old, new = read_one(tmp_path / "v1"), read_one(tmp_path / "v2")
    assert (old.version, new.version) == (1, 2)
    params = {"sampling": 0.0002, "all": full}
    old_rows, new_rows = rows(memory.profile_from_logs([old], params)), rows(memory.profile_from_logs([new], params))
    assert old_rows == new_rows and len(new_rows) == len(found)
    for row, (kind, sid, _, address, _) in zip(new_rows, found):
        names = [frame["function"] for frame in row["trace"]]
        assert (names[1:] if full else names) == [f"f{a:x}" for a in STACKS[sid]]
        assert row["address"] == address
    ids, counts, flat = memory_log.stack_records(new)
    node_of = {sid: nid * scale for sid, nid in tree_nodes()[1].items()}
    begins = np.cumsum(counts) - counts
    by_id = {i: tuple(flat[b:b + c].tolist()) for i, b, c in zip(ids.tolist(), begins.tolist(), counts.tolist())}
    assert {sid: by_id[node_of[sid]] for sid in STACKS} == STACKS


def test_a_lost_node_leaves_its_stacks_undefined_and_the_rest_intact(tmp_path, naming):
    found = events()
    nodes, node_of = tree_nodes()
    lost = node_of[3]  # (0x1020, 0x1030): the outer part of stacks 1, 2, 5 and 6
    write_v2(tmp_path / "memory.4242.log", found, lose=lost)
    new_rows = rows(memory.profile_from_logs([read_one(tmp_path)], {"sampling": 1.0}))
    assert len(new_rows) == len(found)
    for row, (_, sid, _, _, _) in zip(new_rows, found):
        stack = STACKS[sid]
        intact = not (len(stack) >= 2 and stack[-2:] == (0x1020, 0x1030))
        assert [f["function"] for f in row["trace"]] == ([f"f{a:x}" for a in stack] if intact else [])


@pytest.mark.parametrize("cut", [BLOCK + 40, BLOCK + 2000, 2 * BLOCK + 100, 2 * BLOCK])
def test_a_cut_version_2_log_reads_cleanly(tmp_path, naming, cut):
    write_v2(tmp_path / "memory.4242.log", events())
    path = tmp_path / "memory.4242.log"
    path.write_bytes(path.read_bytes()[:cut])
    logs = read_logs(tmp_path, "memory")
    tree = memory_log.stack_tree(logs[0])
    assert (tree.parent < np.arange(len(tree.ids))).all()
    found = rows(memory.profile_from_logs(logs, {"sampling": 1.0}))
    assert all(row["subtype"] in memory_log.KINDS.values() for row in found)
