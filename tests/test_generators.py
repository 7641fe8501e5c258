"""Workload generators: configuration, generation, merging, and jobs over generated workloads."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runhelpers import needs_cc, run_env, documented  # noqa: F401 - run_env is an autouse fixture

from perun_core import api
from perun_core.api import run as api_run
from perun_core.analysis.points import points_by_uid
from perun_core.analysis.regression import best_model, regression_analysis
from perun_core.config import validate
from perun_core.errors import CollectionError, ConfigError, WorkloadGenerationFailed
from perun_core.profile.codec import decode_content, encode_columnar
from perun_core.profile.model import Profile, Snapshot
from perun_core.profile.resources import MISSING, ResourceTable
from perun_core import events as ev
from perun_core.runner.generators import (
    Generator,
    Workload,
    check_generators,
    generated_workloads,
    merge_profiles,
)

PY = sys.executable


def generator(**options) -> Generator:
    (made,) = check_generators([{"id": "g", **options}])
    return made


def workloads(gen: Generator, cwd: Path = Path(".")) -> list[Workload]:
    with generated_workloads(gen, cwd) as makers:
        return [make() for make in makers]


def configure(root: Path, generators: list[dict]) -> None:
    api.config_set("generators.workload", generators, scope="local", cwd=root)


# -- configuration ---------------------------------------------------------------------------------

@pytest.mark.parametrize("items, reason", [
    ([{"id": "a", "type": "integers", "min": 1, "max": 2}],
     "item 1 ('a'): expected 'type' to be one of singleton, integer, string, textfile, external, got 'integers'"),
    ([{"id": "a", "type": "integer", "min": 1}], "item 1 ('a'): an integer generator needs 'max'"),
    ([{"id": "a", "type": "integer", "min": 5, "max": 2}], "item 1 ('a'): 'max' (2) is less than 'min' (5)"),
    ([{"id": "a", "type": "integer", "min": 1, "max": 2, "step": 0}], "item 1 ('a'): 'step' must be >= 1, got 0"),
    ([{"id": "a", "type": "integer", "min": 1, "max": 2, "stepp": 1}],
     "item 1 ('a'): unknown key 'stepp' for an integer generator; expected id, type, profile_for_each_workload, "
     "min, max, step"),
    ([{"id": "a", "type": "integer", "min": "1", "max": 2}], "item 1 ('a'): expected 'min' to be an integer, got '1'"),
    ([{"id": "a", "type": "singleton", "value": 1}, {"id": "a", "type": "singleton", "value": 2}],
     "generator id 'a' is used twice"),
    ([{"id": "a", "type": "integer", "min": 0, "max": 100_000}],
     "item 1 ('a'): would generate 100001 workloads; at most 10000 are allowed (use a larger step)"),
    ([{"id": "a", "type": "external", "command": "gen", "file_format": "in.txt"}],
     "item 1 ('a'): 'file_format' must contain '{size}' once, e.g. 'input-{size}.txt'"),
    ([{"type": "singleton", "value": 1}], "item 1: a singleton generator needs 'id'"),
    ({"id": "a"}, "expected a list of generators (mappings with id and type), got dict"),
])
def test_invalid_generators_are_refused_naming_the_key(perun_repo, items, reason):
    root, _ = perun_repo
    with pytest.raises(ConfigError) as info:
        configure(root, items)
    assert info.value.key == "generators.workload" and info.value.reason == reason


def test_generators_is_a_section():
    with pytest.raises(ConfigError, match="key 'generators': expected a section"):
        validate("generators", [1])
    validate("generators", {"workload": [{"id": "n", "type": "integer", "min": 1, "max": 3}]})


def test_a_hand_edited_bad_section_fails_the_run_before_anything_runs(perun_repo):
    root, _ = perun_repo
    config = root / ".perun/local.yml"
    config.write_text(config.read_text() + "\ngenerators:\n  workload:\n    - {id: n, type: integer, min: 3}\n")
    with pytest.raises(ConfigError, match="generators.workload"):
        api_run.collect("time", ["true"], [], ["n"], {}, cwd=root)


# -- generation ------------------------------------------------------------------------------------

def test_integer_string_and_singleton_workloads():
    assert [(w.argument, w.size, w.label) for w in workloads(generator(type="integer", min=10, max=35, step=10))] == [
        ("10", 10, "10"), ("20", 20, "20"), ("30", 30, "30")]
    strings = workloads(generator(type="string", min_len=0, max_len=8, step_len=4))
    assert [(len(shlex.split(w.argument)[0]) if w.size else 0, w.size) for w in strings] == [(0, 0), (4, 4), (8, 8)]
    assert shlex.split(strings[2].argument)[0].isalnum()
    assert strings == workloads(generator(type="string", min_len=0, max_len=8, step_len=4))   # seeded
    assert [(w.argument, w.size) for w in workloads(generator(type="singleton", value=42))] == [("42", 42)]
    assert [(w.argument, w.size) for w in workloads(generator(type="singleton", value="in.txt"))] == [("in.txt", 1)]
    assert [(w.argument, w.size) for w in workloads(generator(type="singleton", value="x", size=7.5))] == [("x", 7.5)]


def test_textfiles_exist_while_used_and_are_removed(run_env):
    gen = generator(type="textfile", min_lines=1, max_lines=21, step_lines=10, min_chars=5, max_chars=9,
                    step_chars=4)
    seen = []
    with generated_workloads(gen, Path(".")) as makers:
        assert len(makers) == 6
        for make in makers:
            workload = make()
            path = Path(shlex.split(workload.argument)[0])
            lines = path.read_bytes().split(b"\n")[:-1]
            assert workload.size == path.stat().st_size and workload.label == f"{len(lines)}x{len(lines[0])}"
            assert {len(line) for line in lines} == {len(lines[0])}
            seen.append((workload.size, path))
        assert sum(path.exists() for _, path in seen) == 1      # only the current one
    assert [size for size, _ in seen] == sorted(size for size, _ in seen) == [6, 10, 66, 110, 126, 210]
    assert not any(path.exists() for _, path in seen)
    assert [name for name in os.listdir(run_env) if name.startswith("perun-workloads")] == []


def test_external_generator(tmp_path, run_env):
    script = tmp_path / "make_inputs.py"
    script.write_text("import pathlib, sys\nout = pathlib.Path(sys.argv[1])\n"
                      "for n in (30, 5, 100):\n    (out / f'in-{n}.txt').write_text('x' * n * 2)\n"
                      "(out / 'notes.md').write_text('skip me')\n")
    by_name = workloads(generator(type="external", command=f"{PY} {script} {{dir}}", file_format="in-{size}.txt"),
                        tmp_path)
    assert [(w.size, w.label) for w in by_name] == [(5, "in-5.txt"), (30, "in-30.txt"), (100, "in-100.txt")]
    by_bytes = workloads(generator(type="external", command=f"{PY} {script}"), tmp_path)
    assert [(w.size, w.label) for w in by_bytes] == [(7, "notes.md"), (10, "in-5.txt"), (60, "in-30.txt"),
                                                     (200, "in-100.txt")]
    assert not Path(shlex.split(by_bytes[0].argument)[0]).exists()
    with pytest.raises(WorkloadGenerationFailed) as info:
        workloads(generator(type="external", command=f"{PY} -c 'import sys; sys.stderr.write(\"no disk\\n\"); "
                                                   f"raise SystemExit(2)'"), tmp_path)
    assert "workload generator 'g': its command exited with status 2" in info.value.message
    assert info.value.exit_status == 2 and info.value.hint == "its last output:\n  no disk"
    with pytest.raises(WorkloadGenerationFailed, match="its command wrote no files into the workload directory"):
        workloads(generator(type="external", command="true"), tmp_path)
    assert [name for name in os.listdir(run_env) if name.startswith("perun-workloads")] == []


# -- merging ---------------------------------------------------------------------------------------

def _profile(snapshots: list[list[dict]], global_rows: list[dict] | None) -> Profile:
    data: dict = {"header": {"type": "time", "units": {"time": "s"}, "cmd": "c"},
                  "snapshots": [{"time": str(i), "resources": rows} for i, rows in enumerate(snapshots)]}
    if global_rows is not None:
        data["global"] = {"timestamp": 1.5, "resources": global_rows}
    return Profile.from_dict(data)


_row = st.fixed_dictionaries(
    {"uid": st.sampled_from(["f", "g"])},
    optional={"amount": st.one_of(st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False)),
              "structure-unit-size": st.integers(0, 10**6), "order": st.integers(1, 5),
              "type": st.sampled_from(["time", "memory"])},
)
_run = st.tuples(st.lists(st.lists(_row, max_size=4), max_size=2), st.one_of(st.none(), st.lists(_row, max_size=6)),
                 st.integers(1, 10**5))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_run, min_size=1, max_size=5))
def test_merging_always_pairs_amounts_with_sizes(runs):
    """The original tool's merge could pair size lists of one length with amounts of another; ours cannot."""
    profiles = [(_profile(snapshots, global_rows), size) for snapshots, global_rows, size in runs]
    merged = merge_profiles(profiles, "g")
    expected = []          # (run size, resource) in merged order: snapshots first, then the global region
    for snapshots, _, size in runs:
        expected += [(size, row) for rows in snapshots for row in rows]
    for _, global_rows, size in runs:
        expected += [(size, row) for row in global_rows or []]
    got = [row for _, region in merged.regions() for row in region.resources.rows()]
    assert len(got) == len(expected) == merged.resource_count()
    for row, (size, original) in zip(got, expected):
        assert row == {**original, "structure-unit-size": original.get("structure-unit-size", size)}
    for _, region in merged.regions():
        keys, columns = region.resources.columns()
        assert all(len(column) == len(region.resources) for column in columns)
        assert MISSING not in region.resources.column("structure-unit-size")
    with_amounts = [row for row in got if "amount" in row]
    points = points_by_uid(merged)
    assert sum(len(x) for x, _ in points.values()) == len(with_amounts)
    assert all(len(x) == len(y) for x, y in points.values())
    assert decode_content(encode_columnar(merged)) == merged
    assert merged.header["workload_sizes"] == [size for *_, size in runs]
    if any(global_rows is not None for _, global_rows, _ in runs):
        assert merged.global_region.meta["timestamp"] == pytest.approx(
            1.5 * sum(global_rows is not None for _, global_rows, _ in runs))


