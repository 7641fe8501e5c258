"""A demo perun repository, generated deterministically.

:func:`build_demo_repository` makes a real git repository (with dulwich) of a
small C linked-list library, initializes perun in it and registers profiles
for most commits through the porcelain, as a user would: each profile is
written to ``.perun/jobs`` with its ``origin`` and then added with
:func:`perun_core.api.add`.

What the history holds, for ``commits=n``:

* a main line with a side branch ``feature/iterators`` (three commits) that
  is merged back about half way;
* a 2x slowdown of the benchmark at one commit ("Replace the hash index ...")
  and a partial recovery a few commits later; both are recorded as check
  results (``-`` and ``+``) so ``log`` shows them;
* time profiles (five repeated runs) on most commits, mixed profiles of
  ``structure-unit-size`` against ``amount`` per function (some with
  regression models), and memory profiles with allocation traces on some;
* two pending profiles for HEAD in ``.perun/jobs``.

Dates, authors, contents and profile times are all derived from ``seed``, so
two builds with the same arguments are identical (same commit ids, same
object checksums).  The builder never prints.

:func:`build_in_place` (build next to the target, then rename; reuse by a
marker) and :func:`write_history` (commits from whole trees) serve the demo
of :mod:`perun_core.demo.collected` too, whose profiles are collected.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

#: bump when the generated content changes, so old cached demos are rebuilt
DEMO_VERSION = 2
MIN_COMMITS = 24
_MARKER = "demo.json"

_BASE_TIME = 1_709_542_800  # 2024-03-04 09:00:00 UTC
_AUTHORS = (
    ("Alena Horvathova", "alena@sll.example", 3600),
    ("Marek Dvorak", "marek@sll.example", 3600),
    ("Priya Raman", "priya@sll.example", 19800),
    ("Tom Ellis", "tom@sll.example", -18000),
)
_SUBJECTS = (
    "Tidy up the header comments",
    "Add a benchmark for sll_insert",
    "Check malloc failures in sll_push",
    "Rename node fields for clarity",
    "Document the ownership of node values",
    "Make sll_length constant time",
    "Split the benchmark workloads",
    "Fix an off-by-one in sll_remove_at",
    "Use size_t for list lengths",
    "Add sll_reverse",
    "Guard against NULL lists in sll_destroy",
    "Build with -Wall -Wextra",
    "Print timings in microseconds",
    "Add the large workload",
    "Simplify the error paths of sll_pop",
    "Inline the node allocation helper",
    "Add unit tests for sll_reverse",
    "Avoid a redundant walk in sll_append",
    "Update the README usage section",
    "Move the bench driver to bench.c",
    "Add sll_append",
    "Return the removed key from sll_pop",
    "Explain the benchmark workloads in the README",
    "Free nodes in sll_clear",
    "Add a clean target to the Makefile",
    "Seed the benchmark's random keys",
    "Add sll_find_min and sll_find_max",
    "Make sll_print take a FILE pointer",
    "Warn about unused results of sll_insert",
    "Add a test for empty lists",
    "Count allocations in debug builds",
    "Check the list invariants in debug builds",
    "Prefer early returns in sll_remove",
    "Keep the tail pointer up to date",
    "Document the complexity of each function",
    "Fix a leak in sll_remove_at",
    "Use const for read-only list parameters",
    "Add sll_contains",
    "Shorten the benchmark's warm-up",
    "Move the node struct into sll.c",
)
_BENCH = "./sll-bench"
_FUNCTIONS = (
    ("sll_insert(SLList*, int)", 0.8, 0.0),
    ("sll_search(SLList*, int)", 3.0, 0.02),
    ("sll_destroy(SLList*)", 1.5, 0.01),
)


@dataclass
class _Commit:
    """One planned commit: message, author, time and which parents (by plan index)."""

    subject: str
    author: tuple[str, str, int]
    when: int
    parents: list[int]
    #: benchmark speed factor (1.0 normal, 2.0 twice as slow)
    factor: float = 1.0
    profiles: list[str] = field(default_factory=list)
    #: the planned performance change of this commit ("-" slower, "+" faster);
    #: only shapes the data and the message, checks find it on their own
    changes: str = ""
    on_branch: bool = False


def build_demo_repository(path: Path, *, commits: int = 40, seed: int = 7) -> Path:
    """Create the demo repository at ``path`` (or reuse the one built there before).

    ``path`` must be missing, empty, or hold a demo built with the same
    ``commits`` and ``seed`` (it is then returned unchanged).  The repository
    is built in a sibling directory and moved into place at the end, so an
    interrupted build never leaves a half-made demo at ``path``.

    Raises :class:`UsageError` for fewer than 24 commits or a ``path`` that
    holds something else.
    """
    if commits < MIN_COMMITS:
        raise UsageError(f"a demo repository needs at least {MIN_COMMITS} commits, not {commits}")
    wanted = {"version": DEMO_VERSION, "commits": commits, "seed": seed}
    return build_in_place(path, wanted, lambda staging: _build(staging, commits, seed))


def build_in_place(path: Path | str, marker: dict[str, Any], build: Callable[[Path], None]) -> Path:
    """Build a demo at ``path`` with ``build(staging)``, or return the one built there before.

    ``marker`` identifies what ``build`` makes; it is stored in
    ``.perun/demo.json`` and a directory holding the same marker is reused
    as it is.  ``build`` fills a sibling directory that is renamed to
    ``path`` only when it succeeded, so an interrupted or failed build never
    leaves a half-made demo behind.  Raises :class:`UsageError` when
    ``path`` is a file or a non-empty directory without that marker.
    """
    path = Path(path).expanduser().absolute()
    if path.exists():
        if _marker_of(path) == marker:
            return path
        if not path.is_dir() or any(path.iterdir()):
            raise UsageError(f"{path} exists and is not a demo repository built with these settings",
                             hint="remove it or choose another directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.parent / f".{path.name}.building-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        build(staging)
        (staging / ".perun" / _MARKER).write_text(json.dumps(marker) + "\n")
        if path.exists():
            path.rmdir()
        try:
            staging.rename(path)
        except OSError:
            if _marker_of(path) != marker:
                raise
            # another process built the same demo first: use that one
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return path


def _marker_of(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / ".perun" / _MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# -- the plan of the history ---------------------------------------------------------

def _plan(commits: int, seed: int) -> tuple[list[_Commit], dict[str, int]]:
    """Every commit of the demo in creation order, and the indexes of the notable ones.

    Creation order is also date order.  The side branch forks after commit
    ``fork``; its three commits interleave with one main-line commit and are
    merged right after.
    """
    rnd = random.Random(seed)
    fork = commits // 2 - 2
    merge = fork + 5
    slow = max(round(commits * 0.7), merge + 2)
    fast = slow + 4
    subjects = list(_SUBJECTS)
    rnd.shuffle(subjects)
    special = {
        0: "Initial import of the sll library",
        fork + 1: "iterators: add sll_iter_begin and sll_iter_next",
        fork + 3: "iterators: use the iterator in sll_print",
        fork + 4: "iterators: document iterator invalidation",
        merge: "Merge branch 'feature/iterators'",
        slow: "Replace the hash index with a plain scan in sll_search",
        fast: "Cache node keys to speed up sll_search",
    }
    plan: list[_Commit] = []
    when = _BASE_TIME
    main_tip = side_tip = -1
    for i in range(commits):
        when += rnd.randrange(2 * 3600, 30 * 3600, 60)
        on_branch = fork < i < merge and i != fork + 2
        if i == 0:
            parents = []
        elif i == merge:
            parents = [main_tip, side_tip]
        elif on_branch:
            parents = [side_tip if side_tip != -1 else main_tip]
        else:
            parents = [main_tip]
        plan.append(_Commit(special.get(i) or subjects[i % len(subjects)], rnd.choice(_AUTHORS), when,
                            parents, on_branch=on_branch))
        if on_branch:
            side_tip = i
        else:
            main_tip = i
    notable = {"fork": fork, "slow": slow, "fast": fast, "merge": merge, "side": side_tip, "head": commits - 1}
    _assign_profiles(plan, notable)
    return plan, notable


def _ancestry(plan: list[_Commit]) -> list[frozenset[int]]:
    """For every commit, itself and all its ancestors (parents always come first in a plan)."""
    result: list[frozenset[int]] = []
    for index, commit in enumerate(plan):
        result.append(frozenset({index}).union(*(result[p] for p in commit.parents)))
    return result


def _assign_profiles(plan: list[_Commit], notable: dict[str, int]) -> None:
    ancestry = _ancestry(plan)
    slow_line = {i for i in range(len(plan)) if notable["slow"] in ancestry[i]}
    fast_line = {i for i in range(len(plan)) if notable["fast"] in ancestry[i]}
    keep = {notable["slow"] - 1, notable["slow"], notable["fast"] - 1, notable["fast"], notable["head"]}
    for i, commit in enumerate(plan):
        commit.factor = 1.25 if i in fast_line else 2.0 if i in slow_line else 1.0
        if i == 0 or (i % 6 == 5 and i not in keep):
            continue  # the first commit has nothing to run; some commits were never measured
        commit.profiles.append("time")
        if i % 2 == 0 or i in keep:
            commit.profiles.append("mixed-models" if i % 3 == 0 else "mixed")
        if i % 4 == 1:
            commit.profiles.append("memory")
    plan[notable["slow"]].changes = "-"
    plan[notable["fast"]].changes = "+"


# -- the project's files -----------------------------------------------------------

def _files_of(plan: list[_Commit], ancestry: list[frozenset[int]], index: int) -> dict[str, bytes]:
    """The whole tree of one commit: the library, its bench and a change log."""
    line = sorted(ancestry[index])
    commit = plan[index]
    scan = commit.factor > 1.0
    iterators = any(plan[i].on_branch for i in line)
    notes = "".join(f"- {plan[i].subject}\n" for i in line)
    header = _HEADER.replace("@VERSION@", f"0.{len(line)}.0")
    if iterators:
        header = header.replace("/* @ITER@ */", _ITER_DECL)
    source = _SOURCE.replace("@SEARCH@", _SEARCH_SCAN if scan else _SEARCH_HASH)
    if commit.factor == 1.25:
        source = source.replace("/* @CACHE@ */", "    /* keys are cached in the node: one load per step */\n")
    return {
        ".gitignore": b"*.o\nsll-bench\n",
        "Makefile": _MAKEFILE.encode(),
        "README.md": _README.encode(),
        "CHANGES.md": ("# Changes\n\n" + notes).encode(),
        "src/sll.h": header.encode(),
        "src/sll.c": source.encode(),
        "src/bench.c": _BENCH_C.encode(),
    }


_README = """# sll

