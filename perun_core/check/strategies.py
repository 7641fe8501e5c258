"""Which methods check which profiles: the rules of ``degradation.strategies`` (spec 001 §8.3).

A rule is a mapping.  ``method`` names the method (full name, short name or
alias); the other keys are conditions on the profile, all of which must
hold:

==================  =====================================================
``type``            the profile type (``time``, ``mixed``, ``memory``)
``cmd``             the command (also matches its base name)
``args``            the arguments
``workload``        the workload (also matches its base name)
``collector``       the collector's name
``postprocessor``   a postprocessor that was applied (any position)
``postprocessors``  the exact list of postprocessors applied
==================  =====================================================

A condition is a string (shell wildcards allowed: ``cmd: "bench-*"``) or a
list of them (any may match).  Two more keys tune what the rule does:
``params`` (a mapping handed to the method) and ``cutoff`` /
``cutoff_abs`` (see below).  Any other key is an error, so a typo does not
silently turn a rule into a catch-all.

Rules are gathered over the configuration hierarchy (local, shared, then the
built-in default rule of :mod:`perun_core.check.default`).  With
``degradation.apply: first`` the first matching rule is applied, with
``all`` every matching one.

``degradation.cutoff`` (percent) and ``degradation.cutoff_abs`` (in the
profile's unit) are the paper's cut-off: a degradation or optimization whose
``|delta_rel|`` or ``|delta_abs|`` is below it is reported as NoChange.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from . import get_method
from ..errors import ConfigError, InvalidParameter, UnknownUnit
from ..params import convert_params, find_param
from .default import DEFAULT_RULES
from .results import Finding, PerformanceChange

if TYPE_CHECKING:  # pragma: no cover
    from ..config import ConfigStack
    from . import CheckMethod

__all__ = ["MATCH_KEYS", "Rule", "Strategy", "apply_cutoff", "load_strategy", "parse_rules"]

MATCH_KEYS = ("type", "cmd", "args", "workload", "collector", "postprocessor", "postprocessors")
OTHER_KEYS = ("method", "params", "cutoff", "cutoff_abs")
KEY = "degradation.strategies"


@dataclass(frozen=True)
class Rule:
    """One parsed rule: its conditions, the resolved method and its parameters."""

    method: CheckMethod
    conditions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    cutoff: float | None = None
    cutoff_abs: float | None = None
    text: str = ""

    def matches(self, profile: Any) -> bool:
        """Whether every condition holds for ``profile`` (a Profile)."""
        for key, patterns in self.conditions:
            if not any(_holds(key, pattern, profile) for pattern in patterns):
                return False
        return True


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _like(pattern: str, value: str) -> bool:
    return value == pattern or fnmatch.fnmatchcase(value, pattern)


def _holds(key: str, pattern: str, profile: Any) -> bool:
    if key == "postprocessor":
        return any(_like(pattern, name) for name in profile.postprocessor_names)
    if key == "postprocessors":
        return pattern == "+".join(profile.postprocessor_names)
    value = _text(getattr(profile, key, ""))
    if _like(pattern, value):
        return True
    if key in ("cmd", "workload") and value:
        return _like(pattern, posixpath.basename(value.rstrip("/")))
    return False


def _number(index: int, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(None, KEY, f"rule {index}: '{key}' must be a non-negative number, got {value!r}")
    return float(value)


def parse_rules(raw: Sequence[Any]) -> list[Rule]:
    """Validate and resolve the gathered rules; raises ConfigError or UnknownUnit naming the rule."""

    rules = []
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ConfigError(None, KEY, f"expected a list of rules, got {type(raw).__name__}")
    for index, item in enumerate(raw, 1):
        if not isinstance(item, Mapping):
            raise ConfigError(None, KEY, f"rule {index} must be a mapping, got {item!r}")
        unknown = [str(k) for k in item if k not in MATCH_KEYS and k not in OTHER_KEYS]
        if unknown:
            raise ConfigError(None, KEY, f"rule {index} has an unknown key '{unknown[0]}'; "
                                         f"known: {', '.join(MATCH_KEYS + OTHER_KEYS)}")
        name = item.get("method")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(None, KEY, f"rule {index} needs a 'method' string")
        try:
            method = get_method(name)
        except UnknownUnit as exc:
            raise UnknownUnit("check method", name, exc.known) from None
        conditions = []
        for key in MATCH_KEYS:
            if key not in item:
                continue
            value = item[key]
            values = value if isinstance(value, list) else [value]
            if key == "postprocessors" and isinstance(value, list):
                values = ["+".join(str(v) for v in value)]
            if not values or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in values):
                raise ConfigError(None, KEY, f"rule {index}: '{key}' must be a string or a list of strings")
            conditions.append((key, tuple(str(v) for v in values)))
        params = item.get("params") or {}
        if not isinstance(params, Mapping):
            raise ConfigError(None, KEY, f"rule {index}: 'params' must be a mapping")
        params = _checked_params(index, method, params)
        cutoff = _number(index, "cutoff", item["cutoff"]) if "cutoff" in item else None
        cutoff_abs = _number(index, "cutoff_abs", item["cutoff_abs"]) if "cutoff_abs" in item else None
        text = ", ".join(f"{k}: {item[k]}" for k in item)
        rules.append(Rule(method, tuple(conditions), dict(params), cutoff, cutoff_abs, text))
    return rules


def _checked_params(index: int, method: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """The rule's ``params`` converted by the method's declaration (the given ones only); ConfigError naming them.

    A method that declares nothing (``params`` missing) gets them as they are.
    """

    declared = getattr(method, "params", None)
    if declared is None:
        return dict(params)
    try:
        converted = convert_params(method.name, declared, params)
    except InvalidParameter as exc:
        raise ConfigError(None, KEY, f"rule {index}: {exc.message}") from None
    given = {find_param(declared, str(key)).name for key in params}
    return {name: value for name, value in converted.items() if name in given}


@dataclass(frozen=True)
class Strategy:
    """The parsed configuration of checks: rules, how they apply, cut-offs, collection."""

    rules: list[Rule]
    apply: str = "first"
    cutoff: float = 0.0
    cutoff_abs: float = 0.0
    collect_before_check: bool = False
    log_collect: bool = False
    #: ``degradation.collect_before_check`` was set by the repository's own local.yml and ignored
    ignored_local_collect: bool = False
    #: one-line notes on where settings that change verdicts came from, when not from the repository
    notes: tuple[str, ...] = ()

    def rules_for(self, profile: Any) -> list[Rule]:
        """The rules to apply to ``profile``: the first matching one, or all (``apply: all``)."""
        matching = [rule for rule in self.rules if rule.matches(profile)]
        return matching[:1] if self.apply == "first" else matching

    @classmethod
    def of_methods(cls, names: Sequence[str | Mapping[str, Any]], **kwargs: Any) -> Strategy:
        """Apply exactly the methods ``names`` to every profile (the ``-M`` option).

        An item may also be a rule without conditions, ``{"method": name,
        "params": {...}}``, to give the method parameters.
        """
        rules = [dict(name) if isinstance(name, Mapping) else {"method": name} for name in names]
        return cls(parse_rules(rules), apply="all", **kwargs)


def _flag(config: ConfigStack, key: str) -> bool:
    value = config.get_or(key, False)
    return bool(value) and value not in ("0", "false", "no")


def load_strategy(config: ConfigStack) -> Strategy:
    """The strategy of a configuration hierarchy; raises ConfigError for bad rules or values."""

    raw = config.gather(KEY) or list(DEFAULT_RULES)
    apply = config.get_or("degradation.apply", "first")
    if apply not in ("first", "all"):
        raise ConfigError(None, "degradation.apply", f"expected first or all, got {apply!r}")
    cutoffs = []
    for key in ("degradation.cutoff", "degradation.cutoff_abs"):
        value = config.get_or(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(None, key, f"expected a non-negative number, got {value!r}")
        cutoffs.append(float(value))
    # Collecting runs the job matrix's commands (pre_run, generators, the programs).  A local.yml
    # arrives with a cloned repository, so it alone may not make a mere 'check' run code: only the
    # user's shared configuration or an explicit -c does.
    collect = _flag(config, "degradation.collect_before_check")
    from_local = collect and config.source_of("degradation.collect_before_check") == "local"
    return Strategy(parse_rules(raw), str(apply), cutoffs[0], cutoffs[1], collect and not from_local,
                    _flag(config, "degradation.log_collect"), ignored_local_collect=from_local,
                    notes=settings_notes(config))


#: The settings that decide verdicts.
VERDICT_KEYS = (KEY, "degradation.apply", "degradation.cutoff", "degradation.cutoff_abs")


def settings_notes(config: ConfigStack, keys: Sequence[str] = VERDICT_KEYS) -> tuple[str, ...]:
    """One note naming the file that verdict settings come from, when that is not the repository's local.yml.

    A shared configuration changes every check of every repository; one
    written by another tool (the original Perun writes its own shared.yml on
    any run) would do so silently.  Built-in defaults need no note.
    """
    by_file: dict[str, list[str]] = {}
    foreign_setting = getattr(config, "foreign_setting", None)
    for key in keys if foreign_setting is not None else ():
        path = foreign_setting(key, gathered=key == KEY)
        if path is not None:
            by_file.setdefault(str(path), []).append(key)
    return tuple(f"{', '.join(names)} taken from {path}, not from the repository's local.yml"
                 for path, names in by_file.items())


def apply_cutoff(finding: Finding, cutoff: float, cutoff_abs: float) -> Finding:
    """NoChange for a change smaller than the cut-offs (presence and Unknown results are kept)."""
    if not finding.result.is_change or (cutoff <= 0 and cutoff_abs <= 0):
        return finding
    small_rel = cutoff > 0 and finding.delta_rel is not None and abs(finding.delta_rel) < cutoff
    small_abs = cutoff_abs > 0 and finding.delta_abs is not None and abs(finding.delta_abs) < cutoff_abs
    if small_rel or small_abs:
        return replace(finding, result=PerformanceChange.NO_CHANGE, reason="below the cut-off")
    return finding
