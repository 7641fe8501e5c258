"""Tests of perun_core.vcs against real git repositories built with dulwich."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path

import pytest
from dulwich.index import commit_tree
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob, Commit, Tag, Tree
from dulwich.repo import Repo
from gitrepo import (  # tests/ is on sys.path
    BASE_TIME,
    commit_files,
    fast_linear_history,
    make_repo,
    stage_files,
)

from perun_core import vcs
from perun_core.vcs import commits as vcs_commits
from perun_core.vcs import constants as vcs_constants
from perun_core.vcs import packs as vcs_packs
from perun_core.errors import (
    EmptyRepository,
    InvalidRevision,
    NotGitRepository,
    VcsError,
)
from perun_core.vcs import (
    GitVcs,
    MinorVersion,
    SavedState,
    find_git_root,
    init_repository,
)

# --------------------------------------------------------------------------- helpers


def snapshot_worktree(root: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every file and symlink below root except .git: path -> (kind, content, mode bits)."""
    result = {}
    for current, dirs, files in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in files + [d for d in dirs if os.path.islink(os.path.join(current, d))]:
            full = os.path.join(current, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                result[rel] = ("link", os.fsencode(os.readlink(full)), 0)
            else:
                result[rel] = ("file", Path(full).read_bytes(), stat.S_IMODE(st.st_mode))
    return result


def snapshot_git_state(root: Path) -> dict[str, bytes]:
    """Bytes of the index and of every ref file (HEAD, refs/, packed-refs)."""
    git = root / ".git"
    state = {}
    for path in [git / "index", git / "HEAD", git / "packed-refs"]:
        if path.exists():
            state[path.name] = path.read_bytes()
    for current, _dirs, files in os.walk(git / "refs"):
        for name in files:
            full = Path(current) / name
            state[str(full.relative_to(git))] = full.read_bytes()
    return state


def index_tree_id(root: Path) -> bytes:
    with Repo(str(root)) as repo:
        index = repo.open_index()
        return commit_tree(MemoryObjectStore(), index.iterobjects())


def commit_tree_id(root: Path, sha: str) -> bytes:
    with Repo(str(root)) as repo:
        return repo[sha.encode()].tree


def add_raw_commit(root: Path, *, message: str, parents: list[str], author: bytes, committer: bytes,
                   author_time: int, commit_time: int, tz: int = 0, raw_message: bytes | None = None) -> str:
    with Repo(str(root)) as repo:
        tree = repo[repo.head()].tree
        commit = Commit()
        commit.tree = tree
        commit.parents = [p.encode() for p in parents]
        commit.author = author
        commit.committer = committer
        commit.author_time = author_time
        commit.commit_time = commit_time
        commit.author_timezone = tz
        commit.commit_timezone = 0
        commit.message = raw_message if raw_message is not None else message.encode()
        repo.object_store.add_object(commit)
        return commit.id.decode()


@pytest.fixture
def merge_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    """0 - 1 - 3 - 4(merge of 3 and 2) - 5(octopus of 4, side2, 0)
            \\- 2 -/         side2 = 6
    """
    root = tmp_path / "merge"
    shas = make_repo(
        root,
        [
            {"files": {"a.txt": "root\n"}, "message": "root commit", "time": BASE_TIME},
            {"files": {"a.txt": "one\n"}, "time": BASE_TIME + 200, "annotated_tag": "v1.0"},
            {"files": {"a.txt": "root\n", "b.txt": "side\n"}, "parents": [0], "time": BASE_TIME + 300,
             "branch": "side", "tag": "light"},
            {"files": {"a.txt": "three\n"}, "parents": [1], "time": BASE_TIME + 400},
            {"files": {"a.txt": "three\n", "b.txt": "side\n"}, "parents": [3, 2], "time": BASE_TIME + 500,
             "message": "merge side\n\nlonger body\n"},
            {"files": {"c.txt": "x"}, "parents": [0], "time": BASE_TIME + 50, "branch": "side2"},
            {"files": {"a.txt": "octopus\n"}, "parents": [4, 5, 0], "time": BASE_TIME + 600, "message": "octopus"},
        ],
    )
    return root, shas


# --------------------------------------------------------------------------- data and helpers


def test_minor_version_short_desc_and_fields() -> None:
    info = MinorVersion("a" * 40, 10, 3600, "Ann", "ann@x.org", "subject line\n\nbody text", ("b" * 40,))
    assert info.short_desc == "subject line"
    assert MinorVersion("a" * 40, 0, 0, "", "", "", ()).short_desc == ""
    with pytest.raises(AttributeError):
        info.date = 5  # type: ignore[misc]
    # the fast internal constructor builds equal, equally hashable objects
    fast = vcs_commits._new_minor("a" * 40, 10, 3600, "Ann", "ann@x.org", "subject line\n\nbody text", ("b" * 40,))
    assert fast == info and hash(fast) == hash(info)


def test_find_git_root(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    make_repo(root, 1)
    deep = root / "x" / "y"
    deep.mkdir(parents=True)
    assert find_git_root(deep) == root
    assert find_git_root(root) == root
    assert find_git_root(root / "file.txt") == root  # a file: its directory is the start
    # a gitfile (worktree / submodule style) counts too
    linked = tmp_path / "linked" / "sub"
    linked.mkdir(parents=True)
    (tmp_path / "linked" / ".git").write_text("gitdir: ../proj/.git\n")
    assert find_git_root(linked) == tmp_path / "linked"
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    found = find_git_root(plain)
    assert found is None or tmp_path not in [found, *found.parents]


def test_init_repository(tmp_path: Path) -> None:
    target = tmp_path / "new" / "repo"
    assert init_repository(target) is True
    assert (target / ".git" / "HEAD").is_file()
    assert init_repository(target) is False
    with GitVcs(target) as repo, pytest.raises(EmptyRepository):
        repo.head()

    # reinit keeps history
    shas = make_repo(tmp_path / "existing", 2)
    assert init_repository(tmp_path / "existing", params={"initial-branch": "other"}) is False
    with GitVcs(tmp_path / "existing") as repo:
        assert repo.head() == shas[-1]
        assert repo.major_version() == "main"

    branchy = tmp_path / "branchy"
    assert init_repository(branchy, params={"initial-branch": "trunk", "description": "perun test"}) is True
    assert (branchy / ".git" / "HEAD").read_bytes() == b"ref: refs/heads/trunk\n"
    assert (branchy / ".git" / "description").read_text() == "perun test\n"
    with GitVcs(branchy) as repo:
        assert repo.major_version() == "trunk"

    bare = tmp_path / "bare.git"
    assert init_repository(bare, bare=True) is True
    assert (bare / "HEAD").is_file() and not (bare / ".git").exists()
    assert init_repository(bare, bare=True) is False
    with GitVcs(bare) as repo:
        assert repo.bare is True
        assert repo.is_dirty() is False

    with pytest.raises(VcsError, match="'shared'"):
        init_repository(tmp_path / "bad", params={"shared": "group"})
    assert not (tmp_path / "bad").exists()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(VcsError):
        init_repository(tmp_path / "afile")


def test_not_a_repository_and_empty_repository(tmp_path: Path) -> None:
    with pytest.raises(NotGitRepository) as excinfo:
        GitVcs(tmp_path)
    assert excinfo.value.path == tmp_path
    with pytest.raises(NotGitRepository):
        GitVcs(tmp_path / "missing")
    # a subdirectory of a work tree is not itself a repository
    make_repo(tmp_path / "r", 1)
    (tmp_path / "r" / "sub").mkdir()
    with pytest.raises(NotGitRepository):
        GitVcs(tmp_path / "r" / "sub")

    empty = tmp_path / "empty"
    init_repository(empty, params={"initial-branch": "main"})
    with GitVcs(empty) as repo:
        with pytest.raises(EmptyRepository) as excinfo2:
            repo.head()
        assert excinfo2.value.path == empty
        with pytest.raises(EmptyRepository):
            repo.massage("HEAD")
        with pytest.raises(EmptyRepository):
            list(repo.walk_minor_versions("HEAD~1"))
        assert repo.major_version() == "main"
        assert list(repo.walk_major_versions()) == []
        assert repo.is_dirty() is False
        state = repo.save_state()
        assert state == SavedState(ref="refs/heads/main", sha=None, dirty=False)


def test_close_and_context_manager(tmp_path: Path) -> None:
    shas = make_repo(tmp_path / "r", 1)
    repo = GitVcs(tmp_path / "r")
    assert repo.head() == shas[0]
    repo.close()
    repo.close()  # idempotent
    with pytest.raises(VcsError):
        repo.head()
    with GitVcs(tmp_path / "r") as repo2:
        assert repo2.root == tmp_path / "r"
    with pytest.raises(VcsError):
        repo2.head()


# --------------------------------------------------------------------------- revisions


def test_massage_every_form(merge_repo: tuple[Path, list[str]]) -> None:
    root, s = merge_repo
    with Repo(str(root)) as raw:
        raw.refs[b"refs/remotes/origin/main"] = s[3].encode()
        raw.refs[b"refs/remotes/upstream/HEAD"] = s[1].encode()
        # a nested annotated tag (tag of a tag), stored as a packed ref
        outer = Tag()
        outer.name = b"nested"
        outer.object = (Tag, raw.refs[b"refs/tags/v1.0"])
        outer.tagger = b"T <t@x>"
        outer.tag_time = BASE_TIME
        outer.tag_timezone = 0
        outer.message = b"nested\n"
        raw.object_store.add_object(outer)
        raw.refs.add_packed_refs({b"refs/tags/nested": outer.id, b"refs/heads/packed": s[2].encode()})
    with GitVcs(root) as repo:
        head = s[6]
        expected = {
            "HEAD": head,
            "@": head,
            "HEAD^0": head,
            "HEAD~0": head,
            "HEAD^": s[4],
            "HEAD~": s[4],
            "HEAD~1": s[4],
            "HEAD^1": s[4],
            "HEAD^2": s[5],
            "HEAD^3": s[0],
            "HEAD~2": s[3],
            "HEAD~3": s[1],
            "HEAD~4": s[0],
            "HEAD^^2": s[2],
            "HEAD~1^2": s[2],
            "main~1^2": s[2],
            "main~1^2~1": s[0],
            "HEAD^^^": s[1],
            "main": head,
            "refs/heads/main": head,
            "heads/main": head,
            "side": s[2],
            "side2": s[5],
            "packed": s[2],
            "light": s[2],
            "v1.0": s[1],
            "tags/v1.0": s[1],
            "refs/tags/v1.0": s[1],
            "v1.0^{}": s[1],
            "v1.0^{commit}": s[1],
            "v1.0~1": s[0],
            "nested": s[1],
            "origin/main": s[3],
            "remotes/origin/main": s[3],
            "upstream": s[1],
            s[2]: s[2],
            s[2].upper(): s[2],
            s[2][:12]: s[2],
            s[2][:12] + "~1": s[0],
        }
        for revision, sha in expected.items():
            assert repo.massage(revision) == sha, revision
        assert repo.minor_info("v1.0").checksum == s[1]


def test_massage_errors(merge_repo: tuple[Path, list[str]]) -> None:
    root, s = merge_repo
    with Repo(str(root)) as raw:
        tree_tag = Tag()
        tree_tag.name = b"treetag"
        tree_tag.object = (Tree, raw[s[0].encode()].tree)
        tree_tag.tagger = b"T <t@x>"
        tree_tag.tag_time = BASE_TIME
        tree_tag.tag_timezone = 0
        tree_tag.message = b"points at a tree\n"
        raw.object_store.add_object(tree_tag)
        raw.refs[b"refs/tags/treetag"] = tree_tag.id
        blob_id = raw[raw[s[0].encode()].tree][b"a.txt"][1].decode()
    with GitVcs(root) as repo:
        for bad in ["nope", "", "   ", "HEAD~999", "HEAD~7", "HEAD^4", "HEAD~1^3", "HEAD^^^^^", "main~1^2~2",
                    "HEAD^{tree}", "HEAD:a.txt", "HEAD@{0}", "^HEAD", "main..side", "HEAD~x", "HEAD^-1",
                    "0" * 40, "abc", "zzzz", "treetag", blob_id, blob_id[:10], "refs/heads/../../config"]:
            with pytest.raises(InvalidRevision) as excinfo:
                repo.massage(bad)
            assert excinfo.value.revision == bad
            with pytest.raises(InvalidRevision):
                repo.check_minor_version_validity(bad)
        with pytest.raises(InvalidRevision, match="beyond the root"):
            repo.massage("HEAD~999")
        with pytest.raises(InvalidRevision, match="parent 4 of a commit with 3 parents"):
            repo.massage("HEAD^4")
        with pytest.raises(InvalidRevision, match="does not name a commit"):
            repo.massage("treetag")
        with pytest.raises(InvalidRevision):
            repo.minor_info("0" * 40)
        assert repo.check_minor_version_validity("HEAD^3") is None


def _find_colliding_commits(tree: bytes) -> tuple[Commit, Commit]:
    """Two commits whose ids share their first 4 hex digits (birthday search, deterministic)."""
    seen: dict[bytes, Commit] = {}
    for i in range(200_000):
        commit = Commit()
        commit.tree = tree
        commit.parents = []
        commit.author = commit.committer = b"Collider <c@example.com>"
        commit.author_time = commit.commit_time = BASE_TIME
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = f"collision candidate {i}\n".encode()
        key = commit.id[:4]
        if key in seen:
            return seen[key], commit
        seen[key] = commit
    raise AssertionError("no collision found")


def test_short_sha_ambiguity(tmp_path: Path) -> None:
    root = tmp_path / "r"
    shas = make_repo(root, 1)
    with Repo(str(root)) as raw:
        tree = raw[shas[0].encode()].tree
        first, second = _find_colliding_commits(tree)
        raw.object_store.add_object(first)
        raw.object_store.add_object(second)
        a, b = first.id.decode(), second.id.decode()
        # a blob sharing the 4-digit prefix of the root commit does not make it ambiguous
        target = shas[0][:4]
        i = 0
        while True:
            data = b"filler %d\n" % i
            if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith(target):
                break
            i += 1
        raw.object_store.add_object(Blob.from_string(data))
    assert a[:4] == b[:4] and a != b
    common = next(i for i in range(40) if a[i] != b[i])
    with GitVcs(root) as repo:
        with pytest.raises(InvalidRevision, match="is ambiguous") as excinfo:
            repo.massage(a[:4])
        assert excinfo.value.revision == a[:4]
        with pytest.raises(InvalidRevision, match="ambiguous"):
            repo.massage(a[:common])  # still shared
        assert repo.massage(a[: max(common + 1, 4)]) == a
        assert repo.massage(b[: max(common + 1, 4)]) == b
        assert repo.massage(shas[0][:4]) == shas[0]
        with pytest.raises(InvalidRevision, match="does not name a commit"):
            repo.massage(hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:8])


# --------------------------------------------------------------------------- commit data


def test_minor_info_fields(tmp_path: Path) -> None:
    root = tmp_path / "r"
    shas = make_repo(root, 1)
    sha = add_raw_commit(
        root,
        message="",
        parents=[shas[0]],
        author="Jóna Autorová <jona@example.com>".encode(),
        committer=b"Commit Bot <bot@example.com>",
        author_time=1_600_000_000,
        commit_time=1_650_000_000,
        tz=-(5 * 3600 + 30 * 60),
        raw_message="Měření výkonu\n\nbody line 1\nbody line 2\n".encode(),
    )
    broken = add_raw_commit(
        root, message="", parents=[sha], author=b"X <x@y>", committer=b"X <x@y>",
        author_time=5, commit_time=5, tz=3600, raw_message=b"bad \xff byte\n",
    )
    with GitVcs(root) as repo:
        info = repo.minor_info(sha)
        assert info == MinorVersion(
            checksum=sha,
            date=1_600_000_000,
            tz_offset=-(5 * 3600 + 30 * 60),
            author="Jóna Autorová",
            email="jona@example.com",
            desc="Měření výkonu\n\nbody line 1\nbody line 2",
            parents=(shas[0],),
        )
        assert info.short_desc == "Měření výkonu"
        assert repo.minor_info(sha[:10]) == info
        bad = repo.minor_info(broken)
        assert bad.desc == "bad \ufffd byte"
        assert bad.tz_offset == 3600 and bad.date == 5 and bad.parents == (sha,)
        root_info = repo.minor_info(shas[0])
        assert root_info.parents == ()
        assert (root_info.author, root_info.email) == ("Perun Tester", "tester@example.com")


def test_commit_parser_general_path_matches() -> None:
    canonical = (
        b"tree " + b"1" * 40 + b"\nparent " + b"2" * 40 + b"\nparent " + b"3" * 40 +
        b"\nauthor A B <a@b.c> 1700000000 +0130\ncommitter C <c@d> 1700000100 -0200\n\nSubject\n\nBody\n"
    )
    fast = vcs_commits._parse_commit("f" * 40, canonical)
    general = vcs_commits._parse_commit_general("f" * 40, canonical)
    assert fast == general
    assert fast[0] == 1700000100
    assert fast[1].tz_offset == 5400 and fast[1].parents == ("2" * 40, "3" * 40) and fast[1].author == "A B"
    # signed commits and encoding headers take the general path
    signature = b"\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----"
    signed = canonical.replace(b"\n\nSubject", signature + b"\n\nSubject")
    assert vcs_commits._parse_commit("f" * 40, signed)[1] == fast[1]
    latin = canonical.replace(b"\n\nSubject", b"\nencoding ISO-8859-1\n\nSubj\xe9ct")
    assert vcs_commits._parse_commit("f" * 40, latin)[1].short_desc == "Subjéct"
    odd = b"tree " + b"1" * 40 + b"\nauthor <only@mail> 12 +0000\ncommitter <only@mail> 13 +0000\n\nm"
    assert vcs_commits._parse_commit("e" * 40, odd)[1] == MinorVersion("e" * 40, 12, 0, "", "only@mail", "m", ())


# --------------------------------------------------------------------------- history


def test_walk_merges_order_and_uniqueness(merge_repo: tuple[Path, list[str]]) -> None:
    root, s = merge_repo
    with GitVcs(root) as repo:
        walked = [m.checksum for m in repo.walk_minor_versions("HEAD")]
        # commit-date order, parents discovered through every merge parent, each once
        assert walked == [s[6], s[4], s[3], s[2], s[1], s[5], s[0]]
        assert len(set(walked)) == len(walked)
        assert [m.checksum for m in repo.walk_minor_versions("HEAD~1")] == [s[4], s[3], s[2], s[1], s[0]]
        assert [m.checksum for m in repo.walk_minor_versions("side")] == [s[2], s[0]]
        assert [m.checksum for m in repo.walk_minor_versions("v1.0")] == [s[1], s[0]]
        infos = list(repo.walk_minor_versions(s[4]))
        assert infos[0].desc == "merge side\n\nlonger body" and infos[0].parents == (s[3], s[2])
        with pytest.raises(InvalidRevision):
            repo.walk_minor_versions("nope")  # raised eagerly, not on first next()


def test_walk_clock_skew_and_ties(tmp_path: Path) -> None:
    root = tmp_path / "skew"
    s = make_repo(
        root,
        [
            {"time": 100},
            {"parents": [0], "time": 900, "branch": "side"},  # newer than the merge that includes it
            {"parents": [0], "time": 200},
            {"parents": [2, 1], "time": 300},
        ],
    )
    with GitVcs(root) as repo:
        assert [m.checksum for m in repo.walk_minor_versions("HEAD")] == [s[3], s[1], s[2], s[0]]
    ties = tmp_path / "ties"
    t = make_repo(ties, [{"time": 100}, {"parents": [0], "time": 100}, {"parents": [0], "time": 100},
                         {"parents": [1, 2], "time": 100}])
    with GitVcs(ties) as repo:
        # equal times: discovery order (first parent first), like git log
        assert [m.checksum for m in repo.walk_minor_versions("HEAD")] == [t[3], t[1], t[2], t[0]]


def test_walk_major_versions_sorted(merge_repo: tuple[Path, list[str]]) -> None:
    root, s = merge_repo
    with Repo(str(root)) as raw:
        raw.refs[b"refs/heads/feature/x"] = s[1].encode()
        raw.refs[b"refs/heads/Alpha"] = s[1].encode()
    with GitVcs(root) as repo:
        assert list(repo.walk_major_versions()) == ["Alpha", "feature/x", "main", "side", "side2"]
        assert repo.major_version() == "main"


# --------------------------------------------------------------------------- history cache


def _cache_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("history-*.json"))


