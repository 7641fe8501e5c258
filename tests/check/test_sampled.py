"""Sampled call-stack profiles (perf, folded, speedscope) and callgrind's counts, checked as counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from perun_core import api
from perun_core.check import get_method
from perun_core.check.data import ProfileData
from perun_core.check.sampled import _binomial_p, is_counted
from perun_core.profile.codec import store_profile_at

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"


def stored(tmp: Path, name: str, importer: str, source: Path) -> str:
    """The imported profile written as a profile file (what 'perun-core import' keeps)."""
    path = tmp / name
    store_profile_at(api.read_imported(importer, [source]), path)
    return name


def check_json(tmp: Path, baseline: str, target: str) -> tuple[dict[str, str], int]:
    result = run_cli("check", "profiles", baseline, target, "--format", "json", cwd=tmp)
    assert result.returncode in (0, 3), result.stderr
    return {r["uid"]: r["result"] for r in json.loads(result.stdout)}, result.returncode


def verdicts(baseline, target) -> dict[str, str]:
    base, new = ProfileData(baseline), ProfileData(target)
    return {f.location: f.result.value for f in get_method("size_aware_rank_test").check(base, new, {})}


def folded(tmp: Path, name: str, lines: dict[str, int]) -> Path:
    path = tmp / name
    path.write_text("".join(f"{stack} {count}\n" for stack, count in lines.items()))
    return path


STACKS = {"main;parse;lex": 300, "main;parse": 120, "main;solve;lex": 200, "main;solve": 900,
          "main;report": 250, "main;report;fmt": 180}


def test_a_function_three_times_slower_in_one_perf_profile_is_a_degradation_there(tmp_path):
    """perf_slow.script: other() does three times the work of perf.script's (the issue's report)."""
    base = stored(tmp_path, "base.perf", "perf-script", FIXTURES / "perf.script")
    slow = stored(tmp_path, "slow.perf", "perf-script", FIXTURES / "perf_slow.script")
    found, code = check_json(tmp_path, base, slow)
    assert code == 3
    assert found["other [function]"] == "Degradation"
    assert found["other [samples]"] == "Degradation"
    # leaf() and its caller did the same work: not flagged
    assert found["leaf [function]"] == "NoChange"
    assert found["main"] == "NoChange"
    back, code = check_json(tmp_path, slow, base)
    assert back["other [function]"] == "Optimization" and code == 0


def test_identical_sampled_profiles_give_no_change(tmp_path):
    name = stored(tmp_path, "perf.perf", "perf-script", FIXTURES / "perf.script")
    found, code = check_json(tmp_path, name, name)
    assert code == 0 and set(found.values()) == {"NoChange"}, found
    for importer, source in (("folded", "stacks.folded"), ("speedscope", "speedscope.json"),
                             ("callgrind", "callgrind.out")):
        profile = api.read_imported(importer, [FIXTURES / source])
        assert set(verdicts(profile, profile).values()) == {"NoChange"}, importer


def test_callgrind_counts_find_the_function_that_does_three_times_the_work():
    base = api.read_imported("callgrind", [FIXTURES / "callgrind.out"])
    slow = api.read_imported("callgrind", [FIXTURES / "callgrind_slow.out"])
    found = verdicts(base, slow)
    assert found["other [function]"] == "Degradation"
    assert found["leaf [function]"] == "NoChange"
    assert found["middle [function]"] == "NoChange"


def test_a_function_on_several_stacks_is_judged_by_its_summed_samples(tmp_path):
    """lex runs under parse and under solve: its samples are added up, not averaged over the two stacks."""
    base = api.read_imported("folded", [folded(tmp_path, "a.folded", STACKS)])
    slower = dict(STACKS, **{"main;parse;lex": 900, "main;solve;lex": 600})
    found = verdicts(base, api.read_imported("folded", [folded(tmp_path, "b.folded", slower)]))
    assert found["lex [samples]"] == "Degradation"
    assert found["lex [function]"] == "Degradation"
    assert found["report [function]"] == "NoChange"
    assert found["fmt [function]"] == "NoChange"


def test_a_longer_recording_with_the_same_shares_flags_nothing(tmp_path):
    base = api.read_imported("folded", [folded(tmp_path, "a.folded", STACKS)])
    longer = api.read_imported("folded", [folded(tmp_path, "b.folded", {k: 2 * v for k, v in STACKS.items()})])
    assert set(verdicts(base, longer).values()) == {"NoChange"}


def test_only_the_function_whose_share_changed_is_flagged_in_a_longer_recording(tmp_path):
    base = api.read_imported("folded", [folded(tmp_path, "a.folded", STACKS)])
    changed = {k: 2 * v for k, v in STACKS.items()}
    changed["main;report;fmt"] *= 3
    found = verdicts(base, api.read_imported("folded", [folded(tmp_path, "b.folded", changed)]))
    assert found["fmt [function]"] == "Degradation"
    assert found["lex [function]"] == "NoChange"
    assert found["solve [function]"] == "NoChange"


def test_speedscope_samples_are_counted(tmp_path):
    doc = json.loads((FIXTURES / "speedscope.json").read_text())
    frames = [frame["name"] for frame in doc["shared"]["frames"]]
    sampled = doc["profiles"][0]
    # every sample whose innermost frame is other() taken three times
    extra = [(s, w) for s, w in zip(sampled["samples"], sampled.get("weights", [1] * len(sampled["samples"])))
             if frames[s[-1]] == "other"]
    assert extra
    sampled["samples"] += [s for s, _w in extra] * 2
    if "weights" in sampled:
        sampled["weights"] += [w for _s, w in extra] * 2
    path = tmp_path / "slow.speedscope.json"
    path.write_text(json.dumps(doc))
    base = api.read_imported("speedscope", [FIXTURES / "speedscope.json"])
    found = verdicts(base, api.read_imported("speedscope", [path]))
    assert found["other [function]"] == "Degradation"
    assert found["leaf [function]"] == "NoChange"


def test_only_counted_units_are_compared_as_counts(tmp_path):
    assert is_counted(ProfileData(api.read_imported("perf-script", [FIXTURES / "perf.script"])))
    assert is_counted(ProfileData(api.read_imported("callgrind", [FIXTURES / "callgrind.out"])))
    in_ms = api.read_imported("folded", [folded(tmp_path, "a.folded", STACKS)], {"unit": "ms"})
    assert not is_counted(ProfileData(in_ms))


@pytest.mark.parametrize(("before", "after", "rate", "significant"), [
    (100, 100, 1.0, False), (100, 200, 2.0, False), (35, 67, 1.0, True), (5, 9, 1.0, False), (0, 0, 1.0, False),
])
def test_the_binomial_test_of_two_counts(before, after, rate, significant):
    assert (_binomial_p(before, after, rate) < 0.01) == significant
