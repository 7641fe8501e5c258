"""Stack-carrying imports through the command line: per-function sums counted by hand from each fixture,
the folded variants other tools write, and a difference flame graph for every kind.

tests/fixtures/import/README.md says which tool made each file and how.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from .test_importers import _cli, perun_repo  # noqa: F401 - perun_repo: a fixture

from perun_core import api

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"


@pytest.fixture
def repo(perun_repo):
    """An empty git repository with perun initialized (the fixture of test_importers)."""
    return perun_repo


def imported(repo: Path, kind: str, *files: Path, options: tuple[str, ...] = ()):
    """The profile ``perun-core import KIND FILE... -m HEAD`` stored, read back from its file."""
    done = _cli("import", kind, *map(str, files), "-m", "HEAD", *options, cwd=repo)
    assert done.returncode == 0, done.stderr
    path = re.search(r"pending as (\S+)$", done.stdout.strip()).group(1)
    return api.load_profile(path, cwd=repo).profile


def functions(profile) -> dict[str, tuple[float, float]]:
    """(inclusive, exclusive) per function resource."""
    found = {}
    for row in profile.global_region.resources:
        if row.get("subtype") == "function":
            assert row["uid"] not in found, f"two function resources for {row['uid']}"
            found[row["uid"]] = (row["amount"], row["exclusive"])
    return found


def stacks(profile) -> dict[tuple[str, ...], float]:
    """Amount per stack, root first."""
    return {tuple(f["function"] for f in reversed(r["trace"])): r["amount"]
            for r in profile.global_region.resources if r.get("subtype") == "samples"}


# -- folded files as stackcollapse and py-spy write them ---------------------------------------------------

def test_py_spy_raw_frames_give_function_source_and_line(repo):
    profile = imported(repo, "py-spy", FIXTURES / "py-spy.txt")
    assert profile.units == {"time": "samples"} and profile.header["tool"]["name"] == "py-spy"
    # counted in py-spy.txt: 116 samples; 3 without frames (' 3'); squares 18 alone + 66 in its genexpr;
    # the other ten lines are fib recursions (1+2+6+3+3+3+5+1+2+3), fib at lines 5 and 6 on one stack
    assert functions(profile) == {"<module>": (113, 0), "work": (113, 0), "squares": (84, 18),
                                  "squares.<locals>.<genexpr>": (66, 66), "fib": (29, 29), "[no frames]": (3, 3)}
    assert sum(r["amount"] for r in profile.global_region.resources if r["subtype"] == "samples") == 116
    leaf = next(r for r in profile.global_region.resources if r.get("uid") == "squares.<locals>.<genexpr>"
                and r["subtype"] == "samples")
    assert leaf["trace"][0] == {"function": "squares.<locals>.<genexpr>", "source": "busy.py", "line": 10}
    assert leaf["trace"][2] == {"function": "work", "source": "busy.py", "line": 17}


def test_py_spy_raw_with_threads_and_without_line_numbers(repo):
    profile = imported(repo, "py-spy", FIXTURES / "py-spy-threads.txt")
    # 29 samples under the thread's frame, 1 of them in no Python code; squares 2 alone and 14 in its genexpr
    assert functions(profile) == {"thread (27968)": (29, 1), "<module>": (28, 0), "work": (28, 0), "squares": (16, 2),
                                  "squares.<locals>.<genexpr>": (14, 14), "fib": (12, 12)}
    fib = next(r for r in profile.global_region.resources if r.get("uid") == "fib" and r["subtype"] == "samples")
    assert fib["trace"][0] == {"function": "fib", "source": "busy.py"}
    assert fib["trace"][-1] == {"function": "thread (27968)"}


def test_stackcollapse_perf_with_and_without_kernel_annotations(repo):
    plain = imported(repo, "folded", FIXTURES / "stackcollapse-perf.folded", options=("--unit", "ns"))
    annotated = imported(repo, "folded", FIXTURES / "stackcollapse-perf-all.folded", options=("--unit", "ns"))
    period = 1001001  # every sample of perf.script has this task-clock period
    # the four lines: 54 samples in leaf, 2 in the kernel below leaf, 35 in other, 1 in the kernel below other
    expected = {"busy": 92, "__libc_start_call_main": 92, "main": 56, "leaf": 56, "other": 36}
    for profile in (plain, annotated):
        sums = functions(profile)
        assert profile.units == {"time": "ns"}
        assert {name: sums[name][0] for name in expected} == {n: v * period for n, v in expected.items()}
        assert sums["leaf"][1] == 54 * period and sums["other"][1] == 35 * period
        assert sum(exclusive for _, exclusive in sums.values()) == 92 * period
    kernel = next(r for r in annotated.global_region.resources if r.get("uid") == "irqentry_exit_to_user_mode"
                  and r["subtype"] == "samples")
    assert kernel["trace"][0] == {"function": "irqentry_exit_to_user_mode", "annotation": "kernel",
                                  "object": "[kernel]"}
    assert not any("_[k]" in name for name in functions(annotated))


def test_stackcollapse_dtrace_module_prefixes_become_objects(repo):
    profile = imported(repo, "folded", FIXTURES / "stackcollapse-dtrace.folded")
    # 12 + 7 + 30 + 5 samples; walk recurses (7: three levels) and is the leaf of 12 + 7
    assert functions(profile) == {"_start": (54, 0), "main": (54, 0), "walk": (49, 19), "memcpy": (30, 30),
                                  "malloc": (5, 5)}
    rows = {r["uid"]: r for r in profile.global_region.resources if r.get("subtype") == "function"}
    assert rows["memcpy"]["object"] == "libc.so.1" and rows["walk"]["object"] == "app"


def test_folded_variants_crlf_comments_spaces_tabs_and_annotations(tmp_path):
    path = tmp_path / "variants.folded"
    lines = ["# made by hand: every variant in one file", "",
             "java;Interpreter_[j];Foo::bar(int) const_[i] 4",
             "java;Interpreter_[j];Foo::bar(int) const_[i]\t6",
             "  java;operator new 2  ",
             "java;Interpreter_[j] 1.5",
             "# a comment between lines"]
    path.write_bytes("\r\n".join(lines).encode() + b"\r\n")
    profile = api.read_imported("folded", [path])
    assert stacks(profile) == {("java", "Interpreter", "Foo::bar(int) const"): 10.0, ("java", "operator new"): 2.0,
                               ("java", "Interpreter"): 1.5}
    assert functions(profile) == {"java": (13.5, 0.0), "Interpreter": (11.5, 1.5), "Foo::bar(int) const": (10.0, 10.0),
                                  "operator new": (2.0, 2.0)}
    inlined = next(r for r in profile.global_region.resources if r.get("uid") == "Foo::bar(int) const")
    assert inlined["trace"][0]["annotation"] == "inlined" and inlined["trace"][1]["annotation"] == "jit"
    assert profile.header["tool"]["lines"] == 4


def test_folded_errors_name_the_line_with_comments_and_blank_lines_counted(tmp_path):
    from perun_core.errors import ImportFailed

    path = tmp_path / "bad.folded"
    path.write_text("# header\n\na;b 3\na;c -2\n")
    with pytest.raises(ImportFailed, match=r"bad.folded:4: a negative value \(-2\)"):
        api.read_imported("folded", [path])
    path.write_text("# header\n\na;b 3\r\na;c x\r\n")
    with pytest.raises(ImportFailed, match=r"bad.folded:4: expected a number after the stack, got 'x'"):
        api.read_imported("folded", [path])


# -- speedscope --------------------------------------------------------------------------------------------

def test_speedscope_sampled_by_py_spy_sums_per_function_not_per_line(repo):
    profile = imported(repo, "speedscope", FIXTURES / "py-spy.speedscope.json")
    assert profile.units == {"time": "s"}
    # 119 samples of 0.01 s: genexpr 57 (under squares), squares 33 alone, fib 28 at line 6 and 1 at line 5;
    # 'work' is two frames (lines 16 and 17) and one function
    expected = {"<module>": (119, 0), "work": (119, 0), "squares": (90, 33), "squares.<locals>.<genexpr>": (57, 57),
                "fib": (29, 29)}
    sums = functions(profile)
    assert set(sums) == set(expected)
    for name, (inclusive, exclusive) in expected.items():
        assert sums[name] == pytest.approx((inclusive / 100, exclusive / 100)), name


def _evented_reference(path: Path) -> dict[str, tuple[float, float]]:
    """Inclusive and exclusive time per function name, walked event by event (a frame open twice counts once)."""
    doc = json.loads(path.read_text())
    names = [f["name"] for f in doc["shared"]["frames"]]
    inclusive: dict[str, float] = {}
    exclusive: dict[str, float] = {}
    open_frames: list[int] = []
    last = None
    for event in doc["profiles"][0]["events"]:
        if open_frames and last is not None:
            span = event["at"] - last
            for name in {names[f] for f in open_frames}:
                inclusive[name] = inclusive.get(name, 0.0) + span
            leaf = names[open_frames[-1]]
            exclusive[leaf] = exclusive.get(leaf, 0.0) + span
        last = event["at"]
        if event["type"] == "O":
            open_frames.append(event["frame"])
        else:
            open_frames.pop()
    return {name: (inclusive[name], exclusive.get(name, 0.0)) for name in inclusive if inclusive[name] > 0}


def test_speedscope_evented_by_pyinstrument_counts_recursion_once(repo):
    path = FIXTURES / "pyinstrument.speedscope.json"
    profile = imported(repo, "speedscope", path)
    assert profile.header["tool"]["exporters"] == ["pyinstrument"]
    reference = _evented_reference(path)
    sums = functions(profile)
    assert set(sums) == set(reference) and "fib" in sums
    for name, pair in reference.items():
        assert sums[name] == pytest.approx(pair, abs=1e-12), name
    doc = json.loads(path.read_text())
    total = doc["profiles"][0]["events"][-1]["at"] - doc["profiles"][0]["events"][0]["at"]
    assert sums["<module>"][0] == pytest.approx(total)
    assert sum(exclusive for _, exclusive in sums.values()) == pytest.approx(total)


def test_speedscope_negative_weights_and_times_are_refused(tmp_path):
    from perun_core.errors import ImportFailed

    doc = json.loads((FIXTURES / "py-spy.speedscope.json").read_text())
    doc["profiles"][0]["weights"][3] = -0.01
    path = tmp_path / "neg.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportFailed, match=r"neg.json: key 'profiles\[0\].weights\[3\]': a negative weight"):
        api.read_imported("speedscope", [path])
    doc = json.loads((FIXTURES / "pyinstrument.speedscope.json").read_text())
    doc["profiles"][0]["events"][5]["at"] = -1.0
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportFailed, match=r"key 'profiles\[0\].events\[5\].at': a negative time \(-1.0\)"):
        api.read_imported("speedscope", [path])
    doc = json.loads((FIXTURES / "pyinstrument.speedscope.json").read_text())
    events = doc["profiles"][0]["events"]
    events[-2]["at"] = events[-1]["at"] + 1  # the last event now comes before the one it follows
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportFailed, match=r"events\[\d+\].at': a time before the last one"):
        api.read_imported("speedscope", [path])


# -- callgrind ---------------------------------------------------------------------------------------------

def _callgrind_edges(path: Path) -> dict[tuple[str, str], int]:
    """Inclusive cost of every caller -> callee call edge, read from the file by hand: the cost line after
    'calls=' (name compression resolved, the callee's recursion level kept)."""
    names: dict[str, str] = {}
    edges: dict[tuple[str, str], int] = {}
    caller = callee = None
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        key, _, value = line.partition("=")
        if key in ("fn", "cfn"):
            match = re.match(r"\((\d+)\)(?: (.*))?", value)
            name = names.setdefault(match.group(1), match.group(2)) if match.group(2) else names[match.group(1)]
            caller, callee = (name, callee) if key == "fn" else (caller, name)
        elif key == "calls":
            cost = int(lines[i + 1].split()[1])
            edges[(caller, callee)] = edges.get((caller, callee), 0) + cost
    return edges


def test_callgrind_recursion_direct_and_mutual_counts_once(repo):
    path = FIXTURES / "callgrind_rec.out"
    profile = imported(repo, "callgrind", path)
    sums = {r["uid"]: (r["amount"], r["exclusive"]) for r in profile.global_region.resources
            if r["subtype"] == "function"}
    edges = _callgrind_edges(path)
    # the outermost call of each recursive function is its call from main; fib'2, even'2 and odd'2 are deeper
    assert sums["fib"][0] == edges[("main", "fib")] == 30578
    assert sums["even"][0] == edges[("main", "even")] == 7165
    assert sums["odd"][0] == edges[("even", "odd")] == 7035  # even -> odd: level 1 calls level 1
    assert sums["fib"][1] == sums["fib"][0]  # fib calls nothing else
    assert sums["even"][1] + sums["odd"][1] == 3615 + 3550
    assert sums["main"][0] >= sums["fib"][0] + sums["even"][0] + sums["leaf"][0]
    assert all(inclusive <= sums["main"][0] for name, (inclusive, _) in sums.items()
               if name in ("fib", "even", "odd", "leaf"))
    # every instruction is some function's own: the exclusive costs add up to the file's totals line,
    # and no inclusive cost is above it (callgrind_annotate --inclusive=yes gives fib'2 139%)
    totals = int(profile.header["tool"]["files"][0]["totals"])
    every = [r for r in profile.global_region.resources if r["subtype"] == "function"]  # one per object too
    assert sum(r["exclusive"] for r in every) == totals == 200970
    assert max(r["amount"] for r in every) == totals


def test_callgrind_negative_cost_is_refused(tmp_path):
    from perun_core.errors import ImportFailed

    lines = (FIXTURES / "callgrind_rec.out").read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if re.match(r"^\d+ \d+$", line))
    position, _ = lines[number].split()
    lines[number] = f"{position} -40"
    path = tmp_path / "callgrind.out"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFailed, match=rf"callgrind.out:{number + 1}: a negative cost"):
        api.read_imported("callgrind", [path])


