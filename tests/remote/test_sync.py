"""push / fetch / pull through real git remotes: bare repositories by path and a git:// server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from .remotes import (GitDaemon, bare_remote, clone, entries, git, project, register, remote_files, remote_ref)

from perun_core import api
from perun_core.errors import Interrupted, RemoteError, RemoteFormatTooNew


@pytest.fixture
def two_clones(tmp_path):
    remote = bare_remote(tmp_path / "remote.git")
    shas = project(tmp_path / "a", remote)
    b = clone(remote, tmp_path / "b")
    return remote, tmp_path / "a", b, shas


def test_two_clones_share_all_profiles_and_keep_their_own(two_clones):
    remote, a, b, shas = two_clones
    a_old = register(a, shas[0], "a-old", (1.0, 1.1, 1.0))
    a_new = register(a, shas[1], "a-new", (1.0, 1.05, 1.0))
    b_new = register(b, shas[1], "b-new", (3.0, 3.1, 3.0), cmd="./a-old")
    before_a, before_b = entries(a, shas[1]), entries(b, shas[1])

    pushed = api.push(cwd=a)
    assert (pushed.profiles, pushed.indexes) == (2, 2)
    assert remote_ref(remote) == pushed.commit
    assert api.push(cwd=b).profiles == 1
    pulled = api.pull(cwd=a)
    assert (pulled.profiles, pulled.entries) == (1, 1)
    assert api.pull(cwd=b).profiles == 2

    for root in (a, b):
        assert {c for c, _ in entries(root, shas[1])} == {a_new, b_new}
        assert {c for c, _ in entries(root, shas[0])} == {a_old}
        status = run_cli("--no-pager", "status", cwd=root)
        assert status.returncode == 0, status.stderr
        assert "Tracked profiles (2)" in status.stdout
        assert "origin: 0 profiles only here, 0 only there" in status.stdout
        # when the remote was seen names its zone, as every time of status does
        assert re.search(r"only there \(seen \d{4}-\d\d-\d\d \d\d:\d\d [+-]\d{4}\)", status.stdout), status.stdout
        log = run_cli("--no-pager", "log", "-s", cwd=root)
        assert log.returncode == 0 and log.stdout.count("2 profiles") + log.stdout.count("1 profile") >= 2, log.stdout
    # nothing of either side was lost: the private entries are all still there
    assert before_a <= entries(a, shas[1]) and before_b <= entries(b, shas[1])
    # both clones check the same pairs: b's slow profile of ./a-old against a's at the first commit
    report = api.check_all(cwd=b)
    assert report.pairs >= 1 and report.degradations >= 1
    # the user's branches and working tree are untouched
    assert git("status", "--porcelain", "--untracked-files=no", cwd=a) == ""
    assert git("for-each-ref", "--format=%(refname)", "refs/heads", cwd=remote) == "refs/heads/master"


def test_findings_travel_and_the_newer_record_wins(two_clones):
    remote, a, b, shas = two_clones
    register(a, shas[0], "x", (1.0, 1.1, 1.0))
    register(a, shas[1], "x", (5.0, 5.1, 5.0))
    api.check_head(cwd=a)
    api.push(cwd=a)
    api.pull(cwd=b)
    mine = api.stored_check(cwd=b)
    assert mine is not None and mine.pairs and mine.pairs[0].degradations
    assert run_cli("--no-pager", "log", "-s", cwd=b).stdout.count("-") >= 1


def test_remote_without_perun_refs(two_clones):
    remote, a, b, shas = two_clones
    assert api.fetch(cwd=b).commit is None
    assert api.pull(cwd=b).commit is None
    assert api.push(cwd=b).up_to_date  # nothing registered: no ref is made
    assert remote_ref(remote) is None
    result = run_cli("fetch", cwd=b)
    assert result.returncode == 0 and "holds no perun profiles" in result.stdout


def test_dry_runs_change_nothing(two_clones):
    remote, a, b, shas = two_clones
    register(a, shas[1], "p")
    files = remote_files(remote)
    out = run_cli("push", "--dry-run", cwd=a)
    assert out.returncode == 0 and "would send 1 profile, 1 index updated" in out.stdout, out.stdout
    assert remote_files(remote) == files and remote_ref(remote) is None
    api.push(cwd=a)
    out = run_cli("pull", "-n", cwd=b)
    assert "would take 1 profile, 1 index entry" in out.stdout
    assert entries(b, shas[1]) == set()


def test_eight_concurrent_pushers_all_land(tmp_path):
    remote = bare_remote(tmp_path / "remote.git")
    shas = project(tmp_path / "origin", remote)
    clones = [clone(remote, tmp_path / f"c{i}") for i in range(8)]
    expected = set()
    for i, root in enumerate(clones):
        for k in range(3):
            expected.add(register(root, shas[k % 2], f"job{i}-{k}", (0.1 * (i + 1), 0.2 * (k + 1))))
    procs = [subprocess.Popen([sys.executable, "-m", "perun_core.cli.entry", "push", "-q"], cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for root in clones]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, outputs
    # never forced: the remote's history holds every push as a descendant of the previous one
    assert len(git("rev-list", "refs/perun/profiles", cwd=remote).split()) == 8
    api.pull(cwd=tmp_path / "origin")
    got = {c for sha in shas for c, _ in entries(tmp_path / "origin", sha)}
    assert got == expected and len(got) == 24


def _interrupting(cancel: threading.Event):
    def on_event(event):
        if isinstance(event, api.remote.TransferProgress) and event.phase == "sending" and event.done >= 2:
            cancel.set()
    return on_event


@pytest.mark.parametrize("transport", ["path", "git"])
def test_interrupted_push_leaves_both_sides_as_they_were(two_clones, tmp_path, transport):
    remote, a, b, shas = two_clones
    register(a, shas[0], "first")
    api.push(cwd=a)
    for k in range(6):
        register(a, shas[1], f"more{k}", (0.3 + k, 0.4))
    files, ref = remote_files(remote), remote_ref(remote)
    local = sorted(p.relative_to(a) for p in (a / ".perun").rglob("*") if p.is_file() and "remote" not in p.parts)
    daemon = GitDaemon(remote.parent) if transport == "git" else None
    try:
        target = daemon.url("remote.git") if daemon else str(remote)
        cancel = threading.Event()
        with pytest.raises(Interrupted):
            api.push(target, cwd=a, on_event=_interrupting(cancel), cancel=cancel)
        after = remote_files(remote)
        if daemon:
            # dulwich's server keeps the bytes it got of a cut transfer in objects/tmp_pack_*, a
            # temporary no reader ever sees (git itself leaves these for gc); nothing else may appear
            after = {name: size for name, size in after.items() if not Path(name).name.startswith("tmp_pack_")}
        assert remote_ref(remote) == ref
        assert after == files  # no pack, no index, no ref moved
        now = sorted(p.relative_to(a) for p in (a / ".perun").rglob("*") if p.is_file() and "remote" not in p.parts)
        assert now == local
        # the next push sends everything
        assert api.push(target, cwd=a).profiles == 6
    finally:
        if daemon:
            daemon.close()
    api.pull(cwd=b)
    assert len(entries(b, shas[1])) == 6


def test_push_and_pull_through_a_git_server(two_clones):
    remote, a, b, shas = two_clones
    register(a, shas[1], "served", (2.0, 2.1))
    daemon = GitDaemon(remote.parent)
    try:
        url = daemon.url("remote.git")
        assert api.push(url, cwd=a).profiles == 1
        register(b, shas[1], "other", (4.0, 4.1))
        out = run_cli("push", url, cwd=b)
        assert out.returncode == 0, out.stderr
        assert api.fetch(url, cwd=a).remote_only == 1
        status = run_cli("--no-pager", "status", cwd=a)
        assert "1 only there" in status.stdout
        assert api.pull(url, cwd=a).profiles == 1
    finally:
        daemon.close()
    assert len(entries(a, shas[1])) == 2


def _write_foreign_commit(remote: Path, format_doc: bytes | None) -> str:
    """Point refs/perun/profiles of ``remote`` at a commit whose tree has ``format_doc`` (or no format file)."""
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    with Repo(str(remote)) as repo:
        tree = Tree()
        blob = Blob.from_string(format_doc if format_doc is not None else b"hello\n")
        tree.add(b"format" if format_doc is not None else b"README", 0o100644, blob.id)
        commit = Commit()
        commit.tree, commit.parents = tree.id, []
        commit.author = commit.committer = b"Someone <s@example.com>"
        commit.author_time = commit.commit_time = 1_700_000_000
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"from the future\n"
        for obj in (blob, tree, commit):
            repo.object_store.add_object(obj)
        repo.refs[b"refs/perun/profiles"] = commit.id
        return commit.id.decode()


def test_newer_format_is_refused_and_nothing_changes(two_clones):
    remote, a, b, shas = two_clones
    register(b, shas[1], "mine")
    ref = _write_foreign_commit(remote, json.dumps({"format": 2}).encode())
    files = remote_files(remote)
    local = entries(b, shas[1])
    for action in (api.fetch, api.pull, api.push):
        with pytest.raises(RemoteFormatTooNew) as caught:
            action(cwd=b)
        assert caught.value.version == 2
    out = run_cli("push", cwd=b)
    assert out.returncode == 1
    assert "format version 2, newer than this perun understands" in out.stderr and "Traceback" not in out.stderr
    assert remote_ref(remote) == ref and remote_files(remote) == files and entries(b, shas[1]) == local
    assert run_cli("--no-pager", "status", cwd=b).stdout.count("only there") == 0


def test_a_ref_of_someone_else_is_left_alone(two_clones):
    remote, a, b, shas = two_clones
    register(b, shas[1], "mine")
    ref = _write_foreign_commit(remote, None)
    with pytest.raises(RemoteError, match="does not hold perun profiles"):
        api.push(cwd=b)
    assert remote_ref(remote) == ref


def test_unknown_remote_is_one_error_line(two_clones, tmp_path):
    remote, a, b, shas = two_clones
    out = run_cli("pull", str(tmp_path / "nowhere"), cwd=a)
    assert out.returncode == 1 and out.stderr.startswith("error: remote ") and len(out.stderr.splitlines()) == 1
    out = run_cli("push", str(tmp_path / "a" / "file.txt"), cwd=a)
    assert out.returncode == 1 and "not a git repository" in out.stderr, out.stderr


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else b"/") for p in directory.rglob("*")}


def test_a_refused_transfer_leaves_the_private_store_as_it_was(two_clones, tmp_path):
    """Objects fetched before the remote's format could be read are removed again; refs never moved."""
    remote, a, b, shas = two_clones
    register(b, shas[1], "mine")
    api.push(cwd=b)  # the private store of b now exists and holds objects
    newer = bare_remote(tmp_path / "newer.git")
    _write_foreign_commit(newer, json.dumps({"format": 7, "padding": "x" * 5000}).encode())
    before = _tree(b / ".perun")
    for action in (api.fetch, api.pull, api.push):
        with pytest.raises(RemoteFormatTooNew):
            action(str(newer), cwd=b)
        assert _tree(b / ".perun") == before, action.__name__
    api.fetch(cwd=b)  # the store still works
