"""fsck: damage is listed, stale temporary files go, --repair rebuilds indexes; status and log skip damage."""

from __future__ import annotations

import json
import os
import shutil
import time

from conftest import run_cli

from perun_core import api
from perun_core.storage.repository import PerunRepository


def register(root, sha, n):
    for i in range(n):
        data = {"origin": sha, "header": {"type": "time", "units": {"time": "s"}, "cmd": f"cmd{i}"},
                "collector_info": {"name": "time", "params": {}}, "postprocessors": [],
                "global": {"time": 1, "resources": [{"amount": float(i), "uid": "u", "type": "time"}]}}
        (root / ".perun/jobs" / f"p{i}.perf").write_text(json.dumps(data))
        api.add([f"p{i}.perf"], cwd=root)
    with PerunRepository(root) as repo:
        return repo.read_index(sha), repo.index_path(sha), repo


def test_a_sound_store_passes(perun_repo):
    root, shas = perun_repo
    register(root, shas[-1], 2)
    report = api.fsck(cwd=root)
    assert report.ok and report.objects == 2 and report.indexes == 1 and report.entries == 2
    result = run_cli("fsck", cwd=root)
    assert result.returncode == 0 and "no damage" in result.stdout


def test_stale_temporary_files_go_but_young_ones_stay(perun_repo):
    root, shas = perun_repo
    entries, index, repo = register(root, shas[-1], 1)
    old = [index.parent / f".{index.name}.abc123.tmp", root / ".perun/jobs" / ".p.perf.xyz789.tmp"]
    young = root / ".perun/jobs" / ".q.perf.qqq111.tmp"
    for path in (*old, young):
        path.write_bytes(b"x" * 1000)
    for path in old:
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    report = api.fsck(cwd=root)
    assert sorted(report.removed) == sorted(map(str, old)) and report.kept == [str(young)]
    assert young.exists() and not any(p.exists() for p in old)
    assert report.ok


def test_a_damaged_index_is_listed_skipped_by_status_and_log_and_rebuilt(perun_repo):
    root, shas = perun_repo
    entries, index, repo = register(root, shas[-1], 3)
    data = bytearray(index.read_bytes())
    data[-5] ^= 0xFF  # the checksum no longer matches
    index.write_bytes(bytes(data))
    status = run_cli("status", cwd=root)
    assert status.returncode == 1 and "corrupt index" in status.stderr and "Traceback" not in status.stderr
    log = run_cli("log", cwd=root)
    assert log.returncode == 0 and "corrupt index" in log.stderr and shas[0] in log.stdout  # the rest of the history
    check = run_cli("fsck", cwd=root)
    assert check.returncode == 1 and "damaged: index" in check.stdout
    repaired = run_cli("fsck", "--repair", cwd=root)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    with PerunRepository(root) as repo:
        assert sorted(e.checksum for e in repo.read_index(shas[-1])) == sorted(e.checksum for e in entries)
    assert run_cli("status", cwd=root).returncode == 0


def test_an_unreadable_index_header_is_rebuilt_from_the_orphan_objects(perun_repo):
    root, shas = perun_repo
    entries, index, repo = register(root, shas[-1], 2)
    index.write_bytes(b"pidx" + b"\xff" * 7)
    report = api.fsck(repair=True, cwd=root)
    assert report.ok and [p.kind for p in report.problems] == ["index"]
    with PerunRepository(root) as repo:
        assert {e.checksum for e in repo.read_index(shas[-1])} == {e.checksum for e in entries}


def test_a_damaged_object_is_listed_and_its_entry_dropped_on_repair(perun_repo):
    root, shas = perun_repo
    entries, index, repo = register(root, shas[-1], 2)
    victim = repo.objects.path_of(entries[0].checksum)
    victim.write_bytes(b"garbage")
    status = run_cli("status", cwd=root)
    assert status.returncode == 1 and "corrupt object" in status.stderr
    assert "cmd1" in status.stdout  # the sound profile is still listed
    report = api.fsck(repair=True, cwd=root)
    kinds = sorted(p.kind for p in report.problems)
    assert kinds == ["entry", "object"] and victim.exists()  # damaged objects are never deleted
    with PerunRepository(root) as repo:
        assert [e.checksum for e in repo.read_index(shas[-1])] == [entries[1].checksum]


def test_deleting_the_objects_is_never_silent(perun_repo):
    root, shas = perun_repo
    register(root, shas[-1], 1)
    shutil.rmtree(root / ".perun/objects")
    status = run_cli("status", cwd=root)
    assert status.returncode == 1 and ".perun/objects is missing" in status.stderr
    assert run_cli("fsck", cwd=root).returncode == 1
