"""The drift detector through ``perun-core check head``: a history creeping +3 % per version, one commit each.

No single step between two versions is a change (3 % is under the 5 %
floor), so what flags the creeping functions at HEAD is the drift detector
over the stored history, as a user meets it.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from gitrepo import fast_linear_history

from perun_core import api

from .labelled import history


def creeping_repository(root, seed: int, creep: float) -> tuple[list[dict], dict[str, str]]:
    """A repository whose 20 commits each hold one version of a labelled history; the versions, the labels."""
    docs, labels = history(seed, creep=creep)
    shas = fast_linear_history(root, len(docs))
    api.init(root)
    for number, (sha, doc) in enumerate(zip(shas, docs)):
        path = root.parent / f"{root.name}-v{number}.perf"
        path.write_text(json.dumps({"origin": sha, **doc}))
        api.add([str(path)], minor=sha, cwd=root)
    return docs, labels


@pytest.mark.parametrize("seed", [104, 105])
def test_check_head_flags_a_creeping_function_as_a_drift_and_leaves_steady_ones_alone(tmp_path, seed):
    docs, labels = creeping_repository(tmp_path / "creeping", seed, 0.03)
    result = run_cli("check", "head", "--format", "json", cwd=tmp_path / "creeping")
    assert result.returncode == 3, result.stdout + result.stderr
    found = {record["uid"]: record for record in json.loads(result.stdout)}
    assert set(found) == set(labels)
    for uid, label in labels.items():
        if label == "degradation":
            assert (found[uid]["result"], found[uid]["type"]) == ("Degradation", "creeping"), found[uid]
        else:
            assert found[uid]["result"] == "NoChange", found[uid]
    # the step HEAD made alone is no change: the drift detector, not the last pair, found it
    for name, doc in (("BASELINE.perf", docs[-2]), ("TARGET.perf", docs[-1])):
        (tmp_path / name).write_text(json.dumps(doc))
    pairwise = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", "--format", "json", cwd=tmp_path)
    assert pairwise.returncode == 0, pairwise.stdout + pairwise.stderr
    assert {record["result"] for record in json.loads(pairwise.stdout)} == {"NoChange"}


def test_check_head_on_a_steady_history_finds_nothing(tmp_path):
    _, labels = creeping_repository(tmp_path / "steady", 106, 0.0)
    result = run_cli("check", "head", "--format", "json", cwd=tmp_path / "steady")
    assert result.returncode == 0, result.stdout + result.stderr
    assert {record["uid"]: record["result"] for record in json.loads(result.stdout)} == \
        {uid: "NoChange" for uid in labels}
