"""Collectors for native programs: memory, trace, perf and callgrind on small C programs with known behaviour."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from runhelpers import build_c, line_of, run_env, documented  # noqa: F401 - run_env: autouse fixture
from tools import machine_cannot, need_tools, require

from perun_core.api import run as api_run
from perun_core.collect.callgrind import callgrind_resources, parse_callgrind
from perun_core.collect import uprobes
from perun_core.collect.perf import (base_event, parse_perf_script, parse_perf_stat, perf_command, perf_permission,
                                     signal_reported, stack_resources)
from perun_core.collect.trace import _sampling_rules, instrumentation_flags
from perun_core.collect.uprobes import uprobes_requirement
from perun_core.errors import CollectionError, ExternalToolError
from perun_core.profile.convert import to_flame_graph_format, to_heap_map_format
from perun_core.units import UnitContext, call_phase, collectors, convert_params
from perun_core.units.requirements import check_unit

# a mark, not an autouse module fixture: that would put the whole module in one xdist group (tests/conftest.py),
# while only the tests on the compiled programs need to share a worker
pytestmark = pytest.mark.tools("cc")


@pytest.fixture
def needs_valgrind():
    need_tools("valgrind")

MEMORY_C = r"""
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static char *make(size_t n) {
    return malloc(n);                                   /* M_MAKE */
}
int main(void) {
    char *a = malloc(100);                              /* M_MALLOC */
    int *b = calloc(10, sizeof(int));                   /* M_CALLOC */
    a = realloc(a, 200);                                /* M_REALLOC */
    void *c = NULL;
    if (posix_memalign(&c, 64, 256) != 0) return 9;     /* M_POSIX */
    void *d = aligned_alloc(32, 64);                    /* M_ALIGNED */
    void *e = memalign(16, 48);                         /* M_MEMALIGN */
    void *f = valloc(4096);                             /* M_VALLOC */
    char *g = make(77);
    free(b);                                            /* M_FREE_B */
    free(c); free(d); free(e); free(f); free(g);        /* M_FREE_REST */
    free(a);                                            /* M_FREE_A */
    write(1, "done\n", 5);
    return 3;
}
"""

STRDUP_C = r"""
#include <stdlib.h>
#include <string.h>
static char *copy(const char *text) {
    return strdup(text);                                /* S_DUP */
}
int main(void) {
    char *c = copy("hello");                            /* S_CALL */
    free(c);
    return 0;
}
"""

THREADS_C = r"""
#include <pthread.h>
#include <stdlib.h>
#define EACH 500
static void *worker(void *arg) {
    long id = (long)arg;
    void *blocks[EACH];
    for (int i = 0; i < EACH; i++) blocks[i] = malloc(1000 + id);   /* T_MALLOC */
    for (int i = 0; i < EACH; i++) free(blocks[i]);
    return NULL;
}
int main(void) {
    pthread_t threads[4];
    for (long t = 0; t < 4; t++) pthread_create(&threads[t], NULL, worker, (void *)t);
    for (int t = 0; t < 4; t++) pthread_join(threads[t], NULL);
    return 0;
}
"""

FORK_C = r"""
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int work(int n) { return n <= 0 ? 0 : 1 + work(n - 1); }
int main(void) {
    void *p = malloc(111);
    pid_t pid = fork();
    if (pid == 0) {
        void *q = malloc(222);
        free(q);
        work(2);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    void *r = malloc(333);
    free(r);
    free(p);
    return work(1) == 1 ? 0 : 1;
}
"""

CRASH_C = r"""
#include <stdlib.h>
void boom(void) { *(volatile int *)0 = 1; }
int main(void) {
    void *p = malloc(444);
    (void)p;
    boom();
    return 0;
}
"""

ORPHAN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    pid_t pid = fork();
    if (pid == 0) {
        /* written whole, then renamed: the parent sees the file only with the pid in it */
        char partial[4096];
        snprintf(partial, sizeof partial, "%s.partial", argv[1]);
        FILE *out = fopen(partial, "w");
        fprintf(out, "%d\n", (int)getpid());
        fclose(out);
        rename(partial, argv[1]);
        sleep(60);
        return 0;
    }
    free(malloc(10));
    while (access(argv[1], F_OK) != 0) usleep(1000);
    return 0;
}
"""

FIB_C = r"""
#include <stdlib.h>
int fib(int n) {
    if (n < 2) return n;
    return fib(n - 1) + fib(n - 2);
}
int main(int argc, char **argv) {
    return fib(argc > 1 ? atoi(argv[1]) : 5) == 5 ? 0 : 1;
}
"""

TRACE_THREADS_C = r"""
#include <pthread.h>
int work(int n) { return n <= 0 ? 0 : 1 + work(n - 1); }
void *run(void *arg) { work((int)(long)arg); return 0; }
int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, run, (void *)3);
    pthread_create(&b, 0, run, (void *)5);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return work(2) == 2 ? 0 : 1;
}
"""

CALLS_C = r"""
static volatile long sink;
int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
void leaf(int n) { for (int i = 0; i < n; i++) sink += i; }
void middle(int n) { leaf(n); leaf(n * 2); }
int main(void) { middle(1000); sink += fact(10); return 0; }
"""

MANY_THREADS_C = r"""
#include <pthread.h>
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) int leaf(int n) { sink += n; return n; }
static int each;
static void *run(void *arg) { (void)arg; for (int i = 0; i < each; i++) leaf(i); return 0; }
int main(int argc, char **argv) {
    each = argc > 1 ? atoi(argv[1]) : 2000;
    pthread_t threads[8];
    for (int t = 0; t < 8; t++) pthread_create(&threads[t], 0, run, 0);
    for (int t = 0; t < 8; t++) pthread_join(threads[t], 0);
    return 0;
}
"""

SLL_CPP = r"""
struct SLL {
    int search(int n);
    int insert(int n);
};
__attribute__((noinline)) int SLL::search(int n) { return n; }
__attribute__((noinline)) int SLL::insert(int n) { return search(n); }
int main() {
    SLL list;
    int total = 0;
    for (int i = 0; i < 10; i++) total += list.insert(i);
    return total == 45 ? 0 : 1;
}
"""

BUSY_C = r"""
static volatile long sink;
__attribute__((noinline)) void hot(long n) { for (long i = 0; i < n; i++) sink += i * i; }
__attribute__((noinline)) void cold(long n) { for (long i = 0; i < n / 20; i++) sink += i; }
int main(void) { for (int k = 0; k < 6; k++) { hot(15000000); cold(15000000); } return 0; }
"""




@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("native-programs")
    built = {name: build_c(directory, name, source) for name, source in (
        ("memory", MEMORY_C), ("strdup", STRDUP_C), ("threads", THREADS_C), ("fork", FORK_C), ("crash", CRASH_C), ("orphan", ORPHAN_C),
        ("calls", CALLS_C), ("fib_plain", FIB_C), ("many_threads", MANY_THREADS_C))}
    built["busy"] = build_c(directory, "busy", BUSY_C, "-O1", "-fno-omit-frame-pointer")
    for name, source in (("fib.c", FIB_C), ("threads_trace.c", TRACE_THREADS_C), ("fork_trace.c", FORK_C),
                         ("crash_trace.c", CRASH_C), ("sll.cpp", SLL_CPP)):
        (directory / name).write_text(source)
    built["dir"] = directory
    return built


def collect(name: str, argv: list, cwd: Path, **params):
    """Run a collector's phases directly; returns (profile, output lines)."""
    unit = collectors.get(name)
    kwargs = convert_params(name, unit.params, params)
    kwargs.update(cmd=str(argv[0]), args=" ".join(map(str, argv[1:])), workload="", argv=[str(a) for a in argv])
    lines = []
    ctx = UnitContext(Path(cwd), lambda event: lines.append(event), label=f"{name}: {argv[0]}")
    for phase in ("before", "collect", "after"):
        result = call_phase(unit, phase, ctx, kwargs)
        if result is not None:
            assert result.status == 0, result.message
            kwargs = result.kwargs
    return kwargs["profile"], [(e.stream, e.text) for e in lines if hasattr(e, "stream")]


def rows(profile) -> list[dict]:
    return [row for _, region in profile.regions() for row in region.resources.rows()]


def leftovers(tmpdir: Path) -> list[str]:
    return sorted(name for name in os.listdir(tmpdir) if name.startswith("perun-"))


# -- memory -------------------------------------------------------------------------------------

def test_memory_reports_every_allocator_with_size_line_and_matching_frees(programs, run_env):
    profile, output = collect("memory", [programs["memory"]], programs["dir"], keep_failed=True)
    source = str(programs["dir"] / "memory.c")
    mine = [r for r in rows(profile) if r["uid"]["source"] == source]
    seen = [(r["subtype"], r["amount"], r["uid"]["line"]) for r in mine]
    line = lambda marker: line_of(MEMORY_C, marker)  # noqa: E731
    assert seen == [
        ("malloc", 100, line("M_MALLOC")), ("calloc", 40, line("M_CALLOC")), ("realloc", 200, line("M_REALLOC")),
        ("posix_memalign", 256, line("M_POSIX")), ("aligned_alloc", 64, line("M_ALIGNED")),
        ("memalign", 48, line("M_MEMALIGN")), ("valloc", 4096, line("M_VALLOC")), ("malloc", 77, line("M_MAKE")),
        ("free", 40, line("M_FREE_B")), ("free", 256, line("M_FREE_REST")), ("free", 64, line("M_FREE_REST")),
        ("free", 48, line("M_FREE_REST")), ("free", 4096, line("M_FREE_REST")), ("free", 77, line("M_FREE_REST")),
        ("free", 200, line("M_FREE_A")),
    ]
    allocated = {r["address"]: r for r in mine if r["subtype"] != "free"}
    frees = [r for r in mine if r["subtype"] == "free"]
    assert all(allocated[f["address"]]["amount"] == f["amount"] for f in frees)
    first, realloc = mine[0], mine[2]
    assert realloc["old_address"] == first["address"] and "old_address" not in first
    assert [f["address"] for f in frees][-1] == realloc["address"]
    made = mine[7]
    assert [(f["function"], f["line"]) for f in made["trace"][:2]] == [("make", line("M_MAKE")), ("main", line("make(77)"))]
    assert profile.type == "memory" and profile.units == {"memory": "B"} and profile.header["exit_status"] == 3
    assert output == [("stdout", "done")]
    assert leftovers(run_env) == []


def test_memory_output_and_exit_status_are_the_programs_own(programs):
    plain = subprocess.run([programs["memory"]], capture_output=True)
    with pytest.raises(CollectionError) as info:
        collect("memory", [programs["memory"]], programs["dir"])
    assert info.value.exit_status == plain.returncode == 3 and plain.stdout == b"done\n"
    assert "the profiled command exited with status 3" in info.value.message


def test_memory_options_all_traces_filters_and_dwarf_unwinding(programs):
    argv, cwd = [programs["memory"]], programs["dir"]
    full, _ = collect("memory", argv, cwd, keep_failed=True, all=True)
    made = next(r for r in rows(full) if r["amount"] == 77 and r["subtype"] == "malloc")
    assert made["trace"][0] == {"function": "malloc", "source": "unreachable", "line": 0}
    assert [f["function"] for f in made["trace"][1:3]] == ["make", "main"]
    assert made["uid"]["function"] == "make"
    no_make, _ = collect("memory", argv, cwd, keep_failed=True, no_func=["make"])
    assert 77 not in [r["amount"] for r in rows(no_make) if r["subtype"] == "malloc"]
    assert 100 in [r["amount"] for r in rows(no_make)]
    no_source, _ = collect("memory", argv, cwd, keep_failed=True, no_source=["memory.c"])
    assert not [r for r in rows(no_source) if r["uid"]["source"].endswith("memory.c")]
    dwarf, _ = collect("memory", argv, cwd, keep_failed=True, unwind="dwarf")
    made = next(r for r in rows(dwarf) if r["amount"] == 77 and r["subtype"] == "malloc")
    assert [f["function"] for f in made["trace"][:2]] == ["make", "main"]
    # snapshots end on multiples of the 25 ms sampling interval; which one holds the first
    # allocation depends on how fast the program starts (later on a busy machine)
    first = dwarf.snapshots[0].meta["time"]
    assert first.endswith(("25000", "50000", "75000", "00000")) and round(float(first) / 0.025, 6).is_integer()


def test_memory_allocations_inside_library_functions_keep_their_caller(programs):
    source = str(programs["dir"] / "strdup.c")
    where = lambda row: [(f["function"], f["line"]) for f in row["trace"] if f["source"] == source]  # noqa: E731
    auto, _ = collect("memory", [programs["strdup"]], programs["dir"])
    copied = next(r for r in rows(auto) if r["subtype"] == "malloc" and r["amount"] == 6)
    assert where(copied) == [("copy", line_of(STRDUP_C, "S_DUP")), ("main", line_of(STRDUP_C, "S_CALL"))]
    assert copied["uid"]["function"] == "copy"
    walked, _ = collect("memory", [programs["strdup"]], programs["dir"], unwind="fp")
    copied = next(r for r in rows(walked) if r["subtype"] == "malloc" and r["amount"] == 6)
    assert ("copy", line_of(STRDUP_C, "S_DUP")) not in where(copied)  # strdup keeps no frame pointer


def test_memory_threads_every_block_counted_once(programs):
    profile, _ = collect("memory", [programs["threads"]], programs["dir"])
    source_line = line_of(THREADS_C, "T_MALLOC")
    mallocs = Counter(r["amount"] for r in rows(profile) if r["subtype"] == "malloc" and r["uid"]["line"] == source_line)
    frees = Counter(r["amount"] for r in rows(profile) if r["subtype"] == "free" and r["amount"] >= 1000)
    assert mallocs == {1000: 500, 1001: 500, 1002: 500, 1003: 500} == frees
    assert all(r["uid"]["function"] == "worker" for r in rows(profile) if r["uid"]["line"] == source_line)


def test_memory_fork_gives_each_process_its_own_records(programs):
    profile, _ = collect("memory", [programs["fork"]], programs["dir"])
    source = str(programs["dir"] / "fork.c")
    mine = [(r["process"], r["subtype"], r["amount"]) for r in rows(profile) if r["uid"]["source"] == source]
    assert sorted(mine) == [(1, "free", 111), (1, "free", 333), (1, "malloc", 111), (1, "malloc", 333),
                            (2, "free", 222), (2, "malloc", 222)]


def test_memory_crash_fails_clearly_or_keeps_what_was_recorded(programs, run_env):
    with pytest.raises(CollectionError) as info:
        collect("memory", [programs["crash"]], programs["dir"])
    assert info.value.exit_status == -signal.SIGSEGV and "was killed by SIGSEGV" in info.value.message
    profile, _ = collect("memory", [programs["crash"]], programs["dir"], keep_failed=True)
    assert [(r["subtype"], r["amount"]) for r in rows(profile) if r["uid"]["function"] == "main"] == [("malloc", 444)]
    assert profile.header["exit_status"] == -signal.SIGSEGV
    assert leftovers(run_env) == []


def test_leftover_children_are_killed_and_nothing_stays_behind(programs, run_env, tmp_path):
    marker = tmp_path / "child.pid"
    started = time.monotonic()
    collect("memory", [programs["orphan"], marker], programs["dir"])
    assert time.monotonic() - started < 20
    child = int(marker.read_text())
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{child}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.02)
    else:
        pytest.fail(f"the forked child {child} still runs")
    assert leftovers(run_env) == []


