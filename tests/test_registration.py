"""Registration is idempotent and names of registered profiles are unique, also under concurrency and kills."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import run_cli

from perun_core import api
from perun_core.storage.repository import PerunRepository


def pending_profile(root: Path, sha: str, name: str = "p.perf", amount: float = 1.0) -> Path:
    data = {"origin": sha, "header": {"type": "time", "units": {"time": "s"}, "cmd": "ls"},
            "collector_info": {"name": "time", "params": {}}, "postprocessors": [],
            "global": {"time": 1, "resources": [{"amount": amount, "uid": "ls", "type": "time"}]}}
    path = root / ".perun" / "jobs" / name
    path.write_text(json.dumps(data))
    return path


def index_of(root: Path, sha: str) -> list:
    with PerunRepository(root) as repo:
        return repo.read_index(sha)


def test_add_keep_profile_twice_registers_once(perun_repo):
    root, shas = perun_repo
    pending_profile(root, shas[-1])
    for _ in range(2):
        result = run_cli("add", "--keep-profile", "p.perf", cwd=root)
        assert result.returncode == 0, result.stderr
    assert len(index_of(root, shas[-1])) == 1


def test_six_concurrent_adds_of_one_file_register_it_once(perun_repo):
    root, shas = perun_repo
    for round_ in range(3):
        pending_profile(root, shas[-1], amount=float(round_))
        procs = [subprocess.Popen([sys.executable, "-m", "perun_core.cli.entry", "add", "p.perf"], cwd=root,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(6)]
        outcomes = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
        for code, stderr in outcomes:
            # losers find the file already registered and gone: one clean error line, never a traceback
            assert code in (0, 1) and "Traceback" not in stderr, stderr
            assert code == 0 or stderr.startswith("error: ") and stderr.count("error:") == 1
        assert any(code == 0 for code, _ in outcomes)
        assert len(index_of(root, shas[-1])) == round_ + 1
    assert [e.path for e in index_of(root, shas[-1])] == ["p.perf", "p-1.perf", "p-2.perf"]


def test_the_same_object_under_another_name_is_registered_once(perun_repo):
    root, shas = perun_repo
    pending_profile(root, shas[-1], "a.perf")
    pending_profile(root, shas[-1], "b.perf")
    api.add(["a.perf"], cwd=root)
    again = api.add(["b.perf"], cwd=root)
    assert [e.path for e in index_of(root, shas[-1])] == ["a.perf"]
    assert again[0].checksum == index_of(root, shas[-1])[0].checksum


def test_concurrent_runs_within_one_second_get_unique_names(perun_repo):
    root, shas = perun_repo
    api.config_set("profiles.register_after_run", True, scope="local", cwd=root)
    # a fixed template: every run renders the same name, as runs in the same second do with %date%
    procs = [subprocess.Popen([sys.executable, "-m", "perun_core.cli.entry", "collect", "-ot", "same", "time",
                               "-r", str(1 + i), "--", "true"], cwd=root, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs), [p.stderr.read() for p in procs]
    names = [e.path for e in index_of(root, shas[-1])]
    assert len(names) == 4 and len(set(names)) == 4
    assert sorted(names) == ["same-1.perf", "same-2.perf", "same-3.perf", "same.perf"]


def test_a_killed_run_leaves_no_profile_both_registered_and_pending(perun_repo):
    root, shas = perun_repo
    api.config_set("profiles.register_after_run", True, scope="local", cwd=root)
    api.config_set("cmds", ["true"], scope="local", cwd=root)
    api.config_set("workloads", [str(i) for i in range(40)], scope="local", cwd=root)
    api.config_set("collectors", [{"name": "time", "params": {"repeat": 2}}], scope="local", cwd=root)
    proc = subprocess.Popen([sys.executable, "-m", "perun_core.cli.entry", "run", "matrix"], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    registered = 0
    assert proc.stdout is not None
    for line in proc.stdout:  # kill right after the third registration is reported, mid-run
        registered += "registered " in line
        if registered == 3:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    entries = index_of(root, shas[-1])
    assert len(entries) >= 3 and len({e.checksum for e in entries}) == len(entries)
    pending = [p.name for p in (root / ".perun" / "jobs").iterdir() if not p.name.startswith(".")]
    assert not set(pending) & {e.path for e in entries}
    assert pending == []  # a registering run never writes a pending profile
