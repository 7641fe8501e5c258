"""The pytrace and pymemory collectors: selected functions, cProfile, tracemalloc, failures."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from runhelpers import busy_sessions, process_gone, run_env, documented  # noqa: F401 - run_env: autouse fixture

from conftest import run_cli
from perun_core.api import run as api_run
from perun_core.analysis.regression import best_model, regression_analysis
from perun_core.collect.pymemory import FunctionNames
from perun_core.collect.pyprogram import BOOTSTRAP, hang_report
from perun_core.collect.pytrace import busy_machine_advice, parse_function_pattern
from perun_core.errors import CollectionError, InvalidParameter
from perun_core.profile.convert import to_flame_graph_format
from perun_core.profile.model import Profile
from perun_core import events as ev

PY = sys.executable


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def collect(root, collector, command, args="", events=None, **params):
    result = api_run.collect(collector, [command], [args] if args else [], [], params, cwd=root,
                             on_event=events.append if events is not None else None)
    return documented(result.profiles[0].path)




PROGRAM = """\
    import os
    import pickle
    import sys
    import helpers

    counter = 0

    def search(items, target):
        for index, item in enumerate(items):
            if item == target:
                return index
        return -1

    class Box:
        def get(self, n):
            return helpers.twice(n)

        @staticmethod
        def make():
            return Box()

    def outer():
        def inner(x):
            return x + 1
        return inner(1)

    def bump():
        global counter
        counter += 1

    search([1, 2, 3], 3)            # called by top-level code before main() exists

    def main():
        for size in (10, 20, 30):
            search(list(range(size)), -1)
        Box.make().get(2)
        outer()
        bump()
        restored = pickle.loads(pickle.dumps(Box()))
        here = os.path.dirname(os.path.abspath(__file__))
        print("name", __name__, type(restored).__name__, counter, sys.argv[1:], sys.path[0] == here)

    if __name__ == "__main__":
        main()
"""

HELPERS = """\
    from os.path import join          # imported: a glob does not wrap it

    def twice(n):
        return 2 * n

    def _private(n):
        return n
