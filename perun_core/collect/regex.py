"""The regex collector: resources from the metrics a program prints (spec 001 §1.5).

The command runs ``repeat`` times; every line it writes to the chosen
stream is searched with each pattern, and every match becomes one resource.
A pattern's named groups fill the resource:

* ``amount`` (or the group named by the pattern's ``amount`` key, or the
  only group of a regex that has one) must hold a number: the amount;
* ``uid``, ``type`` and ``subtype`` set those keys;
* any other named group becomes a key of the same name (a number when it
  reads as one); groups that did not take part in the match are left out.

Keys no group sets come from the pattern's configuration, then from the
unit's parameters: ``type`` (default ``metric``), ``subtype`` (none),
``uid`` (default: the command) and ``units``, which goes into the header's
``units`` under the resource type (or ``type(subtype)`` when patterns of
one type use different units).  Each resource also has ``order``, the match
number of its pattern in the run (from 1), and ``run``, the run number.

Patterns are given on the command line (``-e 'ops/s: (?P<amount>\\d+)'``,
repeatable; the unit's ``--type``, ``--units``... apply to them) or in YAML,
as strings or mappings::

    params:
      patterns:
        - regex: 'ops/s: (?P<amount>[0-9.]+)'
          type: throughput
          units: ops/s
        - {regex: 'p(?P<subtype>\\d+) latency: (?P<amount>\\d+) ms', type: time, units: ms, stream: stderr}

A regular expression that does not compile, lacks an amount group or has
unknown keys is refused when the parameters are converted, before anything
runs (:class:`~perun_core.errors.InvalidParameter` naming the pattern); a
pattern that never matched in any run fails the job (unless
``allow_unmatched``), as does an amount group that matched something other
than a number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import CollectionError, InvalidParameter
from ..profile.model import Profile, Snapshot
from ..profile.resources import ResourceTable
from ..runner.process import describe_status, run_process
from ..units import PhaseResult, UnitContext
from ..params import MAX_REPEAT, MAX_TIMEOUT, Param
from .native_run import check_command

__all__ = ["PatternsParam", "RegexCollector", "parse_number"]

STREAMS = ("stdout", "stderr", "both")
_PATTERN_KEYS = ("regex", "stream", "type", "subtype", "units", "uid", "amount")
_RESERVED_GROUPS = frozenset({"type", "subtype", "uid"})
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")


def parse_number(text: str) -> int | float | None:
    """``text`` (stripped) as an int or a float, or None when it is not a plain number."""
    text = text.strip()
    if _INTEGER.fullmatch(text):
        return int(text)
    if _NUMBER.fullmatch(text):
        return float(text)
    return None


class PatternsParam(Param):
    """The ``patterns`` parameter: strings or mappings, each checked and made a canonical mapping."""

    __slots__ = ()

    def describe(self) -> str:
        return ("regular expressions with a numeric (?P<amount>...) group, as strings or mappings with "
                f"the keys {', '.join(_PATTERN_KEYS)}")

    def convert(self, value: Any, unit: str) -> Any:
        if value is None:
            return None
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        return [self._one(item, unit) for item in items]

    def _one(self, item: Any, unit: str) -> dict[str, Any]:
        def bad(shown: Any, expected: str) -> InvalidParameter:
            return InvalidParameter(unit, self.name, shown, expected)

        if isinstance(item, str):
            item = {"regex": item}
        if not isinstance(item, Mapping):
            raise bad(item, self.describe())
        spec = {str(key): value for key, value in item.items()}
        if "pattern" in spec and "regex" not in spec:
            spec["regex"] = spec.pop("pattern")
        text = spec.get("regex")
        unknown = [key for key in spec if key not in _PATTERN_KEYS]
        if unknown:
            raise bad(text if isinstance(text, str) else item,
                      f"pattern keys out of {', '.join(_PATTERN_KEYS)}; '{unknown[0]}' is not one")
        if not isinstance(text, str) or not text:
            raise bad(item, "a non-empty 'regex' string in every pattern")
        try:
            compiled = re.compile(text)
        except re.error as exc:
            raise bad(text, f"a valid regular expression ({exc})") from None
        for key in ("type", "subtype", "units", "uid"):
            if spec.get(key) is not None and not isinstance(spec[key], (str, int, float)):
                raise bad(text, f"a string as the pattern's '{key}'")
        stream = spec.get("stream")
        if stream is not None and stream not in STREAMS:
            raise bad(text, f"the pattern's 'stream' to be one of {', '.join(STREAMS)}, not {stream!r}")
        amount = str(spec.get("amount") or "amount")
        if amount not in compiled.groupindex and not ("amount" not in spec and compiled.groups == 1):
            groups = f"{compiled.groups} group{'s' if compiled.groups != 1 else ''}"
            raise bad(text, f"a named group (?P<{amount}>...) capturing the number (the regex has {groups})")
        canonical: dict[str, Any] = {"regex": text}
        for key in ("stream", "type", "subtype", "units", "uid"):
            if spec.get(key) is not None:
                canonical[key] = str(spec[key])
        canonical["amount"] = amount if amount in compiled.groupindex else 1
        return canonical


@dataclass
class _Pattern:
    """A pattern ready for matching, with its defaults filled in and its counters."""

    spec: dict[str, Any]
    regex: re.Pattern[str]
    stream: str
    type: str
    subtype: str | None
    units: str | None
    uid: str | None
    matches: int = 0

    def streams(self) -> tuple[str, ...]:
        return ("stdout", "stderr") if self.stream == "both" else (self.stream,)


class RegexCollector:
    name = "regex"
    kind = "collector"
    summary = "Resources from the numbers a program prints, picked out by regular expressions."
    description = (
        "Runs the command REPEAT times and searches every line of its standard output (or error) with "
        "each pattern. Each match is a resource: the named group 'amount' (a number) is its amount; groups "
        "'uid', 'type' and 'subtype' set those keys, other named groups become keys of their own. "
        "Types, units and uids not set by groups come from the pattern's configuration, then from the "
        "options. A pattern that never matches fails the job unless --allow-unmatched."
    )
    params = (
        PatternsParam("patterns", "list", (), "Regular expression with a (?P<amount>...) group (repeatable).",
                      flags=("-e", "--pattern"), item="str", metavar="REGEX"),
        Param("stream", "choice", "stdout", "Output searched by patterns that do not name one.",
              flags=("--stream",), choices=STREAMS),
        Param("type", "str", "metric", "Resource type for patterns that do not set one.", flags=("--type",),
              metavar="TYPE"),
        Param("subtype", "str", None, "Resource subtype for patterns that do not set one.", flags=("--subtype",),
              metavar="SUBTYPE"),
        Param("units", "str", None, "Units of the amounts for patterns that do not set them (e.g. ops/s).",
              flags=("--units",), metavar="UNITS"),
        Param("uid", "str", None, "uid for patterns that do not set one (default: the command).",
              flags=("--uid",), metavar="UID"),
        Param("repeat", "int", 1, "Runs of the command.", flags=("-r", "--repeat"), minimum=1, maximum=MAX_REPEAT,
              metavar="N"),
        Param("timeout", "float", None, "Fail a run (and the job) that takes longer than this many seconds.",
              flags=("-t", "--timeout"), minimum=0.001, maximum=MAX_TIMEOUT, metavar="SECONDS", unit="s"),
        Param("keep_failed", "bool", False, "Record runs that exit non-zero instead of failing the job.",
              flags=("--keep-failed",)),
        Param("allow_unmatched", "bool", False, "Do not fail the job when a pattern never matches.",
              flags=("--allow-unmatched",)),
    )

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        specs = list(kwargs.get("patterns") or ())
        if not specs:
            raise InvalidParameter(self.name, "patterns", [], "at least one pattern, e.g. "
                                   "-e 'ops/s: (?P<amount>[0-9.]+)'")
        check_command(ctx, kwargs)
        return PhaseResult.ok(kwargs)

    def _patterns(self, kwargs: dict[str, Any]) -> list[_Pattern]:
        return [
            _Pattern(spec, re.compile(spec["regex"]), spec.get("stream", kwargs["stream"]),
                     spec.get("type", kwargs["type"]), spec.get("subtype", kwargs["subtype"]),
                     spec.get("units", kwargs["units"]), spec.get("uid", kwargs["uid"]))
            for spec in kwargs["patterns"]
        ]

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        patterns = self._patterns(kwargs)
        by_stream = {stream: [p for p in patterns if stream in p.streams()] for stream in ("stdout", "stderr")}
        default_uid = kwargs["cmd"]
        rows: list[dict] = []
        row_units: list[str | None] = []
        lines = {"stdout": 0, "stderr": 0}
        problems: list[str] = []
        wall = 0.0
        for run in range(1, kwargs["repeat"] + 1):
            ctx.repetition(run, kwargs["repeat"])
            order = {id(p): 0 for p in patterns}

            def on_line(stream: str, text: str, run: int = run, order: dict = order) -> None:
                ctx.output(stream, text)
                lines[stream] += 1
                for pattern in by_stream[stream]:
                    for match in pattern.regex.finditer(text):
                        row = self._resource(pattern, match, default_uid)
                        if row is None:
                            if not problems:
                                amount = match.group(pattern.spec["amount"])
                                problems.append(f"pattern '{pattern.spec['regex']}': the amount group matched "
                                                f"{amount!r} on line {lines[stream]} of {stream}, which is not a "
                                                "number")
                            continue
                        pattern.matches += 1
                        order[id(pattern)] += 1
                        row["order"] = order[id(pattern)]
                        row["run"] = run
                        rows.append(row)
                        row_units.append(pattern.units)

            outcome = self._run(ctx, kwargs, on_line)
            wall += outcome.wall_ns / 1e9
            if outcome.exit_status != 0:
                if not kwargs["keep_failed"]:
                    raise CollectionError(ctx.label, f"the profiled command {describe_status(outcome.exit_status)}",
                                          outcome.exit_status, outcome.stderr_tail)
                for row in rows:
                    if row["run"] == run:
                        row["exit_status"] = outcome.exit_status
            if problems:
                raise CollectionError(ctx.label, problems[0])
        if not kwargs["allow_unmatched"]:
            for pattern in patterns:
                if not pattern.matches:
                    where = " and ".join(pattern.streams())
                    counted = sum(lines[s] for s in pattern.streams())
                    raise CollectionError(ctx.label, f"pattern '{pattern.spec['regex']}' never matched the "
                                          f"program's {where} ({counted} line{'s' if counted != 1 else ''})")
        kwargs["regex_result"] = (rows, row_units, patterns, wall)
        return PhaseResult.ok(kwargs)

    @staticmethod
    def _resource(pattern: _Pattern, match: re.Match[str], default_uid: str) -> dict[str, Any] | None:
        amount = parse_number(match.group(pattern.spec["amount"]) or "")
        if amount is None:
            return None
        groups = match.groupdict()
        row: dict[str, Any] = {
            "amount": amount,
            "type": groups.get("type") or pattern.type,
            "uid": groups.get("uid") or pattern.uid or default_uid,
        }
        subtype = groups.get("subtype") or pattern.subtype
        if subtype:
            row["subtype"] = subtype
        for name, value in groups.items():
            if value is None or name in _RESERVED_GROUPS or name == pattern.spec["amount"]:
                continue
            number = parse_number(value)
            row[name] = value if number is None else number
        return row

    def _run(self, ctx: UnitContext, kwargs: dict[str, Any], on_line: Any) -> Any:
        try:
            outcome = run_process(kwargs["argv"], cwd=ctx.cwd, timeout=kwargs["timeout"], cancelled=ctx.cancelled,
                                  on_line=on_line)
        except FileNotFoundError:
            raise CollectionError(ctx.label, f"command not found: {kwargs['argv'][0]}") from None
        except OSError as exc:
            raise CollectionError(ctx.label, f"command cannot be started: {exc.strerror or exc}") from None
        if outcome.timed_out:
            raise CollectionError(ctx.label, f"timed out after {kwargs['timeout']:g} s (the run was killed)",
                                  None, outcome.stderr_tail)
        return outcome

    def after(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        rows, row_units, patterns, wall = kwargs.pop("regex_result")
        units = _units(rows, row_units, patterns)
        types = sorted({row["type"] for row in rows}) or sorted({p.type for p in patterns})
        header = {"type": types[0] if len(types) == 1 else "mixed", "units": units, "cmd": kwargs["cmd"],
                  "params": kwargs["args"], "workload": kwargs["workload"]}
        kwargs["profile"] = Profile(header=header, global_region=Snapshot(ResourceTable(rows), [], {"timestamp": wall}))
        return PhaseResult.ok(kwargs)


def _units(rows: list[dict], row_units: list[str | None], patterns: list[_Pattern]) -> dict[str, str]:
    """Header units: per resource type, or per ``type(subtype)`` where one type has several units."""
    seen: dict[str, dict[str | None, str]] = {}
    for pattern in patterns:
        if pattern.units and not pattern.matches:
            seen.setdefault(pattern.type, {})[pattern.subtype] = pattern.units
    for row, unit in zip(rows, row_units):
        if unit:
            seen.setdefault(row["type"], {})[row.get("subtype")] = unit
    units: dict[str, str] = {}
    for kind, by_subtype in seen.items():
        distinct = set(by_subtype.values())
        if len(distinct) == 1:
            units[kind] = distinct.pop()
        else:
            for subtype, unit in by_subtype.items():
                units[f"{kind}({subtype})" if subtype else kind] = unit
    return units
