"""Objects and indexes: formats, checksums, versions and concurrency."""

from __future__ import annotations

import hashlib
import multiprocessing
import zlib
from pathlib import Path

import pytest

from perun_core.errors import CorruptIndex, CorruptObject, UnsupportedFormatVersion
from perun_core.storage.index import IndexEntry, decode_index, encode_index, encode_index_v1, read_index, write_index
from perun_core.profile import Profile
from perun_core.storage.objects import ObjectStore

from conftest import time_profile


def test_object_layout_matches_spec(tmp_path):
    store = ObjectStore(tmp_path)
    profile = Profile.from_dict(time_profile(None))
    sha = store.write_profile(profile)
    path = tmp_path / sha[:2] / sha[2:]
    raw = zlib.decompress(path.read_bytes())
    assert hashlib.sha1(raw).hexdigest() == sha
    header, content = raw.split(b"\0", 1)
    assert header == b"profile time %d" % len(content)
    assert store.read_profile(sha) == profile


def test_identical_profiles_are_stored_once_per_origin(tmp_path):
    store = ObjectStore(tmp_path)
    a = store.write_profile(Profile.from_dict(time_profile("1" * 40)))
    again = store.write_profile(Profile.from_dict(time_profile("1" * 40)))
    b = store.write_profile(Profile.from_dict(time_profile("2" * 40)))
    assert a == again and a != b  # the origin is part of the object
    assert store.read_profile(a).origin == "1" * 40 and store.read_profile(b).origin == "2" * 40
    assert len([p for p in tmp_path.rglob("*") if p.is_file()]) == 2


def test_flipped_byte_is_detected(tmp_path):
    store = ObjectStore(tmp_path)
    sha = store.write_profile(Profile.from_dict(time_profile(None)))
    path = tmp_path / sha[:2] / sha[2:]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptObject) as info:
        store.read_profile(sha)
    assert sha in str(info.value)


def test_documented_json_objects_of_the_original_tool_stay_readable(tmp_path):
    content = b'{"header": {"type": "time"}, "snapshots": [{"resources": [{"amount": 1, "uid": "f"}]}]}'
    raw = b"profile time %d\0" % len(content) + content
    sha = hashlib.sha1(raw).hexdigest()
    (tmp_path / sha[:2]).mkdir()
    (tmp_path / sha[:2] / sha[2:]).write_bytes(zlib.compress(raw))
    profile = ObjectStore(tmp_path).read_profile(sha)
    assert profile.snapshots[0].resources.rows() == [{"amount": 1, "uid": "f"}]


def store_raw(objects: Path, raw: bytes) -> str:
    """Store ``raw`` (header and content) as an object the way any zlib writer could; returns its name."""
    sha = hashlib.sha1(raw).hexdigest()
    (objects / sha[:2]).mkdir(parents=True, exist_ok=True)
    (objects / sha[:2] / sha[2:]).write_bytes(zlib.compress(raw))
    return sha


def test_objects_inflate_into_a_buffer_sized_by_their_header(tmp_path):
    from perun_core.storage.objects import _inflated_size

    store = ObjectStore(tmp_path)
    profile = Profile.from_dict(time_profile(None, amounts=[0.25 * i for i in range(20000)]))
    sha = store.write_profile(profile)
    compressed = (tmp_path / sha[:2] / sha[2:]).read_bytes()
    assert _inflated_size(compressed) == len(zlib.decompress(compressed))
    assert store.read_profile(sha) == profile
    kind, content = store.read_raw(sha)
    assert kind == "time" and bytes(content) == zlib.decompress(compressed).split(b"\0", 1)[1]


def test_object_header_claiming_more_than_deflate_can_make_is_not_trusted(tmp_path):
    from perun_core.storage.objects import _inflated_size

    content = b'{"header": {"type": "time"}, "snapshots": []}'
    lying = b"profile time %d\0" % 10**15 + content
    assert _inflated_size(zlib.compress(lying)) == zlib.DEF_BUF_SIZE  # never a petabyte buffer
    assert _inflated_size(b"\x78\x9cnot deflate") == zlib.DEF_BUF_SIZE
    sha = store_raw(tmp_path, lying)
    with pytest.raises(CorruptObject, match="header says 1000000000000000 bytes"):
        ObjectStore(tmp_path).read_profile(sha)


