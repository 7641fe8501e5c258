"""The time collector and the measured process runner under it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import subprocess
import shutil
import sys
import threading
import time

import pytest

from runhelpers import process_gone, run_env, documented  # noqa: F401 - run_env: autouse fixture
from tools import require

from perun_core.api import run as api_run
from perun_core.errors import CollectionError, Interrupted
from perun_core import events as ev
from perun_core.runner.helper import spawn_helper
from perun_core.runner.process import RepeatedRuns, run_process

#: What a missing spawn helper means: the C compiler that builds it is missing.
NO_HELPER = "a C compiler to build the spawn helper (Debian: build-essential)"

PY = sys.executable


def collect(root, cmd, args="", **params):
    events = []
    result = api_run.collect("time", [cmd], [args] if args else [], [], params, cwd=root, on_event=events.append)
    return documented(result.profiles[0].path), events


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
    require(spawn_helper() is not None, NO_HELPER)
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
    require(not use_helper or helper is not None, NO_HELPER)
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


# -- many runs through one spawn helper ------------------------------------------------------------

#: A shell script for ``sh -c``: counts its runs in the file named by $1 and exports the number as $n.
COUNTED = 'n=$(($(cat "$1" 2>/dev/null || echo 0) + 1)); echo $n > "$1"; '


def counted(script: str, counter) -> str:
    """``args`` for ``sh``: run ``script`` with $n = the number of this run (from 1)."""
    return f"-c '{COUNTED}{script}' counted {counter}"


@pytest.fixture
def helper():
    """The compiled spawn helper (skips where no C compiler can build it)."""
    built = spawn_helper()
    require(built is not None, NO_HELPER)
    return built


@pytest.fixture(params=["helper", "python"])
def spawning(request, monkeypatch):
    """Both ways of starting runs: the spawn helper (one for all runs) and Python (one Popen per run)."""
    if request.param == "helper":
        require(spawn_helper() is not None, NO_HELPER)
    else:
        monkeypatch.setenv("PERUN_NO_SPAWN_HELPER", "1")
    return request.param


def per_run(events):
    """Events after the collect phase began, grouped under the Repetition that starts each run."""
    runs = []
    for event in events:
        if isinstance(event, ev.Repetition):
            runs.append(((event.index, event.total, event.warmup), []))
        elif isinstance(event, ev.OutputLine) and runs:
            runs[-1][1].append((event.stream, event.text))
        elif isinstance(event, ev.PhaseStarted) and event.phase == "after":
            break
    return runs


def test_each_runs_output_comes_between_its_repetition_and_the_next(perun_repo, tmp_path, spawning):
    root, _ = perun_repo
    script = 'echo out $n; echo err $n >&2; echo more $n; printf "unfinished $n"'
    profile, events = collect(root, "sh", counted(script, tmp_path / "count"), warmup=1, repeat=3)
    runs = per_run(events)
    assert [rep for rep, _ in runs] == [(1, 1, True), (1, 3, False), (2, 3, False), (3, 3, False)]
    for n, (_, lines) in enumerate(runs, 1):
        # the order between stdout and stderr is not defined, the order within each stream is
        assert [text for stream, text in lines if stream == "stdout"] == [f"out {n}", f"more {n}", f"unfinished {n}"]
        assert [text for stream, text in lines if stream == "stderr"] == [f"err {n}"]
    assert [r["order"] for r in resources(profile, "real")] == [1, 2, 3]


def test_timeout_of_the_second_of_three_runs(perun_repo, tmp_path, spawning):
    root, _ = perun_repo
    counter, pid_file = tmp_path / "count", tmp_path / "pid"
    script = f'echo run $n >&2; if [ $n = 2 ]; then sleep 60 & echo $! > {pid_file}; wait; fi'
    events = []
    with pytest.raises(CollectionError) as info:
        api_run.collect("time", ["sh"], [counted(script, counter)], [], {"repeat": 3, "timeout": 1.5}, cwd=root,
                        on_event=events.append)
    assert info.value.message.endswith(": timed out after 1.5 s (the run was killed)")
    assert info.value.stderr_tail == "run 2"
    assert [rep for rep, _ in per_run(events)] == [(1, 3, False), (2, 3, False)]
    assert counter.read_text().strip() == "2"
    assert process_gone(int(pid_file.read_text()))
    assert list((root / ".perun/jobs").iterdir()) == []


def test_non_zero_exit_of_a_middle_run_fails_the_job_with_its_own_stderr(perun_repo, tmp_path, spawning):
    root, _ = perun_repo
    counter = tmp_path / "count"
    script = 'echo run $n >&2; if [ $n = 3 ]; then echo broken >&2; exit 5; fi'
    events = []
    with pytest.raises(CollectionError) as info:
        api_run.collect("time", ["sh"], [counted(script, counter)], [], {"warmup": 1, "repeat": 3}, cwd=root,
                        on_event=events.append)
    assert info.value.exit_status == 5 and info.value.stderr_tail == "run 3\nbroken"
    assert info.value.message.endswith("the profiled command exited with status 5")
    assert [rep for rep, _ in per_run(events)] == [(1, 1, True), (1, 3, False), (2, 3, False)]
    assert counter.read_text().strip() == "3"  # the last run never started


def test_keep_failed_records_a_failing_middle_run(perun_repo, tmp_path, spawning):
    root, _ = perun_repo
    profile, _ = collect(root, "sh", counted("exit $(( n == 2 ? 7 : 0 ))", tmp_path / "count"), repeat=3,
                         keep_failed=True)
    statuses = {(r["order"], r.get("exit_status")) for r in profile["global"]["resources"]}
    assert statuses == {(1, None), (2, 7), (3, None)}


@pytest.mark.tools("setsid")
def test_cancel_in_the_middle_of_a_batch_leaves_no_process(perun_repo, tmp_path, spawning):
    root, _ = perun_repo
    counter, pids = tmp_path / "count", tmp_path / "pids"
    # only the helper finds descendants that left the run's process group (it is a child subreaper)
    escape = spawning == "helper"
    script = (f'if [ $n = 3 ]; then {f"setsid sleep 60 & echo $! >> {pids}; " if escape else ""}'
              f'sleep 60 & echo $! >> {pids}; echo $$ >> {pids}; echo started; wait; fi')
    cancel = threading.Event()
    seen = []

    def on_event(event):
        seen.append(event)
        if isinstance(event, ev.OutputLine) and event.text == "started":
            cancel.set()

    with pytest.raises(Interrupted):
        api_run.collect("time", ["sh"], [counted(script, counter)], [], {"repeat": 10}, cwd=root,
                        on_event=on_event, cancel=cancel)
    assert [rep for rep, _ in per_run(seen)] == [(i, 10, False) for i in (1, 2, 3)]
    started = [int(pid) for pid in pids.read_text().split()]
    try:
        assert len(started) == (3 if escape else 2)
        assert all(process_gone(pid) for pid in started)
        assert helpers_running(str(counter)) == []
    finally:
        kill_stragglers(started)
    assert list((root / ".perun/jobs").iterdir()) == []



@pytest.mark.parametrize("use_helper", [True, False])
def test_cancel_reaches_a_run_whose_program_floods_its_output_faster_than_its_lines_are_handled(tmp_path, use_helper):
    """Such a program keeps its pipe full for as long as it runs: reading "until the pipe is empty" never ends."""
    helper = spawn_helper() if use_helper else None
    require(not use_helper or helper is not None, NO_HELPER)
    marker = tmp_path / "flood-pid"
    script = f"echo $$ > {marker}; while :; do echo a line of a program that floods its output; done"
    cancel = threading.Event()
    lines = 0

    def on_line(stream, text):
        nonlocal lines
        lines += 1
        if lines == 2000:
            cancel.set()
        time.sleep(0.00005)  # a consumer slower than the program

    outcome: list[BaseException | None] = []

    def go():
        try:
            with RepeatedRuns(["sh", "-c", script], cwd=tmp_path, helper=helper, on_line=on_line,
                              cancelled=cancel) as runs:
                runs.run()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - checked below
            outcome.append(exc)

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(120)  # not a timing bound: without the fix the run never notices the cancel at all
    pid = int(marker.read_text())
    try:
        assert not worker.is_alive(), "the run did not stop after it was cancelled"
        assert len(outcome) == 1 and isinstance(outcome[0], Interrupted)
        assert process_gone(pid)
        assert helpers_running(str(marker)) == []
    finally:
        kill_stragglers([pid, *helpers_running(str(marker))])


def kill_stragglers(pids: list[int]) -> None:
    """Do not leave a failed test's processes behind."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def helpers_running(marker: str) -> list[int]:
    """Processes (spawn helpers, shells) whose command line mentions ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read() and not process_gone(int(entry), wait=1.0):
                        found.append(int(entry))
            except OSError:
                pass
    return found


@pytest.mark.tools("setsid")
def test_the_helper_kills_descendants_that_left_the_process_group(tmp_path, helper):
    pid_file = tmp_path / "pid"
    with RepeatedRuns(["sh", "-c", f"setsid sleep 60 & echo $! > {pid_file}"], cwd=tmp_path, helper=helper) as runs:
        assert runs.run().exit_status == 0
        pid = int(pid_file.read_text())
        try:
            # killed when the run ended, not only when the helper exits
            assert process_gone(pid)
        finally:
            kill_stragglers([pid])


def test_peak_memory_is_the_programs_own_in_every_run(perun_repo):
    require(spawn_helper() is not None, NO_HELPER)
    root, _ = perun_repo
    profile, _ = collect(root, "true", warmup=2, repeat=20)
    peaks = [r["amount"] for r in resources(profile, "max_rss")]
    assert len(peaks) == 20 and all(0 < peak < 8_000_000 for peak in peaks)


@pytest.mark.parametrize("use_helper", [True, False])
def test_output_lines_reach_the_callback_while_the_run_goes_on(tmp_path, use_helper):
    helper = spawn_helper() if use_helper else None
    require(not use_helper or helper is not None, NO_HELPER)
    go = tmp_path / "go"
    script = f'echo first; while [ ! -e {go} ]; do sleep 0.01; done; rm {go}; echo second'
    lines = []

    def on_line(stream, text):
        lines.append(text)
        if text == "first":
            go.touch()  # the run waits for this: it would time out if lines came only at its end

    with RepeatedRuns(["sh", "-c", script], cwd=tmp_path, helper=helper, timeout=60, on_line=on_line) as runs:
        for _ in range(2):
            outcome = runs.run()
            assert not outcome.timed_out and outcome.exit_status == 0 and outcome.stdout_tail == "first\nsecond"
    assert lines == ["first", "second"] * 2


def test_repeated_runs_measure_each_run_and_report_exec_errors(tmp_path, helper):
    script = tmp_path / "spin.py"
    script.write_text("import sys, time\nt = time.process_time()\nwhile time.process_time() - t < float(sys.argv[1]):\n"
                      "    pass\n")
    with RepeatedRuns([PY, str(script), "0.2"], cwd=tmp_path, helper=helper) as runs:
        outcomes = [runs.run() for _ in range(2)]
    for outcome in outcomes:
        assert outcome.user_seconds + outcome.sys_seconds > 0.15
        assert outcome.wall_ns / 1e9 >= (outcome.user_seconds + outcome.sys_seconds) * 0.9
    with RepeatedRuns(["./nope"], cwd=tmp_path, helper=helper) as runs, pytest.raises(FileNotFoundError):
        runs.run()
    denied = tmp_path / "denied"
    denied.write_text("#!/bin/sh\n")
    with RepeatedRuns([str(denied)], cwd=tmp_path, helper=helper) as runs, pytest.raises(PermissionError):
        runs.run()


def test_a_helper_killed_from_outside_is_an_error_and_its_run_is_killed(tmp_path, helper):
    pids = tmp_path / "pids"
    script = f"sleep 60 & echo $! > {pids}; echo $$ >> {pids}; kill -KILL $PPID; wait"
    with RepeatedRuns(["sh", "-c", script], cwd=tmp_path, helper=helper) as runs:
        with pytest.raises(OSError, match="the spawn helper failed"):
            runs.run()
    started = [int(pid) for pid in pids.read_text().split()]
    try:
        assert all(process_gone(pid) for pid in started)
    finally:
        kill_stragglers(started)


def test_sigterm_makes_the_helper_kill_its_run_and_exit(tmp_path, helper):
    pids = tmp_path / "pids"
    script = f"sleep 60 & echo $! > {pids}; echo $$ >> {pids}; kill -TERM $PPID; wait"
    with RepeatedRuns(["sh", "-c", script], cwd=tmp_path, helper=helper) as runs:
        # exiting with status 0 (rather than being killed by SIGTERM) is the helper's own way out
        with pytest.raises(OSError, match=r"the spawn helper failed \(it exited with status 0\)"):
            runs.run()
    started = [int(pid) for pid in pids.read_text().split()]
    try:
        assert all(process_gone(pid) for pid in started)
    finally:
        kill_stragglers(started)


def _static_c_library(tmp_path) -> bool:
    source = tmp_path / "probe.c"
    source.write_text("int main(void) { return 0; }\n")
    done = subprocess.run([shutil.which("cc") or "cc", "-static", "-o", str(tmp_path / "probe"), str(source)],
                          capture_output=True)
    return done.returncode == 0


def test_the_helper_is_linked_statically_so_its_own_peak_memory_is_small_and_steady(tmp_path, helper):
    """A run started by posix_spawn inherits the helper's peak RSS as the floor of its ru_maxrss."""
    require(_static_c_library(tmp_path), "a static C library (libc.a, Debian: libc6-dev) to link the helper statically")

    data = helper.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2  # 64-bit
    table, entry_size, entries = struct.unpack_from("<Q", data, 0x20)[0], *struct.unpack_from("<HH", data, 0x36)
    kinds = {struct.unpack_from("<I", data, table + i * entry_size)[0] for i in range(entries)}
    assert 3 not in kinds  # PT_INTERP: no dynamic loader, no shared C library mapped
    peaks = []
    for _ in range(3):
        with RepeatedRuns(["true"], cwd=tmp_path, helper=helper) as runs:
            peaks.append(runs.run().max_rss_bytes)
    assert max(peaks) < 4 << 20


