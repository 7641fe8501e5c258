"""A demo perun repository whose profiles come from the real collectors.

:func:`build_collected_demo` writes a git repository (with dulwich) of a
small C linked-list library and its benchmark, twelve commits on ``main``,
then profiles it the way a user would, through the core's public API:

* ``.perun/local.yml`` gets the job matrix -- ``make`` before every run,
  ``./sll-bench 15000`` timed by the time collector (one warm-up, seven
  measured runs) -- and a workload generator ``sizes`` (1000 to 8000 keys);
* :func:`~perun_core.api.run.run_matrix` times every commit, each in a
  temporary worktree;
* :func:`~perun_core.api.run.run_job` traces the ``sll_*`` functions over
  the ``sizes`` workloads (the trace collector builds the benchmark with
  ``-finstrument-functions``), drops preempted calls with the filter and
  fits regression models, on the commit before the regression, the
  regression and the fix;
* one more job on HEAD records every allocation with the memory collector
  (the heap map's data), which is registered, and a time and a trace
  profile, which are left pending in ``.perun/jobs``; all other profiles are
  registered at their commits;
* :func:`~perun_core.api.check.check_all` checks the whole history with the
  default strategy and confirms each time-based change by interleaved
  re-runs of the two commits, so the ``-`` and ``+`` marks of ``log`` are
  what the checks found and the re-runs repeated.

The story: "Drop the tail pointer" makes ``sll_insert`` walk to the last
node, so building a list of n keys becomes O(n^2) and the benchmark about
four times slower; "Keep a tail pointer again" three commits later undoes
it.  Whole-run times of a busy machine wander by tens of percent between
commits; the checks tell that from slower code because CPU time does not
follow the wall time then, and because every change of a time profile is
re-measured with the two commits' runs interleaved
(:mod:`perun_core.check.confirm`).  No special threshold is needed.

The git history is the same in every build (fixed dates and authors, so the
same commit ids); the measurements are whatever this machine measured.  The
builder never prints: progress goes to a callback, one line per step.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import check as api_check, run as api_run
from ... import api
from ...config import dump_yaml
from ...errors import ExternalToolError, Interrupted
from ...events import ProfileWritten, VersionStarted
from ...native import compiler
from .gitwrite import AUTHORS, GitCommit, write_history
from .staging import build_visibly

__all__ = ["COLLECTED_DEMO_VERSION", "DEMO_COMMITS", "HOW_TO_GET_TOOLS", "build_collected_demo",
           "check_demo_tools"]

#: bump when the history, the jobs or the checks change, so old cached demos are not taken for new ones
COLLECTED_DEMO_VERSION = 4
HOW_TO_GET_TOOLS = "install a C compiler, make and binutils (Debian/Ubuntu: apt install build-essential)"

_BASE_TIME = 1_714_032_000  # 2024-04-25 08:00:00 UTC
_BENCH = "./sll-bench"
#: ~60 ms per run here before the regression, ~4x that with it: long enough that timer and
#: scheduling noise stay far below the step, short enough that the whole build takes half a minute
_BENCH_SIZE = "15000"
_MEMORY_SIZE = "6000"
_TIME_COLLECTOR = {"name": "time", "params": {"warmup": 1, "repeat": 7}}
_SIZES = {"id": "sizes", "type": "integer", "min": 1000, "max": 8000, "step": 1000}
#: every 10th insert and 5th search is enough for the models and keeps the profile small
_TRACE_PARAMS = {"rules": ["sll_*"], "sampling": ["sll_insert=10", "sll_search=5"],
                 "files": ["src/sll.c", "src/bench.c"], "cflags": ["-O2"]}
#: calls that took over a millisecond were preempted (the slowest, sll_destroy of 8000 keys, takes
#: about 0.1 ms): on a busy machine a few of them would drag the least-squares models far off
_FILTER = {"conditions": ["amount < 1000000"]}
#: one insert or search walks at most 8000 nodes, about 10 us even with the regression: calls over
#: 30 us were preempted too, and would squash the plot of the linear ones into its bottom row
_FILTER_WALKS = {"uids": ["sll_insert", "sll_search"], "conditions": ["amount >= 30000"], "mode": "drop"}
_MODELS = {"method": "full", "regression_models": ["constant", "linear", "quadratic"]}


@dataclass(frozen=True)
class _Tree:
    """What a commit's files contain; each commit of the plan changes some of it."""

    tail: bool = True
    warnings: bool = False
    usage: bool = False
    length: bool = False
    complexity: bool = False
    malloc_check: bool = False
    reverse: bool = False
    tests: bool = False
    null_guard: bool = False
    release: bool = False


