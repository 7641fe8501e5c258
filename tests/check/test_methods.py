"""Every registered method on profiles with a known change, and the method registry."""

from __future__ import annotations

import numpy as np
import pytest

from perun_core.analysis import regression_analysis
from perun_core.check import get_method, method_names, register_method, short_name, unregister_method
from perun_core.check.data import ProfileData
from perun_core.check.results import Finding
from perun_core.check.results import PerformanceChange as PC
from perun_core.errors import InvalidParameter, UnknownUnit
from perun_core.profile.model import Profile

from .helpers import curve, mixed, timed


def data(doc: dict) -> ProfileData:
    return ProfileData(Profile.from_dict(doc))


def results(method: str, baseline: dict, target: dict, **params) -> dict[str, Finding]:
    return {f.location: f for f in get_method(method).check(data(baseline), data(target), params)}


def with_models(doc: dict) -> dict:
    """The profile postprocessed by regression analysis (all models, method full)."""
    models, _skipped = regression_analysis(Profile.from_dict(doc))
    doc = dict(doc)
    doc["postprocessors"] = [{"name": "regression_analysis", "params": {"method": "full"}}]
    doc["snapshots"] = [{**doc["snapshots"][0], "models": models}]
    return doc


def test_short_names_follow_the_first_letters_rule():
    assert short_name("best_model_order_equality") == "bmoe"
    assert short_name("average_amount_threshold") == "aat"
    for name, short in [("bmoe", "best_model_order_equality"), ("aat", "average_amount_threshold"),
                        ("fast", "fast_check"), ("lreg", "linear_regression"), ("preg", "polynomial_regression"),
                        ("int", "integral_comparison"), ("loc", "local_statistics"),
                        ("eto", "exclusive_time_outliers"), ("cpd", "change_point_detection"),
                        ("rst", "rank_sum_test"), ("default", "size_aware_rank_test"), ("BMOE", "best_model_order_equality")]:
        assert get_method(name).name == short
    with pytest.raises(UnknownUnit, match="unknown check method 'nope'"):
        get_method("nope")


def test_a_new_method_registers_through_the_same_interface():
    class Always:
        name = "always_unknown_checker"
        summary = "Says Unknown everywhere."

        def check(self, baseline, target, params):
            for location in target.samples():
                yield Finding(PC.UNKNOWN, "test", location, reason="by design")

    register_method(Always())
    try:
        assert get_method("auc").name == "always_unknown_checker"
        assert "always_unknown_checker" in method_names()
        found = results("auc", mixed({"f": curve("linear", 1)}), mixed({"f": curve("linear", 2)}))
        assert found["f"].result is PC.UNKNOWN
    finally:
        unregister_method("always_unknown_checker")
    with pytest.raises(UnknownUnit):
        get_method("auc")
    with pytest.raises(TypeError):
        register_method(object())  # type: ignore[arg-type]


def test_bmoe_linear_to_quadratic_list_search():
    base = with_models(mixed({"SLList_search(SLList*, int)": curve("linear", 3)}))
    new = with_models(mixed({"SLList_search(SLList*, int)": curve("quadratic", 4)}))
    finding = results("bmoe", base, new)["SLList_search(SLList*, int)"]
    assert finding.result is PC.DEGRADATION
    assert (finding.from_, finding.to) == ("linear", "quadratic")
    assert finding.confidence_type == "r_square" and finding.confidence_rate > 0.9
    back = results("bmoe", new, base)["SLList_search(SLList*, int)"]
    assert back.result is PC.OPTIMIZATION and (back.from_, back.to) == ("quadratic", "linear")
    # profiles without models get them computed
    plain = results("bmoe", mixed({"s": curve("linear", 3)}), mixed({"s": curve("quadratic", 4)}))["s"]
    assert plain.result is PC.DEGRADATION and plain.to == "quadratic"
    same = results("bmoe", base, with_models(mixed({"SLList_search(SLList*, int)": curve("linear", 5, 3.0)})))
    assert same["SLList_search(SLList*, int)"].result is PC.NO_CHANGE


def test_aat_uses_its_two_times_threshold():
    base = mixed({"a": curve("linear", 1), "b": curve("linear", 2), "c": curve("linear", 3)})
    new = mixed({"a": curve("linear", 4, 2.5), "b": curve("linear", 5, 1.5), "c": curve("linear", 6, 0.3)})
    found = results("aat", base, new)
    assert [found[k].result for k in "abc"] == [PC.DEGRADATION, PC.NO_CHANGE, PC.OPTIMIZATION]
    assert found["a"].delta_rel == pytest.approx(150, rel=0.1)
    assert results("aat", base, new, threshold=1.4)["b"].result is PC.DEGRADATION
    with pytest.raises(InvalidParameter):
        results("aat", base, new, threshold="big")


