"""Explanations stored with a check travel with its findings: push, pull, and the other clone shows them."""

from __future__ import annotations

from dataclasses import replace

from .remotes import bare_remote, clone, project, register

from perun_core import api
from perun_core.check.explain import ExplainedFunction, Explanation, store_explanations


def test_a_pulled_check_carries_its_explanation(tmp_path):
    remote = bare_remote(tmp_path / "remote.git")
    shas = project(tmp_path / "a", remote)
    a, b = tmp_path / "a", clone(remote, tmp_path / "b")
    register(a, shas[0], "x", (1.0, 1.1, 1.0))
    register(a, shas[1], "x", (5.0, 5.1, 5.0))
    report = api.check_head(cwd=a)
    why = Explanation("callgrind", "Ir", 100.0, 300.0,
                      (ExplainedFunction("middle", "app.c", 7, 50.0, 250.0, 1.0, "changed"),),
                      profiles=("callgrind-a.perf", "callgrind-b.perf"), sources=("object:" + "0" * 40, ""))
    explained = replace(report, versions=tuple(
        replace(v, pairs=tuple(replace(p, findings=tuple(
            replace(f, details={**f.details, "explanation": why}) if f.result.is_degradation else f
            for f in p.findings)) for p in v.pairs)) for v in report.versions))
    with api.open_repository(a) as repo:
        assert store_explanations(repo, explained) >= 1
    api.push(cwd=a)
    api.pull(cwd=b)
    theirs = api.stored_check(cwd=b)
    found = [api.explanation_of(f) for p in theirs.pairs for f in p.findings if api.explanation_of(f)]
    assert found, theirs
    assert found[0].functions[0].where == "app.c:7" and found[0].profiles == ("callgrind-a.perf", "callgrind-b.perf")
    assert found[0].collector == "callgrind" and found[0].functions[0].share == 1.0