@dataclass(frozen=True)
class _Step:
    subject: str
    body: str
    author: int
    hours: int
    change: dict[str, bool]


_PLAN = (
    _Step("Initial import of the sll library", "", 0, 0, {}),
    _Step("Explain how to build and run the benchmark", "", 1, 5, {"usage": True}),
    _Step("Build with -Wall -Wextra", "", 0, 20, {"warnings": True}),
    _Step("Add sll_length", "", 2, 26, {"length": True}),
    _Step("Document the complexity of each function", "", 1, 3, {"complexity": True}),
    _Step("Check malloc failures in the benchmark", "", 3, 22, {"malloc_check": True}),
    _Step("Drop the tail pointer: find the last node when appending",
          "One field less to keep consistent in sll_init and sll_remove.\n", 2, 27, {"tail": False}),
    _Step("Add sll_reverse", "", 0, 4, {"reverse": True}),
    _Step("Add a test program for the list operations", "", 3, 21, {"tests": True}),
    _Step("Keep a tail pointer again: appending was quadratic",
          "Walking to the last node made building a list of n keys O(n^2): the\n"
          "benchmark has been about four times slower since the tail pointer was\n"
          "dropped.\n", 1, 24, {"tail": True}),
    _Step("Guard against NULL lists in sll_destroy", "", 2, 6, {"null_guard": True}),
    _Step("Prepare the 0.2 release", "", 0, 28, {"release": True}),
)
DEMO_COMMITS = len(_PLAN)
#: plan indexes of the notable commits
_BEFORE, _SLOW, _FAST = 5, 6, 9
_TRACED = (_BEFORE, _SLOW, _FAST)


# -- the project's files ----------------------------------------------------------------

def _makefile(tree: _Tree) -> str:
    warnings = " -Wall -Wextra" if tree.warnings else ""
    text = (
        f"CFLAGS = -O2 -g -fno-omit-frame-pointer{warnings}\n"
        "# debug information names the sources relative to the project, wherever it is built\n"
        "CFLAGS += -fdebug-prefix-map=$(CURDIR)=.\n"
        "\n"
        "sll-bench: src/sll.o src/bench.o\n"
        "\t$(CC) $(CFLAGS) -o $@ $^\n"
    )
    if tree.tests:
        text += ("\ntest-sll: src/sll.o tests/test_sll.o\n\t$(CC) $(CFLAGS) -Isrc -o $@ $^\n"
                 "\ntests/test_sll.o: CFLAGS += -Isrc\n"
                 "\ncheck: test-sll\n\t./test-sll\n")
    return text + "\nclean:\n\trm -f src/*.o tests/*.o sll-bench test-sll\n"


def _readme(tree: _Tree) -> str:
    text = "# sll\n\nA small singly linked list library in C, the demo project of perun.\n"
    if tree.usage:
        text += ("\n    make\n    ./sll-bench 15000\n\n"
                 "The benchmark builds a list of that many keys in ten rounds; each round\n"
                 "also looks up and removes some of the keys inserted so far.\n")
    if tree.release:
        text += ("\n## 0.2\n\n- sll_length, sll_reverse\n- a test program (`make check`)\n"
                 "- appending is O(1) again\n")
    return text