@pytest.mark.parametrize("method", ["fast", "int", "lreg", "preg", "loc", "default", "rst"])
def test_model_and_statistics_methods_see_a_doubling(method):
    base = mixed({"f": curve("linear", 7), "g": curve("nlogn", 8)})
    new = mixed({"f": curve("linear", 9, 2.0), "g": curve("nlogn", 10)})
    found = results(method, base, new)
    assert found["f"].result is PC.DEGRADATION, found["f"]
    assert found["g"].result is PC.NO_CHANGE, found["g"]
    flipped = results(method, new, base)
    assert flipped["f"].result is PC.OPTIMIZATION


def test_methods_report_new_and_vanished_locations():
    base = mixed({"old": curve("linear", 1), "kept": curve("linear", 2)})
    new = mixed({"kept": curve("linear", 3), "fresh": curve("linear", 4)})
    for name in method_names():
        found = results(name, base, new)
        assert found["fresh"].result is PC.NOT_IN_BASELINE, name
        assert found["old"].result is PC.NOT_IN_TARGET, name


def test_eto_finds_the_outlier_among_functions():
    rng = np.random.default_rng(5)
    uids = [f"fn{i}" for i in range(12)]
    sizes = np.arange(1, 21)
    base_ex = {u: rng.uniform(9, 11, 20) for u in uids}
    new_ex = {u: v * rng.uniform(0.99, 1.01, 20) for u, v in base_ex.items()}
    new_ex["fn3"] = base_ex["fn3"] * 3.0
    base = mixed({u: (sizes, base_ex[u]) for u in uids}, exclusive=base_ex)
    new = mixed({u: (sizes, new_ex[u]) for u in uids}, exclusive=new_ex)
    found = results("eto", base, new)
    assert found["fn3"].result is PC.SEVERE_DEGRADATION
    assert found["fn3"].delta_rel == pytest.approx(2 * 100 / 12, rel=0.1)  # of the whole program
    assert all(found[u].result in (PC.NO_CHANGE, PC.MAYBE_DEGRADATION, PC.MAYBE_OPTIMIZATION)
               for u in uids if u != "fn3")
    assert found["./search (total)"].result is PC.TOTAL_DEGRADATION


def test_change_point_detection_over_a_history():
    history = [data(mixed({"f": curve("linear", s, 1.0)})) for s in range(8)]
    target = data(mixed({"f": curve("linear", 50, 2.0)}))
    method = get_method("cpd")
    found = {f.location: f for f in method.check(history[-1], target, {"history": history})}
    assert found["f"].result is PC.DEGRADATION and found["f"].type == "change point"
    creeping = [data(mixed({"f": curve("linear", s, 1.03**s, sigma=0.02)})) for s in range(16)]
    found = {f.location: f for f in method.check(creeping[-2], creeping[-1], {"history": creeping[:-1]})}
    assert found["f"].result is PC.DEGRADATION and found["f"].type == "creeping"
    # two profiles only: it compares the pair
    pair = {f.location: f for f in method.check(history[0], target, {})}
    assert pair["f"].result is PC.DEGRADATION


def test_time_profiles_split_their_measurements_by_subtype():
    base = data(timed([0.030, 0.031, 0.0305]))
    assert sorted(base.samples()) == ["./app [max_rss]", "./app [real]", "./app [sys]", "./app [user]"]
    found = {f.location: f for f in get_method("default").check(base, data(timed([0.15, 0.152, 0.151])), {})}
    assert found["./app [real]"].result is PC.DEGRADATION
    assert found["./app [real]"].to / found["./app [real]"].from_ == pytest.approx(5.0, rel=0.05)
    assert found["./app [max_rss]"].result is PC.NO_CHANGE


def test_change_point_detection_sees_a_shift_spread_over_recent_versions():
    scales = [1.0] * 12 + [1.04, 1.04**2, 1.04**3]  # each step below the 5 % floor, 12 % together
    history = [data(mixed({"f": curve("linear", s, scale, sigma=0.02)})) for s, scale in enumerate(scales)]
    found = {f.location: f for f in get_method("cpd").check(history[-2], history[-1], {"history": history[:-1]})}
    assert found["f"].result is PC.DEGRADATION and found["f"].type == "change point"
    assert "last 3 versions" in found["f"].reason
    assert isinstance(found["f"].confidence_rate, float)