def test_every_run_counts_its_involuntary_context_switches_and_the_load_is_recorded(perun_repo, spawning):
    root, _shas = perun_repo
    profile, _events = collect(root, PY, "-c pass", repeat=3)
    rows = profile["global"]["resources"]
    assert {r["order"] for r in rows} == {1, 2, 3}
    assert all(isinstance(r["involuntary_switches"], int) and r["involuntary_switches"] >= 0 for r in rows)
    for order in (1, 2, 3):  # one count per run, on each of its resources
        assert len({r["involuntary_switches"] for r in rows if r["order"] == order}) == 1
    machine = profile["header"]["machine"]
    assert all(isinstance(machine[k], float) and machine[k] >= 0 for k in ("load_before", "load_after"))


@pytest.mark.parametrize("use_helper", [True, False])
def test_a_new_timeout_holds_from_the_next_run_on(tmp_path, use_helper):
    """The fuzzer's analysis kills a run foreseen to pass its time cap sooner than its other runs: a timeout
    changed between runs of one helper must apply to the next run (the helper once kept its first one)."""
    helper = spawn_helper() if use_helper else None
    require(not use_helper or helper is not None, NO_HELPER)
    seconds = tmp_path / "seconds"
    seconds.write_text("0")
    with RepeatedRuns(["sh", "-c", f'sleep "$(cat {seconds})"'], cwd=tmp_path, helper=helper, timeout=600) as runs:
        assert not runs.run().timed_out  # the helper is started with the long timeout
        seconds.write_text("60")
        runs.timeout = 0.2
        short = runs.run()
        assert short.timed_out and short.wall_ns < 30e9
        seconds.write_text("0.3")
        runs.timeout = 600
        assert not runs.run().timed_out
