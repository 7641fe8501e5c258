"""The demo built by the real collectors: a history with a regression and its fix, found by checks."""

from __future__ import annotations

import shutil
import statistics
import threading

import pytest

from tools import need_tools

from perun_core import api
from perun_core.api import check as api_check
from perun_core.api._demo.gitwrite import write_history
from perun_core.api._demo.collected import DEMO_COMMITS, _history, build_collected_demo
from perun_core.errors import ExternalToolError, Interrupted, UsageError
from perun_core.views import get_view

#: the collected demo compiles and profiles C
needs_tools = pytest.mark.tools("cc", "make", "nm", "addr2line")

SLOW = "Drop the tail pointer: find the last node when appending"
FAST = "Keep a tail pointer again: appending was quadratic"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    need_tools("cc", "make", "nm", "addr2line")
    home = tmp_path_factory.mktemp("home")
    lines: list[str] = []
    watched: dict[str, object] = {}

    def on_ready(root):
        # what a front end opening the demo now sees: the history, no profile, not a built demo
        with api.open_repository(root) as repo:
            entries = list(api.log(None, with_profiles=True, repo=repo))
        watched["ready"] = (len(entries), sum(e.counts.total for e in entries), api.demo_is_built(root))

    def progress(step):
        lines.append(step)
        if step.startswith("collecting a memory profile"):
            # the timing and tracing phases are over: their time profiles are registered already
            with api.open_repository(watched["root"]) as repo:
                entries = list(api.log(None, with_profiles=True, repo=repo))
            watched["timed"] = sorted({(e.counts.total, e.counts.time) for e in entries})

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("PERUN_CONFIG_DIR", str(home / "perun-config"))
        patch.delenv("XDG_CACHE_HOME", raising=False)
        watched["root"] = tmp_path_factory.mktemp("demo") / "sll"
        root = build_collected_demo(watched["root"], progress=progress, on_ready=on_ready)
        watched["built"] = api.demo_is_built(root)
        with api.open_repository(root) as repo:
            entries = list(api.log(None, with_profiles=True, repo=repo))
            report = api.status(repo=repo)
        yield root, entries, report, lines, watched


def by_subject(entries, subject):
    return next(e for e in entries if e.version.short_desc == subject)


def load(root, entry, kind):
    with api.open_repository(root) as repo:
        info = next(i for i in entry.profiles if i.type == kind)
        return api.load_profile(info.tag, minor=entry.version.checksum, repo=repo).profile


def median_time(root, entry, subtype):
    profile = load(root, entry, "time")
    return statistics.median(r["amount"] for _, region in profile.regions() for r in region.resources.rows()
                             if r["subtype"] == subtype)


@needs_tools
def test_history_is_a_fixed_line_of_twelve_commits(demo, tmp_path):
    root, entries, report, _, _ = demo
    assert len(entries) == DEMO_COMMITS == 12
    assert all(len(e.version.parents) == (0 if e is entries[-1] else 1) for e in entries)
    assert entries[0].version.checksum == report.head.checksum and not report.dirty
    subjects = [e.version.short_desc for e in entries]
    assert subjects.index(FAST) < subjects.index(SLOW)  # newest first: the fix comes later
    assert subjects[-1] == "Initial import of the sll library"
    # fixed dates and authors: every build has the same commit ids
    shas = write_history(tmp_path / "again", _history(), {"main": DEMO_COMMITS - 1})
    assert shas[::-1] == [e.version.checksum for e in entries]


@needs_tools
def test_the_demo_can_be_watched_while_it_is_built(demo):
    root, _, _, _, watched = demo
    assert watched["ready"] == (DEMO_COMMITS, 0, False)  # opened as soon as the history is there
    # each commit's time profile was registered as it was measured, before the other profiles
    assert watched["timed"] == [(1, 1)]
    assert watched["built"] and not (root / ".perun-demo-build.lock").exists()


@needs_tools
def test_progress_is_one_line_per_step(demo):
    _, _, _, lines, _ = demo
    assert lines[:12] == [f"building commit {n}/12" for n in range(1, 13)]
    assert "collecting time profiles: commit 12/12" in "\n".join(lines)
    assert lines[-1] == "checking the history for performance changes"
    assert all("\n" not in line for line in lines)


@needs_tools
def test_local_configuration_holds_the_job_matrix(demo):
    root, _, _, _, _ = demo
    cwd = str(root)
    assert api.config_get("execute.pre_run", scope="local", cwd=cwd).value == ["make"]
    assert api.config_get("cmds", scope="local", cwd=cwd).value == ["./sll-bench"]
    assert api.config_get("workloads", scope="local", cwd=cwd).value == ["15000"]
    assert [c["name"] for c in api.config_get("collectors", scope="local", cwd=cwd).value] == ["time"]
    assert api.config_get("generators.workload", scope="local", cwd=cwd).value[0]["id"] == "sizes"