def test_merge_sums_the_runs_preemptions_only_when_every_run_counted_them():
    def run(preemption):
        header = {"type": "mixed", "units": {"mixed(time delta)": "us"}}
        if preemption is not None:
            header["preemption"] = preemption
        return Profile(header=header, global_region=Snapshot(ResourceTable([{"amount": 1.0, "uid": "f"}]), [], {}))

    merged = merge_profiles([(run({"count": 3, "wait_seconds": 0.5}), 1), (run({"count": 12, "wait_seconds": 0.25}), 2)],
                            "g")
    assert merged.header["preemption"] == {"count": 15, "wait_seconds": 0.75}
    partly = merge_profiles([(run({"count": 3, "wait_seconds": 0.5}), 1), (run(None), 2)], "g")
    assert "preemption" not in partly.header


def test_merge_needs_runs():
    with pytest.raises(ValueError, match="nothing to merge"):
        merge_profiles([], "g")


# -- jobs over generated workloads -----------------------------------------------------------------

COUNTER = "import sys, time\nn = int(sys.argv[1])\ntime.sleep(n / 1000)\nprint('slept', n)\n"


def test_time_over_an_integer_generator_merges_one_profile(perun_repo):
    root, shas = perun_repo
    (root / "sleeper.py").write_text(COUNTER)
    configure(root, [{"id": "naps", "type": "integer", "min": 10, "max": 30, "step": 10}])
    events: list = []
    result = api_run.run_job([PY], ["sleeper.py"], ["naps"], ["time"], ["normalizer"], cwd=root,
                             on_event=events.append)
    assert result.jobs == 1 and len(result.profiles) == 1
    profile = documented(result.profiles[0].path)
    assert profile["origin"] == shas[-1]
    header = profile["header"]
    assert header["workload"] == "naps" and header["workload_sizes"] == [10, 20, 30]
    # the generator in full: confirmation and explanation re-run the very workloads it made
    assert header["generator"] == {"id": "naps", "type": "integer", "min": 10, "max": 30, "step": 10,
                                   "profile_for_each_workload": False}
    assert [p["name"] for p in profile["postprocessors"]] == ["normalizer"]        # once, on the merged profile
    rows = profile["global"]["resources"]
    assert len(rows) == 12 and [r["structure-unit-size"] for r in rows if r["subtype"] == "real"] == [10, 20, 30]
    kinds = [type(e).__name__ for e in events]
    assert kinds.count("JobStarted") == 1 and kinds.count("ProfileWritten") == 1 and kinds.count("JobFinished") == 1
    started = [(e.index, e.total, e.generator, e.workload, e.size) for e in events if isinstance(e, ev.WorkloadStarted)]
    assert started == [(1, 3, "naps", "10", 10), (2, 3, "naps", "20", 20), (3, 3, "naps", "30", 30)]
    assert [e.text for e in events if isinstance(e, ev.OutputLine)] == ["slept 10", "slept 20", "slept 30"]
    first_phase = kinds.index("PhaseStarted")
    assert kinds[first_phase - 1] == "WorkloadStarted"