"""


def test_pytrace_wraps_selected_functions_without_changing_the_program(perun_repo):
    root, shas = perun_repo
    write(root, "prog.py", PROGRAM)
    write(root, "helpers.py", HELPERS)
    events: list = []
    profile = collect(root, "pytrace", "prog.py", "one two", events,
                      functions=["search=len(args[0])", "prog:Box.*", "__main__:outer.<locals>.*", "helpers:*"])
    assert profile["origin"] == shas[-1]
    header = profile["header"]
    assert header["type"] == "mixed" and header["units"] == {"mixed(time delta)": "us"}
    assert header["cmd"] == "prog.py" and header["params"] == "one two" and header["calls"] == 8
    assert profile["collector_info"]["name"] == "pytrace"
    rows = profile["global"]["resources"]
    by_uid: dict = {}
    for row in rows:
        assert row["type"] == "mixed" and row["subtype"] == "time delta" and row["amount"] > 0
        by_uid.setdefault(row["uid"], []).append(row)
    # helpers.join was imported, not defined there: the glob leaves it alone; _private was never called
    assert sorted(by_uid) == ["helpers:twice", "prog:Box.get", "prog:Box.make", "prog:outer.<locals>.inner",
                              "prog:search"]
    searches = by_uid["prog:search"]
    assert [r["structure-unit-size"] for r in searches] == [3, 10, 20, 30]
    assert [r["caller"] for r in searches] == ["prog:<module>", "prog:main", "prog:main", "prog:main"]
    assert by_uid["helpers:twice"][0]["caller"] == "prog:Box.get"
    assert by_uid["prog:outer.<locals>.inner"][0]["caller"] == "prog:outer"
    assert "structure-unit-size" not in by_uid["prog:Box.get"][0]
    # the program saw itself as __main__, with its arguments, a working pickle and globals
    printed = [e.text for e in events if isinstance(e, ev.OutputLine)]
    assert printed == ["name __main__ Box 1 ['one', 'two'] True"]
    assert "unmatched_functions" not in header


def test_pytrace_size_expression_errors_are_counted_or_fail_the_job(perun_repo):
    root, _ = perun_repo
    write(root, "sizes.py", """\
        def work(*items):
            return len(items)

        work([1, 2])
        work()
        work([1])
    """)
    profile = collect(root, "pytrace", "sizes.py", functions=["work"], size="len(args[0])")
    rows = profile["global"]["resources"]
    assert [r.get("structure-unit-size") for r in rows] == [2, None, 1]
    assert profile["header"]["size_errors"] == {
        "sizes:work": {"calls": 1, "error": "IndexError: tuple index out of range"}}
    with pytest.raises(CollectionError, match=r"the size expression of sizes:work failed on every call: "
                                              r"the size expression gave str, not a number"):
        collect(root, "pytrace", "sizes.py", functions=["work=str(args)"])


@pytest.mark.parametrize("params, error, needle", [
    ({"functions": ["nothing:here"]}, CollectionError, r"no function matched the patterns nothing:here"),
    ({"functions": ["search="]}, InvalidParameter, r"a size expression after '='"),
    ({"functions": ["search=len("]}, InvalidParameter, r"'len\(' does not parse"),
    ({"functions": [":search"]}, InvalidParameter, r"lacks a module name"),
    ({"size": "len(args[0])"}, CollectionError, r"--function and --size need mode 'functions'"),
    ({"mode": "functions"}, CollectionError, r"needs patterns"),
])
def test_pytrace_refuses_bad_patterns(perun_repo, params, error, needle):
    root, _ = perun_repo
    write(root, "tiny.py", "def search():\n    pass\nsearch()\n")
    with pytest.raises(error, match=needle):
        collect(root, "pytrace", "tiny.py", **params)


def test_function_patterns_parse():
    assert parse_function_pattern("search") == ("__main__", "search", None)
    assert parse_function_pattern("pkg.*:Tree.insert = len(args[1])") == ("pkg.*", "Tree.insert", "len(args[1])")
    assert parse_function_pattern("m:f", "kwargs['n']") == ("m", "f", "kwargs['n']")
    assert parse_function_pattern("m:f=x if y == 1 else 2") == ("m", "f", "x if y == 1 else 2")


LIST_SEARCH = """\
    import random
    import sys

    def search(items, target):
        # no enumerate: an index above 256 is a new int object, so the cost per element would grow with the
        # share of such indexes (linear with a negative intercept, which a busy machine's noise can tip to n log n)
        for item in items:
            if item == target:
                return True
        return False

    def pairs(items):
        count = 0
        for a in items:
            for b in items:
                if a < b:
                    count += 1
        return count

    kind, top, step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sizes = list(range(step, top + 1, step))
    lists = {size: [0] * size for size in sizes}    # one shared element: no cache effects
    shuffle = random.Random(1).shuffle
    for _ in range(5):                 # rounds over all sizes in a new order each time
        shuffle(sizes)
        for size in sizes:
            search(lists[size], 1) if kind == "linear" else pairs(lists[size])