def test_memory_timeout_kills_the_run(programs, run_env):
    started = time.monotonic()
    with pytest.raises(CollectionError, match="timed out after 0.3 s"):
        collect("memory", ["sleep", "30"], programs["dir"], timeout=0.3)
    assert time.monotonic() - started < 10 and leftovers(run_env) == []


def test_cancelling_a_run_stops_it_and_cleans_up(programs, run_env):
    import threading

    from perun_core.errors import Interrupted

    unit = collectors.get("memory")
    kwargs = convert_params("memory", unit.params, {})
    kwargs.update(cmd="sleep", args="30", workload="", argv=["sleep", "30"])
    ctx = UnitContext(programs["dir"], label="memory: sleep 30")
    kwargs = unit.before(ctx, kwargs).kwargs
    threading.Timer(0.3, ctx.cancelled.set).start()
    started = time.monotonic()
    with pytest.raises(Interrupted):
        unit.collect(ctx, kwargs)
    assert time.monotonic() - started < 10 and leftovers(run_env) == []


def test_memory_profile_drives_the_heap_map(programs):
    profile, _ = collect("memory", [programs["memory"]], programs["dir"], keep_failed=True)
    heap = to_heap_map_format(profile)
    sites = {(i["function"], i["line"]) for i in heap["info"]}
    assert ("main", line_of(MEMORY_C, "M_VALLOC")) in sites and ("make", line_of(MEMORY_C, "M_MAKE")) in sites
    entries = [e for s in heap["snapshots"] for e in s["map"]]
    assert {"valloc", "posix_memalign", "realloc"} <= {e["subtype"] for e in entries}
    assert heap["unit"] == "B" and heap["stats"]["allocations"] == len(entries)
    site = f"main()~{programs['dir'] / 'memory.c'}~{line_of(MEMORY_C, 'M_MALLOC')}"
    assert any(line.endswith(f"{site} 100") for line in to_flame_graph_format(profile))


