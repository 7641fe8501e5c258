"""Projects, clones, bare remotes and a git:// server on 127.0.0.1 for the remote tests."""

from __future__ import annotations

import json
import os
import socketserver
import subprocess
import threading
from pathlib import Path

from conftest import time_profile

from perun_core import api

GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def bare_remote(path: Path) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", "--bare", "-b", "master", str(path), cwd=path.parent)
    return path


def project(path: Path, remote: Path, commits: int = 2) -> list[str]:
    """A git project with ``commits`` commits pushed to ``remote`` (as origin) and perun initialised."""
    path.mkdir(parents=True)
    git("init", "-q", "-b", "master", cwd=path)
    for number in range(commits):
        (path / "file.txt").write_text(f"version {number}\n")
        git("add", "file.txt", cwd=path)
        git("commit", "-q", "-m", f"commit {number}", cwd=path)
    git("remote", "add", "origin", str(remote), cwd=path)
    git("push", "-q", "origin", "master", cwd=path)
    api.init(path)
    return git("rev-list", "--reverse", "HEAD", cwd=path).split()


def clone(remote: Path, path: Path) -> Path:
    git("clone", "-q", str(remote), str(path), cwd=remote.parent)
    api.init(path)
    return path


def register(root: Path, minor: str, name: str, amounts=(0.5, 0.6), cmd: str | None = None) -> str:
    """Register a small time profile at ``minor``; returns its object checksum."""
    path = root / ".perun" / "jobs" / f"{name}.perf"
    path.write_text(json.dumps(time_profile(minor, cmd=cmd or f"./{name}", amounts=amounts)))
    return api.add([str(path)], minor=minor, cwd=root)[0].checksum


def entries(root: Path, minor: str) -> set[tuple[str, str]]:
    with api.open_repository(root) as repo:
        return {(e.checksum, e.path) for e in repo.read_index(minor)}


def remote_files(remote: Path) -> dict[str, int]:
    """Every file of a bare repository with its size (to prove nothing changed)."""
    return {str(p.relative_to(remote)): p.stat().st_size for p in remote.rglob("*") if p.is_file()}


def remote_ref(remote: Path) -> str | None:
    try:
        return git("rev-parse", "--verify", "-q", "refs/perun/profiles", cwd=remote)
    except subprocess.CalledProcessError:
        return None


class GitDaemon:
    """dulwich's git:// server for the repositories under ``root``, on a free port of 127.0.0.1."""

    def __init__(self, root: Path) -> None:
        from dulwich.repo import Repo
        from dulwich.server import FileSystemBackend, TCPGitServer

        class Backend(FileSystemBackend):
            # a fresh Repo per request, as a forking git daemon would have
            def open_repository(self, path: str):
                return Repo(os.path.join(self.root, os.fsdecode(path).lstrip("/")))

        class Threaded(socketserver.ThreadingMixIn, TCPGitServer):
            daemon_threads = True

        self.server = Threaded(Backend(str(root)), "127.0.0.1", 0)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