"""


def _best_model_of(profile: dict, uid: str) -> dict:
    """What `postprocessby ... regression_analysis` stores as the best model of ``uid``: every call fitted."""
    models = regression_analysis(profile).models
    return best_model([m for m in models if m["uid"] == uid])


def test_a_quadratic_function_gets_the_quadratic_model(perun_repo):
    """Every call the product recorded is fitted, as the product fits it: no fastest call per size, no retry.

    With ``--clock cpu`` (what pytrace advises on a busy machine) preemption does not stretch the calls; the
    robust choice of model copes with what a busy machine still does to CPU time (a sibling hyperthread's
    work, caches) and with calls that are much slower than their neighbours.  As for the linear search below,
    a power model counts when its exponent says quadratic: without a fixed cost the two are the same curve,
    and a busy machine can tip the choice between them.
    """
    root, _ = perun_repo
    write(root, "lists.py", LIST_SEARCH)
    profile = collect(root, "pytrace", "lists.py", "quadratic 600 30", functions=["lists:pairs=len(args[0])"],
                      clock="cpu")
    rows = profile["global"]["resources"]
    assert len(rows) == 5 * 20 and {r["uid"] for r in rows} == {"lists:pairs"}
    best = _best_model_of(profile, "lists:pairs")
    exponent = best["coeffs"][1]["value"] if best["model"] == "power" else None
    assert best["model"] == "quadratic" or (exponent is not None and abs(exponent - 2.0) < 0.15), best


def test_a_linear_function_gets_a_linear_model(perun_repo):
    """The same for a linear search; a power model counts when its exponent says linear (the two are alike
    when the call's fixed cost is small)."""
    root, _ = perun_repo
    write(root, "lists.py", LIST_SEARCH)
    profile = collect(root, "pytrace", "lists.py", "linear 15000 500", functions=["lists:search=len(args[0])"],
                      clock="cpu")
    assert len(profile["global"]["resources"]) == 5 * 30
    best = _best_model_of(profile, "lists:search")
    exponent = best["coeffs"][1]["value"] if best["model"] == "power" else None
    assert best["model"] == "linear" or (exponent is not None and abs(exponent - 1.0) < 0.15), best


CROWDED = """\
    def work(n):
        total = 0
        for i in range(n):
            total += i
        return total

    for size in range(20_000, 400_001, 20_000):
        work(size)
"""


@pytest.mark.busy  # four busy sessions (see machine_share in tests/conftest.py)
def test_a_preempted_wall_clock_run_advises_the_cpu_clock(perun_repo):
    root, _ = perun_repo
    write(root, "crowded.py", CROWDED)
    # four busy loops in sessions of their own, as other users' work: on two cores the program waits for a
    # CPU over and over (its own busy child would be reaped by perun and counted as its CPU time)
    with busy_sessions(4):
        result = run_cli("collect", "-c", "crowded.py", "pytrace", "-F", "work=args[0]", cwd=root)
    assert result.returncode == 0, result.stderr
    advice = [line for line in result.stdout.splitlines() if "advice:" in line]
    assert len(advice) == 1 and "preempted" in advice[0] and advice[0].endswith("collect again with --clock cpu")
    [path] = (root / ".perun" / "jobs").glob("*.perf")
    header = documented(path)["header"]
    assert header["advice"] == advice[0].strip()
    # what a check weighs a call's change against: how often the run waited for a core, and how long
    assert header["preemption"]["count"] >= 10 and header["preemption"]["wait_seconds"] > 0, header
    path.unlink()
    # the CPU clock is what the advice asks for: no advice then
    result = run_cli("collect", "-c", "crowded.py", "pytrace", "--clock", "cpu", "-F", "work=args[0]", cwd=root)
    assert result.returncode == 0 and "advice" not in result.stdout, result.stdout
    [path] = (root / ".perun" / "jobs").glob("*.perf")
    assert "advice" not in documented(path)["header"] and "preemption" not in documented(path)["header"]


@pytest.mark.parametrize("wall, cpu, switches, loads, cores, says", [
    (1.0, 0.95, 500, [0.1, 0.2], 2, None),                 # switched out often, but hardly waited
    (1.0, 0.5, 3, [0.1, 0.2], 2, None),                    # waited (sleeping, I/O), not preempted
    (1.0, 0.5, None, [None, None], None, None),           # nothing known
    (1.0, 0.5, 40, [0.1, 0.2], 2, "preempted 40 times and spent 50 % of its run off the CPU"),
    (1.0, 0.99, 0, [3.5, 1.0], 2, "the machine was busy (load 3.5 on 2 cores)"),
])
def test_busy_machine_advice(wall, cpu, switches, loads, cores, says):
    advice = busy_machine_advice(wall, cpu, switches, loads, cores)
    if says is None:
        assert advice is None
    else:
        assert says in advice and advice.startswith("advice: ") and advice.endswith("--clock cpu")


def test_pytrace_cprofile_mode(perun_repo):
    root, _ = perun_repo
    write(root, "calls.py", """\
        def leaf(n):
            return n * 2

        def branch(n):
            return sum(leaf(i) for i in range(n))

        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        branch(50)
        branch(30)
        fib(10)
    """)
    profile = collect(root, "pytrace", "calls.py")
    assert profile["header"]["type"] == "time" and profile["header"]["units"] == {"time": "s"}
    rows = profile["global"]["resources"]
    by = {(r["uid"], r["subtype"], r.get("caller")): r for r in rows}
    leaf = by[("calls.py:1(leaf)", "exclusive", None)]
    assert leaf["calls"] == 80 and leaf["function"] == "leaf" and leaf["source"] == "calls.py" and leaf["line"] == 1
    branch_in = by[("calls.py:4(branch)", "inclusive", None)]
    assert branch_in["calls"] == 2 and branch_in["amount"] >= by[("calls.py:4(branch)", "exclusive", None)]["amount"]
    fib = by[("calls.py:7(fib)", "exclusive", None)]
    assert fib["calls"] == 177 and fib["primitive_calls"] == 1
    edge = by[("calls.py:1(leaf)", "call", "calls.py:5(<genexpr>)")]
    assert edge["calls"] == 80 and edge["amount"] >= edge["exclusive"] > 0
    assert by[("calls.py:7(fib)", "call", "calls.py:7(fib)")]["calls"] == 176
    assert ("<built-in method builtins.sum>", "exclusive", None) in by
    # perun's own runner is not part of the profile
    assert not any("pyboot" in r["uid"] or "exec>" in r["uid"] for r in rows)


def test_pymemory_reports_the_line_of_a_large_list(perun_repo):
    root, _ = perun_repo
    write(root, "alloc.py", """\
        import time

        def build(n):
            data = [0] * n
            return data

        def main():
            kept = build(5_000_000)
            time.sleep(0.3)
            return kept

        if __name__ == "__main__":
            result = main()
    """)
    profile = collect(root, "pymemory", "alloc.py", interval=0.05)
    assert profile["header"]["type"] == "memory" and profile["header"]["units"] == {"memory": "B"}
    assert profile["header"]["peak"] >= 40_000_000
    snapshots = profile["snapshots"]
    assert len(snapshots) >= 3 and all(float(s["time"]) >= 0 for s in snapshots)
    last = snapshots[-1]
    largest = max(last["resources"], key=lambda r: r["amount"])
    assert largest["amount"] >= 40_000_000 and largest["type"] == "memory" and largest["subtype"] == "malloc"
    assert largest["uid"] == {"source": "alloc.py", "function": "build", "line": 4}
    assert [(f["function"], f["line"]) for f in largest["trace"]] == [("build", 4), ("main", 8), ("<module>", 13)]
    # allocations made while the program slept were sampled too, and nothing of perun's runner shows up
    assert sum(any(r["amount"] >= 40_000_000 for r in s["resources"]) for s in snapshots) >= 2
    assert not any("pyboot" in frame["source"] for s in snapshots for r in s["resources"] for frame in r["trace"])
    folded = to_flame_graph_format(Profile.from_dict(profile))
    assert any(line.startswith("<module>()~alloc.py~13;main()~alloc.py~8;build()~alloc.py~4 ") for line in folded)


MANY_OBJECTS = """\
    import sys
    import time

    def build(n):
        return [i * 7 + 1000 for i in range(n)]      # n distinct ints: n live blocks

    def churn():
        for _ in range(50):
            words = [str(i) for i in range(1000)]
        return words

    def main(n, hold):
        items = build(n)
        time.sleep(hold)            # the program's largest moment
        del items
        return churn()

    main(int(sys.argv[1]), float(sys.argv[2]))
"""


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_pymemory_snapshots_the_peak_of_many_objects_within_its_budget(perun_repo):
    """Each snapshot walks every live block: they are rationed, but the largest moment is caught.

    The list is gone before the program ends, so only a snapshot taken while
    it lived (at a new peak, or a regular one) can show it.  The CPU time of
    the profiled process is compared with the same program under bare
    tracemalloc, which costs the same per allocation; the bound is loose
    (CPU time, not wall time, so a busy machine does not fail it; the
    slower of two baseline runs): about 1.5 here, and 4 to 10 before the
    snapshots were rationed and the bootstrap's frames made cheap.
    """
    root, _ = perun_repo
    write(root, "many.py", MANY_OBJECTS)
    size = 100_000
    before = child_cpu()
    profile = collect(root, "pymemory", "many.py", f"{size} 2")
    pymemory_cpu = child_cpu() - before
    snapshots = profile["snapshots"]
    totals = [sum(r["amount"] for r in s["resources"]) for s in snapshots]
    largest = snapshots[totals.index(max(totals))]
    top = max(largest["resources"], key=lambda r: r["amount"])
    assert top["uid"] == {"source": "many.py", "function": "build", "line": 5}
    assert top["allocations"] >= 0.8 * size
    assert profile["header"]["peak"] >= top["amount"]
    assert not any(r["uid"]["line"] == 5 and r["allocations"] > 1000 for r in snapshots[-1]["resources"])
    assert 2 <= len(snapshots) <= 60
    floors = []
    for _ in range(2):
        before = child_cpu()
        subprocess.run([PY, "-X", "tracemalloc=16", "many.py", str(size), "0"], cwd=root, check=True)
        floors.append(child_cpu() - before)
    assert pymemory_cpu < 3 * max(floors) + 0.3, (pymemory_cpu, floors)


def test_function_names_come_from_the_sources(tmp_path):
    source = write(tmp_path, "names.py", """\
        x = 1

        class A:
            y = [2]

            def m(self):
                def inner():
                    return 3
                return inner
    """)
    names = FunctionNames()
    assert [names(str(source), line) for line in (1, 4, 6, 8, 9)] == ["<module>", "A", "A.m", "A.m.<locals>.inner",
                                                                       "A.m"]
    assert names("<frozen importlib._bootstrap>", 3) == "?" and names(str(tmp_path / "gone.py"), 1) == "?"


FAILING = """\
    import os
    import subprocess
    import sys
    import time

    def divide(n):
        return 10 / n

    mode = sys.argv[1]
    if mode == "raise":
        divide(0)
    elif mode == "exit":
        raise SystemExit(3)
    elif mode == "osexit":
        os._exit(5)
    elif mode == "hang":
        child = subprocess.Popen(["sleep", "600"])
        with open(sys.argv[2], "w") as handle:
            handle.write(str(child.pid))
        time.sleep(600)
"""


@pytest.mark.parametrize("collector", ["pytrace", "pymemory"])
def test_a_program_that_raises_fails_with_its_traceback(perun_repo, collector):
    root, _ = perun_repo
    write(root, "failing.py", FAILING)
    params = {"functions": ["divide"]} if collector == "pytrace" else {}
    with pytest.raises(CollectionError) as info:
        collect(root, collector, "failing.py", "raise", **params)
    error = info.value
    assert error.message == (f"{collector}: failing.py raise: the Python program raised "
                             "ZeroDivisionError: division by zero")
    assert error.exit_status == 1
    tail = error.stderr_tail.splitlines()
    assert tail[0] == "Traceback (most recent call last):" and tail[-1] == "ZeroDivisionError: division by zero"
    assert any('failing.py", line 7, in divide' in line for line in tail)
    assert not any("pyboot" in line or "start.py" in line for line in tail)
    assert list((root / ".perun/jobs").iterdir()) == []


def test_exit_status_os_exit_and_keep_failed(perun_repo):
    root, _ = perun_repo
    write(root, "failing.py", FAILING)
    with pytest.raises(CollectionError, match=r"the Python program exited with status 3$") as info:
        collect(root, "pytrace", "failing.py", "exit")
    assert info.value.exit_status == 3
    with pytest.raises(CollectionError, match=r"exited with status 5 and ended without leaving results"):
        collect(root, "pytrace", "failing.py", "osexit", functions=["divide"])
    kept = collect(root, "pytrace", "failing.py", "raise", functions=["divide"], keep_failed=True)
    assert kept["header"]["failed_run"] == {"exit_status": 1, "exception": "ZeroDivisionError: division by zero"}
    assert [r["uid"] for r in kept["global"]["resources"]] == ["failing:divide"]


def test_timeout_kills_the_program_and_its_children(perun_repo, tmp_path):
    root, _ = perun_repo
    write(root, "failing.py", FAILING)
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    # 5 s: long enough for the program to reach its hang on a busy machine; its child would sleep for 600
    with pytest.raises(CollectionError, match=r"timed out after 5 s \(the program was killed\)"):
        collect(root, "pytrace", "failing.py", f"hang {pid_file}", timeout=5)
    assert time.monotonic() - started < 300
    assert process_gone(int(pid_file.read_text()))


HANGING = """\
    import time

    def wait_for_godot():
        time.sleep(600)

    wait_for_godot()
"""


@pytest.mark.parametrize("collector, params", [("pytrace", {"functions": ["wait_for_godot"]}), ("pymemory", {})])
def test_a_timed_out_program_shows_where_it_hung(perun_repo, collector, params):
    root, _ = perun_repo
    write(root, "hanging.py", HANGING)
    # 5 s: long enough for the program to reach its sleep on a busy machine
    with pytest.raises(CollectionError, match=r"timed out after 5 s") as info:
        collect(root, collector, "hanging.py", timeout=5, **params)
    tail = info.value.stderr_tail.splitlines()
    assert tail == ["Stack of the program shortly before it was killed (most recent call first):",
                    '  File "hanging.py", line 4 in wait_for_godot',
                    '  File "hanging.py", line 6 in <module>']
    assert "wait_for_godot" in info.value.hint


def test_hang_report_keeps_the_program_threads_only(tmp_path):
    own = BOOTSTRAP.parent
    (tmp_path / "hang.txt").write_text(f"""\
Timeout (0:00:01.350000)!
Thread 0x00007f0000000002 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "{tmp_path}/app/worker.py", line 9 in poll
  File "{own}/pyboot.py", line 230 in wrapper
  File "/usr/lib/python3.11/threading.py", line 975 in run

Thread 0x00007f0000000001 (most recent call first):
  File "{own}/pyboot.py", line 480 in _loop
  File "/usr/lib/python3.11/threading.py", line 975 in run

Thread 0x00007f0000000000 (most recent call first):
  File "{tmp_path}/app/main.py", line 3 in <module>
  File "{own}/pyboot.py", line 800 in run
  File "{own}/start.py", line 17 in <module>
""")
    assert hang_report(tmp_path / "hang.txt", tmp_path).splitlines() == [
        "Stacks of the program's threads shortly before it was killed:",
        "Thread 0x00007f0000000002 (most recent call first):",
        '  File "/usr/lib/python3.11/threading.py", line 320 in wait',
        '  File "app/worker.py", line 9 in poll',
        '  File "/usr/lib/python3.11/threading.py", line 975 in run',
        "Thread 0x00007f0000000000 (most recent call first):",
        '  File "app/main.py", line 3 in <module>',
    ]
    assert hang_report(tmp_path / "missing.txt", tmp_path) == ""


def test_modules_interpreters_and_missing_programs(perun_repo):
    root, _ = perun_repo
    write(root, "pkg/__init__.py", "")
    write(root, "pkg/__main__.py", "from pkg.core import work\nwork(4)\n")
    write(root, "pkg/core.py", "def work(n):\n    return [n] * n\n")
    profile = collect(root, "pytrace", "-m", "pkg", functions=["pkg.*:work=args[0]"])
    assert [(r["uid"], r["structure-unit-size"], r["caller"]) for r in profile["global"]["resources"]] == [
        ("pkg.core:work", 4, "pkg:<module>")]
    again = collect(root, "pytrace", PY, "pkg/core.py", functions=["core:*"])
    assert again["global"]["resources"] == [] and again["header"]["python"] == ".".join(map(str, sys.version_info[:3]))
    with pytest.raises(CollectionError, match=r"Python script not found: nope.py"):
        collect(root, "pytrace", "nope.py")
    with pytest.raises(CollectionError, match=r"Python interpreter not found: python3.99"):
        collect(root, "pymemory", "python3.99", "pkg/core.py")
    with pytest.raises(CollectionError, match=r"interpreter option -c is not supported"):
        collect(root, "pytrace", PY, "-c pass")


def test_collect_pytrace_from_the_command_line(perun_repo):
    root, _ = perun_repo
    write(root, "lists.py", LIST_SEARCH)
    result = run_cli("collect", "pytrace", "-F", "lists:search", "-s", "len(args[0])", "lists.py", "linear", "300",
                     "100", cwd=root)
    assert result.returncode == 0, result.stderr
    written = list((root / ".perun/jobs").iterdir())
    assert len(written) == 1
    profile = documented(written[0])
    assert sorted({r["structure-unit-size"] for r in profile["global"]["resources"]}) == [100, 200, 300]
    assert profile["collector_info"]["params"]["functions"] == ["lists:search"]
    help_text = run_cli("collect", "pymemory", "--help", cwd=root).stdout
    assert "--interval" in help_text and "tracemalloc" in help_text


def test_a_module_after_collect_needs_a_double_dash(perun_repo):
    root, _ = perun_repo
    write(root, "pkg/__init__.py", "")
    write(root, "pkg/__main__.py", "def work(n):\n    return [n] * n\nwork(3)\n")
    taken = run_cli("collect", "pytrace", "-m", "pkg", cwd=root)
    assert taken.returncode == 2
    assert "no command to profile" in taken.stderr
    assert "perun-core collect pytrace -- -m pkg" in taken.stderr
    done = run_cli("collect", "pytrace", "-F", "pkg:work", "--", "-m", "pkg", cwd=root)
    assert done.returncode == 0, done.stderr
    for name in ("pytrace", "pymemory"):
        help_text = "".join(run_cli("collect", name, "--help", cwd=root).stdout.split())
        assert f"collect{name}---mpkg.toolARGS" in help_text


def test_the_local_template_shows_workload_generators_that_load():
    """The commented ``generators:`` example of local.yml, uncommented, is a valid generators section."""
    import yaml

    from perun_core.config import validate_data
    from perun_core.runner.generators import check_generators
    from perun_core.config.templates import TEMPLATES, render_local_config

    for template in TEMPLATES:
        lines = render_local_config(template, project_root=Path("/nonexistent")).splitlines()
        start = lines.index("# generators:")
        end = lines.index("", start)
        data = yaml.safe_load("\n".join(line[2:] for line in lines[start:end]))
        validate_data(data)
        generators = check_generators(data["generators"]["workload"])
        assert [(g.id, g.type) for g in generators] == [("sizes", "integer"), ("texts", "textfile")]


def test_library_functions_forks_and_deep_recursion(perun_repo):
    root, _ = perun_repo
    write(root, "lib.py", """\
        import json
        import os
        import textwrap

        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)

        json.dumps([1, 2])
        textwrap.dedent("  x")
        depth(900)                      # 900 wrapped calls deep: 1800 frames
        pid = os.fork()
        if pid == 0:                    # a child that calls wrapped functions and exits normally
            json.dumps([3])
            raise SystemExit(0)
        os.waitpid(pid, 0)
        json.dumps([4])
    """)
    profile = collect(root, "pytrace", "lib.py", functions=["json:dumps=len(args[0])", "textwrap:dedent", "depth"])
    rows = profile["global"]["resources"]
    dumps = [r for r in rows if r["uid"] == "json:dumps"]
    assert [(r["structure-unit-size"], r["caller"]) for r in dumps] == [(2, "lib:<module>"), (1, "lib:<module>")]
    assert [r["caller"] for r in rows if r["uid"] == "textwrap:dedent"] == ["lib:<module>"]
    assert sum(r["uid"] == "lib:depth" for r in rows) == 901


def test_requirements_name_the_interpreter():
    from perun_core.units.requirements import check_unit

    for name in ("pytrace", "pymemory"):
        check = check_unit("collector", name)
        assert check.usable and check.requirements[0].name == "Python interpreter"
        assert "Python 3." in check.requirements[0].detail