def test_statically_linked_programs_are_refused_clearly(programs, tmp_path):
    try:
        binary = build_c(tmp_path, "static", "int main(void) { return 0; }\n", "-static")
    except subprocess.CalledProcessError:
        require(False, "a static C library to link with (Debian: libc6-dev)")
        raise
    with pytest.raises(CollectionError, match="did not load the memory library"):
        collect("memory", [binary], tmp_path)


def test_missing_compiler_is_named(monkeypatch, tmp_path):
    from perun_core import native

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(ExternalToolError) as info:
        native.library("memory")
    assert info.value.message == "'cc' is required but was not found" and "apt-get install gcc" in info.value.hint


def test_memory_profile_is_stored_through_the_api(perun_repo, programs):
    root, shas = perun_repo
    result = api_run.collect("memory", [str(programs["threads"])], [], [], {"sampling": 0.5}, cwd=root)
    stored = documented(result.profiles[0].path)
    assert stored["origin"] == shas[-1] and stored["header"]["type"] == "memory"
    assert stored["collector_info"]["params"]["sampling"] == 0.5
    assert sum(1 for s in stored["snapshots"] for r in s["resources"] if r["subtype"] == "malloc"
               and r["amount"] == 1002) == 500


# -- trace --------------------------------------------------------------------------------------