def test_history_cache_written_and_reused(merge_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, s = merge_repo
    cache = tmp_path / "cache" / "nested"
    with GitVcs(root) as plain:
        expected = list(plain.walk_minor_versions("HEAD"))
    with GitVcs(root, cache_dir=cache) as repo:
        assert list(repo.walk_minor_versions("HEAD")) == expected
        files = _cache_files(cache)
        assert [f.name for f in files] == [f"history-{s[6]}.json"]
        document = json.loads(files[0].read_bytes())  # the cache file is plain JSON
        assert document["format"] == vcs_constants.HISTORY_CACHE_VERSION and document["start"] == s[6]
        commits_json = json.dumps(document["commits"], ensure_ascii=False, separators=(",", ":")).encode()
        assert hashlib.sha1(commits_json).hexdigest() == document["checksum"]
        assert [row[0] for row in document["commits"]] == [m.checksum for m in expected]
        assert document["commits"][1] == [s[4], BASE_TIME + 500, 0, "Perun Tester", "tester@example.com",
                                          "merge side\n\nlonger body", [s[3], s[2]]]
        assert list(repo.walk_minor_versions("main")) == expected  # served from the cache


def _rewrite_cache(path: Path, mutate) -> None:
    """Change a cache file's content and give it a matching, valid checksum."""
    document = json.loads(path.read_bytes())
    mutate(document)
    commits = json.dumps(document["commits"], separators=(",", ":")).encode()
    path.write_bytes(
        b'{"format":%d,"checksum":"%s","start":"%s","commits":%s}'
        % (document["format"], hashlib.sha1(commits).hexdigest().encode(), document["start"].encode(), commits)
    )


def _cache_is_valid(path: Path) -> bool:
    document = json.loads(path.read_bytes())
    commits = json.dumps(document["commits"], ensure_ascii=False, separators=(",", ":")).encode()
    return document["format"] == vcs_constants.HISTORY_CACHE_VERSION and hashlib.sha1(commits).hexdigest() == document["checksum"]


def test_history_cache_is_really_used_and_incremental(tmp_path: Path) -> None:
    root = tmp_path / "r"
    s = make_repo(root, 5)
    cache = tmp_path / "cache"
    with GitVcs(root, cache_dir=cache) as repo:
        list(repo.walk_minor_versions(s[2]))
        cached = cache / f"history-{s[2]}.json"

        # a cache file with a valid checksum but different content is trusted: proof it is read
        def mark(document: dict) -> None:
            document["commits"][1][5] = "from the cache"

        _rewrite_cache(cached, mark)
        assert [m.desc for m in repo.walk_minor_versions(s[2])] == ["commit 2", "from the cache", "commit 0"]
        # walking from a descendant reuses the ancestor's cached history
        walked = list(repo.walk_minor_versions(s[4]))
        assert [m.checksum for m in walked] == [s[4], s[3], s[2], s[1], s[0]]
        assert [m.desc for m in walked] == ["commit 4", "commit 3", "commit 2", "from the cache", "commit 0"]
        assert (cache / f"history-{s[4]}.json").exists()


def test_history_cache_incremental_with_merges(tmp_path: Path) -> None:
    root = tmp_path / "r"
    s = make_repo(root, [{"time": 100}, {"time": 200}, {"parents": [0], "time": 150, "branch": "b"},
                         {"parents": [1, 2], "time": 300}])
    cache = tmp_path / "cache"
    with GitVcs(root, cache_dir=cache) as repo:
        # cache the history of commit 1 (does not contain 2), then walk the merge
        assert [m.checksum for m in repo.walk_minor_versions(s[1])] == [s[1], s[0]]
        assert [m.checksum for m in repo.walk_minor_versions(s[3])] == [s[3], s[1], s[2], s[0]]
        assert [m.checksum for m in repo.walk_minor_versions(s[3])] == [s[3], s[1], s[2], s[0]]
        # more commits on top of the merge reuse its cache
        more = commit_files(root, {"new.txt": "n"}, "after merge")
        assert [m.checksum for m in repo.walk_minor_versions("HEAD")] == [more, s[3], s[1], s[2], s[0]]


@pytest.mark.parametrize(
    "damage", ["flip", "flip-header", "truncate", "version", "garbage", "empty", "wrong-start", "bad-rows"]
)
def test_history_cache_corruption_is_ignored(merge_repo: tuple[Path, list[str]], tmp_path: Path, damage: str) -> None:
    root, s = merge_repo
    cache = tmp_path / "cache"
    with GitVcs(root, cache_dir=cache) as repo:
        expected = [m.checksum for m in repo.walk_minor_versions("HEAD")]
        path = cache / f"history-{s[6]}.json"
        data = bytearray(path.read_bytes())
        if damage == "flip":
            data[len(data) // 2] ^= 0x01
        elif damage == "truncate":
            data = data[: len(data) // 2]
        elif damage == "version":
            _rewrite_cache(path, lambda d: d.__setitem__("format", 99))
            data = bytearray(path.read_bytes())
        elif damage == "flip-header":
            data[30] ^= 0x01
        elif damage == "bad-rows":
            _rewrite_cache(path, lambda d: d.__setitem__("commits", [["x"], 5]))
            data = bytearray(path.read_bytes())
        elif damage == "garbage":
            data = bytearray(b"\x00\xffnot a cache at all")
        elif damage == "empty":
            data = bytearray()
        elif damage == "wrong-start":
            _rewrite_cache(path, lambda d: d.__setitem__("start", s[0]))
            data = bytearray(path.read_bytes())
        path.write_bytes(bytes(data))
        again = [m.checksum for m in repo.walk_minor_versions("HEAD")]
        assert again == expected
        # rebuilt: the file is valid again
        assert _cache_is_valid(path)


def test_history_cache_keeps_at_most_limit_files(tmp_path: Path) -> None:
    root = tmp_path / "r"
    s = make_repo(root, 12)
    cache = tmp_path / "cache"
    (cache).mkdir()
    (cache / "unrelated.txt").write_text("keep me")
    with GitVcs(root, cache_dir=cache) as repo:
        for i, sha in enumerate(s):
            list(repo.walk_minor_versions(sha))
            # distinct mtimes even on coarse filesystems
            os.utime(cache / f"history-{sha}.json", ns=(i * 10**9, (i + 1) * 10**9))
        names = {f.name for f in _cache_files(cache)}
    assert len(names) == vcs_constants.HISTORY_CACHE_LIMIT
    assert names == {f"history-{sha}.json" for sha in s[-vcs_constants.HISTORY_CACHE_LIMIT:]}
    assert (cache / "unrelated.txt").read_text() == "keep me"


def test_walk_10k_commits_once_then_from_the_cache(tmp_path: Path, monkeypatch) -> None:
    """Ten thousand commits are walked in git's order, and the second walk comes from the cache without reading one
    git object (how fast either is belongs to benchmarks/, not to a pass/fail bound a loaded machine can break)."""
    root = tmp_path / "big"
    shas = fast_linear_history(root, 10_000)
    cache = tmp_path / "cache"
    with GitVcs(root, cache_dir=cache) as repo:
        assert repo.is_dirty() is False
        walked = list(repo.walk_minor_versions("HEAD"))
        reads = []
        real_walk = repo._walk
        monkeypatch.setattr(repo, "_walk", lambda *args: reads.append(args) or real_walk(*args))
        cached = list(repo.walk_minor_versions("HEAD"))
    assert [m.checksum for m in walked] == shas[::-1]
    assert cached == walked and reads == []
    assert walked[-1].parents == () and walked[0].parents == (shas[-2],)


# --------------------------------------------------------------------------- dirty


@pytest.fixture
def work_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "work"
    shas = make_repo(
        root,
        [
            {"files": {"a.txt": "alpha\n", "old.txt": "old\n", "keep/k.txt": "k\n"}, "message": "first"},
            {
                "files": {
                    "a.txt": "alpha two\n",
                    "keep/k.txt": "k\n",
                    "sub/deep/b.sh": ("exec", "#!/bin/sh\necho b\n"),
                    "link": ("symlink", "a.txt"),
                },
                "message": "second",
            },
        ],
    )
    return root, shas


def test_is_dirty_cases(work_repo: tuple[Path, list[str]]) -> None:
    root, _ = work_repo
    with GitVcs(root) as repo:
        assert repo.is_dirty() is False
        # untracked files (also in new directories) do not count
        (root / "untracked.txt").write_text("u")
        (root / "newdir").mkdir()
        (root / "newdir" / "x").write_text("x")
        assert repo.is_dirty() is False
        # touching a file without changing it is clean
        os.utime(root / "a.txt", (1, 1))
        assert repo.is_dirty() is False
        # modification of the same size right after the index was written (racy git)
        (root / "a.txt").write_text("ALPHA TWO\n")
        assert repo.is_dirty() is True
        (root / "a.txt").write_text("alpha two\n")
        assert repo.is_dirty() is False
        (root / "a.txt").write_text("alpha two and more\n")
        assert repo.is_dirty() is True
        (root / "a.txt").write_text("alpha two\n")
        # deletion of a tracked file
        (root / "keep" / "k.txt").unlink()
        assert repo.is_dirty() is True
        (root / "keep" / "k.txt").write_text("k\n")
        assert repo.is_dirty() is False
        # executable bit
        os.chmod(root / "sub" / "deep" / "b.sh", 0o644)
        assert repo.is_dirty() is True
        os.chmod(root / "sub" / "deep" / "b.sh", 0o755)
        assert repo.is_dirty() is False
        # symlink retargeted, and replaced by a regular file
        os.unlink(root / "link")
        os.symlink("keep/k.txt", root / "link")
        assert repo.is_dirty() is True
        os.unlink(root / "link")
        (root / "link").write_text("a.txt")
        assert repo.is_dirty() is True
        os.unlink(root / "link")
        os.symlink("a.txt", root / "link")
        assert repo.is_dirty() is False
        # a tracked file replaced by a directory
        (root / "a.txt").unlink()
        (root / "a.txt").mkdir()
        assert repo.is_dirty() is True
        (root / "a.txt").rmdir()
        (root / "a.txt").write_text("alpha two\n")
        assert repo.is_dirty() is False


def test_is_dirty_staged_changes(work_repo: tuple[Path, list[str]]) -> None:
    root, _ = work_repo
    with GitVcs(root) as repo:
        stage_files(root, {"a.txt": "staged content\n"})  # index and work tree agree, HEAD differs
        assert repo.is_dirty() is True
        stage_files(root, {"a.txt": "alpha two\n"})
        assert repo.is_dirty() is False
        stage_files(root, {"brand-new.txt": "new\n"})  # staged addition
        assert repo.is_dirty() is True
        stage_files(root, {"brand-new.txt": None})
        assert repo.is_dirty() is False
        # staged deletion while the file stays on disk (git rm --cached): untracked, but still dirty
        with Repo(str(root)) as raw:
            index = raw.open_index()
            del index[b"keep/k.txt"]
            index.write()
        assert repo.is_dirty() is True


def test_is_dirty_fast_on_1000_files(tmp_path: Path) -> None:
    root = tmp_path / "many"
    files = {f"dir{i % 20}/file{i}.txt": f"content {i}\n" for i in range(1000)}
    make_repo(root, [{"files": files}])
    with GitVcs(root) as repo:
        start = time.process_time()
        assert repo.is_dirty() is False
        elapsed = time.process_time() - start
        (root / "dir7" / "file7.txt").write_text("changed\n")
        assert repo.is_dirty() is True
    assert elapsed < 1.0, elapsed


# --------------------------------------------------------------------------- export


def test_export_tree_materializes_without_touching_the_repo(work_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, shas = work_repo
    (root / "untracked.txt").write_text("mine")
    (root / "a.txt").write_text("locally modified\n")  # dirty work tree must survive untouched
    before_files = snapshot_worktree(root)
    before_git = snapshot_git_state(root)
    with GitVcs(root) as repo:
        dest = tmp_path / "export" / "new"
        repo.export_tree("HEAD", dest)
        assert (dest / "a.txt").read_bytes() == b"alpha two\n"
        assert (dest / "keep" / "k.txt").read_bytes() == b"k\n"
        script = dest / "sub" / "deep" / "b.sh"
        assert script.read_bytes() == b"#!/bin/sh\necho b\n"
        assert os.stat(script).st_mode & 0o100
        assert not os.stat(dest / "a.txt").st_mode & 0o111
        assert (dest / "link").is_symlink() and os.readlink(dest / "link") == "a.txt"
        assert (dest / "link").read_bytes() == b"alpha two\n"
        assert sorted(p.name for p in dest.iterdir()) == ["a.txt", "keep", "link", "sub"]

        old = tmp_path / "old"
        old.mkdir()
        repo.export_tree(shas[0], old)
        assert snapshot_worktree(old) == {
            "a.txt": ("file", b"alpha\n", stat.S_IMODE(os.stat(old / "a.txt").st_mode)),
            "old.txt": ("file", b"old\n", stat.S_IMODE(os.stat(old / "old.txt").st_mode)),
            os.path.join("keep", "k.txt"): ("file", b"k\n", stat.S_IMODE(os.stat(old / "keep" / "k.txt").st_mode)),
        }
        with pytest.raises(VcsError, match="not empty"):
            repo.export_tree(shas[0], old)
        with pytest.raises(InvalidRevision):
            repo.export_tree("nope", tmp_path / "never")
        assert repo.is_dirty() is True
    assert snapshot_worktree(root) == before_files
    assert snapshot_git_state(root) == before_git


def test_export_tree_submodule_becomes_empty_dir(tmp_path: Path) -> None:
    root = tmp_path / "r"
    shas = make_repo(root, [{"files": {"top.txt": "t"}}])
    with Repo(str(root)) as raw:
        commit = raw[shas[0].encode()]
        tree = raw[commit.tree]
        tree.add(b"vendor", 0o160000, b"1234567890" * 4)
        raw.object_store.add_object(tree)
        new = Commit()
        new.tree = tree.id
        new.parents = [commit.id]
        new.author = new.committer = b"A <a@b>"
        new.author_time = new.commit_time = BASE_TIME + 999
        new.author_timezone = new.commit_timezone = 0
        new.message = b"add submodule\n"
        raw.object_store.add_object(new)
    with GitVcs(root) as repo:
        dest = tmp_path / "out"
        repo.export_tree(new.id.decode(), dest)
        assert (dest / "vendor").is_dir() and list((dest / "vendor").iterdir()) == []
        assert (dest / "top.txt").read_text() == "t"


# --------------------------------------------------------------------------- state and checkout


def test_save_and_restore_state(work_repo: tuple[Path, list[str]]) -> None:
    root, shas = work_repo
    with GitVcs(root) as repo:
        state = repo.save_state()
        assert state == SavedState(ref="refs/heads/main", sha=shas[1], dirty=False)
        assert not state.detached
        files = snapshot_worktree(root)
        repo.checkout(shas[0])
        assert repo.major_version() == "HEAD" and repo.head() == shas[0]
        detached = repo.save_state()
        assert detached == SavedState(ref=None, sha=shas[0], dirty=False) and detached.detached
        # the usual round trip: back to the commit, then re-attach HEAD
        repo.checkout(state.sha)
        repo.restore_state(state)
        assert (root / ".git" / "HEAD").read_bytes() == b"ref: refs/heads/main\n"
        assert repo.major_version() == "main" and repo.head() == shas[1]
        assert repo.is_dirty() is False
        assert snapshot_worktree(root) == files
        # restoring a detached state moves HEAD only: files stay
        repo.restore_state(detached)
        assert (root / ".git" / "HEAD").read_bytes() == (shas[0] + "\n").encode()
        assert repo.major_version() == "HEAD" and repo.head() == shas[0]
        assert snapshot_worktree(root) == files
        assert repo.is_dirty() is True  # work tree is still the one of shas[1]
        repo.restore_state(state)
        assert repo.is_dirty() is False
        (root / "a.txt").write_text("dirty\n")
        assert repo.save_state().dirty is True


def test_checkout_updates_tree_index_and_head(work_repo: tuple[Path, list[str]]) -> None:
    root, shas = work_repo
    (root / "untracked.txt").write_text("mine")
    (root / "sub" / "deep" / "notes.md").write_text("my notes")  # untracked inside a tracked dir
    with GitVcs(root) as repo:
        repo.checkout(shas[0])
        assert repo.head() == shas[0]
        assert repo.major_version() == "HEAD"
        assert (root / ".git" / "refs" / "heads" / "main").read_text().strip() == shas[1]
        assert (root / "a.txt").read_text() == "alpha\n"
        assert (root / "old.txt").read_text() == "old\n"
        assert not (root / "link").exists() and not (root / "link").is_symlink()
        assert not (root / "sub" / "deep" / "b.sh").exists()
        # untracked files survive, and keep their directory
        assert (root / "untracked.txt").read_text() == "mine"
        assert (root / "sub" / "deep" / "notes.md").read_text() == "my notes"
        assert index_tree_id(root) == commit_tree_id(root, shas[0])
        assert repo.is_dirty() is False

        repo.checkout("main")
        assert repo.head() == shas[1] and repo.major_version() == "HEAD"
        assert not (root / "old.txt").exists()
        assert os.stat(root / "sub" / "deep" / "b.sh").st_mode & 0o100
        assert os.readlink(root / "link") == "a.txt"
        assert index_tree_id(root) == commit_tree_id(root, shas[1])
        assert repo.is_dirty() is False


def test_checkout_prunes_emptied_directories(tmp_path: Path) -> None:
    root = tmp_path / "r"
    shas = make_repo(root, [{"files": {"a": "1"}}, {"files": {"a": "1", "x/y/z.txt": "z"}}])
    with GitVcs(root) as repo:
        repo.checkout(shas[0])
        assert not (root / "x").exists()
        repo.checkout(shas[1])
        assert (root / "x" / "y" / "z.txt").read_text() == "z"


def test_checkout_refuses_dirty_tree(work_repo: tuple[Path, list[str]]) -> None:
    root, shas = work_repo
    with GitVcs(root) as repo:
        (root / "a.txt").write_text("uncommitted\n")
        before_git = snapshot_git_state(root)
        with pytest.raises(VcsError) as excinfo:
            repo.checkout(shas[0])
        assert "commit" in (excinfo.value.hint or "") and "stash" in (excinfo.value.hint or "")
        assert (root / "a.txt").read_text() == "uncommitted\n"
        assert snapshot_git_state(root) == before_git
        (root / "a.txt").write_text("alpha two\n")
        stage_files(root, {"keep/k.txt": "staged\n"})
        with pytest.raises(VcsError, match="uncommitted"):
            repo.checkout(shas[0])
        assert repo.head() == shas[1]


def test_checkout_refuses_to_overwrite_untracked(work_repo: tuple[Path, list[str]]) -> None:
    root, shas = work_repo
    (root / "old.txt").write_text("my own old.txt, not tracked at HEAD\n")
    with GitVcs(root) as repo:
        assert repo.is_dirty() is False
        before_files = snapshot_worktree(root)
        before_git = snapshot_git_state(root)
        with pytest.raises(VcsError, match="old.txt"):
            repo.checkout(shas[0])
        assert snapshot_worktree(root) == before_files
        assert snapshot_git_state(root) == before_git


def test_bare_repository(work_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, shas = work_repo
    with Repo(str(root)) as raw:
        bare_repo = raw.clone(str(tmp_path / "bare.git"), bare=True)
        bare_repo.close()
    with GitVcs(tmp_path / "bare.git") as repo:
        assert repo.bare is True
        assert repo.head() == shas[1]
        assert repo.is_dirty() is False
        assert [m.checksum for m in repo.walk_minor_versions("main")] == [shas[1], shas[0]]
        repo.export_tree(shas[0], tmp_path / "bare-export")
        assert (tmp_path / "bare-export" / "old.txt").read_text() == "old\n"
        with pytest.raises(VcsError, match="bare"):
            repo.checkout(shas[0])


# --------------------------------------------------------------------------- helper


def test_gitrepo_helpers_build_clean_repositories(tmp_path: Path) -> None:
    root = tmp_path / "h"
    shas = make_repo(root, [{"files": {"f.txt": "1"}, "author": "Ann Example <ann@example.org>", "time": 1234,
                              "message": "custom"}])
    sha2 = commit_files(root, {"g.txt": b"\x00binary", "f.txt": None}, "second")
    with GitVcs(root) as repo:
        info = repo.minor_info(shas[0])
        assert (info.author, info.email, info.date, info.desc) == ("Ann Example", "ann@example.org", 1234, "custom")
        assert repo.head() == sha2 and repo.minor_info(sha2).parents == (shas[0],)
        assert repo.is_dirty() is False
    assert not (root / "f.txt").exists() and (root / "g.txt").read_bytes() == b"\x00binary"
    assert index_tree_id(root) == commit_tree_id(root, sha2)
    more = make_repo(root, 2)  # extends the existing repository
    with GitVcs(root) as repo:
        assert [m.checksum for m in repo.walk_minor_versions("HEAD")][:3] == [more[1], more[0], sha2]
        assert repo.is_dirty() is False


def test_walk_reads_packed_commits_itself_and_matches_dulwich(tmp_path: Path) -> None:
    # Over 256 commits, so the offsets come from the whole pack index read at once;
    # long and non-ASCII messages cross the inflater's first window.
    specs = [{"message": f"commit {i} " + ("ž" * 30_000 if i % 97 == 0 else "x" * (i % 13)),
              "author": "Zoë Dvořák <zoe@example.org>"} for i in range(300)]
    shas = make_repo(tmp_path, specs)
    with GitVcs(tmp_path) as repo:
        loose = list(repo.walk_minor_versions(shas[-1]))
    raw = Repo(str(tmp_path))
    raw.object_store.pack_loose_objects()
    raw.close()
    assert not [f for d in (tmp_path / ".git" / "objects").iterdir() if len(d.name) == 2 for f in d.iterdir()]
    with GitVcs(tmp_path) as repo:
        packed = list(repo.walk_minor_versions(shas[-1]))
        pack = repo.repo.object_store.packs[0]
        table = vcs_packs._read_index_v2(pack._idx_path)
        assert table == {name: offset for name, offset, _ in pack.index.iterentries()}
        big = vcs_packs._read_whole_object(vcs_packs._map_pack(pack), table[bytes.fromhex(shas[0])])
        assert big is not None and big[0] == 1 and "ž" * 30_000 in big[1].decode()
    assert packed == loose
    assert [v.checksum for v in packed] == shas[::-1]


def test_threads_resolving_their_first_commits_at_once_all_find_them(tmp_path):
    """A freshly opened repository whose history is one pack, looked up by four threads at the same moment.

    dulwich fills its pack cache lazily; without the rescan one thread in two
    reported a present commit as missing (the demo's two collection phases
    failed that way on a CI machine).
    """
    import threading

    from perun_core.api._demo.gitwrite import GitCommit, write_history

    for attempt in range(25):
        root = tmp_path / f"packed-{attempt}"
        commits = [GitCommit({"a": str(n).encode()}, f"c{n}", ("A", "a@example", 0), BASE_TIME + n,
                             [n - 1] if n else []) for n in range(4)]
        shas = write_history(root, commits, {"main": 3})
        errors: list[BaseException] = []
        with vcs.GitVcs(root) as repo:
            start = threading.Barrier(len(shas))

            def resolve(sha: str) -> None:
                start.wait()
                try:
                    assert repo.massage(sha) == sha
                except BaseException as exc:  # noqa: BLE001 - collected and reported below
                    errors.append(exc)

            threads = [threading.Thread(target=resolve, args=(sha,)) for sha in shas]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert not errors, f"attempt {attempt}: {errors[0]!r}"
