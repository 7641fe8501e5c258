"""Fixtures of the TUI tests: a demo repository per test, a fixed time zone.

The demo is built once per session (about two seconds) and copied for each
test, so tests that register or unlink profiles never see each other's
changes.  Profile times are shown in the viewer's time zone, so TZ is UTC
here to keep snapshots identical everywhere.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from perun_core.api._demo.synthetic import build_demo_repository


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("demo-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("PERUN_CONFIG_DIR", str(home / "perun-config"))
        return build_demo_repository(tmp_path_factory.mktemp("demo-template") / "sll")


@pytest.fixture
def demo_repo(tmp_path, demo_template) -> Path:
    """A private copy of the 40-commit demo repository (mtimes kept, so times are stable)."""
    target = tmp_path / "sll"
    shutil.copytree(demo_template, target, symlinks=True)
    return target


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()