def fib_tree(n: int, depth: int) -> list[tuple[str, int]]:
    calls = [("fib", depth)]
    if n >= 2:
        calls += fib_tree(n - 1, depth + 1) + fib_tree(n - 2, depth + 1)
    return calls


def check_tree(resources: list[dict]) -> None:
    """Children's inclusive times sum to at most their parent's; exclusive = inclusive - children."""
    by_order = sorted(resources, key=lambda r: r["call-order"])
    stack: list[dict] = []
    children: dict[int, int] = {}
    for row in by_order:
        while stack and stack[-1]["depth"] >= row["depth"]:
            stack.pop()
        if stack:
            parent = stack[-1]
            assert row["caller"] == parent["uid"] and row["depth"] == parent["depth"] + 1
            children[parent["call-order"]] = children.get(parent["call-order"], 0) + row["amount"]
        else:
            assert "caller" not in row
        stack.append(row)
    for row in resources:
        below = children.get(row["call-order"], 0)
        assert below <= row["amount"] and row["exclusive"] == row["amount"] - below >= 0


def test_trace_reports_the_call_tree_of_a_recursion(programs):
    profile, _ = collect("trace", ["./fib", "5"], programs["dir"], files=["fib.c"], cflags=["-O0"])
    found = sorted(rows(profile), key=lambda r: r["call-order"])
    assert [(r["uid"], r["depth"]) for r in found] == [("main", 0)] + fib_tree(5, 1)
    assert [r["call-order"] for r in found] == list(range(1, 17))
    check_tree(found)
    deepest = found[5]
    assert [f["function"] for f in deepest["trace"]] == ["fib"] * 5 + ["main"]
    assert {r["thread"] for r in found} == {1} and profile.type == "mixed"
    assert profile.units["mixed(time delta)"] == "ns" and "incomplete" not in found[0]
    # the calls' wall times come with how often the run waited for a core (what a check weighs them against)
    assert set(profile.header["preemption"]) == {"count", "wait_seconds"}, profile.header
    folded = to_flame_graph_format(profile, of="exclusive")
    assert sum(int(line.rsplit(" ", 1)[1]) for line in folded) == found[0]["amount"]
    assert any(line.startswith("main();fib();fib();fib();fib();fib() ") for line in folded)


def test_trace_rules_sampling_and_workload_size(programs):
    cwd = programs["dir"]
    only, _ = collect("trace", ["./fib", "5"], cwd, files=["fib.c"], rules=["fi?"])
    assert Counter(r["uid"] for r in rows(only)) == {"fib": 15}
    assert min(r["depth"] for r in rows(only)) == 0 and all("structure-unit-size" not in r for r in rows(only))
    sampled, _ = collect("trace", ["./fib", "5"], cwd, files=["fib.c"], sampling=["fib=2"])
    assert Counter(r["uid"] for r in rows(sampled)) == {"main": 1, "fib": 8}
    check_tree(rows(sampled))
    unit = collectors.get("trace")
    kwargs = convert_params("trace", unit.params, {"files": ["fib.c"], "rules": ["fib"], "global_sampling": 3})
    kwargs.update(cmd="./fib", args="", workload="5", argv=["./fib", "5"])
    ctx = UnitContext(cwd, label="trace")
    kwargs = unit.collect(ctx, unit.before(ctx, kwargs).kwargs).kwargs
    found = rows(kwargs["profile"])
    assert len(found) == 5 and {r["structure-unit-size"] for r in found} == {5}


def test_trace_of_your_own_build_and_of_an_uninstrumented_one(programs, tmp_path):
    flags = instrumentation_flags()
    assert flags == {"cflags": ["-finstrument-functions", "-g"], "ldflags": []}
    binary = tmp_path / "fib"
    subprocess.run(["cc", "-O1", *flags["cflags"], "-o", str(binary), str(programs["dir"] / "fib.c")], check=True)
    assert subprocess.run([binary, "5"]).returncode == 0  # runs as usual outside perun
    profile, _ = collect("trace", [binary, "5"], tmp_path)
    assert Counter(r["uid"] for r in rows(profile)) == {"main": 1, "fib": 15}
    assert {r["trace"][0]["function"] for r in rows(profile)} == {"main", "fib"}
    with pytest.raises(CollectionError, match="no calls were recorded: build the program with -finstrument-functions"):
        collect("trace", [programs["fib_plain"]], tmp_path)
    (tmp_path / "bad.c").write_text("int main(void) { return nope; }\n")
    with pytest.raises(CollectionError) as info:
        collect("trace", ["./bad"], tmp_path, files=["bad.c"])
    assert "compiling the instrumented bad failed" in info.value.message and "nope" in info.value.hint


