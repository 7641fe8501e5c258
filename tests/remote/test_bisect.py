"""bisect on a real C project: a slow-down at one commit, a commit that does not build."""

from __future__ import annotations

import pytest
from conftest import run_cli
from gitrepo import make_repo
from runhelpers import C_PROGRAM, MAKEFILE, needs_cc, run_env  # noqa: F401 - run_env: autouse

from perun_core import api
from perun_core.errors import UsageError

WORKLOAD = "20000000"


def _history(root):
    """c0..c8: the loop runs 20 times as often from c4 on (CPU time, which load disturbs least); c2 does not build."""
    commits = []
    for number in range(9):
        factor = "20" if number >= 4 else "1"
        source = C_PROGRAM.replace("FACTOR", factor)
        if number == 2:
            source = source.replace("return 0;", "return 0 /* missing semicolon */")
        files = {"Makefile": MAKEFILE, ".gitignore": "app\n", "app.c": source, "n.txt": f"{number}\n"}
        commits.append({"files": files, "message": f"c{number}"})
    shas = make_repo(root, commits)
    api.init(root)
    # changes under 2.5x are ignored: only the 20x slow-down counts, never the noise of a busy machine
    for key, value in {"execute.pre_run": ["make"], "cmds": ["./app"], "workloads": [WORKLOAD],
                       "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 3}}],
                       "degradation.cutoff": 150}.items():
        api.config_set(key, value, scope="local", cwd=root)
    return shas


@needs_cc
def test_bisect_finds_the_slow_commit_and_skips_the_broken_one(tmp_path):
    root = tmp_path / "proj"
    shas = _history(root)
    events = []
    result = api.bisect(shas[0], shas[-1], register=True, cwd=root, on_event=events.append)
    assert result.culprit == shas[4], [(s.commit[:7], s.verdict, s.reason) for s in result.steps]
    assert [c for c, _ in result.skipped] == [shas[2]] and "make" in result.skipped[0][1]
    assert result.findings and all(f.result.is_degradation for f in result.findings)
    assert any(f.result.is_degradation for f in result.parent_findings)
    assert result.collections == 6 and result.commits == 9 and result.candidates == ()
    # --register kept them: a second bisect collects only the commit that cannot be built
    out = run_cli("bisect", shas[0][:7], shas[-1][:7], "-j", "1", cwd=root)
    assert out.returncode == 0, out.stderr
    assert f"first degraded commit: {shas[4]}" in out.stdout
    assert f"skipped {shas[2][:7]}" in out.stdout
    assert "tested 6 of 9 commits, 1 collection run" in out.stdout, out.stdout
    assert "is bad (stored profiles)" in out.stderr


@needs_cc
def test_bisect_reports_no_degradation_and_refuses_reversed_ranges(tmp_path):
    root = tmp_path / "proj"
    shas = _history(root)
    result = api.bisect(shas[0], shas[1], cwd=root)
    assert result.culprit is None and result.collections == 2
    assert not list((root / ".perun" / "jobs").iterdir())  # without --register nothing is kept
    with pytest.raises(UsageError, match="is not an ancestor"):
        api.bisect(shas[5], shas[3], cwd=root)
    out = run_cli("bisect", shas[0], shas[1], "-j", "nosuch", cwd=root)
    assert out.returncode == 2 and "matches 0 jobs" in out.stderr
