"""The memory collector's log pieces across exec, and its vectorized profile building.

* A program that calls exec without fork keeps the records of every image:
  each image writes its own ``memory.<pid>[.<n>].log`` and the reader takes
  them in the order they started.
* Turning the log into a profile works per distinct symbolized stack, not per
  event or per recorded stack; the numpy pieces (sizes of freed blocks,
  grouping of stacks) agree with plain reference implementations on seeded
  random data, including the fallbacks.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from runhelpers import build_c, line_of, run_env  # noqa: F401 - run_env: autouse fixture

from perun_core import native
from perun_core.collect import memory, memory_log, memory_profile, memory_stacks, symbols
from perun_core.collect.nativelog import read_logs
from perun_core.collect.trace import instrumentation_flags
from perun_core.units import UnitContext, call_phase, collectors, convert_params

pytestmark = pytest.mark.tools("cc")

FIRST_C = r"""
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char *block = malloc(1111);                         /* FIRST_MALLOC */
    block[0] = 1;
    execl(argv[1], argv[1], "again", (char *)NULL);
    return 9;
}
"""

SECOND_C = r"""
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char *block = malloc(2222);                         /* SECOND_MALLOC */
    block[0] = 2;
    if (argc > 1 && strcmp(argv[1], "again") == 0) execl(argv[0], argv[0], (char *)NULL);
    free(block);
    return 0;
}
"""

FORK_EXEC_C = r"""
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    void *block = malloc(333);
    pid_t pid = fork();
    if (pid == 0) {
        execl(argv[1], argv[1], (char *)NULL);
        _exit(9);
    }
    int status = 1;
    waitpid(pid, &status, 0);
    free(block);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
