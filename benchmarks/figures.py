"""Every figure the READMEs state, and the benchmark run that measures it.

A README states a figure as its text followed by a marker naming its key::

    pushing them takes 13.07 s<!-- report: remote.push -->

``benchmarks/report.py`` runs the benchmarks of :data:`BENCHES`, picks each
figure of :data:`FIGURES` out of their JSON by its path, writes
``benchmarks/report.json`` and ``benchmarks/REPORT.md`` and rewrites the
marked figures of the READMEs (:data:`READMES`) to what it measured;
``tests/test_claims.py`` checks, without running anything, that every marked
figure is the report's.  To state a new figure: add a :class:`Figure` here
(and a :class:`Bench` if no run measures it yet), mark it in the README, run
``benchmarks/report.py --only KEY``.

This module only describes; it imports nothing of perun and runs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: The files whose marked figures the report rewrites and the test checks (relative to the repository).
READMES = ("README.md", "benchmarks/README.md")

#: ``TEXT<!-- report: KEY -->``: the figure's text is what ends right before the marker.
MARKER = re.compile(r"<!-- report: (?P<key>[a-z0-9_.-]+) -->")
#: The text of a figure as :func:`render` writes it, found at the end of the text before a marker.
FIGURE_TEXT = re.compile(r"(?:-?\d[\d,]*(?:\.\d+)?(?:x| s| ms| MB| %| µs)?|found|did not find)$")


@dataclass(frozen=True, slots=True)
class Bench:
    """One run of a benchmark script: ``argv`` after ``python benchmarks/SCRIPT``, full and ``--quick``."""

    script: str
    argv: tuple[str, ...]
    quick: tuple[str, ...]
    about: str


@dataclass(frozen=True, slots=True)
class Figure:
    """A number a README states: taken from the JSON of ``bench`` at ``path`` (keys joined by ``/``).

    ``scale`` multiplies the value (0.0058 -> 0.58 %), ``digits`` after the
    point, ``suffix`` follows the number (" s", "x", " %", " MB" or "");
    a ``bool`` value renders as ``found`` / ``did not find``.
    """

    bench: str
    path: str
    what: str
    suffix: str = " s"
    digits: int = 2
    scale: float = 1.0


def render(figure: Figure, value: Any) -> str:
    """The text a README shows for ``value`` of ``figure``."""
    if isinstance(value, bool):
        return "found" if value else "did not find"
    number = float(value) * figure.scale
    text = f"{number:,.{figure.digits}f}" if abs(number) >= 10_000 else f"{number:.{figure.digits}f}"
    return text + figure.suffix


def pick(document: Any, path: str) -> Any:
    """The value at ``path`` (``a/b/0/c``) of a JSON document; KeyError naming the path when absent."""
    node = document
    for step in path.split("/"):
        if isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        elif isinstance(node, dict) and step in node and node[step] is not None:
            node = node[step]
        else:
            raise KeyError(path)
    return node


BENCHES: dict[str, Bench] = {
    "help": Bench("run.py", ("--only", "help"), ("--quick", "--only", "help"), "perun-core --help, 5 runs"),
    "validate": Bench("validate.py", (), ("--resources", "100000", "--repeat", "3"),
                      "validate_profile on 1,000,000 packed resources"),
    "demo": Bench("demo_under_load.py", ("--builds", "1", "--load", "0"), ("--builds", "1", "--load", "0"),
                  "one build of the collected demo on the machine as it is (no added load)"),
    "formats": Bench("formats.py", (), ("--quick",),
                     "postprocessby end to end, read/write of 1,000,000 resources, memory collector factor"),
    "postprocess": Bench("postprocess.py", (), ("--quick",), "postprocessby of 1,000,000 resources, five units"),
    "views": Bench("views.py", (), ("--quick",), "the plotting views on 1,000,000 points"),
    "pytrace": Bench("python_collectors.py", (), ("--quick",), "pytrace's overhead on 1,000,000 calls"),
    "pymemory": Bench("python_collectors.py", ("--suite", "pymemory"), ("--suite", "pymemory", "--quick"),
                      "pymemory on lists of 500,000 and 2,000,000 ints"),
    "check": Bench("check.py", (), ("-n", "1", "--uids", "10", "--points", "100", "--versions", "20"),
                   "check profiles and check all, as a user runs them"),
    "accuracy": Bench("check_accuracy.py", (), ("--cases", "20", "--histories", "3", "--class-cases", "10",
                                                "--cli", "2"),
                      "accuracy of the check methods on held-out seeds"),
    "importdiff": Bench("importdiff.py", (), ("--perf-mb", "5", "--folded-lines", "50000", "--resources", "50000",
                                              "--repeat", "1"),
                        "imports of perf script and folded stacks, diff short, difference flame graph"),
    # three bisects: the README says the culprit is named every time, which one run cannot show
    "remote": Bench("remote.py", ("--repeat", "3"), ("--profiles", "50", "--megabytes", "2", "--commits", "16"),
                    "push and pull of 1,000 profiles; three bisects over 64 commits"),
}


def _postprocess(kind: str, unit: str, label: str) -> dict[str, Figure]:
    base = f"postprocess.{kind}.{unit}"
    where = f"results/{kind}/{unit}"
    return {f"{base}.cpu": Figure("postprocess", f"{where}/cpu_s/median", f"{label}: CPU (median)"),
            f"{base}.wall": Figure("postprocess", f"{where}/wall_s/median", f"{label}: wall (median)"),
            f"{base}.rss": Figure("postprocess", f"{where}/peak_rss_mb/max", f"{label}: peak RSS", " MB", 0)}


def _pymemory(size: str, variant: str) -> dict[str, Figure]:
    where, label = f"sizes/{size}/{variant}", f"pymemory bench, list of {size} ints, {variant}"
    return {f"pymemory.{size}.{variant}.process": Figure("pymemory", f"{where}/process_s", f"{label}: process wall",
                                                         digits=1 if size == "2000000" else 2),
            f"pymemory.{size}.{variant}.cpu": Figure("pymemory", f"{where}/child_cpu_s", f"{label}: child CPU",
                                                     digits=1 if size == "2000000" else 2)}


def _accuracy(short: str, method: str) -> dict[str, Figure]:
    where = f"methods/{method}"
    return {f"accuracy.{short}.f1": Figure("accuracy", f"{where}/f1", f"{method}: degradation F1", "", 3),
            f"accuracy.{short}.precision": Figure("accuracy", f"{where}/precision", f"{method}: precision", "", 3),
            f"accuracy.{short}.recall": Figure("accuracy", f"{where}/recall", f"{method}: recall", "", 3),
            f"accuracy.{short}.false_alarms": Figure("accuracy", f"{where}/false_alarms",
                                                     f"{method}: false alarms on unchanged uids", " %", 1, 100.0)}


FIGURES: dict[str, Figure] = {
    "help.wall": Figure("help", "scenarios/help/perun_core_help/median", "perun-core --help, wall (median)"),
    "validate.1m": Figure("validate", "validate_s/median", "validating 1,000,000 packed resources (median)",
                          " ms", 1, 1000.0),
    "demo.build": Figure("demo", "results/0/seconds", "building the collected demo once", " s", 0),
    "formats.postprocess.compact.wall": Figure("formats", "results/postprocess/compact/wall_s/median",
                                               "postprocessby regression_analysis -m full, compact input: wall"),
    "formats.postprocess.documented.wall": Figure("formats", "results/postprocess/documented/wall_s/median",
                                                  "the same, documented-JSON input: wall"),
    "formats.postprocess.compact.cpu": Figure("formats", "results/postprocess/compact/cpu_s/median",
                                              "the same, compact input: CPU (user + system)"),
    "formats.postprocess.documented.cpu": Figure("formats", "results/postprocess/documented/cpu_s/median",
                                                 "the same, documented input: CPU (user + system)"),
    "formats.postprocess.compact.rss": Figure("formats", "results/postprocess/compact/peak_rss_mb",
                                              "the same, compact input: peak RSS", " MB", 0),
    "formats.postprocess.documented.rss": Figure("formats", "results/postprocess/documented/peak_rss_mb",
                                                 "the same, documented input: peak RSS", " MB", 0),
    "formats.read.compact": Figure("formats", "results/read_write/compact/read_s/median",
                                   "reading 1,000,000 resources, compact layout", digits=3),
    "formats.read.documented": Figure("formats", "results/read_write/documented/read_s/median",
                                      "reading 1,000,000 resources, documented layout", digits=3),
    "formats.read.compact.cpu": Figure("formats", "results/read_write/compact/read_cpu_s/median",
                                       "reading 1,000,000 resources, compact layout: CPU", digits=3),
    "formats.read.documented.cpu": Figure("formats", "results/read_write/documented/read_cpu_s/median",
                                          "reading 1,000,000 resources, documented layout: CPU", digits=3),
    "formats.write.compact": Figure("formats", "results/read_write/compact/write_s/median",
                                    "writing 1,000,000 resources, compact layout", digits=3),
    "formats.write.documented": Figure("formats", "results/read_write/documented/write_s/median",
                                       "writing 1,000,000 resources, documented layout", digits=3),
    "formats.size.compact": Figure("formats", "results/read_write/compact/bytes", "pending file, compact", " MB", 1,
                                   1e-6),
    "formats.size.documented": Figure("formats", "results/read_write/documented/bytes", "pending file, documented",
                                      " MB", 0, 1e-6),
    "formats.memory.plain": Figure("formats", "results/memory/plain_s/median", "tree 300,000 plain run (median)"),
    "formats.memory.collect": Figure("formats", "results/memory/collect_s/median",
                                     "collect -c tree -a 300000 memory, end to end (median)"),
    "formats.memory.factor": Figure("formats", "results/memory/paired_factor/median",
                                    "memory collector end to end over the plain run (paired)", "x", 1),
    "formats.memory.cpu_factor": Figure("formats", "results/memory/cpu_s/factor",
                                        "memory collector over the plain run, CPU time", "x", 1),
    **{key: figure for kind in ("registered", "pending")
       for unit, label in (("regression_full", "regression_analysis -m full"),
                           ("regression_bisection", "regression_analysis -m bisection"),
                           ("regressogram", "regressogram"), ("moving_average", "moving_average"),
                           ("kernel_regression", "kernel_regression"))
       for key, figure in _postprocess(kind, unit, f"{kind} input, {label}").items()},
    **{f"views.{name}": Figure("views", f"timings/{name}/median", f"{name} of 1,000,000 points (median)", digits=3)
       for name in ("scatter_build", "scatter_render", "scatter_end_to_end", "bars_sum_per_uid",
                    "flow_mean_through_size")},
    **{f"pytrace.{name}": Figure("pytrace", f"variants/{name}/program_s/median", f"pytrace bench {name}: program_s",
                                 digits=3) for name in ("plain", "cprofile", "pytrace_leaf", "pytrace_work",
                                                        "pytrace_cprofile")},
    "pytrace.per_call_us": Figure("pytrace", "per_recorded_call_overhead_us", "pytrace cost per recorded call",
                                  " µs", 2),
    **_pymemory("500000", "plain"), **_pymemory("500000", "tracemalloc"), **_pymemory("500000", "pymemory"),
    **_pymemory("2000000", "plain"), **_pymemory("2000000", "tracemalloc"), **_pymemory("2000000", "pymemory"),
    "check.profiles": Figure("check", "check_profiles/median", "check profiles, 2 x 21.7 MB (median wall)", digits=3),
    "check.profiles_cpu": Figure("check", "check_profiles/cpu_median", "check profiles, CPU (median)"),
    "check.all": Figure("check", "check_all/median", "check all over 200 versions (median wall)"),
    "check.all_cpu": Figure("check", "check_all/cpu_median", "check all over 200 versions, CPU (median)"),
    **_accuracy("sart", "size_aware_rank_test"), **_accuracy("aat", "average_amount_threshold"),
    **_accuracy("bmoe", "best_model_order_equality"),
    "accuracy.sart.wrong_direction": Figure("accuracy", "methods/size_aware_rank_test/wrong_direction",
                                            "default method: verdicts in the wrong direction", "", 0),
    "accuracy.sart.not_in_baseline": Figure("accuracy", "methods/size_aware_rank_test/not_in_baseline",
                                            "default method: new uids reported NotInBaseline", " %", 0, 100.0),
    "accuracy.creep.flagged": Figure("accuracy", "methods/size_aware_rank_test/creeping/creeping_flagged",
                                     "check head on creeping histories: creeping uids flagged", " %", 0, 100.0),
    "accuracy.creep.as_drift": Figure("accuracy", "methods/size_aware_rank_test/creeping/creeping_flagged_as_drift",
                                      "the same, flagged as a creeping drift", " %", 0, 100.0),
    "accuracy.creep.false_alarms": Figure("accuracy", "methods/size_aware_rank_test/creeping/steady_false_alarms",
                                          "check head on creeping histories: false alarms on steady uids", " %", 0,
                                          100.0),
    "accuracy.creep.histories": Figure("accuracy", "methods/size_aware_rank_test/creeping/histories",
                                       "creeping histories checked", "", 0),
    **{f"accuracy.class.{kind}.{name}": Figure("accuracy", f"classes/{kind}/{name}", f"class {kind}: {name}", " %", 1,
                                               100.0)
       for kind in ("sparse-order", "upper-third", "constant") for name in ("hit", "maybe", "false_alarms")},
    **{f"importdiff.{name}": Figure("importdiff", f"timings/{name}/median_s", f"{name} (median wall)")
       for name in ("import_perf_script", "import_folded", "cli_import_perf_script", "cli_import_folded",
                    "diff_short", "diff_flamegraph", "diff_flamegraph_svg")},
    **{f"importdiff.{name}.cpu": Figure("importdiff", f"timings/{name}/cpu_median_s", f"{name} (median CPU)")
       for name in ("import_perf_script", "import_folded", "cli_import_perf_script", "cli_import_folded",
                    "diff_short", "diff_flamegraph", "diff_flamegraph_svg")},
    "remote.objects": Figure("remote", "transfer/objects_mb", "objects of the 1,000 profiles", " MB", 0),
    "remote.push": Figure("remote", "transfer/push_s", "perun-core push of 1,000 profiles"),
    "remote.pull": Figure("remote", "transfer/pull_s", "perun-core pull of 1,000 profiles"),
    "remote.push_incremental": Figure("remote", "transfer/push_incremental_s", "push of 10 more profiles"),
    "remote.pull_incremental": Figure("remote", "transfer/pull_incremental_s", "pull of 10 more profiles"),
    "remote.status": Figure("remote", "transfer/status_s", "status of the second clone"),
    "remote.bisect_found": Figure("remote", "bisect/found", "bisects that named the culprit", "", 0),
    "remote.bisect_runs": Figure("remote", "bisect/bisects", "bisects run", "", 0),
    "remote.bisect_collections": Figure("remote", "bisect/median_collections", "bisect: measurement windows (median)",
                                        "", 0),
    "remote.bisect_ideal": Figure("remote", "bisect/ideal_collections", "bisect: ideal windows", "", 0),
    "remote.bisect_wall": Figure("remote", "bisect/median_wall_s", "bisect over 64 commits: wall (median)"),
}