def _header(tree: _Tree) -> str:
    def doc(text: str) -> str:
        return f"/* {text} */\n" if tree.complexity else ""

    tail = "    SLLNode *tail;\n" if tree.tail else ""
    append_cost = "O(1)" if tree.tail else "O(n): walks to the last node"
    text = (
        "#ifndef SLL_H\n#define SLL_H\n\n#include <stddef.h>\n\n"
        "typedef struct SLLNode {\n    int key;\n    struct SLLNode *next;\n} SLLNode;\n\n"
        f"typedef struct SLList {{\n    SLLNode *head;\n{tail}    size_t length;\n}} SLList;\n\n"
        "void sll_init(SLList *list);\n"
        + doc(f"Appends key; 0, or -1 when out of memory. {append_cost}.")
        + "int sll_insert(SLList *list, int key);\n"
        + doc("The first node holding key, or NULL. O(n).")
        + "SLLNode *sll_search(SLList *list, int key);\n"
        + doc("Removes the first node holding key; 0, or -1 when there is none. O(n).")
        + "int sll_remove(SLList *list, int key);\n"
    )
    if tree.length:
        text += doc("The number of keys. O(1).") + "size_t sll_length(const SLList *list);\n"
    if tree.reverse:
        text += doc("Reverses the list in place. O(n).") + "void sll_reverse(SLList *list);\n"
    return text + doc("Frees every node. O(n).") + "void sll_destroy(SLList *list);\n\n#endif\n"


def _source(tree: _Tree) -> str:
    init_tail = "    list->tail = NULL;\n" if tree.tail else ""
    if tree.tail:
        append = ("    if (list->tail == NULL)\n        list->head = node;\n    else\n"
                  "        list->tail->next = node;\n    list->tail = node;\n")
    else:
        append = ("    if (list->head == NULL) {\n        list->head = node;\n    } else {\n"
                  "        SLLNode *last = list->head;\n        while (last->next != NULL)\n"
                  "            last = last->next;\n        last->next = node;\n    }\n")
    unlink_tail = "        if (list->tail == node)\n            list->tail = prev;\n" if tree.tail else ""
    text = (
        "#include <stdlib.h>\n#include \"sll.h\"\n\n"
        f"void sll_init(SLList *list) {{\n    list->head = NULL;\n{init_tail}    list->length = 0;\n}}\n\n"
        "int sll_insert(SLList *list, int key) {\n    SLLNode *node = malloc(sizeof *node);\n"
        "    if (node == NULL)\n        return -1;\n    node->key = key;\n    node->next = NULL;\n"
        f"{append}    list->length++;\n    return 0;\n}}\n\n"
        "SLLNode *sll_search(SLList *list, int key) {\n"
        "    for (SLLNode *node = list->head; node != NULL; node = node->next)\n"
        "        if (node->key == key)\n            return node;\n    return NULL;\n}\n\n"
        "int sll_remove(SLList *list, int key) {\n    SLLNode *prev = NULL;\n"
        "    for (SLLNode *node = list->head; node != NULL; prev = node, node = node->next) {\n"
        "        if (node->key != key)\n            continue;\n"
        "        if (prev == NULL)\n            list->head = node->next;\n        else\n"
        f"            prev->next = node->next;\n{unlink_tail}"
        "        free(node);\n        list->length--;\n        return 0;\n    }\n    return -1;\n}\n\n"
    )
    if tree.length:
        text += "size_t sll_length(const SLList *list) {\n    return list->length;\n}\n\n"
    if tree.reverse:
        new_tail = "    list->tail = list->head;\n" if tree.tail else ""
        text += ("void sll_reverse(SLList *list) {\n    SLLNode *done = NULL, *node = list->head;\n"
                 f"{new_tail}"
                 "    while (node != NULL) {\n        SLLNode *next = node->next;\n        node->next = done;\n"
                 "        done = node;\n        node = next;\n    }\n    list->head = done;\n}\n\n")
    guard = "    if (list == NULL)\n        return;\n" if tree.null_guard else ""
    return text + (f"void sll_destroy(SLList *list) {{\n{guard}    SLLNode *node = list->head;\n"
                   "    while (node != NULL) {\n        SLLNode *next = node->next;\n        free(node);\n"
                   "        node = next;\n    }\n    sll_init(list);\n}\n")


