"""fsck on a damaged store, as the user runs it: one error line and ``.perun`` untouched until ``--repair``,
then a repair that leaves a store ``status`` lists whole and the next fsck passes (exit 0)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import zlib
from pathlib import Path

import pytest
from conftest import run_cli, time_profile

from perun_core import api
from perun_core.profile.model import Profile
from perun_core.storage.index import encode_index_v1
from perun_core.storage.repository import PerunRepository


def tree_hashes(directory: Path) -> dict[str, str]:
    """Every file of ``directory`` by its SHA-1, every folder by a mark: equal means byte-identical."""
    return {str(p.relative_to(directory)): hashlib.sha1(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(directory.rglob("*"))}


def add(root: Path, minor: str, name: str, amount: float, *, keep: bool = False) -> str:
    path = root / ".perun/jobs" / name
    path.write_text(json.dumps(time_profile(minor, cmd=f"./{name}", amounts=(amount,))))
    return api.add([name], minor=minor, keep_profile=keep, cwd=root)[0].checksum


@pytest.fixture
def store(perun_repo):
    """(root, commits, the two checksums registered at HEAD, HEAD's index path); every cache warmed."""
    root, shas = perun_repo
    checksums = [add(root, shas[-1], f"p{i}.perf", i + 1.0) for i in range(2)]
    with PerunRepository(root) as repo:
        index = repo.index_path(shas[-1])
    run_cli("--no-pager", "status", cwd=root)
    return root, shas, checksums, index


def _refused(result) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 1 and len(errors) == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return errors[0]


def _damage(index: Path, how: str) -> None:
    if how == "emptied":
        index.write_bytes(b"")
    elif how == "garbage":
        index.write_bytes(bytes(range(256)) * 3)
    elif how == "zeros":
        index.write_bytes(b"\0" * 4096)
    else:
        index.unlink()
        (index / "inside").mkdir(parents=True)


@pytest.mark.parametrize("how", ["emptied", "garbage", "zeros", "folder"])
def test_a_destroyed_index_is_rebuilt_from_the_objects(store, how):
    root, shas, checksums, index = store
    _damage(index, how)
    before = tree_hashes(root / ".perun")
    _refused(run_cli("--no-pager", "status", cwd=root))
    looked = run_cli("fsck", cwd=root)
    assert _refused(looked).startswith("error: 1 problem in the store") and f"damaged: index {index}" in looked.stdout
    assert tree_hashes(root / ".perun") == before  # looking changes nothing
    repaired = run_cli("fsck", "--repair", cwd=root)
    assert repaired.returncode == 0 and repaired.stderr == "", repaired.stdout + repaired.stderr
    assert "rebuilt with 2 profiles" in repaired.stdout
    assert list((root / ".perun/quarantine/indexes").iterdir())  # the damaged one, kept for a closer look
    with PerunRepository(root) as repo:
        assert sorted(e.checksum for e in repo.read_index(shas[-1])) == sorted(checksums)
    status = run_cli("--no-pager", "status", cwd=root)
    assert status.returncode == 0 and "./p0.perf" in status.stdout and "./p1.perf" in status.stdout, status.stderr
    again = run_cli("fsck", cwd=root)
    assert again.returncode == 0 and "no damage" in again.stdout, again.stdout


def test_a_damaged_object_is_put_aside_and_the_rest_of_its_commit_stays_usable(store):
    root, shas, checksums, index = store
    with PerunRepository(root) as repo:
        victim = repo.objects.path_of(checksums[0])
    victim.write_bytes(zlib.compress(b"profile time 3\0abc"))
    before = tree_hashes(root / ".perun")
    assert "2 problems" in _refused(run_cli("fsck", cwd=root))
    assert tree_hashes(root / ".perun") == before
    repaired = run_cli("fsck", "--repair", cwd=root)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert f"moved to .perun/quarantine/objects/{checksums[0]}" in repaired.stdout
    for command in (("fsck",), ("--no-pager", "status"), ("--no-pager", "log")):
        result = run_cli(*command, cwd=root)
        assert result.returncode == 0 and result.stderr == "", (command, result.stderr)
    assert "./p1.perf" in run_cli("--no-pager", "status", cwd=root).stdout


def test_a_damaged_object_of_a_version_1_index_fails_only_its_own_line(store):
    """Version-1 entries carry no metadata: each is read from its object, and one damaged must not hide the rest."""
    root, shas, checksums, index = store
    with PerunRepository(root) as repo:
        entries = repo.read_index(shas[-1])
        index.write_bytes(encode_index_v1(entries))
        repo.objects.path_of(checksums[0]).write_bytes(b"junk")
    status = run_cli("--no-pager", "status", cwd=root)
    assert "corrupt object" in _refused(status) and "./p1.perf" in status.stdout
    assert run_cli("fsck", "--repair", cwd=root).returncode == 0
    status = run_cli("--no-pager", "status", cwd=root)
    assert status.returncode == 0 and "./p1.perf" in status.stdout, status.stderr


def test_two_destroyed_indexes_take_back_the_objects_that_carry_their_commit(perun_repo):
    """Objects of the original tool carry their origin: each goes back to the index of its commit."""
    root, shas = perun_repo
    with PerunRepository(root) as repo:
        for minor in shas:
            document = json.dumps({"origin": minor, **time_profile(None, cmd=f"./{minor[:6]}")}).encode()
            raw = b"profile time %d\0" % len(document) + document
            sha = hashlib.sha1(raw).hexdigest()
            repo.objects.path_of(sha).parent.mkdir(parents=True, exist_ok=True)
            repo.objects.path_of(sha).write_bytes(zlib.compress(raw))
            repo.index_path(minor).parent.mkdir(parents=True, exist_ok=True)
            repo.index_path(minor).write_bytes(b"")
        indexes = [repo.index_path(minor) for minor in shas]
    _refused(run_cli("fsck", cwd=root))
    repaired = run_cli("fsck", "--repair", cwd=root)
    assert repaired.returncode == 0 and repaired.stdout.count("rebuilt with 1 profile") == 2, repaired.stdout
    for minor, index in zip(shas, indexes):
        with PerunRepository(root) as repo:
            [entry] = repo.read_index(minor)
            assert repo.objects.read_profile(entry.checksum).cmd == f"./{minor[:6]}"
    assert run_cli("fsck", cwd=root).returncode == 0


def test_every_destroyed_index_is_rebuilt_from_the_origins_its_objects_carry(perun_repo):
    """Objects name the commit they were registered at: two destroyed indexes are each rebuilt whole."""
    root, shas = perun_repo
    checksums = [add(root, minor, f"p{i}.perf", 1.0 + i) for i, minor in enumerate(shas)]
    with PerunRepository(root) as repo:
        for minor in shas:
            repo.index_path(minor).write_bytes(b"garbage")
    _refused(run_cli("status", cwd=root))
    repaired = run_cli("fsck", "--repair", cwd=root)
    assert repaired.returncode == 0 and repaired.stdout.count("rebuilt with 1 profile") == 2, repaired.stdout
    with PerunRepository(root) as repo:
        assert [[e.checksum for e in repo.read_index(minor)] for minor in shas] == [[sha] for sha in checksums]
    assert not (root / ".perun/quarantine/unplaced").exists()
    shown = run_cli("status", cwd=root)  # HEAD is the last commit
    assert shown.returncode == 0 and "p1.perf" in shown.stdout, shown.stdout + shown.stderr
    assert run_cli("fsck", cwd=root).returncode == 0


def test_objects_of_an_index_that_cannot_be_rebuilt_are_never_removed(perun_repo):
    """Two destroyed indexes and objects that carry no origin (as perun wrote them before objects kept it):
    nowhere certain to put them, so they are put aside."""
    root, shas = perun_repo
    with PerunRepository(root) as repo:
        checksums = []
        for i, minor in enumerate(shas):
            checksums.append(repo.objects.write_profile(Profile.from_dict(time_profile(None, cmd=f"./p{i}.perf"))))
            repo.index_path(minor).parent.mkdir(parents=True, exist_ok=True)
            repo.index_path(minor).write_bytes(b"garbage")
        contents = [repo.objects.path_of(sha).read_bytes() for sha in checksums]
    report = api.fsck(repair=True, stale_after=0, cwd=root)
    assert report.ok
    kept = [p for p in report.problems if p.kind == "unreferenced"]
    assert len(kept) == 2 and all("a damaged index may have named it" in p.repaired for p in kept)
    unplaced = root / ".perun/quarantine/unplaced"
    assert sorted(p.name for p in unplaced.iterdir()) == sorted(checksums)
    assert [(unplaced / sha).read_bytes() for sha in checksums] == contents  # byte for byte
    assert api.fsck(repair=True, stale_after=0, cwd=root).ok and sorted(p.name for p in unplaced.iterdir()) == \
        sorted(checksums)  # a second repair loses nothing either


def test_unreferenced_objects_are_reported_and_removed_once_old_enough(store):
    root, shas, checksums, index = store
    assert run_cli("rm", "p0.perf", cwd=root).returncode == 0  # rm leaves the object behind
    with PerunRepository(root) as repo:
        left = repo.objects.path_of(checksums[0])
    assert left.exists()
    before = tree_hashes(root / ".perun")
    found = run_cli("fsck", cwd=root)
    assert found.returncode == 0 and f"found: unreferenced {left}" in found.stdout, found.stdout
    assert tree_hashes(root / ".perun") == before
    young = run_cli("fsck", "--repair", cwd=root)  # just removed from its index: younger than --stale-after
    assert young.returncode == 0 and "kept: younger than --stale-after" in young.stdout and left.exists()
    os.utime(left, (time.time() - 7200, time.time() - 7200))
    removed = run_cli("fsck", "--repair", cwd=root)
    assert removed.returncode == 0 and "(removed)" in removed.stdout and not left.exists(), removed.stdout
    clean = run_cli("fsck", cwd=root)
    assert clean.returncode == 0 and "clean up" not in clean.stdout


def test_objects_named_by_a_change_record_are_kept(store):
    root, shas, checksums, index = store
    record = root / ".perun/changes" / shas[-1][:2] / f"{shas[-1][2:]}.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"version": 2, "marks": "-", "checked": 1.0,
                                  "pairs": [{"baseline": {"checksum": checksums[0]}, "target": {}}]}))
    run_cli("rm", "p0.perf", cwd=root)
    report = api.fsck(repair=True, stale_after=0, cwd=root)
    assert report.ok and not [p for p in report.problems if p.kind == "unreferenced"]