@needs_tools
def test_every_commit_was_timed_by_the_time_collector(demo):
    root, entries, _, _, _ = demo
    for entry in entries:
        assert entry.counts.time == 1, entry.version.short_desc
        profile = load(root, entry, "time")
        assert profile.collector_info["name"] == "time"
        assert profile.collector_info["params"]["repeat"] == 7
        assert 0.005 < median_time(root, entry, "real") < 30
    slow, fast = by_subject(entries, SLOW), by_subject(entries, FAST)
    before = next(e for e in entries if e.version.checksum == slow.version.parents[0])
    # user time: what the program did, whatever else the machine was busy with
    assert median_time(root, slow, "user") > 2.5 * median_time(root, before, "user")
    assert median_time(root, fast, "user") < 0.4 * median_time(root, slow, "user")


@needs_tools
def test_trace_profiles_with_models_around_the_regression(demo):
    root, entries, _, _, _ = demo
    traced = [e for e in entries if e.counts.mixed]
    assert [e.version.short_desc for e in traced] == [FAST, SLOW, "Check malloc failures in the benchmark"]
    for entry in traced:
        profile = load(root, entry, "mixed")
        assert profile.collector_info["name"] == "trace"
        assert [p["name"] for p in profile.postprocessors] == ["filter", "filter", "regression_analysis"]
        rows = [r for _, region in profile.regions() for r in region.resources.rows()]
        assert {r["uid"] for r in rows} >= {"sll_insert", "sll_search", "sll_remove", "sll_destroy"}
        assert {r["structure-unit-size"] for r in rows} == set(range(1000, 8001, 1000))
        assert all(0 < r["amount"] < 1_000_000 for r in rows)
        models = {(m["uid"], m["model"]) for _, region in profile.regions() for m in region.models}
        assert {("sll_insert", "linear"), ("sll_search", "linear")} <= models
    figure = get_view("scatter").run(load(root, traced[1], "mixed"), {"uid": "sll_insert"})
    assert "sll_insert" in get_view("scatter").render(figure, width=80, height=20)


@needs_tools
def test_checks_mark_the_regression_and_the_fix(demo):
    root, entries, _, _, _ = demo
    slow, fast = by_subject(entries, SLOW), by_subject(entries, FAST)
    assert "-" in slow.changes and "+" not in slow.changes
    assert "+" in fast.changes and "-" not in fast.changes
    with api.open_repository(root) as repo:
        found = {}
        for entry in (slow, fast):
            report = api_check.stored_check(entry.version.checksum, repo=repo)
            found[entry.version.short_desc] = {(f.location, f.result.mark) for p in report.pairs for f in p.findings
                                               if f.result.mark}
    assert {("./sll-bench [user]", "-"), ("sll_insert", "-")} <= found[SLOW]
    assert {("./sll-bench [user]", "+"), ("sll_insert", "+")} <= found[FAST]


@needs_tools
def test_memory_profile_of_head_feeds_the_heap_map(demo):
    root, entries, _, _, _ = demo
    head = entries[0]
    assert head.counts.memory == 1
    profile = load(root, head, "memory")
    assert profile.collector_info["name"] == "memory"
    rows = [r for s in profile.snapshots for r in s.resources.rows()]
    inserts = [r for r in rows if r["subtype"] == "malloc" and r["uid"]["function"] == "sll_insert"]
    assert len(inserts) == 6000 and inserts[0]["uid"]["source"] == "./src/sll.c"
    assert any(r["subtype"] == "free" for r in rows)
    view = get_view("heapmap")
    result = view.run(profile, {})
    assert len(result.heap.snapshots) >= 2
    assert "sll_insert" in {site.function for site in result.heap.sites}
    assert "sll_insert" in view.render(result, width=80, height=24)


@needs_tools
def test_two_pending_profiles_of_head(demo):
    _, _, report, _, _ = demo
    assert len(report.pending) == 2
    assert {p.origin for p in report.pending} == {report.head.checksum}
    assert {p.type for p in report.pending} == {"time", "mixed"}


@needs_tools
def test_a_built_demo_is_reused(demo):
    root, _, _, _, _ = demo
    jobs = root / ".perun" / "jobs"
    stamp = jobs.stat().st_mtime_ns
    lines: list[str] = []
    assert build_collected_demo(root, progress=lines.append) == root
    assert lines == [] and jobs.stat().st_mtime_ns == stamp


def test_refuses_directories_holding_something_else(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file.txt").write_text("mine\n")
    with pytest.raises(UsageError, match="is not a demo repository"):
        build_collected_demo(tmp_path / "busy")
    assert (tmp_path / "busy" / "file.txt").read_text() == "mine\n"
    # the generated demo is another demo: not taken for this one
    (tmp_path / "other" / ".perun").mkdir(parents=True)
    (tmp_path / "other" / ".perun" / "demo.json").write_text('{"version": 2, "commits": 40, "seed": 7}\n')
    with pytest.raises(UsageError):
        build_collected_demo(tmp_path / "other")


def test_missing_tools_are_named(tmp_path, monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "make" else real_which(name, *a, **k))
    with pytest.raises(ExternalToolError) as caught:
        build_collected_demo(tmp_path / "demo")
    assert caught.value.tool == "make" and "build-essential" in caught.value.hint
    assert list(tmp_path.iterdir()) == []


@needs_tools
def test_a_cancelled_build_leaves_nothing(tmp_path):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Interrupted):
        build_collected_demo(tmp_path / "demo", cancel=cancel)
    assert list(tmp_path.iterdir()) == []