def _bench(tree: _Tree) -> str:
    if tree.malloc_check:
        insert = ("        for (long i = 0; i < size / ROUNDS; i++) {\n"
                  "            if (sll_insert(&list, key_of(inserted++)) != 0) {\n"
                  "                fprintf(stderr, \"out of memory\\n\");\n                return 1;\n"
                  "            }\n        }\n")
    else:
        insert = ("        for (long i = 0; i < size / ROUNDS; i++)\n"
                  "            sll_insert(&list, key_of(inserted++));\n")
    return (
        "/* Builds a list of SIZE keys in ten rounds; each round also looks up and\n"
        "   removes some of the keys inserted so far. */\n"
        "#include <stdio.h>\n#include <stdlib.h>\n#include \"sll.h\"\n\n#define ROUNDS 10\n\n"
        "/* distinct keys for the indexes 0, 1, 2, ... */\n"
        "static int key_of(long index) {\n"
        "    return (int)((unsigned long)index * 2654435761UL % 1000003UL);\n}\n\n"
        "/* xorshift: the same indexes in every run, so that runs are comparable */\n"
        "static long pick(unsigned long *state, long below) {\n"
        "    *state ^= *state << 13;\n    *state ^= *state >> 7;\n    *state ^= *state << 17;\n"
        "    return (long)(*state % (unsigned long)below);\n}\n\n"
        "int main(int argc, char **argv) {\n"
        "    long size = argc > 1 ? atol(argv[1]) : 10000;\n"
        "    long inserted = 0, found = 0;\n    unsigned long state = 88172645463325252UL;\n    SLList list;\n\n"
        "    if (size < ROUNDS) {\n"
        "        fprintf(stderr, \"usage: %s SIZE (at least %d)\\n\", argv[0], ROUNDS);\n        return 2;\n    }\n"
        "    sll_init(&list);\n    for (int round = 0; round < ROUNDS; round++) {\n"
        f"{insert}"
        "        for (long i = 0; i < size / (2 * ROUNDS); i++)\n"
        "            found += sll_search(&list, key_of(pick(&state, inserted))) != NULL;\n"
        "        for (long i = 0; i < size / (20 * ROUNDS); i++)\n"
        "            sll_remove(&list, key_of(pick(&state, inserted)));\n    }\n"
        "    printf(\"%zu keys, %ld found\\n\", list.length, found);\n"
        "    sll_destroy(&list);\n    return 0;\n}\n"
    )


_TESTS = """#include <assert.h>
#include <stdio.h>
#include "sll.h"

int main(void) {
    SLList list;
    sll_init(&list);
    assert(sll_search(&list, 1) == NULL && sll_remove(&list, 1) == -1);
    for (int key = 1; key <= 5; key++)
        assert(sll_insert(&list, key) == 0);
    assert(sll_length(&list) == 5 && list.head->key == 1);
    assert(sll_remove(&list, 5) == 0 && sll_insert(&list, 6) == 0);
    sll_reverse(&list);
    assert(list.head->key == 6 && sll_search(&list, 3) != NULL);
    sll_destroy(&list);
    assert(sll_length(&list) == 0);
    puts("ok");
    return 0;
}
"""


def _files(tree: _Tree) -> dict[str, bytes]:
    files = {
        ".gitignore": "*.o\nsll-bench\ntest-sll\n",
        "Makefile": _makefile(tree),
        "README.md": _readme(tree),
        "src/sll.h": _header(tree),
        "src/sll.c": _source(tree),
        "src/bench.c": _bench(tree),
    }
    if tree.tests:
        files["tests/test_sll.c"] = _TESTS
    return {name: text.encode() for name, text in files.items()}


def _history() -> list[GitCommit]:
    commits = []
    tree = _Tree()
    when = _BASE_TIME
    for index, step in enumerate(_PLAN):
        tree = replace(tree, **step.change)
        when += step.hours * 3600
        message = step.subject + "\n" + (f"\n{step.body}" if step.body else "")
        commits.append(GitCommit(_files(tree), message, AUTHORS[step.author], when,
                                 [index - 1] if index else []))
    return commits