def test_trace_threads_fork_and_crash(programs, run_env):
    cwd = programs["dir"]
    profile, _ = collect("trace", ["./threads"], cwd, files=["threads_trace.c"], cflags=["-O0"])
    per_thread = {}
    for row in rows(profile):
        per_thread.setdefault(row["thread"], []).append(row)
    assert sorted(Counter(r["uid"] for r in calls).most_common() for calls in per_thread.values()) == sorted([
        [("work", 3), ("main", 1)], [("work", 4), ("run", 1)], [("work", 6), ("run", 1)]])
    for calls in per_thread.values():
        check_tree(calls)
    forked, _ = collect("trace", ["./fork"], cwd, files=["fork_trace.c"], cflags=["-O0"])
    assert Counter((r["process"], r["uid"]) for r in rows(forked)) == {(1, "main"): 1, (1, "work"): 2,
                                                                       (2, "work"): 3}
    with pytest.raises(CollectionError, match="was killed by SIGSEGV"):
        collect("trace", ["./crash"], cwd, files=["crash_trace.c"])
    crashed, _ = collect("trace", ["./crash"], cwd, files=["crash_trace.c"], keep_failed=True)
    assert [(r["uid"], r.get("incomplete")) for r in rows(crashed)] == [("main", True), ("boom", True)]
    assert leftovers(run_env) == []


def test_trace_with_uprobes_or_a_clear_reason(programs):
    if not uprobes_requirement().ok:
        with pytest.raises(CollectionError, match="the uprobes engine cannot run here"):
            collect("trace", [programs["fib_plain"], "5"], programs["dir"], engine="uprobes", rules=["fib"])
        return
    profile, _ = collect("trace", [programs["fib_plain"], "5"], programs["dir"], engine="uprobes", rules=["fib"])
    found = sorted(rows(profile), key=lambda r: r["call-order"])
    assert [(r["uid"], r["depth"] + 1) for r in found] == fib_tree(5, 1)
    check_tree(found)
    listed = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True)
    assert "perun_" not in listed.stdout
    with pytest.raises(CollectionError, match="needs -r/--rules"):
        collect("trace", [programs["fib_plain"]], programs["dir"], engine="uprobes")


def test_trace_sampling_rules_split_at_the_last_equals_sign_and_must_match(programs):
    assert _sampling_rules(["SLL::search=2", "fib:3", "ns::f:=4"]) == ["SLL::search=2", "fib=3", "ns::f:=4"]
    with pytest.raises(ValueError):
        _sampling_rules(["SLL::search"])
    cwd = programs["dir"]
    colon, _ = collect("trace", ["./fib", "5"], cwd, files=["fib.c"], sampling=["fib:2"])
    assert Counter(r["uid"] for r in rows(colon)) == {"main": 1, "fib": 8}
    with pytest.raises(CollectionError, match="the sampling pattern 'fob' matches no function of .*fib$"):
        collect("trace", ["./fib", "5"], cwd, files=["fib.c"], sampling=["fob=2"])


@pytest.mark.tools("g++")
def test_trace_sampling_of_cpp_qualified_names(programs):
    cwd = programs["dir"]
    profile, _ = collect("trace", ["./sll"], cwd, files=["sll.cpp"], cflags=["-O0"], rules=["SLL::*"],
                         sampling=["SLL::search=2"])
    assert Counter(r["uid"] for r in rows(profile)) == {"SLL::insert(int)": 10, "SLL::search(int)": 5}
    check_tree(rows(profile))
    with pytest.raises(CollectionError, match="the sampling pattern 'SLL::nothing' matches no function of"):
        collect("trace", ["./sll"], cwd, files=["sll.cpp"], sampling=["SLL::nothing=2"])


