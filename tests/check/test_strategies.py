"""Strategy rules: matching, apply first/all, cut-offs and the errors of bad rules."""

from __future__ import annotations

import pytest

from perun_core.check.data import ProfileData
from perun_core.check.engine import check_pair
from perun_core.check.results import Finding
from perun_core.check.results import PerformanceChange as PC
from perun_core.check.strategies import Strategy, apply_cutoff, load_strategy, parse_rules
from perun_core.config import Config, ConfigStack
from perun_core.errors import ConfigError, IncomparableProfiles, UnknownUnit
from perun_core.profile.model import Profile

from .helpers import curve, mixed, timed


def profile(doc: dict) -> Profile:
    return Profile.from_dict(doc)


def stack(tmp_path, text: str) -> ConfigStack:
    local = tmp_path / "local.yml"
    local.write_text(text)
    return ConfigStack(Config.load(local, kind="local"), Config(tmp_path / "shared.yml", "shared"))


def test_rules_match_profile_fields():
    with_models = mixed({"f": curve("linear", 1)}, postprocessors=[{"name": "regression_analysis"}])
    rules = parse_rules([
        {"type": "mixed", "postprocessor": "regression_analysis", "method": "bmoe"},
        {"cmd": "app", "type": "time", "method": "rst"},
        {"cmd": ["bench-*", "./other"], "method": "lreg"},
        {"method": "aat"},
    ])
    strategy = Strategy(rules, apply="first")
    assert [r.method.name for r in strategy.rules_for(profile(with_models))] == ["best_model_order_equality"]
    assert [r.method.name for r in strategy.rules_for(profile(timed([1.0], cmd="/usr/bin/app")))] == ["rank_sum_test"]
    assert [r.method.name for r in strategy.rules_for(profile(mixed({"f": curve("linear", 1)}, cmd="bench-7")))] \
        == ["linear_regression"]
    assert [r.method.name for r in strategy.rules_for(profile(mixed({"f": curve("linear", 1)})))] \
        == ["average_amount_threshold"]
    every = Strategy(rules, apply="all")
    assert [r.method.name for r in every.rules_for(profile(with_models))] \
        == ["best_model_order_equality", "average_amount_threshold"]


@pytest.mark.parametrize("rule, message", [
    ({"method": "aat", "colector": "time"}, "unknown key 'colector'"),
    ({"type": "mixed"}, "needs a 'method'"),
    ({"method": "aat", "params": 3}, "'params' must be a mapping"),
    ({"method": "aat", "cutoff": -1}, "non-negative number"),
    ({"method": "aat", "type": {"a": 1}}, "a string or a list"),
    ({"method": "aat", "params": {"threshold": 0.5}},
     "rule 1: average_amount_threshold: parameter 'threshold' = 0.5: expected a number of at least 1"),
    ({"method": "bmoe", "params": {"min_fit": "high"}}, "parameter 'min_fit' = 'high'"),
    ({"method": "loc", "params": {"threshold": 5, "interval": 3}}, "parameter 'interval' = 3: expected a known "
                                                                   "parameter; local_statistics has: threshold, intervals"),
])
def test_bad_rules_are_one_line_errors(rule, message):
    with pytest.raises(ConfigError, match=message) as caught:
        parse_rules([rule])
    assert "\n" not in str(caught.value)


def test_rule_params_are_converted_by_the_declaration():
    rule, = parse_rules([{"method": "cpd", "params": {"window": "12", "creep-floor": 3}}])
    assert rule.params == {"window": 12, "creep_floor": 3.0}
    # a method that declares nothing gets its mapping as it is
    class Loose:
        name = "loose_method"
        summary = "Declares no parameters."

        def check(self, baseline, target, params):
            return iter(())

    from perun_core.check import register_method, unregister_method

    register_method(Loose())
    try:
        rule, = parse_rules([{"method": "loose_method", "params": {"anything": [1, 2]}}])
        assert rule.params == {"anything": [1, 2]}
    finally:
        unregister_method("loose_method")


def test_unknown_method_in_a_rule():
    with pytest.raises(UnknownUnit, match="unknown check method 'bmeo'"):
        parse_rules([{"method": "bmeo"}])


def test_strategy_from_configuration(tmp_path):
    config = stack(tmp_path, "degradation:\n  apply: all\n  cutoff: 20\n  collect_before_check: true\n"
                             "  strategies:\n    - {type: mixed, method: bmoe}\n")
    strategy = load_strategy(config)
    # collect_before_check from the local file (which may come with a clone) is noted, not obeyed
    assert strategy.apply == "all" and strategy.cutoff == 20 and not strategy.collect_before_check
    assert strategy.ignored_local_collect
    # the built-in default rule is gathered last
    assert [r.method.name for r in strategy.rules] == ["best_model_order_equality", "size_aware_rank_test"]
    (tmp_path / "b").mkdir()
    bad = stack(tmp_path / "b", "degradation:\n  strategies:\n    - {method: aat, typo: 1}\n")
    with pytest.raises(ConfigError, match="unknown key 'typo'"):
        load_strategy(bad)


def test_cutoff_turns_small_changes_into_no_change():
    small = Finding(PC.DEGRADATION, "ratio", "f", 1.0, 1.08, 0.08, 8.0)
    assert apply_cutoff(small, 10.0, 0.0).result is PC.NO_CHANGE
    assert apply_cutoff(small, 5.0, 0.0).result is PC.DEGRADATION
    assert apply_cutoff(small, 0.0, 0.1).result is PC.NO_CHANGE
    new = Finding(PC.NOT_IN_BASELINE, "presence", "g", None, 1.0, 1.0)
    assert apply_cutoff(new, 50.0, 50.0) is new


def test_check_pair_applies_rules_and_refuses_mixed_types():
    base = ProfileData(profile(mixed({"f": curve("linear", 1)})))
    new = ProfileData(profile(mixed({"f": curve("linear", 2, 1.3)})))
    strategy = Strategy(parse_rules([{"method": "aat"}, {"method": "default", "cutoff": 50}]), apply="all")
    outcome = check_pair(base, new, strategy)
    assert outcome.methods == ["average_amount_threshold", "size_aware_rank_test"]
    by_method = {f.method: f.result for f in outcome.findings}
    assert by_method == {"average_amount_threshold": PC.NO_CHANGE, "size_aware_rank_test": PC.NO_CHANGE}
    with pytest.raises(IncomparableProfiles, match="a mixed profile cannot be compared with a time one"):
        check_pair(base, ProfileData(profile(timed([1.0, 1.1]))), strategy)
