"""check --confirm: interleaved re-runs of the baseline and the target confirm time-based changes or not."""

from __future__ import annotations

import json
import re
import sys

from conftest import run_cli
from gitrepo import make_repo
from runhelpers import C_PROGRAM, MAKEFILE, documented, leftover_worktrees, make_c_project, needs_cc, run_env  # noqa: F401

from perun_core import api
from perun_core.api import check as api_check
from perun_core.api import run as api_run

WORKLOAD = "20000000"
MATRIX = {"execute.pre_run": ["make"], "cmds": ["./app"], "workloads": [WORKLOAD],
          "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 5}}]}

APP = """import sys


def crunch(n):
    return sum(i * i % 7 for i in range(n * WORK))


for _ in range(8):
    crunch(int(sys.argv[1]))
"""
TRACED = {"cmds": [f"{sys.executable} app.py"], "workloads": ["20000"],
          "collectors": [{"name": "pytrace", "params": {"functions": ["__main__:crunch=args[0]"]}}]}


def _configure(root):
    api.init(root)
    for key, value in MATRIX.items():
        api.config_set(key, value, scope="local", cwd=root)


@needs_cc
def test_a_real_slow_down_is_confirmed_with_both_measurements_shown(tmp_path, run_env):
    root = tmp_path / "cproject"
    make_c_project(root)
    _configure(root)
    result = run_cli("check", "--compute-missing", "head", "--confirm", "--confirm-runs", "4", "--format", "json",
                     cwd=root)
    assert result.returncode == 3, result.stderr
    records = {r["uid"]: r for r in json.loads(result.stdout)}
    user = records["./app [user]"]
    assert user["result"] == "Degradation", user
    assert "confirmed by 4 interleaved runs a side: first x" in user["reason"] and "re-run x" in user["reason"]
    assert "Confirming" in result.stderr and ": confirmed " in result.stderr
    assert leftover_worktrees(run_env) == []
    # what was stored is the confirmed verdict
    stored = api_check.stored_check(cwd=root)
    assert any(f.location == "./app [user]" and "confirmed" in f.reason for p in stored.pairs for f in p.findings)


@needs_cc
def test_a_change_the_interleaved_runs_do_not_repeat_is_listed_as_not_confirmed(tmp_path, run_env):
    root = tmp_path / "same"
    files = {"Makefile": MAKEFILE, ".gitignore": "app\n", "app.c": C_PROGRAM.replace("FACTOR", "2")}
    shas = make_repo(root, [{"files": files, "message": "v1"},
                            {"files": {**files, "README": "only a comment changed\n"}, "message": "v2: docs"}])
    _configure(root)
    written = api_run.run_matrix(minor_versions=shas, cwd=root)
    profiles = {profile.origin: profile for profile in written.profiles}
    # as if the machine had been much slower (CPU time too) when v2 was measured: every run of v2 three times
    # slower than v1's slowest of its kind, so the first check is certain even when v1 was measured on a busy
    # machine (one run of v1 twice as slow as another made 3x an uncertain change there)
    slowest: dict[str, float] = {}
    for resource in documented(profiles[shas[0]].path)["global"]["resources"]:
        if resource["type"] == "time":
            slowest[resource["subtype"]] = max(slowest.get(resource["subtype"], 0.0), resource["amount"])
    data = documented(profiles[shas[1]].path)
    times = [r for r in data["global"]["resources"] if r["type"] == "time"]
    factor = 3 * max(slowest[r["subtype"]] / r["amount"] for r in times if r["subtype"] in ("real", "user"))
    for resource in times:
        resource["amount"] *= factor
        # preempted in proportion, as a machine that much slower throughout would be
        if "involuntary_switches" in resource:
            resource["involuntary_switches"] = round(resource["involuntary_switches"] * factor)
    profiles[shas[1]].path.write_text(json.dumps(data))
    for profile in written.profiles:
        api.add([str(profile.path)], minor=profile.origin, cwd=root)
    plain = run_cli("check", "head", "--format", "json", cwd=root)
    assert plain.returncode == 3, plain.stderr
    result = run_cli("check", "head", "--confirm", "--format", "json", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    records = {r["uid"]: r for r in json.loads(result.stdout)}
    for location in ("./app [real]", "./app [user]"):
        record = records[location]
        assert record["result"] == "MaybeDegradation", record
        assert "not confirmed by 7 interleaved runs a side: first x" in record["reason"], record
    tree = run_cli("check", "head", "--confirm", "--confirm-runs", "5", cwd=root, env={"NO_COLOR": "1", "COLUMNS": "400"})
    assert "not confirmed" in tree.stdout and "MaybeDegradation" in tree.stdout
    assert leftover_worktrees(run_env) == []


def test_confirm_runs_must_be_at_least_two(tmp_path):
    result = run_cli("check", "head", "--confirm", "--confirm-runs", "1", cwd=tmp_path)
    assert result.returncode == 2 and "--confirm-runs" in result.stderr


def test_the_post_commit_hook_confirms_by_default(perun_repo):
    root, _shas = perun_repo
    result = api_check.install_hook(cwd=root)
    text = result.path.read_text()
    assert "check --compute-missing head --confirm" in text


def test_the_tui_default_confirms_only_with_timed_jobs_in_the_matrix(perun_repo):
    from perun_core.check.session import _has_timed_jobs as _has_time_jobs
    from perun_core.storage.repository import PerunRepository

    root, _shas = perun_repo
    with PerunRepository.discover(root) as repo:
        assert not _has_time_jobs(repo)
    api.config_set("cmds", TRACED["cmds"], scope="local", cwd=root)
    api.config_set("collectors", [{"name": "memory"}], scope="local", cwd=root)
    with PerunRepository.discover(root) as repo:
        assert not _has_time_jobs(repo)
    api.config_set("collectors", TRACED["collectors"], scope="local", cwd=root)
    with PerunRepository.discover(root) as repo:
        assert _has_time_jobs(repo)  # per-call times of pytrace are re-measured too
    for key, value in MATRIX.items():
        api.config_set(key, value, scope="local", cwd=root)
    with PerunRepository.discover(root) as repo:
        assert _has_time_jobs(repo)



def test_per_call_times_of_pytrace_are_confirmed_or_not_by_interleaved_runs(tmp_path, run_env):
    root = tmp_path / "traced"
    shas = make_repo(root, [{"files": {"app.py": APP.replace("WORK", "1")}, "message": "v1"},
                            {"files": {"app.py": APP.replace("WORK", "1"), "README": "docs\n"}, "message": "v2: docs"},
                            {"files": {"app.py": APP.replace("WORK", "12"), "README": "docs\n"},
                             "message": "v3: twelve times the work"}])
    api.init(root)
    for key, value in TRACED.items():
        api.config_set(key, value, scope="local", cwd=root)
    written = api_run.run_matrix(minor_versions=shas, cwd=root)
    profiles = {profile.origin: profile for profile in written.profiles}
    # v2 measured as if the machine had been much slower throughout: every call three times slower than v1's
    # slowest (a preempted call of a busy machine included), a certain change of identical code
    def amounts(data):
        regions = [*data.get("snapshots", []), *([data["global"]] if "global" in data else [])]
        return [resource for region in regions for resource in region["resources"]]

    slowest = max(resource["amount"] for resource in amounts(documented(profiles[shas[0]].path)))
    original = profiles[shas[1]].path.read_bytes()
    data = documented(profiles[shas[1]].path)
    calls = amounts(data)
    assert len(calls) >= 8
    factor = 3 * slowest / min(resource["amount"] for resource in calls)
    for resource in calls:
        resource["amount"] *= factor
    profiles[shas[1]].path.write_text(json.dumps(data))
    # the profiles stay pending: confirmation re-runs the jobs of pending profiles as of registered ones
    plain = run_cli("check", "head", shas[1], "--format", "json", cwd=root)
    assert plain.returncode == 3, plain.stdout + plain.stderr
    doubted = run_cli("check", "head", shas[1], "--confirm", "--confirm-runs", "4", "--format", "json", cwd=root)
    assert doubted.returncode == 0, doubted.stdout + doubted.stderr
    record = next(r for r in json.loads(doubted.stdout) if r["uid"].endswith(":crunch"))
    assert record["result"] == "MaybeDegradation", record
    assert "not confirmed by 4 interleaved runs a side: first x" in record["reason"], record
    profiles[shas[1]].path.write_bytes(original)
    # v3 against v2 as it was measured: twelve times the work, confirmed by the interleaved runs
    real = run_cli("check", "head", "--confirm", "--confirm-runs", "4", "--format", "json", cwd=root)
    assert real.returncode == 3, real.stdout + real.stderr
    record = next(r for r in json.loads(real.stdout) if r["uid"].endswith(":crunch"))
    assert record["result"] == "Degradation", record
    rerun = re.search(r"confirmed by 4 interleaved runs a side: first x[0-9.]+, re-run x([0-9.]+)", record["reason"])
    assert rerun and float(rerun.group(1)) > 6, record
    assert leftover_worktrees(run_env) == []


@needs_cc
def test_a_change_a_busy_machine_put_in_doubt_is_settled_by_interleaved_runs_unless_told_not_to(tmp_path, run_env):
    """Twice the work, but measured apart on a busy machine as 1.5 times: within what CPU time drifts between
    batches there, so plain ``check head`` re-measures it interleaved by itself and reports what the re-runs
    show; ``--no-confirm`` leaves the doubt to the reader."""
    root = tmp_path / "doubt"
    files = {"Makefile": MAKEFILE, ".gitignore": "app\n", "app.c": C_PROGRAM.replace("FACTOR", "2")}
    shas = make_repo(root, [{"files": files, "message": "v1"},
                            {"files": {**files, "app.c": C_PROGRAM.replace("FACTOR", "4")}, "message": "v2: 2x"}])
    _configure(root)
    written = api_run.run_matrix(minor_versions=shas, cwd=root)
    profiles = {profile.origin: profile for profile in written.profiles}
    datas = {sha: documented(profiles[sha].path) for sha in shas}

    def median(data, subtype):
        amounts = sorted(r["amount"] for r in data["global"]["resources"] if r.get("subtype") == subtype)
        return amounts[len(amounts) // 2]

    # the runs as a busy machine could have measured them apart: v1 at its medians, v2 at 1.5 times v1's, each
    # run 1 % from the next (so the rank test is sure of the 1.5x); both sides loaded alike
    levels = {sub: median(datas[shas[0]], sub) for sub in ("real", "user", "sys")}
    for sha, data in datas.items():
        data["header"]["machine"].update(load_before=9.0, load_after=9.0, cores=2)
        for resource in data["global"]["resources"]:
            if resource["type"] == "time":
                level = levels[resource["subtype"]] * (1.5 if sha == shas[1] else 1.0)
                resource["amount"] = level * (1 + 0.01 * resource["order"])
        profiles[sha].path.write_text(json.dumps(data))
        (tmp_path / f"{sha[:7]}.perf").write_text(json.dumps(data))  # a copy outside the repository
    for profile in written.profiles:
        api.add([str(profile.path)], minor=profile.origin, cwd=root)

    left = run_cli("check", "head", "--no-confirm", "--format", "json", cwd=root)
    assert left.returncode == 0, left.stdout + left.stderr
    user = {r["uid"]: r for r in json.loads(left.stdout)}["./app [user]"]
    assert user["result"] == "MaybeDegradation" and "measured apart" in user["reason"], user
    assert "Confirming" not in left.stderr

    settled = run_cli("check", "head", "--format", "json", cwd=root)
    assert settled.returncode == 3, settled.stdout + settled.stderr
    user = {r["uid"]: r for r in json.loads(settled.stdout)}["./app [user]"]
    assert user["result"] == "Degradation", user
    assert "confirmed by 7 interleaved runs a side: first x1.5" in user["reason"], user["reason"]
    assert "confirm with --confirm" not in user["reason"], user["reason"]  # the re-runs have decided
    # the same pair as two files, each recording its commit: the same verdict, by the same re-runs
    files = [str(tmp_path / f"{sha[:7]}.perf") for sha in shas]
    compared = run_cli("check", "profiles", *files, "--format", "json", cwd=root)
    assert compared.returncode == 3, compared.stdout + compared.stderr
    user = {r["uid"]: r for r in json.loads(compared.stdout)}["./app [user]"]
    assert user["result"] == "Degradation" and "confirmed by 7 interleaved runs" in user["reason"], user
    compared = run_cli("check", "profiles", *files, "--no-confirm", "--format", "json", cwd=root)
    assert compared.returncode == 0 and "Confirming" not in compared.stderr, compared.stdout + compared.stderr
    assert "Confirming" in settled.stderr
    assert leftover_worktrees(run_env) == []
