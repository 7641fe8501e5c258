"""Explain's call-level profiles are kept with the explanation: no pending clutter, nothing a check pairs.

The collection itself is exercised end to end in test_explain.py; here the
keeping, the reuse, fsck and repositories that still hold the pending
profiles an older perun left.
"""

from __future__ import annotations

import json
from dataclasses import replace

from conftest import run_cli, time_profile, write_pending
from gitrepo import make_repo

from perun_core import api
from perun_core.check.explain import ExplainedFunction, Explanation, store_explanations
from perun_core.check.explain_collect import keep_profile, stored_profile
from perun_core.check.explain_store import kept_profiles
from perun_core.profile.model import Profile
from perun_core.runner.jobs import Job


def registered_pair(tmp_path):
    root = tmp_path / "project"
    shas = make_repo(root, [{"files": {"a.txt": "1\n"}, "message": "v1"}, {"files": {"a.txt": "2\n"}, "message": "v2"}])
    api.init(root)
    for sha, amounts in zip(shas, ((1.0, 1.1, 1.0), (5.0, 5.1, 5.2))):
        write_pending(root, f"t-{sha[:7]}.perf", time_profile(sha, cmd="./app", args="", workload="w", amounts=amounts))
        api.add([f"t-{sha[:7]}.perf"], minor=sha, cwd=root)
    return root, shas


def call_level(origin: str, amount: float) -> Profile:
    data = time_profile(origin, cmd="./app", args="", workload="w", amounts=(amount,))
    data["collector_info"] = {"name": "pytrace", "params": {"mode": "cprofile"}}
    return Profile.from_dict(data)


def explained_check(root, sources, names=("base.perf", "target.perf")):
    """The stored check of HEAD with an explanation naming ``sources`` on its degradation."""
    report = api.check_head(cwd=root)
    why = Explanation("pytrace", "s", 1.0, 5.0, (ExplainedFunction("f", "app.py", 3, 1.0, 5.0, 1.0, "changed"),),
                      profiles=names, sources=sources)
    explained = replace(report, versions=tuple(
        replace(v, pairs=tuple(replace(p, findings=tuple(
            replace(f, details={**f.details, "explanation": why}) if f.result.is_degradation else f
            for f in p.findings)) for p in v.pairs)) for v in report.versions))
    with api.open_repository(root) as repo:
        assert store_explanations(repo, explained) >= 1
    return why


def test_kept_profiles_are_not_pending_are_reused_and_survive_fsck(tmp_path):
    root, (base, head) = registered_pair(tmp_path)
    pairs_before = api.check_head(cwd=root).pairs
    with api.open_repository(root) as repo:
        kept = [keep_profile(repo, call_level(minor, amount), minor, False, n)
                for n, (minor, amount) in enumerate(((base, 1.0), (head, 5.0)), 1)]
    assert all(where.startswith("object:") and "kept with the explanation" in what for what, _, where in kept)
    assert not [p for p in (root / ".perun" / "jobs").iterdir() if p.suffix == ".perf"]
    why = explained_check(root, tuple(where for _, _, where in kept), tuple(name for _, name, _ in kept))
    # not pending anywhere, and the next check pairs exactly what it paired before
    status = run_cli("status", cwd=root)
    assert "(no pending profiles)" in status.stdout and "pending profiles of other commits" not in status.stdout
    assert api.check_head(cwd=root).pairs == pairs_before
    # the stored explanation names them: found again for reuse, and drawn without collecting
    with api.open_repository(root) as repo:
        found = kept_profiles(repo, [base, head])
        assert {minor: [sha for _, sha in items] for minor, items in found.items()} == {
            base: [kept[0][2][7:]], head: [kept[1][2][7:]]}
        job = Job(cmd="./app", args="", workload="w", collector=None)
        reused = stored_profile(repo, head, job, "pytrace", found[head])
        assert reused is not None and reused[3] == kept[1][2] and reused[1] == kept[1][1]
        assert stored_profile(repo, head, replace(job, workload="other"), "pytrace", found[head]) is None
    assert api.explanation_comparison(why, cwd=root) is not None
    # fsck keeps objects only an explanation names, however old
    report = api.fsck(repair=True, stale_after=0, cwd=root)
    assert all(p.kind != "unreferenced" for p in report.problems), report.problems
    with api.open_repository(root) as repo:
        assert all(repo.objects.exists(where[7:]) for _, _, where in kept)


def test_an_older_repository_with_explains_pending_profiles_still_works(tmp_path):
    """An older perun left the call-level profiles pending and its explanations name them as pending:<file>."""
    root, (base, head) = registered_pair(tmp_path)
    for name, minor, amount in (("base-pytrace.perf", base, 1.0), ("target-pytrace.perf", head, 5.0)):
        write_pending(root, name, json.dumps(call_level(minor, amount).to_dict()))
    why = explained_check(root, ("pending:base-pytrace.perf", "pending:target-pytrace.perf"))
    assert api.explanation_comparison(why, cwd=root) is not None
    stored = [api.explanation_of(f) for p in api.stored_check(cwd=root).pairs for f in p.findings]
    assert any(e is not None and e.sources == why.sources for e in stored)
    # they are still pending profiles of their commits: listed there, and registered or deleted as any other
    status = run_cli("status", cwd=root).stdout
    assert "Pending profiles (1):" in status and "1 more pending profile" in status
    assert run_cli("add", "-m", "HEAD~1", "0@p", cwd=root).returncode == 0
    assert run_cli("rm", "0@p", cwd=root).returncode == 0
    assert not [p for p in (root / ".perun" / "jobs").iterdir() if p.suffix == ".perf"]
