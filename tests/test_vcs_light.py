"""The light paths of perun_core.vcs: refs read from git's files, and the remembered worktree state.

``status`` and ``log`` answer without dulwich when these can; every answer
must be the one dulwich gives, and the remembered one must notice each
change a fresh check notices.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from dulwich.repo import Repo
from gitrepo import make_repo, stage_files  # tests/ is on sys.path

from perun_core.atomic import command_scope, write_deferred
from perun_core.vcs import GitVcs
from perun_core.vcs.reffiles import RefFiles
from perun_core.vcs.statecache import STATE_FILE

OLD = time.time() - 3600  # older than the racy window: answers about such files are kept


def age(root: Path) -> None:
    """Make every tracked file, the git index and config an hour old, as in a checkout not touched for a while."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            os.utime(os.path.join(dirpath, name), (OLD, OLD), follow_symlinks=False)
    for name in ("index", "config"):
        os.utime(root / ".git" / name, (OLD, OLD))


def fresh_dirty(root: Path, cache: Path) -> bool:
    """is_dirty as a command of a new process asks it: a new GitVcs on the same cache, the command succeeding."""
    with GitVcs(root, cache_dir=cache) as repo:
        dirty = repo.is_dirty()
    write_deferred()
    return dirty


@pytest.fixture
def aged_repo(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    root = tmp_path / "work"
    shas = make_repo(root, [{"files": {"a.txt": "alpha\n", "d/b.txt": "beta\n"}, "message": "first"},
                            {"files": {"a.txt": "alpha two\n", "d/b.txt": "beta\n"}, "message": "second line\n\nbody"}])
    age(root)
    cache = tmp_path / "cache"
    cache.mkdir()
    return root, cache, shas


def test_a_remembered_clean_answer_brings_heads_commit_without_opening_dulwich(aged_repo):
    root, cache, shas = aged_repo
    assert fresh_dirty(root, cache) is False
    assert (cache / STATE_FILE).is_file()
    with GitVcs(root, cache_dir=cache) as repo:
        assert repo.is_dirty() is False
        info = repo.minor_info(shas[-1])
        assert repo._repo is None  # answered from the cache and the ref files alone
    with GitVcs(root) as plain:
        assert info == plain.minor_info(shas[-1])


@pytest.mark.parametrize("change", ["edit", "same_size_edit_kept_old_size", "delete", "chmod", "stage", "commit"])
def test_every_change_is_noticed_through_the_remembered_answer(aged_repo, change):
    root, cache, _ = aged_repo
    assert fresh_dirty(root, cache) is False
    expected = True
    if change == "edit":
        (root / "a.txt").write_text("alpha two and more\n")
    elif change == "same_size_edit_kept_old_size":
        (root / "d" / "b.txt").write_text("BETA\n")  # same size, new mtime
    elif change == "delete":
        (root / "d" / "b.txt").unlink()
    elif change == "chmod":
        os.chmod(root / "a.txt", 0o755)
    elif change == "stage":
        stage_files(root, {"a.txt": "staged\n"})
    else:
        make_repo(root, [{"files": {"a.txt": "alpha three\n", "d/b.txt": "beta\n"}, "message": "third"}])
        expected = False  # a new HEAD is a new question, answered afresh (clean)
    assert fresh_dirty(root, cache) is expected
    with GitVcs(root) as plain:
        assert plain.is_dirty() is expected


def test_a_dirty_answer_is_remembered_and_dropped_when_the_file_is_restored(aged_repo):
    root, cache, _ = aged_repo
    (root / "a.txt").write_text("changed\n")
    os.utime(root / "a.txt", (OLD, OLD))
    assert fresh_dirty(root, cache) is True
    assert fresh_dirty(root, cache) is True
    (root / "a.txt").write_text("alpha two\n")
    assert fresh_dirty(root, cache) is False


def test_a_young_answer_is_not_kept(tmp_path):
    root = tmp_path / "young"
    make_repo(root, [{"files": {"a.txt": "a\n"}, "message": "first"}])
    cache = tmp_path / "cache"
    cache.mkdir()
    assert fresh_dirty(root, cache) is False
    assert not (cache / STATE_FILE).exists()  # the files changed within the racy window


def test_ref_files_agree_with_dulwich_on_branches_packed_refs_and_detached_heads(aged_repo):
    root, _, shas = aged_repo
    refs = RefFiles(root)
    assert refs.resolve() == shas[-1] and refs.head_contents() == b"ref: refs/heads/main"
    # the branch moved into packed-refs (as 'git pack-refs' does)
    loose = root / ".git" / "refs" / "heads" / "main"
    loose.unlink()
    (root / ".git" / "packed-refs").write_text(f"# pack-refs with: peeled fully-peeled sorted\n{shas[-1]} refs/heads/main\n")
    assert refs.resolve() == shas[-1]
    with GitVcs(root) as repo:
        assert repo.head() == shas[-1] and repo.major_version() == "main"
    # detached
    (root / ".git" / "HEAD").write_text(shas[0] + "\n")
    assert refs.resolve() == shas[0]
    with GitVcs(root) as repo, Repo(str(root)) as dulwich_repo:
        assert repo.head() == dulwich_repo.refs[b"HEAD"].decode() == shas[0]
        assert repo.major_version() == "HEAD"


def test_an_unborn_branch_and_a_gitfile(tmp_path):
    unborn = tmp_path / "unborn"
    Repo.init(str(unborn), mkdir=True).close()
    assert RefFiles(unborn).resolve() is None  # dulwich decides: an empty repository
    real = tmp_path / "real"
    shas = make_repo(real, [{"files": {"a": "a\n"}, "message": "m"}])
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {real / '.git'}\n")
    assert RefFiles(linked).resolve() == shas[0]


def test_an_answer_is_written_only_when_the_command_succeeds(aged_repo):
    root, cache, _ = aged_repo
    with command_scope():
        with GitVcs(root, cache_dir=cache) as repo:
            assert repo.is_dirty() is False
        assert not (cache / STATE_FILE).exists()  # the command has not ended yet: nothing written
        write_deferred()
    assert (cache / STATE_FILE).is_file()


def test_a_failed_command_leaves_no_answer_behind_and_no_command_writes_at_once(aged_repo):
    root, cache, _ = aged_repo
    with pytest.raises(RuntimeError), command_scope():
        with GitVcs(root, cache_dir=cache) as repo:
            assert repo.is_dirty() is False
        raise RuntimeError("the command failed after asking")
    write_deferred()  # a later command's success does not write what the failed one learnt
    assert not (cache / STATE_FILE).exists()
    with GitVcs(root, cache_dir=cache) as repo:  # outside any command (the TUI, a library user): kept at once
        assert repo.is_dirty() is False
    assert (cache / STATE_FILE).is_file()
