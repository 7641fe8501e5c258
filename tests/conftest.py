"""Shared fixtures: a scrubbed environment and ready-made perun repositories.

The developer's own git and perun configuration must never leak into tests,
so HOME, XDG_CONFIG_HOME, PERUN_CONFIG_DIR, EDITOR, VISUAL, PAGER and GIT_*
are replaced for every test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from tools import need_tools  # noqa: E402 - found through the line above


def pytest_configure(config):
    config.addinivalue_line("markers", "tools(*names): programs the test runs; missing ones skip it, or fail it "
                            "under PERUN_REQUIRE_NATIVE_TOOLS=1 (see tests/tools.py)")


def pytest_runtest_setup(item):
    for mark in item.iter_markers("tools"):
        need_tools(*mark.args)


@pytest.fixture(autouse=True)
def clean_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    for name in ("EDITOR", "VISUAL", "PAGER", "XDG_CONFIG_HOME", "PERUN_CONFIG_DIR", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PERUN_CONFIG_DIR", str(home / "perun-config"))
    return home


def time_profile(origin: str | None, *, cmd: str = "ls", args: str = "-al", workload: str = "/", amounts=(0.5,)) -> dict:
    data = {
        "header": {"type": "time", "units": {"time": "s"}, "cmd": cmd, "params": args, "workload": workload},
        "collector_info": {"name": "time", "params": {"repeat": len(amounts), "warmup": 0}},
        "postprocessors": [],
        "snapshots": [
            {
                "time": "0.1",
                "resources": [
                    {"amount": a, "type": "time", "subtype": "real", "uid": cmd, "order": i + 1}
                    for i, a in enumerate(amounts)
                ],
                "models": [],
            }
        ],
    }
    if origin is not None:
        data = {"origin": origin, **data}
    return data


def write_pending(repo_root: Path, name: str, data: dict | str) -> Path:
    path = repo_root / ".perun" / "jobs" / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def perun_repo(tmp_path):
    """A git repository with two commits and an initialized .perun; returns (root, [shas])."""
    from gitrepo import make_repo

    from perun_core import api

    root = tmp_path / "project"
    shas = make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first"},
                            {"files": {"a.txt": "two\n"}, "message": "second"}])
    api.init(root)
    return root, shas


def run_cli(*args: str, cwd: Path, env: dict | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    """Run perun-core in a subprocess, as a user would."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "perun_core.cli.entry", *args],
        cwd=cwd, env=full_env, capture_output=True, text=True, input=input, timeout=120,
    )
