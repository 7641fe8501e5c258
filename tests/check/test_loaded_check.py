"""Real runs on a busy machine, checked the way users check: ``check head`` (pending and registered
profiles), the post-commit hook and the TUI.

Four busy loops run while the target is measured, each in a session of its
own (``setsid``), as other users' work would: Linux groups the processes of
a session together when it shares the CPUs (autogroup), so loops started in
this test's own session would compete only with each other.  Identical code
must not be reported as a Degradation on any path.  A program doing twice
the work, measured the same way, must be a certain Degradation from a plain
``check head`` run under the same load: measured apart on a busy machine,
CPU time itself drifts between two batches of runs (identical code once
came out 1.69 times the other batch), so :mod:`perun_core.check.noise` calls
a CPU-time change between batches certain there only beyond twice, and
``check`` settles a change it made a Maybe by interleaved re-runs.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import run_cli
from gitrepo import commit_files, make_repo
from runhelpers import C_PROGRAM, MAKEFILE, busy_sessions, needs_cc, run_env  # noqa: F401 - run_env: autouse

from perun_core import api
from perun_core.api import check as api_check
from tests.tui.helpers import tui_check

WORKLOAD = "60000000"  # about a tenth of a second of CPU time
CERTAIN_DEGRADATIONS = {"Degradation", "SevereDegradation", "TotalDegradation"}

pytestmark = pytest.mark.busy  # four busy sessions (see machine_share in tests/conftest.py)


def _project(root):
    files = {"Makefile": MAKEFILE, ".gitignore": "app\n", "app.c": C_PROGRAM.replace("FACTOR", "2")}
    shas = make_repo(root, [
        {"files": files, "message": "v1"},
        {"files": {**files, "README": "same code\n"}, "message": "v2: documentation only"},
    ])
    api.init(root)
    for key, value in {"execute.pre_run": ["make"], "cmds": ["./app"], "workloads": [WORKLOAD],
                       "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 15}}]}.items():
        api.config_set(key, value, scope="local", cwd=root)
    return shas


def _run_matrix(root, sha, *, loaded):
    if loaded:
        with busy_sessions():
            result = run_cli("run", "matrix", "-m", sha, cwd=root)
    else:
        result = run_cli("run", "matrix", "-m", sha, cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr


def _check_head(root, *args):
    result = run_cli("check", "head", *args, "--format", "json", cwd=root)
    assert result.returncode in (0, 3), result.stderr
    return result.returncode, {r["uid"]: r for r in json.loads(result.stdout)}


def _certain(records):
    return {uid: r["result"] for uid, r in records.items() if r["result"] in CERTAIN_DEGRADATIONS}


@needs_cc
async def test_identical_code_measured_under_load_is_no_degradation_on_any_path(tmp_path):
    root = tmp_path / "cproject"
    shas = _project(root)
    _run_matrix(root, shas[0], loaded=False)
    _run_matrix(root, shas[1], loaded=True)

    status, records = _check_head(root)  # pending profiles, as run matrix leaves them
    assert (status, _certain(records)) == (0, {}), records
    for sha in shas:  # the oldest pending profile is v1's; registering it makes v2's the first
        added = run_cli("add", "0@p", "-m", sha, cwd=root)
        assert added.returncode == 0, added.stderr
    status, records = _check_head(root, "--no-pending")
    assert (status, _certain(records)) == (0, {}), records
    every = run_cli("check", "all", "--format", "json", cwd=root)
    assert every.returncode == 0, every.stdout + every.stderr
    assert not [r for r in json.loads(every.stdout) if r["result"] in CERTAIN_DEGRADATIONS], every.stdout

    api_check.install_hook(cwd=root)
    ran = subprocess.run([str(root / ".git" / "hooks" / "post-commit")], cwd=root, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    stored = api_check.stored_check(shas[1], cwd=root)
    assert stored is not None
    assert not [f for p in stored.pairs for f in p.findings if f.result.value in CERTAIN_DEGRADATIONS]

    rows, _subtitle = await tui_check(root, "h")  # the TUI's default: time changes re-measured interleaved
    assert [f for f in rows if f.result.value in CERTAIN_DEGRADATIONS] == []


@needs_cc
def test_twice_the_work_measured_under_load_is_a_degradation(tmp_path):
    root = tmp_path / "cproject"
    shas = _project(root)
    slower = commit_files(root, {"app.c": C_PROGRAM.replace("FACTOR", "4")}, "v3: twice the work")
    _run_matrix(root, shas[1], loaded=True)  # both sides measured under four busy sessions
    _run_matrix(root, slower, loaded=True)
    with busy_sessions():  # the check re-measures what the load put in doubt, under the same load
        status, records = _check_head(root)
    user = records["./app [user]"]
    # certain at once, or made a Maybe by the drift of CPU time between batches and confirmed by interleaved runs
    assert (status, user["result"]) == (3, "Degradation"), user
    assert "measured apart" not in user["reason"] or "; confirmed by 7 interleaved runs" in user["reason"], user