def test_a_profile_for_each_workload(perun_repo):
    root, _ = perun_repo
    (root / "count.py").write_text("import sys\nprint(len(open(sys.argv[1]).read().splitlines()))\n")
    configure(root, [{"id": "texts", "type": "textfile", "min_lines": 2, "max_lines": 4, "step_lines": 2,
                      "min_chars": 3, "max_chars": 3, "profile_for_each_workload": True}])
    events: list = []
    result = api_run.run_job([PY], ["count.py"], ["texts"], ["time"], cwd=root, on_event=events.append)
    headers = [documented(p.path)["header"] for p in result.profiles]
    assert [(h["workload"], h["workload_size"]) for h in headers] == [("texts:2x3", 8), ("texts:4x3", 16)]
    assert [e.text for e in events if isinstance(e, ev.OutputLine)] == ["2", "4"]
    kinds = [type(e).__name__ for e in events]
    second_workload = kinds.index("WorkloadStarted", kinds.index("WorkloadStarted") + 1)
    assert kinds.count("ProfileWritten") == 2 and kinds.index("ProfileWritten") < second_workload
    assert all(r["structure-unit-size"] in (8, 16) for p in result.profiles
               for r in documented(p.path)["global"]["resources"])


def test_a_failing_workload_fails_the_job(perun_repo):
    root, _ = perun_repo
    (root / "picky.py").write_text("import sys\nif sys.argv[1] == '3':\n    sys.stderr.write('three is bad\\n')\n"
                                   "    raise SystemExit(1)\n")
    configure(root, [{"id": "ns", "type": "integer", "min": 1, "max": 4}])
    with pytest.raises(CollectionError) as info:
        api_run.collect("time", [PY], ["picky.py"], ["ns"], {}, cwd=root)
    assert info.value.message.endswith("picky.py 3: the profiled command exited with status 1")
    assert info.value.stderr_tail == "three is bad"
    assert list((root / ".perun/jobs").iterdir()) == []


