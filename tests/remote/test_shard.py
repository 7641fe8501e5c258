"""run matrix / collect --shard K/N: a deterministic split of commits x jobs, and a CI pipeline over a bare remote."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from hypothesis import given
from hypothesis import strategies as st

from perun_core import api
from perun_core.runner.jobs import Job, UnitConfig
from perun_core.runner.run import parse_shard, shard_plan

from .remotes import bare_remote, clone, entries, project


def _jobs(count: int) -> list[Job]:
    return [Job("true", str(i), "", UnitConfig("time")) for i in range(count)]


@given(st.integers(1, 7), st.integers(1, 6), st.integers(1, 12))
def test_shards_cover_the_run_exactly_once_and_evenly(commits, jobs, n):
    versions = [f"{i:040x}" for i in range(commits)]
    matrix = _jobs(jobs)
    whole = [(v, j) for v, js in shard_plan(versions, matrix, None) for j in js]
    slices = [[(v, j) for v, js in shard_plan(versions, matrix, (k, n)) for j in js] for k in range(1, n + 1)]
    assert [pair for part in slices for pair in part] == whole  # disjoint, complete, in run order
    assert max(map(len, slices)) - min(map(len, slices)) <= 1
    assert shard_plan(versions, matrix, (1, n)) == shard_plan(list(versions), list(matrix), (1, n))


def test_contiguous_slices_keep_a_commit_on_few_shards():
    plan = shard_plan(["a" * 40, "b" * 40], _jobs(4), (1, 2))
    assert [(v[0], [j.args for j in js]) for v, js in plan] == [("a", ["0", "1", "2", "3"])]


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "x", "1-3", ""])
def test_bad_shards_are_refused(text):
    from perun_core.errors import UsageError

    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)


def test_cli_refuses_a_bad_shard(tmp_path):
    remote = bare_remote(tmp_path / "remote.git")
    root = tmp_path / "p"
    project(root, remote)
    out = run_cli("run", "matrix", "--shard", "3/2", cwd=root)
    assert out.returncode == 2 and out.stderr.startswith("error: --shard '3/2'"), out.stderr


def test_sharded_ci_pipeline_over_a_bare_remote(tmp_path):
    """N shard jobs collect and push; a last job pulls and checks all: every pair collected exactly once."""
    remote = bare_remote(tmp_path / "remote.git")
    shas = project(tmp_path / "dev", remote, commits=3)
    n = 3
    origins = []
    for k in range(1, n + 1):
        runner = clone(remote, tmp_path / f"shard{k}")
        for key, value in (("cmds", ["true"]), ("args", ["1", "2"]), ("collectors", [{"name": "time"}]),
                           ("profiles.register_after_run", True)):
            api.config_set(key, value, scope="local", cwd=runner)
        out = run_cli("run", "matrix", "-c", "--shard", f"{k}/{n}", cwd=runner)
        assert out.returncode == 0, out.stderr
        origins += [(sha, e[1]) for sha in shas for e in entries(runner, sha)]
        push = run_cli("push", "-q", cwd=runner)
        assert push.returncode == 0, push.stderr
    assert len(origins) == len(shas) * 2 and len(set(origins)) == len(origins)
    last = clone(remote, tmp_path / "last")
    assert run_cli("pull", cwd=last).returncode == 0
    for sha in shas:
        assert len(entries(last, sha)) == 2
        profiles = [api.load_profile(f"{i}@i", minor=sha, cwd=last).profile for i in range(2)]
        assert sorted(p.args for p in profiles) == ["1", "2"]
    # every commit runs the same `true`: no version can be slower than another
    check = run_cli("check", "all", "-f", "json", cwd=last)
    assert check.returncode == 0, check.stdout + check.stderr
    records = json.loads(check.stdout)
    assert {r["target"].split(":")[0] for r in records} == {sha[:7] for sha in shas[1:]}
    assert all(r["method"] for r in records)
    assert not [r for r in records if "Degradation" in r["result"] and not r["result"].startswith("Maybe")], records
