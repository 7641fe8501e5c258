"""The post-commit hook as git runs it: real ``git commit``s profile the new commit and report its check."""

from __future__ import annotations

import os
import subprocess

from conftest import run_cli
from gitrepo import make_repo
from runhelpers import C_PROGRAM, MAKEFILE, leftover_worktrees, needs_cc, run_env  # noqa: F401 - run_env: autouse

from perun_core import api

WORKLOAD = "20000000"
MATRIX = {"execute.pre_run": ["make"], "cmds": ["./app"], "workloads": [WORKLOAD],
          "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 5}}]}
FILES = {"Makefile": MAKEFILE, ".gitignore": "app\n"}


def git_commit(root, *args: str) -> subprocess.CompletedProcess:
    """``git commit`` as a developer types it (hooks on), with an identity of its own."""
    env = dict(os.environ, GIT_AUTHOR_NAME="Dev", GIT_AUTHOR_EMAIL="dev@example.com",
               GIT_COMMITTER_NAME="Dev", GIT_COMMITTER_EMAIL="dev@example.com")
    return subprocess.run(["git", "commit", "-q", *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)


def head(root) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()


def registered(root, sha: str) -> int:
    """How many profiles are registered at ``sha``."""
    with api.open_repository(root) as repo:
        return len(repo.read_index(sha))


@needs_cc
def test_a_commit_runs_the_hook_which_profiles_it_and_reports_the_slow_down(tmp_path, run_env):
    root = tmp_path / "project"
    (base,) = make_repo(root, [{"files": {**FILES, "app.c": C_PROGRAM.replace("FACTOR", "1")}, "message": "v1"}])
    api.init(root)
    for key, value in MATRIX.items():
        api.config_set(key, value, scope="local", cwd=root)
    installed = run_cli("install-hook", "--yes", cwd=root)
    assert installed.returncode == 0, installed.stderr

    # five times the work: the hook collects v1 (no profiles yet) and v2, checks and confirms
    (root / "app.c").write_text(C_PROGRAM.replace("FACTOR", "5"))
    slower = git_commit(root, "-am", "v2: five times the work")
    assert slower.returncode == 0, slower.stdout + slower.stderr  # a post-commit hook never stops a commit
    output = slower.stdout + slower.stderr
    assert "Degradation" in output and "./app [user]" in output, output
    assert ": confirmed " in output, output
    v2 = head(root)
    assert registered(root, base) == 1 and registered(root, v2) == 1
    stored = api.stored_check(cwd=root)
    assert any(f.location == "./app [user]" and f.result.value == "Degradation" and "confirmed" in f.reason
               for pair in stored.pairs for f in pair.findings), stored

    # an empty commit builds the same program: the hook reports no degradation
    same = git_commit(root, "--allow-empty", "-m", "v3: nothing changed")
    assert same.returncode == 0, same.stdout + same.stderr
    output = same.stdout + same.stderr
    assert "1 pair of profiles checked: 0 degradations" in output, output
    v3 = head(root)
    assert registered(root, v3) == 1
    stored = api.stored_check(v3, cwd=root)
    assert not [f for pair in stored.pairs for f in pair.findings if f.result.value.endswith("Degradation")
                and not f.result.value.startswith("Maybe")], stored
    assert leftover_worktrees(run_env) == []


def test_a_commit_without_the_hook_runs_nothing(tmp_path):
    root = tmp_path / "plain"
    make_repo(root, [{"files": {"a.txt": "1\n"}, "message": "v1"}])
    api.init(root)
    (root / "a.txt").write_text("2\n")
    done = git_commit(root, "-am", "v2")
    assert done.returncode == 0 and done.stdout + done.stderr == ""
    installed = run_cli("install-hook", "--yes", cwd=root)
    removed = run_cli("install-hook", "--uninstall", cwd=root)
    assert installed.returncode == 0 and removed.returncode == 0
    (root / "a.txt").write_text("3\n")
    done = git_commit(root, "-am", "v3")
    assert done.returncode == 0 and done.stdout + done.stderr == ""