# -- collecting ---------------------------------------------------------------------------

def check_demo_tools() -> None:
    """Raise :class:`ExternalToolError` naming the first missing tool the demo needs (cc, make, binutils)."""

    found = {"cc": compiler(), "make": shutil.which("make"), "nm": shutil.which("nm"),
             "addr2line": shutil.which("addr2line")}
    for tool, path in found.items():
        if path is None:
            raise ExternalToolError(tool, HOW_TO_GET_TOOLS)


def _configure(root: Path) -> None:
    """Append the demo's job matrix, and generator, with comments, to ``local.yml``."""

    sections = (
        ("Build before every run, then time the benchmark on a list of 15000 keys\n"
         "(one warm-up run, seven measured ones): 'R' in perun-tui runs this matrix.",
         {"execute": {"pre_run": ["make"]}, "cmds": [_BENCH], "workloads": [_BENCH_SIZE],
          "collectors": [_TIME_COLLECTOR]}),
        ("A job whose workload is 'sizes' runs once per list size, merged into one\n"
         "profile; the demo traced the sll_* functions over these sizes.",
         {"generators": {"workload": [_SIZES]}}),
    )
    text = "\n# ---- the demo ------------------------------------------------------------\n"
    for comment, data in sections:
        text += "\n" + "".join(f"# {line}\n" for line in comment.splitlines()) + dump_yaml(data)
    path = root / ".perun" / "local.yml"
    with path.open("a", encoding="utf-8") as stream:
        stream.write(text)
    api.validate_config_file(path, "local")


def _reporter(progress: Callable[[str], None], what: str) -> Callable[[Any], None]:
    """A run's event callback that reports each commit the run starts on."""

    def on_event(event: Any) -> None:
        if isinstance(event, VersionStarted):
            progress(f"collecting {what}: commit {event.index}/{event.count} ({event.version[:7]})")

    return on_event


def _register(written: list[Any], repo: Any) -> None:
    for profile in written:
        api.add([str(profile.path)], minor=profile.origin, repo=repo)


def _registering(root: Path, report: Callable[[Any], None], registered: set[Path]) -> Callable[[Any], None]:
    """A run's event callback that also registers each profile as soon as it is written.

    So a demo opened while it is built shows each commit's time profile
    when it lands.  A repository of its own per profile: the build's one is
    shared with the traced phase's thread.
    """

    def on_event(event: Any) -> None:
        report(event)
        if isinstance(event, ProfileWritten):
            api.add([str(event.path)], minor=event.origin, cwd=root)
            registered.add(event.path)

    return on_event


