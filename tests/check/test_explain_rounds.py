"""check --explain collects baseline and target interleaved, and keeps its explanations with the stored check."""

from __future__ import annotations

import json
import shutil

import pytest
from gitrepo import make_repo
from runhelpers import leftover_worktrees, module_environment, run_env  # noqa: F401

from perun_core import api
from perun_core.check.explain_collect import merge_rounds
from perun_core.profile.model import Profile, Snapshot
from perun_core.profile.resources import ResourceTable

from check.test_explain import PY_PROGRAM, PY_SLOW, PY_WORKLOAD, _configure
from conftest import run_cli


@pytest.fixture(scope="module")
def checked_template(tmp_path_factory):
    """The project checked once by ``check --compute-missing head``: both commits' time profiles collected and a
    check stored without explanations.  Made once a module: that collection is most of a test's work before the
    explanation it is about (a check with ``--compute-missing --explain`` in one go: tests/check/test_explain.py)."""
    with module_environment(tmp_path_factory):
        root = tmp_path_factory.mktemp("template") / "pyproject"
        shas = make_repo(root, [{"files": {"prog.py": PY_PROGRAM}, "message": "v1: dict lookup"},
                                {"files": {"prog.py": PY_SLOW}, "message": "v2: list scan"}])
        _configure(root, "python3 prog.py", PY_WORKLOAD)
        checked = run_cli("check", "--compute-missing", "head", cwd=root)
        assert checked.returncode == 3, checked.stdout + checked.stderr
    return root, shas


@pytest.fixture
def pyproject(tmp_path, checked_template):
    """A private copy of the checked project, so a test's explanations and records stay its own."""
    template, shas = checked_template
    root = tmp_path / "pyproject"
    shutil.copytree(template, root, symlinks=True)
    return root, shas


def test_the_rounds_of_baseline_and_target_alternate(pyproject, run_env):
    root, (v1, v2) = pyproject
    report = api.check_head(compute_missing=True, cwd=root)
    events: list = []
    explained = api.explain(report, on_event=events.append, cwd=root)
    rounds = [(e.commit, e.round, e.rounds) for e in events if isinstance(e, api.ExplainRound)]
    # baseline first, then target, in every round; three rounds a side for cProfile
    assert rounds == [(v1[:7], 1, 3), (v2[:7], 1, 3), (v1[:7], 2, 3), (v2[:7], 2, 3), (v1[:7], 3, 3),
                      (v2[:7], 3, 3)], rounds
    assert events.index(next(e for e in events if isinstance(e, api.ExplainCollecting))) < \
        events.index(next(e for e in events if isinstance(e, api.ExplainRound)))
    explanation = next(api.explanation_of(f) for _v, _p, f in explained.findings() if api.explanation_of(f))
    assert explanation.rounds == 3 and explanation.functions[0].function == "lookup"
    assert leftover_worktrees(run_env) == []
    # the merged call-level profiles were kept (one a side) and are reused: no more rounds
    again: list = []
    api.explain(report, on_event=again.append, cwd=root)
    assert not [e for e in again if isinstance(e, api.ExplainRound)]


def _profile(rows):
    return Profile(header={"type": "time", "cmd": "./app"}, global_region=Snapshot(ResourceTable(rows), [], {}))


def test_rounds_merge_by_sum_or_by_median_per_function():
    runs = [_profile([{"type": "time", "subtype": "function", "uid": "hot", "amount": a, "exclusive": e}])
            for a, e in ((10, 4), (30, 6), (20, 100))]
    runs[1].global_region.resources.append({"type": "time", "subtype": "function", "uid": "rare", "amount": 9,
                                            "exclusive": 9})
    summed = {r["uid"]: r for r in merge_rounds(runs, "sum").global_region.resources}
    assert (summed["hot"]["amount"], summed["hot"]["exclusive"]) == (60, 110)
    assert summed["rare"]["amount"] == 9
    median = {r["uid"]: r for r in merge_rounds(runs, "median").global_region.resources}
    assert (median["hot"]["amount"], median["hot"]["exclusive"]) == (20, 6)
    assert median["rare"]["amount"] == 0  # missing from two of three runs
    assert merge_rounds(runs, "sum").header["rounds"] == 3
    assert merge_rounds(runs[:1]) is runs[0]


def _record(root, sha):
    return json.loads((root / ".perun" / "changes" / sha[:2] / f"{sha[2:]}.json").read_text())


def test_the_explanation_is_stored_with_the_findings_and_shown_later(pyproject):
    root, (_v1, v2) = pyproject
    first = run_cli("check", "--compute-missing", "head", "--explain", "--format", "json", cwd=root)
    assert first.returncode == 3, first.stderr
    record = _record(root, v2)
    assert record["version"] == 3
    stored = [f["explanation"] for p in record["pairs"] for f in p["findings"] if "explanation" in f]
    assert stored, record
    explanation = stored[0]
    assert explanation["collector"] == "pytrace" and explanation["functions"][0]["function"] == "lookup"
    assert explanation["functions"][0]["file"] == "prog.py" and explanation["functions"][0]["line"] == 7
    assert len(explanation["profiles"]) == 2 and all(name.endswith(".perf") for name in explanation["profiles"])
    # read back through the API, with no collection at all
    version = api.stored_check(cwd=root)
    found = [api.explanation_of(f) for p in version.pairs for f in p.findings if api.explanation_of(f)]
    assert found and found[0].functions[0].function == "lookup" and found[0].rounds == 3
    assert all(e is found[0] for e in found)  # findings explained alike share one explanation
    # a later check without --explain still shows it (same profiles, same findings), and stores it again
    later = run_cli("check", "head", cwd=root, env={"NO_COLOR": "1", "COLUMNS": "400"})  # a line per result
    assert later.returncode == 3, later.stderr
    assert "explained by (pytrace" in later.stdout and "1. lookup (prog.py:7)" in later.stdout
    names = explanation["profiles"]
    assert f"compared {names[0]} -> {names[1]}" in later.stdout and "wrote " not in later.stdout
    assert "Explaining" not in later.stderr
    assert any("explanation" in f for p in _record(root, v2)["pairs"] for f in p["findings"])


def test_older_records_without_explanations_still_read(pyproject):
    root, (_v1, v2) = pyproject
    record = _record(root, v2)  # stored by the template's check --compute-missing head
    assert record["version"] == 3 and not any("explanation" in f for p in record["pairs"] for f in p["findings"])
    record["version"] = 2
    path = root / ".perun" / "changes" / v2[:2] / f"{v2[2:]}.json"
    path.write_text(json.dumps(record))
    version = api.stored_check(cwd=root)
    assert version.pairs and all(api.explanation_of(f) is None for p in version.pairs for f in p.findings)
    assert any(f.result.value == "Degradation" for p in version.pairs for f in p.findings)
    # a damaged explanation leaves its finding in place, without one
    record["version"] = 3
    record["pairs"][0]["findings"][0]["explanation"] = {"functions": [{"function": "f"}]}
    path.write_text(json.dumps(record))
    version = api.stored_check(cwd=root)
    assert len(version.pairs[0].findings) == len(record["pairs"][0]["findings"])
    assert api.explanation_of(version.pairs[0].findings[0]) is None
    # and a newer version than this perun knows is refused, naming the file
    record["version"] = 4
    path.write_text(json.dumps(record))
    status = run_cli("status", cwd=root)
    assert status.returncode == 1 and str(path.name) in status.stderr
