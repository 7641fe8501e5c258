"""pyperf, asv and memray-stats imports through the command line, and one-line errors for every importer.

tests/fixtures/import/README.md says how each file was made with the real tool.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from perun_core import api
from perun_core.errors import ImportFailed

from .test_stack_sums import FIXTURES, _cli, imported, perun_repo, repo  # noqa: F401 (perun_repo, repo: fixtures)

ASV_RESULT = next((FIXTURES / "asv" / "results" / "vm").glob("ecf062e4-*.json"))


def rows(profile, **match):
    return [r for r in profile.global_region.resources if all(r.get(k) == v for k, v in match.items())]


# -- pyperf ------------------------------------------------------------------------------------------------

def test_pyperf_runner_file_one_resource_per_value_calibration_left_out(repo):
    data = json.loads((FIXTURES / "pyperf-runner.json").read_text())
    profile = imported(repo, "pyperf", FIXTURES / "pyperf-runner.json")
    assert profile.type == "time" and profile.units == {"time": "s"}
    for bench in data["benchmarks"]:
        name = bench["metadata"]["name"]
        mine = rows(profile, uid=name)
        # run 0 only calibrates (warm-ups, no values): runs 1 and 2 give three values each
        assert [(r["run"], r["value"]) for r in mine] == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
        assert [r["amount"] for r in mine] == [v for run in bench["runs"] for v in run.get("values", [])]
        assert all(r["subtype"] == "value" and r["type"] == "time" for r in mine)
    assert {r["uid"] for r in rows(profile)} == {"fib15", "sort200"}
    assert profile.header["tool"]["metadata"]["perf_version"] == "2.11.0"


def test_pyperf_timeit_file_and_its_gzip_form(repo, tmp_path):
    data = json.loads((FIXTURES / "pyperf-timeit.json").read_text())
    profile = imported(repo, "pyperf", FIXTURES / "pyperf-timeit.json")
    values = [v for run in data["benchmarks"][0]["runs"] for v in run["values"]]
    assert [r["amount"] for r in rows(profile, uid="timeit")] == values and len(values) == 12
    packed = tmp_path / "timeit.json.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "pyperf-timeit.json").read_bytes()))
    assert [r["amount"] for r in rows(imported(repo, "pyperf", packed))] == values


def test_pyperf_bad_files(tmp_path):
    data = json.loads((FIXTURES / "pyperf-runner.json").read_text())
    data["benchmarks"][1]["runs"][2]["values"][1] = -3e-06
    path = tmp_path / "neg.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ImportFailed) as caught:
        api.read_imported("pyperf", [path])
    assert str(caught.value) == (f"{path}: key 'benchmarks[1].runs[2].values[1]': a negative value (-3e-06): "
                                 "expected 0 or more")
    del data["benchmarks"][0]["metadata"]["name"]
    path.write_text(json.dumps(data))
    with pytest.raises(ImportFailed, match=r"key 'benchmarks\[0\].metadata.name': is missing"):
        api.read_imported("pyperf", [path])
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress((FIXTURES / "pyperf-timeit.json").read_bytes())[:200])
    with pytest.raises(ImportFailed, match=r"cut.json.gz: is a broken gzip file \(truncated\?\)"):
        api.read_imported("pyperf", [cut])


# -- asv ---------------------------------------------------------------------------------------------------

def test_asv_results_samples_per_parameter_types_from_benchmarks_json(repo):
    data = json.loads(ASV_RESULT.read_text())
    profile = imported(repo, "asv", ASV_RESULT)
    assert profile.type == "mixed" and profile.units == {"time": "s", "memory": "B", "track": "unit"}
    samples = data["result_columns"].index("samples")
    sort_samples = data["results"]["bench_tiny.TimeSort.time_sorted"][samples]
    for n, expected in zip(("100", "1000"), sort_samples):
        mine = rows(profile, uid=f"bench_tiny.TimeSort.time_sorted(n={n})")
        assert [r["amount"] for r in mine] == expected and len(expected) == 6
        assert all(r["subtype"] == "sample" and r["type"] == "time" for r in mine)
    assert [r["amount"] for r in rows(profile, uid="bench_tiny.time_sum")] == \
        data["results"]["bench_tiny.time_sum"][samples][0]
    memory = rows(profile, uid="bench_tiny.mem_list")
    assert [(r["type"], r["subtype"], r["amount"]) for r in memory] == [("memory", "result", 8056)]
    assert [(r["type"], r["amount"]) for r in rows(profile, uid="bench_tiny.track_answer")] == [("track", 42)]
    assert profile.header["tool"]["commit_hash"].startswith("ecf062e4")


def test_asv_without_benchmarks_json_or_samples(tmp_path):
    data = json.loads(ASV_RESULT.read_text())
    samples = data["result_columns"].index("samples")
    for entry in data["results"].values():
        del entry[samples:]
    lone = tmp_path / "lone.json"
    lone.write_text(json.dumps(data))
    profile = api.read_imported("asv", [lone])
    # types from the names; parameter names unknown: p0; one 'result' (asv's median) with its statistics
    sort100 = rows(profile, uid="bench_tiny.TimeSort.time_sorted(p0=100)")
    assert [(r["subtype"], r["amount"]) for r in sort100] == \
        [("result", data["results"]["bench_tiny.TimeSort.time_sorted"][0][0])]
    assert sort100[0]["q_25"] <= sort100[0]["amount"] <= sort100[0]["q_75"] and sort100[0]["repeat"] == 6
    assert rows(profile, uid="bench_tiny.mem_list")[0]["type"] == "memory"
    data["results"]["bench_tiny.time_sum"][0][0] = -1.5e-05
    lone.write_text(json.dumps(data))
    with pytest.raises(ImportFailed, match=r"lone.json: key 'results.bench_tiny.time_sum\[0\]\[0\]': a negative value"):
        api.read_imported("asv", [lone])
    data["version"] = 1
    lone.write_text(json.dumps(data))
    with pytest.raises(ImportFailed, match=r"key 'version': expected 2"):
        api.read_imported("asv", [lone])


# -- memray ------------------------------------------------------------------------------------------------

def test_memray_stats_places_modules_histogram_and_totals(repo):
    data = json.loads((FIXTURES / "memray-stats.json").read_text())
    profile = imported(repo, "memray-stats", FIXTURES / "memray-stats.json")
    assert profile.type == "memory" and profile.units == {"memory": "B", "allocations": "allocations"}
    biggest = data["top_allocations_by_size"][0]
    assert biggest["location"] == "<listcomp>:alloc.py:9"
    top = rows(profile, type="memory", subtype="location")[0]
    assert (top["uid"], top["function"], top["source"], top["line"], top["amount"]) == \
        ("<listcomp> (alloc.py:9)", "<listcomp>", "alloc.py", 9, biggest["size"])
    counts = rows(profile, type="allocations", subtype="location")
    assert [r["amount"] for r in counts] == [p["count"] for p in data["top_allocations_by_count"]]
    assert sum(r["amount"] for r in rows(profile, subtype="size")) == data["total_num_allocations"] == 461
    assert sum(r["amount"] for r in rows(profile, subtype="allocator")) == 461
    totals = {r["uid"]: r["amount"] for r in rows(profile, subtype="total")}
    assert totals == {"allocated": 598780, "allocations": 461, "peak": data["metadata"]["peak_memory"]}
    modules = {r["uid"]: r["amount"] for r in rows(profile, type="memory", subtype="module")}
    assert modules == {"alloc": 343362, "<root>": 255418}
    assert profile.cmd == data["metadata"]["command_line"]


def test_memray_negative_size_is_refused(tmp_path):
    data = json.loads((FIXTURES / "memray-stats.json").read_text())
    data["top_allocations_by_size"][2]["size"] = -10
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ImportFailed, match=r"key 'top_allocations_by_size\[2\].size': a negative value \(-10\)"):
        api.read_imported("memray-stats", [path])


# -- one error line for bad input, nothing stored ----------------------------------------------------------

_NEGATIVE = {
    "pytest-benchmark": ("pytest-benchmark.json", lambda d: d["benchmarks"][1]["stats"]["data"].__setitem__(3, -0.1),
                         "key 'benchmarks[1].stats.data[3]': a negative value (-0.1)"),
    "hyperfine": ("hyperfine.json", lambda d: d["results"][0]["times"].__setitem__(2, -0.004),
                  "key 'results[0].times[2]': a negative value (-0.004)"),
    "google-benchmark": ("google-benchmark.json", lambda d: d["benchmarks"][0].__setitem__("real_time", -5),
                         "key 'benchmarks[0].real_time': a negative value (-5)"),
    "pyperf": ("pyperf-timeit.json", lambda d: d["benchmarks"][0]["runs"][0]["values"].__setitem__(0, -1e-06),
               "key 'benchmarks[0].runs[0].values[0]': a negative value (-1e-06)"),
    "memray-stats": ("memray-stats.json", lambda d: d.__setitem__("total_bytes_allocated", -1),
                     "key 'total_bytes_allocated': a negative value (-1)"),
    "speedscope": ("py-spy.speedscope.json", lambda d: d["profiles"][0]["weights"].__setitem__(0, -0.01),
                   "key 'profiles[0].weights[0]': a negative weight (-0.01)"),
}


@pytest.mark.parametrize("kind", sorted(_NEGATIVE))
def test_negative_times_are_refused_with_one_error_line(repo, tmp_path, kind):
    name, spoil, message = _NEGATIVE[kind]
    data = json.loads((FIXTURES / name).read_text())
    spoil(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    jobs = repo / ".perun" / "jobs"
    before = sorted(jobs.iterdir()) if jobs.exists() else []
    done = _cli("import", kind, str(path), "-m", "HEAD", cwd=repo)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {path}: {message}: " + (
        "amounts cannot be below 0" if kind == "speedscope" else "expected 0 or more")]
    assert (sorted(jobs.iterdir()) if jobs.exists() else []) == before


@pytest.mark.parametrize("kind, name, line", [
    ("folded", "stackcollapse-dtrace.folded", 3), ("py-spy", "py-spy.txt", 5),
])
def test_negative_folded_values_name_the_line(repo, tmp_path, kind, name, line):
    lines = (FIXTURES / name).read_text().splitlines()
    stack, _, value = lines[line - 1].rpartition(" ")
    lines[line - 1] = f"{stack} -{value}"
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    done = _cli("import", kind, str(path), "-m", "HEAD", cwd=repo)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {path}:{line}: a negative value (-{value}): amounts cannot be below 0"]


@pytest.mark.parametrize("kind, name", [
    ("pyperf", "pyperf-runner.json"), ("memray-stats", "memray-stats.json"), ("py-spy", "py-spy.txt"),
    ("speedscope", "pyinstrument.speedscope.json"), ("asv", str(ASV_RESULT.relative_to(FIXTURES))),
])
def test_cut_files_give_one_error_line(repo, tmp_path, kind, name):
    data = (FIXTURES / name).read_bytes()
    path = tmp_path / Path(name).name
    path.write_bytes(data[:len(data) // 2])
    done = _cli("import", kind, str(path), "-m", "HEAD", cwd=repo)
    assert done.returncode == 1, done.stdout
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(f"error: {path}:")
    assert "Traceback" not in done.stderr


def test_asv_file_copied_with_its_benchmarks_json_keeps_parameter_names(repo, tmp_path):
    results = tmp_path / "results" / "vm"
    results.mkdir(parents=True)
    shutil.copy(FIXTURES / "asv" / "results" / "benchmarks.json", tmp_path / "results")
    shutil.copy(ASV_RESULT, results / "r.json")
    uids = {r["uid"] for r in rows(imported(repo, "asv", results / "r.json"))}
    assert "bench_tiny.TimeSort.time_sorted(n=1000)" in uids


def test_readme_lists_every_importer_with_the_command_that_makes_its_input():
    from perun_core.importers import importers

    readme = (FIXTURES.parent.parent.parent / "README.md").read_text()
    section = readme[readme.index("## Importing"):readme.index("## Comparing two profiles")]
    for name in importers.names():
        row = next((line for line in section.splitlines() if line.startswith(f"| `{name}` | ")), None)
        assert row is not None, f"README does not list the importer {name}"
        assert "`" in row.split("|")[2], f"README names no command making the input of {name}"


@pytest.mark.parametrize("kind, message", [
    ("asv", "key 'version': is missing"),
    ("pyperf", "key 'benchmarks': is missing"),
    ("memray-stats", "key 'top_allocations_by_size': is missing"),
])
def test_another_tools_file_names_the_key_expected(repo, kind, message):
    path = FIXTURES / "hyperfine.json"
    done = _cli("import", kind, str(path), "-m", "HEAD", cwd=repo)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {path}: {message}"]
