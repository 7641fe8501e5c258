"""Fixtures of the tests of the original Perun's files: its profiles, its repository, its shared.yml."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "original"
PROFILES = FIXTURES / "profiles"


@pytest.fixture
def original_repo(tmp_path) -> Path:
    """The repository built by perun-toolsuite 0.28.3 (tests/fixtures/original/README.md), unpacked."""
    root = tmp_path / "clean"
    root.mkdir()
    with tarfile.open(FIXTURES / "repo.tar.gz") as archive:
        archive.extractall(root, filter="data")
    return root


@pytest.fixture
def original_shared(clean_env) -> Path:
    """The original's shared.yml in the configuration directory of the test."""
    import os

    directory = Path(os.environ["PERUN_CONFIG_DIR"])
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "shared.yml", directory / "shared.yml")
    return directory / "shared.yml"
