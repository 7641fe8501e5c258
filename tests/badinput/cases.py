"""The bad inputs, as tables: malformed profiles, bad options, bad tags, bad configuration, unusable paths.

Each case is (name, argv, exit code, words the one error line must hold, setup).  ``argv`` may hold
``{bad}`` (the malformed profile file of the case), ``{good}`` (a valid profile file outside the store)
and ``{head}`` (HEAD's checksum); ``setup`` (or None) prepares the copy of the repository before the
store is hashed.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEAD = "{head}"


def good_profile(origin: str = HEAD) -> dict:
    return {
        "origin": origin,
        "header": {"type": "time", "units": {"time": "s"}, "cmd": "./app", "args": "-n", "workload": "w"},
        "collector_info": {"name": "time", "params": {}},
        "postprocessors": [],
        "global": {"time": 1.0, "resources": [
            {"amount": 0.1 * i, "uid": "./app", "type": "time", "subtype": "real", "order": i,
             "structure-unit-size": i} for i in range(1, 9)], "models": []},
    }


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = {"x": value}
    return value


def _with(path: tuple, value: Any) -> Callable[[], Any]:
    def make() -> Any:
        data = good_profile()
        node = data
        for step in path[:-1]:
            node = node[step]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = copy.deepcopy(value)
        return data
    return make


R0 = ("global", "resources", 0)
R3 = ("global", "resources", 3)

#: name -> (how to make the file's content: a JSON value, or raw text/bytes; words of the error)
MALFORMED: dict[str, tuple[Callable[[], Any], str]] = {
    "amount a string": (_with((*R3, "amount"), "0.3"), "resources[3].amount"),
    "amount a list": (_with((*R3, "amount"), [1]), "resources[3].amount"),
    "amount null": (_with((*R0, "amount"), None), "resources[0].amount"),
    "amount a boolean": (_with((*R0, "amount"), True), "resources[0].amount"),
    "amount NaN": (_with((*R3, "amount"), math.nan), "resources[3].amount"),
    "amount Infinity": (_with((*R3, "amount"), math.inf), "resources[3].amount"),
    "amount -Infinity": (_with((*R0, "amount"), -math.inf), "resources[0].amount"),
    "no amount": (_with((*R3, "amount"), KeyError), "resources[3].amount"),
    "no uid": (_with((*R3, "uid"), KeyError), "resources[3].uid"),
    "numeric uid": (_with((*R3, "uid"), 42), "resources[3].uid"),
    "empty uid": (_with((*R0, "uid"), ""), "resources[0].uid"),
    "uid a list": (_with((*R0, "uid"), ["a"]), "resources[0].uid"),
    "uid with a lone surrogate": (lambda: '{"origin": "{head}", "header": {"type": "time"}, "global": {"resources": '
                                  '[{"amount": 1, "uid": "f\\udc80"}]}}', "resources[0].uid"),
    "header.type banana": (_with(("header", "type"), "banana"), "header.type"),
    "header.type a number": (_with(("header", "type"), 3), "header.type"),
    "no header.type": (_with(("header", "type"), KeyError), "header.type"),
    "no header": (_with(("header",), KeyError), "header"),
    "header a list": (_with(("header",), []), "header"),
    "no global and no snapshots": (_with(("global",), KeyError), "global"),
    "global a number": (_with(("global",), 3), "global"),
    "resources an object": (_with(("global", "resources"), {"a": 1}), "global.resources"),
    "resource a number": (_with(("global", "resources", 2), 7), "resources[2]"),
    "resource type a number": (_with((*R3, "type"), 5), "resources[3].type"),
    "units a list": (_with(("header", "units"), ["s"]), "header.units"),
    "unit not a string": (_with(("header", "units"), {"time": 1}), "header.units.time"),
    "cmd a number": (_with(("header", "cmd"), 7), "header.cmd"),
    "collector_info a list": (_with(("collector_info",), []), "collector_info"),
    "collector name a number": (_with(("collector_info", "name"), 1), "collector_info.name"),
    "postprocessors an object": (_with(("postprocessors",), {}), "postprocessors"),
    "postprocessor without a name": (_with(("postprocessors",), [{"params": {}}]), "postprocessors[0].name"),
    "models an object": (_with(("global", "models"), {}), "global.models"),
    "NaN in a model": (_with(("global", "models"), [{"model": "linear", "r_square": math.nan}]), "r_square"),
    "snapshot time a list": (lambda: {**good_profile(), "snapshots": [{"time": [1], "resources": []}]}, "snapshots[0].time"),
    "memory address negative": (lambda: {"origin": HEAD, "header": {"type": "memory"}, "snapshots": [{"time": 0.1, "resources": [
        {"amount": 4, "uid": "main", "address": -16, "trace": []}]}]}, "resources[0].address"),
    "memory address a string": (lambda: {"origin": HEAD, "header": {"type": "memory"}, "snapshots": [{"time": 0.1, "resources": [
        {"amount": 4, "uid": "main", "address": "0x10", "trace": []}]}]}, "resources[0].address"),
    "memory trace of strings": (lambda: {"origin": HEAD, "header": {"type": "memory"}, "snapshots": [{"time": 0.1, "resources": [
        {"amount": 4, "uid": "main", "address": 16, "trace": ["main"]}]}]}, "resources[0].trace"),
    "memory snapshots an object": (lambda: {"origin": HEAD, "header": {"type": "memory"}, "snapshots": {"0": []}}, "snapshots"),
    "deep nesting (100 levels)": (_with(("header", "note"), _deep(100)), "deeper than"),
    "very deep JSON (100000 levels)": (lambda: '{"header": {"type": "time"}, "global": {"resources": []}, "x": '
                                       + "[" * 100000 + "]" * 100000 + "}", "deeper than|malformed JSON"),
    "not JSON": (lambda: "this is not a profile\n", "malformed JSON"),
    "truncated JSON": (lambda: '{"header": {"type": "time"}, "global": {"resour', "malformed JSON"),
    "a JSON list": (lambda: "[1, 2, 3]", "expected a JSON object"),
    "empty file": (lambda: "", "malformed JSON"),
    "not UTF-8": (lambda: b'{"header": {"type": "t\xff\xfe"}}', "UTF-8|malformed"),
}

#: commands every malformed profile goes through; (argv, exit code)
PROFILE_COMMANDS: dict[str, list[str]] = {
    "add": ["add", "{bad}"],
    "show raw": ["show", "{bad}", "raw"],
    "show tableof": ["show", "{bad}", "tableof"],
    "postprocessby": ["postprocessby", "{bad}", "normalizer"],
    "check profiles": ["check", "profiles", "{good}", "{bad}"],
}
#: malformed shapes every command gets (the rest go through add and show raw only, to keep the suite quick)
ALL_COMMAND_SHAPES = ("amount a string", "amount NaN", "no uid", "numeric uid", "uid with a lone surrogate",
                      "header.type banana", "no global and no snapshots", "memory address negative",
                      "very deep JSON (100000 levels)", "not JSON", "deep nesting (100 levels)", "amount Infinity")


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    code: int
    words: str = ""
    setup: Callable[[Path], None] | None = None
    #: a malformed profile's maker, written to bad.perf before the store is hashed
    bad: Callable[[], Any] | None = None
    #: paths (relative to the repository) that must not exist after the command: nothing half-written
    absent: tuple[str, ...] = ()
    #: directories (relative to the case's temporary directory, globs allowed) made read-only during the run
    readonly: tuple[str, ...] = ()
    #: a known bug not fixed here: the reason, and the case is expected to fail (strictly)
    xfail: str = ""


def _profile_cases() -> list[Case]:
    cases = []
    for shape, (make, words) in MALFORMED.items():
        commands = PROFILE_COMMANDS if shape in ALL_COMMAND_SHAPES else {k: PROFILE_COMMANDS[k] for k in ("add", "show raw")}
        for command, argv in commands.items():
            cases.append(Case(f"{command}: {shape}", argv, 1, words, bad=make))
    return cases


def _write(relative: str, text: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return setup


OPTION_CASES = [
    Case("show bars --width 100000000", ["show", "{good}", "bars", "--width", "100000000"], 2, "<=1000"),
    Case("show bars --width 10000", ["show", "{good}", "bars", "--width", "10000"], 2, "<=1000"),
    Case("show bars --height 10000000", ["show", "{good}", "bars", "--height", "10000000"], 2, "<=1000"),
    Case("show bars --width 3", ["show", "{good}", "bars", "--width", "3"], 2, "20<=x"),
    Case("show bars --width abc", ["show", "{good}", "bars", "--width", "abc"], 2, "not a valid integer"),
    Case("show flow --height 0", ["show", "{good}", "flow", "--height", "0"], 2, "5<=x"),
    Case("show scatter --width -5", ["show", "{good}", "scatter", "--width", "-5"], 2, "--width"),
    Case("show tableof --limit 0", ["show", "{good}", "tableof", "--limit", "0"], 1, "limit"),
    Case("show tableof --limit huge", ["show", "{good}", "tableof", "--limit", "99999999999"], 1, "limit"),
    Case("show flamegraph svg too wide", ["show", "{good}", "flamegraph", "--width", "9000"], 2, "<=8000"),
    Case("show heapmap of a time profile", ["show", "{good}", "heapmap"], 1, "cannot show"),
    Case("show an unknown view", ["show", "{good}", "pie"], 1, "pie"),
    Case("show bars --of a missing key", ["show", "{good}", "bars", "--of", "nokey"], 1, "nokey"),
    Case("show scatter --per a missing key", ["show", "{good}", "scatter", "--per", "nokey"], 1, "nokey"),
    Case("show raw -f into a missing directory", ["show", "{good}", "raw", "-f", "no/such/dir/out.json"], 1, "does not exist"),
    Case("show bars -f into a missing directory", ["show", "{good}", "bars", "-f", "no/such/dir/out.txt"], 1, "does not exist"),
    Case("show raw -f onto a directory", ["show", "{good}", "raw", "-f", "."], 2, "directory"),
    Case("show bars -f with a wrong suffix", ["show", "{good}", "bars", "-f", "b.svg"], 1, "file name ending"),
    Case("status --sort-by banana", ["status", "--sort-by", "banana"], 2, "banana"),
    Case("status --bogus", ["status", "--bogus"], 2, "--bogus"),
    Case("log -n 0", ["log", "-n", "0"], 2, "-n"),
    Case("log of an unknown revision", ["log", "nosuchrev"], 1, "nosuchrev"),
    Case("an unknown command", ["frobnicate"], 2, "frobnicate"),
    Case("add with no profile", ["add"], 2, ""),
    Case("add -m an unknown revision", ["add", "-m", "nosuchrev", "{good}"], 1, "nosuchrev"),
    Case("add a missing file", ["add", "missing.perf"], 1, "missing.perf"),
    Case("add a directory", ["add", "/"], 1, ""),
    Case("add the same profile twice in one call", ["add", "{good}", "{good}"], 2, "already in this add"),
    Case("add a profile of another commit", ["add", "{other}"], 1, "not for"),
    Case("rm with no profile", ["rm"], 2, ""),
    Case("rm a name not in the index", ["rm", "nothing.perf"], 1, "nothing.perf"),
    Case("collect an unknown collector", ["collect", "nosuch", "--", "true"], 1, "nosuch"),
    Case("collect time -r 0", ["collect", "time", "-r", "0", "--", "true"], 1, "repeat"),
    Case("collect time -r beyond the limit", ["collect", "time", "-r", "1000001", "--", "true"], 1, "1000000"),
    Case("collect time -r abc", ["collect", "time", "-r", "abc", "--", "true"], 2, "not a valid integer"),
    Case("collect time --timeout 0", ["collect", "time", "--timeout", "0", "--", "true"], 1, "timeout"),
    Case("collect time --timeout a year", ["collect", "time", "--timeout", "31536000", "--", "true"], 1, "timeout"),
    Case("collect with unbalanced quotes", ["collect", "-a", "'unbalanced", "time", "--", "echo"], 2, "quot"),
    Case("collect -ot with an unknown tag", ["collect", "-ot", "%nosuchtag%", "time", "--", "true"], 1, "nosuchtag"),
    Case("collect -m an unknown revision", ["collect", "-m", "nosuchrev", "time", "--", "true"], 1, "nosuchrev"),
    Case("postprocessby an unknown unit", ["postprocessby", "{good}", "nosuchunit"], 1, "nosuchunit"),
    Case("postprocessby regression_analysis --steps 0", ["postprocessby", "{good}", "regression_analysis", "--steps", "0"], 1, "steps"),
    Case("postprocessby regression_analysis --steps 1000", ["postprocessby", "{good}", "regression_analysis", "--steps", "1000"], 1, "64"),
    Case("postprocessby kernel_regression --points 1", ["postprocessby", "{good}", "kernel_regression", "-p", "1"], 1, "points"),
    Case("postprocessby moving_average -ww 0", ["postprocessby", "{good}", "moving_average", "-ww", "0"], 1, "window_width"),
    Case("check profiles with one profile", ["check", "profiles", "{good}"], 2, ""),
    Case("check profiles --fail-on sometimes", ["check", "profiles", "{good}", "{good}", "--fail-on", "sometimes"], 2, "sometimes"),
    Case("check profiles -M an unknown method", ["check", "profiles", "{good}", "{good}", "-M", "nomethod"], 1, "nomethod"),
    Case("check profiles -o into a missing directory", ["check", "profiles", "{good}", "{good}", "-o", "no/dir/r.json"], 1, "does not exist"),
    Case("check head -o into a missing directory", ["check", "head", "-o", "no/dir/r.json"], 1, "does not exist"),
    Case("check an unknown subcommand", ["check", "sideways"], 2, "sideways"),
    Case("run an unknown subcommand", ["run", "sideways"], 2, "sideways"),
    Case("run matrix without a matrix", ["run", "matrix"], 1, ""),
    Case("run job without a collector", ["run", "job", "-b", "true"], 2, ""),
    Case("config get an unknown section", ["config", "get", "nosuch.key"], 1, "nosuch.key"),
    Case("config with a bad scope flag", ["config", "--everywhere", "get", "format.status"], 2, "--everywhere"),
    Case("fsck --stale-after -1", ["fsck", "--stale-after", "-1"], 2, "--stale-after"),
    Case("init into a file", ["init", "{good}"], 2, "is a file"),
    Case("install-hook --bogus", ["install-hook", "--bogus"], 2, "--bogus"),
]

TAG_CASES = [
    Case("show 99@i", ["show", "99@i", "raw"], 1, "99@i"),
    Case("show 99@p", ["show", "99@p", "raw"], 1, "99@p"),
    Case("show -1@i", ["show", "-1@i", "raw"], 2, ""),
    Case("show 1@x", ["show", "1@x", "raw"], 1, "1@x"),
    Case("show @i", ["show", "@i", "raw"], 1, "@i"),
    Case("show 0@i at an unknown revision", ["show", "-m", "nosuchrev", "0@i", "raw"], 1, "nosuchrev"),
    Case("show 0@i at the first commit (no index)", ["show", "-m", "HEAD~1", "0@i", "raw"], 1, "0@i"),
    Case("add 9@p", ["add", "9@p"], 1, "9@p"),
    Case("add 0@i", ["add", "0@i"], 2, "0@i"),
    Case("rm 9@i", ["rm", "9@i"], 1, "9@i"),
    Case("rm 9@p", ["rm", "9@p"], 1, "9@p"),
    Case("postprocessby 9@p", ["postprocessby", "9@p", "normalizer"], 1, "9@p"),
    Case("postprocessby 9@i", ["postprocessby", "9@i", "normalizer"], 1, "9@i"),
    Case("check profiles 9@i 0@i", ["check", "profiles", "9@i", "0@i"], 1, "9@i"),
    Case("check profiles 0@i 9@p", ["check", "profiles", "0@i", "9@p"], 1, "9@p"),
    Case("show a tag with a control character", ["show", "1@i\x1b[2J", "raw"], 1, ""),
]

CONFIG_CASES = [
    Case("config set execute.timeout -1", ["config", "set", "--", "execute.timeout", "-1"], 1, "execute.timeout"),
    Case("config set execute.timeout soon", ["config", "set", "execute.timeout", "soon"], 1, "execute.timeout"),
    Case("config set execute.timeout beyond a week", ["config", "set", "execute.timeout", "1000000000"], 1, "execute.timeout"),
    Case("config set format.sort_profiles_by banana", ["config", "set", "format.sort_profiles_by", "banana"], 1, "sort_profiles_by"),
    Case("config set profiles.register_after_run maybe", ["config", "set", "profiles.register_after_run", "maybe"], 1, "register_after_run"),
    Case("config set degradation.cutoff -3", ["config", "set", "--", "degradation.cutoff", "-3"], 1, "cutoff"),
    Case("config set degradation.apply sometimes", ["config", "set", "degradation.apply", "sometimes"], 1, "apply"),
    Case("config set vcs.type svn", ["config", "set", "vcs.type", "svn"], 1, "vcs.type"),
    Case("config set general.paging sometimes", ["config", "set", "general.paging", "sometimes"], 1, "paging"),
    Case("config set cmds 3", ["config", "set", "cmds", "3"], 1, "cmds"),
    Case("config set collectors a string", ["config", "set", "collectors", "time"], 1, "collectors"),
    Case("config set degradation.strategies 5", ["config", "set", "degradation.strategies", "5"], 1, "strategies"),
    Case("config set format.output_profile_template 5", ["config", "set", "format.output_profile_template", "[1]"], 1, "output_profile_template"),
    Case("config set generators.workload 3", ["config", "set", "generators.workload", "3"], 1, "generators"),
    Case("config set with broken YAML", ["config", "set", "cmds", "[a, b"], 1, ""),
    Case("config set config_version 99", ["config", "set", "config_version", "99"], 1, "config_version"),
]


def _local(text: str) -> Callable[[Path], None]:
    return _write(".perun/local.yml", text)


BROKEN_CONFIG_CASES = [
    Case("status with broken YAML in local.yml", ["status"], 1, "local.yml", _local("format: [unclosed\n")),
    Case("status with a bad sort key in local.yml", ["status"], 1, "sort_profiles_by",
         _local("format:\n  sort_profiles_by: banana\n")),
    Case("log with a tab-indented local.yml", ["log"], 1, "local.yml", _local("format:\n\tshortlog: x\n")),
    Case("run matrix with collectors a string", ["run", "matrix"], 1, "collectors", _local("cmds: ['true']\ncollectors: time\n")),
    Case("run matrix with an unknown collector", ["run", "matrix"], 1, "nosuch",
         _local("cmds: ['true']\ncollectors: [{name: nosuch}]\n")),
    Case("run matrix with a bad collector parameter", ["run", "matrix"], 1, "repeat",
         _local("cmds: ['true']\ncollectors: [{name: time, params: {repeat: -4}}]\n")),
    Case("run matrix with a bad generator", ["run", "matrix"], 1, "generator",
         _local("cmds: ['true']\ncollectors: [{name: time}]\ngenerators:\n  workload: [{id: a, type: integers}]\n")),
    Case("collect with execute.timeout a string in local.yml", ["collect", "time", "--", "true"], 1, "execute.timeout",
         _local("execute:\n  timeout: soon\n")),
    Case("status with a newer config_version", ["status"], 1, "version 99", _local("config_version: 99\n")),
    Case("check head with bad strategies", ["check", "head"], 1, "strategies",
         _local("degradation:\n  strategies: 5\n")),
]


def _damage_index(root: Path) -> None:
    for path in (root / ".perun/objects").rglob("*"):
        if path.is_file() and path.read_bytes()[:4] == b"pidx":
            path.write_bytes(path.read_bytes()[:-3])


PATH_CASES = [
    Case("show a profile that is a directory", ["show", ".perun", "raw"], 1, ""),
    Case("postprocessby into a read-only store", ["postprocessby", "{good}", "normalizer"], 1, "", "readonly-jobs"),
    Case("add into a read-only store", ["add", "{fresh}"], 1, "", "readonly-objects"),
    Case("collect into a read-only store", ["collect", "time", "--", "true"], 1, "", "readonly-jobs"),
    Case("show 0@i with a damaged index", ["show", "0@i", "raw"], 1, "corrupt index", _damage_index),
    Case("rm 0@i with a damaged index", ["rm", "0@i"], 1, "corrupt index", _damage_index),
    Case("add with a damaged index", ["add", "{good}"], 1, "corrupt index", _damage_index),
]



# ---------------------------------------------------------------------------------------------------------
# The newer commands: import, diff/showdiff, fuzz, deltadebugging, push/fetch/pull, bisect, fsck, convert,
# check --explain, show -f, and configuration keys they read.  Input files of these cases live in ``in/``
# next to the repository (``../in/NAME`` from it), written by the case's setup; ``absent`` names paths
# (relative to the repository) that must not exist afterwards: nothing half-written.


def _inputs(**files: str | bytes) -> Callable[[Path], None]:
    """Writes each ``name=content`` into ``../in/`` (a name's ``__`` becomes ``.``)."""
    def setup(root: Path) -> None:
        folder = root.parent / "in"
        folder.mkdir(exist_ok=True)
        for name, content in files.items():
            path = folder / name.replace("__", ".")
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8", errors="surrogatepass")
    return setup


def _in_dir(name: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        (root.parent / "in" / name).mkdir(parents=True, exist_ok=True)
    return setup


def _both(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        for one in setups:
            one(root)
    return setup


def _objects_a_file(root: Path) -> None:
    import shutil

    shutil.rmtree(root / ".perun/objects")
    (root / ".perun/objects").write_text("not a directory\n")


def _full_device(root: Path) -> None:
    """``../full``: a character device like /dev/full (every write fails with ENOSPC), made here so a
    command that wrongly renames over its output cannot replace the system's."""
    import os
    import stat

    os.mknod(root.parent / "full", stat.S_IFCHR | 0o666, os.makedev(1, 7))


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


BINARY = bytes(range(256)) * 4
PERF_SAMPLE = "app 101 1.000: 1000 cycles:\n\t401000 main+0x10 (/bin/app)\n\t401100 start+0x4 (/bin/app)\n\n"
SPEEDSCOPE = '{"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": [{"name": "a"}]},' \
             ' "profiles": [{"type": "sampled", "name": "p", "unit": "none", "startValue": 0, "endValue": 1,' \
             ' "samples": [[0]], "weights": [%s]}]}'
HYPERFINE = '{"results": [{"command": "sleep 0", "times": [%s]}]}'
PYPERF = '{"version": "1.0", "metadata": {"name": "b", "unit": "second"}, "benchmarks": [{"runs": [{"values": [%s]}]}]}'
ASV = '{"version": 2, "result_columns": ["result", "params"], "results": {"b.time_x": [[%s], []]}}'
MEMRAY = '{"total_num_allocations": 1, "total_bytes_allocated": 8, "top_allocations_by_size": ' \
         '[{"location": "f:a.py:1", "size": %s}], "top_allocations_by_count": []}'
GBENCH = '{"context": {}, "benchmarks": [{"name": "BM_x", "run_type": "iteration", "iterations": 1, ' \
         '"real_time": %s, "cpu_time": 1.0, "time_unit": "%s"}]}'
PYTEST_BENCH = '{"machine_info": {}, "benchmarks": [{"name": "test_x", "fullname": "t.py::test_x", ' \
               '"stats": {"data": [%s]}}]}'


def _import(kind: str, name: str, content: str | bytes, words: str, *extra: str) -> Case:
    filename = f"{kind}.input"
    return Case(f"import {kind}: {name}", ["import", kind, f"../in/{filename}", *extra], 1, words,
                _inputs(**{filename.replace(".", "__"): content}))


IMPORT_CASES = [
    *(_import(kind, "empty file", "", f"{kind}.input") for kind in
      ("perf-script", "callgrind", "pytest-benchmark", "hyperfine", "google-benchmark", "folded", "speedscope")),
    *(_import(kind, "binary file", BINARY, f"{kind}.input") for kind in
      ("perf-script", "callgrind", "pytest-benchmark", "hyperfine", "google-benchmark", "folded", "speedscope",
       "perf-record")),
    _import("perf-script", "truncated sample", PERF_SAMPLE[:20], "perf-script.input"),
    _import("perf-script", "period NaN", PERF_SAMPLE.replace("1000 cycles", "nan cycles"), "perf-script.input"),
    _import("perf-script", "period beyond 64 bits",
            PERF_SAMPLE.replace("1000 cycles", "1" + "0" * 400 + " cycles"), "perf-script.input"),
    _import("callgrind", "no events line", "fn=main\n1 100\n", "callgrind.input"),
    _import("callgrind", "cost NaN", "events: Ir\nfn=main\n1 nan\n", "callgrind.input"),
    _import("callgrind", "cost beyond a double", "events: Ir\nfn=main\n1 " + "9" * 400 + "\n", "callgrind.input"),
    _import("pytest-benchmark", "a JSON list", "[1, 2]", "pytest-benchmark.input"),
    _import("pytest-benchmark", "round NaN", PYTEST_BENCH % "NaN", "pytest-benchmark.input"),
    _import("pytest-benchmark", "round a string", PYTEST_BENCH % '"fast"', "pytest-benchmark.input"),
    _import("pytest-benchmark", "deeply nested", '{"benchmarks": ' + "[" * 100000 + "]" * 100000 + "}",
            "pytest-benchmark.input"),
    _import("pytest-benchmark", "name with a lone surrogate", PYTEST_BENCH.replace("test_x", "t\\udc80") % "1.0",
            "pytest-benchmark.input"),
    _import("hyperfine", "no results", '{"other": []}', "hyperfine.input"),
    _import("hyperfine", "time Infinity", HYPERFINE % "Infinity", "hyperfine.input"),
    _import("hyperfine", "time 1e400", HYPERFINE % "1e400", "hyperfine.input"),
    _import("hyperfine", "times an object", HYPERFINE.replace("[%s]", '{"a": 1}'), "hyperfine.input"),
    _import("hyperfine", "truncated JSON", (HYPERFINE % "0.1")[:30], "hyperfine.input"),
    _import("google-benchmark", "real_time NaN", GBENCH % ("NaN", "ns"), "google-benchmark.input"),
    _import("google-benchmark", "real_time a list", GBENCH % ("[1]", "ns"), "google-benchmark.input"),
    _import("google-benchmark", "unknown time unit", GBENCH % ("1.0", "fortnights"), "google-benchmark.input"),
    _import("google-benchmark", "benchmarks an object", '{"benchmarks": {"a": 1}}', "google-benchmark.input"),
    _import("folded", "a line without a value", "main;work\n", "folded.input"),
    _import("folded", "value NaN", "main;work nan\n", "folded.input"),
    _import("folded", "value beyond a double", "main;work 1" + "0" * 400 + "\n", "folded.input"),
    _import("folded", "negative value", "main;work -5\n", "folded.input"),
    _import("folded", "a lone surrogate", "main;w\udc80 5\n", "folded.input"),
    _import("speedscope", "weight NaN", SPEEDSCOPE % "NaN", "speedscope.input"),
    _import("speedscope", "weight a string", SPEEDSCOPE % '"heavy"', "speedscope.input"),
    _import("speedscope", "frame index out of range", (SPEEDSCOPE % "1").replace("[[0]]", "[[7]]"), "speedscope.input"),
    _import("speedscope", "unknown profile type", (SPEEDSCOPE % "1").replace('"sampled"', '"banana"'),
            "speedscope.input"),
    _import("speedscope", "profiles not a list", '{"shared": {"frames": []}, "profiles": 3}', "speedscope.input"),
    Case("import an unknown kind", ["import", "banana", "x.txt"], 1, "banana"),
    Case("import a missing file", ["import", "folded", "../in/missing.folded"], 1, "missing.folded"),
    Case("import a directory", ["import", "folded", "../in/adir"], 2, "adir", _in_dir("adir")),
    Case("import a missing name with a control character", ["import", "folded", "../in/a\x1b[2Jb"], 1, "does not exist"),
    Case("import folded --type banana", ["import", "folded", "../in/f.folded", "--type", "banana"], 2, "banana",
         _inputs(f__folded="main 1\n")),
    Case("import -m an unknown revision", ["import", "folded", "-m", "nosuchrev", "../in/f.folded"], 1, "nosuchrev",
         _inputs(f__folded="main 1\n")),
    Case("import --register into a read-only store", ["import", "folded", "--register", "../in/f.folded"], 1, "",
         _inputs(f__folded="main 1\n"), readonly=("repo/.perun/objects", "repo/.perun/objects/*")),
    Case("import into a read-only jobs directory", ["import", "folded", "../in/f.folded"], 1, "",
         _inputs(f__folded="main 1\n"), readonly=("repo/.perun/jobs",)),
    Case("import with no file", ["import", "folded"], 2, "FILE"),
    _import("hyperfine", "no runs", HYPERFINE % "", "no measurements"),
    _import("google-benchmark", "no benchmarks", '{"context": {}, "benchmarks": []}', "google-benchmark.input"),
    Case("import -c with bytes that are not UTF-8", ["import", "folded", "-c", "a\udc80b", "../in/f.folded"], 2,
         "-c/--cmd", _inputs(f__folded="main 1\n")),
    Case("import a named pipe nobody writes", ["import", "folded", "../in/pipe"], 1, "regular file",
         lambda root: _fifo(root.parent / "in" / "pipe")),
    Case("import a device", ["import", "perf-script", "../full"], 1, "regular file", _full_device),
    *(_import(kind, "empty file", "", f"{kind}.input") for kind in ("py-spy", "pyperf", "asv", "memray-stats")),
    *(_import(kind, "binary file", BINARY, f"{kind}.input") for kind in ("py-spy", "pyperf", "asv", "memray-stats")),
    _import("py-spy", "negative count", "<module> (a.py:1);f (a.py:2) 3\n<module> (a.py:1) -2\n",
            "py-spy.input:2: a negative value"),
    _import("speedscope", "negative weight", SPEEDSCOPE % "-1", "weights[0]': a negative weight"),
    _import("pyperf", "negative value", PYPERF % "-0.5", "values[0]': a negative value"),
    _import("pyperf", "value NaN", PYPERF % "NaN", "values[0]': not a finite number"),
    _import("asv", "negative time", ASV % "-0.5", "results.b.time_x[0][0]': a negative value"),
    _import("asv", "results a list", '{"version": 2, "result_columns": ["result", "params"], "results": []}',
            "key 'results': expected an object"),
    _import("memray-stats", "negative size", MEMRAY % "-7", "top_allocations_by_size[0].size': a negative value"),
]

DIFF_CASES = [
    Case("diff of a malformed target", ["diff", "{good}", "{bad}"], 1, "resources[3].amount",
         bad=MALFORMED["amount NaN"][0]),
    Case("diff of a truncated baseline", ["diff", "{bad}", "{good}"], 1, "malformed JSON",
         bad=MALFORMED["truncated JSON"][0]),
    Case("showdiff of a lone-surrogate uid", ["showdiff", "{good}", "{bad}", "flamegraph"], 1, "resources[0].uid",
         bad=MALFORMED["uid with a lone surrogate"][0]),
    Case("diff of a missing profile", ["diff", "missing.perf", "{good}"], 1, "missing.perf"),
    Case("diff of a directory", ["diff", "{good}", ".perun"], 1, ".perun"),
    Case("diff an unknown view", ["diff", "{good}", "{good}", "pie"], 2, "pie"),
    Case("diff bars --format svg", ["diff", "{good}", "{good}", "bars", "--format", "svg"], 2, "svg"),
    Case("diff short -f with an .svg suffix", ["diff", "{good}", "{good}", "short", "-f", "out.svg"], 2, "svg",
         absent=("out.svg",)),
    Case("diff --width 100000000", ["diff", "{good}", "{good}", "bars", "--width", "100000000"], 2, "--width"),
    Case("diff flamegraph --height 10000000", ["diff", "{good}", "{good}", "flamegraph", "--height", "10000000"], 2,
         "--height"),
    Case("diff flamegraph svg --width 10000000", ["diff", "{good}", "{good}", "flamegraph", "-f", "o.svg", "--width",
                                                  "10000000"], 2, "--width", absent=("o.svg",)),
    Case("diff -n -1", ["diff", "{good}", "{good}", "-n", "-1"], 2, "-n"),
    Case("diff -n 10**12", ["diff", "{good}", "{good}", "-n", "1000000000000"], 2, "-n"),
    Case("diff -f into a missing directory", ["diff", "{good}", "{good}", "-f", "no/dir/d.txt"], 1, "does not exist"),
    Case("diff report -f into a read-only directory", ["diff", "{good}", "{good}", "report", "-f", "../ro/r.html"], 1,
         "r.html", readonly=("ro",)),
    Case("diff -f onto a directory", ["diff", "{good}", "{good}", "-f", "."], 2, "directory"),
    Case("diff -f below a file", ["diff", "{good}", "{good}", "-f", "{good}/d.txt"], 1, "good.perf"),
    Case("diff report -f onto a full disk", ["diff", "{good}", "{good}", "report", "-f", "../full"], 1, "../full", _full_device),
    Case("diff with an unknown -m", ["diff", "0@i", "0@i", "-m", "nosuchrev"], 1, "nosuchrev"),
    Case("diff 9@i", ["diff", "9@i", "0@i"], 1, "9@i"),
]

_FUZZ_OK = ["-b", "cat", "-w", "../in/seed.txt", "-o", "../out", "-t", "1", "-e", "2", "--calibration", "2"]
_SEED = _inputs(seed__txt="hello\nworld\n")


def _fuzz(name: str, code: int, words: str, *change: str, setup: Any = None, readonly: tuple[str, ...] = ()) -> Case:
    argv = list(_FUZZ_OK)
    pairs = list(change)
    while pairs:
        flag, value = pairs.pop(0), pairs.pop(0)
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    return Case(f"fuzz {name}", ["fuzz", *argv], code, words, setup or _SEED, absent=("../out",), readonly=readonly)


FUZZ_CASES = [
    Case("fuzz without a program", ["fuzz", "-w", "../in/seed.txt", "-o", "../out"], 2, "-b", _SEED, absent=("../out",)),
    _fuzz("a missing program", 1, "nosuchprogram", "-b", "nosuchprogram-xyz"),
    _fuzz("a missing seed", 1, "nope.txt", "-w", "../in/nope.txt"),
    _fuzz("an empty seed directory", 1, "empty", "-w", "../in/empty", setup=_both(_SEED, _in_dir("empty"))),
    _fuzz("a seed that is a FIFO-free binary blob of zero bytes", 1, "zero.bin", "-w", "../in/zero.bin",
          setup=_both(_SEED, _inputs(zero__bin=b""))),
    _fuzz("-o an existing file", 1, "seed.txt", "-o", "../in/seed.txt"),
    _fuzz("-o a non-empty directory", 1, "full", "-o", "../in/full", setup=_both(_SEED, _inputs(seed2__txt="x"),
                                                                                   _in_dir("full"),
                                                                                   _inputs(**{"full/x": "x"}))),
    _fuzz("-o inside a read-only directory", 1, "ro", "-o", "../ro/out", readonly=("ro",)),
    _fuzz("-o below a file", 1, "seed.txt", "-o", "../in/seed.txt/out"),
    _fuzz("an unknown rule", 1, "nosuchrule", "-r", "nosuchrule"),
    _fuzz("a rule with an unknown parameter", 1, "bogus", "-r", "grow-number:bogus=1"),
    _fuzz("a rule parameter without a value", 1, "factor", "-r", "grow-number:factor"),
    _fuzz("a rule parameter out of range", 1, "factor", "-r", "grow-number:factor=1"),
    _fuzz("a rule parameter NaN", 1, "factor", "-r", "grow-number:factor=nan"),
    _fuzz("-N and -mi together", 2, "-N", "-N", "100", "-mi", "10"),
    _fuzz("-t 0", 1, "timeout", "-t", "0"),
    _fuzz("-t -1", 1, "timeout", "-t", "-1"),
    _fuzz("-t nan", 1, "timeout", "-t", "nan"),
    _fuzz("-t inf", 1, "timeout", "-t", "inf"),
    _fuzz("-ht 0", 1, "hang_timeout", "-ht", "0"),
    _fuzz("-N 0", 1, "max_size", "-N", "0"),
    _fuzz("-N beyond 64 bits", 1, "max_size", "-N", "9" * 30),
    _fuzz("-N abc", 2, "abc", "-N", "abc"),
    _fuzz("-mp nan", 1, "max_ratio", "-mp", "nan"),
    _fuzz("-j 0", 1, "jobs", "-j", "0"),
    _fuzz("-j 100000", 1, "jobs", "-j", "100000"),
    _fuzz("-e 0", 1, "exec_limit", "-e", "0"),
    _fuzz("-e -1", 1, "exec_limit", "-e", "-1"),
    _fuzz("--calibration 1000000", 1, "calibration", "--calibration", "1000000"),
    _fuzz("--stop-at nan", 1, "stop_at", "--stop-at", "nan"),
    _fuzz("-cr -1", 1, "coverage_increase", "-cr", "-1"),
    _fuzz("--profiles -1", 1, "profiles", "--profiles", "-1"),
    _fuzz("--seed -1", 1, "seed", "--seed", "-1"),
    _fuzz("a bad -wf regex", 1, "[", "-w", "../in", "-wf", "["),
    _fuzz("--metric banana", 2, "banana", "--metric", "banana"),
    _fuzz("-m an unknown revision", 1, "nosuchrev", "-m", "nosuchrev"),
    _fuzz("-c an unknown collector", 1, "nosuchcollector", "-c", "nosuchcollector"),
    _fuzz("-a with unbalanced quotes", 1, "quot", "-a", "'unbalanced"),
]

_DD_SETUP = _inputs(slow__txt="a\nb\nc\n")
DELTA_CASES = [
    Case("deltadebugging a missing program", ["deltadebugging", "nosuchprogram-xyz", "../in/slow.txt", "-o", "../dd"], 1,
         "nosuchprogram", _DD_SETUP, absent=("../dd",)),
    Case("deltadebugging a missing input", ["deltadebugging", "cat", "../in/nope.txt", "-o", "../dd"], 1, "nope.txt",
         _DD_SETUP, absent=("../dd",)),
    Case("deltadebugging an input that is a directory", ["deltadebugging", "cat", "../in", "-o", "../dd"], 1, "in",
         _DD_SETUP, absent=("../dd",)),
    Case("deltadebugging an empty input", ["deltadebugging", "cat", "../in/e.txt", "-o", "../dd"], 1, "e.txt",
         _inputs(e__txt=""), absent=("../dd",)),
    Case("deltadebugging -o an existing file", ["deltadebugging", "cat", "../in/slow.txt", "-o", "../in/slow.txt"], 1,
         "slow.txt", _DD_SETUP),
    Case("deltadebugging -o a non-empty directory", ["deltadebugging", "cat", "../in/slow.txt", "-o", "../in"], 1,
         "in", _DD_SETUP),
    Case("deltadebugging -o in a read-only directory", ["deltadebugging", "cat", "../in/slow.txt", "-o", "../ro/dd"], 1,
         "ro", _DD_SETUP, readonly=("ro",)),
    Case("deltadebugging -t 0", ["deltadebugging", "cat", "../in/slow.txt", "-o", "../dd", "-t", "0"], 1, "timeout",
         _DD_SETUP, absent=("../dd",)),
    Case("deltadebugging -t nan", ["deltadebugging", "cat", "../in/slow.txt", "-o", "../dd", "-t", "nan"], 1, "timeout",
         _DD_SETUP, absent=("../dd",)),
    Case("deltadebugging --tolerance nan", ["deltadebugging", "cat", "../in/slow.txt", "-o", "../dd", "--tolerance",
                                            "nan"], 1, "tolerance", _DD_SETUP, absent=("../dd",)),
    Case("deltadebugging --tolerance -1", ["deltadebugging", "cat", "../in/slow.txt", "-o", "../dd", "--tolerance",
                                           "-1"], 1, "tolerance", _DD_SETUP, absent=("../dd",)),
    Case("deltadebugging -o below a file", ["deltadebugging", "cat", "../in/slow.txt", "-o", "../in/slow.txt/dd"], 1,
         "slow.txt", _DD_SETUP),
    Case("deltadebugging --keep banana", ["deltadebugging", "cat", "../in/slow.txt", "--keep", "banana"], 2, "banana",
         _DD_SETUP),
    Case("deltadebugging without an input", ["deltadebugging", "cat"], 2, "INPUT"),
]


def _remote_with_format(text: str) -> Callable[[Path], None]:
    """A bare git repository ``../remote.git`` whose refs/perun/profiles holds a ``format`` file of ``text``."""
    def setup(root: Path) -> None:
        from dulwich.objects import Blob, Commit, Tree
        from dulwich.repo import Repo

        bare = Repo.init_bare(str(root.parent / "remote.git"), mkdir=True)
        try:
            blob = Blob.from_string(text.encode())
            tree = Tree()
            tree.add(b"format", 0o100644, blob.id)
            commit = Commit()
            commit.tree = tree.id
            commit.author = commit.committer = b"T <t@example.com>"
            commit.author_time = commit.commit_time = 1_700_000_000
            commit.author_timezone = commit.commit_timezone = 0
            commit.message = b"perun profiles"
            for obj in (blob, tree, commit):
                bare.object_store.add_object(obj)
            bare.refs[b"refs/perun/profiles"] = commit.id
        finally:
            bare.close()
    return setup


REMOTE_CASES = [
    Case("push with no origin", ["push"], 1, "origin"),
    Case("push to a missing path", ["push", "../nowhere"], 1, "nowhere"),
    Case("fetch from a directory that is not a git repository", ["fetch", "../in"], 1, "not a git repository",
         _in_dir("x")),
    Case("pull from a file", ["pull", "../in/f.txt"], 1, "f.txt", _inputs(f__txt="hello")),
    Case("fetch from a newer perun format", ["fetch", "../remote.git"], 1, "format",
         _remote_with_format('{"format": 99}')),
    Case("pull from a newer perun format", ["pull", "../remote.git"], 1, "format", _remote_with_format('{"format": 99}')),
    Case("push to a newer perun format", ["push", "../remote.git"], 1, "format", _remote_with_format('{"format": 99}')),
    Case("pull a format that is not JSON", ["pull", "../remote.git"], 1, "format", _remote_with_format("\x00\x01garbage")),
    Case("pull a format that is NaN", ["pull", "../remote.git"], 1, "format", _remote_with_format('{"format": NaN}')),
    Case("pull a format nested deeply", ["pull", "../remote.git"], 1, "format",
         _remote_with_format('{"format": ' + "[" * 100000 + "]" * 100000 + "}")),
    Case("fetch from a malformed URL", ["fetch", "ssh://[bad"], 1, "ssh://[bad"),
    Case("fetch from a URL with a control character", ["fetch", "../a\x1b[2Jb"], 1, "a"),
    Case("fetch from an unknown scheme", ["fetch", "gopher://example.invalid/x"], 1, "gopher"),
    Case("push --bogus", ["push", "--bogus"], 2, "--bogus"),
    Case("push to an empty remote name", ["push", ""], 2, "empty"),
    Case("pull from an empty remote name", ["pull", ""], 2, "empty"),
    Case("fetch from an empty remote name", ["fetch", " "], 2, "empty"),
]

_MATRIX = _local("cmds: ['true']\ncollectors: [{name: time}]\n")
BISECT_CASES = [
    Case("bisect from an unknown revision", ["bisect", "nosuchrev"], 1, "nosuchrev", _MATRIX),
    Case("bisect to an unknown revision", ["bisect", "HEAD~1", "nosuchrev"], 1, "nosuchrev", _MATRIX),
    Case("bisect with GOOD after BAD", ["bisect", "HEAD", "HEAD~1"], 2, "ancestor", _MATRIX),
    Case("bisect with GOOD equal to BAD", ["bisect", "HEAD", "HEAD"], 2, "same commit", _MATRIX),
    Case("bisect with a control character in a revision", ["bisect", "a\x1b[2Jb"], 1, "a", _MATRIX),
    Case("bisect --fail-on sometimes", ["bisect", "HEAD~1", "--fail-on", "sometimes"], 2, "sometimes"),
    Case("bisect -M an unknown method", ["bisect", "HEAD~1", "-M", "nomethod"], 1, "nomethod", _MATRIX),
    Case("bisect -j an unknown job", ["bisect", "HEAD~1", "-j", "99"], 2, "99", _MATRIX),
    Case("bisect without a job matrix", ["bisect", "HEAD~1"], 1, "matrix|cmds"),
]

FSCK_CASES = [
    Case("fsck --stale-after nan", ["fsck", "--stale-after", "nan"], 2, "--stale-after"),
    Case("fsck --stale-after inf", ["fsck", "--stale-after", "inf"], 2, "--stale-after"),
    Case("fsck --repair with a damaged index in a read-only store", ["fsck", "--repair"], 1, "",
         _damage_index,
         readonly=("repo/.perun/objects", "repo/.perun/objects/*")),
    Case("fsck with objects a file", ["fsck"], 1, "objects", _objects_a_file),
]

CONVERT_CASES = [
    Case("convert a missing file", ["convert", "missing.perf"], 1, "missing.perf"),
    Case("convert a directory", ["convert", ".perun"], 2, "directory"),
    Case("convert --layout banana", ["convert", "{good}", "--layout", "banana"], 2, "banana"),
    Case("convert a NaN amount", ["convert", "{bad}"], 1, "resources[3].amount", bad=MALFORMED["amount NaN"][0]),
    Case("convert a truncated file", ["convert", "{bad}", "-o", "../c.json"], 1, "malformed JSON",
         bad=MALFORMED["truncated JSON"][0], absent=("../c.json",)),
    Case("convert very deep JSON", ["convert", "{bad}"], 1, "deeper than|malformed JSON",
         bad=MALFORMED["very deep JSON (100000 levels)"][0]),
    Case("convert a binary file", ["convert", "{bad}"], 1, "UTF-8|malformed", bad=lambda: BINARY),
    Case("convert -o into a missing directory", ["convert", "{good}", "-o", "no/dir/c.json"], 1, "does not exist"),
    Case("convert -o into a read-only directory", ["convert", "{good}", "-o", "../ro/c.json"], 1, "c.json", readonly=("ro",)),
    Case("convert -o onto a full disk", ["convert", "{good}", "--layout", "documented", "-o", "../full"], 1,
         "../full", _full_device),
    Case("convert -o below a file", ["convert", "{good}", "-o", "{good}/c.json"], 1, "good.perf"),
    Case("convert a named pipe nobody writes", ["convert", "../in/pipe"], 1, "regular file",
         lambda root: _fifo(root.parent / "in" / "pipe")),
    Case("convert in place in a read-only directory", ["convert", "../in/p.perf", "--layout", "documented"], 1,
         "p.perf", lambda root: _inputs(p__perf=json.dumps(good_profile()))(root), readonly=("in",)),
    Case("convert -o an empty name", ["convert", "{good}", "-o", ""], 2, "empty"),
]

EXPLAIN_CASES = [
    Case("check head --explain-dir a file", ["check", "head", "--explain-dir", "{good}"], 2, "good.perf"),
    Case("check head --explain-dir an empty name", ["check", "head", "--explain-dir", ""], 2, "empty"),
    Case("check head --explain-dir below a file", ["check", "head", "--explain-dir", "{good}/x"], 1, "good.perf"),
    Case("check head --explain-dir in a read-only directory", ["check", "head", "--explain-dir", "../ro/x"], 1, "ro",
         readonly=("ro",)),
    Case("check head --explain-with banana", ["check", "head", "--explain-with", "banana"], 2, "banana"),
]

SHOW_OUTPUT_CASES = [
    Case("show raw -f into a read-only directory", ["show", "{good}", "raw", "-f", "../ro/o.json"], 1, "o.json",
         readonly=("ro",)),
    Case("show raw -f onto a full disk", ["show", "{good}", "raw", "-f", "../full"], 1, "../full", _full_device),
    Case("show raw -f below a file", ["show", "{good}", "raw", "-f", "{good}/o.json"], 1, "good.perf"),
    Case("show raw -f an empty name", ["show", "{good}", "raw", "-f", ""], 2, "-f"),
    Case("show bars -f into a read-only directory", ["show", "{good}", "bars", "-f", "../ro/o.txt"], 1,
         "o.txt", readonly=("ro",)),
    Case("show bars -f onto a named pipe nobody reads", ["show", "{good}", "bars", "-f", "../pipe.txt"], 1, "pipe.txt",
         lambda root: os.mkfifo(root.parent / "pipe.txt")),
    Case("show bars -f a name with a control character", ["show", "{good}", "bars", "-f", "no/\x1b[2J/o.txt"], 1,
         "does not exist"),
]

NEWER_CONFIG_CASES = [
    Case("config set a key with a control character", ["config", "set", "cmds\x1b[2J", "1"], 1, "cmds"),
    Case("config set degradation.cutoff a lone surrogate", ["config", "set", "degradation.cutoff", "\udc80"], 1,
         "cutoff"),
    Case("config set degradation.cutoff .nan", ["config", "set", "degradation.cutoff", ".nan"], 1, "cutoff"),
    Case("config set degradation.cutoff_abs .inf", ["config", "set", "degradation.cutoff_abs", ".inf"], 1, "cutoff_abs"),
    Case("config set execute.timeout .nan", ["config", "set", "execute.timeout", ".nan"], 1, "execute.timeout"),
    Case("config set format.sort_profiles_order sideways", ["config", "set", "format.sort_profiles_order", "sideways"],
         1, "sort_profiles_order"),
    Case("config set execute.pre_run 5", ["config", "set", "execute.pre_run", "5"], 1, "pre_run"),
    Case("config set vcs.url 5", ["config", "set", "vcs.url", "[5]"], 1, "vcs.url"),
    Case("check head with cutoff NaN in local.yml", ["check", "head"], 1, "cutoff", _local("degradation:\n  cutoff: .nan\n")),
    Case("collect with execute.timeout a list in local.yml", ["collect", "time", "--", "true"], 1, "execute.timeout",
         _local("execute:\n  timeout: [1]\n")),
    Case("fuzz --add-to-matrix with workloads a number in local.yml", ["fuzz", *_FUZZ_OK, "--add-to-matrix"], 1,
         "workloads", _both(_SEED, _local("workloads: 5\n")), absent=("../out",)),
    Case("bisect with collectors a string in local.yml", ["bisect", "HEAD~1"], 1, "collectors",
         _local("cmds: ['true']\ncollectors: time\n")),
    Case("check head --explain with pre_run a number", ["check", "head", "--explain"], 1, "pre_run",
         _local("execute:\n  pre_run: 5\n")),
]

NEW_COMMAND_CASES = [*IMPORT_CASES, *DIFF_CASES, *FUZZ_CASES, *DELTA_CASES, *REMOTE_CASES, *BISECT_CASES, *FSCK_CASES,
                     *CONVERT_CASES, *EXPLAIN_CASES, *SHOW_OUTPUT_CASES, *NEWER_CONFIG_CASES]

CASES: list[Case] = [*_profile_cases(), *OPTION_CASES, *TAG_CASES, *CONFIG_CASES, *BROKEN_CONFIG_CASES, *PATH_CASES,
                     *NEW_COMMAND_CASES]