def test_matrix_workloads_mix_generators_and_plain_workloads(perun_repo):
    root, _ = perun_repo
    (root / "sleeper.py").write_text(COUNTER)
    configure(root, [{"id": "one", "type": "singleton", "value": 5}])
    for key, value in (("cmds", [PY]), ("args", ["sleeper.py"]), ("workloads", ["one", "7"]),
                       ("collectors", [{"name": "time"}])):
        api.config_set(key, value, scope="local", cwd=root)
    result = api_run.run_matrix(cwd=root)
    headers = [documented(p.path)["header"] for p in result.profiles]
    assert [(h["workload"], h.get("workload_sizes")) for h in headers] == [("one", [5]), ("7", None)]


def test_pytrace_over_growing_lists_gets_sizes_from_the_generator(perun_repo):
    root, _ = perun_repo
    (root / "lookup.py").write_text("import sys\n\ndef find(items, x):\n    return x in items\n\n"
                                    "data = list(range(int(sys.argv[1])))\nfor _ in range(3):\n    find(data, -1)\n")
    configure(root, [{"id": "lengths", "type": "integer", "min": 100, "max": 300, "step": 100}])
    result = api_run.collect("pytrace", ["lookup.py"], [], ["lengths"], {"functions": ["find"]}, cwd=root)
    profile = documented(result.profiles[0].path)
    assert profile["header"]["type"] == "mixed" and profile["header"]["workload"] == "lengths"
    assert [r["structure-unit-size"] for r in profile["global"]["resources"]] == [100] * 3 + [200] * 3 + [300] * 3


