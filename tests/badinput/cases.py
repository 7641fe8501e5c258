"""The bad inputs, as tables: malformed profiles, bad options, bad tags, bad configuration, unusable paths.

Each case is (name, argv, exit code, words the one error line must hold, setup).  ``argv`` may hold
``{bad}`` (the malformed profile file of the case), ``{good}`` (a valid profile file outside the store)
and ``{head}`` (HEAD's checksum); ``setup`` (or None) prepares the copy of the repository before the
store is hashed.
"""

from __future__ import annotations

import copy
import math
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

CASES: list[Case] = [*_profile_cases(), *OPTION_CASES, *TAG_CASES, *CONFIG_CASES, *BROKEN_CONFIG_CASES, *PATH_CASES]
