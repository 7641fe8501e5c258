"""place(): a commit's runs against GOOD's and BAD's, with the threshold at half the change."""

from __future__ import annotations

import math

import numpy as np

from perun_core.check.bisect import place

RNG = np.random.default_rng(7)
GOOD = 0.100 * np.exp(RNG.normal(0, 0.05, 14))
BAD = 0.160 * np.exp(RNG.normal(0, 0.05, 14))


def _at(level: float) -> np.ndarray:
    return level * np.exp(RNG.normal(0, 0.05, 14))


def test_a_commit_at_bads_level_is_bad_and_at_goods_level_good():
    bad = place(GOOD, _at(0.160), BAD)
    assert bad.verdict == "bad" and 0.8 < bad.position < 1.2 and bad.p_value < 0.001
    good = place(GOOD, _at(0.100), BAD)
    assert good.verdict == "good" and -0.2 < good.position < 0.2 and good.p_value < 0.001


def test_a_commit_halfway_is_undecided_and_a_small_step_does_not_count():
    halfway = place(GOOD, _at(math.sqrt(0.100 * 0.160)), BAD)  # the middle on a log scale
    assert halfway.verdict == "undecided" and 0.3 < halfway.position < 0.7
    # 10 % slower than GOOD is a change, but far nearer GOOD's level than BAD's: good, not bad
    assert place(GOOD, _at(0.110), BAD).verdict == "good"


def test_overlapping_sides_stay_undecided():
    wide = np.exp(np.random.default_rng(3).normal(0, 0.6, (3, 7)))
    assert place(wide[0], wide[1] * 1.3, wide[2] * 1.6).verdict == "undecided"


def test_a_bad_level_below_goods_is_followed_downwards_and_without_a_shift_nothing_is_placed():
    assert place(BAD, _at(0.100), GOOD).verdict == "bad"
    assert place(GOOD, _at(0.100), GOOD).verdict == "undecided"
    # zeros (a resource that was not used) are placed on the linear scale
    assert place(np.zeros(7), np.full(7, 4.0) + np.arange(7) / 10, np.full(7, 4.0) + np.arange(7) / 9).verdict == "bad"


class _ScriptedBisector:
    """A bisect worker whose commits get the verdicts of a script: the search, then the re-check."""

    def __init__(self, line, search, recheck):
        self.good, self.bad = line[0], line[-1]
        self.search, self.recheck_verdicts = search, recheck
        self.last, self.collections, self.registered = {}, 0, 0
        self.kept: set[str] = set()  # what --register kept: nothing here

    def test(self, shas, *, use_stored=True, recheck=False):
        from perun_core.check.bisect import BisectStep

        verdicts = self.recheck_verdicts if recheck else self.search
        return {sha: BisectStep(sha, verdicts[sha], False, recheck=recheck) for sha in shas}

    def emit(self, event):
        pass

    def stored(self, sha):
        return None  # nothing stored: every figure is the script's


def test_a_parent_set_aside_by_the_search_and_good_on_re_check_leaves_no_doubt():
    """CI: the culprit's parent was undecided in the search (a drifting level on a busy machine) and good when the
    boundary was re-checked; the answer still said "commits set aside lie before it" and was uncertain."""
    from perun_core.check.bisect import BisectStep, _search

    line = ["g", "c1", "c2", "c3", "c4", "b"]
    search = {"c1": "good", "c2": "skipped", "c3": "undecided", "c4": "bad"}
    first = BisectStep("b", "bad", False)
    result = _search(_ScriptedBisector(line, search, {"c3": "good", "c4": "bad"}), line, first)
    assert result.culprit == "c4" and result.candidates == () and result.certain, result
    # undecided again on re-check: the set-aside commits stay candidates and the answer stays uncertain
    result = _search(_ScriptedBisector(line, search, {"c3": "undecided", "c4": "bad"}), line, first)
    assert result.culprit == "c4" and result.candidates == ("c2", "c3") and not result.certain
    assert "commits set aside lie before it: c2, c3" in result.doubt


def test_a_parent_set_aside_by_the_search_and_bad_on_re_check_becomes_the_culprit():
    """CI under load: the slow commit was undecided in the search (0.87 of the way to BAD), the next one bad; the
    re-check found the undecided one bad, yet the answer named the later commit and called itself uncertain."""
    from perun_core.check.bisect import BisectStep, _search

    line = ["g", "c1", "c2", "c3", "c4", "c5", "b"]
    search = {"c3": "undecided", "c2": "good", "c4": "bad", "c1": "good", "c5": "bad"}
    first = BisectStep("b", "bad", False)
    worker = _ScriptedBisector(line, search, {"c2": "good", "c3": "bad", "c4": "bad"})
    result = _search(worker, line, first)
    assert result.culprit == "c3" and result.candidates == () and result.certain, result
    # the boundary moved back one commit, so its new parent was re-checked too; c3 is no longer listed as skipped
    assert [s.commit for s in result.steps if s.recheck] == ["c3", "c4", "c2"]
    assert "c3" not in [sha for sha, _why in result.skipped]
    # its parent undecided on re-check: c3 stays the answer, uncertain
    worker = _ScriptedBisector(line, search, {"c2": "undecided", "c3": "bad", "c4": "bad"})
    result = _search(worker, line, first)
    assert result.culprit == "c3" and not result.certain and "c2 was undecided on re-check" in result.doubt
