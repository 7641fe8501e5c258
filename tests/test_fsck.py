"""fsck: damage is listed, stale temporary files go, --repair rebuilds indexes; status and log skip damage."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from conftest import run_cli

from perun_core import api
from perun_core.atomic import writer_tag
from perun_core.storage.index import read_index, write_index
from perun_core.storage.repository import PerunRepository

#: A writer that stops in the middle of an atomic write of argv[1] until a line arrives on stdin.
WRITER = r"""
import sys
from perun_core.atomic import atomic_write

def chunks():
    yield b"x" * 100
    print("writing", flush=True)
    sys.stdin.readline()
    yield b"y"

atomic_write(sys.argv[1], chunks())
print("written", flush=True)
"""

#: Holds the lock file argv[1]; on a line on stdin, appends to the index argv[2] the entries of the index
#: argv[3] (as a writer registering profiles would), then lets the lock go.
LOCK_HOLDER = r"""
import sys
from pathlib import Path
from perun_core.atomic import file_lock
from perun_core.storage.index import read_index, write_index

with file_lock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.readline()
    if len(sys.argv) > 2:
        write_index(Path(sys.argv[2]), read_index(Path(sys.argv[2])) + read_index(Path(sys.argv[3])))
print("released", flush=True)
"""


def start(script, *args, cwd):
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=cwd, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def expect(child, line):
    assert child.stdout.readline().strip() == line


def temporaries(directory):
    return sorted(p for p in directory.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


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
    assert kinds == ["entry", "object"] and report.ok
    # damaged objects are never deleted: they are put aside, out of every reader's way
    assert not victim.exists()
    assert (root / ".perun/quarantine/objects" / entries[0].checksum).read_bytes() == b"garbage"
    with PerunRepository(root) as repo:
        assert [e.checksum for e in repo.read_index(shas[-1])] == [entries[1].checksum]
    status = run_cli("status", cwd=root)
    assert status.returncode == 0 and "cmd1" in status.stdout, status.stderr
    assert run_cli("fsck", cwd=root).returncode == 0


def test_deleting_the_objects_is_never_silent(perun_repo):
    root, shas = perun_repo
    register(root, shas[-1], 1)
    shutil.rmtree(root / ".perun/objects")
    status = run_cli("status", cwd=root)
    assert status.returncode == 1 and ".perun/objects is missing" in status.stderr
    assert run_cli("fsck", cwd=root).returncode == 1


def test_a_killed_writers_file_goes_at_once_and_a_running_writers_file_stays(perun_repo):
    root, shas = perun_repo
    entries, index, repo = register(root, shas[-1], 1)
    jobs = root / ".perun/jobs"
    killed = start(WRITER, jobs / "killed.perf", cwd=root)
    running = start(WRITER, repo.objects.path_of("ab" + "0" * 38), cwd=root)
    try:
        expect(killed, "writing")
        expect(running, "writing")
        [left] = temporaries(jobs)
        [in_flight] = temporaries(repo.objects.path_of("ab" + "0" * 38).parent)
        assert f".w{killed.pid}-" in left.name and f".w{running.pid}-" in in_flight.name
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        report = api.fsck(cwd=root)  # the killed writer's file is young: its writer decides, not its age
        assert report.removed == [str(left)] and report.kept == [str(in_flight)]
        assert not left.exists() and in_flight.exists() and report.ok
        report = api.fsck(stale_after=0, cwd=root)  # a file named by a running writer stays, however old
        assert report.removed == [] and report.kept == [str(in_flight)] and in_flight.exists()
        running.stdin.write("go\n")
        running.stdin.flush()
        expect(running, "written")
    finally:
        for child in (killed, running):
            child.kill()
            child.wait()
    assert repo.objects.path_of("ab" + "0" * 38).read_bytes() == b"x" * 100 + b"y"
    assert not temporaries(jobs)


def test_a_temporary_file_whose_pid_was_reused_goes(perun_repo):
    root, shas = perun_repo
    register(root, shas[-1], 1)
    other = start("import sys; print('up', flush=True); sys.stdin.readline()", cwd=root)
    try:
        expect(other, "up")
        # a file written before the process with that pid started cannot be that process's
        left = root / ".perun/jobs" / f".p.perf.w{other.pid}-{writer_tag()}.abc123.tmp"
        left.write_bytes(b"x")
        os.utime(left, (time.time() - 600, time.time() - 600))
        report = api.fsck(stale_after=30 * 24 * 3600, cwd=root)
        assert report.removed == [str(left)] and not left.exists()
    finally:
        other.kill()
        other.wait()


def test_a_repair_leaves_the_files_next_to_an_index_alone_while_another_process_holds_its_lock(perun_repo):
    root, shas = perun_repo
    entries, index, repo = register(root, shas[-1], 1)
    old = index.parent / f".{index.name}.abc123.tmp"  # names no writer: only the lock tells
    old.write_bytes(b"x" * 1000)
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    holder = start(LOCK_HOLDER, repo.index_lock_path(shas[-1]), cwd=root)
    try:
        expect(holder, "locked")
        report = api.fsck(repair=True, stale_after=0, cwd=root)
        assert report.kept == [str(old)] and report.removed == [] and old.exists()
        holder.stdin.write("\n")
        holder.stdin.flush()
        expect(holder, "released")
    finally:
        holder.kill()
        holder.wait()
    report = api.fsck(repair=True, stale_after=0, cwd=root)
    assert report.removed == [str(old)] and not old.exists()


def test_a_repair_waits_for_the_index_lock_and_keeps_what_the_writer_added(perun_repo, monkeypatch, tmp_path):
    root, shas = perun_repo
    entries, index, repo = register(root, shas[-1], 3)
    # the third profile's object is stored; its entry is what the other process will register
    added = entries[2:]
    other_index = tmp_path / "to-register.pidx"
    write_index(other_index, added)
    write_index(index, entries[:2])
    repo.objects.path_of(entries[0].checksum).write_bytes(b"garbage")
    waiting = threading.Event()
    real_lock = PerunRepository.index_lock

    def index_lock(self, minor, timeout=30.0):
        if minor == shas[-1] and timeout:
            waiting.set()  # the repair is about to take the lock the other process holds
        return real_lock(self, minor, timeout)

    monkeypatch.setattr(PerunRepository, "index_lock", index_lock)
    holder = start(LOCK_HOLDER, repo.index_lock_path(shas[-1]), index, other_index, cwd=root)
    outcome = {}
    repair = threading.Thread(target=lambda: outcome.update(report=api.fsck(repair=True, cwd=root)))
    try:
        expect(holder, "locked")
        repair.start()
        assert waiting.wait(300)
        holder.stdin.write("\n")  # the other process now registers a profile, then lets go
        holder.stdin.flush()
        expect(holder, "released")
        repair.join(300)
        assert not repair.is_alive()
    finally:
        holder.kill()
        holder.wait()
    report = outcome["report"]
    assert [(p.kind, p.repaired) for p in report.problems] == [
        ("object", f"moved to .perun/quarantine/objects/{entries[0].checksum}"), ("entry", "entry dropped")]
    # the damaged entry is gone, and the one registered while the repair waited is still there
    assert [e.checksum for e in read_index(index)] == [entries[1].checksum, added[0].checksum]