def test_uprobes_requirement_when_tracefs_is_not_readable(programs, monkeypatch, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "perf").write_text("#!/bin/sh\nexit 0\n")
    (fake / "perf").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    real_stat = Path.stat

    def denied(path, *args, **kwargs):  # what a user other than root gets in the 0700 tracefs
        if str(path).startswith("/sys/kernel/"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", denied)
    requirement = uprobes_requirement()
    assert not requirement.ok and requirement.optional
    assert (requirement.detail, requirement.how_to_get) == ("tracefs is not readable by this user",
                                                            "run as root (or use the instrument engine)")
    checked = check_unit("collector", "trace")
    assert checked.usable and requirement in checked.requirements
    with pytest.raises(CollectionError) as info:
        collect("trace", [programs["fib_plain"], "5"], programs["dir"], engine="uprobes", rules=["fib"])
    assert info.value.message.endswith("the uprobes engine cannot run here: tracefs is not readable by this user; "
                                       "run as root (or use the instrument engine)")


def needs_uprobes() -> None:
    need_tools("perf")
    requirement = uprobes_requirement()
    if not requirement.ok:
        machine_cannot("uprobe events", requirement.detail)


def test_uprobes_threads_lose_no_calls_or_say_so(programs, monkeypatch):
    needs_uprobes()
    argv, cwd = [programs["many_threads"], "2000"], programs["dir"]
    profile, output = collect("trace", argv, cwd, engine="uprobes", rules=["leaf"])
    if "lost_events" not in profile.header:  # the large buffer keeps up on this machine
        assert Counter(r["thread"] for r in rows(profile)) == {thread: 2000 for thread in range(1, 9)}
    else:
        assert any(text.startswith("perun: perf lost ") for _, text in output)
    monkeypatch.setattr(uprobes, "_ring_buffer", lambda: "8K")  # two pages: most events are lost
    with pytest.raises(CollectionError, match=r"perf lost \d+ of \d+ uprobe events \(\d+\.\d%\) with a buffer of "
                       r"8K per CPU: the call tree would be wrong"):
        collect("trace", argv, cwd, engine="uprobes", rules=["leaf"])
    monkeypatch.setattr(uprobes, "MAX_LOST_SHARE", 1.0)
    kept, output = collect("trace", argv, cwd, engine="uprobes", rules=["leaf"])
    lost = kept.header["lost_events"]
    assert 0 < lost and len(rows(kept)) < 16000
    assert [text for _, text in output if text.startswith("perun: ")] == [
        next(text for _, text in output if text.startswith(f"perun: perf lost {lost} of "))]


def test_uprobes_beside_another_groups_probes_of_the_same_names(programs, tmp_path):
    """perf probe refuses an event name used in any group: two jobs at once (or another tool) must not clash."""
    needs_uprobes()
    other = f"othertool{os.getpid()}"
    fib = str(programs["fib_plain"])
    subprocess.run(perf_command(tmp_path, "probe", "-q", "-x", fib, "-a", f"{other}:e0=fib", "-a",
                                f"{other}:x0=fib%return"), check=True)
    try:
        profile, _ = collect("trace", [fib, "5"], programs["dir"], engine="uprobes", rules=["fib"])
    finally:
        subprocess.run(perf_command(tmp_path, "probe", "-q", "-d", f"{other}:*"), check=True)
    assert Counter(r["uid"] for r in rows(profile)) == {"fib": 15}


# -- perf ---------------------------------------------------------------------------------------

def needs_perf_sampling() -> None:
    """perf on PATH (installable), and a kernel that lets it sample (not)."""
    need_tools("perf")
    allowed, detail, _ = perf_permission()
    if not allowed:
        machine_cannot("sampling with perf", detail)


def test_perf_finds_the_hot_function_of_a_busy_loop(programs):
    needs_perf_sampling()
    profile, _ = collect("perf", [programs["busy"]], programs["dir"])
    functions = {r["uid"]: r for r in rows(profile) if r["subtype"] == "function"}
    hottest = max(functions.values(), key=lambda r: r["exclusive"])
    assert hottest["uid"] == "hot" and functions["hot"]["exclusive"] > 5 * functions.get("cold", {"exclusive": 1})["exclusive"]
    assert all(r["amount"] >= r["exclusive"] for r in functions.values())
    samples = [r for r in rows(profile) if r["subtype"] == "samples"]
    assert sum(r["amount"] for r in samples) >= max(r["amount"] for r in functions.values())
    assert any("hot()" in line for line in to_flame_graph_format(profile))
    counters = {r["subtype"]: r["amount"] for r in rows(profile) if r["type"] == "counter"}
    assert counters["page-faults"] > 0
    assert set(counters) | set(profile.header["unsupported_events"]) >= {"cycles", "instructions", "page-faults"}


def test_perf_follows_threads_and_forks_and_reports_crashes(programs, run_env):
    needs_perf_sampling()
    threads, _ = collect("perf", [programs["threads"]], programs["dir"], mode="stat")
    assert {r["subtype"] for r in rows(threads)} >= {"page-faults", "context-switches"}
    forked, _ = collect("perf", [programs["fork"]], programs["dir"], frequency=4000)
    assert forked.header["type"] == "mixed" and forked.header["event"]
    with pytest.raises(CollectionError, match="was killed by SIGSEGV"):
        collect("perf", [programs["crash"]], programs["dir"], mode="record")
    crashed, _ = collect("perf", [programs["crash"]], programs["dir"], mode="record", keep_failed=True)
    assert crashed.header["exit_status"] == -signal.SIGSEGV
    assert leftovers(run_env) == []


def test_perf_stat_reports_a_program_killed_by_a_signal(programs, run_env):
    needs_perf_sampling()
    # perf stat itself now and then loses how its program ended (1 to 3 runs in 40 of perf 6.1 here, more when
    # the program ends quickly on a busy machine): its SIGCHLD handler forgets the child when the signal comes
    # before perf waits for it, and perf then exits 0 and prints no signal.  What perun can detect, it must; a
    # few attempts keep perf's race from failing the test
    for _ in range(5):
        try:
            collect("perf", [programs["crash"]], programs["dir"], mode="stat")
        except CollectionError as error:
            assert error.exit_status == -signal.SIGSEGV
            assert "the profiled command was killed by SIGSEGV" in error.message and "Segmentation fault" in error.hint
            break
    else:
        pytest.fail("perf stat never reported the crash in 5 runs")
    for _ in range(5):
        crashed, _ = collect("perf", [programs["crash"]], programs["dir"], mode="stat", keep_failed=True)
        if "exit_status" in crashed.header:
            break
    assert crashed.header["exit_status"] == -signal.SIGSEGV
    assert "page-faults" in {r["subtype"] for r in rows(crashed)} | set(crashed.header["unsupported_events"])
    for _ in range(5):
        try:
            collect("perf", [programs["memory"]], programs["dir"], mode="stat")
        except CollectionError as error:
            assert "the profiled command exited with status 3" in error.message
            break
    else:
        pytest.fail("perf stat never reported the exit status 3 in 5 runs")
    assert leftovers(run_env) == []


def test_perf_signal_report_is_only_perfs_last_line():
    assert signal_reported("./crash: Segmentation fault\n", "./crash") == signal.SIGSEGV
    assert signal_reported("some output\n/bin/app: Aborted", "/bin/app") == signal.SIGABRT
    assert signal_reported("./crash: Segmentation fault\nlater output", "./crash") == 0
    assert signal_reported("./other: Segmentation fault", "./crash") == 0
    assert signal_reported("./crash: cannot open input", "./crash") == 0
    assert signal_reported("", "./crash") == 0


def test_perf_requirements_compare_events_without_privilege_modifiers(tmp_path, monkeypatch):
    """For users other than root perf counts cycles:u; that is the cycles event, not another one."""
    assert [base_event(e) for e in ("cycles:u", "instructions:k", "cache-misses", "sched:sched_switch")] == [
        "cycles", "instructions", "cache-misses", "sched:sched_switch"]
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "perf").write_text("#!/bin/sh\ncat >&2 <<'END'\n<not supported>,,cycles:u,0,100.00,,\n"
                               "<not supported>,,instructions:u,0,100.00,,\n12,,cache-misses:u,100,100.00,,\n"
                               "3,,branch-misses:u,100,100.00,,\n46,,page-faults:u,100,100.00,,\n"
                               "0,,context-switches:u,100,100.00,,\nEND\n")
    (fake / "perf").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    counters = next(r for r in check_unit("collector", "perf").requirements if r.name == "hardware counters")
    assert counters.detail == ("countable: cache-misses, branch-misses, page-faults, context-switches; not supported "
                               "here: cycles:u, instructions:u (stacks are sampled with cpu-clock instead)")