def test_original_objects_whose_header_counts_characters_stay_readable(tmp_path):
    # the original's header counts the characters of the JSON: fewer than its bytes past ASCII
    content = '{"header": {"type": "time"}, "snapshots": [{"resources": [{"amount": 1, "uid": "f\u00e9\u00e9"}]}]}'
    raw = b"profile time %d\0" % len(content) + content.encode("utf-8")
    sha = store_raw(tmp_path, raw)
    profile = ObjectStore(tmp_path).read_profile(sha)
    assert profile.snapshots[0].resources.rows() == [{"amount": 1, "uid": "f\u00e9\u00e9"}]


def entry(n: int, **meta) -> IndexEntry:
    return IndexEntry(1700000000.5 + n, hashlib.sha1(b"%d" % n).hexdigest(), f"prof {n}.perf", "time", "ls",
                      "-l a", "w", "time", ("normalizer", "regression analysis"), **meta)


def test_index_round_trip(tmp_path):
    entries = [entry(i) for i in range(3)]
    path = tmp_path / "idx"
    write_index(path, entries)
    assert path.read_bytes()[:4] == b"pidx"
    assert read_index(path) == entries
    assert read_index(tmp_path / "missing") == []


def test_version_one_index_is_readable(tmp_path):
    entries = [entry(i) for i in range(2)]
    decoded = decode_index(encode_index_v1(entries), "idx")
    assert [(e.checksum, e.path, e.time) for e in decoded] == [(e.checksum, e.path, float(int(e.time))) for e in entries]
    assert not decoded[0].has_metadata


@pytest.mark.parametrize("damage", ["truncate", "flip", "magic", "empty"])
def test_damaged_index_is_reported(damage):
    data = bytearray(encode_index([entry(1), entry(2)]))
    if damage == "truncate":
        data = data[:-7]
    elif damage == "flip":
        data[30] ^= 0xFF
    elif damage == "magic":
        data[0:4] = b"xidx"
    else:
        data = bytearray()
    with pytest.raises(CorruptIndex) as info:
        decode_index(bytes(data), "the/index")
    assert "the/index" in str(info.value)


def test_newer_index_version_is_refused():
    body = b"pidx" + (99).to_bytes(4, "big") + (0).to_bytes(4, "big")
    with pytest.raises(UnsupportedFormatVersion):
        decode_index(body + hashlib.sha1(body).digest(), "idx")


def _register(args):
    root, minor, n = args
    from perun_core.storage.repository import PerunRepository

    repo = PerunRepository(Path(root))
    repo.register(minor, Profile.from_dict(time_profile(None, cmd=f"cmd{n}")), f"p{n}.perf", 1.0 + n)


def test_concurrent_registrations_lose_nothing(tmp_path):
    (tmp_path / ".perun" / "objects").mkdir(parents=True)
    minor = "ab" * 20
    with multiprocessing.get_context("fork").Pool(8) as pool:
        pool.map(_register, [(str(tmp_path), minor, n) for n in range(16)])
    from perun_core.storage.repository import PerunRepository

    entries = PerunRepository(tmp_path).read_index(minor)
    assert sorted(e.path for e in entries) == sorted(f"p{n}.perf" for n in range(16))


def test_change_records_round_trip(perun_repo):
    from perun_core.storage.changes import any_changes, read_changes, write_changes
    from perun_core.storage.repository import PerunRepository

    root, shas = perun_repo
    repo = PerunRepository(root)
    assert not any_changes(repo) and read_changes(repo, shas[0]) == ""
    write_changes(repo, shas[0], ["-", "+", "x", "-"])
    assert any_changes(repo) and read_changes(repo, shas[0]) == "-+-"


@pytest.mark.parametrize("size", [0, 100, (8 << 20) + 1, (21 << 20) + 3])
def test_compress_gives_a_standard_zlib_stream(size):
    import os

    from perun_core.storage.objects import compress

    raw = os.urandom(size // 2) + b"profile " * (size // 16)
    assert zlib.decompress(compress(raw)) == raw


@pytest.mark.parametrize("sizes", [[10], [3 << 20] * 3, [9 << 20, 1, 5 << 20], [4 << 20] * 4, [(8 << 20) + 1]])
def test_deflater_of_pieces_is_one_zlib_stream(sizes):
    import random

    from perun_core.storage.objects import Deflater

    rng = random.Random(len(sizes))
    pieces = [bytes(rng.getrandbits(8) % 7 + 48 for _ in range(1000)) * (size // 1000) + b"x" * (size % 1000)
              for size in sizes]
    deflater = Deflater()
    for piece in pieces:
        deflater.feed(piece)
    prefix = b"profile time 12\0"
    assert zlib.decompress(deflater.finish(prefix)) == prefix + b"".join(pieces)
