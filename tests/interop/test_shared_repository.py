"""A repository shared with the original Perun, without the original: what perun writes there, and
what the original wrote there after us (tests/fixtures/original/shared/shared-repo.tar.gz)."""

from __future__ import annotations

import json
import tarfile
import zlib
from pathlib import Path

import pytest
from conftest import run_cli, time_profile, write_pending

from perun_core.errors import UnsupportedFormatVersion
from perun_core.storage.index import (ORIGINAL_LAYOUT, PERUN_LAYOUT, IndexEntry, decode_index, encode_index,
                                      encode_original_index, index_layout, read_index, write_index)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "original"
SHARED_HEAD = "7ffdb80620a634fcc3bea6be351c165e4e35328a"


def index_file(root: Path, sha: str) -> Path:
    return root / ".perun" / "objects" / sha[:2] / sha[2:]


def ok(*args: str, cwd: Path) -> str:
    done = run_cli(*args, cwd=cwd)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


@pytest.fixture
def compat_repo(tmp_path):
    """A git repository of one commit with a ``.perun`` of ``init --compat``; (root, [sha])."""
    from gitrepo import make_repo

    other = tmp_path / "compat"
    shas = make_repo(other, [{"files": {"a.txt": "one\n"}, "message": "first"}])
    assert "Shared with the original Perun" in ok("init", "--compat", str(other), cwd=tmp_path)
    return other, shas


def test_init_compat_makes_what_the_original_makes(compat_repo):
    root, _ = compat_repo
    perun = root / ".perun"
    assert all((perun / sub).is_dir() for sub in ("jobs", "objects", "logs", "cache", "stats", "tmp"))
    pending_index = (perun / "jobs" / ".index").read_bytes()
    assert index_layout(pending_index) == ORIGINAL_LAYOUT and decode_index(pending_index, "x") == []
    assert "url: .." in (perun / "local.yml").read_text()


def test_plain_init_is_not_shared(perun_repo):
    root, shas = perun_repo
    write_pending(root, "a.perf", time_profile(shas[-1]))
    ok("add", "0@p", cwd=root)
    assert index_layout(index_file(root, shas[-1]).read_bytes()) == PERUN_LAYOUT
    assert not (root / ".perun" / "stats").exists()


def test_add_and_rm_in_a_shared_repository_write_what_the_original_reads(compat_repo):
    root, shas = compat_repo
    profile = time_profile(shas[-1], cmd="./ünïcode")
    profile["header"]["label"] = "a label"
    write_pending(root, "first.perf", profile)
    write_pending(root, "second.perf", time_profile(shas[-1], workload="/tmp"))
    ok("add", "first.perf", "second.perf", cwd=root)
    index = index_file(root, shas[-1])
    data = index.read_bytes()
    assert index_layout(data) == ORIGINAL_LAYOUT
    entries = decode_index(data, index)
    assert [e.path for e in entries] == ["first.perf", "second.perf"]  # sorted by name, as the original keeps them
    assert entries[0].label == "a label" and entries[0].cmd == "./ünïcode" and entries[1].label == ""
    assert encode_original_index(entries) == data
    raw = zlib.decompress(index_file(root, entries[0].checksum).read_bytes())
    header, _, body = raw.partition(b"\0")
    # the original counts characters, not bytes, and reads the documented form
    assert header == b"profile time %d" % len(body.decode("utf-8")) and len(body) > len(body.decode("utf-8"))
    assert json.loads(body)["header"]["label"] == "a label"
    shown = ok("show", "first.perf", "tableof", "resources", "--format", "csv", cwd=root)
    assert "./ünïcode" in shown
    ok("rm", "first.perf", cwd=root)
    assert [e.path for e in read_index(index)] == ["second.perf"] and index_layout(index.read_bytes()) == ORIGINAL_LAYOUT


def test_collect_in_a_shared_repository_leaves_a_pending_profile_the_original_reads(compat_repo):
    root, _ = compat_repo
    ok("collect", "-c", "true", "time", cwd=root)
    (pending,) = [p for p in (root / ".perun" / "jobs").iterdir() if p.suffix == ".perf"]
    document = json.loads(pending.read_text())
    assert "header" in document and "perun-columnar" not in document


def test_a_type_the_original_cannot_read_is_refused_before_anything_is_written(compat_repo):
    root, shas = compat_repo
    good = time_profile(shas[-1])
    odd = time_profile(shas[-1])
    odd["header"]["type"] = "throughput"
    for resource in odd["snapshots"][0]["resources"]:
        resource["type"] = "throughput"
    write_pending(root, "good.perf", good)
    write_pending(root, "odd.perf", odd)
    done = run_cli("add", "good.perf", "odd.perf", cwd=root)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: odd.perf: key 'header.type' 'throughput'") and "original Perun" in done.stderr
    assert not index_file(root, shas[-1]).exists()


def test_an_index_of_ours_in_a_shared_repository_is_rewritten_in_the_original_layout(compat_repo):
    root, shas = compat_repo
    index = index_file(root, shas[-1])
    index.parent.mkdir(parents=True)
    write_pending(root, "a.perf", time_profile(shas[-1]))
    ok("add", "--keep-profile", "a.perf", cwd=root)
    entries = read_index(index)
    index.write_bytes(encode_index(entries))  # as a perun of before the sharing wrote it
    assert ok("status", cwd=root).count("@i ┃") == 1
    write_pending(root, "b.perf", time_profile(shas[-1], workload="b"))
    ok("add", "b.perf", cwd=root)
    assert index_layout(index.read_bytes()) == ORIGINAL_LAYOUT and len(read_index(index)) == 2


