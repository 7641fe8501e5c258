"""Results of Python benchmark suites as profiles: pyperf JSON files and asv result files.

Every measured value becomes one resource, so checks see the spread::

    {"type": "time", "subtype": "value", "uid": "fib15", "amount": 0.000220, "run": 1, "value": 0}

* ``pyperf`` reads the files of ``pyperf timeit -o FILE``, of a
  ``pyperf.Runner`` script run with ``-o FILE`` and of ``pyperf convert``
  (``.json.gz`` too).  Each benchmark's runs hold the values of one worker
  process each (seconds per loop); calibration runs, which hold only
  warm-ups, are left out and so are the warm-ups.  The benchmark's
  metadata ``unit`` decides the type: ``second`` a time in ``s``, ``byte``
  a memory amount in ``B``, ``integer`` a ``count``.  The header keeps
  the file's metadata (Python, CPU, platform, loops) and version.
* ``asv`` reads ``results/MACHINE/COMMIT-ENV.json`` files that
  ``asv run`` writes (format version 2).  A benchmark with the samples
  of its repeats (``asv run --record-samples``) gives a ``sample``
  resource per repeat, otherwise one ``result`` (asv's median) with the
  quartiles and the 99% interval; a parameterized benchmark gives this
  per combination of parameters, named in the uid
  (``bench.TimeSort.time_sorted(n=100)``).  Failed or skipped ones
  (``null``) are left out.  Types and units come from asv's
  ``results/benchmarks.json`` when it lies next to the machine's folder,
  else from the name (``time_``: seconds, ``mem_`` and ``peakmem_``:
  bytes, ``track_``: the number as it is).  The header keeps the commit,
  environment, machine and Python asv recorded.

A negative time or size is refused, naming its key; ``track_`` values
may be negative.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ImportFailed
from ..profile import fastjson
from ..profile.model import Profile
from .common import Importer, JsonDoc, read_bytes, read_json, stored_file_name, table_profile, tool_header

__all__ = ["AsvImporter", "PyperfImporter"]

#: pyperf's units: (resource type, unit)
_PYPERF_UNITS = {"second": ("time", "s"), "byte": ("memory", "B"), "integer": ("count", "count")}
#: asv's benchmark types: (resource type, unit)
_ASV_TYPES = {"time": ("time", "s"), "memory": ("memory", "B"), "peakmemory": ("memory", "B")}
_ASV_PREFIXES = {"time_": "time", "mem_": "memory", "peakmem_": "peakmemory", "track_": "track"}


def _profile(rows: list[dict], units: dict[str, str], tool: dict[str, Any]) -> Profile:
    kinds = list(units) or ["time"]
    header = {"type": kinds[0] if len(kinds) == 1 and kinds[0] in ("time", "memory") else "mixed",
              "units": units or {"time": "s"}, "tool": tool}
    return table_profile(header, rows)


#: Reads one result file: its rows (adding the units it uses to the dict given) and what it says of its run.
FileReader = Callable[[Path, dict[str, str]], tuple[list[dict], dict[str, Any]]]


def _profile_of_files(tool: str, files: list[Path], read_file: FileReader) -> Profile:
    """One profile of every file's rows; the header's ``tool`` holds each file's description."""
    rows: list[dict] = []
    units: dict[str, str] = {}
    described = []
    for path in files:
        found, description = read_file(path, units)
        rows += found
        described.append({"file": stored_file_name(path), **description})
    return _profile(rows, units, tool_header(tool, described))


def _read_json_file(path: Path) -> JsonDoc:
    """The JSON of ``path``, gunzipped first when it is a gzip file (pyperf writes ``.json.gz``)."""
    import gzip
    import json

    raw = read_bytes(path)
    if not raw.startswith(b"\x1f\x8b"):
        return read_json(path)
    try:
        text = gzip.decompress(raw)
    except (OSError, EOFError) as exc:
        raise ImportFailed(path, None, f"is a broken gzip file (truncated?): {exc}") from None
    try:
        return JsonDoc(path, fastjson.json_loads(text))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f"line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else None
        raise ImportFailed(path, where, f"holds no valid JSON once unpacked: {exc}") from None


class PyperfImporter(Importer):
    name = "pyperf"
    summary = "pyperf JSON files (pyperf timeit -o, Runner scripts with -o): every value of every run."

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        return _profile_of_files("pyperf", files, self._file)

    def _file(self, path: Path, units: dict[str, str]) -> tuple[list[dict], dict[str, Any]]:
        doc = _read_json_file(path)
        root = doc.get({"": doc.data}, "", "", dict)
        version = doc.get(root, "version", "", str, optional=True)
        # pyperf writes "1.0"; a file of a later major version may mean its keys differently
        if version is not None and version.split(".")[0] != "1":
            raise doc.fail("version", f"expected a pyperf file of format version 1.x, got {version!r:.40}")
        common = doc.get(root, "metadata", "", dict, optional=True, default={})
        benchmarks = doc.get(root, "benchmarks", "", list)
        rows: list[dict] = []
        for i, _ in enumerate(benchmarks):
            rows += self._benchmark(doc, doc.get(benchmarks, i, "benchmarks", dict), f"benchmarks[{i}]", common, units)
        return rows, {"version": root.get("version"), "metadata": common}

    @staticmethod
    def _benchmark(doc: JsonDoc, bench: dict, where: str, common: dict, units: dict[str, str]) -> list[dict]:
        own = doc.get(bench, "metadata", where, dict, optional=True, default={})
        metadata = {**common, **own}
        place = f"{where}.metadata" if "name" in own or "name" not in common else "metadata"
        name = doc.get(metadata, "name", place, str)
        unit_name = metadata.get("unit", "second")
        if unit_name not in _PYPERF_UNITS:
            raise doc.fail(f"{place}.unit", f"expected one of {', '.join(_PYPERF_UNITS)}, got '{unit_name}'")
        kind, unit = _PYPERF_UNITS[unit_name]
        units.setdefault(kind, unit)
        runs = doc.get(bench, "runs", where, list)
        rows = []
        for j, _ in enumerate(runs):
            run = doc.get(runs, j, f"{where}.runs", dict)
            values = doc.get(run, "values", f"{where}.runs[{j}]", list, optional=True, default=[])
            for k, _ in enumerate(values):
                value = doc.amount(values, k, f"{where}.runs[{j}].values")
                rows.append({"type": kind, "subtype": "value", "uid": name, "amount": value, "run": j, "value": k})
        if not rows:
            raise doc.fail(f"{where}.runs", "holds no values (only calibration runs?)")
        return rows


