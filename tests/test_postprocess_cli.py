"""``perun-core postprocessby`` with the analyses, as a user runs it: subprocesses in a real repository."""

from __future__ import annotations

import json
import math

import pytest

from conftest import run_cli
from runhelpers import run_env, documented  # noqa: F401 - autouse fixture
from test_postprocessors import TRUTH, complexity_profile, synthetic_rows

from perun_core.analysis import best_model


def jobs(root) -> list[str]:
    return sorted(path.name for path in (root / ".perun" / "jobs").iterdir())


def written(result, root):
    """The profile a successful postprocessby wrote (its name is the last word of its one line)."""
    assert result.returncode == 0, result.stderr
    name = result.stdout.strip().rsplit(" ", 1)[1]
    return documented((root / ".perun" / "jobs" / name))


@pytest.fixture
def project(perun_repo):
    root, shas = perun_repo
    (root / "complexity.perf").write_text(json.dumps(complexity_profile(synthetic_rows(), origin=shas[-1])))
    return root


def test_regression_analysis_finds_every_generating_class(project):
    root = project
    saved = written(run_cli("postprocessby", "complexity.perf", "regression_analysis", "-m", "full", cwd=root), root)
    models = saved["global"]["models"]
    for kind, (_, (b0, b1)) in TRUTH.items():
        best = best_model([m for m in models if m["uid"] == kind])
        assert best["model"] == kind
        got = {c["name"]: c["value"] for c in best["coeffs"]}
        assert got["b0"] == pytest.approx(b0, rel=0.05)
        assert got["b1"] == pytest.approx(b1, rel=0.05) if kind != "constant" else got["b1"] == 0.0
    assert saved["postprocessors"] == [{"name": "regression_analysis", "params": {
        "method": "full", "regression_models": None, "steps": 3, "depending_on": "structure-unit-size",
        "of": "amount"}}]


def test_options_follow_the_declaration_and_the_alias_works(project):
    root = project
    helped = run_cli("postprocessby", "0@p", "regression_analysis", "--help", cwd=root)
    assert helped.returncode == 0
    for option in ("-m, --method", "-r, --regression_models, --regression-models MODEL", "-s, --steps",
                   "-dp, --depending-on KEY", "-o, --of KEY"):
        assert option in helped.stdout
    result = run_cli("postprocessby", "complexity.perf", "regression-analysis", "-m", "interval", "-s", "2",
                     "-r", "linear,quadratic", "-r", "n log n", cwd=root)
    saved = written(result, root)
    [entry] = saved["postprocessors"]
    assert entry["name"] == "regression_analysis"
    assert entry["params"]["regression_models"] == ["linear", "quadratic", "nlogn"]
    assert {m["method"] for m in saved["global"]["models"]} == {"interval"}
    assert {m["model"] for m in saved["global"]["models"]} <= {"linear", "quadratic", "nlogn"}
    assert len([m for m in saved["global"]["models"] if m["uid"] == "linear"]) == 2


def test_nonparametric_clusterizer_and_filter_commands(project):
    root = project
    for argv in (["regressogram", "-b", "20", "-st", "median"], ["moving_average", "-m", "smm", "-ww", "31"],
                 ["kernel_regression", "-k", "epanechnikov", "-bw", "silverman", "-p", "41"]):
        saved = written(run_cli("postprocessby", "complexity.perf", *argv, cwd=root), root)
        assert {m["model"] for m in saved["global"]["models"]} == {argv[0]}
        assert len(saved["global"]["models"]) == len(TRUTH)
    filtered = written(run_cli("postprocessby", "complexity.perf", "filter", "-u", "linear", "-u", "power",
                               "--condition", "structure-unit-size <= 500", cwd=root), root)
    rows = filtered["global"]["resources"]
    assert {r["uid"] for r in rows} == {"linear", "power"} and max(r["structure-unit-size"] for r in rows) <= 500
    (root / "filtered.perf").write_text(json.dumps(filtered))
    clustered = written(run_cli("postprocessby", "filtered.perf", "clusterizer", "-s", "sliding_window",
                                "-ww", "10", "-wm", "absolute", cwd=root), root)
    assert all(isinstance(r["cluster"], int) for r in clustered["global"]["resources"])
    (root / "clustered.perf").write_text(json.dumps(clustered))
    modelled = written(run_cli("postprocessby", "clustered.perf", "regression_analysis", "-dp", "cluster",
                               "-r", "linear", cwd=root), root)
    assert [p["name"] for p in modelled["postprocessors"]] == ["filter", "clusterizer", "regression_analysis"]
    assert {m["per_key"] for m in modelled["global"]["models"]} == {"cluster"}


