"""collect, run job, run matrix and postprocessby as a user runs them: subprocesses in real repositories."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from statistics import mean

import pytest

from conftest import ROOT, run_cli
from runhelpers import leftover_worktrees, make_c_project, needs_cc, run_env, tree_bytes, documented  # noqa: F401 - run_env: autouse

from perun_core import api
from perun_core.storage.repository import PerunRepository

WORKLOAD = "100000000"  # v1 loops this often (30-100 ms), v2 five times as often;
# long enough that tick-based CPU accounting (10 ms on some kernels) cannot swamp the ratio


def configure(root: Path, **values) -> None:
    for key, value in values.items():
        api.config_set(key.replace("__", "."), value, scope="local", cwd=root)


def written_paths(stdout: str, root: Path) -> list[Path]:
    return [root / line.split("wrote ", 1)[1] for line in stdout.splitlines() if line.startswith("  wrote ")]


@pytest.fixture
def c_project(tmp_path):
    root = tmp_path / "cproject"
    shas = make_c_project(root)
    api.init(root)
    configure(root, execute__pre_run=["make"], cmds=["./app"], workloads=[WORKLOAD],
              collectors=[{"name": "time", "params": {"warmup": 1, "repeat": 3}}], profiles__register_after_run=True)
    (root / "app.c").write_text((root / "app.c").read_text() + "/* an uncommitted edit */\n")
    (root / "notes.txt").write_text("an untracked file\n")
    return root, shas


def cpu_times(repo: PerunRepository, sha: str) -> list[list[float]]:
    # user + sys, not wall time: a loaded test machine must not change the ratio
    profiles = [repo.objects.read_profile(entry.checksum) for entry in repo.read_index(sha)]
    times = []
    for p in profiles:
        runs: dict[int, float] = {}
        for r in p.global_region.resources:
            if r["subtype"] in ("user", "sys"):
                runs[r["order"]] = runs.get(r["order"], 0.0) + r["amount"]
        times.append([runs[k] for k in sorted(runs)])
    return times


@needs_cc
def test_matrix_for_two_commits_of_a_c_program(c_project, run_env):
    root, (v1, v2) = c_project
    before = tree_bytes(root)
    result = run_cli("run", "matrix", "-m", "HEAD~1", "-m", "HEAD", cwd=root)
    assert result.returncode == 0, result.stderr
    assert tree_bytes(root) == before
    assert leftover_worktrees(run_env) == [] and list((root / ".perun/jobs").iterdir()) == []
    lines = result.stdout.splitlines()
    assert lines[0] == "Running 1 job for each of 2 commits in temporary worktrees"
    assert [line for line in lines if line.startswith("$ ")] == ["$ make", "$ make"]
    assert sum("registered time-app-" in line for line in lines) == 2
    with PerunRepository(root) as repo:
        first, second = cpu_times(repo, v1), cpu_times(repo, v2)
        assert len(first) == len(second) == 1 and len(first[0]) == len(second[0]) == 3
        ratio = mean(second[0]) / mean(first[0])
        # 5x the work; the bounds leave room for frequency scaling on a shared CI machine
        assert 2.5 < ratio < 10, (first, second)
        stored = repo.objects.read_profile(repo.read_index(v1)[0].checksum)
        assert (stored.cmd, stored.workload, stored.collector) == ("./app", WORKLOAD, "time")
    # --crawl-parents reaches the same two commits from HEAD
    crawled = run_cli("run", "matrix", "--crawl-parents", cwd=root)
    assert crawled.returncode == 0, crawled.stderr
    with PerunRepository(root) as repo:
        assert [len(repo.read_index(sha)) for sha in (v1, v2)] == [2, 2]
    assert tree_bytes(root) == before and leftover_worktrees(run_env) == []


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@needs_cc
def test_an_interrupted_run_leaves_everything_as_it_was(c_project, run_env, tmp_path):
    root, _ = c_project
    before = tree_bytes(root)
    # The profiled shell announces its pid through a FIFO: the test waits for that event, however long a
    # busy machine takes to build and start it, instead of polling a file against a deadline.
    fifo = tmp_path / "child.pid"
    os.mkfifo(fifo)
    process = subprocess.Popen(
        [sys.executable, "-m", "perun_core.cli.main", "run", "job", "-m", "HEAD~1", "-c", "time", "-b", "sh",
         "-a", f"-c 'echo $$ > {fifo}; exec sleep 100000'"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        # as from a terminal: a suite started in the background of a script (``make test &``) inherits SIGINT
        # ignored, and a process that finds it ignored keeps ignoring it, as POSIX background jobs do
        preexec_fn=_interruptible,
    )
    announced = threading.Event()
    child_pid: list[int] = []

    def listen() -> None:
        with open(fifo) as pipe:  # blocks until the shell opens the FIFO to write
            child_pid.append(int(pipe.read()))
        announced.set()

    threading.Thread(target=listen, daemon=True).start()
    while not announced.wait(0.1):
        assert process.poll() is None, process.communicate()[1]  # perun ended before the program started
    process.send_signal(signal.SIGINT)
    # The program would sleep for a day: this returns only because the interrupt stopped it (the timeout is
    # a safety net against a hang, not a measurement).
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 130 and stderr == "error: interrupted\n"
    child = child_pid[0]
    assert not Path(f"/proc/{child}").exists() or Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"
    assert tree_bytes(root) == before
    assert leftover_worktrees(run_env) == [] and list((root / ".perun/jobs").iterdir()) == []


def test_collect_time_records_ten_runs_of_true(perun_repo):
    root, shas = perun_repo
    result = run_cli("collect", "time", "-w", "2", "-r", "10", "true", cwd=root)
    assert result.returncode == 0, result.stderr
    [path] = written_paths(result.stdout, root)
    profile = documented(path)
    assert profile["origin"] == shas[-1]
    assert profile["collector_info"]["params"]["warmup"] == 2 and profile["collector_info"]["params"]["repeat"] == 10
    real = [r for r in profile["global"]["resources"] if r["subtype"] == "real"]
    assert [r["order"] for r in real] == list(range(1, 11)) and all(r["uid"] == "true" for r in real)
    # group options, a parameter file and the command given with -c/-a/-w work too
    (root / "params.yml").write_text("repeat: 2\n")
    other = run_cli("collect", "-c", "sh", "-a", "-c 'exit 0'", "-w", "a", "-w", "b", "-p", "params.yml", "time", cwd=root)
    assert other.returncode == 0, other.stderr
    paths = written_paths(other.stdout, root)
    assert [documented(p)["header"]["workload"] for p in paths] == ["a", "b"]
    assert {len(documented(p)["global"]["resources"]) for p in paths} == {8}


def test_unit_commands_are_generated_from_their_declarations(perun_repo):
    root, _ = perun_repo
    helped = run_cli("collect", "time", "--help", cwd=root)
    assert helped.returncode == 0
    for option in ("-w, --warm-up-repetition N", "-r, --repeat N", "-t, --timeout SECONDS", "--keep-failed",
                   "-m, --minor-version REV", "[COMMAND [ARGS]...]"):
        assert option in helped.stdout
    assert re.search(r"time +Wall, user and system time", run_cli("collect", "--help", cwd=root).stdout)
    assert re.search(r"normalizer +Scale the amounts", run_cli("postprocessby", "--help", cwd=root).stdout)


def test_postprocessby_writes_a_new_pending_profile(perun_repo):
    root, shas = perun_repo
    assert run_cli("collect", "-ot", "raw", "time", "-r", "2", "true", cwd=root).returncode == 0
    result = run_cli("postprocessby", "-ot", "%postprocessors%", "raw.perf", "normalizer", cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Postprocessed raw.perf by normalizer into normalizer.perf"
    profile = documented((root / ".perun/jobs/normalizer.perf"))
    assert profile["origin"] == shas[-1] and profile["postprocessors"] == [{"name": "normalizer", "params": {}}]
    assert max(r["amount"] for r in profile["global"]["resources"] if r["type"] == "time") == 1.0


def _matrix(root: Path) -> None:
    configure(root, cmds=["true"], collectors=[{"name": "time"}])


ERROR_CASES = {
    "missing command": (None, ["collect", "-m", "HEAD", "time", "./no-such-program"],
                        "command not found: ./no-such-program"),
    "command exits 1": (None, ["collect", "-m", "HEAD", "time", "sh", "-c", "echo oops >&2; exit 1"],
                        "the profiled command exited with status 1"),
    "timeout": (None, ["collect", "-m", "HEAD", "time", "-t", "0.3", "sleep", "10"], "timed out after 0.3 s"),
    "invalid params yaml": (None, ["collect", "-p", "repeat: [1", "time", "true"], "invalid YAML"),
    "invalid param value": (None, ["collect", "time", "-r", "0", "true"], "time: parameter 'repeat' = 0"),
    "unknown collector": (None, ["collect", "nosuch", "true"], "unknown collector 'nosuch'; known: "),
    "unknown postprocessor": (None, ["run", "job", "-c", "time", "-b", "true", "-p", "nosuch"],
                              "unknown postprocessor 'nosuch'; known: clusterizer, filter, kernel_regression"),
    "unknown postprocessby unit": (None, ["postprocessby", "0@p", "nosuch"], "unknown postprocessor 'nosuch'"),
    "failing pre_run": (lambda root: (_matrix(root), configure(root, execute__pre_run=["sh -c 'echo making; exit 2'"])),
                        ["run", "matrix", "-m", "HEAD"], "pre_run command 'sh -c 'echo making; exit 2'' exited with status 2"),
    "matrix without cmds": (lambda root: configure(root, collectors=[{"name": "time"}]), ["run", "matrix"],
                            "key 'cmds': the job matrix lists no commands"),
    "bad revision": (_matrix, ["run", "matrix", "-m", "HEAD", "-m", "no-such-rev"], "revision 'no-such-rev'"),
    "dirty tree": (lambda root: (root / "a.txt").write_text("edited\n"), ["collect", "time", "true"],
                   "uncommitted changes"),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_failures_give_one_line_and_leave_nothing_behind(perun_repo, run_env, case):
    root, _ = perun_repo
    prepare, args, needle = ERROR_CASES[case]
    if prepare:
        prepare(root)
    before = tree_bytes(root)
    result = run_cli(*args, cwd=root)
    assert result.returncode == 1, result.stderr
    first, *rest = result.stderr.splitlines()
    assert first.startswith("error: ") and needle in first, result.stderr
    assert all(line.startswith(("hint:", "  ")) for line in rest), result.stderr
    assert "Traceback" not in result.stderr
    if case == "command exits 1":
        assert rest == ["hint: last lines of its standard error:", "  oops"]
    if case == "failing pre_run":
        assert rest == ["hint: its last output:", "  making"]
    assert list((root / ".perun/jobs").iterdir()) == [] and leftover_worktrees(run_env) == []
    assert tree_bytes(root) == before


def test_help_stays_light():
    code = ("import sys\nsys.argv=['perun-core','--help']\nfrom perun_core.cli.main import cli\n"
            "try:\n    cli.main(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "print('\\n'.join(sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                            env={**os.environ}).stdout.split()
    assert "perun_core.cli.run_cmds" in loaded
    assert not {m for m in loaded if m.split(".")[0] in ("rich", "dulwich", "yaml", "numpy", "scipy")}
    assert not {m for m in loaded if m.startswith(("perun_core.units", "perun_core.runner", "perun_core.api"))}
