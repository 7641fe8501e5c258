"""Importers on files the real tools wrote (tests/fixtures/import/README.md says how), and on broken ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from perun_core import api
from perun_core.errors import ImportFailed, InvalidParameter, UnknownUnit
from perun_core.importers import importers
from perun_core.params import Param

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"


def rows(profile, subtype=None):
    table = profile.global_region.resources
    return [r for r in table if subtype is None or r.get("subtype") == subtype]


def test_every_kind_is_registered_with_params_declared():
    assert importers.names() == ["asv", "callgrind", "folded", "google-benchmark", "hyperfine", "memray-stats",
                                 "perf-record", "perf-script", "py-spy", "pyperf", "pytest-benchmark", "speedscope"]
    for name in importers.names():
        unit = importers.get(name)
        assert unit.summary and all(isinstance(p, Param) for p in unit.params)
    with pytest.raises(UnknownUnit):
        api.read_imported("nope", [FIXTURES / "perf.script"])


# -- perf --------------------------------------------------------------------------------------

def _perf_headers(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.rstrip().endswith("task-clock:"))


def test_perf_script_counts_every_sample_once():
    profile = api.read_imported("perf-script", [FIXTURES / "perf.script"])
    assert profile.type == "time" and profile.units == {"time": "samples"}
    samples = rows(profile, "samples")
    assert sum(r["amount"] for r in samples) == _perf_headers(FIXTURES / "perf.script") == 92
    assert sum(r["period"] for r in samples) == 92 * 1001001
    assert profile.header["event"] == "task-clock"
    assert profile.header["tool"]["commands"] == ["busy"]
    # addresses and +0x offsets do not split a stack: leaf under main has one resource
    leaf = [r for r in samples if [f["function"] for f in r["trace"]] == ["leaf", "main", "__libc_start_call_main"]]
    assert len(leaf) == 1 and leaf[0]["amount"] == 54
    assert leaf[0]["trace"][0] == {"function": "leaf", "object": "/tmp/idfx/busy"}
    functions = {r["uid"]: r for r in rows(profile, "function")}
    assert functions["__libc_start_call_main"]["amount"] == 92 and functions["__libc_start_call_main"]["exclusive"] == 0
    assert functions["other"]["exclusive"] == 35 and functions["other"]["amount"] == 36
    assert sum(r["exclusive"] for r in functions.values()) == 92


def test_imported_stacks_work_in_the_flame_graph_view():
    from perun_core.views import get_view

    flame = get_view("flamegraph")
    profile = api.read_imported("perf-script", [FIXTURES / "perf.script"])
    folded = flame.render(flame.run(profile), fmt="folded")
    assert "__libc_start_call_main();main();leaf() 54" in folded.splitlines()


@pytest.mark.tools("perf")
def test_perf_record_reads_perf_data_through_perf_script():
    profile = api.read_imported("perf-record", [FIXTURES / "perf.data"])
    samples = rows(profile, "samples")
    assert sum(r["amount"] for r in samples) == 92
    assert all(r["trace"] for r in samples)
    assert profile.header["tool"]["format"] == "perf record"


# -- callgrind ---------------------------------------------------------------------------------

def test_callgrind_functions_and_edges():
    profile = api.read_imported("callgrind", [FIXTURES / "callgrind.out"])
    assert profile.units == {"instructions": "Ir"}
    functions = {r["uid"]: r for r in rows(profile, "function")}
    other = functions["other"]
    # other(100000) runs 20 times: 19 instructions per iteration in this build
    assert (other["exclusive"], other["amount"], other["calls"]) == (38000100, 38000100, 20)
    assert functions["main"]["amount"] >= functions["middle"]["amount"] + other["amount"]
    edges = {(r["caller"], r["uid"]): r for r in rows(profile, "call")}
    assert edges[("main", "other")]["calls"] == 20
    assert edges[("middle", "leaf")]["calls"] == 40
    tool = profile.header["tool"]["files"][0]
    assert tool["totals"] == "86132370" and tool["events"] == "Ir" and tool["cmd"] == "./busy 20"


# -- benchmark harnesses -----------------------------------------------------------------------

def test_pytest_benchmark_every_round_in_seconds():
    data = json.loads((FIXTURES / "pytest-benchmark.json").read_text())
    profile = api.read_imported("pytest-benchmark", [FIXTURES / "pytest-benchmark.json"])
    assert profile.units == {"time": "s"}
    for bench in data["benchmarks"]:
        mine = [r["amount"] for r in rows(profile) if r["uid"] == bench["fullname"]]
        assert mine == bench["stats"]["data"]
    assert len(rows(profile)) == 27 + 20
    assert profile.header["tool"]["version"] == "5.3.1"
    assert profile.header["tool"]["machine_info"] == data["machine_info"]
    by_name = api.read_imported("pytest-benchmark", [FIXTURES / "pytest-benchmark.json"], {"uid": "name"})
    assert {r["uid"] for r in rows(by_name)} == {"test_fib10", "test_sorted"}
    with pytest.raises(InvalidParameter):
        api.read_imported("pytest-benchmark", [FIXTURES / "pytest-benchmark.json"], {"uid": "nickname"})


def test_pytest_benchmark_without_saved_data_gives_the_mean(tmp_path):
    data = json.loads((FIXTURES / "pytest-benchmark.json").read_text())
    for bench in data["benchmarks"]:
        del bench["stats"]["data"]
    path = tmp_path / "nodata.json"
    path.write_text(json.dumps(data))
    profile = api.read_imported("pytest-benchmark", [path])
    assert [(r["subtype"], r["amount"], r["rounds"]) for r in rows(profile)] == \
        [("mean", b["stats"]["mean"], b["stats"]["rounds"]) for b in data["benchmarks"]]


def test_hyperfine_runs_of_every_command():
    data = json.loads((FIXTURES / "hyperfine.json").read_text())
    profile = api.read_imported("hyperfine", [FIXTURES / "hyperfine.json"])
    assert profile.units == {"time": "s"}
    for result in data["results"]:
        wall = [r for r in rows(profile, "wall") if r["uid"] == result["command"]]
        assert [r["amount"] for r in wall] == result["times"] and len(wall) == 5
        assert [r["exit_code"] for r in wall] == result["exit_codes"]
        user = [r["amount"] for r in rows(profile, "user") if r["uid"] == result["command"]]
        assert user == [result["user"]]


def test_google_benchmark_repetitions_real_and_cpu_time_in_one_unit():
    data = json.loads((FIXTURES / "google-benchmark.json").read_text())
    profile = api.read_imported("google-benchmark", [FIXTURES / "google-benchmark.json"])
    assert profile.units == {"time": "ns"}  # the finest unit of the file
    runs = [b for b in data["benchmarks"] if b["run_type"] == "iteration"]
    assert len(rows(profile)) == 2 * len(runs) == 18
    sort64 = [r for r in rows(profile, "real_time") if r["uid"] == "BM_Sort/64"]
    assert [r["amount"] for r in sort64] == [b["real_time"] for b in runs if b["run_name"] == "BM_Sort/64"]
    assert [r["repetition"] for r in sort64] == [0, 1, 2]
    summed = [r for r in rows(profile, "cpu_time") if r["uid"] == "BM_Sum"]
    raw = [b["cpu_time"] for b in runs if b["run_name"] == "BM_Sum"]
    assert [r["amount"] for r in summed] == pytest.approx([1000 * v for v in raw])  # us -> ns
    assert all(r["time_unit"] == "us" for r in summed)
    assert profile.header["tool"]["executable"] == "./gbench"
    with_aggregates = api.read_imported("google-benchmark", [FIXTURES / "google-benchmark.json"],
                                        {"aggregates": True})
    assert len(rows(with_aggregates)) == 2 * len(data["benchmarks"])


# -- folded and speedscope ---------------------------------------------------------------------

def test_folded_adds_up_repeated_stacks_and_reads_perun_frames(tmp_path):
    path = tmp_path / "a.folded"
    path.write_text("main;work;leaf 10\nmain;work 5\nmain;work;leaf 7\nmain()~app.c~3;f 2.5\n")
    profile = api.read_imported("folded", [path], {"unit": "ms"})
    assert profile.units == {"time": "ms"}
    samples = {tuple(f["function"] for f in r["trace"]): r["amount"] for r in rows(profile, "samples")}
    assert samples == {("leaf", "work", "main"): 17.0, ("work", "main"): 5.0, ("f", "main"): 2.5}
    frame = next(r for r in rows(profile, "samples") if r["uid"] == "f")["trace"][1]
    assert frame == {"function": "main", "source": "app.c", "line": 3}
    functions = {r["uid"]: (r["amount"], r["exclusive"]) for r in rows(profile, "function")}
    assert functions["work"] == (22.0, 5.0) and functions["leaf"] == (17.0, 17.0)


def test_folded_fixture_round_trips_the_perf_profile():
    folded = api.read_imported("folded", [FIXTURES / "stacks.folded"])
    perf = api.read_imported("perf-script", [FIXTURES / "perf.script"])
    assert sorted((r["uid"], r["amount"], r["exclusive"]) for r in rows(folded, "function")) == \
        sorted((r["uid"], r["amount"], r["exclusive"]) for r in rows(perf, "function"))


def test_speedscope_sampled_file():
    profile = api.read_imported("speedscope", [FIXTURES / "speedscope.json"])
    assert sum(r["amount"] for r in rows(profile, "samples")) == 92
    assert profile.units == {"time": "samples"}


def test_speedscope_evented_profile_in_nanoseconds(tmp_path):
    doc = {"shared": {"frames": [{"name": "main", "file": "m.c", "line": 1}, {"name": "work"}]},
           "profiles": [{"type": "evented", "name": "t", "unit": "nanoseconds", "startValue": 0, "endValue": 30,
                         "events": [{"type": "O", "at": 0, "frame": 0}, {"type": "O", "at": 10, "frame": 1},
                                    {"type": "C", "at": 25, "frame": 1}, {"type": "C", "at": 30, "frame": 0}]}]}
    path = tmp_path / "ev.speedscope.json"
    path.write_text(json.dumps(doc))
    profile = api.read_imported("speedscope", [path])
    assert profile.units == {"time": "ns"}
    samples = {tuple(f["function"] for f in r["trace"]): r["amount"] for r in rows(profile, "samples")}
    assert samples == {("main",): 15, ("work", "main"): 15}
    doc["profiles"][0]["events"].pop()
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportFailed, match=r"key 'profiles\[0\].events': ends with 1 frames still open"):
        api.read_imported("speedscope", [path])


# -- broken files ------------------------------------------------------------------------------

def _cut(tmp_path: Path, name: str, keep: int) -> Path:
    data = (FIXTURES / name).read_bytes()
    path = tmp_path / name
    path.write_bytes(data[:keep])
    return path


def test_truncated_perf_script_names_the_line(tmp_path):
    text = (FIXTURES / "perf.script").read_text()
    cut = text.index("leaf+0x", 2000) + 4  # inside a frame line
    path = tmp_path / "perf.script"
    path.write_text(text[:cut])
    line = text[:cut].count("\n") + 1
    with pytest.raises(ImportFailed) as caught:
        api.read_imported("perf-script", [path])
    assert str(caught.value).startswith(f"{path}:{line}: expected a stack frame")
    assert "(truncated?)" in str(caught.value)


def test_not_a_perf_script(tmp_path):
    with pytest.raises(ImportFailed, match=r"hyperfine.json:1: expected a sample line"):
        api.read_imported("perf-script", [FIXTURES / "hyperfine.json"])
    with pytest.raises(ImportFailed, match="is binary"):
        api.read_imported("perf-script", [FIXTURES / "perf.data"])


def test_truncated_callgrind_file(tmp_path):
    path = _cut(tmp_path, "callgrind.out", 40000)
    with pytest.raises(ImportFailed, match=r"callgrind.out:\d+: ends without a 'totals:' line \(truncated\?\)"):
        api.read_imported("callgrind", [path])
    with pytest.raises(ImportFailed, match=r"stacks.folded:1: expected a callgrind.out file"):
        api.read_imported("callgrind", [FIXTURES / "stacks.folded"])


def test_truncated_and_wrong_json_files(tmp_path):
    path = _cut(tmp_path, "hyperfine.json", 500)
    with pytest.raises(ImportFailed, match=r"hyperfine.json:\d+: ends early \(truncated\?\)"):
        api.read_imported("hyperfine", [path])
    data = json.loads((FIXTURES / "hyperfine.json").read_text())
    data["results"][1]["times"][2] = "fast"
    path.write_text(json.dumps(data))
    with pytest.raises(ImportFailed) as caught:
        api.read_imported("hyperfine", [path])
    assert str(caught.value) == f"{path}: key 'results[1].times[2]': expected a number, got a string"
    with pytest.raises(ImportFailed, match=r"key 'benchmarks': is missing"):
        api.read_imported("google-benchmark", [FIXTURES / "hyperfine.json"])
    with pytest.raises(ImportFailed, match=r"key 'benchmarks\[0\].fullname': is missing"):
        api.read_imported("pytest-benchmark", [FIXTURES / "google-benchmark.json"])


def test_broken_folded_lines(tmp_path):
    path = tmp_path / "x.folded"
    path.write_text("a;b 1\na;c two\n")
    with pytest.raises(ImportFailed, match=r"x.folded:2: expected a number after the stack, got 'two'"):
        api.read_imported("folded", [path])
    path.write_text("a;b 1\na;c 2\na;d")
    with pytest.raises(ImportFailed, match=r"x.folded:3: expected 'frame;frame;... VALUE', got 'a;d' \(truncated\?\)"):
        api.read_imported("folded", [path])
    with pytest.raises(ImportFailed, match="does not exist"):
        api.read_imported("folded", [tmp_path / "missing.folded"])


# -- the command line and the store ------------------------------------------------------------

def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "perun_core.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def perun_repo(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERUN_CONFIG_DIR", str(tmp_path / "home" / "perun"))
    root = tmp_path / "repo"
    root.mkdir()
    for args in (["init", "-q"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty",
                                  "-m", "one"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    api.init(root)
    return root


def test_import_stores_a_pending_profile_with_the_commit_as_origin(perun_repo):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=perun_repo, capture_output=True, text=True).stdout.strip()
    done = api.import_profiles("hyperfine", [FIXTURES / "hyperfine.json"], workload="5 and 10", cwd=perun_repo)
    assert done.origin == head and done.path is not None and done.path.exists() and not done.registered
    loaded = api.load_profile(str(done.path), cwd=perun_repo).profile
    assert loaded.origin == head and loaded.workload == "5 and 10" and loaded.cmd == "hyperfine"
    assert loaded.collector_info["name"] == "hyperfine"
    registered = api.import_profiles("callgrind", [FIXTURES / "callgrind.out"], register=True, cwd=perun_repo)
    assert registered.registered and registered.checksum and registered.path is None
    infos = api.status(cwd=perun_repo)
    assert infos is not None


def test_cli_import_and_its_one_line_errors(perun_repo, tmp_path):
    done = _cli("import", "perf-script", str(FIXTURES / "perf.script"), "-m", "HEAD", "--cmd", "./busy 300",
                cwd=perun_repo)
    assert done.returncode == 0, done.stderr
    assert "time profile of 14 resources (time: samples)" in done.stdout
    jobs = perun_repo / ".perun" / "jobs"
    before = sorted(jobs.iterdir())
    broken = tmp_path / "broken.json"
    broken.write_text('{"results": [{"command": "x", "times": [0.1, ')
    done = _cli("import", "hyperfine", str(broken), cwd=perun_repo)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"error: {broken}:1: ends early (truncated?)"]
    assert sorted(jobs.iterdir()) == before  # nothing half-written
    done = _cli("import", "pytest-benchmark", str(FIXTURES / "pytest-benchmark.json"), "--uid", "bad",
                cwd=perun_repo)
    assert done.returncode == 2 and "bad" in done.stderr
    done = _cli("import", "hyperfine", str(FIXTURES / "hyperfine.json"), "-m", "nosuchrev", cwd=perun_repo)
    assert done.returncode == 1 and done.stderr.startswith("error:") and "Traceback" not in done.stderr


def test_perf_script_keeps_the_samples_of_two_events_apart(tmp_path):
    text = (FIXTURES / "perf.script").read_text()
    blocks = text.strip("\n").split("\n\n")
    mixed = "\n\n".join(b.replace("task-clock:", "page-faults:", 1) if i % 2 else b for i, b in enumerate(blocks))
    path = tmp_path / "two.script"
    path.write_text(mixed + "\n")
    profile = api.read_imported("perf-script", [path])
    assert profile.header["tool"]["events"] == ["page-faults", "task-clock"]
    roots = {}
    for r in rows(profile, "samples"):
        root = r["trace"][-1]["function"]
        roots[root] = roots.get(root, 0) + r["amount"]
    assert roots == {"[task-clock]": 46, "[page-faults]": 46}


@pytest.mark.parametrize("kind, fixture", [("folded", "stacks.folded"), ("hyperfine", "hyperfine.json"),
                                           ("callgrind", "callgrind.out")])
def test_a_file_name_that_is_not_utf8_is_imported_and_stored_escaped(perun_repo, tmp_path, kind, fixture):
    # a POSIX file name is bytes; one from a Latin-1 system must not make its profile unstorable
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9\x1b[31m." + kind.encode()))
    odd.write_bytes((FIXTURES / fixture).read_bytes())
    done = _cli("import", kind, str(odd), cwd=perun_repo)
    assert done.returncode == 0, done.stderr
    pending = next((perun_repo / ".perun" / "jobs").iterdir())
    tool = json.loads(pending.read_bytes())["header"]["tool"]
    names = [tool.get("file")] + [f if isinstance(f, str) else f.get("file") for f in tool.get("files", [])]
    assert "caf\\xe9\x1b[31m." + kind in names
    shown = _cli("show", "0@p", "raw", cwd=perun_repo)
    assert shown.returncode == 0 and "\x1b" not in shown.stdout