def _profile_file(root, name: str, rows: list[dict]) -> str:
    (root / name).write_text(json.dumps(complexity_profile(rows), allow_nan=True))
    return name


BAD_INPUT = {
    "missing -dp key": (
        lambda: [{"uid": "f", "structure-unit-size": s, "amount": s * 2.0, "name": "n"} for s in range(1, 9)],
        ["regression_analysis", "-dp", "size"],
        "error: regression_analysis: parameter 'depending_on' = 'size': expected a numeric resource key, but no "
        "resource has the key 'size'; the numeric keys of this profile are 'structure-unit-size', 'amount'"),
    "non-numeric -o key": (
        lambda: [{"uid": "f", "structure-unit-size": s, "amount": s * 2.0, "name": "n"} for s in range(1, 9)],
        ["regressogram", "-o", "name"],
        "error: regressogram: parameter 'of' = 'name': expected a numeric resource key, but 'name' holds no numbers; "
        "the numeric keys of this profile are 'structure-unit-size', 'amount'"),
    "empty profile": (
        lambda: [], ["regression_analysis"],
        "error: postprocessor 'regression_analysis' failed: the profile has no resources to work on"),
    "nan amounts": (
        lambda: [{"uid": "f", "structure-unit-size": s, "amount": math.nan if s == 3 else 1.0} for s in range(1, 9)],
        ["moving_average"],
        # refused when the profile is read, naming the resource, before any postprocessor sees it
        "error: bad.perf: key 'global.resources[2].amount' nan is not a finite number"),
    "negative amounts": (
        lambda: [{"uid": "f", "structure-unit-size": s, "amount": -1.0 * s} for s in range(1, 9)],
        ["regression_analysis", "-r", "power", "-r", "exponential"],
        "error: postprocessor 'regression_analysis' failed: no model could be fitted for uid 'f': power: ln y is "
        "undefined: some y values are <= 0; exponential: ln y is undefined: some y values are <= 0"),
    "unknown model": (
        lambda: [{"uid": "f", "structure-unit-size": 1, "amount": 1.0}], ["regression_analysis", "-r", "cubic"],
        "error: regression_analysis: parameter 'regression_models' = ['cubic']: expected model names out of "),
    "bad condition": (
        lambda: [{"uid": "f", "structure-unit-size": 1, "amount": 1.0}], ["filter", "--condition", "amount >> 1"],
        "error: filter: parameter 'conditions' = ['amount >> 1']: expected conditions 'KEY OP VALUE'"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_clear_line(perun_repo, case):
    root, _ = perun_repo
    make_rows, argv, message = BAD_INPUT[case]
    name = _profile_file(root, "bad.perf", make_rows())
    before = jobs(root)
    result = run_cli("postprocessby", name, *argv, cwd=root)
    assert result.returncode == 1
    assert result.stderr.startswith(message), result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert jobs(root) == before


def test_the_porcelain_reports_its_events_to_a_listener_only(project):
    """``api.postprocess`` with ``on_event`` reports the unit's phase and the profile written; without a
    listener the context says nobody listens (so no event is made: the command line's postprocessby does not
    even load the event classes, see tests/test_hygiene.py)."""
    from perun_core import api
    from perun_core.events import PhaseStarted, ProfileWritten
    from perun_core.units import UnitContext, ignore_event

    heard: list = []
    done = api.postprocess(str(project / "complexity.perf"), "regression_analysis", {"regression_models": ["linear"]},
                           on_event=heard.append, cwd=project)
    assert heard == [PhaseStarted("postprocess", "regression_analysis", None),
                     ProfileWritten(None, done.path, done.origin or "")]
    assert done.path.exists()
    assert not UnitContext(cwd=project).listened and UnitContext(cwd=project).emit is ignore_event
    assert UnitContext(cwd=project, emit=heard.append).listened
