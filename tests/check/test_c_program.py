"""The issue's C program: v2 runs five times the loop of v1, v3 goes back to v1's speed."""

from __future__ import annotations

import json

from conftest import run_cli
from gitrepo import commit_files
from runhelpers import C_PROGRAM, make_c_project, needs_cc, run_env  # noqa: F401 - run_env: autouse

from perun_core import api

WORKLOAD = "20000000"


@needs_cc
def test_check_head_on_a_c_program_slowed_down_and_restored(tmp_path):
    root = tmp_path / "cproject"
    make_c_project(root)
    api.init(root)
    for key, value in {"execute.pre_run": ["make"], "cmds": ["./app"], "workloads": [WORKLOAD],
                       "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 5}}]}.items():
        api.config_set(key, value, scope="local", cwd=root)

    # -c collects the missing profiles of HEAD (v2) and its parent (v1) with the job matrix first
    slow = run_cli("check", "--compute-missing", "head", "--format", "json", cwd=root)
    assert slow.returncode == 3, slow.stderr
    records = {r["uid"]: r for r in json.loads(slow.stdout)}
    assert records["./app [real]"]["result"] == "Degradation"
    # CPU time is what a busy machine disturbs least: about five times as much work (a busy sibling
    # hyperthread can still slow either side's instructions by up to about 2x, hence the wide bounds)
    user = records["./app [user]"]
    assert user["result"] == "Degradation" and 2.0 < user["to"] / user["from"] < 12.0, user
    assert "Collecting missing profiles for 2 versions" in slow.stderr

    v3 = commit_files(root, {"app.c": C_PROGRAM.replace("FACTOR", "1")}, "v3: back to the old loop")
    # the same through the user's own (shared) configuration, with the collection logged; a local.yml
    # alone may not make a check run commands (see test_a_cloned_local_yml_cannot_make_check_run_commands)
    api.config_set("degradation.collect_before_check", True, scope="shared", cwd=root)
    api.config_set("degradation.log_collect", True, scope="local", cwd=root)
    fast = run_cli("check", "head", cwd=root, env={"NO_COLOR": "1"})
    assert fast.returncode == 0, fast.stdout + fast.stderr
    assert "+ Optimization" in fast.stdout and "./app [real]" in fast.stdout
    assert (root / ".perun" / "logs" / f"{v3}-precollect.log").is_file()
