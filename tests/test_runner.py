"""The runner: event stream, versions and worktrees, pre_run, registration and profile names."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gitrepo import make_repo
from runhelpers import leftover_worktrees, run_env, tree_bytes, documented  # noqa: F401 - run_env is an autouse fixture

from perun_core import api
from perun_core.api import run as api_run
from perun_core.errors import (
    CollectionError,
    ConfigError,
    DirtyWorkingTree,
    Interrupted,
    InvalidParameter,
    InvalidRevision,
    JobsFailed,
    PreRunFailed,
)
from perun_core.profile.model import Profile
from perun_core.storage.repository import PerunRepository
from perun_core import events as ev
from perun_core.runner.naming import render_name, validate_template, write_new_profile


def configure(root: Path, **values) -> None:
    for key, value in values.items():
        api.config_set(key.replace("__", "."), value, scope="local", cwd=root)


def summary(event) -> tuple:
    """The parts of an event that are the same in every run (no paths, no durations)."""
    match event:
        case ev.RunPlanned():
            return ("RunPlanned", event.jobs, event.versions, event.total, event.in_place)
        case ev.VersionStarted():
            return ("VersionStarted", event.version, event.index, event.count, event.worktree)
        case ev.VersionFinished():
            return ("VersionFinished", event.version, event.index, event.count)
        case ev.PhaseStarted():
            return ("PhaseStarted", event.phase, event.unit, event.job, event.detail)
        case ev.JobStarted():
            return ("JobStarted", event.job, event.total, event.version, event.spec.label)
        case ev.Repetition():
            return ("Repetition", event.job, event.index, event.total, event.warmup)
        case ev.OutputLine():
            return ("OutputLine", event.job, event.stream, event.text)
        case ev.ProfileWritten():
            return ("ProfileWritten", event.job, event.origin)
        case ev.ProfileRegistered():
            return ("ProfileRegistered", event.job, event.minor)
        case ev.JobFinished():
            return ("JobFinished", event.job, event.total)
        case ev.JobFailed():
            return ("JobFailed", event.job, event.total, event.exit_status)
        case ev.RunFinished():
            return ("RunFinished", event.status, event.written, event.failed)
    raise AssertionError(f"unexpected event {event!r}")


def steady(events) -> list:
    """The events without advice on noisy measurements, which depends on how busy the machine is."""
    return [e for e in events if not isinstance(e, ev.MeasurementAdvice)]


def expected_two_job_events(head: str) -> list[tuple]:
    expected = [
        ("RunPlanned", 2, (head,), 2, True),
        ("VersionStarted", head, 1, 1, False),
        ("PhaseStarted", "pre_run", None, None, "sh -c 'echo building'"),
        ("OutputLine", None, "stdout", "building"),
    ]
    for job, word in ((1, "one"), (2, "two")):
        expected += [
            ("JobStarted", job, 2, head, f"time: sh -c 'echo {word}' | normalizer"),
            ("PhaseStarted", "before", "time", job, ""),
            ("PhaseStarted", "collect", "time", job, ""),
            ("Repetition", job, 1, 1, True), ("OutputLine", job, "stdout", word),
            ("Repetition", job, 1, 2, False), ("OutputLine", job, "stdout", word),
            ("Repetition", job, 2, 2, False), ("OutputLine", job, "stdout", word),
            ("PhaseStarted", "after", "time", job, ""),
            ("PhaseStarted", "postprocess", "normalizer", job, ""),
            ("ProfileWritten", job, head),
            ("JobFinished", job, 2),
        ]
    return expected + [("VersionFinished", head, 1, 1), ("RunFinished", "ok", 2, 0)]


@pytest.fixture
def two_job_matrix(perun_repo):
    root, shas = perun_repo
    configure(root, cmds=["sh"], args=["-c 'echo one'", "-c 'echo two'"],
              collectors=[{"name": "time", "params": {"warmup": 1, "repeat": 2}}],
              postprocessors=[{"name": "normalizer"}], execute__pre_run=["sh -c 'echo building'"])
    return root, shas


def test_event_stream_of_a_two_job_matrix(two_job_matrix):
    root, shas = two_job_matrix
    events = []
    result = api_run.run_matrix(cwd=root, on_event=events.append)
    assert [summary(e) for e in steady(events)] == expected_two_job_events(shas[-1])
    written = [e for e in events if isinstance(e, ev.ProfileWritten)]
    assert [w.path for w in written] == [p.path for p in result.profiles]
    assert all(w.path.parent == root / ".perun/jobs" and w.path.is_file() for w in written)
    version = next(e for e in events if isinstance(e, ev.VersionStarted))
    assert version.workdir == root.resolve()
    finished = [e for e in events if isinstance(e, (ev.JobFinished, ev.RunFinished))]
    assert all(e.seconds > 0 for e in finished)
    first = documented(written[0].path)
    assert first["postprocessors"] == [{"name": "normalizer", "params": {}}]
    assert max(r["amount"] for r in first["global"]["resources"] if r["type"] == "time") == 1.0


def test_the_same_events_come_through_an_iterator_from_a_thread(two_job_matrix):
    root, shas = two_job_matrix
    stream = api_run.stream(api_run.run_matrix, cwd=root)
    assert [summary(e) for e in steady(stream)] == expected_two_job_events(shas[-1])
    assert len(stream.result.profiles) == 2


def test_a_failing_job_does_not_stop_the_others(perun_repo):
    root, shas = perun_repo
    events = []
    with pytest.raises(CollectionError, match="exited with status 1") as info:
        api_run.run_job(["sh -c 'exit 1'", "true"], collectors=["time"], cwd=root, on_event=events.append)
    result = info.value.result
    assert [p.job.cmd for p in result.profiles] == ["true"] and len(result.failures) == 1
    kinds = [summary(e) for e in events if isinstance(e, (ev.JobFailed, ev.JobFinished, ev.RunFinished))]
    assert kinds == [("JobFailed", 1, 2, 1), ("JobFinished", 2, 2), ("RunFinished", "failed", 1, 1)]
    with pytest.raises(JobsFailed, match="^2 of 2 jobs failed; first: time: sh -c 'exit 1'"):
        api_run.run_job(["sh -c 'exit 1'", "sh -c 'exit 2'"], collectors=["time"], cwd=root)
    quiet = api_run.run_job(["sh -c 'exit 3'"], collectors=["time"], cwd=root, raise_on_failure=False)
    assert quiet.profiles == () and quiet.failures[0].exit_status == 3


def test_cancel_from_another_thread_cleans_up(perun_repo, run_env):
    root, _ = perun_repo
    stream = api_run.stream(api_run.run_job, ["sleep"], ["30"], [], ["time"], minor_versions=["HEAD"], cwd=root)
    seen = []
    started = time.monotonic()
    with pytest.raises(Interrupted):
        for event in stream:
            seen.append(event)
            if isinstance(event, ev.JobStarted):
                assert len(leftover_worktrees(run_env)) == 1
                stream.cancel()
    assert time.monotonic() - started < 5
    assert summary(seen[-1]) == ("RunFinished", "interrupted", 0, 0)
    assert leftover_worktrees(run_env) == [] and list((root / ".perun/jobs").iterdir()) == []


# -- versions, worktrees and the user's checkout --------------------------------------------------

SCRIPT = "#!/bin/sh\necho {version}\npwd\n"


@pytest.fixture
def three_versions(tmp_path):
    root = tmp_path / "scripted"
    shas = make_repo(root, [
        {"files": {"bin/prog": ("exec", SCRIPT.format(version="v1")), "notes.md": "a\n"}},
        {"files": {"bin/prog": ("exec", SCRIPT.format(version="v2")), "notes.md": "a\n"}},
        {"files": {"bin/prog": ("exec", SCRIPT.format(version="v3")), "notes.md": "b\n"}},
    ])
    api.init(root)
    return root, shas


def test_other_commits_run_in_temporary_worktrees_and_leave_the_checkout_alone(three_versions, run_env):
    root, shas = three_versions
    (root / "notes.md").write_text("uncommitted edit\n")
    (root / "scratch.txt").write_text("untracked\n")
    before = tree_bytes(root)
    events = []
    result = api_run.run_job(["./bin/prog"], collectors=["time"], minor_versions=["HEAD~2", "HEAD"],
                             cwd=root, on_event=events.append)
    assert tree_bytes(root) == before
    assert [p.origin for p in result.profiles] == [shas[0], shas[2]]
    assert [documented(p.path)["origin"] for p in result.profiles] == [shas[0], shas[2]]
    starts = [e for e in events if isinstance(e, ev.VersionStarted)]
    assert all(e.worktree and e.workdir.parent == run_env for e in starts)
    output = [e.text for e in events if isinstance(e, ev.OutputLine)]
    # ./bin/prog resolves against each worktree's root, which is also the working directory
    assert output == ["v1", str(starts[0].workdir), "v3", str(starts[1].workdir)]
    assert leftover_worktrees(run_env) == []


def test_crawl_parents_profiles_the_whole_history(three_versions):
    root, shas = three_versions
    result = api_run.run_job(["./bin/prog"], collectors=["time"], crawl_parents=True, cwd=root)
    assert result.versions == (shas[2], shas[1], shas[0])
    assert sorted(p.origin for p in result.profiles) == sorted(shas)
    again = api_run.run_job(["./bin/prog"], collectors=["time"], minor_versions=["HEAD~1"], crawl_parents=True, cwd=root)
    assert again.versions == (shas[1], shas[0])


def test_a_dirty_checkout_is_refused_unless_forced(three_versions):
    root, shas = three_versions
    (root / "notes.md").write_text("uncommitted edit\n")
    events = []
    with pytest.raises(DirtyWorkingTree, match="uncommitted changes, which would skew the profile") as info:
        api_run.collect("time", ["./bin/prog"], cwd=root, on_event=events.append)
    assert "--force-dirty" in info.value.hint and events == []
    forced = api_run.collect("time", ["./bin/prog"], force_dirty=True, cwd=root)
    assert forced.profiles[0].origin == shas[2]
    # an untracked file alone does not make the tree dirty
    (root / "notes.md").write_text("b\n")
    (root / "other.txt").write_text("x\n")
    assert api_run.collect("time", ["./bin/prog"], cwd=root).profiles[0].origin == shas[2]


def test_register_after_run_lands_in_the_index_of_the_origin(three_versions):
    root, shas = three_versions
    configure(root, profiles__register_after_run=True)
    events = []
    result = api_run.run_job(["./bin/prog"], collectors=["time"], minor_versions=["HEAD~1", "HEAD"],
                             cwd=root, on_event=events.append)
    assert [(p.registered, p.path.exists()) for p in result.profiles] == [(True, False), (True, False)]
    with PerunRepository(root) as repo:
        for sha, written in zip(shas[1:], result.profiles):
            entries = repo.read_index(sha)
            assert [(e.checksum, e.path, e.cmd) for e in entries] == [(written.checksum, written.path.name, "./bin/prog")]
        assert repo.read_index(shas[0]) == []
    assert [summary(e) for e in events if isinstance(e, ev.ProfileRegistered)] == [
        ("ProfileRegistered", 1, shas[1]), ("ProfileRegistered", 2, shas[2])]
    assert list((root / ".perun/jobs").iterdir()) == []


def test_a_failing_pre_run_stops_the_run_and_keeps_its_output(three_versions, run_env):
    root, _ = three_versions
    configure(root, cmds=["./bin/prog"], collectors=[{"name": "time"}],
              execute__pre_run=["sh -c 'echo compiling; echo broken >&2; exit 2'", "touch never-reached"])
    events = []
    with pytest.raises(PreRunFailed) as info:
        api_run.run_matrix(minor_versions=["HEAD"], cwd=root, on_event=events.append)
    assert [summary(e) for e in steady(events)][-2:] == [("OutputLine", None, "stdout", "broken"),
                                                 ("RunFinished", "error", 0, 0)]
    error = info.value
    assert error.message == "pre_run command 'sh -c 'echo compiling; echo broken >&2; exit 2'' exited with status 2"
    assert error.exit_status == 2 and error.output_tail == "compiling\nbroken"
    assert error.hint == "its last output:\n  compiling\n  broken"
    assert leftover_worktrees(run_env) == [] and list((root / ".perun/jobs").iterdir()) == []
    configure(root, execute__pre_run=["no-such-build-tool --all"])
    with pytest.raises(PreRunFailed, match="'no-such-build-tool' was not found"):
        api_run.run_matrix(cwd=root)


def test_bad_input_is_refused_before_anything_runs(three_versions):
    root, _ = three_versions
    events = []
    with pytest.raises(InvalidRevision, match="no-such-rev"):
        api_run.run_job(["./bin/prog"], collectors=["time"], minor_versions=["HEAD", "no-such-rev"],
                        cwd=root, on_event=events.append)
    with pytest.raises(ConfigError, match="key 'cmds': the job matrix lists no commands") as info:
        api_run.run_matrix(cwd=root, on_event=events.append)
    assert "cmds: [./build/app]" in info.value.hint
    configure(root, cmds=["./bin/prog"])
    with pytest.raises(ConfigError, match="key 'collectors'"):
        api_run.run_matrix(cwd=root, on_event=events.append)
    configure(root, collectors=[{"name": "time", "params": {"repeat": "many"}}])
    with pytest.raises(InvalidParameter, match="'repeat' = 'many'"):
        api_run.run_matrix(cwd=root, on_event=events.append)
    with pytest.raises(ConfigError, match="unknown tag %bogus%"):
        api_run.collect("time", ["./bin/prog"], output_template="%cmd%-%bogus%", cwd=root, on_event=events.append)
    assert events == [] and list((root / ".perun/jobs").iterdir()) == []


# -- names ------------------------------------------------------------------------------------------

def test_output_profile_template_tags(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        profile = Profile.from_dict({
            "origin": "ab" * 20,
            "header": {"type": "time", "cmd": "./build/app", "params": "-O2 --fast", "workload": "data/in put.txt"},
            "collector_info": {"name": "time", "params": {"repeat": 10, "timeout": None}},
            "postprocessors": [{"name": "normalizer", "params": {}}, {"name": "filter", "params": {"keep": ["a", "b"]}}],
        })
        template = ("%collector%-%postprocessors%-%cmd%-%args%-%workload%-%type%-%date%-%origin%-%counter%"
                    "-%time.repeat%-%filter.keep%-%time.timeout%-%normalizer.nothing%-%nounit.x%")
        validate_template(template)
        name = render_name(profile, template, counter=3, when=1_700_000_000)
        assert name == ("time-normalizer-and-filter-app-O2-fast-in_put.txt-time-2023-11-14-22-13-20-"
                        + "ab" * 20 + "-3-10-a_b.perf")
        plain = Profile.from_dict({"header": {"type": "time", "cmd": "true", "params": "", "workload": ""},
                                   "collector_info": {"name": "time"}})
        assert render_name(plain, "%collector%-%cmd%-%args%-%workload%-%date%", when=0) == "time-true-1970-01-01-00-00-00.perf"
        assert render_name(plain, "../%cmd%/x y.perf") == "true_x_y.perf"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_generated_names_never_overwrite(tmp_path, perun_repo):
    profile = Profile.from_dict({"header": {"type": "time"}, "global": {"resources": []}})
    paths = [write_new_profile(profile, tmp_path, "same.perf") for _ in range(3)]
    assert [p.name for p in paths] == ["same.perf", "same-1.perf", "same-2.perf"]
    root, _ = perun_repo
    first = api_run.collect("time", ["true"], output_template="fixed", cwd=root)
    second = api_run.collect("time", ["true"], output_template="fixed", cwd=root)
    assert [first.profiles[0].path.name, second.profiles[0].path.name] == ["fixed.perf", "fixed-1.perf"]
    assert documented(first.profiles[0].path)["origin"]
