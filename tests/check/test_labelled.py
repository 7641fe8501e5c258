"""The default strategy on a sample of the seeded labelled suite (the benchmark uses other seeds)."""

from __future__ import annotations

import pytest

from perun_core.check.data import ProfileData
from perun_core.check.default import DEFAULT
from perun_core.check.results import PerformanceChange as PC
from perun_core.profile.model import Profile

from .labelled import history, make_case

#: Seeds the tests use; benchmarks/check_accuracy.py reports on 10_000 and up.
TEST_SEEDS = range(100, 160)


def verdicts(baseline: dict, target: dict) -> dict[str, PC]:
    base, new = ProfileData(Profile.from_dict(baseline)), ProfileData(Profile.from_dict(target))
    return {f.location: f.result for f in DEFAULT.check(base, new, {})}


def kind_of(result: PC) -> str:
    if result is PC.NOT_IN_BASELINE:
        return "new"
    if result is PC.NOT_IN_TARGET:
        return "gone"
    if result.is_degradation:
        return "degradation"
    if result.is_optimization:
        return "optimization"
    return "none"


@pytest.fixture(scope="module")
def outcomes():
    rows = []
    for seed in TEST_SEEDS:
        case = make_case(seed)
        found = verdicts(case.baseline, case.target)
        rows += [(label, kind_of(found[uid])) for uid, label in case.labels.items()]
    return rows


def test_degradations_are_found_without_false_alarms(outcomes):
    tp = sum(1 for label, got in outcomes if label == got == "degradation")
    fp = sum(1 for label, got in outcomes if got == "degradation" and label != "degradation")
    fn = sum(1 for label, got in outcomes if label == "degradation" and got != "degradation")
    f1 = 2 * tp / (2 * tp + fp + fn)
    unchanged = [got for label, got in outcomes if label == "none"]
    false_alarms = sum(got != "none" for got in unchanged) / len(unchanged)
    assert f1 >= 0.9, (tp, fp, fn)
    assert false_alarms <= 0.03


def test_never_the_wrong_direction(outcomes):
    wrong = [(label, got) for label, got in outcomes
             if {label, got} == {"degradation", "optimization"}]
    assert wrong == []


def test_new_and_vanished_functions(outcomes):
    assert all(got == "new" for label, got in outcomes if label == "new")
    assert all(got == "gone" for label, got in outcomes if label == "gone")


@pytest.mark.parametrize("seed", [100, 101, 102])
def test_creeping_degradation_shows_between_first_and_last(seed):
    docs, labels = history(seed)
    found = verdicts(docs[0], docs[-1])
    for uid, label in labels.items():
        assert kind_of(found[uid]) == label, uid
    # one step: the unchanged uids stay quiet and nothing looks faster
    step = verdicts(docs[9], docs[10])
    assert all(kind_of(step[uid]) == "none" for uid, label in labels.items() if label == "none")
    assert not any(result.is_optimization for result in step.values())


def test_creeping_degradation_over_a_history():
    docs, labels = history(103)
    datas = [ProfileData(Profile.from_dict(doc)) for doc in docs]
    found = {f.location: f for f in DEFAULT.check(datas[-2], datas[-1], {"history": datas[:-1]})}
    for uid, label in labels.items():
        if label == "degradation":
            assert found[uid].result is PC.DEGRADATION and found[uid].type == "creeping"
        else:
            assert found[uid].result is PC.NO_CHANGE