A small singly linked list library in C, used as the demo project of perun.

    make && ./sll-bench --iterations 1000 workloads/small.txt
"""
_MAKEFILE = """CFLAGS ?= -O2 -Wall -Wextra

sll-bench: src/sll.o src/bench.o
\t$(CC) $(CFLAGS) -o $@ $^

clean:
\trm -f src/*.o sll-bench
"""
_HEADER = """#ifndef SLL_H
#define SLL_H

#include <stddef.h>

#define SLL_VERSION "@VERSION@"

typedef struct SLLNode {
    int key;
    struct SLLNode *next;
} SLLNode;

typedef struct SLList {
    SLLNode *head;
    size_t length;
} SLList;

void sll_init(SLList *list);
int sll_insert(SLList *list, int key);
SLLNode *sll_search(SLList *list, int key);
void sll_destroy(SLList *list);
/* @ITER@ */
#endif
"""
_ITER_DECL = "SLLNode *sll_iter_begin(SLList *list);\nSLLNode *sll_iter_next(SLLNode *node);\n"
_SOURCE = """#include <stdlib.h>
#include "sll.h"

void sll_init(SLList *list) {
    list->head = NULL;
    list->length = 0;
}

int sll_insert(SLList *list, int key) {
    SLLNode *node = malloc(sizeof *node);
    if (node == NULL)
        return -1;
    node->key = key;
    node->next = list->head;
    list->head = node;
    list->length++;
    return 0;
}

