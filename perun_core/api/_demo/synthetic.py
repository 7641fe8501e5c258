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

The project's files are in :mod:`.synthetic_files`, the profiles in
:mod:`.synthetic_profiles`.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from ... import api
from ...errors import UsageError
from .gitwrite import AUTHORS, GitCommit, write_history
from .staging import build_in_place
from .synthetic_files import files_of
from .synthetic_profiles import file_name, mixed_profile, profiles_of, time_profile

__all__ = ["DEMO_VERSION", "MIN_COMMITS", "build_demo_repository"]

#: bump when the generated content changes, so old cached demos are rebuilt
DEMO_VERSION = 2
MIN_COMMITS = 24

_BASE_TIME = 1_709_542_800  # 2024-03-04 09:00:00 UTC
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
        plan.append(_Commit(special.get(i) or subjects[i % len(subjects)], rnd.choice(AUTHORS), when,
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


def _write_git(root: Path, plan: list[_Commit]) -> list[str]:
    """Write every planned commit into a new repository at ``root``; returns the shas."""
    ancestry = _ancestry(plan)
    commits = [GitCommit(files_of(plan, ancestry, index), planned.subject + "\n" + _body_of(planned),
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


def _build(root: Path, commits: int, seed: int) -> None:
    plan, notable = _plan(commits, seed)
    shas = _write_git(root, plan)
    api.init(root)
    with api.open_repository(root) as repo:
        for index, commit in enumerate(plan):
            for number, (label, data) in enumerate(profiles_of(commit, index, seed)):
                collected = commit.when + 600 + 60 * number
                path = repo.jobs_dir / file_name(label, collected)
                path.write_text(json.dumps({"origin": shas[index], **data}, indent=1))
                os.utime(path, (collected, collected))
                api.add([str(path)], minor=shas[index], repo=repo)
        head = plan[notable["head"]]
        rnd = random.Random(seed * 100_003 + commits)
        pending = [("time-large", time_profile(rnd, head.factor, "workloads/large.txt")),
                   ("trace-small", mixed_profile(rnd, head.factor, False))]
        for number, (label, data) in enumerate(pending):
            collected = head.when + 3 * 3600 + 60 * number
            path = repo.jobs_dir / file_name(label, collected)
            path.write_text(json.dumps({"origin": shas[-1], **data}, indent=1))
            os.utime(path, (collected, collected))