class AsvImporter(Importer):
    name = "asv"
    summary = "asv result files (results/MACHINE/COMMIT-ENV.json): every benchmark, its samples or its result."

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        return _profile_of_files("asv", files, self._file)

    @staticmethod
    def _file(path: Path, units: dict[str, str]) -> tuple[list[dict], dict[str, Any]]:
        doc = read_json(path)
        root = doc.get({"": doc.data}, "", "", dict)
        version = doc.get(root, "version", "", int)
        if version != 2:
            raise doc.fail("version", f"expected 2 (the result files of asv 0.5 and later), got {version}")
        columns = doc.get(root, "result_columns", "", list)
        if "result" not in columns or "params" not in columns:
            raise doc.fail("result_columns", "expected the columns 'result' and 'params'")
        results = doc.get(root, "results", "", dict)
        known = _benchmark_types(path)  # types, units and parameter names
        rows: list[dict] = []
        for name, entry in results.items():
            rows += _asv_rows(doc, name, entry, columns, known, units)
        return rows, {key: root[key] for key in ("commit_hash", "env_name", "date", "python", "params", "requirements")
                      if key in root}


def _benchmark_types(path: Path) -> dict[str, tuple[str, str, list]]:
    """(asv type, unit, parameter names) per benchmark from ``results/benchmarks.json`` next to the machine's
    folder, if it is there."""
    import json

    listing = path.resolve().parent.parent / "benchmarks.json"
    try:
        data = json.loads(listing.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {name: (str(entry.get("type")), str(entry.get("unit")), entry.get("param_names") or [])
            for name, entry in data.items() if isinstance(entry, dict) and "type" in entry}


def _asv_kind(name: str, known: dict[str, tuple[str, str, list]]) -> tuple[str, str]:
    """The resource type and unit of benchmark ``name``."""
    if name in known:
        asv_type, unit, _ = known[name]
    else:
        leaf = name.rsplit(".", 1)[-1]
        asv_type = next((kind for prefix, kind in _ASV_PREFIXES.items() if leaf.startswith(prefix)), "track")
        unit = "unit"
    return _ASV_TYPES.get(asv_type, ("track", unit))


def _asv_rows(doc: JsonDoc, name: str, entry: Any, columns: list, known: dict[str, tuple[str, str, list]],
              units: dict[str, str]) -> list[dict]:
    """The resources of one benchmark of an asv result file."""
    where = f"results.{name}"
    entry = doc.get({name: entry}, name, "results", list)
    field = {column: entry[i] if i < len(entry) else None for i, column in enumerate(columns)}
    results = field["result"]
    if results is None:
        return []  # the benchmark failed or was skipped as a whole
    if not isinstance(results, list):
        raise doc.fail(f"{where}[{columns.index('result')}]", "expected a list of results")
    params = field["params"] or []
    given = [str(n) for n in known[name][2]] if name in known else []
    names = given if len(given) == len(params) else [f"p{i}" for i in range(len(params))]
    combos = [", ".join(f"{n}={v}" for n, v in zip(names, combo)) for combo in itertools.product(*params)] or [""]
    if len(combos) != len(results):
        raise doc.fail(f"{where}[{columns.index('result')}]",
                       f"has {len(results)} results for {len(combos)} combinations of parameters")
    kind, unit = _asv_kind(name, known)
    samples = field.get("samples")
    rows = []
    for c, (combo, result) in enumerate(zip(combos, results)):
        uid = f"{name}({combo})" if combo else name
        if result is None:
            continue  # this combination failed
        stats = {key[len("stats_"):]: field[key][c] for key in columns
                 if key.startswith("stats_") and isinstance(field[key], list) and c < len(field[key])
                 and isinstance(field[key][c], (int, float))}
        if isinstance(samples, list) and c < len(samples) and isinstance(samples[c], list) and samples[c]:
            spot = f"{where}[{columns.index('samples')}][{c}]"
            for s, _ in enumerate(samples[c]):
                value = _asv_value(doc, samples[c], s, spot, kind)
                rows.append({"type": kind, "subtype": "sample", "uid": uid, "amount": value, "sample": s})
        else:
            value = _asv_value(doc, results, c, f"{where}[{columns.index('result')}]", kind)
            rows.append({"type": kind, "subtype": "result", "uid": uid, "amount": value, **stats})
        units.setdefault(kind, unit)
    return rows


def _asv_value(doc: JsonDoc, values: list, index: int, where: str, kind: str) -> float:
    if kind == "track":
        return doc.get(values, index, where, (int, float))
    return doc.amount(values, index, where)