# -- difference flame graphs -------------------------------------------------------------------------------

def _scaled_folded(source: Path, target: Path) -> None:
    """A copy of a folded file whose first stack took three times as long."""
    lines = source.read_text().splitlines()
    stack, _, value = lines[0].rpartition(" ")
    lines[0] = f"{stack} {int(value) * 3}"
    target.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("kind, name", [
    pytest.param("perf-record", "perf.data", marks=pytest.mark.tools("perf")),
    ("perf-script", "perf.script"), ("folded", "stackcollapse-perf-all.folded"), ("py-spy", "py-spy.txt"),
    ("speedscope", "py-spy.speedscope.json"), ("speedscope", "pyinstrument.speedscope.json"),
    ("callgrind", "callgrind.out"),
])
def test_difference_flame_graph_for_every_stack_carrying_import(repo, tmp_path, kind, name):
    baseline = FIXTURES / name
    if kind in ("folded", "py-spy"):
        target = tmp_path / name
        _scaled_folded(baseline, target)
    else:
        target = {"perf.script": FIXTURES / "perf_slow.script", "callgrind.out": FIXTURES / "callgrind_slow.out"}.get(
            name, baseline)
    base_profile = imported(repo, kind, baseline)
    target_profile = imported(repo, kind, target)
    from perun_core.profile.codec import store_profile_at

    store_profile_at(base_profile, tmp_path / "a.perf")
    store_profile_at(target_profile, tmp_path / "b.perf")
    done = _cli("diff", str(tmp_path / "a.perf"), str(tmp_path / "b.perf"), "flamegraph", "--format", "folded",
                cwd=repo)
    assert done.returncode == 0, done.stderr
    pairs = [line.rsplit(" ", 2) for line in done.stdout.strip().splitlines()]
    assert pairs and all(len(p) == 3 for p in pairs)
    base_total = sum(float(b) for _, b, _ in pairs)
    target_total = sum(float(t) for _, _, t in pairs)
    if kind in ("folded", "py-spy"):  # the first line's stack tripled: the totals differ by twice its value
        first = baseline.read_text().splitlines()[0].rpartition(" ")[2]
        assert target_total - base_total == pytest.approx(2 * float(first))
    elif target == baseline:
        assert all(float(b) == float(t) for _, b, t in pairs)
    else:
        assert target_total != base_total
    svg = _cli("diff", str(tmp_path / "a.perf"), str(tmp_path / "b.perf"), "flamegraph", "--format", "svg", cwd=repo)
    assert svg.returncode == 0 and "<svg" in svg.stdout
