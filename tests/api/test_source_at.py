"""api.source_at: a file as it was at a commit, read from git whatever the working tree holds."""

from __future__ import annotations

import os

import pytest
from gitrepo import make_repo

from perun_core import api
from perun_core.errors import InvalidRevision, VcsError


@pytest.fixture
def two_commits(tmp_path):
    root = tmp_path / "proj"
    shas = make_repo(root, [{"files": {"src/app.c": "int v = 1;\n", "README": "r\n"}, "message": "v1"},
                            {"files": {"src/app.c": "int v = 2;\n", "README": "r\n",
                                       "bin.dat": b"\xff\xfeok"}, "message": "v2"}])
    api.init(root)
    (root / "src" / "app.c").write_text("int v = 3; /* not committed */\n")
    return root, shas


def test_each_commit_gives_its_own_text_not_the_working_trees(two_commits):
    root, shas = two_commits
    first = api.source_at(shas[0], "src/app.c", cwd=root)
    assert (first.commit, first.path, first.text) == (shas[0], "src/app.c", "int v = 1;\n")
    assert api.source_at("HEAD", "src/app.c", cwd=root).text == "int v = 2;\n"
    # an absolute path inside the repository (as profilers record it), with a detour, is the same file
    absolute = os.path.join(str(root), "src", "..", "src", "app.c")
    assert api.source_at(shas[0][:7], absolute, cwd=root).text == "int v = 1;\n"


def test_bytes_that_are_no_utf8_are_replaced(two_commits):
    root, shas = two_commits
    assert api.source_at(shas[1], "bin.dat", cwd=root).text.endswith("ok")


@pytest.mark.parametrize("path, message", [
    ("src/missing.c", "has no file src/missing.c"),
    ("README/x", "has no file README/x"),
    ("src", "src in commit"),
    ("../outside.c", "no file path inside the repository"),
    ("/etc/passwd", "is not a file of the repository"),
])
def test_what_is_no_file_of_the_commit_is_a_vcs_error(two_commits, path, message):
    root, shas = two_commits
    with pytest.raises(VcsError, match=message):
        api.source_at(shas[0], path, cwd=root)


def test_a_file_added_later_is_not_in_the_older_commit(two_commits):
    root, shas = two_commits
    with pytest.raises(VcsError, match="has no file bin.dat"):
        api.source_at(shas[0], "bin.dat", cwd=root)


def test_an_unknown_revision_is_invalid(two_commits):
    root, _shas = two_commits
    with pytest.raises(InvalidRevision):
        api.source_at("no-such-branch", "src/app.c", cwd=root)