SLLNode *sll_search(SLList *list, int key) {
@SEARCH@}

void sll_destroy(SLList *list) {
    SLLNode *node = list->head;
    while (node != NULL) {
        SLLNode *next = node->next;
        free(node);
        node = next;
    }
    sll_init(list);
}
"""
_SEARCH_HASH = """    /* a small direct-mapped index of recently found keys */
    static SLLNode *index[64];
    SLLNode *hit = index[(unsigned)key % 64];
    if (hit != NULL && hit->key == key)
        return hit;
    for (SLLNode *node = list->head; node != NULL; node = node->next)
        if (node->key == key)
            return index[(unsigned)key % 64] = node;
    return NULL;
"""
_SEARCH_SCAN = """/* @CACHE@ */    for (SLLNode *node = list->head; node != NULL; node = node->next)
        if (node->key == key)
            return node;
    return NULL;
"""
_BENCH_C = """#include <stdio.h>
#include <stdlib.h>
#include "sll.h"

int main(int argc, char **argv) {
    int iterations = argc > 2 ? atoi(argv[2]) : 1000;
    SLList list;
    sll_init(&list);
    for (int i = 0; i < iterations; i++)
        sll_insert(&list, rand());
    for (int i = 0; i < iterations; i++)
        sll_search(&list, rand());
    sll_destroy(&list);
    return 0;
}
"""


# -- git objects -----------------------------------------------------------------

@dataclass(frozen=True)
class GitCommit:
    """One commit to write: its whole tree, message, author and parents (indexes of earlier commits)."""

    files: dict[str, bytes]
    message: str
    author: tuple[str, str, int]
    when: int
    parents: list[int]


def write_history(root: Path, commits: Sequence[GitCommit], branches: dict[str, int],
                  progress: Callable[[str], None] | None = None) -> list[str]:
    """Write ``commits`` into a new repository at ``root``; returns their shas.

    ``branches`` maps branch names to the index of their tip; ``main`` must
    be one of them: HEAD points to it and its tree is checked out.  Author
    and committer are the same, so equal input gives equal commit ids.
    """
    from dulwich.index import build_index_from_tree
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    shas: list[bytes] = []
    objects: dict[bytes, Any] = {}

    def tree_of(files: dict[str, bytes]) -> bytes:
        subdirs: dict[str, dict[str, bytes]] = {}
        tree = Tree()
        for name, data in files.items():
            head, sep, rest = name.partition("/")
            if sep:
                subdirs.setdefault(head, {})[rest] = data
                continue
            blob = Blob.from_string(data)
            objects[blob.id] = blob
            tree.add(name.encode(), 0o100644, blob.id)
        for name, sub in subdirs.items():
            tree.add(name.encode(), stat.S_IFDIR, tree_of(sub))
        objects[tree.id] = tree
        return tree.id

    root.mkdir(parents=True, exist_ok=True)
    with Repo.init(str(root), default_branch=b"main") as repo:
        for number, planned in enumerate(commits, 1):
            if progress is not None:
                progress(f"building commit {number}/{len(commits)}")
            name, email, tz = planned.author
            commit = Commit()
            commit.tree = tree_of(planned.files)
            commit.parents = [shas[p] for p in planned.parents]
            commit.author = commit.committer = f"{name} <{email}>".encode()
            commit.author_time = commit.commit_time = planned.when
            commit.author_timezone = commit.commit_timezone = tz
            commit.message = planned.message.encode()
            objects[commit.id] = commit
            shas.append(commit.id)
        repo.object_store.add_objects([(obj, None) for obj in objects.values()])
        for branch, tip in branches.items():
            repo.refs[f"refs/heads/{branch}".encode()] = shas[tip]
        repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
        head_tree = repo[shas[branches["main"]]].tree
        build_index_from_tree(str(root), repo.index_path(), repo.object_store, head_tree)
    return [sha.decode("ascii") for sha in shas]


def _write_git(root: Path, plan: list[_Commit]) -> list[str]:
    """Write every planned commit into a new repository at ``root``; returns the shas."""
    ancestry = _ancestry(plan)
    commits = [GitCommit(_files_of(plan, ancestry, index), planned.subject + "\n" + _body_of(planned),
                         planned.author, planned.when, planned.parents) for index, planned in enumerate(plan)]
    branches = {"main": len(plan) - 1}
    side = [index for index, planned in enumerate(plan) if planned.on_branch]
    if side:
        branches["feature/iterators"] = side[-1]
    return write_history(root, commits, branches)


def _body_of(commit: _Commit) -> str:
    if commit.factor == 2.0 and commit.changes == "-":
        return ("\nThe index made the code harder to follow; a plain scan is simpler.\n"
                "It is also about twice as slow on the benchmark.\n")
    if commit.changes == "+":
        return "\nKeeping the key next to the link saves a load per step.\n"
    return ""


# -- profiles ------------------------------------------------------------------------

def _time_profile(rnd: random.Random, factor: float, workload: str) -> dict[str, Any]:
    base = 0.42 if workload == "workloads/small.txt" else 1.9
    resources = []
    for run in range(5):
        real = round(base * factor * rnd.gauss(1.0, 0.02), 5)
        user = round(real * 0.83 * rnd.gauss(1.0, 0.01), 5)
        sys_ = round(real * 0.12 * rnd.gauss(1.0, 0.05), 5)
        for subtype, amount in (("real", real), ("user", user), ("sys", sys_)):
            resources.append({"amount": amount, "type": "time", "subtype": subtype, "uid": _BENCH, "order": run + 1})
    return {
        "header": {"type": "time", "units": {"time": "s"}, "cmd": _BENCH, "args": "--iterations 1000",
                   "workload": workload},
        "collector_info": {"name": "time", "params": {"repeat": 5, "warmup": 1}},
        "postprocessors": [],
        "snapshots": [{"time": f"{base * factor * 5:.6f}", "resources": resources, "models": []}],
    }


def _mixed_profile(rnd: random.Random, factor: float, with_models: bool) -> dict[str, Any]:
    resources = []
    points: dict[str, list[tuple[int, float]]] = {}
    for uid, constant, slope in _FUNCTIONS:
        scale = factor if uid.startswith("sll_search") else 1.0
        for size in range(0, 160, 8):
            amount = round((constant + slope * scale * size) * rnd.gauss(1.0, 0.04), 4)
            resources.append({"amount": amount, "type": "mixed", "subtype": "time delta", "uid": uid,
                              "structure-unit-size": size})
            points.setdefault(uid, []).append((size, amount))
    postprocessors: list[dict[str, Any]] = []
    models: list[dict[str, Any]] = []
    if with_models:
        postprocessors.append({"name": "regression_analysis",
                               "params": {"method": "full", "models": ["constant", "linear"]}})
        for uid, pts in points.items():
            models.extend(_fit(uid, pts))
    return {
        "header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": _BENCH,
                   "args": "--iterations 1000", "workload": "workloads/small.txt"},
        "collector_info": {"name": "trace", "params": {"method": "custom", "sampling": [{"func": "sll_search",
                                                                                          "sample": 1}]}},
        "postprocessors": postprocessors,
        "snapshots": [{"time": "0.500000", "resources": resources, "models": models}],
    }


def _fit(uid: str, points: list[tuple[int, float]]) -> list[dict[str, Any]]:
    """Constant and linear least-squares models of ``points``, as regression analysis records them."""
    n = len(points)
    xs = [float(x) for x, _ in points]
    ys = [y for _, y in points]
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    syy = sum((y - mean_y) ** 2 for y in ys)
    b1 = sxy / sxx if sxx else 0.0
    b0 = mean_y - b1 * mean_x
    r_square = (sxy * sxy) / (sxx * syy) if sxx and syy else 0.0
    common = {"uid": uid, "method": "full", "x_start": min(xs), "x_end": max(xs)}
    return [
        {**common, "model": "constant", "r_square": 0.0, "coeffs": [{"name": "b0", "value": round(mean_y, 6)}]},
        {**common, "model": "linear", "r_square": round(r_square, 6),
         "coeffs": [{"name": "b0", "value": round(b0, 6)}, {"name": "b1", "value": round(b1, 6)}]},
    ]


def _memory_profile(rnd: random.Random, nodes: int) -> dict[str, Any]:
    insert = {"function": "sll_insert", "source": "src/sll.c", "line": 10}
    main = {"function": "main", "source": "src/bench.c", "line": 10}
    snapshots = []
    address = 0x55D4A000
    live: list[int] = []
    for number in range(3):
        resources = []
        for _ in range(nodes):
            resources.append({"type": "memory", "subtype": "malloc", "address": address, "amount": 16,
                              "uid": dict(insert), "trace": [dict(insert), dict(main)]})
            live.append(address)
            address += 32
        if number == 2:
            destroy = {"function": "sll_destroy", "source": "src/sll.c", "line": 28}
            for freed in live[: nodes // 2 + rnd.randrange(3)]:
                resources.append({"type": "memory", "subtype": "free", "address": freed, "amount": 0,
                                  "uid": dict(destroy), "trace": [dict(destroy), dict(main)]})
        snapshots.append({"time": f"{0.025 * (number + 1):.6f}", "resources": resources, "models": []})
    return {
        "header": {"type": "memory", "units": {"memory": "B"}, "cmd": _BENCH, "args": "--iterations 1000",
                   "workload": "workloads/small.txt"},
        "collector_info": {"name": "memory", "params": {"sampling": 0.025, "all": False}},
        "postprocessors": [],
        "snapshots": snapshots,
    }


def _profiles_of(commit: _Commit, index: int, seed: int) -> Iterator[tuple[str, dict[str, Any]]]:
    rnd = random.Random(seed * 100_003 + index)
    for kind in commit.profiles:
        if kind == "time":
            yield "time-small", _time_profile(rnd, commit.factor, "workloads/small.txt")
        elif kind.startswith("mixed"):
            yield "trace-small", _mixed_profile(rnd, commit.factor, kind == "mixed-models")
        else:
            yield "memory-small", _memory_profile(rnd, 4 + index % 3)


def _file_name(label: str, when: int) -> str:
    import time

    stamp = time.strftime("%Y-%m-%d-%H-%M-%S", time.gmtime(when))
    return f"sll-bench-{label}-{stamp}.perf"


def _build(root: Path, commits: int, seed: int) -> None:
    from .. import api

    plan, notable = _plan(commits, seed)
    shas = _write_git(root, plan)
    api.init(root)
    with api.open_repository(root) as repo:
        for index, commit in enumerate(plan):
            for number, (label, data) in enumerate(_profiles_of(commit, index, seed)):
                collected = commit.when + 600 + 60 * number
                path = repo.jobs_dir / _file_name(label, collected)
                path.write_text(json.dumps({"origin": shas[index], **data}, indent=1))
                os.utime(path, (collected, collected))
                api.add([str(path)], minor=shas[index], repo=repo)
        head = plan[notable["head"]]
        rnd = random.Random(seed * 100_003 + commits)
        pending = [("time-large", _time_profile(rnd, head.factor, "workloads/large.txt")),
                   ("trace-small", _mixed_profile(rnd, head.factor, False))]
        for number, (label, data) in enumerate(pending):
            collected = head.when + 3 * 3600 + 60 * number
            path = repo.jobs_dir / _file_name(label, collected)
            path.write_text(json.dumps({"origin": shas[-1], **data}, indent=1))
            os.utime(path, (collected, collected))


__all__ = ["DEMO_VERSION", "MIN_COMMITS", "GitCommit", "build_demo_repository", "build_in_place", "write_history"]
