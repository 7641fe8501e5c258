"""bisect on a real C project: a 1.6x slow-down at one commit, a commit that does not build, the default strategy."""

from __future__ import annotations

import json

from conftest import run_cli
from gitrepo import make_repo
from runhelpers import C_PROGRAM, MAKEFILE, needs_cc, run_env  # noqa: F401 - run_env: autouse

from perun_core import api
from perun_core.storage.repository import PerunRepository

WORKLOAD = "150000000"  # about 60 ms a run: shorter runs are mostly start-up and scheduling noise
SLOW_FROM = 4


def _history(root):
    """c0..c8: the loop runs 1.6 times as long from c4 on; c2 does not build; the configured strategy is the default."""
    commits = []
    for number in range(9):
        factor = "16 / 10" if number >= SLOW_FROM else "1"
        source = C_PROGRAM.replace("FACTOR", factor)
        if number == 2:
            source = source.replace("return 0;", "return 0 /* missing semicolon */")
        files = {"Makefile": MAKEFILE, ".gitignore": "app\n", "app.c": source, "n.txt": f"{number}\n"}
        commits.append({"files": files, "message": f"c{number}"})
    shas = make_repo(root, commits)
    api.init(root)
    for key, value in {"execute.pre_run": ["make"], "cmds": ["./app"], "workloads": [WORKLOAD],
                       "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 3}}]}.items():
        api.config_set(key, value, scope="local", cwd=root)
    return shas


@needs_cc
def test_bisect_names_the_slow_commit_and_rechecks_it(tmp_path):
    root = tmp_path / "proj"
    shas = _history(root)
    out = run_cli("bisect", shas[0][:7], shas[-1][:7], "--register", cwd=root)
    assert out.returncode == 0, out.stderr
    assert f"first degraded commit: {shas[SLOW_FROM]}\n" in out.stdout, out.stdout + out.stderr
    assert "uncertain" not in out.stdout, out.stdout + out.stderr
    assert f"skipped {shas[2][:7]}: " in out.stdout and "make" in out.stdout
    # every tested commit ran in turns with GOOD and BAD; the boundary was measured twice
    assert "runs a side in turns with GOOD and BAD" in out.stderr
    assert f"re-check: {shas[SLOW_FROM][:7]} is bad" in out.stderr, out.stderr
    assert f"re-check: {shas[SLOW_FROM - 1][:7]} is good" in out.stderr, out.stderr
    # the findings against GOOD and against the parent (which places degrade certainly is the strategy's call)
    assert "against its parent (re-measured now): " in out.stdout and "Degradation at ./app [" in out.stdout, out.stdout
    # what --register kept is this bisect's own runs, not stored profiles that check would have compared
    assert "(stored profiles)" not in out.stdout, out.stdout
    # --register kept one merged profile of each job at each measured commit: GOOD, BAD and every commit the
    # search collected at (c1, c3 and c4 on a quiet machine; a busy one can leave c4 undecided and test c5)
    collected = {line.split("collecting at ")[1][:7] for line in out.stderr.splitlines() if "collecting at " in line}
    with PerunRepository(root) as repo:
        counts = {sha[:7]: len(repo.entries_with_metadata(sha)) for sha in shas}
    assert {sha for sha, count in counts.items() if count} == collected | {shas[0][:7], shas[-1][:7]}, counts
    assert set(counts.values()) == {0, 1} and counts[shas[2][:7]] == 0
    assert f", {sum(counts.values())} profiles registered" in out.stdout, out.stdout


@needs_cc
def test_bisect_of_an_unchanged_range_finds_nothing(tmp_path):
    root = tmp_path / "proj"
    shas = _history(root)
    result = api.bisect(shas[0], shas[1], cwd=root)
    assert result.culprit is None and result.collections >= 1
    assert result.steps[0].verdict == "good"
    assert not list((root / ".perun" / "jobs").iterdir())  # without --register nothing is kept
    out = run_cli("bisect", shas[5], shas[3], cwd=root)
    assert out.returncode == 2 and "is not an ancestor" in out.stderr, out.stderr
    out = run_cli("bisect", shas[0], shas[1], "-j", "nosuch", cwd=root)
    assert out.returncode == 2 and "matches 0 jobs" in out.stderr


def _timed(amounts, origin):
    resources = [{"amount": value, "type": "time", "subtype": "real", "uid": "./app", "order": order}
                 for order, value in enumerate(amounts, 1)]
    return {"origin": origin, "header": {"type": "time", "units": {"time": "s"}, "cmd": "./app", "params": "",
                                         "workload": WORKLOAD},
            "collector_info": {"name": "time", "params": {"repeat": len(amounts)}}, "postprocessors": [],
            "global": {"timestamp": sum(amounts), "resources": resources, "models": []}}


def test_pending_profiles_are_used_instead_of_measuring(tmp_path):
    """Pending profiles of the job (origin: their commit) place every commit: nothing runs, ./app does not exist."""
    root = tmp_path / "proj"
    shas = make_repo(root, [{"files": {"n.txt": f"{i}\n"}, "message": f"c{i}"} for i in range(6)])
    api.init(root)
    for key, value in {"cmds": ["./app"], "workloads": [WORKLOAD], "collectors": [{"name": "time"}]}.items():
        api.config_set(key, value, scope="local", cwd=root)
    for i, sha in enumerate(shas):
        level = 1.5 if i >= 3 else 1.0
        amounts = [level * (1 + 0.01 * ((i + k) % 5)) for k in range(8)]
        (root / ".perun" / "jobs" / f"p{i}.perf").write_text(json.dumps(_timed(amounts, sha)))
    out = run_cli("bisect", shas[0], shas[-1], cwd=root)
    assert out.returncode == 0, out.stderr
    assert f"first degraded commit: {shas[3]}\n" in out.stdout, out.stdout + out.stderr
    assert "0 collections run" in out.stdout and "collecting" not in out.stderr
    assert "(stored profiles, at " in out.stderr


def test_a_commit_the_profiles_cannot_place_is_undecided_and_the_culprit_uncertain(tmp_path):
    """c2 sits halfway between GOOD's and BAD's levels: neither good nor bad; ./app does not exist to measure it."""
    root = tmp_path / "proj"
    shas = make_repo(root, [{"files": {"n.txt": f"{i}\n"}, "message": f"c{i}"} for i in range(4)])
    api.init(root)
    for key, value in {"cmds": ["./app"], "workloads": [WORKLOAD], "collectors": [{"name": "time"}]}.items():
        api.config_set(key, value, scope="local", cwd=root)
    for i, (sha, level) in enumerate(zip(shas, (1.0, 1.0, 1.5 ** 0.5, 1.5))):
        amounts = [level * (1 + 0.01 * ((i + k) % 5)) for k in range(8)]
        (root / ".perun" / "jobs" / f"p{i}.perf").write_text(json.dumps(_timed(amounts, sha)))
    result = api.bisect(shas[0], shas[-1], cwd=root)
    undecided = [s for s in result.steps if s.commit == shas[2]]
    assert [s.verdict for s in undecided] == ["undecided"], result.steps
    assert "cannot tell GOOD's level from BAD's" in undecided[0].reason and "measuring it failed" in undecided[0].reason
    assert result.culprit == shas[3] and result.candidates == (shas[2],)
    assert not result.certain and shas[2][:7] in result.doubt
    out = run_cli("bisect", shas[0], shas[-1], cwd=root)
    assert out.returncode == 0, out.stderr
    doubt = f"  uncertain: commits set aside lie before it: {shas[2][:7]}"
    assert f"first degraded commit: {shas[3]}\n{doubt}\n" in out.stdout, out.stdout


def test_a_re_measured_figure_is_labelled_and_shown_beside_the_stored_one(tmp_path):
    """c1 and c2 have stored profiles halfway between GOOD's and BAD's levels, so both are measured (a script
    that sleeps 40 ms up to c1 and 120 ms from c2 on), and the boundary is measured again: the figures of the
    culprit against its parent come from those runs, not from the stored profiles that check compares.  Each
    figure says which it is, and the stored one is given beside the re-measured one."""
    root = tmp_path / "proj"
    script = "#!/bin/sh\nsleep {}\n"
    levels = (0.04, 0.04, 0.12, 0.12)
    shas = make_repo(root, [{"files": {"app": ("exec", script.format(level))}, "message": f"c{i}"}
                            for i, level in enumerate(levels)])
    api.init(root)
    for key, value in {"cmds": ["./app"], "workloads": [WORKLOAD],
                       "collectors": [{"name": "time", "params": {"warmup": 0, "repeat": 1}}]}.items():
        api.config_set(key, value, scope="local", cwd=root)
    middle = (0.04 * 0.12) ** 0.5
    spread = (0.96, 1.03, 0.98, 1.01, 0.97, 1.04, 0.99, 1.02)  # both sides of the middle: neither good nor bad
    for i, (sha, level) in enumerate(zip(shas, (0.04, middle, middle * 1.001, 0.12))):
        stored = _timed([level * factor for factor in spread], sha)
        resources = stored["global"]["resources"]
        # a measured run has a user time as well: the stored ones name their locations alike (./app [real])
        resources += [{**row, "subtype": "user", "amount": 0.001} for row in resources]
        (root / ".perun" / "jobs" / f"p{i}.perf").write_text(json.dumps(stored))
    out = run_cli("bisect", shas[0], shas[-1], cwd=root)
    assert out.returncode == 0, out.stderr
    assert f"first degraded commit: {shas[2]}\n" in out.stdout, out.stdout + out.stderr
    measured = [line for line in out.stdout.splitlines() if line.startswith("  against its parent (re-measured now): ")]
    stored = [line for line in out.stdout.splitlines() if line.startswith("  against its parent (stored profiles): ")]
    assert measured and "Degradation at ./app [real]" in measured[0], out.stdout
    assert stored and "NoChange at ./app [real]" in stored[0], out.stdout
    assert f"  against {shas[0][:7]} (re-measured now): " in out.stdout, out.stdout
