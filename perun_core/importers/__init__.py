"""Importers: profiles from what other tools measured (``perun-core import KIND FILE...``).

An importer is a unit like a collector: ``name`` (the KIND), ``summary``,
``description``, ``params`` (a sequence of :class:`~perun_core.params.Param`,
the one declaration of its options) and one phase, ``load(files, options)``,
which reads the files and returns a :class:`~perun_core.profile.model.Profile`
of the right type with the tool's own metadata in its header and the
tool's units kept.  The porcelain (:func:`perun_core.api.import_profiles`)
adds the commit as origin, ``cmd`` and ``workload``, and stores the result.

A file that is not what the importer reads, or that is cut short, raises
:class:`~perun_core.errors.ImportFailed` naming the file and the line (text
formats) or the key (JSON).

Built-in importers are listed in :data:`importers` by module path and loaded
on first use; third-party ones can be added with ``importers.register``.
"""

from __future__ import annotations

from typing import Any

from ..registry import Registry

__all__ = ["RESERVED", "importers", "get_importer"]

#: Option names the porcelain fills in itself; importers may not declare them.
RESERVED = frozenset({"files", "origin", "cmd", "workload", "register", "profile"})

importers = Registry("importer", "load", RESERVED, {
    "perf-script": "perun_core.importers.perf:PerfScriptImporter",
    "perf-record": "perun_core.importers.perf:PerfRecordImporter",
    "callgrind": "perun_core.importers.callgrind:CallgrindImporter",
    "pytest-benchmark": "perun_core.importers.benchmarks:PytestBenchmarkImporter",
    "hyperfine": "perun_core.importers.benchmarks:HyperfineImporter",
    "google-benchmark": "perun_core.importers.benchmarks:GoogleBenchmarkImporter",
    "folded": "perun_core.importers.stacks:FoldedImporter",
    "speedscope": "perun_core.importers.stacks:SpeedscopeImporter",
    "py-spy": "perun_core.importers.stacks:PySpyImporter",
    "pyperf": "perun_core.importers.pybench:PyperfImporter",
    "asv": "perun_core.importers.pybench:AsvImporter",
    "memray-stats": "perun_core.importers.memray:MemrayStatsImporter",
})


def get_importer(kind: str) -> Any:
    """The importer of ``kind``; :class:`~perun_core.errors.UnknownUnit` listing the known kinds otherwise."""
    return importers.get(kind)
