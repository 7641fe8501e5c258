"""The first-use path of README's "First steps": init, run matrix on two commits, check head.

No ``add`` in between: the check takes the pending profiles made at the
checked commit and at its parent into account and marks them as pending.
The program is real Python whose second commit does five times the work in
one function, measured in CPU time so that a busy machine does not hide it.
"""

from __future__ import annotations

import json
import sys

from conftest import run_cli
from gitrepo import make_repo

PROGRAM = """import sys


def crunch(n):
    total = 0
    for i in range(n * FACTOR):
        total += i * i % 7
    return total


def main():
    n = int(sys.argv[1])
    for _ in range(6):
        crunch(n)


main()
"""


def make_project(root):
    return make_repo(root, [
        {"files": {"app.py": PROGRAM.replace("FACTOR", "1")}, "message": "v1"},
        {"files": {"app.py": PROGRAM.replace("FACTOR", "5")}, "message": "v2: crunch does five times the work"},
    ])


def cli(*args, cwd):
    # a wide terminal: the tests read what the check says, a line per result, not where it wraps
    result = run_cli(*args, cwd=cwd, env={"NO_COLOR": "1", "COLUMNS": "400"})
    return result


def test_init_run_matrix_check_head_finds_the_slow_down_without_add(tmp_path):
    root = tmp_path / "project"
    v1, v2 = make_project(root)
    assert cli("init", cwd=root).returncode == 0
    for key, value in {"cmds": f"[{sys.executable} app.py]", "workloads": "['150000']",
                       "collectors": "[{name: pytrace, params: {functions: ['crunch'], clock: cpu}}]"}.items():
        done = cli("config", "set", key, value, cwd=root)
        assert done.returncode == 0, done.stderr
    ran = cli("run", "matrix", "-m", "HEAD~1", "-m", "HEAD", cwd=root)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    pending = sorted(p.name for p in (root / ".perun" / "jobs").iterdir() if not p.name.startswith("."))
    assert len(pending) == 2, pending
    assert not (root / ".perun" / "objects").exists() or not any((root / ".perun" / "objects").rglob("*.pidx"))

    checked = cli("check", "head", cwd=root)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    assert "Degradation" in checked.stdout and "crunch" in checked.stdout, checked.stdout
    assert "(pending profile " in checked.stdout
    assert "used pending profiles, which 'add' registers" in checked.stdout

    records = json.loads(cli("check", "head", "--format", "json", cwd=root).stdout)
    slow = [r for r in records if r["uid"].endswith("crunch")]
    assert slow and slow[0]["result"] == "Degradation", records
    assert all(r["target"].startswith(v2[:7]) and r["target"].endswith("(pending)") for r in records)
    assert all(r["baseline"].startswith(v1[:7]) for r in records)
    every = cli("check", "all", cwd=root)
    assert every.returncode == 3 and "crunch" in every.stdout, every.stdout + every.stderr


def test_registered_baseline_is_preferred_and_no_pending_keeps_to_registered(tmp_path):
    root = tmp_path / "project"
    v1, v2 = make_project(root)
    assert cli("init", cwd=root).returncode == 0
    for key, value in {"cmds": f"[{sys.executable} app.py]", "workloads": "['20000']",
                       "collectors": "[{name: pytrace, params: {functions: ['crunch'], clock: cpu}}]"}.items():
        assert cli("config", "set", key, value, cwd=root).returncode == 0
    assert cli("run", "matrix", "-m", "HEAD~1", cwd=root).returncode == 0
    added = cli("add", "0@p", "-m", v1, cwd=root)
    assert added.returncode == 0, added.stderr
    assert cli("run", "matrix", "-m", "HEAD", cwd=root).returncode == 0
    checked = cli("check", "head", cwd=root)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    assert "baseline is the pending profile" not in checked.stdout
    assert "(pending profile " in checked.stdout
    only = cli("check", "head", "--no-pending", cwd=root)
    assert only.returncode == 0, only.stdout + only.stderr
    assert "no pair of profiles to compare" in only.stdout
