"""Bad inputs that used to slip through: each had a silent wrong result or an internal error.

Same table form as :mod:`.cases` (argv, exit code, words of the one error line, setup, malformed
profile); :mod:`.test_small_holes` runs them, and the holes that need a real process (standard
output on a full disk) or a real file system (a full store, a shallow clone).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from .cases import GBENCH, HYPERFINE, PYTEST_BENCH, SPEEDSCOPE, Case, _both, _fifo, _import, _inputs, _local, \
    good_profile

_MATRIX = _local("cmds: ['true']\ncollectors: [{name: time}]\n")
_SEED = _inputs(seed__txt="hello\nworld\n")
_FUZZ = ["-b", "cat", "-o", "../out", "-t", "1", "-e", "2", "--calibration", "2"]


def _bare(name: str) -> Callable[[Path], None]:
    """A bare git repository ``../NAME`` beside the repository."""
    def setup(root: Path) -> None:
        from dulwich.repo import Repo

        Repo.init_bare(str(root.parent / name), mkdir=True).close()
    return setup


def _huge_amount() -> str:
    """A profile whose first amount is the JSON integer 10**400 (no double holds it)."""
    text = json.dumps(good_profile())
    return text.replace('"amount": 0.1,', '"amount": 1' + "0" * 400 + ",", 1)


def _string_sizes() -> dict:
    data = good_profile()
    for row in data["global"]["resources"]:
        row["structure-unit-size"] = f"n{row['order']}"
    return data


def _model(model: object) -> Callable[[], dict]:
    def make() -> dict:
        data = good_profile()
        data["global"]["models"] = [model]
        return data
    return make


_EVENTED = ('{"shared": {"frames": [{"name": "a"}]}, "profiles": [{"type": "evented", "name": "p", '
            '"unit": "milliseconds", "startValue": 0, "endValue": 10, "events": [{"type": "O", "frame": 0, "at": 5},'
            ' {"type": "C", "frame": 0, "at": 2}]}]}')

HOLE_CASES = [
    # --shard: an empty CI variable must not run the whole matrix; a huge N is no internal error
    Case("run matrix --shard ''", ["run", "matrix", "--shard", ""], 2, "--shard", _MATRIX),
    Case("run --shard '' matrix", ["run", "--shard", "", "matrix"], 2, "--shard", _MATRIX),
    Case("run matrix --shard ' '", ["run", "matrix", "--shard", " "], 2, "--shard", _MATRIX),
    Case("run matrix --shard 1/10**20", ["run", "matrix", "--shard", "1/99999999999999999999"], 2, "at most",
         _MATRIX),
    Case("run matrix --shard 1/10**5000", ["run", "matrix", "--shard", "1/1" + "0" * 5000], 2, "at most", _MATRIX),
    Case("run matrix --shard 10**20/3", ["run", "matrix", "--shard", "99999999999999999999/3"], 2, "between 1 and N",
         _MATRIX),
    # an integer no double holds
    Case("add: integer amount 10**400", ["add", "{bad}"], 1, "resources[0].amount", bad=_huge_amount),
    Case("check profiles: integer amount 10**400", ["check", "profiles", "{good}", "{bad}"], 1, "resources[0].amount",
         bad=_huge_amount),
    Case("diff: integer amount 10**400", ["diff", "{good}", "{bad}"], 1, "resources[0].amount", bad=_huge_amount),
    # a model must say what it is
    Case("add: a model {'x': 1}", ["add", "{bad}"], 1, "models[0].model", bad=_model({"x": 1})),
    Case("show raw: a model {'x': 1}", ["show", "{bad}", "raw"], 1, "models[0].model", bad=_model({"x": 1})),
    Case("add: a model whose kind is a number", ["add", "{bad}"], 1, "models[0].model",
         bad=_model({"model": 3, "uid": "./app"})),
    Case("add: a model whose uid is a list", ["add", "{bad}"], 1, "models[0].uid",
         bad=_model({"model": "linear", "uid": ["a"]})),
    # measured times are never negative
    _import("hyperfine", "negative time", HYPERFINE % "-0.5", "results[0].times[0]"),
    _import("hyperfine", "negative user time", '{"results": [{"command": "x", "times": [0.1], "user": -1}]}',
            "results[0].user"),
    _import("google-benchmark", "negative real_time", GBENCH % ("-1", "ns"), "real_time"),
    _import("google-benchmark", "negative cpu_time",
            GBENCH.replace('"cpu_time": 1.0', '"cpu_time": -2') % ("1.0", "ns"), "cpu_time"),
    _import("pytest-benchmark", "negative round", PYTEST_BENCH % "-0.1", "stats.data[0]"),
    _import("pytest-benchmark", "negative mean",
            '{"benchmarks": [{"name": "t", "fullname": "t", "stats": {"mean": -3}}]}', "stats.mean"),
    _import("speedscope", "negative weight", SPEEDSCOPE % "-1", "weights[0]"),
    _import("speedscope", "events going back in time", _EVENTED, "events[1].at"),
    # init where no command could work afterwards
    Case("init in a bare repository", ["init", "../bare.git"], 1, "bare", _bare("bare.git")),
    Case("init --vcs-path a bare repository", ["init", "--vcs-path", "../bare.git", "../wt"], 1, "bare",
         _bare("bare.git"), absent=("../wt",)),
    Case("init --vcs-flag bare", ["init", "--vcs-flag", "bare", "../new"], 2, "bare", absent=("../new",)),
    # scatter of sizes that are not numbers: no silent fall back to run order
    Case("show scatter -p with string values", ["show", "{bad}", "scatter", "-p", "structure-unit-size"], 1,
         "structure-unit-size", bad=_string_sizes),
    Case("show scatter of string sizes by default", ["show", "{bad}", "scatter"], 1, "structure-unit-size",
         bad=_string_sizes),
    # a named pipe is not a missing file
    Case("fuzz a FIFO seed", ["fuzz", *_FUZZ, "-w", "../in/pipe"], 1, "regular file",
         _both(_SEED, lambda root: _fifo(root.parent / "in" / "pipe")), absent=("../out",)),
    Case("deltadebugging a FIFO input", ["deltadebugging", "cat", "../in/pipe", "-o", "../dd"], 1, "regular file",
         lambda root: _fifo(root.parent / "in" / "pipe"), absent=("../dd",)),
    # a URL scheme with no transport is not an ssh host
    Case("pull ftp://", ["pull", "ftp://example.invalid/repo"], 1, "not a transport"),
    Case("fetch FTP://", ["fetch", "FTP://example.invalid/repo"], 1, "not a transport"),
    Case("push ftp://", ["push", "ftp://example.invalid/repo"], 1, "not a transport"),
    # perf script ignores a --symfs that is not there
    Case("import perf-record --symfs /nonexistent", ["import", "perf-record", "../in/perf.data", "--symfs",
                                                     "/nonexistent/symbols"], 1, "symfs",
         _inputs(perf__data=b"PERFILE2")),
    Case("import perf-record --symfs ''", ["import", "perf-record", "../in/perf.data", "--symfs", ""], 1, "symfs",
         _inputs(perf__data=b"PERFILE2")),
    Case("import perf-record --symfs a file", ["import", "perf-record", "../in/perf.data", "--symfs",
                                               "../in/perf.data"], 1, "symfs", _inputs(perf__data=b"PERFILE2")),
]