def test_perf_parsers():
    text = (" 11  1000 cpu-clock:ppp: \n\t  113a hot (/bin/app)\n\t  2724a main (/bin/app)\n\n"
            " 11  1000 cpu-clock:ppp: \n\t  113a hot (/bin/app)\n\t  2724a main (/bin/app)\n\n"
            " 11  1000 cpu-clock:ppp:      55803724113a cold(int, char*) (/bin/app)\n\n")
    stacks = parse_perf_script(text)
    assert stacks == {(("hot", "/bin/app"), ("main", "/bin/app")): [2, 2000],
                      (("cold(int, char*)", "/bin/app"),): [1, 1000]}
    found = {(r["subtype"], r["uid"]): r for r in stack_resources(stacks)}
    assert found[("function", "main")]["amount"] == 2 and found[("function", "main")]["exclusive"] == 0
    assert found[("samples", "hot")]["trace"] == [{"function": "hot", "object": "/bin/app"},
                                                  {"function": "main", "object": "/bin/app"}]
    counters, unsupported = parse_perf_stat("# started\n\n<not supported>,,cycles,0,100.00,,\n"
                                            "47,,page-faults,2340,100.00,200.7,/sec\n234.07,msec,task-clock,2,100,,\n")
    assert unsupported == ["cycles"]
    assert counters == [{"type": "counter", "subtype": "page-faults", "amount": 47},
                        {"type": "counter", "subtype": "task-clock", "amount": 234.07, "unit": "msec"}]


def test_perf_inlined_frames_are_located_at_their_own_address_in_the_object_of_the_frame_out():
    from perun_core.collect.perf import InlineAddresses

    # the leaf's inlined frames share its address; a caller's inlined frame its return address (the call is a byte
    # before); an inlined frame whose address no physical frame has (glibc's entry) is in no known object
    text = (" 11  1000 cpu-clock:ppp: \n\t  1562e0 __strlen_avx2 (/lib/libc.so.6)\n\t  10fe inner (inlined)\n"
            "\t  10fe outer (inlined)\n\t  10fe main (/bin/app)\n\t  27304 __libc_start_main_impl (inlined)\n"
            "\t  11a0 _start (/bin/app)\n\n"
            " 11  1000 cpu-clock:ppp: \n\t  2000 hot (inlined)\n\t  2000 main (/bin/app)\n\n")
    inlined = InlineAddresses()
    stacks = parse_perf_script(text, inlined)
    assert sum(count for count, _ in stacks.values()) == 2
    assert inlined.seen == {("/bin/app", 0x10fd, 0, "inner"): 1, ("/bin/app", 0x10fd, 1, "outer"): 1,
                            ("/bin/app", 0x2000, 0, "hot"): 1}
    # addr2line names C++ functions with their parameters, templates with their return type; perf without
    from perun_core.collect.perf import _same_function

    assert _same_function("peg::Trie::match", "peg::Trie::match(char const*, unsigned long) const")
    assert _same_function("std::vector<int>::_M_grow<int>", "void std::vector<int>::_M_grow<int>(int)")
    assert _same_function("checksum", "checksum")
    assert not _same_function("peg::Trie::match", "peg::Trie::matches(char const*)")
    assert not _same_function("match", "peg::Trie::match(char const*)") and not _same_function("match", None)


def test_perf_missing_or_forbidden_gives_one_line(programs, tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "perf").write_text("#!/bin/sh\necho 'Error:' >&2\necho 'Access to performance monitoring and observability "
                               "operations is limited.' >&2\necho 'Consider tweaking /proc/sys/kernel/perf_event_paranoid'"
                               " >&2\nexit 255\n")
    (fake / "perf").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    for mode in ("record", "stat"):
        with pytest.raises(CollectionError) as info:
            collect("perf", [programs["busy"]], programs["dir"], mode=mode)
        message = info.value.message
        assert "\n" not in message and "perf cannot run here: " in message
        assert "perf_event_paranoid" in message and "sudo sysctl kernel.perf_event_paranoid=1" in message
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(CollectionError, match="'perf' is required but was not found; install perf"):
        collect("perf", [programs["busy"]], programs["dir"])


# -- callgrind ----------------------------------------------------------------------------------