def test_a_repaired_index_in_a_shared_repository_is_written_in_the_original_layout(compat_repo):
    root, shas = compat_repo
    write_pending(root, "a.perf", time_profile(shas[-1]))
    ok("add", "a.perf", cwd=root)
    index = index_file(root, shas[-1])
    (checksum,) = [e.checksum for e in read_index(index)]
    index.write_bytes(b"garbage")
    assert "rebuilt with 1 profile" in ok("fsck", "--repair", cwd=root)
    data = index.read_bytes()
    assert index_layout(data) == ORIGINAL_LAYOUT and [e.checksum for e in decode_index(data, index)] == [checksum]
    # the object names its commit, so the original can be handed back its index whole
    raw = zlib.decompress(index_file(root, checksum).read_bytes())
    assert json.loads(raw.partition(b"\0")[2])["origin"] == shas[-1]


def test_every_writer_keeps_the_layout_an_index_has(tmp_path):
    entry = IndexEntry(1700000000.0, "ab" * 20, "x.perf", "time", "x", "", "w", "time", ("regression_analysis",), "l")
    theirs, mine = tmp_path / "theirs", tmp_path / "mine"
    theirs.write_bytes(encode_original_index([entry]))
    write_index(theirs, [entry, IndexEntry(1.0, "cd" * 20, "a.perf", "time", "a", "", "", "time")])
    assert index_layout(theirs.read_bytes()) == ORIGINAL_LAYOUT and len(read_index(theirs)) == 2
    write_index(mine, [entry])
    assert index_layout(mine.read_bytes()) == PERUN_LAYOUT
    assert read_index(theirs)[1] == entry  # sorted by name; every field the original's layout holds comes back


def test_a_newer_original_index_is_refused_by_name(tmp_path):
    data = bytearray(encode_original_index([]))
    data[4] = 3
    path = tmp_path / "index"
    path.write_bytes(bytes(data))
    with pytest.raises(UnsupportedFormatVersion) as info:
        read_index(path)
    assert info.value.version == 3 and "original Perun index" in str(info.value)


@pytest.fixture
def shared_by_both(tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    with tarfile.open(FIXTURES / "shared" / "shared-repo.tar.gz") as archive:
        archive.extractall(root, filter="data")
    return root


def test_an_index_the_original_wrote_over_ours_reads_and_our_writer_agrees_byte_for_byte(shared_by_both):
    index = index_file(shared_by_both, SHARED_HEAD)
    data = index.read_bytes()
    entries = decode_index(data, index)
    assert [(e.path, e.label) for e in entries] == [("original-added.perf", "original-added"),
                                                    ("ours-added.perf", "ours-added")]
    assert encode_original_index(entries) == data


def test_objects_of_both_tools_in_the_shared_fixture_read_the_same(shared_by_both):
    from perun_core.storage.repository import PerunRepository

    with PerunRepository(shared_by_both) as repo:
        assert repo.shared_with_original
        by_name = {e.path: repo.objects.read_profile(e.checksum) for e in repo.read_index(SHARED_HEAD)}
    ours, theirs = by_name["ours-added.perf"], by_name["original-added.perf"]
    assert ours.layout == "documented" and theirs.layout == "original-0.28"

    def rows(profile):
        return sorted((r["subtype"], r["amount"], r["order"]) for _, region in profile.regions()
                      for r in region.resources)

    assert rows(ours) == rows(theirs) == [("real", 0.25, 1), ("real", 0.27, 2), ("user", 0.2, 1), ("user", 0.21, 2)]
    assert ours.args == theirs.args == "-n 5"


def test_status_log_show_and_a_new_add_in_the_shared_fixture(shared_by_both):
    status = ok("status", cwd=shared_by_both)
    assert status.count("@i ┃") == 2 and "(no pending profiles)" in status
    assert "2 profiles" in ok("log", cwd=shared_by_both)
    for name in ("ours-added.perf", "original-added.perf"):
        assert "0.27" in ok("show", name, "tableof", "resources", "--format", "csv", cwd=shared_by_both)
    index = index_file(shared_by_both, SHARED_HEAD)
    before = index.read_bytes()
    write_pending(shared_by_both, "third.perf", time_profile(SHARED_HEAD))
    ok("add", "third.perf", cwd=shared_by_both)
    entries = read_index(index)
    assert [e.path for e in entries] == ["original-added.perf", "ours-added.perf", "third.perf"]
    assert index_layout(index.read_bytes()) == ORIGINAL_LAYOUT and entries[0].label == "original-added"
    ok("rm", "third.perf", cwd=shared_by_both)
    assert index.read_bytes() == before  # back to the original's own bytes


def test_a_version_1_index_of_the_original_reads_and_is_written_back_as_its_version_2(shared_by_both):
    import struct

    index = index_file(shared_by_both, SHARED_HEAD)
    entries = decode_index(index.read_bytes(), index)
    old = [b"pidx", struct.pack("<ii", 1, len(entries))]
    for entry in entries:  # version 1: mtime, object, name; the rest is read from the objects
        old += [struct.pack("<I", int(entry.time)), bytes.fromhex(entry.checksum), entry.path.encode() + b"\0"]
    index.write_bytes(b"".join(old))
    assert [e.path for e in read_index(index)] == [e.path for e in entries]
    assert ok("status", cwd=shared_by_both).count("[time] ┃ ./wordfreq") == 2
    write_pending(shared_by_both, "third.perf", time_profile(SHARED_HEAD))
    ok("add", "third.perf", cwd=shared_by_both)
    rewritten = index.read_bytes()
    assert rewritten[4:8] == struct.pack("<i", 2) and index_layout(rewritten) == ORIGINAL_LAYOUT
    again = {e.path: e for e in decode_index(rewritten, index)}
    assert again["ours-added.perf"].label == "ours-added" and again["original-added.perf"].cmd == "./wordfreq"