@pytest.mark.parametrize("place", ["cache", "changes", "top"])
def test_leftover_temporary_files_anywhere_are_reported_and_removed(store, place):
    root, shas, checksums, index = store
    folder = {"cache": root / ".perun/cache", "changes": root / ".perun/changes/ab", "top": root / ".perun"}[place]
    folder.mkdir(parents=True, exist_ok=True)
    left = folder / ".verified.json.abc123.tmp"
    left.write_bytes(b"{half")
    os.utime(left, (time.time() - 7200, time.time() - 7200))
    result = run_cli("fsck", cwd=root)
    assert result.returncode == 0 and f"removed stale temporary file {left}" in result.stdout, result.stdout
    assert not left.exists()


def test_a_profile_registered_and_pending_at_once_is_reported_and_its_pending_copy_removed(store):
    """A killed add registers first and removes the pending file last: both remain."""
    root, shas, checksums, index = store
    add(root, shas[-1], "twice.perf", 7.0, keep=True)
    pending = root / ".perun/jobs/twice.perf"
    result = run_cli("fsck", cwd=root)
    assert result.returncode == 0 and f"found: pending {pending}: is registered already at {shas[-1][:7]} as " \
        "twice.perf" in result.stdout, result.stdout
    assert pending.exists()
    repaired = run_cli("fsck", "--repair", cwd=root)
    assert repaired.returncode == 0 and "(pending copy removed)" in repaired.stdout and not pending.exists()
    status = run_cli("--no-pager", "status", cwd=root)
    assert "./twice.perf" in status.stdout and "(no pending profiles)" in status.stdout


def test_a_repair_that_cannot_be_done_exits_1(store):
    """A damaged object that cannot be moved away stays damage: the repair says so and fails."""
    root, shas, checksums, index = store
    with PerunRepository(root) as repo:
        victim = repo.objects.path_of(checksums[0])
    victim.write_bytes(b"junk")
    (root / ".perun/quarantine").write_text("a file where the quarantine folder belongs")
    result = run_cli("fsck", "--repair", cwd=root)
    assert result.returncode == 1 and "not moved away" in result.stdout, result.stdout + result.stderr
    assert _refused(result) == "error: 1 problem in the store"
    shutil.rmtree(root / ".perun/quarantine", ignore_errors=True)
    (root / ".perun/quarantine").unlink()
    assert run_cli("fsck", "--repair", cwd=root).returncode == 0
    assert run_cli("fsck", cwd=root).returncode == 0