"""

ERRNO_C = r"""
#include <errno.h>
#include <stdlib.h>
int main(void) {
    for (int i = 0; i < 100000; i++) {              /* several log blocks of events and stacks */
        errno = 4242;
        void *p = malloc(16 + i % 100);
        if (p == NULL || errno != 4242) return 1;
        free(p);
        if (errno != 4242) return 2;
    }
    return 0;
}
"""

TREE_C = r"""
#include <stdlib.h>
struct node { long key; struct node *left, *right; };
static struct node *insert(struct node *root, long key) {
    struct node **at = &root;
    while (*at) at = key < (*at)->key ? &(*at)->left : &(*at)->right;
    *at = malloc(sizeof **at);                          /* T_MALLOC */
    (*at)->key = key; (*at)->left = (*at)->right = NULL;
    return root;
}
static void drop(struct node *root) {
    if (!root) return;
    drop(root->left); drop(root->right);                /* T_RECURSE: one line, so paths differ by depth only */
    free(root);                                         /* T_FREE */
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    unsigned long state = 12345;
    struct node *root = NULL;
    for (long i = 0; i < n; i++) {
        state = state * 6364136223846793005ul + 1442695040888963407ul;
        root = insert(root, (long)(state >> 17));       /* T_INSERT */
    }
    drop(root);                                         /* T_DROP */
    return 0;
}
"""

TRACE_EXEC_C = r"""
#include <unistd.h>
int work(int n) { return n <= 0 ? 0 : 1 + work(n - 1); }
int main(int argc, char **argv) {
    work(3);
    if (argc < 2) execl(argv[0], argv[0], "again", (char *)0);
    return 0;
}
"""


def build(directory: Path, name: str, source: str, *flags: str) -> Path:
    return build_c(directory, name, source, "-fno-omit-frame-pointer", *flags)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("memory-programs")
    built = {name: build(directory, name, source) for name, source in (
        ("first", FIRST_C), ("second", SECOND_C), ("fork_exec", FORK_EXEC_C), ("errno", ERRNO_C),
        ("tree", TREE_C))}
    built["dir"] = directory
    return built


def collect(argv: list, cwd: Path, **params):
    unit = collectors.get("memory")
    kwargs = convert_params("memory", unit.params, params)
    kwargs.update(cmd=str(argv[0]), args=" ".join(map(str, argv[1:])), workload="", argv=[str(a) for a in argv])
    ctx = UnitContext(Path(cwd), lambda event: None, label=f"memory: {argv[0]}")
    for phase in ("before", "collect", "after"):
        result = call_phase(unit, phase, ctx, kwargs)
        if result is not None:
            assert result.status == 0, result.message
            kwargs = result.kwargs
    return kwargs["profile"]


def rows(profile) -> list[dict]:
    return [row for _, region in profile.regions() for row in region.resources.rows()]


# -- exec without fork ------------------------------------------------------------------------

def test_exec_without_fork_keeps_the_records_of_every_image(programs):
    profile = collect([programs["first"], programs["second"]], programs["dir"])
    found = [(r["subtype"], r["amount"], r["process"], r["uid"]["source"], r["uid"]["line"]) for r in rows(profile)]
    first, second = str(programs["dir"] / "first.c"), str(programs["dir"] / "second.c")
    first_line, second_line = line_of(FIRST_C, "FIRST_MALLOC"), line_of(SECOND_C, "SECOND_MALLOC")
    assert ("malloc", 1111, 1, first, first_line) in found
    assert ("malloc", 2222, 2, second, second_line) in found  # second, started by exec with "again"
    assert ("malloc", 2222, 3, second, second_line) in found  # second again, exec'd by itself
    assert [r for r in found if r[0] == "free"] == [("free", 2222, 3, second, line_of(SECOND_C, "free(block)"))]


def test_each_image_gets_its_own_numbered_log_read_in_start_order(programs, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "LD_PRELOAD": str(native.library("memory")), "PERUN_MEMORY_DIR": str(logs)}
    done = subprocess.run([programs["first"], programs["second"]], env=env, capture_output=True)
    assert done.returncode == 0
    pid = read_logs(logs, "memory")[0].pid
    names = sorted(p.name for p in logs.iterdir())
    assert names == sorted(f"memory.{pid}{suffix}.{kind}" for suffix in ("", ".1", ".2") for kind in ("log", "maps"))
    parsed = read_logs(logs, "memory")
    assert [(log.pid, log.piece) for log in parsed] == [(pid, 0), (pid, 1), (pid, 2)]
    assert [log.start_ns for log in parsed] == sorted(log.start_ns for log in parsed)
    assert "first" in parsed[0].maps_text and "second" in parsed[1].maps_text and "first" not in parsed[1].maps_text


def test_a_forked_child_that_execs_at_once_is_one_process(programs):
    profile = collect([programs["fork_exec"], programs["second"]], programs["dir"])
    found = sorted((r["process"], r["subtype"], r["amount"]) for r in rows(profile))
    assert found == [(1, "free", 333), (1, "malloc", 333), (2, "free", 2222), (2, "malloc", 2222)]


def test_the_hooks_leave_errno_alone(programs, tmp_path):
    env = {**os.environ, "LD_PRELOAD": str(native.library("memory")), "PERUN_MEMORY_DIR": str(tmp_path)}
    assert subprocess.run([programs["errno"]], env=env).returncode == 0
    assert len(list(tmp_path.glob("memory.*.log"))) == 1


def test_the_trace_runtime_keeps_every_image_too(tmp_path):
    flags = instrumentation_flags()
    source = tmp_path / "hop.c"
    source.write_text(TRACE_EXEC_C)
    binary = tmp_path / "hop"
    subprocess.run(["cc", "-O0", "-g", *flags["cflags"], "-o", str(binary), str(source), *flags["ldflags"]],
                   check=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "LD_PRELOAD": str(native.library("trace")), "PERUN_TRACE_DIR": str(logs)}
    assert subprocess.run([binary], env=env).returncode == 0
    parsed = read_logs(logs, "trace")
    assert [log.piece for log in parsed] == [0, 1] and parsed[0].pid == parsed[1].pid
    assert all(log.stream(log.threads[0], 0) for log in parsed)


# -- building the profile -----------------------------------------------------------------------

def test_a_deep_recursion_is_symbolized_per_distinct_trace_not_per_stack(programs, tmp_path, monkeypatch):
    n = 3000
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "LD_PRELOAD": str(native.library("memory")), "PERUN_MEMORY_DIR": str(logs)}
    subprocess.run([programs["tree"], str(n)], env=env, check=True)
    parsed = read_logs(logs, "memory")
    ids, _, _ = memory_log.stack_records(parsed[0])
    assert len(ids) > n // 2  # every path down the tree is a stack of its own
    built, asked = [], []
    real_get, real_addr2line = memory_stacks._Traces.get, symbols.addr2line
    monkeypatch.setattr(memory_stacks._Traces, "get", lambda self, *a: built.append(a) or real_get(self, *a))
    monkeypatch.setattr(symbols, "addr2line", lambda path, *a, **k: asked.append(path) or real_addr2line(path, *a, **k))
    profile = memory.profile_from_logs(parsed, {"sampling": 1.0})
    found = rows(profile)
    traces = Counter(repr(r["trace"]) for r in found)
    assert len(built) <= len(traces) < 100
    assert len(asked) == len(set(asked))  # one addr2line run per object file
    assert len({id(r["trace"]) for r in found}) == len(traces)  # equal traces are one object
    source = str(programs["dir"] / "tree.c")
    mallocs = [r for r in found if r["subtype"] == "malloc"]
    frees = [r for r in found if r["subtype"] == "free"]
    assert len(mallocs) == len(frees) == n and {r["amount"] for r in mallocs + frees} == {24}
    assert {r["address"] for r in mallocs} == {r["address"] for r in frees}
    assert {(f["function"], f["line"]) for r in mallocs for f in r["trace"]} == {
        ("insert", line_of(TREE_C, "T_MALLOC")), ("main", line_of(TREE_C, "T_INSERT"))}
    for r in frees:
        assert r["uid"] == {"function": "drop", "source": source, "line": line_of(TREE_C, "T_FREE")}
        assert r["trace"][-1]["function"] == "main" and len(r["trace"]) <= 32
        assert {f["line"] for f in r["trace"][1:-1]} <= {line_of(TREE_C, "T_RECURSE")}


def test_streams_read_as_arrays_equal_the_joined_bytes(programs, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "LD_PRELOAD": str(native.library("memory")), "PERUN_MEMORY_DIR": str(logs)}
    subprocess.run([programs["tree"], "2000"], env=env, check=True)
    log = read_logs(logs, "memory")[0]
    for tid, stream in log.blocks:
        joined = log.stream(tid, stream)
        assert log.stream_array(tid, stream, "<u8").tobytes() == joined[:len(joined) // 8 * 8]
    # version 2: events and the stack tree (version 1 had a third stream of return addresses)
    assert log.version == 2
    assert set(log.streams) == set(log.blocks) and {s for _, s in log.blocks} == {0, 1}


def reference_freed_sizes(kinds, addresses, sizes) -> list[int]:
    latest: dict[int, int] = {}
    out = []
    for kind, address, size in zip(kinds.tolist(), addresses.tolist(), sizes.tolist()):
        if kind == 4:
            out.append(latest.get(address, 0))
        else:
            latest[address] = size
            out.append(size)
    return out


@pytest.mark.parametrize("layout", ["heap", "heap_and_mmap", "many_regions", "far_apart"])
def test_freed_sizes_agree_with_a_plain_reference(layout):
    rng = np.random.default_rng(7)
    n = 20000
    slots = rng.integers(0, 300, n).astype(np.uint64) * np.uint64(16)
    bases = {"heap": [0x5555_5555_0000], "heap_and_mmap": [0x5555_5555_0000, 0x7F12_3456_0000],
             "many_regions": [(k + 1) << 41 for k in range(20)], "far_apart": [0x1000, 0xFFFF_0000_0000_0000]}[layout]
    addresses = np.asarray(bases, dtype=np.uint64)[rng.integers(0, len(bases), n)] + slots
    kinds = rng.choice(np.array([1, 2, 3, 4, 4, 4], dtype=np.int64), n)
    sizes = np.where(kinds == 4, 0, rng.integers(1, 5000, n)).astype(np.uint64)
    assert memory_profile._freed_sizes(kinds, addresses, sizes).tolist() == reference_freed_sizes(kinds, addresses, sizes)
    order, grouped = memory_profile._by_address(addresses)
    assert order.tolist() == np.argsort(addresses, kind="stable").tolist()
    assert grouped.tolist() == np.sort(addresses).tolist()


@pytest.mark.parametrize("collide", [False, True])
def test_stack_sequences_are_grouped_exactly(monkeypatch, collide):
    if collide:  # every hash depends on the length only: the exact grouping must take over
        monkeypatch.setattr(memory_stacks, "_position_multipliers", lambda: np.zeros(256, dtype=np.uint64))
    rng = np.random.default_rng(11)
    counts = rng.integers(0, 6, 3000)
    classes = rng.integers(0, 3, int(counts.sum())).astype(np.int32)
    numbers, sequences = memory_stacks._distinct_sequences(classes, counts)
    begins = np.cumsum(counts) - counts
    expected = [tuple(classes[b:b + c].tolist()) for b, c in zip(begins.tolist(), counts.tolist())]
    assert [sequences[k] for k in numbers.tolist()] == expected
    assert len(sequences) == len(set(expected))


@pytest.mark.parametrize("case", ["few", "rare_values_the_sample_misses", "many", "small", "empty"])
def test_distinct_numbers_agree_with_sorting(case):
    rng = np.random.default_rng(5)
    if case == "few":
        values = rng.choice(rng.integers(0x5555_0000_0000, 0x7FFF_FFFF_FFFF, 40, dtype=np.uint64), 200_000)
    elif case == "rare_values_the_sample_misses":
        values = np.full(100_000, 0x5555_1234, dtype=np.uint64)
        values[rng.choice(100_000, 50, replace=False)] = rng.integers(1, 2**63, 50, dtype=np.uint64)
    elif case == "many":  # too many distinct values for the small table: sorted instead
        values = rng.integers(0, 2**64 - 1, 300_000, dtype=np.uint64)
    elif case == "small":
        values = rng.integers(0, 10, 100, dtype=np.uint64)
    else:
        values = np.zeros(0, dtype=np.uint64)
    distinct, numbers = memory_stacks._distinct_numbers(values)
    assert distinct.tolist() == np.unique(values).tolist()
    assert distinct[numbers].tolist() == values.tolist()
