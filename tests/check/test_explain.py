"""check --explain: the functions responsible for a time change, from call-level profiles of both commits."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import run_cli
from gitrepo import make_repo
from runhelpers import FIVE_FUNCTIONS_C, FIVE_FUNCTIONS_MAKEFILE, leftover_worktrees, needs_cc, run_env  # noqa: F401
from tools import need_tools, required

from perun_core import api

# A Python program whose `lookup` switches from a dict lookup to a scan of a list in v2.
PY_PROGRAM = '''
import sys

def build(n):
    return {i: i * 2 for i in range(n)}

def lookup(table, keys):
    total = 0
    for k in keys:
        total += table[k]
    return total

def checksum(values):
    return sum(v % 7 for v in values)

def main():
    n = int(sys.argv[1])
    table = build(n)
    keys = list(range(0, n, 3))
    print(lookup(table, keys), checksum(keys))

main()
'''
PY_SLOW = PY_PROGRAM.replace("        total += table[k]", "        pairs = list(table.items())\n"
                             "        total += next(v for key, v in pairs if key == k)")
#: the size the Python projects run at: the list scan's cost grows with its square (0.06 s of CPU at 2000,
#: 0.21 s at 3000, over 0.015 s of start-up), and every time, cProfile and pytrace run pays it
PY_WORKLOAD = "2000"

# the C program with five functions; v2 makes `middle` three times slower
C_PROGRAM = FIVE_FUNCTIONS_C
MAKEFILE = FIVE_FUNCTIONS_MAKEFILE


def _configure(root, cmd, workload, pre_run=None):
    api.init(root)
    settings = {"cmds": [cmd], "workloads": [workload],
                "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 5}}]}
    if pre_run:
        settings["execute.pre_run"] = pre_run
    for key, value in settings.items():
        api.config_set(key, value, scope="local", cwd=root)


def _python_project(root):
    shas = make_repo(root, [{"files": {"prog.py": PY_PROGRAM}, "message": "v1: dict lookup"},
                            {"files": {"prog.py": PY_SLOW}, "message": "v2: list scan"}])
    _configure(root, "python3 prog.py", PY_WORKLOAD)
    return shas


def test_a_python_function_switched_to_a_list_scan_is_named_first(tmp_path, run_env):
    root = tmp_path / "pyproject"
    _python_project(root)
    result = run_cli("check", "--compute-missing", "head", "--explain", "--format", "json",
                     "--explain-dir", str(tmp_path / "why"), cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    records = [r for r in json.loads(result.stdout) if r["result"] == "Degradation"]
    assert records, result.stdout
    for record in records:
        first = record["explained_by"][0]
        assert first["function"] == "lookup", record["explained_by"]
        assert first["file"] == "prog.py" and first["line"] == 7
        assert first["share"] > 0.5 and first["target"] > first["baseline"]
        assert record["explanation"]["collector"] == "pytrace"
    written = sorted(p.name for p in (tmp_path / "why").iterdir())
    assert any(name.endswith(".html") for name in written) and any(name.endswith(".txt") for name in written)
    assert "Explaining" in result.stderr and f"  pytrace: python3 prog.py {PY_WORKLOAD} at " in result.stderr
    assert leftover_worktrees(run_env) == []
    # the call-level profiles are kept with the explanation: nothing pending, nothing a check pairs
    assert not [p.name for p in (root / ".perun" / "jobs").iterdir() if "pytrace" in p.name]
    status = run_cli("status", cwd=root)
    assert "(no pending profiles)" in status.stdout and "pending profiles of other commits" not in status.stdout
    assert "pytrace" not in run_cli("log", cwd=root).stdout
    # the tree names it too, with its share, from the kept profiles of the first explanation
    # a wide terminal: a line per result
    tree = run_cli("check", "head", "--explain", cwd=root, env={"NO_COLOR": "1", "COLUMNS": "400"})
    assert tree.returncode == 3
    assert "explained by (pytrace" in tree.stdout
    assert "1. lookup (prog.py:7)" in tree.stdout and "% of the change" in tree.stdout
    assert "reused " in tree.stdout and "wrote " not in tree.stdout.replace("wrote " + str(tmp_path / "why"), "")
    # a check without --explain compares the time profiles only: the kept profiles are no pairs of its
    plain = run_cli("check", "head", "--format", "json", cwd=root)
    assert plain.returncode == 3
    compared = [{k: v for k, v in r.items() if k not in ("explanation", "explained_by")} for r in json.loads(plain.stdout)]
    assert compared and "pytrace" not in json.dumps(compared)
    # fsck keeps them while the stored explanation names them
    assert run_cli("fsck", cwd=root).returncode == 0


def test_two_slower_functions_are_both_named_before_any_other(tmp_path, run_env):
    root = tmp_path / "two"
    both = PY_SLOW.replace("    return sum(v % 7 for v in values)",
                           "    return sum(len([w for w in values if w == v]) % 7 for v in values)")
    make_repo(root, [{"files": {"prog.py": PY_PROGRAM}, "message": "v1"},
                     {"files": {"prog.py": both}, "message": "v2: two list scans"}])
    _configure(root, "python3 prog.py", PY_WORKLOAD)
    result = run_cli("check", "--compute-missing", "head", "--explain", "--format", "json", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    record = next(r for r in json.loads(result.stdout) if r["result"] == "Degradation")
    named = [f["function"] for f in record["explained_by"]]
    assert set(named[:2]) == {"lookup", "checksum"}, record["explained_by"]
    assert sum(f["share"] for f in record["explained_by"][:2]) > 0.7


def test_markdown_and_junit_carry_the_explanation(tmp_path, run_env):
    root = tmp_path / "pyproject"
    _python_project(root)
    md = run_cli("check", "--compute-missing", "head", "--explain", "--register", "--format", "markdown", cwd=root)
    assert md.returncode == 3, md.stderr
    assert "explained by (pytrace" in md.stdout and "| 1 | `lookup` | `prog.py:7` |" in md.stdout
    # --register registered the call-level profiles, so the next explanation reuses them
    junit = run_cli("check", "head", "--explain", "--format", "junit", cwd=root)
    assert junit.returncode == 3
    assert "explained by (pytrace" in junit.stdout and "lookup (prog.py:7)" in junit.stdout
    assert not [p for p in (root / ".perun" / "jobs").iterdir() if "pytrace" in p.name]


def test_time_profile_files_outside_a_repository_say_why_they_are_not_explained(tmp_path):
    from perun_core.check.explain import explain_report
    from perun_core.check.pairing import ProfileRef
    from perun_core.check.report import CheckReport, PairReport, VersionReport
    from perun_core.check.results import Finding, PerformanceChange

    refs = [ProfileRef(str(tmp_path / name), "file", None, None, "time", "time ./app") for name in ("a.perf", "b.perf")]
    finding = Finding(PerformanceChange.DEGRADATION, "time", "./app [real]", 1.0, 2.0)
    report = CheckReport("profiles", (VersionReport(None, None, (PairReport(*refs, ("sart",), (finding,)),)),))
    explained = explain_report(None, report)
    explanation = next(explained.findings())[2].details["explanation"]
    assert not explanation.functions
    assert explanation.message.startswith("these profiles are not registered at two commits")


def test_a_program_that_does_not_build_is_not_explained_in_one_line(tmp_path, run_env):
    root = tmp_path / "broken"
    make_repo(root, [{"files": {"prog.py": PY_PROGRAM, "build.sh": ("exec", "#!/bin/sh\nexit 0\n")}},
                     {"files": {"prog.py": PY_SLOW, "build.sh": ("exec", "#!/bin/sh\necho broken >&2\nexit 1\n")}}])
    _configure(root, "python3 prog.py", PY_WORKLOAD)
    collected = run_cli("check", "--compute-missing", "head", cwd=root)
    assert collected.returncode == 3, collected.stderr
    api.config_set("execute.pre_run", ["./build.sh"], scope="local", cwd=root)
    result = run_cli("check", "head", "--explain", "--format", "json", cwd=root)
    assert result.returncode == 3, result.stderr
    record = next(r for r in json.loads(result.stdout) if r["result"] == "Degradation")
    assert record["explained_by"] == []
    message = record["explanation"]["message"]
    assert message.startswith("the program does not build at ") and "./build.sh" in message, message
    assert leftover_worktrees(run_env) == []


def test_without_a_native_collector_the_message_says_what_to_install(monkeypatch, tmp_path):
    from perun_core.check import explain

    monkeypatch.setattr(explain.shutil, "which", lambda name: None)
    message = explain.choose_collector(["./app", "100"], tmp_path)
    assert isinstance(message, str)
    assert "install valgrind" in message and "perf" in message


native = pytest.mark.tools("valgrind")


@needs_cc
@native
def test_a_c_function_made_three_times_slower_is_named_first_with_callgrind(tmp_path, run_env):
    root = tmp_path / "cproject"
    files = {"Makefile": MAKEFILE, ".gitignore": "app\n"}
    v1, v2 = make_repo(root, [{"files": {**files, "app.c": C_PROGRAM.replace("REPEAT", "1")}, "message": "v1"},
                             {"files": {**files, "app.c": C_PROGRAM.replace("REPEAT", "3")}, "message": "v2: middle 3x"}])
    _configure(root, "./app", "3000000", pre_run=["make"])
    result = run_cli("check", "--compute-missing", "head", "--explain", "--format", "json", "-v", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    # callgrind counts exactly: one round a side, baseline first
    rounds = [line.strip() for line in result.stderr.splitlines() if line.strip().startswith("round ")]
    assert rounds == [f"round 1/1: {v1[:7]}", f"round 1/1: {v2[:7]}"], result.stderr
    records = [r for r in json.loads(result.stdout) if r["result"] == "Degradation"]
    assert records, result.stdout
    first = records[0]["explained_by"][0]
    assert records[0]["explanation"]["collector"] == "callgrind"
    assert first["function"] == "middle", records[0]["explained_by"]
    assert first["share"] > 0.9
    assert 2.5 < first["target"] / first["baseline"] < 3.5
    # the source line of the definition from callgrind's line positions (built with -g), relative to the repository
    assert (first["file"], first["line"]) == ("app.c", 7), first
    assert leftover_worktrees(run_env) == []
    # perf on a run this short: explained, or one line saying it is too short to sample and what to use
    from perun_core.collect.perf import perf_permission

    if not shutil.which("perf") and not required():
        return  # the perf half needs perf; CI (PERUN_REQUIRE_NATIVE_TOOLS=1) always runs it
    need_tools("perf")
    if perf_permission()[0]:  # else the kernel forbids sampling here (tests/tools.py lists it)
        perf = run_cli("check", "head", "--explain-with", "perf", "--format", "json", cwd=root)
        assert perf.returncode == 3, perf.stderr
        record = next(r for r in json.loads(perf.stdout) if r["result"] == "Degradation")
        message = record["explanation"]["message"]
        if message:
            assert message.startswith("the program is too short to sample (") and "callgrind" in message, message
        else:
            top = record["explained_by"][0]
            assert top["function"] == "middle" and top["p_value"] is not None, record["explained_by"]
            assert (top["file"], top["line"]) == ("app.c", 7), top  # nm + addr2line on the perf profile's object


def test_an_unknown_explaining_collector_is_a_command_line_error(tmp_path):
    result = run_cli("check", "head", "--explain-with", "gprof", cwd=tmp_path)
    assert result.returncode == 2 and "--explain-with" in result.stderr


def test_sample_counts_get_a_p_value_that_separates_noise_from_change():
    from perun_core.check.explain import sample_p_value

    assert sample_p_value(28, 145) < 1e-6
    assert sample_p_value(22, 24) > 0.5
    assert sample_p_value(0, 0) == 1.0
