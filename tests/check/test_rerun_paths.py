"""Confirmation and explanation on what users have: pending profiles (what ``run matrix`` leaves) of a
job over generated workloads (``workloads: [sizes]``, as the ``init`` template suggests).

Both re-run the profile's job: with the generated workloads the first run
used (recorded in the profile), never with the generator's id as a literal
argument, and on pending profiles as on registered ones.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import run_cli
from gitrepo import make_repo
from runhelpers import module_environment, run_env  # noqa: F401 - autouse

from perun_core import api
from tests.tui.helpers import tui_check

from .test_explain import PY_PROGRAM, PY_SLOW

GENERATOR = {"id": "sizes", "type": "integer", "min": 500, "max": 2000, "step": 500}


def _project(root):
    shas = make_repo(root, [{"files": {"prog.py": PY_PROGRAM}, "message": "v1: dict lookup"},
                            {"files": {"prog.py": PY_SLOW}, "message": "v2: list scan"}])
    api.init(root)
    settings = {"cmds": ["python3 prog.py"], "workloads": ["sizes"], "generators.workload": [GENERATOR],
                "collectors": [{"name": "time", "params": {"warmup": 0, "repeat": 3}}]}
    for key, value in settings.items():
        api.config_set(key, value, scope="local", cwd=root)
    ran = run_cli("run", "matrix", "-m", shas[0], "-m", shas[1], cwd=root)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return shas


@pytest.fixture(scope="module")
def project_template(tmp_path_factory):
    """The project with its two pending profiles, made once (its ``run matrix`` is most of a test's set-up)."""
    with module_environment(tmp_path_factory):
        root = tmp_path_factory.mktemp("template") / "pyproject"
        _project(root)
    return root


@pytest.fixture
def project(tmp_path, project_template):
    """A private copy of the project, so a test's changes (configuration, results) stay its own."""
    root = tmp_path / "pyproject"
    shutil.copytree(project_template, root, symlinks=True)
    return root


def _rerun_ratio(reason: str) -> float:
    found = re.search(r"re-run x([0-9.]+)", reason)
    assert found, reason
    return float(found.group(1))


def test_confirm_and_explain_pending_profiles_of_generated_workloads(project):
    root = project
    pending = sorted(p.name for p in (root / ".perun" / "jobs").iterdir())
    assert len(pending) == 2, pending
    assert json.loads((root / ".perun" / "jobs" / pending[0]).read_text())["header"]["generator"] == \
        {**GENERATOR, "profile_for_each_workload": False}  # the workloads it was made with, recorded

    result = run_cli("check", "head", "--confirm", "--confirm-runs", "3", "--explain", "--format", "json", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    records = [r for r in json.loads(result.stdout) if r["result"] == "Degradation"]
    assert records, result.stdout
    for record in records:
        assert "pending" in record["target"]
        assert "confirmed by 3 interleaved runs a side" in record["reason"], record["reason"]
        assert _rerun_ratio(record["reason"]) > 1.3  # the re-runs ran the sizes, not the word 'sizes'
        assert record["explanation"]["collector"] == "pytrace", record["explanation"]
        assert record["explained_by"][0]["function"] == "lookup", record["explained_by"]
    # nothing was run with the generator's id as its argument
    assert "sizes" not in "".join(str(r.get("explanation", {}).get("command", "")) for r in records)


def test_a_job_gone_from_the_matrix_says_so_in_words(project):
    root = project
    api.config_set("cmds", ["python3 other.py"], scope="local", cwd=root)
    result = run_cli("check", "head", "--confirm", "--format", "json", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    reasons = [r["reason"] for r in json.loads(result.stdout) if r["result"] == "Degradation"]
    assert reasons and all("could not be confirmed: no time job of the job matrix runs 'python3 prog.py sizes'"
                           in reason for reason in reasons), reasons


async def test_the_tui_confirms_pending_profiles_of_generated_workloads(project):
    root = project
    # the TUI confirms time changes by default: the job matrix has time jobs
    rows, subtitle = await tui_check(root, "h")
    degradations = [f for f in rows if f.result.value == "Degradation"]
    assert degradations, (subtitle, [(f.location, f.result.value, f.reason) for f in rows])
    assert all("confirmed by" in f.reason and _rerun_ratio(f.reason) > 1.3 for f in degradations), \
        [f.reason for f in degradations]