@pytest.mark.usefixtures("needs_valgrind")
def test_callgrind_reports_the_expected_functions_and_edges(programs):
    profile, _ = collect("callgrind", [programs["calls"]], programs["dir"])
    functions = {r["uid"]: r for r in rows(profile) if r["subtype"] == "function"}
    edges = {(r["caller"], r["uid"]): r for r in rows(profile) if r["subtype"] == "call"}
    assert {"main", "middle", "leaf", "fact"} <= set(functions)
    assert all(r["amount"] >= r["exclusive"] >= 0 for r in functions.values())
    assert [functions[f]["calls"] for f in ("main", "middle", "leaf", "fact")] == [1, 1, 2, 10]
    assert functions["middle"]["amount"] == functions["middle"]["exclusive"] + functions["leaf"]["amount"]
    assert functions["main"]["amount"] == (functions["main"]["exclusive"] + functions["middle"]["amount"]
                                           + functions["fact"]["amount"])
    assert functions["fact"]["amount"] == functions["fact"]["exclusive"]
    assert edges[("middle", "leaf")]["calls"] == 2 and edges[("main", "fact")]["amount"] == functions["fact"]["amount"]
    assert functions["leaf"]["source"].endswith("calls.c") and profile.units == {"instructions": "Ir"}
    again, _ = collect("callgrind", [programs["calls"]], programs["dir"])
    assert {r["uid"]: r["amount"] for r in rows(again) if r["subtype"] == "function"}["middle"] == \
        functions["middle"]["amount"]


@pytest.mark.usefixtures("needs_valgrind")
def test_callgrind_crash_fork_and_threads(programs, run_env):
    threaded, _ = collect("callgrind", [programs["threads"]], programs["dir"])
    worker = next(r for r in rows(threaded) if r["subtype"] == "function" and r["uid"] == "worker")
    assert worker["calls"] == 4 and worker["amount"] >= worker["exclusive"]
    with pytest.raises(CollectionError, match="was killed by SIGSEGV"):
        collect("callgrind", [programs["crash"]], programs["dir"])
    crashed, _ = collect("callgrind", [programs["crash"]], programs["dir"], keep_failed=True)
    # calls still running at the crash (boom) have no edge yet; completed ones are there
    assert ("main", "malloc") in {(r["caller"], r["uid"]) for r in rows(crashed) if r["subtype"] == "call"}
    assert crashed.header["exit_status"] == -signal.SIGSEGV
    forked, _ = collect("callgrind", [programs["fork"]], programs["dir"])
    work = {r["process"]: r["calls"] for r in rows(forked) if r["subtype"] == "function" and r["uid"] == "work"}
    assert work == {1: 2, 2: 3}
    assert leftovers(run_env) == []


@pytest.mark.usefixtures("needs_valgrind")
def test_callgrind_timeout_leaves_no_vgdb_pipes(programs, run_env):
    with pytest.raises(CollectionError, match="timed out after 2 s"):
        collect("callgrind", ["sleep", "30"], programs["dir"], timeout=2)
    assert [name for name in os.listdir(run_env) if name.startswith("vgdb")] == [] and leftovers(run_env) == []


def test_perf_and_uprobes_leave_nothing_in_the_build_id_cache(programs, tmp_path, monkeypatch):
    needs_perf_sampling()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    collect("perf", [programs["busy"]], programs["dir"])
    check_unit("collector", "perf")
    if uprobes_requirement().ok:
        collect("trace", [programs["fib_plain"], "5"], programs["dir"], engine="uprobes", rules=["fib"])
    assert list(home.iterdir()) == []

def test_callgrind_parser_handles_compression_and_recursion():
    text = """version: 1
positions: line
events: Ir
summary: 1000
ob=(1) /bin/app
fl=(1) app.c
fn=(1) main
3 10
cfn=(2) walk
calls=1 +2
* 300
fn=(2)
5 20
cob=(2) /lib/libc.so
cfn=(3) strlen
calls=4 0
0 80
cfn=(4) walk'2
calls=1 -1
* 200
fn=(4)
+1 200
totals: 1000
"""
    data = parse_callgrind(text)
    found = {(r["subtype"], r.get("caller"), r["uid"]): r for r in callgrind_resources(data)}
    assert found[("function", None, "walk")]["exclusive"] == 220
    assert found[("function", None, "walk")]["amount"] == 300 and found[("function", None, "walk")]["calls"] == 2
    assert found[("function", None, "main")]["amount"] == 310
    assert found[("function", None, "strlen")]["object"] == "/lib/libc.so"
    assert found[("call", "walk", "strlen")]["calls"] == 4 and data.totals == 1000


# -- requirements --------------------------------------------------------------------------------

def test_collect_check_reports_requirements(perun_repo, tmp_path):
    from conftest import run_cli

    root, _ = perun_repo
    checked = run_cli("collect", "memory", "--check", cwd=root)
    assert checked.returncode == 0 and checked.stdout.startswith("memory: this machine has what it needs")
    assert "ok       addr2line (binutils): " in checked.stdout
    timed = run_cli("collect", "time", "--check", cwd=root)
    assert timed.returncode == 0 and timed.stdout.strip() == "time: needs nothing beyond perun"
    traced = run_cli("collect", "trace", "--check", cwd=root)
    assert "flags for your own build: CFLAGS += -finstrument-functions -g (nothing to link" in traced.stdout
    bare = tmp_path / "bin"
    bare.mkdir()
    missing = run_cli("collect", "callgrind", "--check", cwd=root, env={"PATH": str(bare)})
    assert missing.returncode == 1
    assert missing.stderr == "error: collector 'callgrind' cannot run on this machine: valgrind is missing\n"
    assert missing.stdout.splitlines() == ["callgrind: something it needs is missing",
                                           "  MISSING  valgrind: 'valgrind' not found on PATH",
                                           "           -> install valgrind (Debian/Ubuntu: apt-get install valgrind)"]