def _build(root: Path, progress: Callable[[str], None], cancel: threading.Event | None,
           on_ready: Callable[[Path], None] | None = None) -> None:
    """Write the history, profile it and check it; ``on_ready`` gets ``root`` once it opens as a repository.

    The time profiles are registered as they are written (the others at
    the end, in the order of the complete build: each commit's time profile
    first).
    """
    check_demo_tools()
    shas = write_history(root, _history(), {"main": len(_PLAN) - 1}, progress)
    head = shas[-1]
    api.init(root)
    _configure(root)
    if on_ready is not None:
        on_ready(root)
    registered: set[Path] = set()
    with api.open_repository(root) as repo:
        # the traced builds run beside the timed ones: each phase waits on compilers and its own
        # worktrees much of the time, so on two cores both together take little longer than the first.
        # Should the traced phase fail beside the other, it is run again alone before giving up.
        outcome: dict[str, Any] = {}
        stop = threading.Event()

        def trace_phase(cancelled: threading.Event | None) -> Any:
            return api_run.run_job(
                [_BENCH], workloads=[_SIZES["id"]], collectors=[("trace", _TRACE_PARAMS)],
                postprocessors=[("filter", _FILTER), ("filter", _FILTER_WALKS), ("regression_analysis", _MODELS)],
                minor_versions=[shas[i] for i in _TRACED],
                on_event=_reporter(progress, "trace profiles with regression models"), cancel=cancelled, repo=repo)

        def beside() -> None:
            try:
                outcome["traced"] = trace_phase(stop)
            except BaseException as exc:  # noqa: BLE001 - looked at by the building thread below
                outcome["error"] = exc

        watcher = _forward_cancel(cancel, stop)
        tracer = threading.Thread(target=beside, name="demo-trace", daemon=True)
        tracer.start()
        try:
            timed = api_run.run_matrix(
                minor_versions=shas, cancel=stop, repo=repo,
                on_event=_registering(root, _reporter(progress, "time profiles"), registered))
        except BaseException:
            stop.set()
            raise
        finally:
            tracer.join()
            watcher.set()
        if "traced" in outcome:
            traced = outcome["traced"]
        elif isinstance(outcome.get("error"), Interrupted) and cancel is not None and cancel.is_set():
            raise outcome["error"]
        else:
            traced = trace_phase(cancel)
        progress("collecting a memory profile and two pending profiles of HEAD")
        # one worktree for the three: only the memory profile is registered, the others stay pending
        last = api_run.run_job([_BENCH], workloads=[_MEMORY_SIZE],
                               collectors=[("memory", {"sampling": 0.001}), _TIME_COLLECTOR,
                                           ("trace", _TRACE_PARAMS)],
                               minor_versions=[head], cancel=cancel, repo=repo)
        memory = [w for w in last.profiles if w.job.collector.name == "memory"]
        progress("registering the profiles")
        _register([w for w in [*timed.profiles, *traced.profiles, *memory] if w.path not in registered], repo)
        progress("checking the history for performance changes")
        api_check.check_all(confirm=True, cancel=cancel, repo=repo)


def _forward_cancel(cancel: threading.Event | None, stop: threading.Event) -> threading.Event:
    """Set ``stop`` when ``cancel`` is set, until the returned event is set (a watcher thread)."""
    done = threading.Event()
    if cancel is None:
        return done

    def watch() -> None:
        while not done.is_set():
            if cancel.wait(0.1):
                stop.set()
                return

    threading.Thread(target=watch, name="demo-cancel", daemon=True).start()
    return done


def build_collected_demo(path: Path | str, *, progress: Callable[[str], None] | None = None,
                         cancel: threading.Event | None = None,
                         on_ready: Callable[[Path], None] | None = None) -> Path:
    """Build the demo repository at ``path`` with real profiles (or reuse the one built there before).

    ``path`` must be missing, an empty directory, or hold this demo (then
    it is returned at once), or a build of it that was killed (built
    again).  The build takes about half a minute on two idle cores, minutes on a busy machine.  It happens
    in ``path`` itself, so that it can be watched: ``on_ready`` gets the
    root as soon as it opens as a repository (its history written, no
    profiles yet), and each commit's time profile is registered as soon as
    it is measured; the demo counts as built (:func:`~perun_core.api.demo.demo_is_built`)
    only once the build is complete.  A failed or interrupted build leaves
    nothing behind; a second build of the same ``path`` waits for the
    first (see :func:`~perun_core.api._demo.staging.build_visibly`).
    ``progress`` gets one line per step; ``cancel`` stops the build from
    another thread.

    Raises :class:`~perun_core.errors.UsageError` when ``path`` holds
    something else, :class:`~perun_core.errors.ExternalToolError` when cc,
    make or binutils are missing, :class:`~perun_core.errors.Interrupted`
    when cancelled (or on Ctrl-C), and the run errors of the collectors
    (:class:`~perun_core.errors.RunError`) when profiling fails.
    """
    report = progress or (lambda line: None)
    marker = {"kind": "collected", "version": COLLECTED_DEMO_VERSION}
    return build_visibly(path, marker, lambda root: _build(root, report, cancel, on_ready), cancel=cancel,
                         waiting=lambda: report("waiting for another build of the demo in this directory"))
