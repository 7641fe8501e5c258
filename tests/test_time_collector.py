"""The time collector and the measured process runner under it."""

from __future__ import annotations

import json
import sys
import threading
import time

import pytest

from runhelpers import process_gone, run_env  # noqa: F401 - run_env: autouse fixture

from perun_core import api_run
from perun_core.errors import CollectionError, Interrupted
from perun_core.runner import events as ev
from perun_core.runner.helper import spawn_helper
from perun_core.runner.process import run_process

PY = sys.executable


def collect(root, cmd, args="", **params):
    events = []
    result = api_run.collect("time", [cmd], [args] if args else [], [], params, cwd=root, on_event=events.append)
    return json.loads(result.profiles[0].path.read_text()), events


def resources(profile, subtype):
    return [r for r in profile["global"]["resources"] if r["subtype"] == subtype]


def test_true_with_warmups_records_every_measured_run(perun_repo):
    root, shas = perun_repo
    profile, events = collect(root, "true", warmup=2, repeat=10)
    assert profile["origin"] == shas[-1]
    assert profile["header"]["type"] == "time" and profile["header"]["cmd"] == "true"
    assert profile["header"]["units"] == {"time": "s", "memory": "B"}
    assert profile["collector_info"] == {"name": "time", "params": {"warmup": 2, "repeat": 10, "timeout": None,
                                                                    "keep_failed": False}}
    rows = profile["global"]["resources"]
    assert len(rows) == 40
    for subtype in ("real", "user", "sys", "max_rss"):
        found = resources(profile, subtype)
        assert [r["order"] for r in found] == list(range(1, 11))
        assert all(r["uid"] == "true" and r["amount"] >= 0 for r in found)
    assert {r["type"] for r in resources(profile, "max_rss")} == {"memory"}
    assert 0 < profile["global"]["timestamp"] == pytest.approx(sum(r["amount"] for r in resources(profile, "real")))
    reps = [(e.index, e.total, e.warmup) for e in events if isinstance(e, ev.Repetition)]
    assert reps == [(1, 2, True), (2, 2, True)] + [(i, 10, False) for i in range(1, 11)]


def test_measures_wall_cpu_and_memory(perun_repo, tmp_path):
    root, _ = perun_repo
    sleeper, _ = collect(root, "sleep", "0.2", repeat=2)
    assert all(0.19 < r["amount"] < 1.0 for r in resources(sleeper, "real"))
    assert all(r["amount"] < 0.05 for r in resources(sleeper, "user"))
    script = tmp_path / "busy.py"
    # spin on CPU time, not wall time, so a loaded machine cannot starve the check
    script.write_text("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.25:\n    pass\n"
                      "block = bytearray(60_000_000)\nblock[::4096] = b'x' * len(block[::4096])\n")
    busy, _ = collect(root, PY, str(script))
    cpu = resources(busy, "user")[0]["amount"] + resources(busy, "sys")[0]["amount"]
    assert cpu > 0.2
    assert resources(busy, "real")[0]["amount"] >= cpu * 0.9
    assert resources(busy, "max_rss")[0]["amount"] > 60_000_000


def test_peak_memory_is_the_programs_own(perun_repo):
    if spawn_helper() is None:
        pytest.skip("no C compiler to build the spawn helper")
    root, _ = perun_repo
    profile, _ = collect(root, "true")
    # a fork of the Python interpreter would report tens of megabytes here
    assert resources(profile, "max_rss")[0]["amount"] < 8_000_000
    assert "max_rss_floor" not in profile["header"]


def test_without_the_helper_peak_memory_has_a_floor(perun_repo, monkeypatch):
    monkeypatch.setenv("PERUN_NO_SPAWN_HELPER", "1")
    root, _ = perun_repo
    profile, _ = collect(root, "sleep", "0.05", repeat=2)
    assert [r["order"] for r in resources(profile, "real")] == [1, 2]
    assert all(0.05 <= r["amount"] < 1 for r in resources(profile, "real"))
    floor = profile["header"]["max_rss_floor"]
    assert floor > 1_000_000 and resources(profile, "max_rss")[0]["amount"] <= floor * 2


def test_non_zero_exit_fails_with_status_and_stderr(perun_repo):
    root, _ = perun_repo
    script = "-c 'echo first >&2; echo second >&2; exit 3'"
    with pytest.raises(CollectionError) as info:
        collect(root, "sh", script, repeat=3)
    error = info.value
    assert error.exit_status == 3 and error.stderr_tail == "first\nsecond"
    assert error.message == "time: sh -c 'echo first >&2; echo second >&2; exit 3': the profiled command exited with status 3"
    assert error.hint == "last lines of its standard error:\n  first\n  second"
    assert list((root / ".perun/jobs").iterdir()) == []


def test_keep_failed_records_failing_runs(perun_repo):
    root, _ = perun_repo
    profile, _ = collect(root, "sh", "-c 'exit 4'", repeat=2, keep_failed=True)
    assert [r["exit_status"] for r in profile["global"]["resources"]] == [4] * 8


def test_killed_by_a_signal(perun_repo):
    root, _ = perun_repo
    with pytest.raises(CollectionError, match="was killed by SIGSEGV") as info:
        collect(root, "sh", "-c 'kill -SEGV $$'")
    assert info.value.exit_status == -11


def test_timeout_kills_the_whole_process_group(perun_repo, tmp_path):
    root, _ = perun_repo
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(CollectionError, match=r"timed out after 0.5 s"):
        collect(root, "sh", f"-c 'sleep 30 & echo $! > {pid_file}; wait'", timeout=0.5)
    assert time.monotonic() - started < 5
    assert process_gone(int(pid_file.read_text()))


@pytest.mark.parametrize("cmd, needle", [
    ("./missing-binary", "command not found: ./missing-binary"),
    ("surely-not-a-command-xyz", "command not found: surely-not-a-command-xyz (not on PATH)"),
    ("./.perun", "command is not an executable file: ./.perun"),
])
def test_commands_that_cannot_run(perun_repo, cmd, needle):
    root, _ = perun_repo
    with pytest.raises(CollectionError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        collect(root, cmd)


@pytest.mark.parametrize("use_helper", [True, False])
def test_run_process_streams_lines_and_reports_exec_errors(tmp_path, use_helper):
    helper = spawn_helper() if use_helper else None
    if use_helper and helper is None:
        pytest.skip("no C compiler to build the spawn helper")
    lines = []
    outcome = run_process(["sh", "-c", "echo a; echo b >&2; printf 'no newline'"], cwd=tmp_path, helper=helper,
                          on_line=lambda stream, text: lines.append((stream, text)))
    assert outcome.exit_status == 0 and not outcome.timed_out
    assert sorted(lines) == [("stderr", "b"), ("stdout", "a"), ("stdout", "no newline")]
    assert outcome.stdout_tail == "a\nno newline" and outcome.stderr_tail == "b"
    assert outcome.wall_ns > 0 and outcome.max_rss_bytes > 0
    with pytest.raises(FileNotFoundError):
        run_process(["./nope"], cwd=tmp_path, helper=helper)


def test_cancelling_stops_the_run_at_once(tmp_path):
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(Interrupted):
        run_process(["sleep", "30"], cwd=tmp_path, cancelled=cancel, helper=spawn_helper())
    assert time.monotonic() - started < 3