@needs_cc
def test_time_of_a_quadratic_c_program_over_an_integer_generator(perun_repo):
    """User CPU time over n = 2000..12000: the merged profile's best model is quadratic (or power ~2)."""
    root, _ = perun_repo
    (root / "quad.c").write_text(
        "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) {\n"
        "    long n = atol(argv[1]);\n    unsigned long x = 1;\n"
        "    for (long i = 0; i < n; i++)\n        for (long j = 0; j < n; j++)\n"
        "            x = x * 6364136223846793005UL + 1442695040888963407UL;\n"
        "    printf(\"%lu\\n\", x & 1);\n    return 0;\n}\n")
    compiler = shutil.which("cc") or "gcc"
    assert os.system(f"{compiler} -O1 -o {root / 'quad'} {root / 'quad.c'}") == 0
    configure(root, [{"id": "n", "type": "integer", "min": 2000, "max": 12000, "step": 2000}])
    result = api_run.collect("time", ["./quad"], [], ["n"], {"repeat": 2}, cwd=root)
    profile = Profile.from_dict(documented(result.profiles[0].path))
    user = [r for r in profile.global_region.resources.rows() if r["subtype"] == "user"]
    assert [r["structure-unit-size"] for r in user] == [n for n in range(2000, 12001, 2000) for _ in range(2)]
    best = best_model(regression_analysis(user).models)
    assert best["model"] == "quadratic" or (best["model"] == "power" and 1.7 < best["coeffs"][1]["value"] < 2.3), best
    # as a user runs it, on the whole profile: seconds and bytes of the one command get models of their own
    done = api_run.postprocess(str(result.profiles[0].path), "regression_analysis", cwd=root)
    models = documented(done.path)["global"]["models"]
    assert {(m["uid"], m["subtype"]) for m in models} == {("./quad", s) for s in ("real", "user", "sys", "max_rss")}
    best = best_model([m for m in models if m["subtype"] == "user"])
    assert best["model"] == "quadratic" or (best["model"] == "power" and 1.7 < best["coeffs"][1]["value"] < 2.3), best


def test_plain_renderer_shows_workloads_when_verbose():
    from perun_core.cli.run_render import PlainRenderer

    event = ev.WorkloadStarted(1, 2, 6, "sizes", "4000", 4000)
    lines: list[str] = []
    PlainRenderer(1, write=lines.append)(event)
    PlainRenderer(0, write=lines.append)(event)
    assert lines == ["  workload 2/6 of sizes: 4000 (size 4000)"]
