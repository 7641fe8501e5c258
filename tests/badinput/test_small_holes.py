"""The small holes (:mod:`.hole_cases`): one ``error:`` line, the documented exit code, no traceback, ``.perun`` untouched.

Also the holes a table cannot hold: standard output on a full disk, a store
on a full file system, and ``check all`` in a shallow clone.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from tools import machine_cannot

from .hole_cases import HOLE_CASES
from .test_bad_input import _params, immutable, run_as_subprocess, run_case, run_in_process, template, tree_hashes

pytestmark = pytest.mark.filterwarnings("ignore")

__all__ = ["template"]  # the fixture, shared with test_bad_input


@pytest.mark.parametrize("case", _params(HOLE_CASES))
def test_hole(case, template, tmp_path):
    run_case(case, template, tmp_path, run_in_process)


SUBPROCESS = [c for c in HOLE_CASES if c.name in ("run matrix --shard ''", "add: integer amount 10**400",
                                                  "pull ftp://", "init in a bare repository")]


def test_the_sample_is_complete():
    assert len(SUBPROCESS) == 4


@pytest.mark.parametrize("case", _params(SUBPROCESS))
def test_hole_in_a_subprocess(case, template, tmp_path):
    run_case(case, template, tmp_path, run_as_subprocess)


def _one_error(done: subprocess.CompletedProcess, code: int) -> str:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and done.stderr.startswith("error: "), done.stderr
    return errors[0]


@pytest.mark.parametrize("argv", [["status"], ["log"], ["show", "0@i", "raw"], ["check", "head", "--format", "junit"],
                                  ["config", "get", "format.status"]], ids=" ".join)
def test_standard_output_on_a_full_disk_is_named(template, tmp_path, argv):
    """stdout is a device like /dev/full (made here): every write fails with ENOSPC."""
    root, _ = template
    repo = tmp_path / "repo"
    shutil.copytree(root, repo, symlinks=True)
    full = tmp_path / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except PermissionError:
        machine_cannot("a device file", "making one needs root")
    before = tree_hashes(repo / ".perun")
    with open(full, "w") as stdout:
        done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", *argv], cwd=repo, stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    error = _one_error(done, 1)
    assert "standard output" in error and "No space left" in error, error
    if argv[0] != "check":  # a check stores what it found before it prints it
        assert tree_hashes(repo / ".perun") == before


def test_a_store_on_a_full_file_system_names_the_object(template, tmp_path):
    """.perun/objects on a full tmpfs: add fails naming the object it wrote, and leaves no directory behind."""
    root, shas = template
    repo = tmp_path / "repo"
    shutil.copytree(root, repo, symlinks=True)
    fresh = tmp_path / "fresh.perf"
    from .cases import good_profile

    fresh.write_text(json.dumps({**good_profile(shas[-1]), "header": {"type": "time", "cmd": "./other"}}))
    objects = repo / ".perun" / "objects"
    kept = tmp_path / "objects"
    shutil.move(objects, kept)
    objects.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(objects)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        shutil.rmtree(objects)
        shutil.move(kept, objects)
        machine_cannot("a small tmpfs", mounted.stderr.strip() or "mount refused")
    try:
        for item in kept.iterdir():
            subprocess.run(["cp", "-a", str(item), str(objects)], check=True)
        with open(objects / "filler", "wb") as filler:  # fill it up
            with pytest.raises(OSError):
                filler.write(b"\0" * 65536)
                filler.flush()
        before = tree_hashes(repo / ".perun")
        done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "add", str(fresh)], cwd=repo,
                              capture_output=True, text=True, timeout=120)
        after = tree_hashes(repo / ".perun")
    finally:
        subprocess.run(["umount", str(objects)], check=True)
    error = _one_error(done, 1)
    assert ".perun/objects/" in error and "No space left" in error, error
    assert after == before, sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert fresh.exists()


def test_check_all_in_a_shallow_clone_checks_what_is_there(tmp_path):
    """A clone of depth 2 of five commits with profiles: the two commits there are checked, nothing fails,
    and a note names the commit the history ends at."""
    from gitrepo import make_repo

    from perun_core import api

    from .cases import good_profile

    origin = tmp_path / "origin"
    shas = make_repo(origin, [{"files": {"a.txt": f"{i}\n"}, "message": f"c{i}"} for i in range(5)])
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{origin}", str(clone)], check=True,
                   capture_output=True)
    assert (clone / ".git" / "shallow").is_file()
    api.init(clone)
    for number, sha in enumerate(shas[-3:]):  # the one before the clone's first commit is missing from it
        data = good_profile(sha)
        for row in data["global"]["resources"]:
            row["amount"] = row["amount"] * (1 + number)
        (clone / ".perun/jobs/p.perf").write_text(json.dumps(data))
        if sha in shas[-2:]:
            api.add(["p.perf"], minor=sha, cwd=clone)
        else:  # registered where the clone has no commit: its index is still there (copied from elsewhere)
            with pytest.raises(Exception):
                api.add(["p.perf"], minor=sha, cwd=clone)
            (clone / ".perun/jobs/p.perf").unlink()
    done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "check", "all"], cwd=clone,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode in (0, 3), done.stderr
    assert "error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert shas[-1][:7] in done.stdout and "1 pair of profiles checked" in done.stdout, done.stdout
    # one line says where the history ends, and that what is older was not checked
    notes = [line for line in done.stderr.splitlines() if "shallow clone" in line]
    assert len(notes) == 1 and shas[-2][:7] in notes[0] and "not checked" in notes[0], done.stderr
    assert Path(clone / ".perun/changes").is_dir()


def test_a_stored_object_with_an_amount_beyond_a_double_is_refused_when_read(tmp_path):
    """An object written before amounts were bounded (its column packed by distinct values) fails validation,
    which reading it from the store reports as a corrupt object."""
    from perun_core.errors import InvalidProfile
    from perun_core.profile.codec import decode_content, encode_columnar, from_json_bytes
    from perun_core.profile.validate import validate_profile

    from .cases import good_profile
    from .hole_cases import _huge_amount

    profile = from_json_bytes(_huge_amount().replace("{head}", "0" * 40))  # parsed, not validated
    content = encode_columnar(profile)
    with pytest.raises(InvalidProfile, match=r"resources\[0\]\.amount.*beyond the range of a double"):
        validate_profile(decode_content(content, path="object"), path="object")
    ordinary = from_json_bytes(json.dumps(good_profile("0" * 40)))
    validate_profile(decode_content(encode_columnar(ordinary), path="object"), path="object")
