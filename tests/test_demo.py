"""The demo repository: deterministic, a real history with known performance changes."""

from __future__ import annotations

import statistics

import pytest

from perun_core import api
from perun_core.api._demo.synthetic import build_demo_repository
from perun_core.errors import UsageError


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("PERUN_CONFIG_DIR", str(home / "perun-config"))
        root = build_demo_repository(tmp_path_factory.mktemp("demo") / "sll")
        with api.open_repository(root) as repo:
            entries = list(api.log(None, with_profiles=True, repo=repo))
            report = api.status(repo=repo)
        yield root, entries, report


def mean_real_time(root, entry) -> float:
    with api.open_repository(root) as repo:
        info = next(i for i in entry.profiles if i.type == "time")
        profile = api.load_profile(info.tag, minor=entry.version.checksum, repo=repo).profile
    return statistics.mean(r["amount"] for _, region in profile.regions() for r in region.resources.rows()
                           if r["subtype"] == "real")


def test_history_shape(demo):
    root, entries, report = demo
    assert len(entries) == 40
    assert entries[0].version.checksum == report.head.checksum
    assert not report.dirty
    merges = [e for e in entries if len(e.version.parents) == 2]
    assert [m.version.short_desc for m in merges] == ["Merge branch 'feature/iterators'"]
    assert len({e.version.author for e in entries}) > 1
    dates = [e.version.date for e in entries]
    assert dates == sorted(dates, reverse=True)


def test_most_commits_have_profiles_of_every_kind(demo):
    _, entries, _ = demo
    profiled = [e for e in entries if e.counts.total]
    assert len(profiled) >= 30
    assert sum(e.counts.time for e in entries) == len(profiled)
    assert sum(e.counts.mixed for e in entries) >= 15
    assert sum(e.counts.memory for e in entries) >= 5


def test_the_slowdown_doubles_the_time(demo):
    root, entries, _ = demo
    by_sha = {e.version.checksum: e for e in entries}
    slow = next(e for e in entries if "plain scan" in e.version.short_desc)
    fast = next(e for e in entries if e.version.short_desc.startswith("Cache node keys"))
    # no check has run on the demo, so nothing claims to have found a change
    assert not any(e.changes for e in entries)
    before = by_sha[slow.version.parents[0]]
    ratio = mean_real_time(root, slow) / mean_real_time(root, before)
    assert 1.8 < ratio < 2.2
    assert mean_real_time(root, fast) < mean_real_time(root, slow) * 0.75
    assert "plain scan" in slow.version.short_desc


def test_pending_profiles_for_head(demo):
    _, _, report = demo
    assert [p.tag for p in report.pending] == ["0@p", "1@p"]
    assert {p.origin for p in report.pending} == {report.head.checksum}
    assert {p.type for p in report.pending} == {"time", "mixed"}


def test_models_and_traces_are_there(demo):
    root, entries, _ = demo
    with api.open_repository(root) as repo:
        modelled = next(i for e in entries for i in e.profiles if i.postprocessors)
        owner = next(e for e in entries if modelled in e.profiles)
        profile = api.load_profile(modelled.tag, minor=owner.version.checksum, repo=repo).profile
        assert {m["model"] for region in profile.snapshots for m in region.models} == {"constant", "linear"}
        memory = next(i for e in entries for i in e.profiles if i.type == "memory")
        owner = next(e for e in entries if memory in e.profiles)
        profile = api.load_profile(memory.tag, minor=owner.version.checksum, repo=repo).profile
        first = profile.snapshots[0].resources.rows()[0]
        assert first["trace"][0]["function"] == "sll_insert" and first["uid"]["source"] == "src/sll.c"


def test_builds_are_identical_and_reused(demo, tmp_path):
    root, entries, _ = demo
    again = build_demo_repository(tmp_path / "again")
    with api.open_repository(again) as repo:
        other = list(api.log(None, with_profiles=True, repo=repo))
    assert [e.version.checksum for e in other] == [e.version.checksum for e in entries]
    assert [[i.checksum for i in e.profiles] for e in other] == [[i.checksum for i in e.profiles] for e in entries]
    marker = again / ".perun" / "jobs"
    stamp = marker.stat().st_mtime_ns
    assert build_demo_repository(again) == again  # reused, not rebuilt
    assert marker.stat().st_mtime_ns == stamp


def test_refuses_to_overwrite_other_directories(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file.txt").write_text("mine\n")
    with pytest.raises(UsageError):
        build_demo_repository(tmp_path / "busy")
    with pytest.raises(UsageError):
        build_demo_repository(tmp_path / "small", commits=5)
    assert not (tmp_path / "small").exists()
