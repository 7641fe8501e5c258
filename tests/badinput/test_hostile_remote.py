"""Hostile remotes, built with dulwich: pull and fetch refuse them whole, with one error line and ``.perun`` untouched.

Every case plants a hand-made commit under ``refs/perun/profiles`` of a bare
remote that a clone already pulled from once (so its private store exists
and must come out byte-identical too), then runs ``pull`` and ``fetch`` as
the user does.  A sound hand-made remote is pulled first to show the
builder makes what perun accepts.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import zlib
from pathlib import Path

import pytest
from conftest import run_cli, time_profile

from remote.hostile import GITLINK, LINK, entry_of, perun_tree, plant, point_ref, profile_object
from remote.remotes import bare_remote, clone, project, register

from perun_core import api
from perun_core.errors import Interrupted, RemoteError
from perun_core.remote.layout import changes_key, object_key
from perun_core.storage.index import INDEX_VERSION, encode_index


def tree_hashes(directory: Path) -> dict[str, str]:
    """Every file of ``directory`` by its SHA-1, every folder by a mark: equal means byte-identical."""
    return {str(p.relative_to(directory)): hashlib.sha1(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(directory.rglob("*"))}


GOOD = time_profile(None, cmd="./prog", amounts=(1.0, 1.1))
GOOD_SHA, GOOD_DATA = profile_object(GOOD)
OTHER_SHA, OTHER_DATA = profile_object(time_profile(None, cmd="./other", amounts=(2.0, 2.5)))


def _with_amount(value) -> tuple[str, bytes]:
    document = copy.deepcopy(GOOD)
    document["snapshots"][0]["resources"][0]["amount"] = value
    return profile_object(document)


@pytest.fixture
def clone_of(tmp_path):
    """(bare remote, the clone, its commits): the clone holds one profile and pulled once from the remote."""
    remote = bare_remote(tmp_path / "remote.git")
    shas = project(tmp_path / "origin", remote)
    register(tmp_path / "origin", shas[0], "shared")
    api.push(cwd=tmp_path / "origin")
    mine = clone(remote, tmp_path / "mine")
    register(mine, shas[1], "local")
    assert api.pull(cwd=mine).profiles == 1
    return remote, mine, shas


def _fast(shas):
    sha, data = _with_amount("fast")
    return perun_tree({GOOD_SHA: GOOD_DATA, sha: data}, {shas[1]: [entry_of(GOOD_SHA), entry_of(sha, "fast.perf")]})


def _mismatch(shas):
    wrong = "ab" * 20  # a sound object stored under a name it does not hash to
    return perun_tree({GOOD_SHA: GOOD_DATA, wrong: OTHER_DATA}, {shas[1]: [entry_of(wrong)]})


def _not_zlib(shas):
    return perun_tree({GOOD_SHA: b"this is no zlib stream"}, {shas[1]: [entry_of(GOOD_SHA)]})


def _no_header(shas):
    raw = json.dumps(GOOD).encode()
    return perun_tree({hashlib.sha1(raw).hexdigest(): zlib.compress(raw)})


def _garbage_index(shas):
    return perun_tree({GOOD_SHA: GOOD_DATA, OTHER_SHA: OTHER_DATA}, raw_indexes={shas[1]: b"pidx garbage"})


def _newer_index(shas):
    data = bytearray(encode_index([entry_of(GOOD_SHA)]))
    data[4:8] = (INDEX_VERSION + 1).to_bytes(4, "big")
    body = bytes(data[:-20])
    return perun_tree({GOOD_SHA: GOOD_DATA}, raw_indexes={shas[1]: body + hashlib.sha1(body).digest()})


def _dangling_entry(shas):
    return perun_tree({GOOD_SHA: GOOD_DATA}, {shas[1]: [entry_of(GOOD_SHA), entry_of("cd" * 20, "gone.perf")]})


def _control_name(shas):
    return perun_tree({GOOD_SHA: GOOD_DATA}, {shas[1]: [entry_of("cd" * 20, "a\nerror: \x1b[2Jb.perf")]})


def _path_name(shas):
    return perun_tree({GOOD_SHA: GOOD_DATA}, {shas[1]: [entry_of(GOOD_SHA, "../../escape.perf")]})


def _infinite_time(shas):
    return perun_tree({GOOD_SHA: GOOD_DATA}, {shas[1]: [entry_of(GOOD_SHA, when=float("inf"))]})


def _symlink(shas):
    flat = perun_tree({GOOD_SHA: GOOD_DATA}, {shas[1]: [entry_of(GOOD_SHA)]})
    flat[object_key(OTHER_SHA)] = (LINK, b"../../../../etc/passwd")
    return flat


def _submodule(shas):
    flat = perun_tree({GOOD_SHA: GOOD_DATA})
    flat[object_key(OTHER_SHA)] = (GITLINK, b"12" * 20)
    return flat


def _dot_dot(shas):
    flat = perun_tree({GOOD_SHA: GOOD_DATA})
    flat[b"indexes/../.."] = (0o100644, encode_index([entry_of(GOOD_SHA)]))
    return flat


def _bad_changes(shas):
    return perun_tree({GOOD_SHA: GOOD_DATA}, changes={shas[1]: b'{"version": 3, "marks": 7}'})


def _newer_changes(shas):
    return perun_tree({GOOD_SHA: GOOD_DATA}, changes={shas[1]: b'{"version": 99, "marks": "-"}'})


#: case -> (builder of the remote's tree, what the error line must say)
TREES = {
    "invalid profile": (_fast, "key 'snapshots[0].resources[0].amount': expected a finite number, got a string"),
    "checksum mismatch": (_mismatch, "checksum mismatch"),
    "not zlib": (_not_zlib, "does not decompress"),
    "no object header": (_no_header, "missing 'profile <type> <length>' header"),
    "garbage index": (_garbage_index, "truncated (12 bytes)"),
    "newer index": (_newer_index, "newer than this perun understands"),
    "entry of an absent object": (_dangling_entry, "which the remote does not hold"),
    "entry named like a path": (_path_name, "is not a plain file name"),
    "entry named with control characters": (_control_name, "profile 'a\\nerror: \\x1b[2Jb.perf' names object"),
    "entry of infinite time": (_infinite_time, "expected a finite number"),
    "symbolic link": (_symlink, "is a symbolic link"),
    "submodule": (_submodule, "is a submodule link"),
    "crafted '..'": (_dot_dot, "names no perun file"),
    "damaged change record": (_bad_changes, "unexpected content"),
    "newer change record": (_newer_changes, "change record format version 99"),
}


def _assert_refused(result, says: str) -> None:
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 1, result.stderr
    assert len(errors) == 1 and says in errors[0], result.stderr
    assert errors[0].startswith("error: remote 'origin': ")
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("case", sorted(TREES))
def test_a_hostile_tree_is_refused_whole_and_leaves_perun_byte_identical(clone_of, case):
    remote, mine, shas = clone_of
    build, says = TREES[case]
    plant(remote, build(shas))
    before = tree_hashes(mine / ".perun")
    for command in (("pull",), ("pull", "--dry-run"), ("fetch",)):
        _assert_refused(run_cli(*command, cwd=mine), says)
        assert tree_hashes(mine / ".perun") == before, command


def test_a_clone_that_never_transferred_is_left_without_a_private_store(clone_of, tmp_path):
    remote, mine, shas = clone_of
    fresh = clone(remote, tmp_path / "fresh")
    plant(remote, _fast(shas))
    before = tree_hashes(fresh / ".perun")
    for command in ("pull", "fetch"):
        _assert_refused(run_cli(command, cwd=fresh), "expected a finite number")
        assert tree_hashes(fresh / ".perun") == before and not (fresh / ".perun/remote").exists()


@pytest.mark.parametrize("kind", ["blob", "tree", "absent"])
def test_a_ref_naming_no_commit_is_a_clean_error(clone_of, kind):
    from dulwich.objects import Tree
    from dulwich.repo import Repo

    remote, mine, shas = clone_of
    if kind == "blob":
        point_ref(remote, blob=b"not a commit\n")
        says = "is a blob, expected a commit"
    elif kind == "tree":
        with Repo(str(remote)) as repo:
            tree = Tree()
            repo.object_store.add_object(tree)
        point_ref(remote, tree.id)
        says = "is a tree, expected a commit"
    else:
        point_ref(remote, b"12" * 20)
        says = "which the remote does not have"
    before = tree_hashes(mine / ".perun")
    for command in ("pull", "fetch", "push"):
        _assert_refused(run_cli(command, cwd=mine), says)
        assert tree_hashes(mine / ".perun") == before, command


def test_a_sound_hand_made_remote_is_taken(clone_of):
    remote, mine, shas = clone_of
    plant(remote, perun_tree({GOOD_SHA: GOOD_DATA, OTHER_SHA: OTHER_DATA},
                             {shas[0]: [entry_of(OTHER_SHA, "other.perf")], shas[1]: [entry_of(GOOD_SHA)]},
                             changes={shas[1]: json.dumps({"version": 1, "marks": "-"}).encode()}))
    result = run_cli("pull", cwd=mine)
    assert result.returncode == 0 and "took 2 profiles, 2 index entries, 1 change record" in result.stdout, result.stderr
    assert run_cli("fsck", cwd=mine).returncode == 0
    status = run_cli("--no-pager", "status", cwd=mine)
    assert status.returncode == 0 and "./prog" in status.stdout, status.stdout


def test_a_pull_cancelled_while_storing_takes_back_what_it_wrote(clone_of):
    """Objects and an index were written when the pull is stopped: all of it goes again."""
    remote, mine, shas = clone_of
    plant(remote, perun_tree({GOOD_SHA: GOOD_DATA, OTHER_SHA: OTHER_DATA},
                             {shas[0]: [entry_of(OTHER_SHA, "other.perf")], shas[1]: [entry_of(GOOD_SHA)]}))
    before = tree_hashes(mine / ".perun")
    cancel = threading.Event()

    def on_event(event):
        if isinstance(event, api.remote.TransferProgress) and event.phase == "importing" and event.done >= 3:
            cancel.set()  # both objects and the first index are stored by now

    with pytest.raises(Interrupted):
        api.pull(cwd=mine, on_event=on_event, cancel=cancel)
    locks = {k for k in tree_hashes(mine / ".perun") if k.startswith("locks/")}
    assert {k: v for k, v in tree_hashes(mine / ".perun").items() if k not in locks} == \
        {k: v for k, v in before.items() if k not in locks}  # an index lock file taken on the way may stay
    assert api.pull(cwd=mine).profiles == 2


def test_a_local_index_that_cannot_be_read_refuses_the_pull_before_anything_is_stored(clone_of):
    remote, mine, shas = clone_of
    plant(remote, perun_tree({GOOD_SHA: GOOD_DATA, OTHER_SHA: OTHER_DATA}, {shas[1]: [entry_of(GOOD_SHA)]}))
    with api.open_repository(mine) as repo:
        index = repo.index_path(shas[1])
    index.write_bytes(b"pidx\x00\x00\x00\x02")
    before = tree_hashes(mine / ".perun")
    with pytest.raises(RemoteError, match="would be merged into corrupt index") as refused:
        api.pull(cwd=mine)
    assert "fsck --repair" in refused.value.hint
    assert tree_hashes(mine / ".perun") == before


def test_a_remote_changes_record_for_a_sound_remote_is_stored_as_sent(clone_of):
    remote, mine, shas = clone_of
    record = json.dumps({"version": 3, "marks": "+", "checked": 2e9, "pairs": []}).encode()
    plant(remote, perun_tree({GOOD_SHA: GOOD_DATA}, {shas[1]: [entry_of(GOOD_SHA)]}, changes={shas[1]: record}))
    assert api.pull(cwd=mine).changes == 1
    assert (mine / ".perun" / changes_key(shas[1]).decode()).read_bytes() == record
