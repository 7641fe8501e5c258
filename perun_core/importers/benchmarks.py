"""Results of benchmark harnesses as time profiles: pytest-benchmark, hyperfine, Google Benchmark.

Every run (round, repetition) becomes one resource, so checks see the
spread and not only a mean (a negative time is refused, naming its key)::

    {"type": "time", "subtype": "round", "uid": "tests/test_a.py::test_fib", "amount": 0.0000213}

* ``pytest-benchmark`` reads ``--benchmark-json`` files.  Each benchmark's
  rounds (``stats.data``, written with ``--benchmark-save-data``) are
  ``round`` resources in seconds; without them, one ``mean`` resource
  carrying the file's statistics (``min``, ``max``, ``stddev``, ``rounds``).
  The header keeps ``machine_info``, ``commit_info`` and the version.
* ``hyperfine`` reads ``--export-json`` files: each command's runs
  (``times``) are ``wall`` resources, with ``user`` and ``system`` means
  as resources of their own; seconds.  ``exit_codes`` are kept per run.
* ``google-benchmark`` reads ``--benchmark_format=json`` (or
  ``--benchmark_out``) files: each ``iteration`` run gives a
  ``real_time`` and a ``cpu_time`` resource (``repetition`` numbered from
  0, ``iterations``); aggregates (mean, median, stddev) are left out
  unless ``--aggregates`` is given, as they are computed from the runs.
  Times are in the file's ``time_unit``; when benchmarks of one file use
  different units they are all converted to the finest of them, and the
  original unit is kept on each resource as ``time_unit``.  The header
  keeps the ``context`` (host, CPUs, caches, load, build type).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..params import Param
from ..profile.model import Profile
from .common import Importer, JsonDoc, read_json, stored_file_name, table_profile, tool_header

__all__ = ["GoogleBenchmarkImporter", "HyperfineImporter", "PytestBenchmarkImporter"]

_NUMBER = (int, float)
#: Google Benchmark's time units, in nanoseconds
_GB_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _profile(rows: list[dict], unit: str, tool: dict[str, Any]) -> Profile:
    return table_profile({"type": "time", "units": {"time": unit}, "tool": tool}, rows)


class PytestBenchmarkImporter(Importer):
    name = "pytest-benchmark"
    summary = "pytest-benchmark --benchmark-json files: every round of every benchmark, in seconds."
    params = (
        Param("uid", "choice", "fullname", "Which name of a benchmark becomes its uid.",
              choices=("fullname", "name"), flags=("--uid",)),
    )

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        rows: list[dict] = []
        tools = []
        for path in files:
            doc = read_json(path)
            root = doc.get({"": doc.data}, "", "", dict)
            benchmarks = doc.get(root, "benchmarks", "", list)
            for i, bench in enumerate(benchmarks):
                where = f"benchmarks[{i}]"
                bench = doc.get(benchmarks, i, "benchmarks", dict)
                uid = doc.get(bench, options.get("uid") or "fullname", where, str)
                stats = doc.get(bench, "stats", where, dict)
                extra = {"group": bench["group"]} if bench.get("group") else {}
                if bench.get("param") is not None:
                    extra["param"] = str(bench["param"])
                data = doc.get(stats, "data", f"{where}.stats", list, optional=True)
                if data:
                    for j, value in enumerate(data):
                        doc.amount(data, j, f"{where}.stats.data")
                        rows.append({"type": "time", "subtype": "round", "uid": uid, "amount": value,
                                     "round": j, **extra})
                else:
                    mean = doc.amount(stats, "mean", f"{where}.stats")
                    summary = {key: stats[key] for key in ("min", "max", "stddev", "median", "rounds")
                               if isinstance(stats.get(key), _NUMBER)}
                    rows.append({"type": "time", "subtype": "mean", "uid": uid, "amount": mean, **summary, **extra})
            tools.append({"file": stored_file_name(path), "version": root.get("version"), "datetime": root.get("datetime"),
                          "machine_info": root.get("machine_info"), "commit_info": root.get("commit_info")})
        return _profile(rows, "s", tool_header("pytest-benchmark", tools))


class HyperfineImporter(Importer):
    name = "hyperfine"
    summary = "hyperfine --export-json files: every run of every command, in seconds."

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        rows: list[dict] = []
        for path in files:
            doc = read_json(path)
            root = doc.get({"": doc.data}, "", "", dict)
            results = doc.get(root, "results", "", list)
            for i, result in enumerate(results):
                where = f"results[{i}]"
                result = doc.get(results, i, "results", dict)
                command = doc.get(result, "command", where, str)
                times = doc.get(result, "times", where, list)
                codes = doc.get(result, "exit_codes", where, list, optional=True, default=[])
                extra = {"parameters": result["parameters"]} if isinstance(result.get("parameters"), dict) else {}
                for j, _ in enumerate(times):
                    value = doc.amount(times, j, f"{where}.times")
                    row = {"type": "time", "subtype": "wall", "uid": command, "amount": value, "run": j, **extra}
                    if j < len(codes) and isinstance(codes[j], int):
                        row["exit_code"] = codes[j]
                    rows.append(row)
                for key in ("user", "system"):
                    value = doc.amount(result, key, where, optional=True)
                    if value is not None:
                        rows.append({"type": "time", "subtype": key, "uid": command, "amount": value, **extra})
        return _profile(rows, "s", {"name": "hyperfine", "files": [stored_file_name(p) for p in files]})


class GoogleBenchmarkImporter(Importer):
    name = "google-benchmark"
    summary = "Google Benchmark JSON (--benchmark_format=json): real and CPU time of every repetition."
    params = (
        Param("aggregates", "bool", False, "Also import the aggregates the file holds (mean, median, stddev).",
              flags=("--aggregates",)),
    )

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        found: list[tuple[JsonDoc, str, dict, str]] = []
        contexts = []
        for path in files:
            doc = read_json(path)
            root = doc.get({"": doc.data}, "", "", dict)
            benchmarks = doc.get(root, "benchmarks", "", list)
            contexts.append({"file": stored_file_name(path), **doc.get(root, "context", "", dict, optional=True, default={})})
            for i, _ in enumerate(benchmarks):
                where = f"benchmarks[{i}]"
                bench = doc.get(benchmarks, i, "benchmarks", dict)
                unit = doc.get(bench, "time_unit", where, str, optional=True, default="ns")
                if unit not in _GB_UNITS:
                    raise doc.fail(f"{where}.time_unit", f"expected one of {', '.join(_GB_UNITS)}, got '{unit}'")
                found.append((doc, where, bench, unit))
        units = {unit for *_, unit in found}
        unit = min(units, key=_GB_UNITS.__getitem__) if units else "ns"
        rows: list[dict] = []
        for doc, where, bench, own in found:
            run_type = doc.get(bench, "run_type", where, str, optional=True, default="iteration")
            if run_type == "aggregate" and not options.get("aggregates"):
                continue
            if "error_occurred" in bench and bench.get("error_occurred"):
                continue
            uid = doc.get(bench, "run_name", where, str, optional=True) or doc.get(bench, "name", where, str)
            scale = _GB_UNITS[own] / _GB_UNITS[unit]
            extra: dict[str, Any] = {"iterations": doc.get(bench, "iterations", where, int)}
            if run_type == "aggregate":
                extra["aggregate"] = bench.get("aggregate_name", "")
            else:
                extra["repetition"] = bench.get("repetition_index", 0)
            if bench.get("threads", 1) != 1:
                extra["threads"] = bench["threads"]
            if own != unit:
                extra["time_unit"] = own
            for key in ("real_time", "cpu_time"):
                value = doc.amount(bench, key, where)
                rows.append({"type": "time", "subtype": key, "uid": uid,
                             "amount": value * scale if scale != 1 else value, **extra})
        return _profile(rows, unit, tool_header("google-benchmark", contexts))
